/* Binary elementwise operators (wgc_op_binary, wgc_op_binary_scalar,
 * wgc_op_fma, wgc_op_where) against double-precision references.
 * Semantics: IEEE arithmetic, NaN propagating through maximum and minimum
 * (PyTorch), ne(NaN, x) true, pow as C99 pow, integers wrapping with
 * x / 0 = 0 and INT32_MIN / -1 = INT32_MIN as the header documents. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

#include "op_names.h"

static int is_comparison(int op) { return op >= WGC_BINARY_OP_EQ; }

static double int_binary(int op, WgcDtype d, double x, double y) {
    int64_t a = (int64_t)x, b = (int64_t)y;
    int i32 = d == WGC_DTYPE_I32;
    switch (op) {
    case WGC_BINARY_OP_ADD: return i32 ? wrap_i32(a + b) : wrap_u32(a + b);
    case WGC_BINARY_OP_SUB: return i32 ? wrap_i32(a - b) : wrap_u32(a - b);
    case WGC_BINARY_OP_MUL: return i32 ? wrap_i32((int64_t)((uint64_t)a * (uint64_t)b)) : wrap_u32((int64_t)((uint64_t)a * (uint64_t)b));
    case WGC_BINARY_OP_DIV:
        if (b == 0) return 0;
        if (i32 && a == INT32_MIN && b == -1) return INT32_MIN;
        return (double)(a / b);
    default: NO_REFERENCE_FOR("integer binary", binary_op_name(op));
    }
}

/* The exact result of x OP y for dtype d (inputs already in d) and its tolerance. */
static Expect binary_expect(int op, WgcDtype d, double x, double y) {
    Expect e = {0}; /* EXPECT_CLOSE */
    switch (op) {
    case WGC_BINARY_OP_EQ: e.ref = x == y; return e;
    case WGC_BINARY_OP_NE: e.ref = x != y; return e; /* true when either is NaN */
    case WGC_BINARY_OP_LT: e.ref = x < y; return e;
    case WGC_BINARY_OP_LE: e.ref = x <= y; return e;
    case WGC_BINARY_OP_GT: e.ref = x > y; return e;
    case WGC_BINARY_OP_GE: e.ref = x >= y; return e;
    case WGC_BINARY_OP_MAXIMUM:
    case WGC_BINARY_OP_MINIMUM:
        if (isnan(x) || isnan(y)) e.ref = NAN;
        else e.ref = op == WGC_BINARY_OP_MAXIMUM ? fmax(x, y) : fmin(x, y);
        return e;
    default: break;
    }
    if (!dtype_is_float(d)) {
        e.ref = int_binary(op, d, x, y);
        return e;
    }
    double rel = d == WGC_DTYPE_F16 ? TOL_F16_ELEMENTWISE : op == WGC_BINARY_OP_DIV ? TOL_F32_DIV : TOL_F32_ROUNDED;
    switch (op) {
    case WGC_BINARY_OP_ADD: e.ref = x + y; break;
    case WGC_BINARY_OP_SUB: e.ref = x - y; break;
    case WGC_BINARY_OP_MUL: e.ref = x * y; break;
    case WGC_BINARY_OP_DIV: e.ref = x / y; break;
    case WGC_BINARY_OP_POW: e.ref = pow(x, y); break;
    default: NO_REFERENCE_FOR("binary", binary_op_name(op));
    }
    e.tol = rel * fabs(e.ref) + tol_ftz(d);
    if (op == WGC_BINARY_OP_POW) e.tol += tol_pow_f32(e.ref);
    return e;
}

static int draw_binary_op(Case *c, WgcDtype d) {
    for (;;) {
        int op = rng_int(&c->rng, 0, WGC_NUM_BINARY_OPS - 1);
        if (op != WGC_BINARY_OP_POW || dtype_is_float(d)) return op;
    }
}

/* Inputs for op: pow draws bases from [0, 3] half the time (negative bases
 * with fractional exponents are NaN) and exponents from [-3, 3]. */
