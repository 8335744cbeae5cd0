/* Batch norm (inference) over the layouts networks use, against a
 * double-precision reference: NCHW and channels-last (NHWC) views, padded
 * planes and rows, offset views (4-aligned and not), odd channel counts,
 * planes and channel counts not multiples of 4, input and output in different
 * layouts, strided per-channel parameters, and NaN/Inf inputs (NaN stays NaN,
 * +-Inf stays +-Inf where the weight is positive). f32 and f16.
 *
 * Tolerances (those of test_norm.c): |got - ref| <= atol + rel * |ref| with,
 * for f32, atol 2e-5 and rel 1e-5; for f16 (inputs and outputs rounded to
 * f16) atol 1e-2, rel 2e-3. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

static TestEnv env;

enum Layout { NCHW, NHWC, NCHW_PADDED, NHWC_PADDED };

/* Element strides of an (N, C, H, W) view in `layout`; returns the
 * elements the view spans. */
static size_t layout_strides(enum Layout layout, const int64_t *s, int64_t *st) {
    int64_t n = s[0], c = s[1], h = s[2], w = s[3];
    switch (layout) {
    case NCHW: st[0] = c * h * w, st[1] = h * w, st[2] = w, st[3] = 1; break;
    case NCHW_PADDED: st[0] = c * (h * w + 4), st[1] = h * w + 4, st[2] = w, st[3] = 1; break;
    case NHWC: st[0] = h * w * c, st[1] = 1, st[2] = w * c, st[3] = c; break;
    case NHWC_PADDED: st[0] = h * w * (c + 4), st[1] = 1, st[2] = w * (c + 4), st[3] = c + 4; break;
    }
    return (size_t)((n - 1) * st[0] + (c - 1) * st[1] + (h - 1) * st[2] + (w - 1) * st[3] + 1);
}

static WgcBuffer *upload_vals(WgcDtype dt, const double *v, size_t n) {
    void *host = calloc(n + 2, 4);
    for (size_t i = 0; i < n; i++) {
        if (dt == WGC_DTYPE_F16) ((uint16_t *)host)[i] = f32_to_f16((float)v[i]);
        else ((float *)host)[i] = (float)v[i];
    }
    WgcBuffer *b = upload(env.device, host, (n ? n : 1) * (dt == WGC_DTYPE_F16 ? 2 : 4));
    free(host);
    return b;
}

static double *read_vals(WgcBuffer *b, WgcDtype dt, size_t n) {
    void *host = calloc(n + 2, 4);
    double *v = calloc(n + 1, sizeof(double));
    CHECK(wgc_buffer_read(b, 0, host, n * (dt == WGC_DTYPE_F16 ? 2 : 4)));
    for (size_t i = 0; i < n; i++)
        v[i] = dt == WGC_DTYPE_F16 ? f16_to_f32(((uint16_t *)host)[i]) : ((float *)host)[i];
    free(host);
    return v;
}

static double rounded(WgcDtype dt, double r) {
    return dt == WGC_DTYPE_F16 ? f16_to_f32(f32_to_f16((float)r)) : (float)r;
}

/* Per-channel parameter of C values at element stride `pstride`. */
static WgcBuffer *upload_param(WgcDtype dt, const double *v, int64_t c, int64_t pstride, WgcTensor *t) {
    size_t n = (size_t)((c - 1) * pstride + 1);
    double *phys = calloc(n + 1, sizeof(double));
    for (int64_t k = 0; k < c; k++) phys[k * pstride] = v[k];
    WgcBuffer *b = upload_vals(dt, phys, n);
    *t = tensor_of(b, dt, 1, &c);
    t->strides[0] = pstride;
    free(phys);
    return b;
}

