/* wgc_op_conv2d and the pooling operators against double-precision
 * references: stride, padding, dilation, groups, depthwise, bias or none,
 * 1x1 (GEMM path), strided views, and every error status.
 * Tolerances: conv |err| <= 1e-5 * (1 + sqrt(K)) + 1e-5*|ref| with K =
 * C/groups*KH*KW on inputs in [-1, 1); max pooling exact; average pooling
 * 1e-6 + 1e-6*|ref|; f16 pooling 1e-3 + 2e-3*|ref|.
 * f16 convolutions (references on the f16 inputs): the f32 bound plus the
 * output's one f16 rounding, |err| <= 1e-5 * (1 + sqrt(K)) + 2^-10*|ref|. */
#include "test_util.h"

static TestEnv env;
/* The dtype of every operand of conv_case (f32 or f16). */
static WgcDtype g_dtype = WGC_DTYPE_F32;

typedef struct {
    int64_t shape[4];
    int64_t strides[4];
    int64_t offset;
} V4;

static V4 v4(int64_t a, int64_t b, int64_t c, int64_t d) {
    V4 v = {{a, b, c, d}, {b * c * d, c * d, d, 1}, 0};
    return v;
}
static int64_t span(const V4 *v) {
    int64_t hi = v->offset;
    for (int i = 0; i < 4; i++)
        if (v->shape[i] > 0) hi += (v->shape[i] - 1) * v->strides[i];
    return hi + 1;
}
static WgcTensor gview(WgcBuffer *b, const V4 *v) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b, t.dtype = g_dtype, t.rank = 4, t.offset = v->offset;
    for (int i = 0; i < 4; i++) t.shape[i] = v->shape[i], t.strides[i] = v->strides[i];
    return t;
}
static int64_t at(const V4 *v, int64_t a, int64_t b, int64_t c, int64_t d) {
    return v->offset + a * v->strides[0] + b * v->strides[1] + c * v->strides[2] + d * v->strides[3];
}
static float *rand_buf(int64_t n) {
    float *x = malloc(n * 4 + 4);
    fill_uniform_f32(x, n, -1, 1);
    return x;
}
/* n values in g_dtype's bytes (f16 buffers padded to whole words); f16
 * rounds x in place so that references see the values the GPU gets. */
static WgcBuffer *upload_as(float *x, int64_t n) {
    if (g_dtype == WGC_DTYPE_F32) return upload(env.device, x, n * 4);
    size_t bytes = (size_t)(n * 2 + 3) & ~(size_t)3;
    uint16_t *h = calloc(bytes / 2, 2);
    for (int64_t i = 0; i < n; i++) h[i] = f32_to_f16(x[i]), x[i] = f16_to_f32(h[i]);
    WgcBuffer *b = upload(env.device, h, bytes);
    free(h);
    return b;
}
static float *read_back(WgcBuffer *b, int64_t n) {
    float *x = malloc(n * 4 + 4);
    if (g_dtype == WGC_DTYPE_F32) {
        CHECK(wgc_buffer_read(b, 0, x, n * 4));
        return x;
    }
    size_t bytes = (size_t)(n * 2 + 3) & ~(size_t)3;
    uint16_t *h = malloc(bytes);
    CHECK(wgc_buffer_read(b, 0, h, bytes));
    for (int64_t i = 0; i < n; i++) x[i] = f16_to_f32(h[i]);
    free(h);
    return x;
}
static int64_t osize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
    return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

