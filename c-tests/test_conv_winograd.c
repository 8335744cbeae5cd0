/* f32 3x3 stride-1 convolutions on the Winograd F(2x2, 3x3) route
 * (WGC_CONV_WINOGRAD=1 forces it, =0 turns it off; by default the
 * planner's rule takes it for 32 x 32 channels over 1024 output pixels) against double-precision
 * references: odd heights and widths (edge tiles of one row or column),
 * padding 0, 1 and 2, channel counts that are multiples of nothing,
 * several images, images chunked one per pass, NCHW and channels-last
 * input and output, bias or none, the ReLU family applied in its store
 * and SiLU by the pass after it (wgc_op_conv2d_bn_act), and non-finite
 * values: a NaN input makes exactly the outputs whose window covers it NaN
 * (the same ones as on the implicit GEMM), an infinity makes the same
 * outputs non-finite (+-Inf or NaN) and no others, a NaN weight its output
 * channel. Tolerance: the implicit GEMM's documented bound,
 * |err| <= 1e-5 * (1 + sqrt(9C)) + 1e-5 * |ref| on inputs in [-1, 1), and
 * the largest error within 4 times the implicit GEMM's (run on the same
 * data) plus 1e-6; both are printed. */
#include "test_util.h"
#include "test_activation.h"

/* Forced on; forced on with one image per pass; forced off (the implicit
 * GEMM); the planner's own rule. */
static TestEnv on, chunked, off, rule, dflt;
/* Forced on with the transformed matrices' order fixed
 * (WGC_CONV_WINOGRAD_LAYOUT): channels fastest, tiles fastest. */
static TestEnv by_channels, by_tiles;

typedef struct {
    int64_t shape[4];
    int64_t strides[4];
} V4;

static V4 nchw(int64_t n, int64_t c, int64_t h, int64_t w) {
    V4 v = {{n, c, h, w}, {c * h * w, h * w, w, 1}};
    return v;
}
static V4 nhwc(int64_t n, int64_t c, int64_t h, int64_t w) {
    V4 v = {{n, c, h, w}, {h * w * c, 1, w * c, c}};
    return v;
}
static int64_t numel4(const V4 *v) {
    return v->shape[0] * v->shape[1] * v->shape[2] * v->shape[3];
}
static int64_t at(const V4 *v, int64_t a, int64_t b, int64_t c, int64_t d) {
    return a * v->strides[0] + b * v->strides[1] + c * v->strides[2] + d * v->strides[3];
}
static WgcTensor view(WgcBuffer *b, const V4 *v) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b, t.dtype = WGC_DTYPE_F32, t.rank = 4;
    for (int i = 0; i < 4; i++) t.shape[i] = v->shape[i], t.strides[i] = v->strides[i];
    return t;
}

typedef struct {
    const char *name;
    V4 in, out; /* out's shape is (N, O, OH, OW) */
    int pad;
    int bias;
    WgcActivation act;
} Case;

static Case mk(const char *name, int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int pad, int bias,
               int in_last, int out_last) {
    Case k;
    memset(&k, 0, sizeof k);
    int64_t oh = h + 2 * pad - 2, ow = w + 2 * pad - 2;
    k.name = name, k.pad = pad, k.bias = bias, k.act = WGC_ACTIVATION_NONE;
    k.in = in_last ? nhwc(n, c, h, w) : nchw(n, c, h, w);
    k.out = out_last ? nhwc(n, o, oh, ow) : nchw(n, o, oh, ow);
    return k;
}

/* The exact result, NaN where the double sum is (no Inf in these tests'
 * references). */
static double *reference(const Case *k, const float *x, const float *wt, const float *b) {
    int64_t N = k->in.shape[0], C = k->in.shape[1], H = k->in.shape[2], W = k->in.shape[3];
    int64_t O = k->out.shape[1], OH = k->out.shape[2], OW = k->out.shape[3];
    double *ref = malloc((size_t)numel4(&k->out) * 8 + 8);
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t xx = 0; xx < OW; xx++) {
                    double s = k->bias ? b[o] : 0;
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t r = 0; r < 3; r++)
                            for (int64_t q = 0; q < 3; q++) {
                                int64_t iy = y - k->pad + r, ix = xx - k->pad + q;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                s += (double)x[at(&k->in, n, c, iy, ix)] * wt[((o * C + c) * 3 + r) * 3 + q];
                            }
                    ref[((n * O + o) * OH + y) * OW + xx] = activate(k->act, s);
                }
    return ref;
}

/* Run `k` on `e` and return the output in (N, O, OH, OW) order; checks
 * that the explanation names `route`. */
