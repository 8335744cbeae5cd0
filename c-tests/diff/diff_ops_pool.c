/* wgc_op_max_pool2d, wgc_op_avg_pool2d and wgc_op_global_avg_pool2d over
 * NCHW views against double references: padding is -inf for max and zeros
 * for average pooling; NaN in a window gives NaN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

static size_t idx4(const int64_t *s, int64_t a, int64_t b, int64_t c, int64_t d) {
    return (size_t)(((a * s[1] + b) * s[2] + c) * s[3] + d);
}

/* Average pooling sums in f32: magnitudes kept so the sums stay finite (the
 * header does not say what an overflowing sum gives). */
static ValueSpec pool_values(Case *c, WgcDtype d, double window) {
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    v.huge = dtype_max(d) / (4 * window);
    return v;
}

static void run_pool(Case *c, int avg) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    WgcPool2dParams p = {0};
    p.struct_size = sizeof p;
    p.kernel_h = (uint32_t)rng_int(&c->rng, 1, 4), p.kernel_w = (uint32_t)rng_int(&c->rng, 1, 4);
    p.stride_h = (uint32_t)rng_int(&c->rng, 0, 3), p.stride_w = (uint32_t)rng_int(&c->rng, 0, 3);
    p.pad_h = (uint32_t)rng_int(&c->rng, 0, (int)p.kernel_h / 2), p.pad_w = (uint32_t)rng_int(&c->rng, 0, (int)p.kernel_w / 2);
    p.count_include_pad = (uint32_t)rng_chance(&c->rng, 0.5);
    int64_t s[4] = {rng_int(&c->rng, 0, 3), rng_int(&c->rng, 1, 5), rng_int(&c->rng, 1, 17), rng_int(&c->rng, 1, 17)};
    if (s[2] + 2 * p.pad_h < p.kernel_h) s[2] = p.kernel_h;
    if (s[3] + 2 * p.pad_w < p.kernel_w) s[3] = p.kernel_w;
    int64_t sh = p.stride_h ? p.stride_h : p.kernel_h, sw = p.stride_w ? p.stride_w : p.kernel_w;
    int64_t os[4] = {s[0], s[1], (s[2] + 2 * p.pad_h - p.kernel_h) / sh + 1, (s[3] + 2 * p.pad_w - p.kernel_w) / sw + 1};
    ValueSpec v = pool_values(c, d, (double)(p.kernel_h * p.kernel_w));
    DTensor *x = case_tensor(c, "in", d, 4, s, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, 4, os, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s kernel=%ux%u stride=%u,%u pad=%u,%u count_include_pad=%u values=%s", dtype_name(d),
               p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.count_include_pad, value_kind_name(v.kind));
    case_upload(c);
    WgcStatus st = avg ? wgc_op_avg_pool2d(c->stream, &p, &x->t, &o->t) : wgc_op_max_pool2d(c->stream, &p, &x->t, &o->t);
    if (!case_expect_ok(c, st, avg ? "wgc_op_avg_pool2d" : "wgc_op_max_pool2d")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    int64_t oc[4];
    for (size_t i = 0; i < o->n; i++) {
        unravel(i, 4, os, oc);
        double best = -INFINITY, sum = 0, sumabs = 0;
        int count = 0, nan = 0;
        for (int64_t a = 0; a < (int64_t)p.kernel_h; a++)
            for (int64_t q = 0; q < (int64_t)p.kernel_w; q++) {
                int64_t ih = oc[2] * sh - p.pad_h + a, iw = oc[3] * sw - p.pad_w + q;
                if (ih < 0 || iw < 0 || ih >= s[2] || iw >= s[3]) continue;
                double val = x->val[idx4(s, oc[0], oc[1], ih, iw)];
                nan |= isnan(val);
                if (val > best) best = val;
                sum += val;
                sumabs += fabs(val);
                count++;
            }
        if (!avg) {
            e[i].ref = nan ? NAN : best; /* exact */
            continue;
        }
        double div = p.count_include_pad ? (double)(p.kernel_h * p.kernel_w) : count;
        e[i].ref = sum / div;
        e[i].tol = TOL_F32_POOL * sumabs / div + tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(e[i].ref) : 0);
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}

void run_max_pool2d(Case *c) { run_pool(c, 0); }
void run_avg_pool2d(Case *c) { run_pool(c, 1); }

void run_global_avg_pool2d(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    int64_t s[4] = {rng_int(&c->rng, 0, 3), rng_int(&c->rng, 1, 5), rng_int(&c->rng, 1, 40), rng_int(&c->rng, 1, 40)};
    if (rng_chance(&c->rng, 0.1)) s[0] = s[1] = 1, s[2] = rng_int(&c->rng, 100, 250), s[3] = rng_int(&c->rng, 100, 250);
    int64_t os[4] = {s[0], s[1], 1, 1};
    ValueSpec v = pool_values(c, d, (double)(s[2] * s[3]));
    DTensor *x = case_tensor(c, "in", d, 4, s, VIEW_ZERO_STRIDES, &v, NULL);
    DTensor *o = case_tensor(c, "out", d, 4, os, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s values=%s", dtype_name(d), value_kind_name(v.kind));
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_global_avg_pool2d(c->stream, &x->t, &o->t), "wgc_op_global_avg_pool2d")) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    size_t hw = (size_t)(s[2] * s[3]);
    for (size_t i = 0; i < o->n; i++) {
        double sum = 0, sumabs = 0;
        for (size_t j = 0; j < hw; j++) sum += x->val[i * hw + j], sumabs += fabs(x->val[i * hw + j]);
        e[i].ref = sum / (double)hw;
        e[i].tol = TOL_F32_POOL * sumabs / (double)hw + tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(e[i].ref) : 0);
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}
