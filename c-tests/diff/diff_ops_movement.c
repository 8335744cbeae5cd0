/* Data movement (wgc_op_copy, wgc_op_permute, wgc_op_transpose, wgc_op_cast,
 * wgc_op_fill, wgc_op_arange): values move unchanged, sign of zero
 * included; conversions follow the header's stated rules. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

/* Expect out to hold in's values, out element i taking in element src(i). */
static void expect_moved(Case *c, const DTensor *in, const DTensor *out, const size_t *src) {
    Expect *e = expect_alloc(out->n);
    for (size_t i = 0; i < out->n; i++) {
        e[i].kind = EXPECT_SAME;
        e[i].ref = in->val[src ? src[i] : i];
    }
    case_check(c, out, e, NULL);
    free(e);
    case_check_untouched(c);
}

void run_copy(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, rng_chance(&c->rng, 0.1) ? 70000 : 3000, 0.05, s);
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    DTensor *a = case_tensor(c, "in", d, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, rng_chance(&c->rng, 0.2) ? a : NULL);
    case_param(c, "dtype=%s values=%s", dtype_name(d), value_kind_name(v.kind));
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_copy(c->stream, &a->t, &o->t), "wgc_op_copy")) return;
    case_download(c);
    expect_moved(c, a, o, NULL);
}

/* out's element i (shape permuted by perm) comes from in's element src[i]. */
static size_t *permuted_sources(const DTensor *in, const DTensor *out, const uint32_t *perm) {
    int r = (int)in->t.rank;
    size_t *src = malloc((out->n + 1) * sizeof(size_t));
    int64_t oc[WGC_MAX_RANK], ic[WGC_MAX_RANK];
    for (size_t i = 0; i < out->n; i++) {
        unravel(i, r, out->t.shape, oc);
        for (int k = 0; k < r; k++) ic[perm[k]] = oc[k];
        size_t li = 0;
        for (int k = 0; k < r; k++) li = li * (size_t)in->t.shape[k] + (size_t)ic[k];
        src[i] = li;
    }
    return src;
}

static void run_permutation(Case *c, int transpose) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int64_t s[WGC_MAX_RANK], so[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, transpose ? 1 : 0, 8, 3000, 0.05, s);
    uint32_t perm[WGC_MAX_RANK];
    for (int k = 0; k < r; k++) perm[k] = (uint32_t)k;
    int dim0 = 0, dim1 = 0;
    if (transpose) { /* Python-style dims, negative ones included */
        int a = rng_int(&c->rng, 0, r - 1), b = rng_int(&c->rng, 0, r - 1);
        perm[a] = (uint32_t)b;
        perm[b] = (uint32_t)a;
        dim0 = rng_chance(&c->rng, 0.5) ? a - r : a;
        dim1 = rng_chance(&c->rng, 0.5) ? b - r : b;
    } else {
        for (int k = r - 1; k > 0; k--) {
            int j = rng_int(&c->rng, 0, k);
            uint32_t t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
    }
    for (int k = 0; k < r; k++) so[k] = s[perm[k]];
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    DTensor *a = case_tensor(c, "in", d, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, r, so, VIEW_ANY, NULL, NULL);
    char p[64] = "";
    for (int k = 0, used = 0; k < r; k++) used += snprintf(p + used, sizeof p - (size_t)used, "%s%u", k ? "," : "", perm[k]);
    case_param(c, "dtype=%s perm=[%s] dims=%d,%d", dtype_name(d), p, dim0, dim1);
    case_upload(c);
    WgcStatus st = transpose ? wgc_op_transpose(c->stream, &a->t, dim0, dim1, &o->t)
                             : wgc_op_permute(c->stream, &a->t, perm, (uint32_t)r, &o->t);
    if (!case_expect_ok(c, st, transpose ? "wgc_op_transpose" : "wgc_op_permute")) return;
    case_download(c);
    size_t *src = permuted_sources(a, o, perm);
    expect_moved(c, a, o, src);
    free(src);
}

void run_permute(Case *c) { run_permutation(c, 0); }
void run_transpose(Case *c) { run_permutation(c, 1); }

/* wgc_op_cast's documented conversions. */
static Expect cast_expect(WgcDtype from, WgcDtype to, double x) {
    Expect e = {0}; /* EXPECT_CLOSE */
    if (from == to || (from == WGC_DTYPE_F16 && to == WGC_DTYPE_F32)) {
        e.kind = EXPECT_SAME;
        e.ref = x;
        return e;
    }
    if (to == WGC_DTYPE_I32 || to == WGC_DTYPE_U32) {
        if (!dtype_is_float(from)) { /* i32 <-> u32 reinterpret the bits */
            e.ref = to == WGC_DTYPE_I32 ? wrap_i32((int64_t)x) : wrap_u32((int64_t)x);
            return e;
        }
        /* Truncate, saturate at the range as f32 sees it, NaN -> 0. */
        double t = isnan(x) ? 0 : trunc(x);
        e.ref = to == WGC_DTYPE_I32 ? fmin(fmax(t, -2147483648.0), 2147483520.0) : fmin(fmax(t, 0), 4294967040.0);
        return e;
    }
    if (fabs(x) >= 65520.0 && to == WGC_DTYPE_F16 && !isinf(x) && !isnan(x)) {
        /* Beyond f16's range: "the adapter's (usually +-inf)": the largest finite or inf. */
        e.ref = copysign(65504.0, x);
        e.tol = 16;
        return e;
    }
    e.ref = x;
    if (!dtype_is_float(from)) {
        /* Integer to float: rounding direction unspecified; either neighbour. */
        e.tol = (to == WGC_DTYPE_F16 ? 9.765625e-4 : TOL_F32_ROUNDED) * fabs(x);
    } else {
        e.tol = tol_ftz(to); /* f32 -> f16 rounds to nearest; subnormals may flush */
    }
    return e;
}

