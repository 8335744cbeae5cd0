/* wgc_op_conv2d_bn_act_residual: out = act(conv(x, w) + b + residual)
 * (the batch norm already folded: `folded` set, then one call that folds)
 * against double: f32 and f16, 1x1 convolutions over channels-last packed
 * pixels (the GEMM route, whose epilogue adds the residual where its plan
 * fuses one), 3x3 and 5x5 ones (the tensor-core gather's epilogue adds it;
 * other routes a pass), odd channel
 * counts, strides, NCHW and NHWC images, residuals channels-last, NCHW,
 * with padded rows (no fold into GEMM rows), a channel slice of a wider
 * tensor and broadcast over the batch, NaN and infinities in the input and
 * the residual; then the misuse statuses, each leaving out untouched.
 *
 * Tolerance: test_conv_bn_act.c's for the convolution, plus one rounding
 * of the residual's sum (2^-10 relative in f16, 1e-6 in f32), times 1.5
 * (the activations' largest slope); non-finite references exactly. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"
#include "test_activation.h"
#include "test_vals.h"

static TestEnv env;

enum { RES_NHWC, RES_NCHW, RES_PADDED, RES_SLICE, RES_BCAST };
enum { NHWC = 1, NONFINITE = 2, FOLD = 4 };

/* The residual's strides (N, O, H, W) and the elements its buffer holds. */
static size_t residual_layout(int kind, int64_t N, int64_t O, int64_t H, int64_t W, int64_t *s) {
    int64_t row = W * O + 3;
    switch (kind) {
    case RES_NCHW: s[0] = O * H * W, s[1] = H * W, s[2] = W, s[3] = 1; return (size_t)(N * O * H * W);
    case RES_PADDED: s[0] = H * row, s[1] = 1, s[2] = row, s[3] = O; return (size_t)(N * H * row);
    case RES_SLICE: s[0] = H * W * 2 * O, s[1] = 1, s[2] = W * 2 * O, s[3] = 2 * O; return (size_t)(N * H * W * 2 * O);
    case RES_BCAST: s[0] = 0, s[1] = 1, s[2] = W * O, s[3] = O; return (size_t)(H * W * O);
    default: s[0] = H * W * O, s[1] = 1, s[2] = W * O, s[3] = O; return (size_t)(N * O * H * W);
    }
}

static void image_strides(int64_t C, int64_t H, int64_t W, int nhwc, int64_t *s) {
    if (nhwc) s[0] = H * W * C, s[1] = 1, s[2] = W * C, s[3] = C;
    else s[0] = C * H * W, s[1] = H * W, s[2] = W, s[3] = 1;
}

typedef struct {
    WgcDtype dt;
    int64_t N, C, H, O, K, stride;
    uint32_t act;
    int res, flags;
} Case;

