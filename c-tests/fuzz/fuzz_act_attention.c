/* The attention action: plausible q, k, v (grouped heads, small sizes), an
 * optional mask, kv_lens and lse, sometimes hostile settings. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

void fz_act_attention(Fuzz *f);

void fz_act_attention(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t dt = fz_chance(f, 75) ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
    int64_t hkv = 1 + fz_below(f, 3), g = 1 + fz_below(f, 3), b = 1 + fz_below(f, 2);
    int64_t sq = 1 + fz_below(f, 9), skv = 1 + fz_below(f, 70), d = 1 + fz_below(f, 40);
    int64_t qs[4] = {b, hkv * g, sq, d}, ks[4] = {b, hkv, skv, d}, ls[3] = {b, hkv * g, sq}, ms[2] = {sq, skv};
    int64_t bs[1] = {b};
    FzArg out, q, k, v, mask, lens, lse;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, 4, qs)) return;
    if (!fz_op_arg(f, &op, &q, FZ_IN, dt, 4, qs)) return;
    if (!fz_op_arg(f, &op, &k, FZ_IN, dt, 4, ks)) return;
    if (!fz_op_arg(f, &op, &v, FZ_IN, dt, 4, ks)) return;
    if (fz_chance(f, 40)) {
        if (!fz_op_arg(f, &op, &mask, FZ_IN, fz_chance(f, 50) ? dt : WGC_DTYPE_U32, 2, ms)) return;
        mask.optional = 1;
    } else {
        fz_op_null_arg(&op, &mask);
    }
    if (fz_chance(f, 30)) {
        if (!fz_op_arg(f, &op, &lens, FZ_IN, WGC_DTYPE_I32, 1, bs)) return;
        lens.optional = 1;
    } else {
        fz_op_null_arg(&op, &lens);
    }
    /* lse last: the inputs keep out of out's buffer, not of lse's. */
    int want_lse = fz_chance(f, 30);
    if (want_lse) {
        if (!fz_op_arg(f, &op, &lse, FZ_OUT, WGC_DTYPE_F32, 3, ls)) return;
        lse.optional = 1;
        /* lse's buffer is drawn freely and may share memory with any
         * tensor: no verdict then (test_attention checks those refusals). */
        op.mutated = 1;
    } else {
        fz_op_null_arg(&op, &lse);
    }
    WgcAttentionDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.causal = fz_below(f, 3);
    desc.window = fz_chance(f, 20) ? fz_below(f, 10) : 0;
    desc.kv_len = fz_chance(f, 20) ? fz_below(f, (uint32_t)skv + 3) : 0;
    if (fz_chance(f, 8)) {
        desc.causal = 3 + fz_below(f, 100);
        op.mutated = 1;
    }
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "Hq %lld Hkv %lld Sq %lld Skv %lld D %lld causal %u", (long long)(hkv * g),
             (long long)hkv, (long long)sq, (long long)skv, (long long)d, desc.causal);
    fz_op_call(f, &op, "wgc_op_attention");
    if (desc.causal > 2) fz_must_fail(f, "unknown causal mode");
    for (int i = 1; i < op.nargs; i++)
        if (op.args[i] != &out && fz_same_buffer(&out, op.args[i])) fz_must_fail(f, "out shares a buffer with another tensor");
    if (want_lse)
        for (int i = 0; i < op.nargs; i++)
            if (op.args[i] != &lse && fz_same_buffer(&lse, op.args[i])) fz_must_fail(f, "lse shares a buffer");
    fz_op_end(f, &op, wgc_op_attention(op.stream, q.p, k.p, v.p, mask.p, lens.p, &desc, out.p, lse.p));
}
