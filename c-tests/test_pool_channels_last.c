/* wgc_op_max_pool2d and wgc_op_avg_pool2d over channels-last (NHWC) views
 * against double-precision references, f32 and f16: channel counts that
 * take the four-channel (vec4) kernels (4, 8, 12) and counts that do not
 * (3, 6); windows 2x2 and 3x3 (written out in the vec4 kernels) and 5x5
 * (from the uniform), strides 1 and 2, padding 0, 1 (and 2), odd
 * spatial sizes; NaN, -inf and +inf in windows (NaN wins a max, padding
 * never does: one channel holds only negative values); views whose offsets
 * or pixel strides are (not) multiples of four, with the output's gaps
 * checked untouched.
 * Tolerances: max pooling exact; average pooling f32 1e-6 + 1e-6*|ref|, f16
 * 1e-3 + 2e-3*|ref| (the output's f16 rounding), references on the
 * dtype-rounded inputs. */
#include "test_util.h"

static TestEnv env;

/* A channels-last (N, C, H, W) view: element (n, c, h, w) at
 * offset + ((n * H + h) * W + w) * pixel + c, pixel >= C. */
typedef struct {
    int64_t n, c, h, w, pixel, offset;
} Nhwc;

static int64_t nhwc_at(const Nhwc *v, int64_t n, int64_t c, int64_t h, int64_t w) {
    return v->offset + ((n * v->h + h) * v->w + w) * v->pixel + c;
}
static int64_t nhwc_span(const Nhwc *v) {
    return v->offset + v->n * v->h * v->w * v->pixel;
}
static WgcTensor nhwc_tensor(WgcBuffer *b, WgcDtype dt, const Nhwc *v) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b, t.dtype = dt, t.rank = 4, t.offset = v->offset;
    int64_t shape[4] = {v->n, v->c, v->h, v->w}, strides[4] = {v->h * v->w * v->pixel, 1, v->w * v->pixel, v->pixel};
    for (int i = 0; i < 4; i++) t.shape[i] = shape[i], t.strides[i] = strides[i];
    return t;
}

/* n values as dtype dt's bytes; f16 rounds x in place so that references
 * see the values the GPU gets. */
static WgcBuffer *upload_as(WgcDtype dt, float *x, int64_t n) {
    if (dt == WGC_DTYPE_F32) return upload(env.device, x, (size_t)n * 4);
    uint16_t *h = malloc((size_t)n * 2 + 2);
    for (int64_t i = 0; i < n; i++) h[i] = f32_to_f16(x[i]), x[i] = f16_to_f32(h[i]);
    WgcBuffer *b = upload(env.device, h, (size_t)n * 2);
    free(h);
    return b;
}
static float *read_as(WgcDtype dt, WgcBuffer *b, int64_t n) {
    float *x = malloc((size_t)n * 4 + 4);
    if (dt == WGC_DTYPE_F32) {
        CHECK(wgc_buffer_read(b, 0, x, (size_t)n * 4));
        return x;
    }
    size_t bytes = ((size_t)n * 2 + 3) & ~(size_t)3;
    uint16_t *h = malloc(bytes);
    CHECK(wgc_buffer_read(b, 0, h, bytes));
    for (int64_t i = 0; i < n; i++) x[i] = f16_to_f32(h[i]);
    free(h);
    return x;
}

/* Inputs in [-4, 4) with image 0's channel 0 in [-4, -1) (zeros from
 * padding would win its max); NaN, infinities and a corner of -inf. */
static float *input_values(const Nhwc *in) {
    int64_t n = nhwc_span(in);
    float *x = malloc((size_t)n * 4);
    fill_uniform_f32(x, (size_t)n, -4, 4);
    for (int64_t h = 0; h < in->h; h++)
        for (int64_t w = 0; w < in->w; w++) x[nhwc_at(in, 0, 0, h, w)] = (float)rng_uniform(-4, -1);
    int64_t last = in->n - 1, c_last = in->c - 1;
    x[nhwc_at(in, 0, 1 % in->c, 1, 2)] = NAN;
    x[nhwc_at(in, last, c_last, 2, 3)] = -INFINITY;
    for (int64_t h = 0; h < 2; h++)
        for (int64_t w = 0; w < 2; w++) x[nhwc_at(in, last, 2 % in->c, h, w)] = -INFINITY;
    x[nhwc_at(in, last, 0, 4, 5)] = INFINITY;
    x[nhwc_at(in, last, 0, 4, 6)] = -INFINITY; /* beside +inf: averages of both are NaN */
    return x;
}

static const float UNTOUCHED = 77.0f;

/* One pooling of `in` into the channels-last view shaped by `out_pixel`
 * and `out_offset`; returns the number of wrong elements. */
