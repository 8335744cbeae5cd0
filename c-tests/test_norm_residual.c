/* Norms with a fused residual (wgc_op_rms_norm_residual,
 * wgc_op_layer_norm_residual): sum_out = in + residual, out = norm(sum_out),
 * against double-precision references of the rounded sum; the sum bit for
 * bit with wgc_op_binary; f32 and f16, with and without weight and bias,
 * rows that take the one-pass kernel (dense, 4-aligned, up to 16384) and
 * rows that do not (odd lengths, transposed, offset views), and misuse.
 *
 * Tolerances as test_norm.c: f32 atol 2e-5, rel 1e-5; f16 atol 1e-2,
 * rel 2e-3. */
#include "test_util.h"

static TestEnv env;

static size_t es(WgcDtype dt) { return dt == WGC_DTYPE_F16 ? 2 : 4; }
static double q(WgcDtype dt, double v) { return dt == WGC_DTYPE_F16 ? f16_to_f32(f32_to_f16((float)v)) : (float)v; }

/* A [rows, len] view at `offset` of its own buffer, row-major or (transposed)
 * column-major, filled from v (row-major logical values); pad elements 0. */
static WgcTensor make(WgcDtype dt, size_t rows, size_t len, int transposed, size_t offset, const double *v,
                      WgcBuffer **buf) {
    size_t n = rows * len, total = n + offset + 4;
    void *host = calloc(total, 4);
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = 2;
    t.shape[0] = (int64_t)rows, t.shape[1] = (int64_t)len;
    t.strides[0] = transposed ? 1 : (int64_t)len;
    t.strides[1] = transposed ? (int64_t)rows : 1;
    t.offset = (int64_t)offset;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < len; j++) {
            size_t at = offset + i * (size_t)t.strides[0] + j * (size_t)t.strides[1];
            double x = v ? v[i * len + j] : 0;
            if (dt == WGC_DTYPE_F16) ((uint16_t *)host)[at] = f32_to_f16((float)x);
            else ((float *)host)[at] = (float)x;
        }
    *buf = upload(env.device, host, total * es(dt));
    t.buffer = *buf;
    free(host);
    return t;
}

static double *read_view(const WgcTensor *t, size_t rows, size_t len) {
    size_t total = rows * len + (size_t)t->offset + 4;
    void *host = calloc(total, 4);
    CHECK(wgc_buffer_read((WgcBuffer *)t->buffer, 0, host, ((total * es(t->dtype)) + 3) & ~(size_t)3));
    double *v = malloc(rows * len * sizeof(double));
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < len; j++) {
            size_t at = (size_t)t->offset + i * (size_t)t->strides[0] + j * (size_t)t->strides[1];
            v[i * len + j] = t->dtype == WGC_DTYPE_F16 ? f16_to_f32(((uint16_t *)host)[at]) : ((float *)host)[at];
        }
    free(host);
    return v;
}

static double *randoms(WgcDtype dt, size_t n, double lo, double hi) {
    double *v = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) v[i] = q(dt, rng_uniform(lo, hi));
    return v;
}