static float *run(TestEnv *e, const Case *k, const float *x, const float *wt, const float *b, const char *route) {
    int64_t C = k->in.shape[1], O = k->out.shape[1];
    int64_t nx = numel4(&k->in), nw = O * C * 9, no = numel4(&k->out);
    WgcBuffer *bx = upload(e->device, x, nx * 4), *bw = upload(e->device, wt, nw * 4);
    WgcBuffer *bb = upload(e->device, b, O * 4), *bo = NULL;
    CHECK(wgc_buffer_create(e->device, no * 4, WGC_BUFFER_USAGE_STORAGE, &bo));
    WgcTensor tx = view(bx, &k->in), to = view(bo, &k->out);
    WgcTensor tw = tensor_of(bw, WGC_DTYPE_F32, 4, (int64_t[]){O, C, 3, 3});
    WgcTensor tb = tensor_of(bb, WGC_DTYPE_F32, 1, (int64_t[]){O});
    WgcConv2dParams p = {sizeof p, 1, 1, (uint32_t)k->pad, (uint32_t)k->pad, 1, 1, 1};
    char text[1024];
    size_t len = 0;
    CHECK(wgc_op_conv2d_explain(e->stream, &p, &tx, &tw, k->bias ? &tb : NULL, &to, text, sizeof text, &len));
    if (strncmp(text, route, strlen(route)) != 0) {
        fprintf(stderr, "%s: expected %s, got: %s\n", k->name, route, text);
        g_failures++;
    }
    if (k->act == WGC_ACTIVATION_NONE) {
        CHECK(wgc_op_conv2d(e->stream, &p, &tx, &tw, k->bias ? &tb : NULL, &to));
    } else {
        WgcConv2dBnActParams q;
        memset(&q, 0, sizeof q);
        q.struct_size = sizeof q, q.stride_h = q.stride_w = 1, q.pad_h = q.pad_w = (uint32_t)k->pad;
        q.activation = k->act, q.folded = 1;
        CHECK(wgc_op_conv2d_bn_act(e->stream, &q, &tx, NULL, NULL, NULL, NULL, NULL, NULL, &tw,
                                   k->bias ? &tb : NULL, &to));
    }
    float *raw = malloc(no * 4 + 4), *got = malloc(no * 4 + 4);
    CHECK(wgc_buffer_read(bo, 0, raw, no * 4));
    int64_t N = k->out.shape[0], OH = k->out.shape[2], OW = k->out.shape[3], i = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t xx = 0; xx < OW; xx++) got[i++] = raw[at(&k->out, n, o, y, xx)];
    free(raw);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(bo);
    return got;
}

static double bound(const Case *k) {
    return 1e-5 * (1 + sqrt(9.0 * (double)k->in.shape[1]));
}

static double max_err(const float *got, const double *ref, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(got[i] - ref[i]));
    return m;
}

/* Winograd (on `e`) and the implicit GEMM against the reference. */
static void check_case(TestEnv *e, const Case *k, const char *route) {
    int64_t C = k->in.shape[1], O = k->out.shape[1];
    int64_t nx = numel4(&k->in), nw = O * C * 9, no = numel4(&k->out);
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), *b = malloc(O * 4);
    fill_uniform_f32(x, nx, -1, 1), fill_uniform_f32(wt, nw, -1, 1), fill_uniform_f32(b, O, -1, 1);
    double *ref = reference(k, x, wt, b);
    float *got = run(e, k, x, wt, b, route);
    float *base = run(&off, k, x, wt, b, "route implicit_gemm");
    compare_f32(k->name, got, ref, (size_t)no, bound(k), 1e-5);
    double ew = max_err(got, ref, no), ei = max_err(base, ref, no);
    printf("%-44s max |err| winograd %.2e, implicit GEMM %.2e, bound %.2e\n", k->name, ew, ei, bound(k));
    if (!(ew <= 4 * ei + 1e-6)) fprintf(stderr, "%s: Winograd's error past 4x the implicit GEMM's\n", k->name), g_failures++;
    free(x), free(wt), free(b), free(ref), free(got), free(base);
}

