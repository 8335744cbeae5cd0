/* Unary elementwise operators (wgc_op_unary, wgc_op_leaky_relu,
 * wgc_op_clamp) against double-precision references. NaN propagates
 * through every one of them (relu and clamp included, as in PyTorch). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

#include "op_names.h"

#define PI 3.14159265358979323846

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* The exact value and tolerance of op(x) for a float dtype. */
static Expect unary_float(int op, WgcDtype d, double x) {
    Expect e = {0}; /* EXPECT_CLOSE */
    int abs_tol = 0; /* the header states an absolute bound for this op */
    switch (op) {
    case WGC_UNARY_OP_NEG: e.ref = -x; return e;
    case WGC_UNARY_OP_ABS: e.ref = fabs(x); return e;
    case WGC_UNARY_OP_RELU: e.ref = isnan(x) ? x : x > 0 ? x : 0; return e;
    case WGC_UNARY_OP_EXP: e.ref = exp(x); break;
    case WGC_UNARY_OP_LOG: e.ref = log(x); break;
    case WGC_UNARY_OP_SQRT: e.ref = sqrt(x); break;
    case WGC_UNARY_OP_RSQRT: e.ref = 1.0 / sqrt(x); break;
    case WGC_UNARY_OP_SIN:
    case WGC_UNARY_OP_COS:
        if (isfinite(x) && fabs(x) >= 100) {
            /* The header bounds sin and cos for |x| < 100 only: in [-1, 1]. */
            e.tol = 1;
            return e;
        }
        e.ref = op == WGC_UNARY_OP_SIN ? sin(x) : cos(x);
        abs_tol = 1;
        break;
    case WGC_UNARY_OP_TANH: e.ref = tanh(x); abs_tol = 1; break;
    case WGC_UNARY_OP_SIGMOID: e.ref = sigmoid(x); break;
    case WGC_UNARY_OP_GELU_ERF:
    case WGC_UNARY_OP_GELU_TANH:
        if (x == -INFINITY) {
            /* x * Phi(x) at -inf: the header does not say (0 by the limit, NaN as inf * 0). */
            e.kind = EXPECT_NAN_OR_CLOSE;
            return e;
        }
        e.ref = op == WGC_UNARY_OP_GELU_ERF ? 0.5 * x * (1 + erf(x / sqrt(2.0)))
                                            : 0.5 * x * (1 + tanh(sqrt(2 / PI) * (x + 0.044715 * x * x * x)));
        if (isinf(x)) e.ref = x;
        /* "~1e-6 abs overall" for moderate x; relative for large results. */
        e.tol = TOL_F32_UNARY * fabs(e.ref);
        abs_tol = 1;
        break;
    case WGC_UNARY_OP_SILU:
        if (x == -INFINITY) {
            e.kind = EXPECT_NAN_OR_CLOSE; /* as for gelu */
            return e;
        }
        e.ref = isinf(x) ? x : x * sigmoid(x);
        break;
    case WGC_UNARY_OP_RELU6: e.ref = x < 0 ? 0 : x > 6 ? 6 : x; return e; /* exact; NaN stays */
    case WGC_UNARY_OP_HARDSWISH:
        /* -inf * 0 is NaN, as in PyTorch. */
        e.ref = x >= 3 ? x : x * (x + 3 < 0 ? 0 : x + 3) / 6;
        abs_tol = 1; /* near -3 the result is tiny */
        break;
    default: NO_REFERENCE_FOR("unary", unary_op_name(op));
    }
    if (d == WGC_DTYPE_F16) e.tol = TOL_F16_UNARY + TOL_F16_UNARY * fabs(e.ref);
    else if (abs_tol) e.tol += TOL_F32_UNARY;
    else e.tol = TOL_F32_UNARY * fabs(e.ref);
    e.tol += tol_ftz(d);
    return e;
}

static Expect unary_i32(int op, double x) {
    Expect e = {0}; /* EXPECT_CLOSE */
    int64_t v = (int64_t)x;
    e.ref = op == WGC_UNARY_OP_NEG ? wrap_i32(-v) : op == WGC_UNARY_OP_ABS ? wrap_i32(v < 0 ? -v : v) : (v > 0 ? x : 0);
    return e;
}