static ValueSpec operand_values(Case *c, int op, WgcDtype d, int which) {
    if (op == WGC_BINARY_OP_POW) {
        double lo = which == 0 && rng_chance(&c->rng, 0.5) ? 0 : -3;
        return draw_values(c, d, lo, 3, ALLOW_ALL);
    }
    return default_values(c, d, ALLOW_ALL);
}

void run_binary(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int op = draw_binary_op(c, d);
    int64_t so[WGC_MAX_RANK], s[2][WGC_MAX_RANK];
    int ro = draw_shape(&c->rng, 0, 8, rng_chance(&c->rng, 0.1) ? 70000 : 3000, 0.05, so), r[2];
    int in_place = !is_comparison(op) && rng_chance(&c->rng, 0.15);
    for (int k = 0; k < 2; k++) r[k] = draw_broadcast_shape(&c->rng, ro, so, s[k]);
    if (in_place) { /* out is a's very view */
        r[0] = ro;
        for (int k = 0; k < ro; k++) s[0][k] = so[k];
    }
    complete_broadcast(&c->rng, 2, r, s, ro, so);
    int ra = r[0], rb = r[1];
    const int64_t *sa = s[0], *sb = s[1];
    ValueSpec va = operand_values(c, op, d, 0), vb = rng_chance(&c->rng, 0.5) ? va : operand_values(c, op, d, 1);
    DTensor *a = case_tensor(c, "a", d, ra, sa, in_place ? VIEW_ANY : VIEW_ZERO_STRIDES, &va, NULL);
    DTensor *b = case_tensor(c, "b", d, rb, sb, VIEW_ZERO_STRIDES, &vb, NULL);
    WgcDtype od = is_comparison(op) ? WGC_DTYPE_U32 : d;
    int share = dtype_size(od) == dtype_size(d) && rng_chance(&c->rng, 0.1);
    DTensor *o = in_place ? case_in_place(c, "out", a) : case_tensor(c, "out", od, ro, so, VIEW_ANY, NULL, share ? a : NULL);
    case_param(c, "op=%s dtype=%s values=%s/%s%s", binary_op_name(op), dtype_name(d), value_kind_name(va.kind),
               value_kind_name(vb.kind), in_place ? " in-place" : share ? " out-shares-a's-buffer" : "");
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_binary(c->stream, (uint32_t)op, &a->t, &b->t, &o->t), "wgc_op_binary")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++)
        e[i] = binary_expect(op, d, a->val[broadcast_index(i, o, a)], b->val[broadcast_index(i, o, b)]);
    c->user = o;
    case_check(c, o, e, explain_inputs);
    free(e);
    case_check_untouched(c);
}

/* Scalars: ordinary values, specials, values outside the dtype's range, and
 * 1 + 2^-11 + 2^-30, which rounds to 1.000977 in f16 only if rounded once. */
static double draw_scalar(Case *c, WgcDtype d) {
    static const double floats[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e-30, 1.00048828125 + 9.313225746154785e-10, 0.5, 70000.0};
    static const double ints[] = {2.7, -2.7, 3e9, -3e9, 1e20, NAN, -2147483648.0, 4294967295.0, -1, 2147483647.5};
    if (rng_chance(&c->rng, 0.5)) return dtype_is_float(d) ? rng_range(&c->rng, -4, 4) : rng_int(&c->rng, -20, 20);
    return dtype_is_float(d) ? floats[rng_int(&c->rng, 0, 9)] : ints[rng_int(&c->rng, 0, 9)];
}

typedef struct ScalarCall {
    const DTensor *a;
    double scalar;
} ScalarCall;

static void explain_scalar(Case *c, size_t i, char *buf, size_t len) {
    const ScalarCall *call = (const ScalarCall *)c->user;
    snprintf(buf, len, "a=%.9g scalar=%.17g", call->a->val[i], call->scalar);
}

