/* wgc_op_conv2d (PyTorch's conv2d: cross-correlation with zero padding,
 * strides, dilation, groups, optional bias) against a double reference.
 * Padding contributes nothing; so that this cannot differ from multiplying
 * padded zeros (0 * inf = NaN), weights carry NaN/inf only without padding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

static size_t idx4(const int64_t *s, int64_t a, int64_t b, int64_t c, int64_t d) {
    return (size_t)(((a * s[1] + b) * s[2] + c) * s[3] + d);
}

static double max_abs_finite(const DTensor *t) {
    double m = 0;
    for (size_t i = 0; t && i < t->n; i++)
        if (isfinite(t->val[i]) && fabs(t->val[i]) > m) m = fabs(t->val[i]);
    return m;
}

void run_conv2d(Case *c) {
    WgcConv2dParams p = {0};
    p.struct_size = sizeof p;
    int64_t groups = rng_int(&c->rng, 1, 3), cpg = rng_int(&c->rng, 1, 4), opg = rng_int(&c->rng, 1, 3);
    if (rng_chance(&c->rng, 0.2)) cpg = 1, opg = rng_int(&c->rng, 1, 2), groups = rng_int(&c->rng, 1, 6); /* depthwise */
    int64_t kh = rng_int(&c->rng, 1, 5), kw = rng_int(&c->rng, 1, 5);
    p.stride_h = (uint32_t)rng_int(&c->rng, 0, 3), p.stride_w = (uint32_t)rng_int(&c->rng, 0, 3);
    p.dilation_h = (uint32_t)rng_int(&c->rng, 0, 2), p.dilation_w = (uint32_t)rng_int(&c->rng, 0, 2);
    p.pad_h = (uint32_t)rng_int(&c->rng, 0, 2), p.pad_w = (uint32_t)rng_int(&c->rng, 0, 2);
    if (rng_chance(&c->rng, 0.2)) { /* 1x1 stride-1 unpadded: the GEMM path */
        kh = kw = 1;
        p.stride_h = p.stride_w = p.pad_h = p.pad_w = 0;
    }
    int64_t s_[4] = {rng_int(&c->rng, 0, 3), groups * cpg, rng_int(&c->rng, 1, 14), rng_int(&c->rng, 1, 14)};
    if (rng_chance(&c->rng, 0.1)) { /* a long sum into few outputs: the split path */
        groups = 1, cpg = rng_int(&c->rng, 16, 64), opg = rng_int(&c->rng, 1, 2);
        s_[0] = 1, s_[1] = cpg, kh = kw = rng_int(&c->rng, 3, 6), s_[2] = s_[3] = kh;
        p.stride_h = p.stride_w = 1, p.pad_h = p.pad_w = 0, p.dilation_h = p.dilation_w = 1;
    }
    int64_t sh = p.stride_h ? p.stride_h : 1, sw = p.stride_w ? p.stride_w : 1;
    int64_t dh = p.dilation_h ? p.dilation_h : 1, dw = p.dilation_w ? p.dilation_w : 1;
    int64_t need_h = dh * (kh - 1) + 1 - 2 * p.pad_h, need_w = dw * (kw - 1) + 1 - 2 * p.pad_w;
    if (s_[2] < need_h) s_[2] = need_h;
    if (s_[3] < need_w) s_[3] = need_w;
    p.groups = (uint32_t)groups;
    int64_t O = groups * opg;
    int64_t ws[4] = {O, cpg, kh, kw}, os[4] = {s_[0], O, (s_[2] + 2 * p.pad_h - dh * (kh - 1) - 1) / sh + 1,
                                              (s_[3] + 2 * p.pad_w - dw * (kw - 1) - 1) / sw + 1};
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    if (v.huge > 1e15) v.huge = 1e15; /* K * max|x| * max|w| within f32 */
    ValueSpec vw = v;
    if (p.pad_h || p.pad_w) vw.no_nan = vw.no_inf = 1;
    DTensor *x = case_tensor(c, "input", d, 4, s_, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *w = case_tensor(c, "weight", d, 4, ws, VIEW_ZERO_STRIDES, &vw, NULL);
    ValueSpec vb = default_values(c, d, 0);
    DTensor *b = rng_chance(&c->rng, 0.5) ? case_tensor(c, "bias", d, 1, &O, VIEW_ZERO_STRIDES, &vb, NULL) : NULL;
    DTensor *o = case_tensor(c, "out", d, 4, os, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s groups=%u kernel=%lldx%lld stride=%u,%u pad=%u,%u dilation=%u,%u bias=%s values=%s",
               dtype_name(d), p.groups,
               (long long)kh, (long long)kw, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w,
               b ? "yes" : "NULL", value_kind_name(v.kind));
    case_upload(c);
    WgcStatus st = wgc_op_conv2d(c->stream, &p, &x->t, &w->t, b ? &b->t : NULL, &o->t);
    if (!case_expect_ok(c, st, "wgc_op_conv2d")) return;
    case_download(c);
    /* The header's bound: the larger of GEMM's worst case (K products of
     * one sign) and the typical growth for independent data. */
    double kk = (double)(cpg * kh * kw);
    double scale = fmax(TOL_F32_GEMM * kk, TOL_F32_CONV * (1 + sqrt(kk))) * max_abs_finite(x) * max_abs_finite(w);
    Expect *e = expect_alloc(o->n);
    int64_t oc[4];
    for (size_t i = 0; i < o->n; i++) {
        unravel(i, 4, os, oc);
        int64_t g = oc[1] / opg;
        double sum = b ? b->val[oc[1]] : 0;
        for (int64_t ci = 0; ci < cpg; ci++)
            for (int64_t a = 0; a < kh; a++)
                for (int64_t q = 0; q < kw; q++) {
                    int64_t ih = oc[2] * sh - p.pad_h + a * dh, iw = oc[3] * sw - p.pad_w + q * dw;
                    if (ih < 0 || iw < 0 || ih >= s_[2] || iw >= s_[3]) continue;
                    sum += x->val[idx4(s_, oc[0], g * cpg + ci, ih, iw)] * w->val[idx4(ws, oc[1], ci, a, q)];
                }
        e[i].ref = sum;
        /* f16: f32 sums, the output rounded once. */
        e[i].tol = (isfinite(scale) ? scale : 0) + TOL_F32_ROUNDED * fabs(sum) + tol_ftz(d) +
                   (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(sum) : 0);
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}
