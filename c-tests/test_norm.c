/* Layer norm, RMS norm and batch norm against double-precision references:
 * f32 and f16, with and without weight and bias, several normalised-dim
 * counts, odd row lengths, rows that fit the register cache and rows that do
 * not, transposed and offset views, and the error cases. Run with subgroup
 * kernels where available, then with the workgroup-memory-only kernels.
 *
 * Tolerances: |got - ref| <= atol + rel * |ref| with, for f32, atol 2e-5 and
 * rel 1e-5; for f16 (inputs and outputs rounded to f16) atol 1e-2, rel 2e-3. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

static TestEnv env;

static WgcBuffer *upload_vals(WgcDtype dt, const double *v, size_t n, size_t pad_before) {
    size_t total = n + pad_before;
    void *host = calloc(total + 2, 4);
    for (size_t i = 0; i < n; i++) {
        if (dt == WGC_DTYPE_F16) ((uint16_t *)host)[pad_before + i] = f32_to_f16((float)v[i]);
        else ((float *)host)[pad_before + i] = (float)v[i];
    }
    WgcBuffer *b = upload(env.device, host, (total ? total : 1) * (dt == WGC_DTYPE_F16 ? 2 : 4));
    free(host);
    return b;
}

static double *random_vals(WgcDtype dt, size_t n, double lo, double hi) {
    double *v = malloc((n + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double r = rng_uniform(lo, hi);
        v[i] = dt == WGC_DTYPE_F16 ? f16_to_f32(f32_to_f16((float)r)) : (float)r;
    }
    return v;
}

static double *read_vals(WgcBuffer *b, WgcDtype dt, size_t n) {
    void *host = calloc(n + 2, 4);
    double *v = calloc(n + 1, sizeof(double));
    if (n) CHECK(wgc_buffer_read(b, 0, host, n * (dt == WGC_DTYPE_F16 ? 2 : 4)));
    for (size_t i = 0; i < n; i++)
        v[i] = dt == WGC_DTYPE_F16 ? f16_to_f32(((uint16_t *)host)[i]) : ((float *)host)[i];
    free(host);
    return v;
}

static void compare(const char *what, WgcDtype dt, const double *got, const double *ref, size_t n) {
    double atol = dt == WGC_DTYPE_F16 ? 1e-2 : 2e-5, rel = dt == WGC_DTYPE_F16 ? 2e-3 : 1e-5;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(got[i] - ref[i]) <= atol + rel * fabs(ref[i])) && bad++ < 3)
            fprintf(stderr, "%s (dtype %d): out[%zu] = %.9g, expected %.9g\n", what, (int)dt, i, got[i], ref[i]);
    }
    if (bad) g_failures++;
}

/* Layer norm (rms 0) or RMS norm (rms 1) of a [rows, ...inner] tensor.
 * transposed: the input buffer stores the 2-D view [rows, len] column-major. */