static void check(Case t) {
    WgcDtype dt = t.dt;
    int f16 = dt == WGC_DTYPE_F16;
    int64_t N = t.N, C = t.C, H = t.H, O = t.O, K = t.K, pad = K / 2;
    int64_t OH = (H + 2 * pad - K) / t.stride + 1;
    int64_t xs[4] = {N, C, H, H}, ws[4] = {O, C, K, K}, os[4] = {N, O, OH, OH}, vs[1] = {O};
    size_t nx = (size_t)(N * C * H * H), nw = (size_t)(O * C * K * K), no = (size_t)(N * O * OH * OH);
    int64_t xst[4], yst[4], rst[4];
    image_strides(C, H, H, t.flags & NHWC, xst);
    image_strides(O, OH, OH, t.flags & NHWC, yst);
    size_t nr = residual_layout(t.res, N, O, OH, OH, rst);
    double *x = random_vals(dt, nx, -1, 1), *w = random_vals(dt, nw, -1, 1), *b = random_vals(dt, (size_t)O, -1, 1);
    double *r = random_vals(dt, nr, -2, 2);
    if (t.flags & NONFINITE) {
        x[0] = NAN, x[nx / 2] = INFINITY;
        r[1] = INFINITY, r[nr / 3] = -INFINITY, r[nr - 1] = NAN;
    }
    /* The batch norm to fold where FOLD: identity statistics but for a
     * scale of 2 (its exact in both dtypes), applied to w and b. */
    double *mean = calloc((size_t)O, sizeof(double)), *var = malloc((size_t)O * sizeof(double));
    double *gamma = malloc((size_t)O * sizeof(double));
    for (int64_t o = 0; o < O; o++) var[o] = 1, gamma[o] = 2;
    double scale = t.flags & FOLD ? 2.0 / sqrt(1 + 1e-5) : 1.0;
    WgcBuffer *bx = upload_vals(env.device, dt, x, nx), *bw = upload_vals(env.device, dt, w, nw);
    WgcBuffer *bb = upload_vals(env.device, dt, b, (size_t)O), *br = upload_vals(env.device, dt, r, nr);
    WgcBuffer *bm = upload_vals(env.device, dt, mean, (size_t)O), *bv = upload_vals(env.device, dt, var, (size_t)O);
    WgcBuffer *bg = upload_vals(env.device, dt, gamma, (size_t)O), *bwo = NULL, *bbo = NULL, *by = NULL;
    CHECK(wgc_buffer_create(env.device, nw * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &bwo));
    CHECK(wgc_buffer_create(env.device, (size_t)O * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &bbo));
    CHECK(wgc_buffer_create(env.device, no * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor tx = tensor_of(bx, dt, 4, xs), tw = tensor_of(bw, dt, 4, ws), tb = tensor_of(bb, dt, 1, vs);
    WgcTensor tr = tensor_of(br, dt, 4, os), ty = tensor_of(by, dt, 4, os), tm = tensor_of(bm, dt, 1, vs);
    WgcTensor tv = tensor_of(bv, dt, 1, vs), tg = tensor_of(bg, dt, 1, vs);
    WgcTensor two = tensor_of(bwo, dt, 4, ws), tbo = tensor_of(bbo, dt, 1, vs);
    for (int d = 0; d < 4; d++) tx.strides[d] = xst[d], ty.strides[d] = yst[d], tr.strides[d] = rst[d];
    /* x as it lies in memory */
    double *xphys = malloc((nx + 1) * sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < H * H; p++)
                xphys[n * xst[0] + c * xst[1] + p / H * xst[2] + p % H * xst[3]] = x[(n * C + c) * H * H + p];
    wgc_buffer_release(bx);
    bx = upload_vals(env.device, dt, xphys, nx);
    tx.buffer = bx;
    WgcConv2dBnActParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)t.stride;
    p.pad_h = p.pad_w = (uint32_t)pad;
    p.eps = 1e-5f;
    p.activation = t.act;
    if (t.flags & FOLD) {
        CHECK(wgc_op_conv2d_bn_act_residual(env.stream, &p, &tx, &tw, &tb, &tm, &tv, &tg, NULL, &two, &tbo, &tr, &ty));
    } else {
        p.folded = 1;
        CHECK(wgc_op_conv2d_bn_act_residual(env.stream, &p, &tx, NULL, NULL, NULL, NULL, NULL, NULL, &tw, &tb, &tr,
                                            &ty));
    }
    double *y = read_vals(by, dt, no);
    char what[160];
    snprintf(what, sizeof what, "%s N%lld C%lld H%lld O%lld k%lld s%lld act %u residual %d flags %d",
             f16 ? "f16" : "f32", (long long)N, (long long)C, (long long)H, (long long)O, (long long)K,
             (long long)t.stride, t.act, t.res, t.flags);
    double maxw = 0, kk = (double)(C * K * K);
    for (size_t i = 0; i < nw; i++) maxw = fmax(maxw, fabs(w[i] * scale));
    int bad = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OH; ox++) {
                    double acc = 0, mag = 0, xmax = 0;
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t ky = 0; ky < K; ky++)
                            for (int64_t kx = 0; kx < K; kx++) {
                                int64_t iy = oy * t.stride - pad + ky, ix = ox * t.stride - pad + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                                double xv = x[((n * C + c) * H + iy) * H + ix], wv = w[((o * C + c) * K + ky) * K + kx];
                                acc += xv * wv;
                                mag += fabs(xv * wv * scale);
                                xmax = fmax(xmax, fabs(xv));
                            }
                    double pre = (acc + b[o]) * scale;
                    double res = r[n * rst[0] + o * rst[1] + oy * rst[2] + ox * rst[3]];
                    double sum = pre + res, ref = activate(t.act, sum);
                    double tol = 1e-5 * (1 + sqrt(kk)) * maxw * fmax(xmax, 1) + 1e-6 * (fabs(pre) + fabs(b[o]));
                    if (f16) tol += (mag + fabs(pre) + fabs(b[o] * scale)) / 1024;
                    tol += (f16 ? 1.0 / 1024 : 1e-6) * (fabs(res) + fabs(sum));
                    tol = 1.5 * tol + (f16 ? fabs(ref) / 1024 : 1e-6 * fabs(ref));
                    double got = y[n * yst[0] + o * yst[1] + oy * yst[2] + ox * yst[3]];
                    int ok = isnan(ref) ? isnan(got) : isinf(ref) ? got == ref : fabs(got - ref) <= tol;
                    if (!ok && bad++ < 3)
                        fprintf(stderr, "%s: out[%lld, %lld, %lld, %lld] = %.9g, expected %.9g (tol %.3g)\n", what,
                                (long long)n, (long long)o, (long long)oy, (long long)ox, got, ref, tol);
                }
    if (bad) {
        fprintf(stderr, "%s: %d wrong\n", what, bad);
        g_failures++;
    }
    free(x), free(xphys), free(w), free(b), free(r), free(y), free(mean), free(var), free(gamma);
    WgcBuffer *all[] = {bx, bw, bb, br, bm, bv, bg, bwo, bbo, by};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgc_buffer_release(all[i]);
}

