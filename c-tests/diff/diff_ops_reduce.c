/* Reductions (wgc_op_reduce, wgc_op_var, wgc_op_std) against double
 * references. NaN propagates through sum, mean, max, min and prod;
 * argmax/argmin return the first NaN's index, else the first extreme
 * (PyTorch). Integer sums and products wrap. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

#include "op_names.h"

/* A drawn reduction: which input dims are reduced and the output's shape. */
typedef struct Axes {
    int32_t axes[WGC_MAX_RANK];
    uint32_t count;
    int reduced[WGC_MAX_RANK];
    uint32_t keepdim;
    int out_rank;
    int64_t out_shape[WGC_MAX_RANK];
    size_t group; /* elements reduced into each output */
} Axes;

static Axes draw_axes(Case *c, int rank, const int64_t *shape, int single) {
    Axes x;
    memset(&x, 0, sizeof x);
    int all = rank == 0 || rng_chance(&c->rng, 0.2);
    if (!all) { /* a random subset in random order, some negative */
        int order[WGC_MAX_RANK];
        for (int d = 0; d < rank; d++) order[d] = d;
        for (int d = rank - 1; d > 0; d--) {
            int k = rng_int(&c->rng, 0, d), t = order[d];
            order[d] = order[k];
            order[k] = t;
        }
        int n = single ? 1 : rng_int(&c->rng, 1, rank);
        for (int k = 0; k < n; k++) {
            x.axes[k] = rng_chance(&c->rng, 0.3) ? order[k] - rank : order[k];
            x.reduced[order[k]] = 1;
        }
        x.count = (uint32_t)n;
    } else {
        for (int d = 0; d < rank; d++) x.reduced[d] = 1;
    }
    x.keepdim = (uint32_t)rng_chance(&c->rng, 0.5);
    x.group = 1;
    for (int d = 0; d < rank; d++) {
        if (x.reduced[d]) x.group *= (size_t)shape[d];
        if (!x.reduced[d]) x.out_shape[x.out_rank++] = shape[d];
        else if (x.keepdim) x.out_shape[x.out_rank++] = 1;
    }
    return x;
}

/* Output element and position within its reduced set of input element li;
 * positions count in row-major order of the reduced dims (ARG* indices). */
static size_t output_of(const DTensor *in, const Axes *x, size_t li, size_t *pos) {
    int64_t coord[WGC_MAX_RANK];
    int r = (int)in->t.rank;
    unravel(li, r, in->t.shape, coord);
    size_t o = 0, p = 0;
    for (int d = 0; d < r; d++) {
        if (x->reduced[d]) p = p * (size_t)in->t.shape[d] + (size_t)coord[d];
        else o = o * (size_t)in->t.shape[d] + (size_t)coord[d];
    }
    *pos = p;
    return o;
}

static void axes_param(Case *c, const Axes *x) {
    char buf[64] = "";
    for (uint32_t k = 0, used = 0; k < x->count; k++)
        used += (uint32_t)snprintf(buf + used, sizeof buf - used, "%s%d", k ? "," : "", x->axes[k]);
    case_param(c, "axes=[%s] keepdim=%u", buf, x->keepdim);
}

typedef struct Acc {
    double sum, sumabs, prod, best;
    uint64_t iprod;
    int64_t isum;
    size_t count, best_pos, nan_pos;
    int has_nan;
} Acc;

static Expect reduce_expect(int op, WgcDtype d, const Acc *a) {
    Expect e = {0}; /* EXPECT_CLOSE */
    int i32 = d == WGC_DTYPE_I32;
    switch (op) {
    case WGC_REDUCE_OP_ARGMAX:
    case WGC_REDUCE_OP_ARGMIN:
        e.ref = (double)(a->has_nan ? a->nan_pos : a->best_pos);
        return e;
    case WGC_REDUCE_OP_MAX:
    case WGC_REDUCE_OP_MIN:
        e.ref = a->has_nan ? NAN : a->best;
        return e;
    default: break;
    }
    if (!dtype_is_float(d)) {
        if (op == WGC_REDUCE_OP_SUM) e.ref = i32 ? wrap_i32(a->isum) : wrap_u32(a->isum);
        else e.ref = i32 ? wrap_i32((int64_t)a->iprod) : wrap_u32((int64_t)a->iprod);
        return e;
    }
    double n = (double)a->count;
    switch (op) {
    case WGC_REDUCE_OP_SUM: e.ref = a->sum; e.tol = TOL_F32_SUM * a->sumabs; break;
    case WGC_REDUCE_OP_MEAN: e.ref = a->sum / n; e.tol = TOL_F32_SUM * a->sumabs / n; break;
    case WGC_REDUCE_OP_PROD: /* unspecified accuracy; one f32 rounding per factor */
        e.ref = a->prod;
        e.tol = n * TOL_F32_ROUNDED * fabs(a->prod);
        break;
    default: NO_REFERENCE_FOR("reduce", reduce_op_name(op));
    }
    if (!isfinite(e.tol)) e.tol = 0;
    e.tol += tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(e.ref) : 0);
    return e;
}

