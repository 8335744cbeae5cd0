/* Actions for the elementwise, data-movement and random operators. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

/* A shape that broadcasts to `so`: leading dims dropped, some dims 1. */
static uint32_t broadcast_of(Fuzz *f, uint32_t r, const int64_t *so, int64_t *s) {
    uint32_t drop = fz_chance(f, 20) ? fz_below(f, r + 1) : 0;
    for (uint32_t k = 0; k + drop < r; k++) s[k] = fz_chance(f, 25) ? 1 : so[k + drop];
    return r - drop;
}

static uint32_t float_dtype(Fuzz *f) {
    return fz_chance(f, 70) ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
}

/* A hostile op code now and then (the caller marks the call mutated). */
static uint32_t op_code(Fuzz *f, FzOp *op, uint32_t valid, uint32_t count) {
    if (!fz_chance(f, 4)) return valid;
    op->mutated = 1;
    return fz_enum(f, count);
}

static void act_binary(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t bop = fz_below(f, WGC_NUM_BINARY_OPS), dt = fz_below(f, 4);
    if (bop == WGC_BINARY_OP_POW && dt >= WGC_DTYPE_I32) dt = float_dtype(f);
    int64_t so[8], sb[8];
    uint32_t r = fz_below(f, 5);
    fz_random_shape(f, r, so, 4096);
    uint32_t rb = broadcast_of(f, r, so, sb);
    int scalar = fz_chance(f, 30), in_place = bop < WGC_BINARY_OP_EQ && fz_chance(f, 10);
    FzArg out, a, b;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, bop >= WGC_BINARY_OP_EQ ? WGC_DTYPE_U32 : dt, r, so)) return;
    if (in_place) {
        a = out; /* the very same view: allowed */
        a.role = FZ_IN;
        a.p = &a.t;
        op.args[op.nargs++] = &a;
    } else if (!fz_op_arg(f, &op, &a, FZ_IN, dt, r, so)) {
        return;
    }
    if (!scalar && !fz_op_arg(f, &op, &b, FZ_IN, dt, rb, sb)) return;
    bop = op_code(f, &op, bop, WGC_NUM_BINARY_OPS);
    double value = fz_hostile_double(f);
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "op %u%s", bop, scalar ? " scalar" : "");
    fz_op_call(f, &op, scalar ? "wgc_op_binary_scalar" : "wgc_op_binary");
    if (bop >= WGC_NUM_BINARY_OPS) fz_must_fail(f, "an unknown binary op");
    if (scalar) fz_op_end(f, &op, wgc_op_binary_scalar(op.stream, bop, a.p, value, out.p));
    else fz_op_end(f, &op, wgc_op_binary(op.stream, bop, a.p, b.p, out.p));
}

static void act_unary(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t kind = fz_below(f, 3), uop = fz_below(f, WGC_NUM_UNARY_OPS);
    int int_ok = uop == WGC_UNARY_OP_NEG || uop == WGC_UNARY_OP_ABS || uop == WGC_UNARY_OP_RELU;
    uint32_t dt = kind == 0 && int_ok && fz_chance(f, 30) ? WGC_DTYPE_I32 : float_dtype(f);
    if (kind == 2) dt = fz_below(f, 4); /* clamp takes every dtype */
    int64_t s[8];
    uint32_t r = fz_below(f, 5);
    fz_random_shape(f, r, s, 4096);
    FzArg out, in;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, r, s)) return;
    if (fz_chance(f, 10)) {
        in = out;
        in.role = FZ_IN;
        in.p = &in.t;
        op.args[op.nargs++] = &in;
    } else if (!fz_op_arg(f, &op, &in, FZ_IN, dt, r, s)) {
        return;
    }
    double x = 0.25, y = 2.0;
    if (fz_chance(f, 20)) {
        x = fz_hostile_double(f);
        y = fz_hostile_double(f);
        op.mutated = 1;
    }
    if (kind == 0) uop = op_code(f, &op, uop, WGC_NUM_UNARY_OPS);
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "kind %u op %u x %g y %g", kind, uop, x, y);
    if (kind == 0) {
        fz_op_call(f, &op, "wgc_op_unary");
        if (uop >= WGC_NUM_UNARY_OPS) fz_must_fail(f, "an unknown unary op");
        fz_op_end(f, &op, wgc_op_unary(op.stream, uop, in.p, out.p));
    } else if (kind == 1) {
        fz_op_call(f, &op, "wgc_op_leaky_relu");
        fz_op_end(f, &op, wgc_op_leaky_relu(op.stream, in.p, (float)x, out.p));
    } else {
        fz_op_call(f, &op, "wgc_op_clamp");
        if (isnan(x) || isnan(y)) fz_must_fail(f, "a NaN bound");
        fz_op_end(f, &op, wgc_op_clamp(op.stream, in.p, x, y, out.p));
    }
}

