/* Actions for matrix products, convolution and pooling, normalisation,
 * reductions and softmax. Plausible calls have shapes without zero dims
 * (what an empty reduction or product means differs by operator). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

static int64_t small_dim(Fuzz *f) {
    static const int64_t D[] = {1, 2, 3, 4, 5, 8, 16, 17, 33, 64};
    return D[fz_below(f, 10)];
}

static void nonzero_shape(Fuzz *f, uint32_t r, int64_t *s, uint64_t max) {
    fz_random_shape(f, r, s, max);
    for (uint32_t k = 0; k < r; k++)
        if (s[k] == 0) s[k] = 1;
}

static uint32_t float_dtype(Fuzz *f) {
    return fz_chance(f, 75) ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
}

static void set_conv_field(WgcConv2dParams *p, uint32_t i, uint32_t v) {
    switch (i) {
    case 0: p->stride_h = v; break;
    case 1: p->stride_w = v; break;
    case 2: p->pad_h = v; break;
    case 3: p->pad_w = v; break;
    case 4: p->dilation_h = v; break;
    case 5: p->dilation_w = v; break;
    default: p->groups = v; break;
    }
}

static void set_pool_field(WgcPool2dParams *p, uint32_t i, uint32_t v) {
    switch (i) {
    case 0: p->kernel_h = v; break;
    case 1: p->kernel_w = v; break;
    case 2: p->stride_h = v; break;
    case 3: p->stride_w = v; break;
    case 4: p->pad_h = v; break;
    default: p->pad_w = v; break;
    }
}

static void act_gemm(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    int matmul = fz_chance(f, 40);
    int64_t M = small_dim(f), N = small_dim(f), K = small_dim(f);
    uint32_t nb = fz_below(f, 3), in_dt = fz_chance(f, 80) ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
    uint32_t out_dt = in_dt == WGC_DTYPE_F16 && fz_chance(f, 50) ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
    int64_t sa[8], sb[8], sc[8];
    uint32_t ta = fz_chance(f, 30), tb = fz_chance(f, 30);
    int a_vec = matmul && fz_chance(f, 25), b_vec = matmul && fz_chance(f, 25);
    if (matmul) ta = tb = 0;
    /* Batch dims: b's are c's; a may have fewer, or 1s, that broadcast. */
    for (uint32_t i = 0; i < nb; i++) sc[i] = sb[i] = 1 + fz_below(f, 3);
    uint32_t abatch = fz_chance(f, 30) ? fz_below(f, nb + 1) : nb;
    for (uint32_t i = 0; i < abatch; i++) sa[i] = fz_chance(f, 30) ? 1 : sc[nb - abatch + i];
    uint32_t ra = a_vec ? 0 : abatch, rb = b_vec ? 0 : nb, rc = nb;
    if (a_vec) {
        sa[ra++] = K;
    } else {
        sa[ra++] = ta ? K : M;
        sa[ra++] = ta ? M : K;
    }
    if (b_vec) {
        sb[rb++] = K;
    } else {
        sb[rb++] = tb ? N : K;
        sb[rb++] = tb ? K : N;
    }
    /* NumPy matmul drops the dim of a vector operand from the output. */
    if (a_vec && b_vec) {
        rc = 0;
    } else if (b_vec) {
        for (rc = 0; rc < abatch; rc++) sc[rc] = sa[rc];
        sc[rc++] = M;
    } else if (a_vec) {
        sc[rc++] = N;
    } else {
        sc[rc++] = M;
        sc[rc++] = N;
    }
    FzArg c, a, b;
    if (!fz_op_arg(f, &op, &c, FZ_OUT, out_dt, rc, sc)) return;
    if (!fz_op_arg(f, &op, &a, FZ_IN, in_dt, ra, sa)) return;
    if (!fz_op_arg(f, &op, &b, FZ_IN, in_dt, rb, sb)) return;
    float alpha = 1.0f, beta = 0.0f;
    if (fz_chance(f, 30)) {
        alpha = (float)fz_hostile_double(f);
        beta = (float)fz_hostile_double(f);
    }
    if (fz_chance(f, 5)) { /* any non-zero flag transposes: the shapes no longer fit */
        ta = fz_hostile_u32(f) | 1;
        op.mutated = 1;
    }
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "M %lld N %lld K %lld batch %u ta %u tb %u alpha %g beta %g", (long long)M,
             (long long)N, (long long)K, nb, ta, tb, alpha, beta);
    if (matmul) {
        fz_op_call(f, &op, "wgc_op_matmul");
        fz_op_end(f, &op, wgc_op_matmul(op.stream, a.p, b.p, c.p));
    } else {
        fz_op_call(f, &op, "wgc_op_gemm");
        if (fz_same_buffer(&c, &a) || fz_same_buffer(&c, &b)) fz_must_fail(f, "c shares a buffer with an input");
        fz_op_end(f, &op, wgc_op_gemm(op.stream, alpha, a.p, ta, b.p, tb, beta, c.p));
    }
}