static void accumulate(int op, WgcDtype d, Acc *a, double v, size_t pos) {
    if (a->count == 0) a->best = v, a->best_pos = pos;
    a->count++;
    a->sum += v;
    a->sumabs += fabs(v);
    a->prod *= v;
    if (d == WGC_DTYPE_I32 || d == WGC_DTYPE_U32) {
        /* Integer sums wrap as the library's do; float inputs (NaN, huge)
         * never reach the integer conversion. */
        a->isum = (int64_t)((uint64_t)a->isum + (uint64_t)(int64_t)v);
        a->iprod = (a->iprod * (uint64_t)(int64_t)v) & 0xFFFFFFFFull;
    }
    if (isnan(v)) {
        if (!a->has_nan) a->nan_pos = pos;
        a->has_nan = 1;
        return;
    }
    int better = (op == WGC_REDUCE_OP_MAX || op == WGC_REDUCE_OP_ARGMAX) ? v > a->best : v < a->best;
    if (isnan(a->best) || better) a->best = v, a->best_pos = pos;
}

void run_reduce(Case *c) {
    int op = rng_int(&c->rng, 0, WGC_NUM_REDUCE_OPS - 1);
    int arg = op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN;
    WgcDtype d = draw_dtype(c, DTYPES_ALL, op == WGC_REDUCE_OP_MEAN ? 2 : 4);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, rng_chance(&c->rng, 0.1) ? 70000 : 3000, 0.05, s);
    Axes x = draw_axes(c, r, s, arg);
    if (arg && rng_chance(&c->rng, 0.3)) { /* the flattened tensor */
        memset(&x, 0, sizeof x);
        x.keepdim = 0;
        for (int k = 0; k < r; k++) x.reduced[k] = 1;
        x.group = numel_of(r, s);
    }
    /* Sums and products of huge or wide values overflow f32 part-way in an
     * order the header leaves open: those draw values whose partial results
     * stay finite (products: only small ones). */
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    if (op == WGC_REDUCE_OP_SUM || op == WGC_REDUCE_OP_MEAN) v.huge = dtype_max(d) / (double)(x.group + 1) / 4;
    if (v.huge < 4) v.huge = 4;
    if (op == WGC_REDUCE_OP_PROD && dtype_is_float(d)) {
        /* Magnitudes in [2^-e, 2^e] keep every partial product within 2^+-60
         * (and f16 inputs finite), in any order; zeros, infinities and NaN
         * still come in. */
        double e = fmin(60.0 / (double)(x.group ? x.group : 1), d == WGC_DTYPE_F16 ? 14 : 60);
        v.kind = rng_chance(&c->rng, 0.5) ? VAL_SPECIAL : VAL_NORMAL;
        v.hi = v.huge = exp2(e);
        v.lo = -v.hi;
        v.min_abs = v.tiny = exp2(-e);
    }
    DTensor *a = case_tensor(c, "in", d, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    WgcDtype od = arg ? WGC_DTYPE_I32 : d;
    int share = dtype_size(od) == dtype_size(d) && rng_chance(&c->rng, 0.15);
    DTensor *o = case_tensor(c, "out", od, x.out_rank, x.out_shape, VIEW_ANY, NULL, share ? a : NULL);
    case_param(c, "op=%s dtype=%s values=%s", reduce_op_name(op), dtype_name(d), value_kind_name(v.kind));
    axes_param(c, &x);
    case_upload(c);
    WgcStatus st = wgc_op_reduce(c->stream, (uint32_t)op, &a->t, x.count ? x.axes : NULL, x.count, x.keepdim, &o->t);
    if (x.group == 0 && (op == WGC_REDUCE_OP_MAX || op == WGC_REDUCE_OP_MIN || arg)) {
        case_expect_status(c, st, WGC_ERROR_INVALID_ARGUMENT, "wgc_op_reduce over an empty set");
        return;
    }
    if (!case_expect_ok(c, st, "wgc_op_reduce")) return;
    case_download(c);
    Acc *acc = calloc(o->n + 1, sizeof(Acc));
    for (size_t i = 0; i < o->n; i++) acc[i].prod = 1, acc[i].iprod = 1;
    for (size_t li = 0; li < a->n; li++) {
        size_t pos, oi = output_of(a, &x, li, &pos);
        accumulate(op, d, &acc[oi], a->val[li], pos);
    }
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) e[i] = reduce_expect(op, d, &acc[i]);
    case_check(c, o, e, NULL);
    free(e);
    free(acc);
    case_check_untouched(c);
}

