/* wgc_op_gemm_epilogue against a double reference: alpha * op(a) op(b),
 * then a column scale and bias, a residual before or after a random
 * activation, over random sizes, transposes and views (zero strides
 * included for every input), f32 and f16, with NaN and signed zeros among
 * the values (no infinities: an inf product meets the activations' edges,
 * which test_gemm_epilogue covers case by case). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

static double activate(uint32_t act, double x) {
    if (isnan(x)) return x;
    switch (act) {
    case WGC_ACTIVATION_RELU: return x > 0 ? x : 0.0;
    case WGC_ACTIVATION_RELU6: return x < 0 ? 0.0 : (x > 6 ? 6.0 : x);
    case WGC_ACTIVATION_HARDSWISH: return x >= 3 ? x : x * (x + 3 > 0 ? x + 3 : 0.0) / 6;
    case WGC_ACTIVATION_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case WGC_ACTIVATION_GELU_TANH: return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case WGC_ACTIVATION_SILU: return x / (1 + exp(-x));
    case WGC_ACTIVATION_TANH: return tanh(x);
    default: return x;
    }
}

static int64_t dim(Case *c) {
    double u = rng_unit(&c->rng);
    return u < 0.1 ? 1 : u < 0.8 ? rng_int(&c->rng, 2, 40) : rng_int(&c->rng, 41, 140);
}

static double max_finite(const DTensor *t) {
    double m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (isfinite(t->val[i]) && fabs(t->val[i]) > m) m = fabs(t->val[i]);
    return m;
}

void run_gemm_epilogue(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    WgcDtype od = d == WGC_DTYPE_F16 && rng_chance(&c->rng, 0.6) ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
    int64_t m = dim(c), n = dim(c), k = dim(c), batch = rng_chance(&c->rng, 0.3) ? rng_int(&c->rng, 2, 3) : 1;
    int ta = rng_chance(&c->rng, 0.3), tb = rng_chance(&c->rng, 0.5);
    uint32_t act = (uint32_t)rng_int(&c->rng, 0, WGC_NUM_ACTIVATIONS - 1);
    int has_bias = rng_chance(&c->rng, 0.7), has_scale = rng_chance(&c->rng, 0.4), has_res = rng_chance(&c->rng, 0.5);
    int after = rng_chance(&c->rng, 0.5);
    static const float alphas[] = {1.0f, -0.5f, 2.25f};
    float alpha = alphas[rng_int(&c->rng, 0, 2)];
    int r = batch > 1 ? 3 : 2;
    int64_t sa[3] = {batch, ta ? k : m, ta ? m : k}, sb[3] = {batch, tb ? n : k, tb ? k : n}, sc[3] = {batch, m, n};
    int64_t *pa = sa + (3 - r), *pb = sb + (3 - r), *pc = sc + (3 - r);
    ValueSpec v = draw_values(c, d, -1, 1, ALLOW_SPECIAL | ALLOW_NAN);
    ValueSpec vo = draw_values(c, od, -1, 1, ALLOW_SPECIAL | ALLOW_NAN);
    ValueSpec vs = draw_values(c, od, 0.5, 2, 0);
    /* Magnitudes that keep every product, and the activations' own
     * arithmetic (gelu_tanh's x^3), well inside f32. */
    if (v.huge > 30) v.huge = 30;
    if (vo.huge > 30) vo.huge = 30;
    DTensor *a = case_tensor(c, "a", d, r, pa, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *b = case_tensor(c, "b", d, r, pb, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *bias = has_bias ? case_tensor(c, "bias", od, 1, &n, VIEW_ZERO_STRIDES, &vo, NULL) : NULL;
    DTensor *scale = has_scale ? case_tensor(c, "scale", od, 1, &n, VIEW_ZERO_STRIDES, &vs, NULL) : NULL;
    DTensor *res = has_res ? case_tensor(c, "residual", od, r, pc, VIEW_ZERO_STRIDES, &vo, NULL) : NULL;
    DTensor *out = case_tensor(c, "c", od, r, pc, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s->%s batch=%lld M=%lld N=%lld K=%lld ta=%d tb=%d alpha=%g act=%u bias=%d scale=%d residual=%d after=%d",
               dtype_name(d), dtype_name(od), (long long)batch, (long long)m, (long long)n, (long long)k, ta, tb,
               alpha, act, has_bias, has_scale, has_res, after);
    case_upload(c);
    WgcGemmEpilogueParams p = {sizeof p, alpha, (uint32_t)ta, (uint32_t)tb, act, (uint32_t)after};
    WgcStatus st = wgc_op_gemm_epilogue(c->stream, &p, &a->t, &b->t, bias ? &bias->t : NULL, scale ? &scale->t : NULL,
                                        res ? &res->t : NULL, &out->t);
    if (!case_expect_ok(c, st, "wgc_op_gemm_epilogue")) return;
    case_download(c);
    double ma = max_finite(a), mb = max_finite(b), ms = scale ? max_finite(scale) : 1;
    Expect *e = expect_alloc(out->n);
    for (size_t i = 0; i < out->n; i++) {
        int64_t bi = (int64_t)i / (m * n), row = ((int64_t)i / n) % m, col = (int64_t)i % n;
        double sum = 0;
        for (int64_t q = 0; q < k; q++) {
            size_t ai = (size_t)((bi * pa[r - 2] + (ta ? q : row)) * pa[r - 1] + (ta ? row : q));
            size_t bj = (size_t)((bi * pb[r - 2] + (tb ? col : q)) * pb[r - 1] + (tb ? q : col));
            sum += a->val[ai] * b->val[bj];
        }
        double y = (double)alpha * sum, terms = fabs(y);
        if (scale) y *= scale->val[col], terms *= fabs(scale->val[col]);
        if (bias) y += bias->val[col], terms += fabs(bias->val[col]);
        double rv = res ? res->val[i] : 0.0;
        if (res) terms += fabs(rv);
        if (!after) y += rv;
        y = activate(act, y);
        if (after) y += rv;
        e[i].ref = y;
        /* The product's bound (wgc_op_gemm's) through the scale and an
         * activation of slope at most 1.2, the f32 roundings of the
         * epilogue's terms, and the activations' own error (2e-6 relative). */
        double tol = 1.2 * (TOL_F32_GEMM * (double)k * ma * mb * fabs(alpha) * ms + 4 * TOL_F32_ROUNDED * terms);
        e[i].tol = tol + 2e-6 * (terms + fabs(y)) + tol_ftz(od) + (od == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(y) : 0);
        if (!isfinite(e[i].tol)) e[i].tol = 0;
    }
    case_check(c, out, e, NULL);
    free(e);
    case_check_untouched(c);
}