/* One convolution; views of input and out may be given strided. */
static void conv_case(const char *name, V4 in, int64_t O, int64_t KH, int64_t KW, WgcConv2dParams p, int with_bias,
                      const V4 *out_layout) {
    int64_t N = in.shape[0], C = in.shape[1], H = in.shape[2], W = in.shape[3];
    int64_t G = p.groups ? p.groups : 1, sh = p.stride_h ? p.stride_h : 1, sw = p.stride_w ? p.stride_w : 1;
    int64_t dh = p.dilation_h ? p.dilation_h : 1, dw = p.dilation_w ? p.dilation_w : 1;
    int64_t OH = osize(H, KH, sh, p.pad_h, dh), OW = osize(W, KW, sw, p.pad_w, dw);
    int64_t Cg = C / G, Og = O / G;
    V4 wv = v4(O, Cg, KH, KW);
    V4 ov = out_layout ? *out_layout : v4(N, O, OH, OW);
    int64_t ni = span(&in), nw = span(&wv), no = span(&ov);
    float *hi = rand_buf(ni), *hw = rand_buf(nw), *hb = rand_buf(O), *ho = rand_buf(no);
    WgcBuffer *bi = upload_as(hi, ni), *bw = upload_as(hw, nw), *bb = upload_as(hb, O), *bo = upload_as(ho, no);
    WgcTensor ti = gview(bi, &in), tw = gview(bw, &wv), to = gview(bo, &ov);
    WgcTensor tb;
    CHECK(wgc_tensor_contiguous(bb, g_dtype, 1, (int64_t[]){O}, &tb));
    p.struct_size = sizeof p;
    CHECK(wgc_op_conv2d(env.stream, &p, &ti, &tw, with_bias ? &tb : NULL, &to));
    /* The same convolution of other values into a second output, recorded
     * right behind the first: where its K is split, it reuses the first's
     * slabs in stream order (runtime/stream_scratch.rs). */
    float *hi2 = rand_buf(ni), *ho2 = rand_buf(no);
    WgcBuffer *bi2 = upload_as(hi2, ni), *bo2 = upload_as(ho2, no);
    WgcTensor ti2 = gview(bi2, &in), to2 = gview(bo2, &ov);
    CHECK(wgc_op_conv2d(env.stream, &p, &ti2, &tw, with_bias ? &tb : NULL, &to2));
    float *raw = read_back(bo, no), *raw2 = read_back(bo2, no);
    for (int pass = 0; pass < 2; pass++) {
        const float *src = pass ? hi2 : hi, *dst = pass ? raw2 : raw;
        size_t total = (size_t)(N * O * OH * OW), i = 0;
        double *ref = malloc(total * 8 + 8);
        float *got = malloc(total * 4 + 4);
        for (int64_t n = 0; n < N; n++)
            for (int64_t o = 0; o < O; o++)
                for (int64_t y = 0; y < OH; y++)
                    for (int64_t x = 0; x < OW; x++, i++) {
                        double s = with_bias ? hb[o] : 0;
                        int64_t g = o / Og;
                        for (int64_t c = 0; c < Cg; c++)
                            for (int64_t a = 0; a < KH; a++)
                                for (int64_t b = 0; b < KW; b++) {
                                    int64_t iy = y * sh - p.pad_h + a * dh, ix = x * sw - p.pad_w + b * dw;
                                    if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                    s += (double)src[at(&in, n, g * Cg + c, iy, ix)] * hw[at(&wv, o, c, a, b)];
                                }
                        ref[i] = s;
                        got[i] = dst[at(&ov, n, o, y, x)];
                    }
        double rtol = g_dtype == WGC_DTYPE_F16 ? 1.0 / 1024 : 1e-5;
        compare_f32(name, got, ref, total, 1e-5 * (1 + sqrt((double)(Cg * KH * KW))), rtol);
        free(ref), free(got);
    }
    free(hi), free(hi2), free(hw), free(hb), free(ho), free(ho2), free(raw), free(raw2);
    wgc_buffer_release(bi), wgc_buffer_release(bi2), wgc_buffer_release(bw), wgc_buffer_release(bb);
    wgc_buffer_release(bo), wgc_buffer_release(bo2);
}

static WgcConv2dParams cp(uint32_t sh, uint32_t sw, uint32_t ph, uint32_t pw, uint32_t dh, uint32_t dw, uint32_t g) {
    WgcConv2dParams p = {sizeof p, sh, sw, ph, pw, dh, dw, g};
    return p;
}