static void check(WgcDtype dt, int64_t nn, int64_t c, int64_t h, int64_t wd, enum Layout in_layout, size_t in_off,
                  enum Layout out_layout, size_t out_off, int has_w, int has_b, int64_t pstride) {
    int64_t shape[4] = {nn, c, h, wd}, is[4], os[4];
    size_t n = (size_t)(nn * c * h * wd);
    size_t in_span = layout_strides(in_layout, shape, is) + in_off;
    size_t out_span = layout_strides(out_layout, shape, os) + out_off;
    double *x = malloc((n + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) x[i] = rounded(dt, rng_uniform(-2, 2));
    /* non-finite inputs at a few places */
    if (n > 3) x[1] = NAN, x[n / 2] = INFINITY, x[n - 2] = -INFINITY;
    double *mean = malloc((size_t)c * sizeof(double)), *var = malloc((size_t)c * sizeof(double));
    double *w = malloc((size_t)c * sizeof(double)), *b = malloc((size_t)c * sizeof(double));
    for (int64_t k = 0; k < c; k++) {
        mean[k] = rounded(dt, rng_uniform(-1, 1)), var[k] = rounded(dt, rng_uniform(0.1, 2));
        w[k] = rounded(dt, rng_uniform(0.5, 1.5)), b[k] = rounded(dt, rng_uniform(-1, 1));
    }
    double *phys = calloc(in_span + 1, sizeof(double));
    size_t i = 0;
    for (int64_t a = 0; a < nn; a++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t z = 0; z < wd; z++, i++)
                    phys[in_off + (size_t)(a * is[0] + k * is[1] + y * is[2] + z * is[3])] = x[i];
    WgcBuffer *bx = upload_vals(dt, phys, in_span), *by = NULL;
    CHECK(wgc_buffer_create(env.device, (out_span + 4) * 4, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor tx = tensor_of(bx, dt, 4, shape), ty = tensor_of(by, dt, 4, shape), tm, tv, tw, tb;
    tx.offset = in_off, ty.offset = out_off;
    for (int d = 0; d < 4; d++) tx.strides[d] = is[d], ty.strides[d] = os[d];
    WgcBuffer *bm = upload_param(dt, mean, c, pstride, &tm), *bv = upload_param(dt, var, c, pstride, &tv);
    WgcBuffer *bw = upload_param(dt, w, c, pstride, &tw), *bb = upload_param(dt, b, c, pstride, &tb);
    CHECK(wgc_op_batch_norm(env.stream, &tx, &tm, &tv, has_w ? &tw : NULL, has_b ? &tb : NULL, 1e-5f, &ty));
    double *all = read_vals(by, dt, out_span);
    double *got = malloc((n + 1) * sizeof(double)), *ref = malloc((n + 1) * sizeof(double));
    i = 0;
    for (int64_t a = 0; a < nn; a++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t z = 0; z < wd; z++, i++) {
                    got[i] = all[out_off + (size_t)(a * os[0] + k * os[1] + y * os[2] + z * os[3])];
                    double v = (x[i] - mean[k]) / sqrt(var[k] + (double)1e-5f);
                    if (has_w) v *= w[k];
                    if (has_b) v += b[k];
                    ref[i] = v;
                }
    char what[160];
    snprintf(what, sizeof what, "batch_norm dtype %d (%lld,%lld,%lld,%lld) layouts %d@%zu -> %d@%zu w%d b%d ps%lld",
             (int)dt, (long long)nn, (long long)c, (long long)h, (long long)wd, (int)in_layout, in_off,
             (int)out_layout, out_off, has_w, has_b, (long long)pstride);
    int f16 = dt == WGC_DTYPE_F16;
    compare_f64(what, got, ref, n, f16 ? 1e-2 : 2e-5, f16 ? 2e-3 : 1e-5);
    free(x), free(mean), free(var), free(w), free(b), free(phys), free(all), free(got), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(by), wgc_buffer_release(bm), wgc_buffer_release(bv);
    wgc_buffer_release(bw), wgc_buffer_release(bb);
}

int main(void) {
    env = test_env();
    for (int dti = 0; dti < 2; dti++) {
        WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        /* NCHW planes: vec4 (plane 16, 1296 across workgroups), scalar
         * (plane 63, 49, unaligned offset), padded planes */
        check(dt, 2, 8, 4, 4, NCHW, 0, NCHW, 0, 1, 1, 1);
        check(dt, 2, 16, 36, 36, NCHW, 0, NCHW, 0, 1, 1, 1);
        check(dt, 2, 8, 4, 4, NCHW, 1, NCHW, 4, 1, 0, 1);
        /* one dense run in and out: the flat walk (aligned offsets, one image, one channel) */
        check(dt, 3, 24, 20, 20, NCHW, 4, NCHW, 8, 1, 1, 1);
        check(dt, 1, 1, 8, 8, NCHW, 0, NCHW, 0, 0, 1, 1);
        check(dt, 3, 5, 7, 9, NCHW, 0, NCHW, 0, 0, 1, 1);
        check(dt, 4, 33, 7, 7, NCHW, 0, NCHW, 3, 1, 1, 2);
        check(dt, 2, 6, 4, 4, NCHW_PADDED, 0, NCHW, 0, 1, 1, 1);
        /* channels-last rows: vec4 (C 12, 64), scalar (C 7, 33), padded rows,
         * unaligned offsets */
        check(dt, 2, 12, 3, 5, NHWC, 0, NHWC, 0, 1, 1, 1);
        check(dt, 4, 64, 8, 8, NHWC, 0, NHWC, 4, 1, 1, 3);
        check(dt, 2, 7, 3, 5, NHWC, 0, NHWC, 0, 1, 1, 1);
        check(dt, 5, 33, 17, 16, NHWC, 0, NHWC, 0, 0, 0, 1);
        check(dt, 2, 8, 5, 3, NHWC_PADDED, 0, NHWC, 0, 1, 1, 1);
        check(dt, 2, 8, 5, 3, NHWC, 2, NHWC_PADDED, 1, 1, 1, 1);
        check(dt, 1, 3, 1, 1, NHWC, 0, NHWC, 0, 1, 1, 1);
        check(dt, 7, 5, 1, 1, NCHW, 0, NCHW, 0, 1, 1, 1);
        /* more planes than one grid dimension holds (65535) */
        check(dt, 1, 70001, 1, 2, NCHW, 0, NCHW, 0, 1, 1, 1);
        /* different layouts in and out: the general kernel */
        check(dt, 3, 8, 4, 4, NHWC, 0, NCHW, 0, 1, 1, 1);
        check(dt, 2, 5, 3, 3, NCHW, 0, NHWC, 0, 0, 1, 1);
    }
    return test_finish("test_batch_norm_layouts");
}