static void act_ternary(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    int where = fz_chance(f, 50);
    uint32_t dt = fz_below(f, 4);
    int64_t so[8], s1[8], s2[8];
    uint32_t r = fz_below(f, 5);
    fz_random_shape(f, r, so, 4096);
    uint32_t r1 = broadcast_of(f, r, so, s1), r2 = broadcast_of(f, r, so, s2);
    FzArg out, a, b, c;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, r, so)) return;
    if (!fz_op_arg(f, &op, &a, FZ_IN, where ? WGC_DTYPE_U32 : dt, r1, s1)) return;
    if (!fz_op_arg(f, &op, &b, FZ_IN, dt, r, so)) return; /* one operand has the full shape */
    if (!fz_op_arg(f, &op, &c, FZ_IN, dt, r2, s2)) return;
    fz_op_mutate(f, &op);
    fz_op_call(f, &op, where ? "wgc_op_where" : "wgc_op_fma");
    if (where) fz_op_end(f, &op, wgc_op_where(op.stream, a.p, b.p, c.p, out.p));
    else fz_op_end(f, &op, wgc_op_fma(op.stream, a.p, b.p, c.p, out.p));
}

static void act_random(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    int normal = fz_chance(f, 50), int_dtype = fz_chance(f, 5);
    uint32_t dt = int_dtype ? WGC_DTYPE_I32 + fz_below(f, 2) : float_dtype(f);
    int64_t s[8];
    uint32_t r = fz_below(f, 5);
    fz_random_shape(f, r, s, 4096);
    FzArg out;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, r, s)) return;
    if (int_dtype) op.mutated = 1;
    uint64_t seed = fz_u64(f), offset = fz_chance(f, 70) ? fz_below(f, 1000) : fz_hostile_u64(f);
    double p1 = fz_chance(f, 80) ? -1.0 : fz_hostile_double(f), p2 = fz_chance(f, 80) ? 2.0 : fz_hostile_double(f);
    if (p1 != -1.0 || p2 != 2.0) op.mutated = 1;
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "%s seed %llu offset %llu %g %g", normal ? "normal" : "uniform",
             (unsigned long long)seed, (unsigned long long)offset, p1, p2);
    fz_op_call(f, &op, normal ? "wgc_op_random_normal" : "wgc_op_random_uniform");
    if (int_dtype && out.p && out.t.dtype == dt) fz_must_fail(f, "an integer dtype");
    if (!isfinite(p1) || !isfinite(p2)) fz_must_fail(f, "a parameter that is not finite");
    if (normal && p2 < 0) fz_must_fail(f, "a negative standard deviation");
    if (normal) fz_op_end(f, &op, wgc_op_random_normal(op.stream, out.p, seed, offset, p1, p2));
    else fz_op_end(f, &op, wgc_op_random_uniform(op.stream, out.p, seed, offset, p1, p2));
}

static void act_movement(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t kind = fz_below(f, 4), dt = fz_below(f, 4), dt_out = kind == 3 ? fz_below(f, 4) : dt;
    int64_t s[8], so[8];
    uint32_t r = kind == 2 ? 1 + fz_below(f, 4) : fz_below(f, 5);
    fz_random_shape(f, r, s, 4096);
    uint32_t perm[16];
    for (uint32_t k = 0; k < 16; k++) perm[k] = k;
    for (uint32_t k = r; k-- > 1;) {
        uint32_t j = fz_below(f, k + 1), t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
    int32_t d0 = r ? (int32_t)fz_below(f, r) - (fz_chance(f, 30) ? (int32_t)r : 0) : 0;
    int32_t d1 = r ? (int32_t)fz_below(f, r) - (fz_chance(f, 30) ? (int32_t)r : 0) : 0;
    memcpy(so, s, sizeof so);
    if (kind == 1)
        for (uint32_t k = 0; k < r; k++) so[k] = s[perm[k]];
    if (kind == 2 && r > 0) {
        int64_t t = so[(d0 + (int32_t)r) % (int32_t)r];
        so[(d0 + (int32_t)r) % (int32_t)r] = so[(d1 + (int32_t)r) % (int32_t)r];
        so[(d1 + (int32_t)r) % (int32_t)r] = t;
    }
    FzArg out, in;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt_out, r, so)) return;
    if (!fz_op_arg(f, &op, &in, FZ_IN, dt, r, s)) return;
    uint32_t prank = r;
    if (kind == 1 && fz_chance(f, 10)) { /* not a permutation, or the wrong rank */
        op.mutated = 1;
        if (fz_chance(f, 50)) perm[fz_below(f, 16)] = fz_chance(f, 50) ? perm[0] : fz_hostile_u32(f);
        else prank = fz_below(f, 17);
    }
    if (kind == 2 && fz_chance(f, 10)) {
        op.mutated = 1;
        d0 = fz_hostile_i32(f);
    }
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "kind %u prank %u perm %u,%u,%u dims %d %d", kind, prank, perm[0], perm[1],
             perm[2], d0, d1);
    if (kind == 0) {
        fz_op_call(f, &op, "wgc_op_copy");
        fz_op_end(f, &op, wgc_op_copy(op.stream, in.p, out.p));
    } else if (kind == 1) {
        fz_op_call(f, &op, "wgc_op_permute");
        int is_perm = 1;
        for (uint32_t k = 0; k < prank && k < 16; k++)
            for (uint32_t j = 0; j < k; j++) is_perm &= perm[j] != perm[k];
        for (uint32_t k = 0; k < prank && k < 16; k++) is_perm &= perm[k] < prank;
        if (!is_perm) fz_must_fail(f, "perm is not a permutation");
        if (in.p && in.t.rank == r && prank != r) fz_must_fail(f, "a perm rank other than the input's");
        fz_op_end(f, &op, wgc_op_permute(op.stream, in.p, perm, prank, out.p));
    } else if (kind == 2) {
        fz_op_call(f, &op, "wgc_op_transpose");
        if (in.p && in.t.rank == r && (d0 < -(int32_t)r || d0 >= (int32_t)r)) fz_must_fail(f, "a dim out of range");
        fz_op_end(f, &op, wgc_op_transpose(op.stream, in.p, d0, d1, out.p));
    } else {
        fz_op_call(f, &op, "wgc_op_cast");
        fz_op_end(f, &op, wgc_op_cast(op.stream, in.p, out.p));
    }
}