static void check_norm(int rms, WgcDtype dt, size_t rows, uint32_t rank, const int64_t *shape, uint32_t nd,
                       int has_w, int has_b, int transposed, size_t offset) {
    size_t n = 1, len = 1;
    for (uint32_t d = 0; d < rank; d++) n *= (size_t)shape[d];
    for (uint32_t d = rank - nd; d < rank; d++) len *= (size_t)shape[d];
    (void)rows;
    size_t nrows = len ? n / len : 0;
    double *x = random_vals(dt, n, -2, 3);
    double *w = random_vals(dt, len, 0.5, 1.5), *b = random_vals(dt, len, -1, 1);
    /* physical storage */
    double *phys = malloc((n + 1) * sizeof(double));
    for (size_t r = 0; r < nrows; r++)
        for (size_t j = 0; j < len; j++) phys[transposed ? j * nrows + r : r * len + j] = x[r * len + j];
    WgcBuffer *bx = upload_vals(dt, phys, n, offset);
    WgcTensor tx = tensor_of(bx, dt, rank, shape);
    tx.offset = (int64_t)offset;
    if (transposed) { /* only used with nd == 1, rank == 2 */
        tx.strides[0] = 1;
        tx.strides[1] = (int64_t)nrows;
    }
    WgcBuffer *bw = upload_vals(dt, w, len, 0), *bb = upload_vals(dt, b, len, 0);
    WgcTensor tw = tensor_of(bw, dt, nd, shape + (rank - nd)), tb = tensor_of(bb, dt, nd, shape + (rank - nd));
    WgcBuffer *by = NULL;
    CHECK(wgc_buffer_create(env.device, n * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor ty = tensor_of(by, dt, rank, shape);
    float eps = 1e-5f;
    if (rms) CHECK(wgc_op_rms_norm(env.stream, &tx, has_w ? &tw : NULL, nd, eps, &ty));
    else CHECK(wgc_op_layer_norm(env.stream, &tx, has_w ? &tw : NULL, has_b ? &tb : NULL, nd, eps, &ty));
    double *got = read_vals(by, dt, n);
    double *ref = calloc(n + 1, sizeof(double));
    for (size_t r = 0; r < nrows; r++) {
        const double *row = x + r * len;
        double mean = 0, var = 0;
        for (size_t j = 0; j < len; j++) mean += row[j];
        mean = rms ? 0 : mean / (double)len;
        for (size_t j = 0; j < len; j++) var += (row[j] - mean) * (row[j] - mean);
        double rstd = 1 / sqrt(var / (double)len + eps);
        for (size_t j = 0; j < len; j++) {
            double v = (row[j] - mean) * rstd;
            if (has_w) v *= w[j];
            if (has_b && !rms) v += b[j];
            ref[r * len + j] = v;
        }
    }
    char what[96];
    snprintf(what, sizeof what, "%s rank %u nd %u len %zu w%d b%d t%d", rms ? "rms_norm" : "layer_norm", rank, nd, len,
             has_w, has_b, transposed);
    compare(what, dt, got, ref, n);
    free(x), free(w), free(b), free(phys), free(got), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

static void test_norms(void) {
    static const int64_t s3[3] = {4, 6, 10}, odd[2] = {5, 37}, big[2] = {3, 20000}, bench[2] = {6, 4096},
                         one[2] = {3, 1};
    for (int rms = 0; rms < 2; rms++) {
        for (int dti = 0; dti < 2; dti++) {
            WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
            for (uint32_t nd = 1; nd <= 3; nd++) check_norm(rms, dt, 0, 3, s3, nd, 1, 1, 0, 0);
            check_norm(rms, dt, 0, 3, s3, 1, 0, 0, 0, 0);
            check_norm(rms, dt, 0, 3, s3, 2, 1, 0, 0, 4);
            check_norm(rms, dt, 0, 3, s3, 1, 0, 1, 0, 0);
            check_norm(rms, dt, 0, 2, odd, 1, 1, 1, 0, 0);
            check_norm(rms, dt, 0, 2, odd, 1, 1, 1, 1, 3); /* transposed, offset: strided kernel */
            check_norm(rms, dt, 0, 2, big, 1, 1, 1, 0, 0); /* beyond the register cache */
            check_norm(rms, dt, 0, 2, bench, 1, 1, 1, 0, 0);
        }
        check_norm(rms, WGC_DTYPE_F32, 0, 2, one, 1, 1, 1, 0, 0);
        /* Many short rows (several to a workgroup): odd widths, vec4 and scalar loads. */
        static const int64_t widths[] = {1, 3, 4, 7, 31, 32, 33, 255, 256};
        for (size_t i = 0; i < sizeof widths / sizeof *widths; i++) {
            int64_t sh[2] = {700, widths[i]};
            for (int dti = 0; dti < 2; dti++) {
                WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
                check_norm(rms, dt, 0, 2, sh, 1, 1, 1, 0, 0);
                check_norm(rms, dt, 0, 2, sh, 1, 0, 1, 0, 4);
                check_norm(rms, dt, 0, 2, sh, 1, 1, 0, 1, 1); /* transposed, offset */
            }
        }
        static const int64_t long_odd[2] = {5, 300};
        check_norm(rms, WGC_DTYPE_F32, 0, 2, long_odd, 1, 1, 1, 1, 0); /* strided row kernel */
    }
}

/* Layer norm of constant rows is exactly the bias (0 without one): the mean
 * of equal values is that value, every deviation 0. */
static void test_constant_rows(void) {
    /* short rows, then the cached (1000, 4096), scalar (5001) and split (70001) kernels */
    static const int64_t widths[] = {3, 7, 12, 33, 100, 255, 1000, 4096, 5001, 70001};
    static const double values[] = {0.1, -3.3, 1e4 / 3, 446.699};
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
        for (int dti = 0; dti < 2; dti++) {
            WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
            int64_t len = widths[i], rows = 4, shape[2] = {rows, len};
            size_t n = (size_t)(rows * len);
            double *x = malloc(n * sizeof(double));
            for (size_t k = 0; k < n; k++) x[k] = values[k / (size_t)len];
            double *bias = random_vals(dt, (size_t)len, -1, 1);
            WgcBuffer *bx = upload_vals(dt, x, n, 0), *bb = upload_vals(dt, bias, (size_t)len, 0), *by = NULL;
            CHECK(wgc_buffer_create(env.device, n * 4, WGC_BUFFER_USAGE_STORAGE, &by));
            WgcTensor tx = tensor_of(bx, dt, 2, shape), ty = tensor_of(by, dt, 2, shape);
            WgcTensor tb = tensor_of(bb, dt, 1, shape + 1);
            CHECK(wgc_op_layer_norm(env.stream, &tx, NULL, &tb, 1, 1e-5f, &ty));
            double *got = read_vals(by, dt, n);
            int bad = 0;
            for (size_t k = 0; k < n; k++)
                if (got[k] != bias[k % (size_t)len] && bad++ < 3)
                    fprintf(stderr, "layer_norm of constant rows (len %lld, dtype %d): out[%zu] = %.9g, expected %.9g\n",
                            (long long)len, (int)dt, k, got[k], bias[k % (size_t)len]);
            if (bad) g_failures++;
            free(x), free(bias), free(got);
            wgc_buffer_release(bx), wgc_buffer_release(bb), wgc_buffer_release(by);
        }
}

/* Batch norm of an (N, C, H, W) tensor (optionally a transposed view: N and W swapped in storage). */
static void check_batch_norm(WgcDtype dt, int64_t nn, int64_t c, int64_t h, int64_t wd, int has_w, int has_b, int perm) {
    int64_t shape[4] = {nn, c, h, wd};
    size_t n = (size_t)(nn * c * h * wd);
    double *x = random_vals(dt, n, -2, 2);
    double *mean = random_vals(dt, (size_t)c, -1, 1), *var = random_vals(dt, (size_t)c, 0.1, 2);
    double *w = random_vals(dt, (size_t)c, 0.5, 1.5), *b = random_vals(dt, (size_t)c, -1, 1);
    int64_t strides[4] = {c * h * wd, h * wd, wd, 1};
    if (perm) { /* storage order (W, C, H, N) */
        strides[3] = c * h * nn, strides[1] = h * nn, strides[2] = nn, strides[0] = 1;
    }
    double *phys = malloc((n + 1) * sizeof(double));
    size_t i = 0;
    for (int64_t a = 0; a < nn; a++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t z = 0; z < wd; z++, i++)
                    phys[a * strides[0] + k * strides[1] + y * strides[2] + z * strides[3]] = x[i];
    WgcBuffer *bx = upload_vals(dt, phys, n, 0), *bm = upload_vals(dt, mean, (size_t)c, 0),
              *bv = upload_vals(dt, var, (size_t)c, 0), *bw = upload_vals(dt, w, (size_t)c, 0),
              *bb = upload_vals(dt, b, (size_t)c, 0), *by = NULL;
    CHECK(wgc_buffer_create(env.device, n * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor tx = tensor_of(bx, dt, 4, shape), ty = tensor_of(by, dt, 4, shape);
    for (int d = 0; d < 4; d++) tx.strides[d] = strides[d];
    WgcTensor tm = tensor_of(bm, dt, 1, &c), tv = tensor_of(bv, dt, 1, &c), tw = tensor_of(bw, dt, 1, &c),
              tb = tensor_of(bb, dt, 1, &c);
    CHECK(wgc_op_batch_norm(env.stream, &tx, &tm, &tv, has_w ? &tw : NULL, has_b ? &tb : NULL, 1e-5f, &ty));
    double *got = read_vals(by, dt, n), *ref = calloc(n + 1, sizeof(double));
    i = 0;
    for (int64_t a = 0; a < nn; a++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t y = 0; y < h * wd; y++, i++) {
                double v = (x[i] - mean[k]) / sqrt(var[k] + 1e-5f);
                if (has_w) v *= w[k];
                if (has_b) v += b[k];
                ref[i] = v;
            }
    compare("batch_norm", dt, got, ref, n);
    free(x), free(mean), free(var), free(w), free(b), free(phys), free(got), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(bm), wgc_buffer_release(bv), wgc_buffer_release(bw);
    wgc_buffer_release(bb), wgc_buffer_release(by);
}

static void test_batch_norm(void) {
    for (int dti = 0; dti < 2; dti++) {
        WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        check_batch_norm(dt, 3, 5, 7, 9, 1, 1, 0);
        check_batch_norm(dt, 2, 3, 1, 13, 0, 0, 0);
        check_batch_norm(dt, 3, 5, 7, 9, 1, 0, 1);
        check_batch_norm(dt, 1, 1, 1, 1, 0, 1, 0);
    }
}

static void test_errors(void) {
    float data[64] = {0};
    int64_t shape[2] = {4, 8}, wshape[1] = {8}, bad_w[1] = {4}, c4[1] = {4}, s1[1] = {32};
    WgcBuffer *bx = upload(env.device, data, sizeof data), *bw = upload(env.device, data, sizeof data), *by = NULL;
    CHECK(wgc_buffer_create(env.device, sizeof data, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor x = tensor_of(bx, WGC_DTYPE_F32, 2, shape), y = tensor_of(by, WGC_DTYPE_F32, 2, shape);
    WgcTensor w = tensor_of(bw, WGC_DTYPE_F32, 1, wshape), wbad = tensor_of(bw, WGC_DTYPE_F32, 1, bad_w);
    WgcTensor wi = tensor_of(bw, WGC_DTYPE_I32, 1, wshape), xi = tensor_of(bx, WGC_DTYPE_I32, 2, shape);
    WgcTensor yi = tensor_of(by, WGC_DTYPE_I32, 2, shape), yflat = tensor_of(by, WGC_DTYPE_F32, 1, s1);
    CHECK(wgc_op_layer_norm(env.stream, &x, &w, &w, 1, 1e-5f, &y));
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, &w, NULL, 0, 1e-5f, &y), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, &w, NULL, 3, 1e-5f, &y), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, &w, NULL, 1, -1.0f, &y), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, &wbad, NULL, 1, 1e-5f, &y), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, NULL, &wbad, 1, 1e-5f, &y), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, &wi, NULL, 1, 1e-5f, &y), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, NULL, NULL, 1, 1e-5f, &yi), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, NULL, NULL, 1, 1e-5f, &yflat), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &xi, NULL, NULL, 1, 1e-5f, &yi), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, NULL, NULL, 1, 1e-5f, &x), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor past = x;
    past.offset = 60;
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &past, NULL, NULL, 1, 1e-5f, &y), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_layer_norm(NULL, &x, NULL, NULL, 1, 1e-5f, &y), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &x, NULL, NULL, 1, 1e-5f, NULL), WGC_ERROR_NULL_POINTER);
    CHECK(wgc_op_rms_norm(env.stream, &x, &w, 1, 1e-5f, &y));
    EXPECT_STATUS(wgc_op_rms_norm(env.stream, &x, &wbad, 1, 1e-5f, &y), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_rms_norm(env.stream, &x, &w, 5, 1e-5f, &y), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_rms_norm(env.stream, &x, NULL, 1, NAN, &y), WGC_ERROR_INVALID_ARGUMENT);
    /* batch norm: x is (4, 8): C = 8 */
    WgcTensor cm = tensor_of(bw, WGC_DTYPE_F32, 1, wshape), cbad = tensor_of(bw, WGC_DTYPE_F32, 1, c4);
    CHECK(wgc_op_batch_norm(env.stream, &x, &cm, &cm, &cm, &cm, 1e-5f, &y));
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &x, NULL, &cm, NULL, NULL, 1e-5f, &y), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &x, &cbad, &cm, NULL, NULL, 1e-5f, &y), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &x, &cm, &cm, &wi, NULL, 1e-5f, &y), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &yflat, &cm, &cm, NULL, NULL, 1e-5f, &yflat), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &x, &cm, &cm, NULL, NULL, 1e-5f, &x), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &xi, &cm, &cm, NULL, NULL, 1e-5f, &yi), WGC_ERROR_UNSUPPORTED);
    WgcTensor yw = tensor_of(bw, WGC_DTYPE_F32, 2, shape); /* out sharing the weights' buffer */
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &x, &cm, &cm, NULL, NULL, 1e-5f, &yw), WGC_ERROR_INVALID_ARGUMENT);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(by);
}

int main(void) {
    env = test_env();
    test_norms();
    test_constant_rows();
    test_batch_norm();
    test_errors();
    /* Again on a device created without the subgroup kernels. */
    test_env_release(&env);
    env = test_env_setting("WGC_DISABLE_SUBGROUPS", "1");
    test_norms();
    test_env_release(&env);
    return test_finish("test_norm");
}
