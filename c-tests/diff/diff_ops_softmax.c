/* wgc_op_softmax and wgc_op_log_softmax along any axis, against the
 * formula PyTorch evaluates: m = max(row), e = exp(x - m), softmax = e /
 * sum(e), log_softmax = x - m - log(sum(e)). A row with a NaN is all NaN;
 * +inf in a row or a row of -inf gives NaN through inf - inf. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

/* Logical index of element j of the row through `base` along `axis`. */
static size_t row_element(const DTensor *t, int axis, size_t base, size_t j) {
    size_t inner = 1;
    for (int d = (int)t->t.rank - 1; d > axis; d--) inner *= (size_t)t->t.shape[d];
    return base + j * inner;
}

static void run_softmax_kind(Case *c, int log_form) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 1, 8, 3000, 0.05, s);
    int axis = rng_int(&c->rng, 0, r - 1);
    if (rng_chance(&c->rng, 0.4)) axis = r - 1; /* the last axis has the fast kernels */
    if (rng_chance(&c->rng, 0.1)) { /* a long row: the two-pass kernel past 16384 */
        for (int k = 0; k < r; k++) s[k] = 1;
        s[axis] = rng_int(&c->rng, 5000, 40000);
    }
    ValueSpec v = default_values(c, d, ALLOW_ALL | ALLOW_OFFSET);
    DTensor *a = case_tensor(c, "in", d, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, NULL);
    int py_axis = rng_chance(&c->rng, 0.5) ? axis - r : axis;
    case_param(c, "dtype=%s axis=%d values=%s", dtype_name(d), py_axis, value_kind_name(v.kind));
    if (v.kind == VAL_OFFSET) case_param(c, "offset=%.6g", v.offset);
    case_upload(c);
    WgcStatus st = log_form ? wgc_op_log_softmax(c->stream, &a->t, py_axis, &o->t)
                            : wgc_op_softmax(c->stream, &a->t, py_axis, &o->t);
    if (!case_expect_ok(c, st, log_form ? "wgc_op_log_softmax" : "wgc_op_softmax")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    size_t len = (size_t)s[axis], inner = 1;
    for (int k = r - 1; k > axis; k--) inner *= (size_t)s[k];
    for (size_t base = 0; base < a->n; base++) {
        if ((base / inner) % (len ? len : 1) != 0) continue; /* base: the first element of a row */
        double m = -INFINITY, sum = 0;
        int nan = 0;
        for (size_t j = 0; j < len; j++) {
            double x = a->val[row_element(a, axis, base, j)];
            nan |= isnan(x);
            if (x > m) m = x;
        }
        for (size_t j = 0; j < len; j++) sum += exp(a->val[row_element(a, axis, base, j)] - m);
        for (size_t j = 0; j < len; j++) {
            size_t i = row_element(a, axis, base, j);
            double x = a->val[i], dx = fabs(x - m);
            Expect *ei = &e[i];
            if (log_form) {
                ei->ref = nan ? NAN : x - m - log(sum);
                /* ~1e-6 on the result and on log(sum), plus the rounding of x - m */
                ei->tol = TOL_F32_SOFTMAX * (1 + fabs(ei->ref)) + TOL_F32_ROUNDED * (isfinite(dx) ? dx : 0);
            } else {
                ei->ref = nan ? NAN : exp(x - m) / sum;
                /* ~1e-6 relative, plus the rounding of x - m carried through exp */
                ei->tol = (TOL_F32_SOFTMAX + TOL_F32_ROUNDED * (isfinite(dx) ? dx : 0)) * fabs(ei->ref);
            }
            ei->tol += tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(ei->ref) : 0);
        }
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}

void run_softmax(Case *c) { run_softmax_kind(c, 0); }
void run_log_softmax(Case *c) { run_softmax_kind(c, 1); }
