/* f16 convolutions with few input channels (the first layer of a vision
 * net: the im2col_stem route) against double-precision references:
 * ResNet-50's 7x7/2 and MobileNetV2's 3x3/2 stems at small odd sizes, 1, 2,
 * 3 and 5 channels, non-square windows, NCHW and channels-last inputs and
 * outputs in every pairing, with and without bias, no activation, ReLU,
 * ReLU6 and hardswish (wgc_op_conv2d_bn_act with `folded` set: the
 * convolution, its bias and the activation), NaN and infinite inputs, and
 * a batch cut into one image per columns pass (WGC_CONV_COLS_BYTES).
 * Where the KHR gather runs, the 7x7 windows and channels-last outputs
 * run padded for it: in pixel pairs of 4 channels where the stride along
 * a row is 2 (by default), else padded to 8 channels (WGC_CONV_STEM=pad8:
 * every case; =columns: none).
 * The explanation names the route and says the activation is applied in
 * its epilogue, and the profiler sees the route's kernels.
 *
 * Tolerance (f16 operands, f32 accumulation, one f16 rounding of the
 * output): 2^-10 * (sum |x w| + |bias| + |ref|) + 1e-6; non-finite
 * references exactly (NaN as NaN). */
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

enum { BIAS = 1, NHWC_IN = 2, NHWC_OUT = 4, NONFINITE = 8 };

typedef struct {
    int64_t N, C, H, W, O, KH, KW, stride, pad;
    uint32_t act;
    int flags;
} Case;

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* wgc_op_conv2d_explain's text for these operands, in a buffer the caller
 * frees. */
static char *explain(TestEnv *e, const WgcConv2dParams *p, const WgcTensor *x, const WgcTensor *w, const WgcTensor *b,
                     const WgcTensor *y) {
    size_t len = 0;
    CHECK(wgc_op_conv2d_explain(e->stream, p, x, w, b, y, NULL, 0, &len));
    char *text = malloc(len + 1);
    CHECK(wgc_op_conv2d_explain(e->stream, p, x, w, b, y, text, len + 1, &len));
    return text;
}

/* The names of the kernels one call ran include `kernel`. */
static int profiled_kernel(TestEnv *e, const char *kernel) {
    WgcProfileRecord *r = NULL;
    size_t n = 0;
    CHECK(wgc_stream_profile_records(e->stream, &r, &n));
    int found = 0;
    for (size_t i = 0; i < n; i++) found |= starts_with(r[i].kernel, kernel);
    if (!found)
        for (size_t i = 0; i < n; i++) fprintf(stderr, "  ran %s\n", r[i].kernel);
    CHECK(wgc_profile_records_free(r));
    CHECK(wgc_stream_profile_clear(e->stream));
    return found;
}