static void test_conv(void) {
    conv_case("3x3 pad 1 bias", v4(2, 5, 11, 13), 7, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    conv_case("stride/pad/dilation no bias", v4(2, 3, 15, 12), 5, 3, 2, cp(2, 3, 0, 2, 2, 1, 1), 0, NULL);
    conv_case("groups 2", v4(1, 6, 9, 8), 4, 3, 3, cp(1, 1, 1, 1, 1, 1, 2), 1, NULL);
    conv_case("depthwise", v4(2, 8, 13, 11), 8, 3, 3, cp(2, 2, 1, 1, 1, 1, 8), 1, NULL);
    conv_case("depthwise x2 multiplier, dilated", v4(1, 5, 12, 12), 10, 3, 3, cp(1, 1, 2, 2, 2, 2, 5), 0, NULL);
    conv_case("1x1 small image bias", v4(3, 17, 9, 10), 33, 1, 1, cp(1, 1, 0, 0, 1, 1, 1), 1, NULL);
    conv_case("1x1 as GEMM, bias", v4(2, 19, 17, 16), 9, 1, 1, cp(1, 1, 0, 0, 1, 1, 1), 1, NULL);
    conv_case("1x1 as GEMM, no bias", v4(1, 3, 16, 21), 70, 1, 1, cp(1, 1, 0, 0, 1, 1, 1), 0, NULL);
    conv_case("1x1 no bias", v4(2, 4, 1, 7), 3, 1, 1, cp(0, 0, 0, 0, 0, 0, 0), 0, NULL);
    conv_case("1x1 stride 2", v4(2, 9, 9, 10), 6, 1, 1, cp(2, 2, 0, 0, 1, 1, 1), 1, NULL);
    conv_case("7x7 stride 2 pad 3", v4(1, 3, 21, 19), 9, 7, 7, cp(2, 2, 3, 3, 1, 1, 1), 1, NULL);
    conv_case("zeroed params", v4(1, 2, 6, 5), 3, 2, 2, cp(0, 0, 0, 0, 0, 0, 0), 0, NULL);
    conv_case("C=1", v4(2, 1, 8, 8), 4, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    /* Large enough for 128x128 tiles. */
    conv_case("large tiles", v4(2, 1, 128, 128), 130, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    /* Channels-last storage seen as NCHW, and a strided output. */
    V4 nhwc = {{2, 5, 7, 9}, {7 * 9 * 5, 1, 9 * 5, 5}, 0};
    V4 out = {{2, 6, 7, 9}, {6 * 7 * 9 * 2, 7 * 9 * 2, 9 * 2, 2}, 1};
    conv_case("channels-last input, strided out", nhwc, 6, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, &out);
    V4 out1 = {{2, 6, 7, 9}, {6 * 7 * 9, 1, 9 * 6, 6}, 0};
    conv_case("1x1, channels-last in and out", nhwc, 6, 1, 1, cp(1, 1, 0, 0, 1, 1, 1), 1, &out1);
    conv_case("depthwise channels-last", nhwc, 5, 3, 3, cp(1, 1, 1, 1, 1, 1, 5), 1, NULL);
    /* Few output tiles and a long K: split over workgroups, then summed. */
    conv_case("split K, bias", v4(1, 128, 6, 5), 20, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    conv_case("split K, groups 2, no bias", v4(2, 256, 5, 4), 6, 3, 3, cp(1, 1, 1, 0, 1, 1, 2), 0, NULL);
    V4 big_c = {{1, 200, 4, 3}, {200 * 4 * 3, 1, 3 * 200, 200}, 0};
    V4 out_s = {{1, 7, 4, 3}, {7 * 4 * 3 * 2, 4 * 3 * 2, 3 * 2, 2}, 3};
    conv_case("split K, channels-last in, strided out", big_c, 7, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, &out_s);
}

/* f16 convolutions on odd shapes: every path wgc_op_conv2d picks (1x1 GEMM,
 * depthwise direct, the general implicit GEMM or im2col + GEMM, weights used
 * as they lie or packed, flat or strided outputs, one or several chunks of
 * images). On adapters with cooperative matrices the general cases run on
 * tensor cores. */
static void test_conv_f16(void) {
    if (!env.info.has_f16) {
        printf("no f16 on this adapter: f16 convolution skipped\n");
        return;
    }
    g_dtype = WGC_DTYPE_F16;
    conv_case("f16 3x3 pad 1 bias", v4(2, 5, 11, 13), 7, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    conv_case("f16 stride/pad/dilation no bias", v4(2, 3, 15, 12), 5, 3, 2, cp(2, 3, 0, 2, 2, 1, 1), 0, NULL);
    conv_case("f16 groups 3, K = 48", v4(2, 48, 9, 7), 9, 1, 3, cp(1, 1, 0, 1, 1, 1, 3), 1, NULL);
    conv_case("f16 K = 72, 40 channels, batch 3", v4(3, 8, 10, 9), 40, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    conv_case("f16 depthwise", v4(2, 8, 13, 11), 8, 3, 3, cp(2, 2, 1, 1, 1, 1, 8), 1, NULL);
    conv_case("f16 depthwise x2 multiplier, dilated", v4(1, 5, 12, 12), 10, 3, 3, cp(1, 1, 2, 2, 2, 2, 5), 0, NULL);
    conv_case("f16 1x1 as GEMM, bias", v4(2, 19, 17, 16), 9, 1, 1, cp(1, 1, 0, 0, 1, 1, 1), 1, NULL);
    conv_case("f16 1x1 small image", v4(3, 17, 9, 10), 33, 1, 1, cp(1, 1, 0, 0, 1, 1, 1), 1, NULL);
    conv_case("f16 1x1 stride 2", v4(2, 9, 9, 10), 6, 1, 1, cp(2, 2, 0, 0, 1, 1, 1), 0, NULL);
    conv_case("f16 7x7 stride 2 pad 3", v4(1, 3, 21, 19), 9, 7, 7, cp(2, 2, 3, 3, 1, 1, 1), 1, NULL);
    conv_case("f16 large tiles", v4(2, 16, 30, 29), 130, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    conv_case("f16 long K", v4(1, 300, 5, 4), 20, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    /* A weight buffer of 12 bytes (smaller than one 16-byte word). */
    conv_case("f16 tiny weight", v4(2, 2, 6, 7), 1, 1, 3, cp(1, 1, 0, 1, 1, 1, 1), 0, NULL);
    V4 nhwc = {{2, 5, 7, 9}, {7 * 9 * 5, 1, 9 * 5, 5}, 0};
    V4 out = {{2, 6, 7, 9}, {6 * 7 * 9 * 2, 7 * 9 * 2, 9 * 2, 2}, 1};
    conv_case("f16 channels-last input, strided out", nhwc, 6, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, &out);
    V4 out1 = {{2, 6, 7, 9}, {6 * 7 * 9, 1, 9 * 6, 6}, 0};
    conv_case("f16 channels-last in and out", nhwc, 6, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 0, &out1);
    V4 in8 = {{2, 8, 6, 7}, {8 * 6 * 7 + 3, 6 * 7, 7, 1}, 5};
    V4 rows = {{2, 16, 6, 7}, {16 * 6 * 8, 6 * 8, 8, 1}, 2};
    conv_case("f16 padded rows out, offset input", in8, 16, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, &rows);
    conv_case("f16 depthwise channels-last", nhwc, 5, 3, 3, cp(1, 1, 1, 1, 1, 1, 5), 1, NULL);
    /* Multiples of 8 channels, ungrouped: on adapters with the SPIR-V
     * tensor-core kernel, the gather from a channels-last image. */
    conv_case("f16 64 ch, 2 x 2 tiles, odd pixels, bias", v4(2, 64, 13, 11), 136, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1,
              NULL);
    conv_case("f16 16 ch 5x3 stride/pad/dilation", v4(2, 16, 17, 15), 24, 5, 3, cp(2, 1, 2, 1, 2, 1, 1), 0, NULL);
    conv_case("f16 16 ch 1x1 stride 2", v4(2, 16, 9, 10), 6, 1, 1, cp(2, 2, 0, 0, 1, 1, 1), 1, NULL);
    conv_case("f16 16 ch 1x1 -> 24 on 16x17, bias", v4(2, 16, 16, 17), 24, 1, 1, cp(1, 1, 0, 0, 1, 1, 1), 1, NULL);
    conv_case("f16 256 ch, one tile: K split, bias", v4(1, 256, 6, 5), 32, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1, NULL);
    V4 nhwc16 = {{2, 16, 7, 9}, {7 * 9 * 16 + 8, 1, 9 * 16, 16}, 8};
    V4 out16 = {{2, 10, 7, 9}, {7 * 9 * 10, 1, 9 * 10, 10}, 0};
    conv_case("f16 16 ch channels-last in (at an offset) and out", nhwc16, 10, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1,
              &out16);
    conv_case("f16 8 ch -> 64, whole 64-row tiles", v4(2, 8, 16, 16), 64, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 0, NULL);
    V4 out_cl = {{1, 128, 16, 16}, {16 * 16 * 128, 1, 16 * 128, 128}, 0};
    conv_case("f16 16 ch channels-last out, whole tiles", v4(1, 16, 16, 16), 128, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 0,
              &out_cl);
    V4 out_cl64 = {{1, 64, 16, 16}, {16 * 16 * 64, 1, 16 * 64, 64}, 0};
    conv_case("f16 8 ch channels-last out, 64 ch, whole tiles", v4(1, 8, 16, 16), 64, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 0,
              &out_cl64);
    V4 out_cl2 = {{1, 136, 9, 13}, {9 * 13 * 136, 1, 13 * 136, 136}, 0};
    conv_case("f16 24 ch channels-last out, edge tiles, bias", v4(1, 24, 9, 13), 136, 3, 3, cp(1, 1, 1, 1, 1, 1, 1), 1,
              &out_cl2);
    V4 nhwc_odd = {{2, 16, 7, 9}, {7 * 9 * 20, 1, 9 * 20, 20}, 4};
    conv_case("f16 16 ch channels-last in, pixels 20 apart", nhwc_odd, 10, 3, 3, cp(2, 2, 1, 1, 1, 1, 1), 0, NULL);
    /* One image per chunk of columns, on a device created with that setting. */
    TestEnv outer = env;
    env = test_env_setting("WGC_CONV_COLS_BYTES", "1");
    conv_case("f16 one image per chunk", v4(3, 4, 9, 8), 12, 3, 3, cp(2, 1, 1, 1, 1, 1, 2), 1, NULL);
    test_env_release(&env);
    env = outer;
    g_dtype = WGC_DTYPE_F32;
}

/* f16 NaN and inf through each f16 path (general, 1x1, depthwise): ones
 * everywhere but a NaN input at (0, 0, 2, 3) and an inf weight of output
 * channel 1 at its first input channel's centre tap (which never meets the
 * padding: whether padding zeros times inf give NaN is left open). PyTorch's
 * results: NaN wherever the window holds the NaN in an input channel the
 * output reads, inf where output channel 1's centre tap meets a finite
 * input, NaN where it meets the NaN, else the count of input elements in
 * the window (plus 1 for the bias). */
static void test_conv_f16_nonfinite(void) {
    if (!env.info.has_f16) return;
    enum { N = 2, H = 6, W = 7 };
    const uint16_t ONE = 0x3c00, NAN16 = 0x7e00, INF16 = 0x7c00;
    for (int kind = 0; kind < 4; kind++) {
        /* 0: general 3x3 pad 1; 1: 1x1; 2: depthwise 3x3 pad 1; 3: as 0 with
         * 8 channels (the channels-last gather where the adapter has it). */
        int64_t C = kind == 3 ? 8 : 4;
        int64_t K = kind == 1 ? 1 : 3, pad = kind == 1 ? 0 : 1, G = kind == 2 ? C : 1, O = kind == 2 ? C : 5;
        int64_t Cg = C / G, nx = N * C * H * W, nw = O * Cg * K * K, no = N * O * H * W;
        uint16_t *x = malloc(nx * 2 + 4), *w = malloc(nw * 2 + 4), *b = malloc(O * 2 + 4), *y = calloc(no + 2, 2);
        for (int64_t i = 0; i < nx; i++) x[i] = ONE;
        for (int64_t i = 0; i < nw; i++) w[i] = ONE;
        for (int64_t i = 0; i < O; i++) b[i] = ONE;
        x[2 * W + 3] = NAN16;
        w[1 * Cg * K * K + K * K / 2] = INF16;
        WgcBuffer *bx = upload(env.device, x, (nx * 2 + 3) & ~3), *bw = upload(env.device, w, (nw * 2 + 3) & ~3),
                  *bb = upload(env.device, b, (O * 2 + 3) & ~3), *by = upload(env.device, y, (no * 2 + 3) & ~3);
        WgcTensor tx = tensor_of(bx, WGC_DTYPE_F16, 4, (int64_t[]){N, C, H, W});
        WgcTensor tw = tensor_of(bw, WGC_DTYPE_F16, 4, (int64_t[]){O, Cg, K, K});
        WgcTensor tb = tensor_of(bb, WGC_DTYPE_F16, 1, (int64_t[]){O});
        WgcTensor ty = tensor_of(by, WGC_DTYPE_F16, 4, (int64_t[]){N, O, H, W});
        WgcConv2dParams p = cp(1, 1, (uint32_t)pad, (uint32_t)pad, 1, 1, (uint32_t)G);
        CHECK(wgc_op_conv2d(env.stream, &p, &tx, &tw, &tb, &ty));
        CHECK(wgc_buffer_read(by, 0, y, (no * 2 + 3) & ~3));
        int bad = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t o = 0; o < O; o++)
                for (int64_t i = 0; i < H; i++)
                    for (int64_t j = 0; j < W; j++) {
                        int64_t c_first = o / (O / G) * Cg; /* the group's first input channel */
                        double ref = 1;
                        for (int64_t c = 0; c < Cg; c++)
                            for (int64_t a = 0; a < K; a++)
                                for (int64_t e = 0; e < K; e++) {
                                    int64_t ii = i - pad + a, jj = j - pad + e;
                                    int in = ii >= 0 && ii < H && jj >= 0 && jj < W;
                                    double xv = !in ? 0 : (n == 0 && c_first + c == 0 && ii == 2 && jj == 3) ? NAN : 1;
                                    double wv = (o == 1 && c == 0 && a == K / 2 && e == K / 2) ? INFINITY : 1;
                                    ref += xv * wv;
                                }
                        float got = f16_to_f32(y[((n * O + o) * H + i) * W + j]);
                        int ok = isnan(ref) ? isnan(got) : isinf(ref) ? got == ref : got == ref;
                        if (!ok && bad++ < 5)
                            fprintf(stderr, "f16 nonfinite kind %d at (%lld,%lld,%lld,%lld): got %g want %g\n", kind,
                                    (long long)n, (long long)o, (long long)i, (long long)j, got, ref);
                    }
        EXPECT(bad == 0);
        free(x), free(w), free(b), free(y);
        wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
    }
}

/* Pooling `in` into a contiguous output, or a channels-last one where
 * `in` is channels-last and `out_cl` is set. */
static void pool_case_to(const char *name, int max, V4 in, uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw,
                         uint32_t ph, uint32_t pw, uint32_t include_pad, int out_cl) {
    int64_t N = in.shape[0], C = in.shape[1], H = in.shape[2], W = in.shape[3];
    int64_t esh = sh ? sh : kh, esw = sw ? sw : kw;
    int64_t OH = (H + 2 * ph - kh) / esh + 1, OW = (W + 2 * pw - kw) / esw + 1;
    V4 ov = v4(N, C, OH, OW);
    if (out_cl) ov = (V4){{N, C, OH, OW}, {OH * OW * C, 1, OW * C, C}, 0};
    int64_t ni = span(&in), no = span(&ov);
    float *hi = rand_buf(ni);
    WgcBuffer *bi = upload(env.device, hi, ni * 4), *bo = upload(env.device, hi, no * 4 > ni * 4 ? ni * 4 : no * 4);
    if (no > ni) {
        wgc_buffer_release(bo);
        float *z = calloc(no, 4);
        bo = upload(env.device, z, no * 4);
        free(z);
    }
    WgcTensor ti = gview(bi, &in), to = gview(bo, &ov);
    WgcPool2dParams p = {sizeof p, kh, kw, sh, sw, ph, pw, include_pad};
    CHECK(max ? wgc_op_max_pool2d(env.stream, &p, &ti, &to) : wgc_op_avg_pool2d(env.stream, &p, &ti, &to));
    float *got = read_back(bo, no);
    double *ref = malloc(no * 8);
    int64_t i = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t x = 0; x < OW; x++) {
                    i = at(&ov, n, c, y, x);
                    double best = -INFINITY, sum = 0;
                    int64_t cnt = 0;
                    for (int64_t a = 0; a < kh; a++)
                        for (int64_t b = 0; b < kw; b++) {
                            int64_t iy = y * esh - ph + a, ix = x * esw - pw + b;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                            double v = hi[at(&in, n, c, iy, ix)];
                            best = v > best ? v : best;
                            sum += v;
                            cnt++;
                        }
                    ref[i] = max ? best : sum / (include_pad ? (double)(kh * kw) : (double)cnt);
                }
    compare_f32(name, got, ref, no, max ? 0 : 1e-6, max ? 0 : 1e-6);
    free(hi), free(got), free(ref);
    wgc_buffer_release(bi), wgc_buffer_release(bo);
}

static void pool_case(const char *name, int max, V4 in, uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t ph,
                      uint32_t pw, uint32_t include_pad) {
    pool_case_to(name, max, in, kh, kw, sh, sw, ph, pw, include_pad, 0);
}

static void global_case(const char *name, V4 in) {
    int64_t N = in.shape[0], C = in.shape[1], H = in.shape[2], W = in.shape[3];
    V4 ov = v4(N, C, 1, 1);
    int64_t ni = span(&in);
    float *hi = rand_buf(ni), *z = calloc(N * C + 1, 4);
    WgcBuffer *bi = upload(env.device, hi, ni * 4), *bo = upload(env.device, z, N * C * 4);
    WgcTensor ti = gview(bi, &in), to = gview(bo, &ov);
    CHECK(wgc_op_global_avg_pool2d(env.stream, &ti, &to));
    float *got = read_back(bo, N * C);
    double *ref = malloc(N * C * 8);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            double s = 0;
            for (int64_t y = 0; y < H; y++)
                for (int64_t x = 0; x < W; x++) s += hi[at(&in, n, c, y, x)];
            ref[n * C + c] = s / (double)(H * W);
        }
    compare_f32(name, got, ref, N * C, 1e-6, 1e-5);
    free(hi), free(z), free(got), free(ref);
    wgc_buffer_release(bi), wgc_buffer_release(bo);
}

static void test_pool(void) {
    pool_case("max 3x3 s2 p1", 1, v4(2, 3, 15, 14), 3, 3, 2, 2, 1, 1, 0);
    pool_case("max 2x2 default stride", 1, v4(1, 4, 9, 7), 2, 2, 0, 0, 0, 0, 0);
    pool_case("max 1x3 pad 0x1", 1, v4(1, 2, 5, 8), 1, 3, 1, 2, 0, 1, 0);
    pool_case("avg 2x2", 0, v4(2, 3, 10, 9), 2, 2, 2, 2, 0, 0, 0);
    pool_case("avg 3x3 p1 include pad", 0, v4(1, 3, 8, 11), 3, 3, 1, 1, 1, 1, 1);
    pool_case("avg 3x3 p1 exclude pad", 0, v4(1, 3, 8, 11), 3, 3, 1, 1, 1, 1, 0);
    pool_case("avg 5x4 s(3,2) p(2,1)", 0, v4(2, 2, 13, 12), 5, 4, 3, 2, 2, 1, 0);
    V4 nhwc = {{2, 5, 7, 9}, {7 * 9 * 5, 1, 9 * 5, 5}, 0};
    pool_case("max channels-last", 1, nhwc, 3, 3, 2, 2, 1, 1, 0);
    pool_case("avg channels-last", 0, nhwc, 2, 3, 1, 2, 1, 1, 1);
    /* Channels-last in and out (invocations walk the channels first). */
    pool_case_to("max channels-last both", 1, nhwc, 3, 3, 2, 2, 1, 1, 0, 1);
    pool_case_to("avg channels-last both", 0, nhwc, 3, 2, 2, 1, 1, 1, 0, 1);
    global_case("global 7x7", v4(2, 9, 7, 7));
    global_case("global 13x11", v4(1, 3, 13, 11));
    global_case("global 1x1", v4(3, 2, 1, 1));
    global_case("global channels-last", nhwc);
    global_case("global large plane", v4(1, 2, 40, 37));
}

/* f16 pooling: references on the f16-rounded inputs; outputs carry the
 * f16 rounding (2e-3 relative). */
static void test_pool_f16(void) {
    if (!env.info.has_f16) {
        printf("no f16 on this adapter: f16 pooling skipped\n");
        return;
    }
    enum { N = 2, C = 3, H = 9, W = 8 };
    float x[N * C * H * W];
    uint16_t xh[N * C * H * W];
    fill_uniform_f32(x, N * C * H * W, -4, 4);
    for (int i = 0; i < N * C * H * W; i++) xh[i] = f32_to_f16(x[i]), x[i] = f16_to_f32(xh[i]);
    WgcBuffer *bi = upload(env.device, xh, sizeof xh);
    WgcTensor ti = tensor_of(bi, WGC_DTYPE_F16, 4, (int64_t[]){N, C, H, W});
    for (int kind = 0; kind < 3; kind++) {
        /* 0: max 3x3 s2 p1 -> 5x4; 1: avg 2x2 s1 p1 include pad -> 10x9; 2: global. */
        int64_t OH = kind == 0 ? 5 : kind == 1 ? 10 : 1, OW = kind == 0 ? 4 : kind == 1 ? 9 : 1;
        int64_t no = N * C * OH * OW;
        uint16_t *oh = calloc(no + 2, 2);
        WgcBuffer *bo = upload(env.device, oh, (no * 2 + 3) & ~3);
        WgcTensor to = tensor_of(bo, WGC_DTYPE_F16, 4, (int64_t[]){N, C, OH, OW});
        WgcPool2dParams pm = {sizeof pm, 3, 3, 2, 2, 1, 1, 0}, pa = {sizeof pa, 2, 2, 1, 1, 1, 1, 1};
        if (kind == 0) CHECK(wgc_op_max_pool2d(env.stream, &pm, &ti, &to));
        if (kind == 1) CHECK(wgc_op_avg_pool2d(env.stream, &pa, &ti, &to));
        if (kind == 2) CHECK(wgc_op_global_avg_pool2d(env.stream, &ti, &to));
        CHECK(wgc_buffer_read(bo, 0, oh, (no * 2 + 3) & ~3));
        float *got = malloc(no * 4);
        double *ref = malloc(no * 8);
        int64_t i = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t y = 0; y < OH; y++)
                    for (int64_t z = 0; z < OW; z++, i++) {
                        int k = kind == 0 ? 3 : kind == 1 ? 2 : 0, st = kind == 0 ? 2 : 1, pd = kind == 2 ? 0 : 1;
                        int kh = kind == 2 ? H : k, kw = kind == 2 ? W : k;
                        double best = -INFINITY, sum = 0;
                        for (int a = 0; a < kh; a++)
                            for (int b = 0; b < kw; b++) {
                                int64_t iy = y * st - pd + a, ix = z * st - pd + b;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                double v = x[((n * C + c) * H + iy) * W + ix];
                                best = v > best ? v : best;
                                sum += v;
                            }
                        ref[i] = kind == 0 ? best : sum / (double)(kh * kw);
                        got[i] = f16_to_f32(oh[i]);
                    }
        compare_f32(kind == 0 ? "f16 max pool" : kind == 1 ? "f16 avg pool" : "f16 global avg pool", got, ref, no, 1e-3,
                    2e-3);
        free(oh), free(got), free(ref);
        wgc_buffer_release(bo);
    }
    wgc_buffer_release(bi);
}

static void test_nan_max(void) {
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    x[5] = NAN;
    WgcBuffer *bi = upload(env.device, x, sizeof x), *bo = upload(env.device, x, 16);
    WgcTensor ti = tensor_of(bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 1, 4, 4});
    WgcTensor to = tensor_of(bo, WGC_DTYPE_F32, 4, (int64_t[]){1, 1, 2, 2});
    WgcPool2dParams p = {sizeof p, 2, 2, 2, 2, 0, 0, 0};
    CHECK(wgc_op_max_pool2d(env.stream, &p, &ti, &to));
    float got[4];
    CHECK(wgc_buffer_read(bo, 0, got, 16));
    EXPECT(isnan(got[0]) && got[1] == 7 && got[2] == 13 && got[3] == 15);
    wgc_buffer_release(bi), wgc_buffer_release(bo);
}

static void test_errors(void) {
    float ones[4096];
    for (int i = 0; i < 4096; i++) ones[i] = 1.0f;
    WgcBuffer *bi = upload(env.device, ones, sizeof ones), *bw = upload(env.device, ones, sizeof ones),
              *bo = upload(env.device, ones, sizeof ones), *bb = upload(env.device, ones, 64);
    WgcTensor in = tensor_of(bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 4, 6, 6});
    WgcTensor w = tensor_of(bw, WGC_DTYPE_F32, 4, (int64_t[]){2, 4, 3, 3});
    WgcTensor b = tensor_of(bb, WGC_DTYPE_F32, 1, (int64_t[]){2});
    WgcTensor out = tensor_of(bo, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 4, 4});
    WgcConv2dParams p = cp(1, 1, 0, 0, 1, 1, 1);
    WgcTensor t;
    CHECK(wgc_op_conv2d(env.stream, &p, &in, &w, &b, &out)); /* the baseline is valid */
    float base[4096];
    CHECK(wgc_buffer_read(bo, 0, base, sizeof base));

    t = tensor_of(bo, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 5, 4});
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, &w, &b, &t), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bw, WGC_DTYPE_F32, 4, (int64_t[]){2, 3, 3, 3});
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, &t, &b, &out), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bb, WGC_DTYPE_F32, 1, (int64_t[]){3});
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, &w, &t, &out), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bi, WGC_DTYPE_F32, 3, (int64_t[]){4, 6, 6});
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &t, &w, &b, &out), WGC_ERROR_SHAPE_MISMATCH);
    WgcConv2dParams g3 = cp(1, 1, 0, 0, 1, 1, 3);
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &g3, &in, &w, &b, &out), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 4, 2, 2});
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &t, &w, &b, &out), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bw, WGC_DTYPE_F16, 4, (int64_t[]){2, 4, 3, 3});
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, &t, &b, &out), WGC_ERROR_DTYPE_MISMATCH);
    {
        WgcTensor i16 = tensor_of(bi, WGC_DTYPE_I32, 4, (int64_t[]){1, 4, 6, 6});
        WgcTensor w16 = tensor_of(bw, WGC_DTYPE_I32, 4, (int64_t[]){2, 4, 3, 3});
        WgcTensor b16 = tensor_of(bb, WGC_DTYPE_I32, 1, (int64_t[]){2});
        WgcTensor o16 = tensor_of(bo, WGC_DTYPE_I32, 4, (int64_t[]){1, 2, 4, 4});
        EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &i16, &w16, &b16, &o16), WGC_ERROR_UNSUPPORTED);
    }
    t = tensor_of(bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 4, 4});
    t.offset = 500;
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, &w, &b, &t), WGC_ERROR_INVALID_ARGUMENT);
    t.offset = 0;
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, &w, &b, &t), WGC_ERROR_INVALID_ARGUMENT);
    t = out;
    t.offset = 4096;
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, &w, &b, &t), WGC_ERROR_OUT_OF_RANGE);
    WgcConv2dParams bad = p;
    bad.struct_size = 0;
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &bad, &in, &w, &b, &out), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_conv2d(env.stream, NULL, &in, &w, &b, &out), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_conv2d(env.stream, &p, &in, NULL, &b, &out), WGC_ERROR_NULL_POINTER);

    /* Pooling. */
    WgcPool2dParams pp = {sizeof pp, 3, 3, 1, 1, 0, 0, 0};
    WgcTensor pin = tensor_of(bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 6, 6});
    WgcTensor pout = tensor_of(bo, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 4, 4});
    t = tensor_of(bo, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 4, 5});
    EXPECT_STATUS(wgc_op_max_pool2d(env.stream, &pp, &pin, &t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_avg_pool2d(env.stream, &pp, &pin, &t), WGC_ERROR_SHAPE_MISMATCH);
    WgcPool2dParams pz = pp;
    pz.kernel_h = 0;
    EXPECT_STATUS(wgc_op_max_pool2d(env.stream, &pz, &pin, &pout), WGC_ERROR_INVALID_ARGUMENT);
    WgcPool2dParams pbig = pp;
    pbig.pad_h = 2;
    EXPECT_STATUS(wgc_op_avg_pool2d(env.stream, &pbig, &pin, &pout), WGC_ERROR_INVALID_ARGUMENT);
    WgcPool2dParams pk = {sizeof pk, 7, 7, 1, 1, 0, 0, 0};
    EXPECT_STATUS(wgc_op_max_pool2d(env.stream, &pk, &pin, &pout), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bo, WGC_DTYPE_F16, 4, (int64_t[]){1, 2, 4, 4});
    EXPECT_STATUS(wgc_op_max_pool2d(env.stream, &pp, &pin, &t), WGC_ERROR_DTYPE_MISMATCH);
    t = tensor_of(bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 4, 4});
    t.offset = 100;
    EXPECT_STATUS(wgc_op_max_pool2d(env.stream, &pp, &pin, &t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_max_pool2d(env.stream, NULL, &pin, &pout), WGC_ERROR_NULL_POINTER);
    {
        WgcTensor ii = tensor_of(bi, WGC_DTYPE_I32, 4, (int64_t[]){1, 2, 6, 6});
        WgcTensor oi = tensor_of(bo, WGC_DTYPE_I32, 4, (int64_t[]){1, 2, 4, 4});
        EXPECT_STATUS(wgc_op_avg_pool2d(env.stream, &pp, &ii, &oi), WGC_ERROR_UNSUPPORTED);
        EXPECT_STATUS(wgc_op_global_avg_pool2d(env.stream, &ii, &oi), WGC_ERROR_UNSUPPORTED);
    }
    t = tensor_of(bo, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 1, 2});
    EXPECT_STATUS(wgc_op_global_avg_pool2d(env.stream, &pin, &t), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bo, WGC_DTYPE_F32, 3, (int64_t[]){1, 2, 1});
    EXPECT_STATUS(wgc_op_global_avg_pool2d(env.stream, &pin, &t), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 1, 1});
    t.offset = 1000;
    EXPECT_STATUS(wgc_op_global_avg_pool2d(env.stream, &pin, &t), WGC_ERROR_INVALID_ARGUMENT);

    /* Nothing was written by the failed calls. */
    float back[4096];
    CHECK(wgc_buffer_read(bo, 0, back, sizeof back));
    EXPECT(memcmp(back, base, sizeof back) == 0);
    CHECK(wgc_buffer_read(bi, 0, back, sizeof back));
    EXPECT(memcmp(back, ones, sizeof back) == 0);
    wgc_buffer_release(bi), wgc_buffer_release(bw), wgc_buffer_release(bo), wgc_buffer_release(bb);
}

int main(void) {
    env = test_env();
    test_conv();
    test_conv_f16();
    test_conv_f16_nonfinite();
    test_pool();
    test_pool_f16();
    test_nan_max();
    test_errors();
    test_env_release(&env);
    return test_finish("test_conv");
}
