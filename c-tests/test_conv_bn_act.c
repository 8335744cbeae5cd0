/* wgc_op_conv2d_bn_act: convolution, inference batch norm and activation
 * against convolution then batch norm then the activation in double: f32
 * and f16, every activation (applied in the routes' epilogues or in a pass
 * of its own), odd channel counts, strides, padding, groups
 * (depthwise too), channels-last input, output and folded weight, with and
 * without the convolution's bias and the batch norm's affine, NaN and
 * infinite inputs; a second call with `folded` set on a new input (the
 * statistics not passed); then the misuse statuses, each leaving the
 * outputs untouched.
 *
 * Tolerance: the folded convolution's (test_conv_fold_bn.c's: 1e-5 *
 * (1 + sqrt(K)) * max|x| * max|w'| + 1e-6 * |ref|, plus 2^-10 * (sum|x w'|
 * + |ref|) in f16), times 1.5 (the activations' largest slope), plus the
 * activation's rounding; non-finite references exactly (NaN as NaN). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"
#include "test_activation.h"
#include "test_vals.h"

static TestEnv env;

/* Strides of (N, C, H, W) in NCHW or NHWC memory. */
static void image_strides(int64_t C, int64_t H, int64_t W, int nhwc, int64_t *s) {
    if (nhwc) s[0] = H * W * C, s[1] = 1, s[2] = W * C, s[3] = C;
    else s[0] = C * H * W, s[1] = H * W, s[2] = W, s[3] = 1;
}

enum { CONV_BIAS = 1, BN_AFFINE = 2, NHWC = 4, CL_WEIGHT = 8, NONFINITE = 16 };

typedef struct {
    WgcDtype dt;
    int64_t N, C, H, O, K, stride, pad, groups;
    uint32_t act;
    int flags;
} Case;