/* Every failing call leaves out as it was. */
static void test_errors(void) {
    float ones[512], sentinel[512];
    for (int i = 0; i < 512; i++) ones[i] = 1.0f, sentinel[i] = 42.0f;
    int64_t xs[4] = {1, 2, 4, 4}, ws[4] = {4, 2, 1, 1}, os[4] = {1, 4, 4, 4}, os_bad[4] = {1, 4, 4, 3};
    WgcBuffer *bx = upload(env.device, ones, sizeof ones), *bw = upload(env.device, ones, sizeof ones);
    WgcBuffer *br = upload(env.device, ones, sizeof ones), *by = upload(env.device, sentinel, sizeof sentinel);
    const WgcDtype F = WGC_DTYPE_F32;
    WgcTensor x = tensor_of(bx, F, 4, xs), w = tensor_of(bw, F, 4, ws), y = tensor_of(by, F, 4, os);
    WgcTensor r = tensor_of(br, F, 4, os), r_bad = tensor_of(br, F, 4, os_bad);
    WgcTensor r16 = tensor_of(br, WGC_DTYPE_F16, 4, os), r_is_y = y, r_over_y = y;
    r_over_y.offset = 3; /* shares elements with out, not its view */
    WgcConv2dBnActParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.activation = WGC_ACTIVATION_RELU;
    p.folded = 1;
    const WgcStream *st = env.stream;
#define E(expected, res, out) \
    EXPECT_STATUS(wgc_op_conv2d_bn_act_residual(st, &p, &x, NULL, NULL, NULL, NULL, NULL, NULL, &w, NULL, res, out), \
                  expected)
    E(WGC_ERROR_NULL_POINTER, NULL, &y);
    E(WGC_ERROR_NULL_POINTER, &r, NULL);
    E(WGC_ERROR_SHAPE_MISMATCH, &r_bad, &y);
    E(WGC_ERROR_DTYPE_MISMATCH, &r16, &y);
    E(WGC_ERROR_INVALID_ARGUMENT, &r_is_y, &y);
    E(WGC_ERROR_INVALID_ARGUMENT, &r_over_y, &y);
#undef E
    EXPECT_STATUS(wgc_op_conv2d_bn_act_residual(NULL, &p, &x, NULL, NULL, NULL, NULL, NULL, NULL, &w, NULL, &r, &y),
                  WGC_ERROR_NULL_POINTER);
    /* Folding: the residual may not be a folded tensor's memory. */
    int64_t v4[1] = {4};
    WgcTensor v = tensor_of(bw, F, 1, v4), wo_over_r = tensor_of(br, F, 4, ws), bo = tensor_of(bx, F, 1, v4);
    WgcConv2dBnActParams q = p;
    q.folded = 0, q.eps = 1e-5f;
    bo.offset = 100;
    EXPECT_STATUS(wgc_op_conv2d_bn_act_residual(st, &q, &x, &w, NULL, &v, &v, NULL, NULL, &wo_over_r, &bo, &r, &y),
                  WGC_ERROR_INVALID_ARGUMENT);
    float *got = malloc(sizeof sentinel);
    CHECK(wgc_buffer_read(by, 0, got, sizeof sentinel));
    EXPECT(memcmp(got, sentinel, sizeof sentinel) == 0);
    /* relu(conv(ones, ones) + ones) = 3 everywhere. */
    CHECK(wgc_op_conv2d_bn_act_residual(st, &p, &x, NULL, NULL, NULL, NULL, NULL, NULL, &w, NULL, &r, &y));
    CHECK(wgc_buffer_read(by, 0, got, 64 * sizeof(float)));
    EXPECT(got[0] == 3.0f && got[37] == 3.0f && got[63] == 3.0f && got[64 - 1] == 3.0f);
    free(got);
    WgcBuffer *all[] = {bx, bw, br, by};
    for (size_t i = 0; i < 4; i++) wgc_buffer_release(all[i]);
}