static void check(TestEnv *e, Case t) {
    const WgcDtype dt = WGC_DTYPE_F16;
    int64_t N = t.N, C = t.C, H = t.H, W = t.W, O = t.O, KH = t.KH, KW = t.KW;
    int64_t OH = (H + 2 * t.pad - KH) / t.stride + 1, OW = (W + 2 * t.pad - KW) / t.stride + 1;
    int64_t xs[4] = {N, C, H, W}, ws[4] = {O, C, KH, KW}, os[4] = {N, O, OH, OW}, vs[1] = {O};
    size_t nx = (size_t)(N * C * H * W), nw = (size_t)(O * C * KH * KW), no = (size_t)(N * O * OH * OW);
    double *x = random_vals(dt, nx, -1, 1), *w = random_vals(dt, nw, -1, 1), *b = random_vals(dt, (size_t)O, -1, 1);
    if (t.flags & NONFINITE) x[0] = NAN, x[nx / 2] = INFINITY, x[nx - 1] = -INFINITY;
    int64_t xst[4], yst[4];
    image_strides(C, H, W, t.flags & NHWC_IN, xst);
    image_strides(O, OH, OW, t.flags & NHWC_OUT, yst);
    double *xphys = malloc((nx + 1) * sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < H * W; p++)
                xphys[n * xst[0] + c * xst[1] + p / W * xst[2] + p % W * xst[3]] = x[(n * C + c) * H * W + p];
    /* A sentinel past the output: nothing is written there. */
    double *sentinel = malloc((no + 8) * sizeof(double));
    for (size_t i = 0; i < no + 8; i++) sentinel[i] = 42.0;
    WgcBuffer *bx = upload_vals(e->device, dt, xphys, nx), *bw = upload_vals(e->device, dt, w, nw);
    WgcBuffer *bb = upload_vals(e->device, dt, b, (size_t)O), *by = upload_vals(e->device, dt, sentinel, no + 8);
    WgcTensor tx = tensor_of(bx, dt, 4, xs), tw = tensor_of(bw, dt, 4, ws), ty = tensor_of(by, dt, 4, os);
    WgcTensor tb = tensor_of(bb, dt, 1, vs);
    for (int d = 0; d < 4; d++) tx.strides[d] = xst[d], ty.strides[d] = yst[d];
    int has_b = t.flags & BIAS;
    char what[160];
    snprintf(what, sizeof what, "N%lld C%lld %lldx%lld O%lld k%lldx%lld s%lld p%lld act %u flags %d", (long long)N,
             (long long)C, (long long)H, (long long)W, (long long)O, (long long)KH, (long long)KW, (long long)t.stride,
             (long long)t.pad, t.act, t.flags);

    CHECK(wgc_stream_set_profiling(e->stream, 1));
    WgcConv2dBnActParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)t.stride;
    p.pad_h = p.pad_w = (uint32_t)t.pad;
    p.groups = 1;
    p.activation = t.act;
    p.folded = 1;
    WgcConv2dParams cp = {sizeof(WgcConv2dParams), p.stride_h, p.stride_w, p.pad_h, p.pad_w, 1, 1, 1};
    char *text = explain(e, &cp, &tx, &tw, has_b ? &tb : NULL, &ty);
    if (!starts_with(text, "route im2col_stem (") || !strstr(text, "; activation: in the route's epilogue")) {
        fprintf(stderr, "%s: explained as %s\n", what, text);
        g_failures++;
    }
    /* Padded to 8 channels (where the KHR gather runs): the padding
     * kernel, no columns. */
    const char *kernel =
        strstr(text, "channels padded to 8") || strstr(text, "pixel pairs") ? "conv_pad_channels.wgsl:pad_channels"
                                                                            : "conv_im2col.wgsl:conv_im2col8";
    free(text);
    if (t.act == WGC_ACTIVATION_NONE) {
        CHECK(wgc_op_conv2d(e->stream, &cp, &tx, &tw, has_b ? &tb : NULL, &ty));
    } else {
        CHECK(wgc_op_conv2d_bn_act(e->stream, &p, &tx, NULL, NULL, NULL, NULL, NULL, NULL, &tw, has_b ? &tb : NULL,
                                   &ty));
    }
    CHECK(wgc_stream_set_profiling(e->stream, 0));
    if (!profiled_kernel(e, kernel)) {
        fprintf(stderr, "%s: no kernel %s ran\n", what, kernel);
        g_failures++;
    }
    double *y = read_vals(by, dt, no + 8);
    int bad = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    double acc = has_b ? b[o] : 0.0, mag = fabs(acc);
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t ky = 0; ky < KH; ky++)
                            for (int64_t kx = 0; kx < KW; kx++) {
                                int64_t iy = oy * t.stride - t.pad + ky, ix = ox * t.stride - t.pad + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                double v = x[((n * C + c) * H + iy) * W + ix] * w[((o * C + c) * KH + ky) * KW + kx];
                                acc += v;
                                mag += fabs(v);
                            }
                    double ref = activate(t.act, acc);
                    double tol = (mag + fabs(ref)) / 1024 + 1e-6;
                    double got = y[n * yst[0] + o * yst[1] + oy * yst[2] + ox * yst[3]];
                    int ok = isnan(ref) ? isnan(got) : isinf(ref) ? got == ref : fabs(got - ref) <= tol;
                    if (!ok && bad++ < 3)
                        fprintf(stderr, "%s: out[%lld, %lld, %lld, %lld] = %.9g, expected %.9g (tol %.3g)\n", what,
                                (long long)n, (long long)o, (long long)oy, (long long)ox, got, ref, tol);
                }
    for (size_t i = no; i < no + 8; i++)
        if (y[i] != 42.0 && bad++ < 3) fprintf(stderr, "%s: element %zu past the output written\n", what, i);
    if (bad) {
        fprintf(stderr, "%s: %d wrong\n", what, bad);
        g_failures++;
    }
    free(x), free(w), free(b), free(xphys), free(sentinel), free(y);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