void run_cast(Case *c) {
    WgcDtype from = draw_dtype(c, DTYPES_ALL, 4), to = draw_dtype(c, DTYPES_ALL, 4);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, 3000, 0.05, s);
    /* Floats reach past the integer ranges (and f32's past f16's) half the time. */
    double wide = from == WGC_DTYPE_F32 ? 5e9 : 7e4;
    ValueSpec v = dtype_is_float(from) ? draw_values(c, from, -wide, wide, ALLOW_ALL) : default_values(c, from, ALLOW_ALL);
    if (v.kind == VAL_NORMAL && rng_chance(&c->rng, 0.5)) v.lo = -10, v.hi = 10;
    DTensor *a = case_tensor(c, "in", from, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", to, r, s, VIEW_ANY, NULL, NULL);
    case_param(c, "from=%s to=%s values=%s", dtype_name(from), dtype_name(to), value_kind_name(v.kind));
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_cast(c->stream, &a->t, &o->t), "wgc_op_cast")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) e[i] = cast_expect(from, to, a->val[i]);
    c->user = o;
    case_check(c, o, e, explain_inputs);
    free(e);
    case_check_untouched(c);
}

void run_fill(Case *c) {
    static const double special[] = {NAN, INFINITY, -INFINITY, -0.0, 1e30, 2.7, -2.7, 3e9, -3e9, 70000.0,
                                     1.00048828125 + 9.313225746154785e-10, 1e-30, 4294967295.0};
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, rng_chance(&c->rng, 0.1) ? 70000 : 3000, 0.05, s);
    double value = rng_chance(&c->rng, 0.4) ? rng_range(&c->rng, -100, 100) : special[rng_int(&c->rng, 0, 12)];
    double vd = scalar_to_dtype(d, value);
    DTensor *o = case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s value=%.17g (as %s: %.9g)", dtype_name(d), value, dtype_name(d), vd);
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_fill(c->stream, &o->t, value), "wgc_op_fill")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) {
        e[i].kind = EXPECT_SAME;
        e[i].ref = vd;
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}

/* start and step: ordinary and fractional values, and for the integer
 * dtypes starts outside their range ("truncate ... wrapping"). */
static double draw_arange_param(Case *c, WgcDtype d, int is_step) {
    static const double special[] = {2.7, -2.7, 3e9, -3e9, 5e9, 0.0, 1e-3, -1.5, 4294967295.0, 0.1};
    if (rng_chance(&c->rng, 0.6)) {
        if (dtype_is_float(d)) return rng_range(&c->rng, -100, 100);
        return is_step ? rng_int(&c->rng, -7, 7) : rng_int(&c->rng, -1000, 1000);
    }
    double v = special[rng_int(&c->rng, 0, 9)];
    return is_step && fabs(v) > 1e9 ? v / 1e6 : v;
}

void run_arange(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int64_t n = rng_chance(&c->rng, 0.1) ? rng_int(&c->rng, 1000, 70000) : rng_int(&c->rng, 0, 300);
    double start = draw_arange_param(c, d, 0), step = draw_arange_param(c, d, 1);
    int bad_param = rng_chance(&c->rng, 0.05);
    if (bad_param) start = rng_chance(&c->rng, 0.5) ? NAN : INFINITY;
    DTensor *o = case_tensor(c, "out", d, 1, &n, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s start=%.17g step=%.17g", dtype_name(d), start, step);
    case_upload(c);
    WgcStatus st = wgc_op_arange(c->stream, &o->t, start, step);
    if (bad_param) {
        case_expect_status(c, st, WGC_ERROR_INVALID_ARGUMENT, "wgc_op_arange with a non-finite start");
        return;
    }
    if (!case_expect_ok(c, st, "wgc_op_arange")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) {
        if (dtype_is_float(d)) { /* start + f32(i) * step in f32 (fused or not), then rounded to d */
            double s0 = (float)start, s1 = (float)step, prod = (double)i * s1;
            e[i].ref = s0 + prod;
            e[i].tol = TOL_F32_ROUNDED * (fabs(prod) + fabs(e[i].ref)) + tol_ftz(d);
            if (d == WGC_DTYPE_F16) e[i].tol += TOL_F16_RESULT * fabs(e[i].ref);
        } else { /* truncate toward zero, then wrapping arithmetic */
            int64_t s0 = (int64_t)trunc(start), s1 = (int64_t)trunc(step);
            int64_t v = (int64_t)((uint64_t)s0 + (uint64_t)i * (uint64_t)s1);
            e[i].ref = d == WGC_DTYPE_I32 ? wrap_i32(v) : wrap_u32(v);
        }
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}