static void layouts_paddings_and_edges(void) {
    const char *w = "route winograd";
    Case cases[] = {
        mk("5 -> 7, 9x11, pad 1, 2 images", 2, 5, 9, 11, 7, 1, 1, 0, 0),
        mk("33 -> 37, 13x7, pad 0, NHWC in", 3, 33, 13, 7, 37, 0, 0, 1, 0),
        mk("40 -> 35, 15x15, pad 2, NHWC out", 2, 40, 15, 15, 35, 2, 1, 0, 1),
        mk("64 -> 64, 14x14, pad 1, NHWC in and out", 4, 64, 14, 14, 64, 1, 1, 1, 1),
        mk("3 -> 2, 3x4, pad 0: one 1x2 output", 1, 3, 3, 4, 2, 0, 1, 0, 0),
        mk("1 -> 1, 1x1, pad 1: one output", 2, 1, 1, 1, 1, 1, 0, 0, 0),
        mk("6 -> 70, 2x9, pad 2", 1, 6, 2, 9, 70, 2, 1, 1, 0),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&on, &cases[i], w);
    Case many = mk("17 -> 19, 10x9, pad 1, 5 images one per pass", 5, 17, 10, 9, 19, 1, 1, 0, 1);
    check_case(&chunked, &many, w);
    /* The planner's own rule: 32 channels over 2 * 24 * 24 outputs. */
    /* Each order for images of the other layout. */
    Case nchw = mk("NCHW, channels fastest, 7 -> 9, 11x9, pad 1", 3, 7, 11, 9, 9, 1, 1, 0, 0);
    check_case(&by_channels, &nchw, w);
    Case nhwc = mk("NHWC, tiles fastest, 36 -> 33, 9x13, pad 2", 2, 36, 9, 13, 33, 2, 1, 1, 1);
    check_case(&by_tiles, &nhwc, w);
    Case ruled = mk("32 -> 32, 24x24, 2 images, by the rule", 2, 32, 24, 24, 32, 1, 1, 0, 0);
    check_case(&rule, &ruled, w);
    /* Unset: the rule; 0: the implicit GEMM. */
    check_case(&dflt, &ruled, w);
    check_case(&off, &ruled, "route implicit_gemm");
    Case small = mk("32 -> 32, 12x12, 1 image: under the rule", 1, 32, 12, 12, 32, 1, 1, 0, 0);
    check_case(&rule, &small, "route implicit_gemm");
}

/* No input channels: the output is the bias (on Winograd alone: K = 0 is
 * checked against the reference only). */
static void no_channels(void) {
    Case k = mk("0 -> 3 channels: the bias alone", 2, 0, 5, 6, 3, 1, 1, 0, 0);
    float b[3] = {0.5f, -1.25f, 3.0f};
    double *ref = reference(&k, NULL, NULL, b);
    float *got = run(&on, &k, NULL, NULL, b, "route winograd");
    compare_f32(k.name, got, ref, (size_t)numel4(&k.out), 0, 0);
    free(got);
    /* The implicit GEMM likewise (K = 0 once divided by zero there). */
    got = run(&off, &k, NULL, NULL, b, "route implicit_gemm");
    compare_f32("0 -> 3 channels on the implicit GEMM", got, ref, (size_t)numel4(&k.out), 0, 0);
    free(ref), free(got);
}

static void activations(void) {
    Case k = mk("ReLU6 in the store, 9 -> 11, 7x10", 2, 9, 7, 10, 11, 1, 1, 1, 0);
    k.act = WGC_ACTIVATION_RELU6;
    check_case(&on, &k, "route winograd");
    k.name = "ReLU in the store";
    k.act = WGC_ACTIVATION_RELU;
    check_case(&on, &k, "route winograd");
    k.name = "SiLU by a pass of its own";
    k.act = WGC_ACTIVATION_SILU;
    check_case(&on, &k, "route winograd");
}

/* Whether output (y, x) of a pad-`pad` 3x3 window covers input (iy, ix). */
static int covers(int64_t y, int64_t x, int pad, int64_t iy, int64_t ix) {
    return iy >= y - pad && iy <= y - pad + 2 && ix >= x - pad && ix <= x - pad + 2;
}

/* One non-finite input pixel (n0, c0, iy, ix) = `bad`: the outputs of
 * image n0 whose window covers it are NaN (a NaN) or non-finite (an
 * infinity), on both routes alike for a NaN; all others match the
 * reference of the input with that pixel 0. */