/* Three cases on a device opened with WGC_CONV_STEM=stem and a 1-byte
 * budget for columns and padded images: one image per chunk. */
static void check_one_image_chunks(const char *stem, const Case cs[3]) {
    setenv("WGC_CONV_STEM", stem, 1);
    TestEnv one = test_env_setting("WGC_CONV_COLS_BYTES", "1");
    unsetenv("WGC_CONV_STEM");
    for (int i = 0; i < 3; i++) check(&one, cs[i]);
    test_env_release(&one);
}

int main(void) {
    env = test_env();
    if (!env.info.has_f16) {
        printf("test_conv_stem: the adapter has no f16 shaders: f16 convolutions are refused (test_conv checks)\n");
        test_env_release(&env);
        return test_finish("test_conv_stem");
    }
    const uint32_t NONE = WGC_ACTIVATION_NONE, RELU = WGC_ACTIVATION_RELU, RELU6 = WGC_ACTIVATION_RELU6;
    const int ALL = NHWC_IN | NHWC_OUT;
    Case cases[] = {
        /* ResNet-50 conv1 (7x7/2, pad 3, 3 -> 64) in each layout pairing. */
        {2, 3, 37, 41, 64, 7, 7, 2, 3, RELU, BIAS},
        {2, 3, 37, 41, 64, 7, 7, 2, 3, RELU, BIAS | ALL},
        {2, 3, 37, 41, 64, 7, 7, 2, 3, NONE, NHWC_IN},
        {2, 3, 37, 41, 64, 7, 7, 2, 3, NONE, NHWC_OUT | BIAS},
        /* MobileNetV2 features.0 (3x3/2, pad 1, 3 -> 32). */
        {2, 3, 37, 41, 32, 3, 3, 2, 1, RELU6, BIAS},
        {2, 3, 37, 41, 32, 3, 3, 2, 1, RELU6, ALL},
        {3, 3, 29, 23, 32, 3, 3, 2, 1, NONE, ALL | BIAS},
        /* Odd channels, windows and output channels; non-finite inputs. */
        {3, 5, 13, 9, 7, 3, 3, 1, 0, RELU, BIAS | NONFINITE},
        {3, 5, 13, 9, 7, 3, 3, 1, 0, NONE, ALL | NONFINITE},
        {2, 1, 11, 17, 5, 5, 5, 2, 2, WGC_ACTIVATION_HARDSWISH, BIAS | NHWC_OUT},
        {1, 2, 10, 12, 19, 4, 2, 3, 1, RELU6, BIAS | NHWC_IN},
        {2, 3, 15, 15, 1, 3, 3, 1, 1, RELU, BIAS | ALL},
        {2, 7, 9, 9, 24, 3, 3, 1, 1, NONE, BIAS | ALL | NONFINITE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&env, cases[i]);
    /* Columns of one image per pass: the batch in several products. The
     * route is fixed to the columns: under a 1-byte budget the planner
     * leaves them only windows of under 16 taps into channels-first
     * outputs (the others take the WGSL implicit GEMM). */
    check_one_image_chunks("columns", (Case[]){cases[1], cases[4], cases[6]});
    /* The padded form in chunks of one image (where the KHR gather runs;
     * the columns elsewhere). */
    check_one_image_chunks("pad8", (Case[]){cases[0], cases[1], cases[6]});
    check_one_image_chunks("pairs", (Case[]){cases[0], cases[5], cases[9]});
    /* Every case padded to 8 channels, not in pairs. */
    TestEnv pad8 = test_env_setting("WGC_CONV_STEM", "pad8");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&pad8, cases[i]);
    test_env_release(&pad8);
    test_env_release(&env);
    return test_finish("test_conv_stem");
}
