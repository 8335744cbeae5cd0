/* The convolution + residual action: wgc_op_conv2d_bn_act_residual with the
 * fold already made (folded weight and bias given), 1x1 and 3x3 kernels,
 * f32 and f16, any activation (sometimes an unknown one), the residual
 * sometimes the output itself or NULL. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

void fz_act_conv_residual(Fuzz *f);

void fz_act_conv_residual(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t dt = fz_chance(f, 75) ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
    int64_t n = 1 + fz_below(f, 3), C = 1 + fz_below(f, 9), O = 1 + fz_below(f, 9), k = fz_chance(f, 60) ? 1 : 3;
    int64_t H = k + fz_below(f, 6), W = k + fz_below(f, 6), OH = H - k + 1, OW = W - k + 1;
    int64_t si[4] = {n, C, H, W}, sk[4] = {O, C, k, k}, so[4] = {n, O, OH, OW}, sb[1] = {O};
    WgcConv2dBnActParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.folded = 1;
    p.activation = fz_below(f, WGC_NUM_ACTIVATIONS);
    FzArg out, in, w, bias, res;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, 4, so)) return;
    if (!fz_op_arg(f, &op, &in, FZ_IN, dt, 4, si)) return;
    if (!fz_op_arg(f, &op, &w, FZ_IN, dt, 4, sk)) return;
    if (fz_chance(f, 50)) {
        if (!fz_op_arg(f, &op, &bias, FZ_IN, dt, 1, sb)) return;
        bias.optional = 1;
    } else {
        fz_op_null_arg(&op, &bias);
    }
    int res_is_out = fz_chance(f, 4), null_res = !res_is_out && fz_chance(f, 3);
    if (res_is_out || null_res) op.mutated = 1; /* must fail: no verdict that it succeeds */
    if (res_is_out) {
        res = out;
        res.role = FZ_IN;
        res.p = &res.t;
    } else if (null_res) {
        fz_op_null_arg(&op, &res);
    } else if (!fz_op_arg(f, &op, &res, FZ_IN, dt, 4, so)) {
        return;
    }
    if (fz_chance(f, 5)) {
        p.activation = WGC_NUM_ACTIVATIONS + fz_below(f, 3);
        op.mutated = 1;
    }
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "k %lld act %u%s%s", (long long)k, p.activation,
             res_is_out ? " residual is out" : "", null_res ? " NULL residual" : "");
    fz_op_call(f, &op, "wgc_op_conv2d_bn_act_residual");
    if (null_res) fz_must_fail(f, "NULL residual");
    if (p.activation >= WGC_NUM_ACTIVATIONS) fz_must_fail(f, "an unknown activation");
    FzArg *ins[4] = {&in, &w, &bias, &res};
    for (int i = 0; i < 4; i++)
        if (ins[i]->p && fz_same_buffer(&out, ins[i])) fz_must_fail(f, "out shares a buffer with an operand");
    fz_op_end(f, &op, wgc_op_conv2d_bn_act_residual(op.stream, &p, in.p, NULL, NULL, NULL, NULL, NULL, NULL, w.p,
                                                    bias.p, res.p, out.p));
}
