/* wgc_op_layer_norm, wgc_op_rms_norm and wgc_op_batch_norm against their
 * formulas in double. A NaN or inf in a normalized row makes the row NaN
 * (through the mean or inf - inf), as in PyTorch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

static const float EPS[] = {1e-5f, 1e-3f, 0.1f, 1e-12f};

/* Magnitudes in [1e-15, 1e15]: then no product of the formula's factors
 * (x - mean, 1 / sqrt(var + eps), weight) leaves f32's range part-way, in
 * whatever order the kernel multiplies them; the header does not say
 * what such an overflow or underflow gives. */
static void in_range(ValueSpec *v) {
    v->huge = fmin(v->huge, 1e15);
    v->tiny = fmax(v->tiny, 1e-15);
}

/* Optional weight or bias of `shape`: NULL a third of the time. */
static DTensor *maybe_param(Case *c, const char *name, WgcDtype d, int rank, const int64_t *shape, double lo, double hi) {
    if (rng_chance(&c->rng, 0.3)) return NULL;
    ValueSpec v = draw_values(c, d, lo, hi, ALLOW_SPECIAL | ALLOW_NAN);
    in_range(&v);
    return case_tensor(c, name, d, rank, shape, VIEW_ZERO_STRIDES, &v, NULL);
}

static void run_row_norm(Case *c, int rms) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 1, 8, 3000, 0.05, s);
    uint32_t k = (uint32_t)rng_int(&c->rng, 1, r);
    if (rng_chance(&c->rng, 0.1)) { /* long rows: past the 16384 read-once limit */
        for (int j = 0; j < r; j++) s[j] = 1;
        s[r - 1] = rng_int(&c->rng, 5000, 40000);
        k = 1;
    }
    ValueSpec v = default_values(c, d, ALLOW_ALL | ALLOW_OFFSET);
    in_range(&v);
    DTensor *a = case_tensor(c, "in", d, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    const int64_t *ps = s + (r - (int)k);
    DTensor *w = maybe_param(c, "weight", d, (int)k, ps, -2, 2);
    DTensor *b = rms ? NULL : maybe_param(c, "bias", d, (int)k, ps, -2, 2);
    DTensor *o = case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, NULL);
    float eps = EPS[rng_int(&c->rng, 0, 3)];
    case_param(c, "dtype=%s normalized_dims=%u eps=%g weight=%s bias=%s values=%s", dtype_name(d), k, eps,
               w ? "yes" : "NULL", b ? "yes" : "NULL", value_kind_name(v.kind));
    if (v.kind == VAL_OFFSET) case_param(c, "offset=%.6g", v.offset);
    case_upload(c);
    WgcStatus st = rms ? wgc_op_rms_norm(c->stream, &a->t, w ? &w->t : NULL, k, eps, &o->t)
                       : wgc_op_layer_norm(c->stream, &a->t, w ? &w->t : NULL, b ? &b->t : NULL, k, eps, &o->t);
    if (!case_expect_ok(c, st, rms ? "wgc_op_rms_norm" : "wgc_op_layer_norm")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    size_t len = numel_of((int)k, ps);
    for (size_t row = 0; len && row < a->n / len; row++) {
        const double *x = a->val + row * len;
        double mean = 0, var = 0;
        for (size_t j = 0; j < len; j++) mean += rms ? x[j] * x[j] : x[j];
        mean /= (double)len;
        if (!rms) {
            for (size_t j = 0; j < len; j++) var += (x[j] - mean) * (x[j] - mean);
            var /= (double)len;
        }
        double rstd = 1 / sqrt((rms ? mean : var) + eps);
        for (size_t j = 0; j < len; j++) {
            double wj = w ? w->val[j] : 1, bj = b ? b->val[j] : 0;
            double y = rms ? x[j] * rstd : (x[j] - mean) * rstd;
            Expect *ej = &e[row * len + j];
            ej->ref = y * wj + bj;
            /* ~1e-5 of the normalized scale; layer norm also loses the f32
             * rounding of the mean (the sum tolerance) relative to the spread. */
            double cond = rms ? 0 : TOL_F32_SUM * fabs(mean) * rstd;
            ej->tol = fabs(wj) * (TOL_F32_NORM * (fabs(y) + (rms ? 0 : 1)) + cond) + TOL_F32_ROUNDED * fabs(ej->ref);
            if (!isfinite(ej->tol)) ej->tol = 0;
            ej->tol += tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(ej->ref) : 0);
        }
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}

void run_layer_norm(Case *c) { run_row_norm(c, 0); }
void run_rms_norm(Case *c) { run_row_norm(c, 1); }

void run_batch_norm(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 2, 8, 3000, 0.05, s);
    int64_t ch = s[1];
    ValueSpec v = default_values(c, d, ALLOW_ALL | ALLOW_OFFSET);
    in_range(&v);
    DTensor *a = case_tensor(c, "in", d, r, s, VIEW_ZERO_STRIDES, &v, NULL);
    ValueSpec vm = default_values(c, d, ALLOW_SPECIAL | ALLOW_NAN);
    in_range(&vm);
    ValueSpec vv = draw_values(c, d, 0, 4, 0);
    DTensor *rm = case_tensor(c, "running_mean", d, 1, &ch, VIEW_ZERO_STRIDES, &vm, NULL);
    DTensor *rv = case_tensor(c, "running_var", d, 1, &ch, VIEW_ZERO_STRIDES, &vv, NULL);
    for (int64_t j = 0; j < ch; j++) /* INTEGERS may draw negatives: variances are >= 0 */
        if (rv->val[j] < 0) case_set(c, rv, (size_t)j, -rv->val[j]);
    DTensor *w = maybe_param(c, "weight", d, 1, &ch, -2, 2);
    DTensor *b = maybe_param(c, "bias", d, 1, &ch, -2, 2);
    DTensor *o = case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, NULL);
    float eps = EPS[rng_int(&c->rng, 0, 2)];
    case_param(c, "dtype=%s eps=%g weight=%s bias=%s values=%s", dtype_name(d), eps, w ? "yes" : "NULL",
               b ? "yes" : "NULL", value_kind_name(v.kind));
    case_upload(c);
    WgcStatus st = wgc_op_batch_norm(c->stream, &a->t, &rm->t, &rv->t, w ? &w->t : NULL, b ? &b->t : NULL, eps, &o->t);
    if (!case_expect_ok(c, st, "wgc_op_batch_norm")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    int64_t coord[WGC_MAX_RANK];
    for (size_t i = 0; i < o->n; i++) {
        unravel(i, r, s, coord);
        size_t k = (size_t)coord[1];
        double x = a->val[i], inv = 1 / sqrt(rv->val[k] + eps), wk = w ? w->val[k] : 1, bk = b ? b->val[k] : 0;
        e[i].ref = (x - rm->val[k]) * inv * wk + bk;
        /* ~1e-6 relative to the terms (x - mean has no relative bound of its own) */
        e[i].tol = TOL_F32_BATCH_NORM * ((fabs(x) + fabs(rm->val[k])) * inv * fabs(wk) + fabs(bk) + fabs(e[i].ref));
        if (!isfinite(e[i].tol)) e[i].tol = 0;
        e[i].tol += tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(e[i].ref) : 0);
    }
    c->user = o;
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}