void run_binary_scalar(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int op = draw_binary_op(c, d);
    int64_t so[WGC_MAX_RANK];
    int ro = draw_shape(&c->rng, 0, 8, 3000, 0.05, so);
    int in_place = !is_comparison(op) && rng_chance(&c->rng, 0.15);
    ValueSpec va = operand_values(c, op, d, 0);
    DTensor *a = case_tensor(c, "a", d, ro, so, in_place ? VIEW_ANY : VIEW_ZERO_STRIDES, &va, NULL);
    WgcDtype od = is_comparison(op) ? WGC_DTYPE_U32 : d;
    DTensor *o = in_place ? case_in_place(c, "out", a) : case_tensor(c, "out", od, ro, so, VIEW_ANY, NULL, NULL);
    double s = draw_scalar(c, d), sd = scalar_to_dtype(d, s);
    case_param(c, "op=%s dtype=%s scalar=%.17g (as %s: %.9g) values=%s%s", binary_op_name(op), dtype_name(d), s,
               dtype_name(d), sd, value_kind_name(va.kind), in_place ? " in-place" : "");
    case_upload(c);
    WgcStatus st = wgc_op_binary_scalar(c->stream, (uint32_t)op, &a->t, s, &o->t);
    if (!case_expect_ok(c, st, "wgc_op_binary_scalar")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) e[i] = binary_expect(op, d, a->val[i], sd);
    ScalarCall call = {a, s};
    c->user = &call;
    case_check(c, o, e, explain_scalar);
    free(e);
    case_check_untouched(c);
}

/* a * b + c: floats fused where the adapter fuses, so the product may be
 * rounded once more (tolerance on |a b| as well as on the result). */
static Expect fma_expect(WgcDtype d, double a, double b, double x) {
    Expect e = {0}; /* EXPECT_CLOSE */
    if (d == WGC_DTYPE_I32 || d == WGC_DTYPE_U32) {
        /* In unsigned arithmetic: it wraps as the library's integers do. */
        int64_t p = (int64_t)((uint64_t)(int64_t)a * (uint64_t)(int64_t)b + (uint64_t)(int64_t)x);
        e.ref = d == WGC_DTYPE_I32 ? wrap_i32(p) : wrap_u32(p);
        return e;
    }
    e.ref = fma(a, b, x);
    double rel = d == WGC_DTYPE_F16 ? TOL_F16_ELEMENTWISE : TOL_F32_ROUNDED;
    if (isfinite(a * b)) e.tol = rel * (fabs(e.ref) + fabs(a * b)) + tol_ftz(d);
    double product = dtype_round(d, a * b);
    if (isinf(product) && !isinf(a) && !isinf(b)) { /* unfused, the product alone overflows */
        e.has_alt = 1;
        e.alt = product + x;
    }
    return e;
}

