/* wgc_conv2d_fold_batch_norm: the folded weight and bias against double
 * precision, and the folded convolution (wgc_op_conv2d with them) against
 * convolution then batch norm computed in double: f32 and f16, with and
 * without the convolution's bias and the batch norm's weight and bias,
 * odd channel counts, strides, padding, groups (depthwise too), a
 * channels-last weight, a NaN statistic; then the misuse statuses.
 *
 * Tolerances (those documented on wgc_conv2d_fold_batch_norm): folded
 * weights and bias within 1e-6 relative (f32) or 2^-10 (f16, one rounding);
 * the folded convolution within 1e-5 * (1 + sqrt(K)) * max|x| * max|w'| +
 * 1e-6 * |ref| (f32), plus 2^-10 * (sum|x * w'| + |ref|) in f16. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"
#include "test_vals.h"

static TestEnv env;

static int within(double got, double ref, double tol) {
    if (isnan(ref)) return isnan(got);
    return fabs(got - ref) <= tol;
}

/* flags: 1 conv bias, 2 bn weight, 4 bn bias, 8 channels-last weight,
 * 16 a NaN running variance in channel 1. */
static void check(WgcDtype dt, int64_t N, int64_t C, int64_t H, int64_t O, int64_t K, int64_t stride, int64_t pad,
                  int64_t groups, int flags) {
    int f16 = dt == WGC_DTYPE_F16;
    int has_cb = flags & 1, has_w = flags & 2, has_b = flags & 4, cl = flags & 8;
    int64_t Cg = C / groups, Og = O / groups, OH = (H + 2 * pad - K) / stride + 1;
    int64_t xs[4] = {N, C, H, H}, ws[4] = {O, Cg, K, K}, os[4] = {N, O, OH, OH}, vs[1] = {O};
    size_t nx = (size_t)(N * C * H * H), nw = (size_t)(O * Cg * K * K), no = (size_t)(N * O * OH * OH);
    double *x = random_vals(dt, nx, -1, 1), *w = random_vals(dt, nw, -1, 1), *cb = random_vals(dt, (size_t)O, -1, 1);
    double *mean = random_vals(dt, (size_t)O, -1, 1), *var = random_vals(dt, (size_t)O, 0.1, 2);
    double *g = random_vals(dt, (size_t)O, 0.5, 2), *beta = random_vals(dt, (size_t)O, -1, 1);
    if ((flags & 16) && O > 1) var[1] = NAN;
    /* weight storage: (O, Cg, K, K) or channels-last (O, K, K, Cg) */
    int64_t wst[4] = {Cg * K * K, K * K, K, 1};
    if (cl) wst[1] = 1, wst[2] = K * Cg, wst[3] = Cg;
    double *wphys = malloc((nw + 1) * sizeof(double));
    for (int64_t o = 0; o < O; o++)
        for (int64_t c = 0; c < Cg; c++)
            for (int64_t ky = 0; ky < K; ky++)
                for (int64_t kx = 0; kx < K; kx++)
                    wphys[o * wst[0] + c * wst[1] + ky * wst[2] + kx * wst[3]] = w[((o * Cg + c) * K + ky) * K + kx];
    WgcBuffer *bx = upload_vals(env.device, dt, x, nx), *bw = upload_vals(env.device, dt, wphys, nw), *bcb = upload_vals(env.device, dt, cb, (size_t)O);
    WgcBuffer *bm = upload_vals(env.device, dt, mean, (size_t)O), *bv = upload_vals(env.device, dt, var, (size_t)O);
    WgcBuffer *bg = upload_vals(env.device, dt, g, (size_t)O), *bbeta = upload_vals(env.device, dt, beta, (size_t)O);
    WgcBuffer *bwo = NULL, *bbo = NULL, *by = NULL;
    CHECK(wgc_buffer_create(env.device, nw * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &bwo));
    CHECK(wgc_buffer_create(env.device, (size_t)O * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &bbo));
    CHECK(wgc_buffer_create(env.device, no * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor tx = tensor_of(bx, dt, 4, xs), tw = tensor_of(bw, dt, 4, ws), two = tensor_of(bwo, dt, 4, ws);
    for (int d = 0; d < 4; d++) tw.strides[d] = two.strides[d] = wst[d];
    WgcTensor tcb = tensor_of(bcb, dt, 1, vs), tm = tensor_of(bm, dt, 1, vs), tv = tensor_of(bv, dt, 1, vs);
    WgcTensor tg = tensor_of(bg, dt, 1, vs), tbeta = tensor_of(bbeta, dt, 1, vs), tbo = tensor_of(bbo, dt, 1, vs);
    WgcTensor ty = tensor_of(by, dt, 4, os);
    const float eps = 1e-5f;
    CHECK(wgc_conv2d_fold_batch_norm(env.stream, &tw, has_cb ? &tcb : NULL, &tm, &tv, has_w ? &tg : NULL,
                                     has_b ? &tbeta : NULL, eps, &two, &tbo));
    WgcConv2dParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)stride;
    p.pad_h = p.pad_w = (uint32_t)pad;
    p.groups = (uint32_t)groups;
    CHECK(wgc_op_conv2d(env.stream, &p, &tx, &two, &tbo, &ty));
    double *wo = read_vals(bwo, dt, nw), *bo = read_vals(bbo, dt, (size_t)O), *y = read_vals(by, dt, no);
    char what[128];
    snprintf(what, sizeof what, "fold dtype %d N%lld C%lld H%lld O%lld k%lld s%lld p%lld g%lld flags %d", (int)dt,
             (long long)N, (long long)C, (long long)H, (long long)O, (long long)K, (long long)stride, (long long)pad,
             (long long)groups, flags);
    double rel = f16 ? 1.0 / 1024 : 1e-6;
    int bad = 0;
    double *s = malloc((size_t)O * sizeof(double)), *bref = malloc((size_t)O * sizeof(double)), max_wo = 0;
    for (int64_t o = 0; o < O; o++) {
        s[o] = (has_w ? g[o] : 1.0) / sqrt(var[o] + (double)eps);
        bref[o] = ((has_cb ? cb[o] : 0.0) - mean[o]) / sqrt(var[o] + (double)eps) * (has_w ? g[o] : 1.0) +
                  (has_b ? beta[o] : 0.0);
        if (!within(bo[o], bref[o], rel * fabs(bref[o]) + 1e-7) && bad++ < 3)
            fprintf(stderr, "%s: bias_out[%lld] = %.9g, expected %.9g\n", what, (long long)o, bo[o], bref[o]);
        for (int64_t k = 0; k < Cg * K * K; k++) {
            double ref = w[o * Cg * K * K + k] * s[o];
            int64_t c = k / (K * K), ky = k / K % K, kx = k % K;
            double got = wo[o * wst[0] + c * wst[1] + ky * wst[2] + kx * wst[3]];
            if (!isnan(ref)) max_wo = fmax(max_wo, fabs(ref));
            if (!within(got, ref, rel * fabs(ref)) && bad++ < 3)
                fprintf(stderr, "%s: weight_out[%lld, %lld] = %.9g, expected %.9g\n", what, (long long)o, (long long)k,
                        got, ref);
        }
    }
    double kk = (double)(Cg * K * K);
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OH; ox++) {
                    int64_t gi = o / Og;
                    double acc = 0, mag = 0;
                    for (int64_t c = 0; c < Cg; c++)
                        for (int64_t ky = 0; ky < K; ky++)
                            for (int64_t kx = 0; kx < K; kx++) {
                                int64_t iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                                double xv = x[((n * C + gi * Cg + c) * H + iy) * H + ix];
                                double wv = w[((o * Cg + c) * K + ky) * K + kx];
                                acc += xv * wv;
                                mag += fabs(xv * wv * s[o]);
                            }
                    /* convolution, then batch norm, in double */
                    double ref = ((acc + (has_cb ? cb[o] : 0.0)) - mean[o]) / sqrt(var[o] + (double)eps) *
                                     (has_w ? g[o] : 1.0) +
                                 (has_b ? beta[o] : 0.0);
                    double tol = 1e-5 * (1 + sqrt(kk)) * max_wo + 1e-6 * fabs(ref) + 1e-6 * fabs(bref[o]);
                    if (f16) tol += (mag + fabs(ref) + fabs(bref[o])) / 1024;
                    double got = y[((n * O + o) * OH + oy) * OH + ox];
                    if (!within(got, ref, tol) && bad++ < 3)
                        fprintf(stderr, "%s: out[%lld, %lld, %lld, %lld] = %.9g, expected %.9g (tol %.3g)\n", what,
                                (long long)n, (long long)o, (long long)oy, (long long)ox, got, ref, tol);
                }
    if (bad) {
        fprintf(stderr, "%s: %d wrong\n", what, bad);
        g_failures++;
    }
    free(x), free(w), free(cb), free(mean), free(var), free(g), free(beta), free(wphys), free(wo), free(bo), free(y);
    free(s), free(bref);
    WgcBuffer *all[] = {bx, bw, bcb, bm, bv, bg, bbeta, bwo, bbo, by};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgc_buffer_release(all[i]);
}