/* wgc_op_gemm_epilogue: a GEMM with a column bias and scale, a residual
 * (each present or NULL) and an activation (sometimes unknown). */
static void act_gemm_epilogue(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    int64_t M = small_dim(f), N = small_dim(f), K = small_dim(f);
    uint32_t in_dt = fz_chance(f, 70) ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
    uint32_t out_dt = in_dt == WGC_DTYPE_F16 && fz_chance(f, 50) ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
    uint32_t ta = fz_chance(f, 30), tb = fz_chance(f, 50);
    int64_t sa[2] = {ta ? K : M, ta ? M : K}, sb[2] = {tb ? N : K, tb ? K : N}, sc[2] = {M, N}, sn[1] = {N};
    FzArg c, a, b, bias, scale, res;
    if (!fz_op_arg(f, &op, &c, FZ_OUT, out_dt, 2, sc)) return;
    if (!fz_op_arg(f, &op, &a, FZ_IN, in_dt, 2, sa)) return;
    if (!fz_op_arg(f, &op, &b, FZ_IN, in_dt, 2, sb)) return;
    FzArg *optional[3] = {&bias, &scale, &res};
    for (int i = 0; i < 3; i++) {
        if (fz_chance(f, 40)) {
            fz_op_null_arg(&op, optional[i]);
        } else if (!fz_op_arg(f, &op, optional[i], FZ_IN, out_dt, i == 2 ? 2 : 1, i == 2 ? sc : sn)) {
            return;
        } else {
            optional[i]->optional = 1;
        }
    }
    WgcGemmEpilogueParams p = {sizeof p, 1.0f, ta, tb, fz_below(f, WGC_NUM_ACTIVATIONS), fz_below(f, 2)};
    if (fz_chance(f, 30)) p.alpha = (float)fz_hostile_double(f);
    if (fz_chance(f, 5)) { /* an unknown activation or residual position */
        if (fz_chance(f, 50)) p.activation = WGC_NUM_ACTIVATIONS + fz_hostile_u32(f) % 1000;
        else p.residual_position = 2 + fz_hostile_u32(f) % 1000;
        op.mutated = 1;
    }
    if (fz_chance(f, 5)) { /* struct_size too small to be a struct */
        p.struct_size = fz_below(f, 4);
        op.mutated = 1;
    }
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "M %lld N %lld K %lld ta %u tb %u act %u res_pos %u alpha %g", (long long)M,
             (long long)N, (long long)K, ta, tb, p.activation, p.residual_position, p.alpha);
    fz_op_call(f, &op, "wgc_op_gemm_epilogue");
    FzArg *ins[5] = {&a, &b, &bias, &scale, &res};
    for (int i = 0; i < 5; i++)
        if (ins[i]->p && fz_same_buffer(&c, ins[i])) fz_must_fail(f, "c shares a buffer with an input");
    fz_op_end(f, &op, wgc_op_gemm_epilogue(op.stream, &p, a.p, b.p, bias.p, scale.p, res.p, c.p));
}