static int pool_case(const char *what, WgcDtype dt, int max, Nhwc in, int64_t out_pixel, int64_t out_offset, int k,
                     int stride, int pad, int include_pad) {
    int64_t oh = (in.h + 2 * pad - k) / stride + 1, ow = (in.w + 2 * pad - k) / stride + 1;
    Nhwc out = {in.n, in.c, oh, ow, out_pixel, out_offset};
    int64_t ni = nhwc_span(&in), no = nhwc_span(&out);
    float *x = input_values(&in);
    WgcBuffer *bi = upload_as(dt, x, ni);
    float *fill = malloc((size_t)no * 4);
    for (int64_t i = 0; i < no; i++) fill[i] = UNTOUCHED;
    WgcBuffer *bo = upload_as(dt, fill, no);
    WgcTensor ti = nhwc_tensor(bi, dt, &in), to = nhwc_tensor(bo, dt, &out);
    WgcPool2dParams p = {sizeof p, (uint32_t)k, (uint32_t)k, (uint32_t)stride, (uint32_t)stride,
                         (uint32_t)pad, (uint32_t)pad, (uint32_t)include_pad};
    CHECK(max ? wgc_op_max_pool2d(env.stream, &p, &ti, &to) : wgc_op_avg_pool2d(env.stream, &p, &ti, &to));
    float *got = read_as(dt, bo, no);
    /* Every element of the buffer: pooled values where the view has them,
     * the fill elsewhere. */
    double *ref = malloc((size_t)no * 8);
    for (int64_t i = 0; i < no; i++) ref[i] = UNTOUCHED;
    for (int64_t n = 0; n < out.n; n++)
        for (int64_t c = 0; c < out.c; c++)
            for (int64_t y = 0; y < oh; y++)
                for (int64_t z = 0; z < ow; z++) {
                    double best = -INFINITY, sum = 0;
                    int64_t count = 0, nan = 0;
                    for (int a = 0; a < k; a++)
                        for (int b = 0; b < k; b++) {
                            int64_t iy = y * stride - pad + a, ix = z * stride - pad + b;
                            if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                            double v = x[nhwc_at(&in, n, c, iy, ix)];
                            nan |= isnan(v);
                            best = v > best ? v : best;
                            sum += v;
                            count++;
                        }
                    double avg = sum / (double)(include_pad ? k * k : count);
                    ref[nhwc_at(&out, n, c, y, z)] = max ? (nan ? NAN : best) : avg;
                }
    int f16 = dt == WGC_DTYPE_F16;
    double atol = max ? 0 : f16 ? 1e-3 : 1e-6, rtol = max ? 0 : f16 ? 2e-3 : 1e-6;
    char name[160];
    snprintf(name, sizeof name, "%s %s %s C=%lld %dx%d s%d p%d%s %lldx%lld", what, f16 ? "f16" : "f32",
             max ? "max" : "avg", (long long)in.c, k, k, stride, pad, include_pad ? " include-pad" : "",
             (long long)in.h, (long long)in.w);
    int bad = compare_f32(name, got, ref, (size_t)no, atol, rtol);
    free(x), free(fill), free(got), free(ref);
    wgc_buffer_release(bi), wgc_buffer_release(bo);
    return bad;
}

/* Dense views: every channel count, window, stride and padding. */
static void test_dense(WgcDtype dt) {
    const int64_t channels[] = {4, 8, 12, 3, 6};
    int cases = 0;
    for (size_t ci = 0; ci < sizeof channels / sizeof channels[0]; ci++) {
        int64_t c = channels[ci];
        Nhwc in = {2, c, ci % 2 ? 5 : 7, ci % 2 ? 11 : 9, c, 0};
        for (int max = 0; max < 2; max++)
            for (int k = 2; k <= 3; k++)
                for (int stride = 1; stride <= 2; stride++)
                    for (int pad = 0; pad <= 1; pad++, cases++)
                        pool_case("dense", dt, max, in, c, 0, k, stride, pad, (k + stride + pad) % 2);
        /* A window the vec4 kernels take from the uniform. */
        for (int max = 0; max < 2; max++, cases++) pool_case("5x5 window", dt, max, in, c, 0, 5, 2, 2, max);
    }
    printf("%s: %d dense channels-last poolings\n", dt == WGC_DTYPE_F16 ? "f16" : "f32", cases);
}

/* Offsets and pixel strides: multiples of four (vec4 kernels) or not
 * (the scalar kernel), padded output pixels left untouched. */
static void test_views(WgcDtype dt) {
    struct {
        const char *what;
        int64_t in_pixel, in_offset, out_pixel, out_offset;
    } views[] = {
        {"offsets 4 and 8", 8, 4, 8, 8},
        {"input offset 2", 8, 2, 8, 0},
        {"output offset 6", 8, 0, 8, 6},
        {"pixels 12 apart", 12, 0, 12, 4},
        {"input pixels 10 apart", 10, 0, 8, 0},
        {"output pixels 10 apart", 8, 0, 10, 0},
    };
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        for (int max = 0; max < 2; max++) {
            Nhwc in = {3, 8, 9, 7, views[i].in_pixel, views[i].in_offset};
            pool_case(views[i].what, dt, max, in, views[i].out_pixel, views[i].out_offset, 3, 2, 1, max);
        }
}

int main(void) {
    env = test_env();
    test_dense(WGC_DTYPE_F32);
    test_views(WGC_DTYPE_F32);
    if (env.info.has_f16) {
        test_dense(WGC_DTYPE_F16);
        test_views(WGC_DTYPE_F16);
    } else {
        printf("no f16 on this adapter: f16 pooling skipped\n");
    }
    test_env_release(&env);
    return test_finish("test_pool_channels_last");
}