int main(void) {
    env = test_env();
    const uint32_t R = WGC_ACTIVATION_RELU, R6 = WGC_ACTIVATION_RELU6, S = WGC_ACTIVATION_SILU,
                   NONE = WGC_ACTIVATION_NONE;
    for (int dti = 0; dti < 2; dti++) {
        WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        if (dti && !env.info.has_f16) break;
        /* 1x1 over channels-last pixels: one GEMM over all images. */
        check((Case){dt, 3, 16, 5, 24, 1, 1, R, RES_NHWC, NHWC | FOLD});
        check((Case){dt, 2, 16, 6, 8, 1, 1, NONE, RES_NCHW, NHWC});     /* residual per image */
        check((Case){dt, 2, 8, 5, 16, 1, 1, R6, RES_PADDED, NHWC});     /* no fold: a pass */
        check((Case){dt, 2, 24, 4, 16, 1, 1, S, RES_SLICE, NHWC | NONFINITE});
        check((Case){dt, 3, 8, 3, 8, 1, 1, R, RES_BCAST, NHWC});
        check((Case){dt, 2, 5, 7, 7, 1, 1, R, RES_NHWC, NHWC | NONFINITE}); /* odd channels */
        /* Tensor-core gathers (f16, 8k channels) add it in their
         * epilogue: blocks across M's and N's edges (24 and 40 channels,
         * 243 pixels), inner fragments of edge blocks (96 channels). */
        check((Case){dt, 3, 16, 9, 24, 3, 1, R, RES_NHWC, NHWC});
        check((Case){dt, 2, 32, 12, 96, 1, 1, R6, RES_NHWC, NHWC | NONFINITE});
        check((Case){dt, 2, 16, 9, 40, 3, 2, NONE, RES_SLICE, NHWC});
        /* f32 3x3 and 5x5 on the implicit GEMM, residuals of other
         * strides than the output's. */
        check((Case){dt, 2, 6, 9, 12, 5, 1, R6, RES_PADDED, NONFINITE});
        check((Case){dt, 3, 5, 11, 7, 3, 2, R, RES_SLICE, NHWC});
        check((Case){dt, 2, 4, 8, 9, 3, 2, S, RES_NCHW, NONFINITE});
        /* More NCHW and 3x3 convolutions. */
        check((Case){dt, 2, 5, 9, 7, 1, 1, R, RES_NCHW, NONFINITE});
        check((Case){dt, 2, 8, 7, 8, 3, 1, R, RES_NHWC, NHWC | FOLD});
        check((Case){dt, 1, 6, 9, 5, 3, 2, NONE, RES_NCHW, 0});
    }
    test_errors();
    return test_finish("test_conv_residual");
}