static void act_conv(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    int64_t n = 1 + fz_below(f, 2), g = 1 + fz_below(f, 2), cpg = 1 + fz_below(f, 3), opg = 1 + fz_below(f, 3);
    if (fz_chance(f, 20)) { /* depthwise */
        g = 1 + fz_below(f, 4);
        cpg = 1;
    }
    int64_t C = g * cpg, O = g * opg, kh = 1 + fz_below(f, 3), kw = 1 + fz_below(f, 3);
    union {
        WgcConv2dParams p;
        unsigned char bytes[sizeof(WgcConv2dParams) + 64];
    } u;
    memset(u.bytes, 0xa5, sizeof u.bytes);
    memset(&u.p, 0, sizeof u.p);
    u.p.struct_size = sizeof u.p;
    u.p.stride_h = fz_below(f, 3);
    u.p.stride_w = fz_below(f, 3);
    u.p.pad_h = fz_below(f, 2);
    u.p.pad_w = fz_below(f, 2);
    u.p.dilation_h = fz_below(f, 3);
    u.p.dilation_w = fz_below(f, 3);
    u.p.groups = g == 1 && fz_chance(f, 50) ? 0 : (uint32_t)g;
    int64_t sh = u.p.stride_h ? u.p.stride_h : 1, sw = u.p.stride_w ? u.p.stride_w : 1;
    int64_t dh = u.p.dilation_h ? u.p.dilation_h : 1, dw = u.p.dilation_w ? u.p.dilation_w : 1;
    int64_t H = dh * (kh - 1) + 1 + fz_below(f, 8) - 2 * u.p.pad_h, W = dw * (kw - 1) + 1 + fz_below(f, 8) - 2 * u.p.pad_w;
    if (H < 1) H = 1;
    if (W < 1) W = 1;
    int64_t OH = (H + 2 * u.p.pad_h - dh * (kh - 1) - 1) / sh + 1, OW = (W + 2 * u.p.pad_w - dw * (kw - 1) - 1) / sw + 1;
    int64_t si[4] = {n, C, H, W}, sk[4] = {O, cpg, kh, kw}, so[4] = {n, O, OH, OW}, sbias[1] = {O};
    FzArg out, in, w, bias;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, WGC_DTYPE_F32, 4, so)) return;
    if (!fz_op_arg(f, &op, &in, FZ_IN, WGC_DTYPE_F32, 4, si)) return;
    if (!fz_op_arg(f, &op, &w, FZ_IN, WGC_DTYPE_F32, 4, sk)) return;
    if (fz_chance(f, 50)) {
        if (!fz_op_arg(f, &op, &bias, FZ_IN, WGC_DTYPE_F32, 1, sbias)) return;
        bias.optional = 1;
    } else {
        fz_op_null_arg(&op, &bias);
    }
    if (fz_chance(f, 8)) {
        op.mutated = 1;
        set_conv_field(&u.p, fz_below(f, 7), fz_hostile_u32(f));
    }
    if (fz_chance(f, 8)) {
        u.p.struct_size = fz_struct_size(f, sizeof u.p);
        op.mutated = 1;
    }
    int null_params = fz_chance(f, 2);
    if (null_params) op.mutated = 1;
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "size %u stride %u,%u pad %u,%u dil %u,%u groups %u%s", u.p.struct_size,
             u.p.stride_h, u.p.stride_w, u.p.pad_h, u.p.pad_w, u.p.dilation_h, u.p.dilation_w, u.p.groups,
             null_params ? " NULL params" : "");
    fz_op_call(f, &op, "wgc_op_conv2d");
    if (null_params) fz_must_fail(f, "NULL params");
    if (u.p.struct_size < 4) fz_must_fail(f, "struct_size below 4");
    if (fz_same_buffer(&out, &in) || fz_same_buffer(&out, &w) || fz_same_buffer(&out, &bias))
        fz_must_fail(f, "out shares a buffer with an operand");
    fz_op_end(f, &op, wgc_op_conv2d(op.stream, null_params ? NULL : &u.p, in.p, w.p, bias.p, out.p));
}