static void check(Case t) {
    WgcDtype dt = t.dt;
    int f16 = dt == WGC_DTYPE_F16;
    int64_t N = t.N, C = t.C, H = t.H, O = t.O, K = t.K, groups = t.groups;
    int64_t Cg = C / groups, Og = O / groups, OH = (H + 2 * t.pad - K) / t.stride + 1;
    int64_t xs[4] = {N, C, H, H}, ws[4] = {O, Cg, K, K}, os[4] = {N, O, OH, OH}, vs[1] = {O};
    size_t nx = (size_t)(N * C * H * H), nw = (size_t)(O * Cg * K * K), no = (size_t)(N * O * OH * OH);
    double *x[2] = {random_vals(dt, nx, -1, 1), random_vals(dt, nx, -1, 1)};
    double *w = random_vals(dt, nw, -1, 1), *cb = random_vals(dt, (size_t)O, -1, 1);
    double *mean = random_vals(dt, (size_t)O, -1, 1), *var = random_vals(dt, (size_t)O, 0.1, 2);
    double *g = random_vals(dt, (size_t)O, 0.5, 2), *beta = random_vals(dt, (size_t)O, -1, 1);
    if (t.flags & NONFINITE)
        for (int j = 0; j < 2; j++) {
            x[j][0] = NAN;
            x[j][nx / 2] = INFINITY;
            x[j][nx - 1] = -INFINITY;
        }
    int64_t xst[4], yst[4], wst[4] = {Cg * K * K, K * K, K, 1};
    image_strides(C, H, H, t.flags & NHWC, xst);
    image_strides(O, OH, OH, t.flags & NHWC, yst);
    if (t.flags & CL_WEIGHT) wst[1] = 1, wst[2] = K * Cg, wst[3] = Cg;
    double *xphys[2];
    for (int j = 0; j < 2; j++) {
        xphys[j] = malloc((nx + 1) * sizeof(double));
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t p = 0; p < H * H; p++)
                    xphys[j][n * xst[0] + c * xst[1] + p / H * xst[2] + p % H * xst[3]] = x[j][(n * C + c) * H * H + p];
    }
    WgcBuffer *bx[2] = {upload_vals(env.device, dt, xphys[0], nx), upload_vals(env.device, dt, xphys[1], nx)};
    WgcBuffer *bw = upload_vals(env.device, dt, w, nw), *bcb = upload_vals(env.device, dt, cb, (size_t)O);
    WgcBuffer *bm = upload_vals(env.device, dt, mean, (size_t)O), *bv = upload_vals(env.device, dt, var, (size_t)O);
    WgcBuffer *bg = upload_vals(env.device, dt, g, (size_t)O), *bbeta = upload_vals(env.device, dt, beta, (size_t)O);
    WgcBuffer *bwo = NULL, *bbo = NULL, *by = NULL;
    CHECK(wgc_buffer_create(env.device, nw * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &bwo));
    CHECK(wgc_buffer_create(env.device, (size_t)O * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &bbo));
    CHECK(wgc_buffer_create(env.device, no * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor tx[2] = {tensor_of(bx[0], dt, 4, xs), tensor_of(bx[1], dt, 4, xs)};
    WgcTensor tw = tensor_of(bw, dt, 4, ws), two = tensor_of(bwo, dt, 4, ws), ty = tensor_of(by, dt, 4, os);
    for (int d = 0; d < 4; d++) tx[0].strides[d] = tx[1].strides[d] = xst[d], ty.strides[d] = yst[d];
    for (int d = 0; d < 4; d++) two.strides[d] = wst[d];
    WgcTensor tcb = tensor_of(bcb, dt, 1, vs), tm = tensor_of(bm, dt, 1, vs), tv = tensor_of(bv, dt, 1, vs);
    WgcTensor tg = tensor_of(bg, dt, 1, vs), tbeta = tensor_of(bbeta, dt, 1, vs), tbo = tensor_of(bbo, dt, 1, vs);
    int has_cb = t.flags & CONV_BIAS, affine = t.flags & BN_AFFINE;
    WgcConv2dBnActParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)t.stride;
    p.pad_h = p.pad_w = (uint32_t)t.pad;
    p.groups = (uint32_t)groups;
    p.eps = 1e-5f;
    p.activation = t.act;
    char what[160];
    snprintf(what, sizeof what, "%s N%lld C%lld H%lld O%lld k%lld s%lld p%lld g%lld act %u flags %d", f16 ? "f16" : "f32",
             (long long)N, (long long)C, (long long)H, (long long)O, (long long)K, (long long)t.stride,
             (long long)t.pad, (long long)groups, t.act, t.flags);
    double *s = malloc((size_t)O * sizeof(double)), *bref = malloc((size_t)O * sizeof(double)), max_wo = 0;
    for (int64_t o = 0; o < O; o++) {
        s[o] = (affine ? g[o] : 1.0) / sqrt(var[o] + 1e-5);
        bref[o] = ((has_cb ? cb[o] : 0.0) - mean[o]) * s[o] + (affine ? beta[o] : 0.0);
        for (int64_t k = 0; k < Cg * K * K; k++) max_wo = fmax(max_wo, fabs(w[o * Cg * K * K + k] * s[o]));
    }
    double kk = (double)(Cg * K * K);
    int bad = 0;
    for (int j = 0; j < 2; j++) {
        /* First call folds; the second reuses the fold on another input. */
        p.folded = (uint32_t)j;
        if (j == 0)
            CHECK(wgc_op_conv2d_bn_act(env.stream, &p, &tx[0], &tw, has_cb ? &tcb : NULL, &tm, &tv,
                                       affine ? &tg : NULL, affine ? &tbeta : NULL, &two, &tbo, &ty));
        else
            CHECK(wgc_op_conv2d_bn_act(env.stream, &p, &tx[1], NULL, NULL, NULL, NULL, NULL, NULL, &two, &tbo, &ty));
        double *y = read_vals(by, dt, no);
        for (int64_t n = 0; n < N; n++)
            for (int64_t o = 0; o < O; o++)
                for (int64_t oy = 0; oy < OH; oy++)
                    for (int64_t ox = 0; ox < OH; ox++) {
                        int64_t gi = o / Og;
                        double acc = 0, mag = 0, xmax = 0;
                        for (int64_t c = 0; c < Cg; c++)
                            for (int64_t ky = 0; ky < K; ky++)
                                for (int64_t kx = 0; kx < K; kx++) {
                                    int64_t iy = oy * t.stride - t.pad + ky, ix = ox * t.stride - t.pad + kx;
                                    if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                                    double xv = x[j][((n * C + gi * Cg + c) * H + iy) * H + ix];
                                    double wv = w[((o * Cg + c) * K + ky) * K + kx];
                                    acc += xv * wv;
                                    mag += fabs(xv * wv * s[o]);
                                    xmax = fmax(xmax, fabs(xv));
                                }
                        double pre = ((acc + (has_cb ? cb[o] : 0.0)) - mean[o]) / sqrt(var[o] + 1e-5) *
                                         (affine ? g[o] : 1.0) +
                                     (affine ? beta[o] : 0.0);
                        double ref = activate(t.act, pre);
                        double tol = 1e-5 * (1 + sqrt(kk)) * max_wo * fmax(xmax, 1) + 1e-6 * fabs(pre) +
                                     1e-6 * fabs(bref[o]);
                        if (f16) tol += (mag + fabs(pre) + fabs(bref[o])) / 1024;
                        tol = 1.5 * tol + (f16 ? fabs(ref) / 1024 : 1e-6 * fabs(ref));
                        double got = y[n * yst[0] + o * yst[1] + oy * yst[2] + ox * yst[3]];
                        int ok = isnan(ref) ? isnan(got) : isinf(ref) ? got == ref : fabs(got - ref) <= tol;
                        if (!ok && bad++ < 3)
                            fprintf(stderr, "%s call %d: out[%lld, %lld, %lld, %lld] = %.9g, expected %.9g (tol %.3g)\n",
                                    what, j, (long long)n, (long long)o, (long long)oy, (long long)ox, got, ref, tol);
                    }
        free(y);
    }
    if (bad) {
        fprintf(stderr, "%s: %d wrong\n", what, bad);
        g_failures++;
    }
    for (int j = 0; j < 2; j++) free(x[j]), free(xphys[j]), wgc_buffer_release(bx[j]);
    free(w), free(cb), free(mean), free(var), free(g), free(beta), free(s), free(bref);
    WgcBuffer *all[] = {bw, bcb, bm, bv, bg, bbeta, bwo, bbo, by};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgc_buffer_release(all[i]);
}