static void test_errors(void) {
    float data[256] = {0};
    for (int i = 0; i < 256; i++) data[i] = 1.0f;
    int64_t ws[4] = {4, 2, 3, 3}, ws3[3] = {4, 2, 9}, v4[1] = {4}, v5[1] = {5};
    WgcBuffer *bw = upload(env.device, data, sizeof data), *bv = upload(env.device, data, sizeof data);
    WgcBuffer *bo = NULL, *bb = NULL;
    CHECK(wgc_buffer_create(env.device, sizeof data, WGC_BUFFER_USAGE_STORAGE, &bo));
    CHECK(wgc_buffer_create(env.device, 64, WGC_BUFFER_USAGE_STORAGE, &bb));
    WgcTensor w = tensor_of(bw, WGC_DTYPE_F32, 4, ws), wo = tensor_of(bo, WGC_DTYPE_F32, 4, ws);
    WgcTensor v = tensor_of(bv, WGC_DTYPE_F32, 1, v4), bo4 = tensor_of(bb, WGC_DTYPE_F32, 1, v4);
    WgcTensor w3 = tensor_of(bw, WGC_DTYPE_F32, 3, ws3), v5t = tensor_of(bv, WGC_DTYPE_F32, 1, v5);
    WgcTensor vi = tensor_of(bv, WGC_DTYPE_I32, 1, v4), wi = tensor_of(bw, WGC_DTYPE_I32, 4, ws);
    WgcTensor woi = tensor_of(bo, WGC_DTYPE_I32, 4, ws), boi = tensor_of(bb, WGC_DTYPE_I32, 1, v4);
    CHECK(wgc_conv2d_fold_batch_norm(env.stream, &w, &v, &v, &v, &v, &v, 1e-5f, &wo, &bo4));
    CHECK(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 0.0f, &wo, &bo4));
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(NULL, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, NULL, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, NULL, &v, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, NULL, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, NULL, &bo4),
                  WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, NULL),
                  WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w3, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v5t, &v, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, &v5t, &v, &v, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, &v5t),
                  WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &w3, &bo4),
                  WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &vi, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &woi, &bo4),
                  WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &wi, NULL, &vi, &vi, NULL, NULL, 1e-5f, &woi, &boi),
                  WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, -1.0f, &wo, &bo4),
                  WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, NAN, &wo, &bo4),
                  WGC_ERROR_INVALID_ARGUMENT);
    /* outputs over an input, over each other */
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &w, &bo4),
                  WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, &v),
                  WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor bo_in_wo = tensor_of(bo, WGC_DTYPE_F32, 1, v4);
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &w, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, &bo_in_wo),
                  WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor past = w;
    past.offset = 200;
    EXPECT_STATUS(wgc_conv2d_fold_batch_norm(env.stream, &past, NULL, &v, &v, NULL, NULL, 1e-5f, &wo, &bo4),
                  WGC_ERROR_OUT_OF_RANGE);
    wgc_buffer_release(bw), wgc_buffer_release(bv), wgc_buffer_release(bo), wgc_buffer_release(bb);
}

int main(void) {
    env = test_env();
    for (int dti = 0; dti < 2; dti++) {
        WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        if (dti && !env.info.has_f16) break;
        check(dt, 2, 5, 7, 7, 3, 1, 1, 1, 1 | 2 | 4);
        check(dt, 2, 6, 9, 9, 3, 2, 1, 3, 2 | 4);
        check(dt, 1, 5, 6, 5, 3, 1, 1, 5, 1);
        check(dt, 3, 7, 5, 9, 1, 1, 0, 1, 1 | 2 | 4);
        check(dt, 2, 8, 6, 11, 3, 1, 1, 1, 1 | 2 | 4 | 8);
        check(dt, 1, 4, 5, 3, 3, 1, 1, 1, 0);
        check(dt, 1, 3, 5, 4, 3, 1, 1, 1, 1 | 2 | 4 | 16);
    }
    test_errors();
    return test_finish("test_conv_fold_bn");
}