/* Variance with Bessel's correction or not; a divisor <= 0 gives NaN. */
static void run_variance(Case *c, int std) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, rng_chance(&c->rng, 0.1) ? 70000 : 3000, 0.05, s);
    Axes x = draw_axes(c, r, s, 0);
    uint32_t unbiased = (uint32_t)rng_chance(&c->rng, 0.5);
    /* Squares of values above 1e15 overflow f32 part-way: not drawn. */
    ValueSpec v = default_values(c, d, ALLOW_ALL | ALLOW_OFFSET);
    if (v.huge > 1e15) v.huge = 1e15;
    DTensor *a = case_tensor(c, "in", d, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, x.out_rank, x.out_shape, VIEW_ANY, NULL, rng_chance(&c->rng, 0.15) ? a : NULL);
    case_param(c, "dtype=%s unbiased=%u values=%s", dtype_name(d), unbiased, value_kind_name(v.kind));
    if (v.kind == VAL_OFFSET) case_param(c, "offset=%.6g", v.offset);
    axes_param(c, &x);
    case_upload(c);
    WgcStatus st = std ? wgc_op_std(c->stream, &a->t, x.count ? x.axes : NULL, x.count, x.keepdim, unbiased, &o->t)
                       : wgc_op_var(c->stream, &a->t, x.count ? x.axes : NULL, x.count, x.keepdim, unbiased, &o->t);
    if (!case_expect_ok(c, st, std ? "wgc_op_std" : "wgc_op_var")) return;
    case_download(c);
    double *sum = calloc(o->n + 1, sizeof(double)), *ss = calloc(o->n + 1, sizeof(double));
    for (size_t li = 0; li < a->n; li++) {
        size_t pos;
        sum[output_of(a, &x, li, &pos)] += a->val[li];
    }
    for (size_t li = 0; li < a->n; li++) {
        size_t pos, oi = output_of(a, &x, li, &pos);
        double dev = a->val[li] - sum[oi] / (double)x.group;
        ss[oi] += dev * dev;
    }
    Expect *e = expect_alloc(o->n);
    double divisor = (double)x.group - unbiased;
    for (size_t i = 0; i < o->n; i++) {
        double var = divisor > 0 ? ss[i] / divisor : NAN;
        /* f32 statistics; an adapter that flushes subnormals loses each of
         * n squares and the squared sum's term below the smallest normal
         * (divided by the divisor), then the result itself: the header's
         * 2^-125 (n + 1) / (n - ddof) */
        double tv = TOL_F32_VAR * var + 2 * tol_ftz(WGC_DTYPE_F32) * ((double)x.group + 1) / divisor;
        e[i].ref = var;
        e[i].tol = tv;
        if (std) { /* the square root of anything within the variance's bound */
            e[i].ref = sqrt(var);
            e[i].tol = fmax(sqrt(var + tv) - e[i].ref, e[i].ref - sqrt(fmax(0, var - tv)));
        }
        e[i].tol += tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(e[i].ref) : 0);
    }
    case_check(c, o, e, NULL);
    free(e);
    free(sum);
    free(ss);
    case_check_untouched(c);
}

void run_var(Case *c) { run_variance(c, 0); }
void run_std(Case *c) { run_variance(c, 1); }

/* wgc_op_expr_reduce: op(a * b) or op(a + b) over random axes of the
 * broadcast shape of a and b, against the same double reference as
 * wgc_op_reduce of the rounded (integers: wrapped) products or sums.
 * Floats stay small (|a op b| <= 16), with NaN, infinities and zeros
 * sprinkled in, and tiny values no smaller than the smallest normal, so
 * flushing subnormals cannot move an extreme. */