void run_fma(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int64_t so[WGC_MAX_RANK], s[3][WGC_MAX_RANK];
    int ro = draw_shape(&c->rng, 0, 8, 3000, 0.05, so), r[3];
    for (int k = 0; k < 3; k++) r[k] = draw_broadcast_shape(&c->rng, ro, so, s[k]);
    complete_broadcast(&c->rng, 3, r, s, ro, so);
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    DTensor *a = case_tensor(c, "a", d, r[0], s[0], VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *b = case_tensor(c, "b", d, r[1], s[1], VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *x = case_tensor(c, "c", d, r[2], s[2], VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, ro, so, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s values=%s", dtype_name(d), value_kind_name(v.kind));
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_fma(c->stream, &a->t, &b->t, &x->t, &o->t), "wgc_op_fma")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++)
        e[i] = fma_expect(d, a->val[broadcast_index(i, o, a)], b->val[broadcast_index(i, o, b)],
                          x->val[broadcast_index(i, o, x)]);
    c->user = o;
    case_check(c, o, e, explain_inputs);
    free(e);
    case_check_untouched(c);
}

void run_where(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int64_t so[WGC_MAX_RANK], s[3][WGC_MAX_RANK];
    int ro = draw_shape(&c->rng, 0, 8, 3000, 0.05, so), r[3];
    for (int k = 0; k < 3; k++) r[k] = draw_broadcast_shape(&c->rng, ro, so, s[k]);
    complete_broadcast(&c->rng, 3, r, s, ro, so);
    ValueSpec vm = draw_values(c, WGC_DTYPE_U32, 0, 1, ALLOW_WIDE); /* 0/1, or any 32-bit value */
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    DTensor *m = case_tensor(c, "mask", WGC_DTYPE_U32, r[0], s[0], VIEW_ZERO_STRIDES, &vm, NULL);
    DTensor *a = case_tensor(c, "a", d, r[1], s[1], VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *b = case_tensor(c, "b", d, r[2], s[2], VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, ro, so, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s values=%s mask=%s", dtype_name(d), value_kind_name(v.kind), value_kind_name(vm.kind));
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_where(c->stream, &m->t, &a->t, &b->t, &o->t), "wgc_op_where")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) {
        e[i].kind = EXPECT_SAME; /* a selection moves values unchanged */
        e[i].ref = m->val[broadcast_index(i, o, m)] != 0 ? a->val[broadcast_index(i, o, a)] : b->val[broadcast_index(i, o, b)];
    }
    c->user = o;
    case_check(c, o, e, explain_inputs);
    free(e);
    case_check_untouched(c);
}

/* An elementwise expression (wgc_expr_*, wgc_op_expr) of two outputs:
 * a OP b, and a itself broadcast to the output shape (a copy), over random
 * shapes, broadcasts, views and dtypes: the fused kernel's indexing and
 * layout classes against the same references as wgc_op_binary. */
void run_expr(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_ALL, 4);
    int op = draw_binary_op(c, d);
    int64_t so[WGC_MAX_RANK], s[2][WGC_MAX_RANK];
    int ro = draw_shape(&c->rng, 0, 8, 3000, 0.05, so), r[2];
    for (int k = 0; k < 2; k++) r[k] = draw_broadcast_shape(&c->rng, ro, so, s[k]);
    complete_broadcast(&c->rng, 2, r, s, ro, so);
    ValueSpec va = operand_values(c, op, d, 0), vb = operand_values(c, op, d, 1);
    DTensor *a = case_tensor(c, "a", d, r[0], s[0], VIEW_ZERO_STRIDES, &va, NULL);
    DTensor *b = case_tensor(c, "b", d, r[1], s[1], VIEW_ZERO_STRIDES, &vb, NULL);
    WgcDtype od = is_comparison(op) ? WGC_DTYPE_U32 : d;
    DTensor *o = case_tensor(c, "out", od, ro, so, VIEW_ANY, NULL, NULL);
    DTensor *o2 = case_tensor(c, "a_out", d, ro, so, VIEW_ANY, NULL, NULL);
    case_param(c, "expr=%s(a, b), a dtype=%s values=%s/%s", binary_op_name(op), dtype_name(d), value_kind_name(va.kind),
               value_kind_name(vb.kind));
    case_upload(c);
    WgcExpr *e = NULL;
    uint32_t na = 0, nb = 0, ny = 0;
    WgcStatus st = wgc_expr_create(&e);
    if (st == WGC_OK) st = wgc_expr_input(e, (uint32_t)d, &na);
    if (st == WGC_OK) st = wgc_expr_input(e, (uint32_t)d, &nb);
    if (st == WGC_OK) st = wgc_expr_binary(e, (uint32_t)op, na, nb, &ny);
    if (st == WGC_OK) st = wgc_expr_output(e, ny);
    if (st == WGC_OK) st = wgc_expr_output(e, na);
    WgcTensor ins[2] = {a->t, b->t}, outs[2] = {o->t, o2->t};
    if (st == WGC_OK) st = wgc_op_expr(c->stream, e, ins, 2, outs, 2, NULL, 0);
    wgc_expr_release(e);
    if (!case_expect_ok(c, st, "wgc_op_expr")) return;
    case_download(c);
    Expect *ex = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++)
        ex[i] = binary_expect(op, d, a->val[broadcast_index(i, o, a)], b->val[broadcast_index(i, o, b)]);
    c->user = o;
    case_check(c, o, ex, explain_inputs);
    for (size_t i = 0; i < o2->n; i++) {
        Expect copy = {0};
        copy.ref = a->val[broadcast_index(i, o2, a)];
        ex[i] = copy;
    }
    case_check(c, o2, ex, NULL);
    free(ex);
    case_check_untouched(c);
}