static void act_pool(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t kind = fz_below(f, 3), dt = float_dtype(f);
    int64_t n = 1 + fz_below(f, 2), C = 1 + fz_below(f, 3);
    union {
        WgcPool2dParams p;
        unsigned char bytes[sizeof(WgcPool2dParams) + 64];
    } u;
    memset(u.bytes, 0xa5, sizeof u.bytes);
    memset(&u.p, 0, sizeof u.p);
    u.p.struct_size = sizeof u.p;
    u.p.kernel_h = 1 + fz_below(f, 3);
    u.p.kernel_w = 1 + fz_below(f, 3);
    u.p.stride_h = fz_below(f, 3);
    u.p.stride_w = fz_below(f, 3);
    u.p.pad_h = fz_below(f, u.p.kernel_h / 2 + 1);
    u.p.pad_w = fz_below(f, u.p.kernel_w / 2 + 1);
    u.p.count_include_pad = fz_below(f, 2);
    int64_t H = u.p.kernel_h + fz_below(f, 9), W = u.p.kernel_w + fz_below(f, 9);
    int64_t sh = u.p.stride_h ? u.p.stride_h : u.p.kernel_h, sw = u.p.stride_w ? u.p.stride_w : u.p.kernel_w;
    int64_t OH = (H + 2 * u.p.pad_h - u.p.kernel_h) / sh + 1, OW = (W + 2 * u.p.pad_w - u.p.kernel_w) / sw + 1;
    int64_t si[4] = {n, C, H, W}, so[4] = {n, C, kind == 2 ? 1 : OH, kind == 2 ? 1 : OW};
    FzArg out, in;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, 4, so)) return;
    if (!fz_op_arg(f, &op, &in, FZ_IN, dt, 4, si)) return;
    if (fz_chance(f, 8)) {
        op.mutated = 1;
        set_pool_field(&u.p, fz_below(f, 6), fz_chance(f, 50) ? 0 : fz_hostile_u32(f));
    }
    if (fz_chance(f, 8)) {
        u.p.struct_size = fz_struct_size(f, sizeof u.p);
        op.mutated = 1;
    }
    int null_params = kind != 2 && fz_chance(f, 2);
    if (null_params) op.mutated = 1;
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "kind %u size %u k %u,%u stride %u,%u pad %u,%u cip %u", kind, u.p.struct_size,
             u.p.kernel_h, u.p.kernel_w, u.p.stride_h, u.p.stride_w, u.p.pad_h, u.p.pad_w, u.p.count_include_pad);
    static const char *NAMES[] = {"wgc_op_max_pool2d", "wgc_op_avg_pool2d", "wgc_op_global_avg_pool2d"};
    fz_op_call(f, &op, NAMES[kind]);
    if (fz_same_buffer(&out, &in)) fz_must_fail(f, "out shares a buffer with the input");
    if (kind == 2) {
        fz_op_end(f, &op, wgc_op_global_avg_pool2d(op.stream, in.p, out.p));
        return;
    }
    if (null_params) fz_must_fail(f, "NULL params");
    if (u.p.struct_size < 4) fz_must_fail(f, "struct_size below 4");
    if (u.p.struct_size >= sizeof u.p && (u.p.kernel_h == 0 || u.p.kernel_w == 0)) fz_must_fail(f, "a zero window");
    const WgcPool2dParams *pp = null_params ? NULL : &u.p;
    if (kind == 0) fz_op_end(f, &op, wgc_op_max_pool2d(op.stream, pp, in.p, out.p));
    else fz_op_end(f, &op, wgc_op_avg_pool2d(op.stream, pp, in.p, out.p));
}