static void act_fill(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    int arange = fz_chance(f, 40);
    uint32_t dt = fz_below(f, 4);
    int64_t s[8];
    uint32_t r = arange ? 1 : fz_below(f, 5);
    fz_random_shape(f, r, s, 4096);
    FzArg out;
    if (!fz_op_arg(f, &op, &out, FZ_OUT, dt, r, s)) return;
    double v = fz_hostile_double(f), step = fz_chance(f, 80) ? 1.5 : fz_hostile_double(f);
    if (arange && (!isfinite(v) || !isfinite(step))) op.mutated = 1;
    fz_op_mutate(f, &op);
    snprintf(op.note, sizeof op.note, "%s %g %g", arange ? "arange" : "fill", v, step);
    fz_op_call(f, &op, arange ? "wgc_op_arange" : "wgc_op_fill");
    if (arange) {
        if (!isfinite(v) || !isfinite(step)) fz_must_fail(f, "a start or step that is not finite");
        if (out.p && out.t.rank != 1 && out.t.rank <= WGC_MAX_RANK) fz_must_fail(f, "arange into a view that is not 1-D");
        fz_op_end(f, &op, wgc_op_arange(op.stream, out.p, v, step));
    } else {
        fz_op_end(f, &op, wgc_op_fill(op.stream, out.p, v));
    }
}

/* An elementwise expression of up to three inputs and six ops, with now
 * and then a hostile build call (a node not built yet, an unknown op or
 * dtype: each must fail and leave the expression usable) or a missing
 * parameter at launch. */