void run_expr_reduce(Case *c) {
    int op = rng_int(&c->rng, 0, WGC_NUM_REDUCE_OPS - 1);
    int arg = op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN;
    int mul = rng_chance(&c->rng, 0.5);
    WgcDtype d = draw_dtype(c, DTYPES_ALL, op == WGC_REDUCE_OP_MEAN ? 2 : 4);
    int64_t so[WGC_MAX_RANK], s[2][WGC_MAX_RANK];
    int ro = draw_shape(&c->rng, 0, 8, 3000, 0.05, so), r[2];
    for (int k = 0; k < 2; k++) r[k] = draw_broadcast_shape(&c->rng, ro, so, s[k]);
    complete_broadcast(&c->rng, 2, r, s, ro, so);
    Axes x = draw_axes(c, ro, so, arg);
    ValueSpec v = default_values(c, d, ALLOW_SPECIAL | ALLOW_INF | ALLOW_NAN);
    if (dtype_is_float(d)) {
        v.huge = 4;
        v.tiny = v.min_abs = dtype_min_normal(d) * 4;
    }
    DTensor *a = case_tensor(c, "a", d, r[0], s[0], VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *b = case_tensor(c, "b", d, r[1], s[1], VIEW_ZERO_STRIDES, &v, NULL);
    WgcDtype od = arg ? WGC_DTYPE_I32 : d;
    DTensor *o = case_tensor(c, "out", od, x.out_rank, x.out_shape, VIEW_ANY, NULL, NULL);
    case_param(c, "expr=%s(a %s b) dtype=%s values=%s", reduce_op_name(op), mul ? "*" : "+", dtype_name(d),
               value_kind_name(v.kind));
    axes_param(c, &x);
    case_upload(c);
    WgcExpr *e = NULL;
    uint32_t na = 0, nb = 0, ny = 0;
    WgcStatus st = wgc_expr_create(&e);
    if (st == WGC_OK) st = wgc_expr_input(e, (uint32_t)d, &na);
    if (st == WGC_OK) st = wgc_expr_input(e, (uint32_t)d, &nb);
    if (st == WGC_OK) st = wgc_expr_binary(e, mul ? WGC_BINARY_OP_MUL : WGC_BINARY_OP_ADD, na, nb, &ny);
    if (st == WGC_OK) st = wgc_expr_output(e, ny);
    WgcTensor ins[2] = {a->t, b->t};
    if (st == WGC_OK)
        st = wgc_op_expr_reduce(c->stream, e, (uint32_t)op, x.count ? x.axes : NULL, x.count, x.keepdim, ins, 2, NULL,
                                0, NULL, &o->t);
    wgc_expr_release(e);
    if (x.group == 0 && (op == WGC_REDUCE_OP_MAX || op == WGC_REDUCE_OP_MIN || arg)) {
        case_expect_status(c, st, WGC_ERROR_INVALID_ARGUMENT, "wgc_op_expr_reduce over an empty set");
        return;
    }
    if (!case_expect_ok(c, st, "wgc_op_expr_reduce")) return;
    case_download(c);
    /* The broadcast shape as a tensor of the values the expression computes. */
    DTensor full;
    memset(&full, 0, sizeof full);
    full.t.rank = (uint32_t)ro;
    for (int k = 0; k < ro; k++) full.t.shape[k] = so[k];
    full.n = numel_of(ro, so);
    Acc *acc = calloc(o->n + 1, sizeof(Acc));
    for (size_t i = 0; i < o->n; i++) acc[i].prod = 1, acc[i].iprod = 1;
    for (size_t li = 0; li < full.n; li++) {
        double va = a->val[broadcast_index(li, &full, a)], vb = b->val[broadcast_index(li, &full, b)];
        double y;
        if (dtype_is_float(d)) {
            y = dtype_round(d, mul ? va * vb : va + vb);
        } else { /* wrapping, exactly (a double holds no 62-bit product) */
            uint64_t ia = (uint64_t)(int64_t)va, ib = (uint64_t)(int64_t)vb, iy = mul ? ia * ib : ia + ib;
            y = d == WGC_DTYPE_I32 ? wrap_i32((int64_t)(iy & 0xFFFFFFFFull)) : wrap_u32((int64_t)(iy & 0xFFFFFFFFull));
        }
        size_t pos, oi = output_of(&full, &x, li, &pos);
        accumulate(op, d, &acc[oi], y, pos);
    }
    Expect *ex = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) {
        ex[i] = reduce_expect(op, d, &acc[i]);
        /* An extreme of sums rounded through f32 then f16 may sit one f16
         * rounding from the once-rounded reference; tiny products may flush. */
        if ((op == WGC_REDUCE_OP_MAX || op == WGC_REDUCE_OP_MIN) && dtype_is_float(d) && isfinite(ex[i].ref))
            ex[i].tol += tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(ex[i].ref) : 0);
    }
    case_check(c, o, ex, NULL);
    free(ex);
    free(acc);
    case_check_untouched(c);
}