void run_unary(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 3); /* f32, f16, i32 */
    static const int int_ops[] = {WGC_UNARY_OP_NEG, WGC_UNARY_OP_ABS, WGC_UNARY_OP_RELU};
    const int n_int_ops = (int)(sizeof int_ops / sizeof int_ops[0]);
    int op = d == WGC_DTYPE_I32 ? int_ops[rng_int(&c->rng, 0, n_int_ops - 1)] : rng_int(&c->rng, 0, WGC_NUM_UNARY_OPS - 1);
    int positive = op == WGC_UNARY_OP_LOG || op == WGC_UNARY_OP_SQRT || op == WGC_UNARY_OP_RSQRT;
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, rng_chance(&c->rng, 0.1) ? 70000 : 3000, 0.05, s);
    ValueSpec v = dtype_is_float(d) ? draw_values(c, d, positive ? -1 : -6, positive ? 10 : 6, ALLOW_ALL)
                                    : default_values(c, d, ALLOW_ALL);
    int in_place = rng_chance(&c->rng, 0.15);
    DTensor *a = case_tensor(c, "in", d, r, s, in_place ? VIEW_ANY : VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = in_place ? case_in_place(c, "out", a) : case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, rng_chance(&c->rng, 0.1) ? a : NULL);
    case_param(c, "op=%s dtype=%s values=%s%s", unary_op_name(op), dtype_name(d), value_kind_name(v.kind), in_place ? " in-place" : "");
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_unary(c->stream, (uint32_t)op, &a->t, &o->t), "wgc_op_unary")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) e[i] = d == WGC_DTYPE_I32 ? unary_i32(op, a->val[i]) : unary_float(op, d, a->val[i]);
    c->user = o;
    case_check(c, o, e, explain_inputs);
    free(e);
    case_check_untouched(c);
}

void run_leaky_relu(Case *c) {
    static const float slopes[] = {0.01f, 0.2f, -0.5f, 0.0f, 1.5f, 1e-30f};
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, 3000, 0.05, s);
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    float slope = slopes[rng_int(&c->rng, 0, 5)];
    int in_place = rng_chance(&c->rng, 0.15);
    DTensor *a = case_tensor(c, "in", d, r, s, in_place ? VIEW_ANY : VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = in_place ? case_in_place(c, "out", a) : case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s slope=%.9g values=%s%s", dtype_name(d), slope, value_kind_name(v.kind), in_place ? " in-place" : "");
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_leaky_relu(c->stream, &a->t, slope, &o->t), "wgc_op_leaky_relu")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) {
        double x = a->val[i];
        e[i].ref = x >= 0 ? x : x * slope; /* NaN: NaN * slope */
        /* One rounding in f32; f16 also rounds the slope to f16 (unspecified). */
        e[i].tol = (d == WGC_DTYPE_F16 ? TOL_F16_ELEMENTWISE : TOL_F32_ROUNDED) * fabs(e[i].ref) + tol_ftz(d);
    }
    c->user = o;
    case_check(c, o, e, explain_inputs);
    free(e);
    case_check_untouched(c);
}

/* Bounds: ordinary values, infinities, bounds outside the dtype's range
 * (converted as binary_scalar says), lo > hi, and f16's once-rounded probe. */
static double draw_bound(Case *c, WgcDtype d) {
    static const double special[] = {INFINITY, -INFINITY, 1e30, -1e30, 3e9, -3e9, 1.00048828125 + 9.313225746154785e-10, 2.5};
    if (rng_chance(&c->rng, 0.7)) return dtype_is_float(d) ? rng_range(&c->rng, -4, 4) : rng_int(&c->rng, -1000, 1000);
    return special[rng_int(&c->rng, 0, 7)];
}

void run_clamp(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, 3000, 0.05, s);
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    double lo = draw_bound(c, d), hi = draw_bound(c, d);
    if (lo > hi && rng_chance(&c->rng, 0.7)) { /* mostly lo <= hi; sometimes lo > hi (gives hi) */
        double t = lo;
        lo = hi;
        hi = t;
    }
    int nan_bound = rng_chance(&c->rng, 0.05);
    if (nan_bound) hi = NAN;
    int in_place = rng_chance(&c->rng, 0.15);
    DTensor *a = case_tensor(c, "in", d, r, s, in_place ? VIEW_ANY : VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = in_place ? case_in_place(c, "out", a) : case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, NULL);
    double lod = scalar_to_dtype(d, lo), hid = scalar_to_dtype(d, hi);
    case_param(c, "dtype=%s lo=%.17g hi=%.17g (as %s: %.9g, %.9g) values=%s%s", dtype_name(d), lo, hi, dtype_name(d),
               lod, hid, value_kind_name(v.kind), in_place ? " in-place" : "");
    case_upload(c);
    WgcStatus st = wgc_op_clamp(c->stream, &a->t, lo, hi, &o->t);
    if (nan_bound) { /* documented: NaN bounds are an invalid argument */
        case_expect_status(c, st, WGC_ERROR_INVALID_ARGUMENT, "wgc_op_clamp with a NaN bound");
        return;
    }
    if (!case_expect_ok(c, st, "wgc_op_clamp")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) {
        double x = a->val[i];
        e[i].ref = isnan(x) ? x : fmin(fmax(x, lod), hid); /* lo > hi gives hi */
    }
    c->user = o;
    case_check(c, o, e, explain_inputs);
    free(e);
    case_check_untouched(c);
}