/* Every failing call below leaves out and the folded tensors as they were. */
static void test_errors(void) {
    float ones[512], sentinel[512];
    for (int i = 0; i < 512; i++) ones[i] = 1.0f, sentinel[i] = 42.0f;
    int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {4, 2, 3, 3}, os[4] = {1, 4, 5, 5}, os_bad[4] = {1, 4, 4, 4};
    int64_t v4[1] = {4}, v5[1] = {5}, ws_bad[4] = {4, 3, 3, 3};
    WgcBuffer *bx = upload(env.device, ones, sizeof ones), *bw = upload(env.device, ones, sizeof ones);
    WgcBuffer *bv = upload(env.device, ones, sizeof ones), *bwo = upload(env.device, sentinel, sizeof sentinel);
    WgcBuffer *bbo = upload(env.device, sentinel, 64), *by = upload(env.device, sentinel, sizeof sentinel);
    const WgcDtype F = WGC_DTYPE_F32;
    WgcTensor x = tensor_of(bx, F, 4, xs), w = tensor_of(bw, F, 4, ws), v = tensor_of(bv, F, 1, v4);
    WgcTensor wo = tensor_of(bwo, F, 4, ws), bo = tensor_of(bbo, F, 1, v4), y = tensor_of(by, F, 4, os);
    WgcTensor y_bad = tensor_of(by, F, 4, os_bad), v5t = tensor_of(bv, F, 1, v5), wo_bad = tensor_of(bwo, F, 4, ws_bad);
    WgcTensor xi = tensor_of(bx, WGC_DTYPE_I32, 4, xs), y16 = tensor_of(by, WGC_DTYPE_F16, 4, os);
    WgcTensor wo_over_x = tensor_of(bx, F, 4, ws), y_over_x = tensor_of(bx, F, 4, os);
    WgcConv2dBnActParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.pad_h = p.pad_w = 1;
    p.eps = 1e-5f;
    p.activation = WGC_ACTIVATION_RELU;
    const WgcStream *st = env.stream;
#define E(expected, ...) EXPECT_STATUS(wgc_op_conv2d_bn_act(__VA_ARGS__), expected)
    E(WGC_ERROR_NULL_POINTER, NULL, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    E(WGC_ERROR_NULL_POINTER, st, NULL, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    E(WGC_ERROR_NULL_POINTER, st, &p, NULL, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    E(WGC_ERROR_NULL_POINTER, st, &p, &x, NULL, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    E(WGC_ERROR_NULL_POINTER, st, &p, &x, &w, NULL, NULL, &v, NULL, NULL, &wo, &bo, &y);
    E(WGC_ERROR_NULL_POINTER, st, &p, &x, &w, NULL, &v, NULL, NULL, NULL, &wo, &bo, &y);
    E(WGC_ERROR_NULL_POINTER, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, NULL, &bo, &y);
    E(WGC_ERROR_NULL_POINTER, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo, NULL, &y); /* folding needs it */
    E(WGC_ERROR_NULL_POINTER, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, NULL);
    E(WGC_ERROR_SHAPE_MISMATCH, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y_bad);
    E(WGC_ERROR_SHAPE_MISMATCH, st, &p, &x, &w, NULL, &v5t, &v, NULL, NULL, &wo, &bo, &y);
    E(WGC_ERROR_SHAPE_MISMATCH, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo_bad, &bo, &y);
    E(WGC_ERROR_SHAPE_MISMATCH, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &v5t, &y);
    E(WGC_ERROR_DTYPE_MISMATCH, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y16);
    E(WGC_ERROR_DTYPE_MISMATCH, st, &p, &xi, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    /* out over the input; the fold's output over the input */
    E(WGC_ERROR_INVALID_ARGUMENT, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y_over_x);
    E(WGC_ERROR_INVALID_ARGUMENT, st, &p, &x, &w, NULL, &v, &v, NULL, NULL, &wo_over_x, &bo, &y);
    WgcConv2dBnActParams q = p;
    q.activation = WGC_NUM_ACTIVATIONS;
    E(WGC_ERROR_INVALID_ARGUMENT, st, &q, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    q = p, q.eps = -1.0f;
    E(WGC_ERROR_INVALID_ARGUMENT, st, &q, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    q = p, q.struct_size = 0;
    E(WGC_ERROR_INVALID_ARGUMENT, st, &q, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
    q = p, q.groups = 3;
    E(WGC_ERROR_SHAPE_MISMATCH, st, &q, &x, &w, NULL, &v, &v, NULL, NULL, &wo, &bo, &y);
#undef E
    float *got = malloc(sizeof sentinel);
    CHECK(wgc_buffer_read(by, 0, got, sizeof sentinel));
    EXPECT(memcmp(got, sentinel, sizeof sentinel) == 0);
    CHECK(wgc_buffer_read(bwo, 0, got, sizeof sentinel));
    EXPECT(memcmp(got, sentinel, sizeof sentinel) == 0);
    CHECK(wgc_buffer_read(bbo, 0, got, 64));
    EXPECT(memcmp(got, sentinel, 64) == 0);
    /* With `folded` set the statistics are not needed, and a NULL folded
     * bias means no bias: relu(conv(ones, ones)) counts the window's taps. */
    WgcTensor w_as_folded = w;
    p.folded = 1;
    CHECK(wgc_op_conv2d_bn_act(st, &p, &x, NULL, NULL, NULL, NULL, NULL, NULL, &w_as_folded, NULL, &y));
    CHECK(wgc_buffer_read(by, 0, got, 100 * sizeof(float)));
    EXPECT(got[0] == 8.0f && got[6] == 18.0f && got[99] == 8.0f);
    free(got);
    WgcBuffer *all[] = {bx, bw, bv, bwo, bbo, by};
    for (size_t i = 0; i < 6; i++) wgc_buffer_release(all[i]);
}

/* f32 convolutions whose K the implicit GEMM splits into f32 slabs (the
 * pass that adds them applies the bias and the activation), on a device
 * whose split fill makes every few-tile case split, all slabs in one pass:
 * odd sizes over several tiles, groups, strides, channels-last input,
 * output and weight, NaN and infinities. Then with scratch for one slab:
 * the others unsplit, and the two runs K past 16,384 needs one slab a
 * pass (the second adding into the output, the activation with it). */
static void test_split_passes(void) {
    TestEnv base = env;
    setenv("WGC_CONV_SPLIT_FILL", "100000", 1);
    TestEnv one_pass = test_env(), passes = test_env_setting("WGC_CONV_SCRATCH_BYTES", "4");
    unsetenv("WGC_CONV_SPLIT_FILL");
    const uint32_t R6 = WGC_ACTIVATION_RELU6, S = WGC_ACTIVATION_SILU, G = WGC_ACTIVATION_GELU;
    const Case cases[] = {
        {WGC_DTYPE_F32, 2, 130, 7, 67, 3, 1, 1, 1, R6, CONV_BIAS | BN_AFFINE | NONFINITE}, /* 2 x 2 tiles, K 1170 */
        {WGC_DTYPE_F32, 1, 200, 6, 9, 3, 2, 1, 1, S, NHWC | CL_WEIGHT | NONFINITE},        /* K 1800, stride 2 */
        {WGC_DTYPE_F32, 2, 256, 5, 6, 3, 1, 1, 2, G, CONV_BIAS | BN_AFFINE},               /* groups 2 */
        {WGC_DTYPE_F32, 1, 1900, 3, 5, 3, 1, 1, 1, WGC_ACTIVATION_HARDSWISH, CONV_BIAS | NHWC | NONFINITE},
    };
    TestEnv *envs[] = {&one_pass, &passes};
    for (int e = 0; e < 2; e++) {
        env = *envs[e];
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(cases[i]);
        test_env_release(envs[e]);
    }
    env = base;
}

int main(void) {
    env = test_env();
    const uint32_t R = WGC_ACTIVATION_RELU, R6 = WGC_ACTIVATION_RELU6, HS = WGC_ACTIVATION_HARDSWISH;
    for (int dti = 0; dti < 2; dti++) {
        WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        if (dti && !env.info.has_f16) break;
        check((Case){dt, 2, 5, 7, 7, 3, 1, 1, 1, R, CONV_BIAS | BN_AFFINE});
        check((Case){dt, 2, 6, 9, 9, 3, 2, 1, 3, R6, BN_AFFINE | NHWC});
        check((Case){dt, 1, 5, 6, 5, 3, 1, 1, 5, R6, BN_AFFINE | NONFINITE});        /* depthwise */
        check((Case){dt, 2, 7, 9, 7, 3, 2, 1, 7, R6, BN_AFFINE | NHWC | CL_WEIGHT}); /* depthwise, strided */
        check((Case){dt, 1, 7, 17, 9, 1, 1, 0, 1, WGC_ACTIVATION_NONE, CONV_BIAS | BN_AFFINE}); /* GEMM route */
        check((Case){dt, 1, 8, 17, 11, 1, 1, 0, 1, R, BN_AFFINE | NHWC | CL_WEIGHT});
        check((Case){dt, 2, 8, 6, 11, 3, 1, 1, 1, HS, CONV_BIAS | BN_AFFINE | CL_WEIGHT | NHWC | NONFINITE});
        check((Case){dt, 1, 3, 11, 8, 7, 2, 3, 1, R, BN_AFFINE}); /* a stem: 3 channels, 7x7, stride 2 */
        check((Case){dt, 1, 4, 5, 3, 3, 1, 1, 1, R, 0});
        /* The activations the routes apply in their epilogue: the implicit
         * GEMM (f32) or im2col (f16 here) for 3x3, the GEMM for 1x1, and
         * split K (f32: the pass that adds the implicit GEMM's slabs). */
        const uint32_t G = WGC_ACTIVATION_GELU, GT = WGC_ACTIVATION_GELU_TANH, S = WGC_ACTIVATION_SILU,
                       T = WGC_ACTIVATION_TANH;
        check((Case){dt, 2, 5, 7, 7, 3, 1, 1, 1, G, CONV_BIAS | BN_AFFINE | NONFINITE});
        check((Case){dt, 2, 6, 9, 9, 3, 2, 1, 1, GT, BN_AFFINE | NHWC});
        check((Case){dt, 1, 8, 17, 11, 1, 1, 0, 1, S, CONV_BIAS | BN_AFFINE | NONFINITE});
        check((Case){dt, 1, 7, 17, 9, 1, 1, 0, 1, T, BN_AFFINE | NHWC | CL_WEIGHT});
        check((Case){dt, 1, 6, 5, 6, 3, 1, 1, 6, S, BN_AFFINE}); /* depthwise: a pass of its own */
        check((Case){dt, 1, 128, 5, 8, 3, 1, 1, 1, G, CONV_BIAS | BN_AFFINE}); /* K 1152 over one tile */
    }
    test_split_passes();
    test_errors();
    return test_finish("test_conv_bn_act");
}