static void act_norm(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t kind = fz_below(f, 3), dt = float_dtype(f);
    uint32_t r = (kind == 2 ? 2 : 1) + fz_below(f, 3), nd = 1 + fz_below(f, r);
    int64_t s[8];
    nonzero_shape(f, r, s, 4096);
    float eps = 1e-5f;
    if (fz_chance(f, 10)) {
        eps = (float)fz_hostile_double(f);
        op.mutated = 1;
    }
    FzArg out, in, p1, p2, p3, p4;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, r, s)) return;
    if (!fz_op_arg(f, &op, &in, FZ_IN, dt, r, s)) return;
    const int64_t *ps = kind == 2 ? &s[1] : &s[r - nd];
    uint32_t pr = kind == 2 ? 1 : nd;
    FzArg *params[4] = {&p1, &p2, &p3, &p4};
    for (int i = 0; i < 4; i++) {
        int required = kind == 2 && i < 2;
        int used = kind == 2 || (kind == 0 && i < 2) || (kind == 1 && i < 1);
        if (!used) continue;
        if (required || fz_chance(f, 60)) {
            if (!fz_op_arg(f, &op, params[i], FZ_IN, dt, pr, ps)) return;
            params[i]->optional = !required;
        } else {
            fz_op_null_arg(&op, params[i]);
        }
    }
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "kind %u normalized_dims %u eps %g", kind, nd, eps);
    static const char *NAMES[] = {"wgc_op_layer_norm", "wgc_op_rms_norm", "wgc_op_batch_norm"};
    fz_op_call(f, &op, NAMES[kind]);
    if (!isfinite(eps) || eps < 0) fz_must_fail(f, "eps negative or not finite");
    for (int i = 1; i < op.nargs; i++)
        if (fz_same_buffer(&out, op.args[i])) fz_must_fail(f, "out shares a buffer with an input");
    if (kind == 0) fz_op_end(f, &op, wgc_op_layer_norm(op.stream, in.p, p1.p, p2.p, nd, eps, out.p));
    else if (kind == 1) fz_op_end(f, &op, wgc_op_rms_norm(op.stream, in.p, p1.p, nd, eps, out.p));
    else fz_op_end(f, &op, wgc_op_batch_norm(op.stream, in.p, p1.p, p2.p, p3.p, p4.p, eps, out.p));
}

/* Axes for a reduction (distinct, some negative) and the output shape. */
static uint32_t pick_axes(Fuzz *f, uint32_t r, int max_axes, int32_t *axes, int keep, const int64_t *s, int64_t *so,
                          uint32_t *ro) {
    uint32_t count = r ? fz_below(f, (uint32_t)(max_axes < (int)r ? max_axes : (int)r) + 1) : 0;
    int reduced[8] = {0};
    for (uint32_t i = 0; i < count; i++) {
        uint32_t ax;
        do ax = fz_below(f, r);
        while (reduced[ax]);
        reduced[ax] = 1;
        axes[i] = fz_chance(f, 30) ? (int32_t)ax - (int32_t)r : (int32_t)ax;
    }
    *ro = 0;
    for (uint32_t k = 0; k < r; k++) {
        int red = count == 0 || reduced[k];
        if (!red) so[(*ro)++] = s[k];
        else if (keep) so[(*ro)++] = 1;
    }
    return count;
}