static void check(int rms, WgcDtype dt, size_t rows, size_t len, int has_w, int has_b, int transposed, size_t offset) {
    size_t n = rows * len;
    double *x = randoms(dt, n, -3, 3), *r = randoms(dt, n, -3, 3);
    double *w = randoms(dt, len, 0.5, 1.5), *b = randoms(dt, len, -1, 1);
    WgcBuffer *bx, *br, *by, *bs, *bw = NULL, *bb = NULL, *bz;
    WgcTensor tx = make(dt, rows, len, transposed, offset, x, &bx);
    WgcTensor tr = make(dt, rows, len, 0, offset, r, &br);
    WgcTensor ty = make(dt, rows, len, transposed, offset, NULL, &by);
    WgcTensor ts = make(dt, rows, len, 0, offset, NULL, &bs);
    WgcTensor tz = make(dt, rows, len, 0, 0, NULL, &bz);
    int64_t ls[1] = {(int64_t)len};
    WgcTensor tw, tb;
    if (has_w) {
        void *h = calloc(len + 1, 4);
        for (size_t j = 0; j < len; j++) {
            if (dt == WGC_DTYPE_F16) ((uint16_t *)h)[j] = f32_to_f16((float)w[j]);
            else ((float *)h)[j] = (float)w[j];
        }
        bw = upload(env.device, h, len * es(dt));
        free(h);
        tw = tensor_of(bw, dt, 1, ls);
    }
    if (has_b) {
        void *h = calloc(len + 1, 4);
        for (size_t j = 0; j < len; j++) {
            if (dt == WGC_DTYPE_F16) ((uint16_t *)h)[j] = f32_to_f16((float)b[j]);
            else ((float *)h)[j] = (float)b[j];
        }
        bb = upload(env.device, h, len * es(dt));
        free(h);
        tb = tensor_of(bb, dt, 1, ls);
    }
    if (rms) CHECK(wgc_op_rms_norm_residual(env.stream, &tx, &tr, has_w ? &tw : NULL, 1, 1e-5f, &ty, &ts));
    else CHECK(wgc_op_layer_norm_residual(env.stream, &tx, &tr, has_w ? &tw : NULL, has_b ? &tb : NULL, 1, 1e-5f, &ty, &ts));
    CHECK(wgc_op_binary(env.stream, WGC_BINARY_OP_ADD, &tx, &tr, &tz));
    double *y = read_view(&ty, rows, len), *s = read_view(&ts, rows, len), *z = read_view(&tz, rows, len);
    double atol = dt == WGC_DTYPE_F16 ? 1e-2 : 2e-5, rel = dt == WGC_DTYPE_F16 ? 2e-3 : 1e-5;
    int bad = 0;
    for (size_t i = 0; i < rows; i++) {
        double mean = 0, var = 0;
        for (size_t j = 0; j < len; j++) mean += s[i * len + j];
        mean = rms ? 0 : mean / (double)len;
        for (size_t j = 0; j < len; j++) var += (s[i * len + j] - mean) * (s[i * len + j] - mean);
        double rstd = 1.0 / sqrt(var / (double)len + 1e-5);
        for (size_t j = 0; j < len; j++) {
            size_t k = i * len + j;
            if (s[k] != z[k] || s[k] != q(dt, x[k] + r[k])) {
                if (bad++ < 3) fprintf(stderr, "sum [%zu]: %.9g, wgc_op_binary %.9g\n", k, s[k], z[k]);
            }
            double ref = (s[k] - mean) * rstd * (has_w ? w[j] : 1) + (has_b ? b[j] : 0);
            if (!(fabs(y[k] - ref) <= atol + rel * fabs(ref)) && bad++ < 3)
                fprintf(stderr, "out [%zu]: %.9g, expected %.9g\n", k, y[k], ref);
        }
    }
    if (bad) {
        fprintf(stderr, "%s residual dtype %d rows %zu len %zu w %d b %d transposed %d offset %zu: %d wrong\n",
                rms ? "rms" : "layer", dt, rows, len, has_w, has_b, transposed, offset, bad);
        g_failures++;
    }
    free(x), free(r), free(w), free(b), free(y), free(s), free(z);
    wgc_buffer_release(bx), wgc_buffer_release(br), wgc_buffer_release(by), wgc_buffer_release(bs);
    wgc_buffer_release(bz);
    if (bw) wgc_buffer_release(bw);
    if (bb) wgc_buffer_release(bb);
}

static void misuse(void) {
    WgcBuffer *b1, *b2, *b3, *b4, *b5;
    WgcTensor x = make(WGC_DTYPE_F32, 4, 8, 0, 0, NULL, &b1), r = make(WGC_DTYPE_F32, 4, 8, 0, 0, NULL, &b2);
    WgcTensor y = make(WGC_DTYPE_F32, 4, 8, 0, 0, NULL, &b3), s = make(WGC_DTYPE_F32, 4, 8, 0, 0, NULL, &b4);
    WgcTensor h = make(WGC_DTYPE_F32, 4, 4, 0, 0, NULL, &b5);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &h, NULL, 1, 1e-5f, &y, &s), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &r, NULL, 1, 1e-5f, &y, &h), WGC_ERROR_SHAPE_MISMATCH);
    WgcTensor ri = r;
    ri.dtype = WGC_DTYPE_I32;
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &ri, NULL, 1, 1e-5f, &y, &s), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &r, NULL, 1, 1e-5f, &y, &x), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &r, NULL, 1, 1e-5f, &s, &s), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &r, NULL, 3, 1e-5f, &y, &s), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &r, NULL, 1, -1.0f, &y, &s), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_layer_norm_residual(env.stream, &x, &r, &h, NULL, 1, 1e-5f, &y, &s), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, NULL, NULL, 1, 1e-5f, &y, &s), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_rms_norm_residual(env.stream, &x, &r, NULL, 1, 1e-5f, &y, NULL), WGC_ERROR_NULL_POINTER);
    wgc_buffer_release(b1), wgc_buffer_release(b2), wgc_buffer_release(b3), wgc_buffer_release(b4);
    wgc_buffer_release(b5);
}

int main(void) {
    env = test_env();
    WgcDtype dts[2] = {WGC_DTYPE_F32, WGC_DTYPE_F16};
    for (int k = 0; k < 2; k++) {
        WgcDtype dt = dts[k];
        if (dt == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        for (int rms = 0; rms < 2; rms++) {
            check(rms, dt, 5, 1024, 1, !rms, 0, 0); /* one pass */
            check(rms, dt, 3, 36, 0, 0, 0, 4);      /* one pass, offset rows */
            check(rms, dt, 4, 4096, 1, !rms, 0, 0); /* one pass, 4 vec4s a thread */
            check(rms, dt, 6, 33, 1, !rms, 0, 0);   /* odd length: add, then norm */
            check(rms, dt, 7, 40, 1, 0, 1, 0);      /* transposed: add, then norm */
            check(rms, dt, 2, 20000, 0, 0, 0, 0);   /* too long for registers */
        }
    }
    misuse();
    test_env_release(&env);
    return test_finish("test_norm_residual");
}