static void nonfinite_input(const char *name, float bad, int64_t n0, int64_t c0, int64_t iy, int64_t ix, int in_last) {
    Case k = mk(name, 2, 6, 9, 8, 5, 1, 1, in_last, 0);
    int64_t C = 6, O = 5, OH = 9, OW = 8, nx = numel4(&k.in), nw = O * C * 9;
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), *b = malloc(O * 4);
    fill_uniform_f32(x, nx, -1, 1), fill_uniform_f32(wt, nw, -1, 1), fill_uniform_f32(b, O, -1, 1);
    x[at(&k.in, n0, c0, iy, ix)] = 0;
    double *ref = reference(&k, x, wt, b);
    x[at(&k.in, n0, c0, iy, ix)] = bad;
    float *got = run(&on, &k, x, wt, b, "route winograd");
    float *base = run(&off, &k, x, wt, b, "route implicit_gemm");
    int wrong = 0;
    for (int64_t n = 0, i = 0; n < 2; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t xx = 0; xx < OW; xx++, i++) {
                    int hit = n == n0 && covers(y, xx, k.pad, iy, ix);
                    int ok;
                    if (!hit) ok = isfinite(got[i]) && fabs(got[i] - ref[i]) <= bound(&k) + 1e-5 * fabs(ref[i]);
                    else if (isnan(bad)) ok = isnan(got[i]) && isnan(base[i]);
                    else ok = !isfinite(got[i]);
                    if (!ok && wrong++ < 5)
                        fprintf(stderr, "%s: out[%lld, %lld, %lld, %lld] = %g (implicit GEMM %g, covered %d)\n", name,
                                (long long)n, (long long)o, (long long)y, (long long)xx, got[i], base[i], hit);
                }
    if (wrong) g_failures++;
    free(x), free(wt), free(b), free(ref), free(got), free(base);
}

/* A NaN weight tap: its output channel NaN everywhere (the padding's zeros
 * times NaN included), the others exact to the bound. */
static void nan_weight(void) {
    Case k = mk("NaN weight", 2, 4, 5, 7, 3, 1, 0, 0, 0);
    int64_t O = 3, C = 4, nx = numel4(&k.in), nw = O * C * 9, no = numel4(&k.out), per = no / 2 / O;
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), *b = malloc(O * 4);
    fill_uniform_f32(x, nx, -1, 1), fill_uniform_f32(wt, nw, -1, 1), fill_uniform_f32(b, O, -1, 1);
    double *ref = reference(&k, x, wt, b);
    wt[((1 * C + 2) * 3 + 0) * 3 + 2] = NAN;
    float *got = run(&on, &k, x, wt, b, "route winograd");
    int wrong = 0;
    for (int64_t i = 0; i < no; i++) {
        int64_t o = (i / per) % O;
        int ok = o == 1 ? isnan(got[i]) : fabs(got[i] - ref[i]) <= bound(&k) + 1e-5 * fabs(ref[i]);
        wrong += !ok;
    }
    if (wrong) fprintf(stderr, "NaN weight: %d outputs wrong\n", wrong), g_failures++;
    free(x), free(wt), free(b), free(ref), free(got);
}

static TestEnv env_with(const char *winograd, const char *cols, const char *layout) {
    setenv("WGC_CONV_WINOGRAD", winograd, 1);
    if (cols) setenv("WGC_CONV_COLS_BYTES", cols, 1);
    if (layout) setenv("WGC_CONV_WINOGRAD_LAYOUT", layout, 1);
    TestEnv e = test_env();
    unsetenv("WGC_CONV_WINOGRAD");
    unsetenv("WGC_CONV_COLS_BYTES");
    unsetenv("WGC_CONV_WINOGRAD_LAYOUT");
    return e;
}

int main(void) {
    unsetenv("WGC_CONV_WINOGRAD");
    unsetenv("WGC_CONV_COLS_BYTES");
    unsetenv("WGC_CONV_WINOGRAD_LAYOUT");
    dflt = test_env();
    rule = env_with("rule", NULL, NULL);
    on = env_with("1", NULL, NULL);
    chunked = env_with("1", "1", NULL);
    off = env_with("0", NULL, NULL);
    by_channels = env_with("1", NULL, "channels");
    by_tiles = env_with("1", NULL, "tiles");
    layouts_paddings_and_edges();
    activations();
    no_channels();
    nonfinite_input("NaN inside", NAN, 1, 3, 4, 5, 0);
    nonfinite_input("NaN in a corner, NHWC", NAN, 0, 0, 8, 7, 1);
    nonfinite_input("NaN on an odd row and column", NAN, 1, 5, 3, 0, 0);
    nonfinite_input("+Inf inside", INFINITY, 0, 2, 5, 2, 0);
    nonfinite_input("-Inf on the edge, NHWC", -INFINITY, 1, 1, 0, 6, 1);
    nan_weight();
    test_env_release(&rule), test_env_release(&on), test_env_release(&chunked), test_env_release(&off);
    test_env_release(&by_channels), test_env_release(&by_tiles), test_env_release(&dflt);
    return test_finish("test_conv_winograd");
}