static void act_reduce(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t kind = fz_below(f, 4), rop = fz_below(f, WGC_NUM_REDUCE_OPS);
    int arg = kind == 0 && rop >= WGC_REDUCE_OP_ARGMAX;
    uint32_t dt = kind == 0 && rop != WGC_REDUCE_OP_MEAN ? fz_below(f, 4) : float_dtype(f);
    uint32_t r = kind >= 2 ? 1 + fz_below(f, 4) : fz_below(f, 5);
    int64_t s[8], so[8];
    nonzero_shape(f, r, s, fz_chance(f, 5) ? 65536 : 4096);
    int32_t axes[16] = {0};
    uint32_t ro, keep = fz_below(f, 2), unbiased = fz_below(f, 2);
    int32_t axis = r ? (int32_t)fz_below(f, r) - (fz_chance(f, 30) ? (int32_t)r : 0) : 0;
    uint32_t count = 0;
    if (kind >= 2) { /* softmax: out has in's shape */
        memcpy(so, s, sizeof so);
        ro = r;
    } else {
        count = pick_axes(f, r, arg ? 1 : 8, axes, (int)keep, s, so, &ro);
    }
    FzArg out, in;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, arg ? WGC_DTYPE_I32 : dt, ro, so)) return;
    if (!fz_op_arg(f, &op, &in, FZ_IN, dt, r, s)) return;
    int null_axes = 0;
    if (kind < 2 && fz_chance(f, 10)) { /* duplicate, out-of-range or too many axes */
        op.mutated = 1;
        uint32_t what = fz_below(f, 4);
        if (what == 0 && count > 0) axes[count++] = axes[0];
        else if (what == 1) axes[count++] = fz_chance(f, 50) ? (int32_t)r : fz_hostile_i32(f);
        else if (what == 2) count = fz_below(f, 17);
        else {
            null_axes = 1; /* NULL axes with a count */
            count = count ? count : 1;
        }
        for (uint32_t i = 0; i < 16; i++)
            if (i >= count) axes[i] = 0;
    }
    if (kind >= 2 && fz_chance(f, 8)) {
        axis = fz_hostile_i32(f);
        op.mutated = 1;
    }
    if (kind == 0 && fz_chance(f, 3)) {
        rop = fz_enum(f, WGC_NUM_REDUCE_OPS);
        op.mutated = 1;
    }
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "kind %u op %u axes %u [%d,%d,..] keepdim %u axis %d", kind, rop, count, axes[0],
             count > 1 ? axes[1] : 0, keep, axis);
    static const char *NAMES[] = {"wgc_op_reduce", "wgc_op_var/std", "wgc_op_softmax", "wgc_op_log_softmax"};
    fz_op_call(f, &op, NAMES[kind]);
    if (kind < 2) {
        int dup = 0, range = 0;
        for (uint32_t i = 0; i < count && !null_axes; i++) {
            if (axes[i] < -(int32_t)r || axes[i] >= (int32_t)r) range = 1;
            for (uint32_t j = 0; j < i; j++) dup |= (axes[i] + (int32_t)r) % (int32_t)(r ? r : 1) ==
                                                    (axes[j] + (int32_t)r) % (int32_t)(r ? r : 1);
        }
        int rank_ok = in.p && in.t.rank == r;
        if (rank_ok && range) fz_must_fail(f, "an axis out of range");
        if (rank_ok && dup && !range) fz_must_fail(f, "an axis given twice");
        if (null_axes) fz_must_fail(f, "NULL axes with a non-zero count");
        if (kind == 0 && rop >= WGC_NUM_REDUCE_OPS) fz_must_fail(f, "an unknown reduce op");
        if (kind == 0 && (rop == WGC_REDUCE_OP_ARGMAX || rop == WGC_REDUCE_OP_ARGMIN) && count > 1) fz_must_fail(f, "ARG* over several axes");
    } else {
        if (in.p && in.t.rank == r && (axis < -(int32_t)r || axis >= (int32_t)r)) fz_must_fail(f, "an axis out of range");
        if (fz_same_buffer(&out, &in)) fz_must_fail(f, "out shares a buffer with the input");
    }
    const int32_t *ap = null_axes ? NULL : axes;
    if (kind == 0) fz_op_end(f, &op, wgc_op_reduce(op.stream, rop, in.p, ap, count, keep, out.p));
    else if (kind == 1 && fz_chance(f, 50)) fz_op_end(f, &op, wgc_op_var(op.stream, in.p, ap, count, keep, unbiased, out.p));
    else if (kind == 1) fz_op_end(f, &op, wgc_op_std(op.stream, in.p, ap, count, keep, unbiased, out.p));
    else if (kind == 2) fz_op_end(f, &op, wgc_op_softmax(op.stream, in.p, axis, out.p));
    else fz_op_end(f, &op, wgc_op_log_softmax(op.stream, in.p, axis, out.p));
}

void fz_act_attention(Fuzz *f);     /* fuzz_act_attention.c */
void fz_act_conv_residual(Fuzz *f); /* fuzz_act_conv_residual.c */

const FzActionDef fz_tensor_op_actions[] = {
    {"op_gemm", act_gemm, 25},
    {"op_gemm_epilogue", act_gemm_epilogue, 10},
    {"op_conv", act_conv, 15},
    {"op_conv_residual", fz_act_conv_residual, 8},
    {"op_pool", act_pool, 15},
    {"op_norm", act_norm, 20},
    {"op_reduce", act_reduce, 40},
    {"op_attention", fz_act_attention, 10},
    {NULL, NULL, 0},
};