static void act_expr(Fuzz *f) {
    FzOp op;
    if (!fz_op_begin(f, &op)) return;
    uint32_t dt = fz_chance(f, 25) ? WGC_DTYPE_I32 : float_dtype(f);
    int is_float = dt != WGC_DTYPE_I32;
    WgcExpr *e = NULL;
    if (wgc_expr_create(&e) != WGC_OK) return;
    uint32_t n_in = 1 + fz_below(f, 3), nodes = 0, id = 0, last = 0;
    for (uint32_t k = 0; k < n_in; k++) wgc_expr_input(e, dt, &id), nodes++;
    int has_param = fz_chance(f, 30);
    if (has_param) wgc_expr_param(e, dt, &id), nodes++;
    uint32_t n_ops = 1 + fz_below(f, 6);
    for (uint32_t k = 0; k < n_ops; k++) {
        uint32_t a = fz_below(f, nodes), b = fz_below(f, nodes);
        if (fz_chance(f, 5)) {
            WgcStatus s = wgc_expr_binary(e, WGC_BINARY_OP_ADD, a, nodes + fz_below(f, 1000), &id);
            if (s != WGC_ERROR_INVALID_ARGUMENT)
                fz_finding(f, "wgc_expr_binary naming a node not built yet: %s", wgc_status_string(s));
            s = wgc_expr_unary(e, WGC_NUM_UNARY_OPS + fz_below(f, 100), a, &id);
            if (s != WGC_ERROR_INVALID_ARGUMENT) fz_finding(f, "wgc_expr_unary of an unknown op: %s", wgc_status_string(s));
            s = wgc_expr_cast(e, a, 5 + fz_below(f, 100), &id);
            if (s != WGC_ERROR_INVALID_ARGUMENT) fz_finding(f, "wgc_expr_cast to an unknown dtype: %s", wgc_status_string(s));
        }
        WgcStatus s;
        if (fz_chance(f, 50)) {
            uint32_t bop = fz_below(f, WGC_BINARY_OP_MINIMUM + 1); /* arithmetic: the dtype stays */
            if (bop == WGC_BINARY_OP_POW && !is_float) bop = WGC_BINARY_OP_MUL;
            s = wgc_expr_binary(e, bop, a, b, &id);
        } else {
            uint32_t uop = is_float ? fz_below(f, WGC_NUM_UNARY_OPS) : fz_below(f, 2);
            s = wgc_expr_unary(e, uop, a, &id);
        }
        if (s != WGC_OK) fz_finding(f, "a well-typed expression node failed: %s", wgc_status_string(s));
        else last = id, nodes++;
    }
    wgc_expr_output(e, last);
    int64_t so[8], sb[8];
    uint32_t r = fz_below(f, 5);
    fz_random_shape(f, r, so, 4096);
    /* Now and then the value is reduced (wgc_op_expr_reduce) over the last
     * axis or all of them, with any reduce op (an empty MAX or a MEAN of
     * integers must fail cleanly). */
    int reduce = fz_chance(f, 30);
    uint32_t rop = fz_below(f, WGC_NUM_REDUCE_OPS);
    int32_t last_axis = -1;
    uint32_t n_axes = reduce && r > 0 && fz_chance(f, 50) ? 1 : 0;
    uint32_t out_rank = reduce ? (n_axes ? r - 1 : 0) : r;
    uint32_t out_dt = reduce && (rop == WGC_REDUCE_OP_ARGMAX || rop == WGC_REDUCE_OP_ARGMIN) ? WGC_DTYPE_I32 : dt;
    FzArg out, in[3];
    if (!fz_op_arg(f, &op, &out, FZ_OUT, out_dt, out_rank, so)) goto done;
    for (uint32_t k = 0; k < n_in; k++) {
        /* A reduction's shape is its inputs' broadcast shape: input 0 has it all. */
        uint32_t rb = reduce && k == 0 ? r : broadcast_of(f, r, so, sb);
        if (!fz_op_arg(f, &op, &in[k], FZ_IN, dt, rb, reduce && k == 0 ? so : sb)) goto done;
    }
    int drop_param = has_param && fz_chance(f, 10);
    if (drop_param) op.mutated = 1;
    /* The mean of integers is refused (WGC_ERROR_UNSUPPORTED), as wgc_op_reduce refuses it. */
    int int_mean = reduce && rop == WGC_REDUCE_OP_MEAN && (dt == WGC_DTYPE_I32 || dt == WGC_DTYPE_U32);
    if (int_mean) op.mutated = 1;
    fz_op_mutate(f, &op);
    WgcTensor ins[3], outs[1];
    int null_in = 0;
    for (uint32_t k = 0; k < n_in; k++) {
        if (in[k].p) ins[k] = *in[k].p;
        else null_in = 1;
    }
    if (out.p) outs[0] = *out.p;
    double param = fz_hostile_double(f);
    snprintf(op.note, sizeof op.note, "expr of %u inputs, %u ops%s%s", n_in, n_ops, drop_param ? ", no param" : "",
             reduce ? ", reduced" : "");
    fz_op_call(f, &op, reduce ? "wgc_op_expr_reduce" : "wgc_op_expr");
    if (drop_param) fz_must_fail(f, "an expression launched without its parameter");
    if (int_mean) fz_must_fail(f, "a mean of integers");
    if (reduce)
        fz_op_end(f, &op, wgc_op_expr_reduce(op.stream, e, rop, &last_axis, n_axes, 0, null_in ? NULL : ins, n_in,
                                             has_param ? &param : NULL, has_param && !drop_param ? 1 : 0, NULL,
                                             out.p));
    else
        fz_op_end(f, &op, wgc_op_expr(op.stream, e, null_in ? NULL : ins, n_in, out.p ? outs : NULL, 1,
                                      has_param ? &param : NULL, has_param && !drop_param ? 1 : 0));
done:
    wgc_expr_release(e);
}

const FzActionDef fz_elementwise_actions[] = {
    {"op_binary", act_binary, 40},
    {"op_unary", act_unary, 30},
    {"op_ternary", act_ternary, 20},
    {"op_random", act_random, 15},
    {"op_movement", act_movement, 30},
    {"op_fill", act_fill, 20},
    {"op_expr", act_expr, 15},
    {NULL, NULL, 0},
};
