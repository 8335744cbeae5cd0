/* The depthwise convolutions of MobileNetV2 (3x3, padding 1, ReLU6 after
 * a folded batch norm: wgc_op_conv2d_bn_act with the folded weight and
 * bias given) timed on the GPU, for comparing library builds and PyTorch
 * (bench/torch_dw.py) in one run.
 *
 *   wgc_dw_bench [--check] [--batch 32,256] [--dtype f16,f32]
 *                [--layout nchw,nhwc] [--iters 20] [--tag new]
 *
 * --check compares every layer at batch 2 with a double-precision
 * reference first (exit 1 on a mismatch); --iters 0 only checks. Timing: per layer, the mean
 * GPU time of `iters` calls from the profiler's timestamps (after a
 * warm-up), and the effective bandwidth: input + output bytes over that
 * time. One JSON line per layer and configuration. */
#include <math.h>
#include <time.h>

#include "bench_util.h"

typedef struct {
    int64_t c, h, stride;
} Layer;

/* Each distinct depthwise layer of MobileNetV2 at 224x224. */
static const Layer LAYERS[] = {{32, 112, 1},  {96, 112, 2},  {144, 56, 1}, {144, 56, 2}, {192, 28, 1},
                               {192, 28, 2},  {384, 14, 1},  {576, 14, 1}, {576, 14, 2}, {960, 7, 1}};
#define NLAYERS ((int)(sizeof LAYERS / sizeof LAYERS[0]))

static WgcDevice *dev;
static WgcStream *stream;

static int64_t out_size(const Layer *l) { return (l->h + 2 - 3) / l->stride + 1; }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Deterministic values in [-1, 1). */
static float value(uint64_t i) {
    uint64_t z = (i + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    z ^= z >> 31;
    return (float)((double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* A buffer of n values of dt: value(seed + i), rounded, for the first
 * 2^24; past that the first 2^24 repeat (timing data only). */
static WgcBuffer *filled(WgcDtype dt, size_t n, uint64_t seed) {
    size_t es = dt == WGC_DTYPE_F16 ? 2 : 4, chunk = 1 << 24;
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, n * es + 16, WGC_BUFFER_USAGE_STORAGE, &b));
    void *host = malloc(chunk * es);
    for (size_t i = 0; i < chunk && i < n; i++) {
        float v = value(seed + i);
        if (es == 2) ((uint16_t *)host)[i] = to_half(v);
        else ((float *)host)[i] = v;
    }
    for (size_t at = 0; at < n; at += chunk) {
        size_t m = n - at < chunk ? n - at : chunk;
        CHECK(wgc_buffer_write(b, at * es, host, m * es));
    }
    free(host);
    return b;
}

/* f16 to f32 with subnormals (bench_util.h's from_half has none). */
static double half_value(uint16_t h) {
    double m = (double)(h & 0x3ff);
    int e = (h >> 10) & 0x1f;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

static float host_value(WgcDtype dt, uint64_t i) {
    float v = value(i);
    return dt == WGC_DTYPE_F16 ? from_half(to_half(v)) : v;
}

/* Tensor (N, C, H, W) over b in the layout. */
static WgcTensor image(WgcBuffer *b, WgcDtype dt, int64_t n, int64_t c, int64_t h, int nhwc) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = dt;
    t.rank = 4;
    int64_t shape[4] = {n, c, h, h};
    int64_t cf[4] = {c * h * h, h * h, h, 1}, cl[4] = {h * h * c, 1, h * c, c};
    for (int d = 0; d < 4; d++) t.shape[d] = shape[d], t.strides[d] = nhwc ? cl[d] : cf[d];
    return t;
}

static WgcTensor vector_of(WgcBuffer *b, WgcDtype dt, int rank, const int64_t *shape) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = dt;
    t.rank = (uint32_t)rank;
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) t.shape[d] = shape[d], t.strides[d] = s, s *= shape[d];
    return t;
}

static void layer_call(const Layer *l, WgcTensor *x, WgcTensor *w, WgcTensor *b, WgcTensor *y) {
    WgcConv2dBnActParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)l->stride;
    p.pad_h = p.pad_w = 1;
    p.groups = (uint32_t)l->c;
    p.eps = 1e-5f;
    p.activation = WGC_ACTIVATION_RELU6;
    p.folded = 1;
    CHECK(wgc_op_conv2d_bn_act(stream, &p, x, NULL, NULL, NULL, NULL, NULL, NULL, w, b, y));
}

/* Batch 2 of every layer against double precision. */
static int check_layer(const Layer *l, WgcDtype dt, int nhwc) {
    int64_t N = 2, C = l->c, H = l->h, OH = out_size(l), s = l->stride;
    size_t nx = (size_t)(N * C * H * H), ny = (size_t)(N * C * OH * OH), nw = (size_t)(C * 9);
    WgcBuffer *bx = filled(dt, nx, 1), *bw = filled(dt, nw, 1u << 30), *bb = filled(dt, (size_t)C, 3u << 30), *by = NULL;
    CHECK(wgc_buffer_create(dev, ny * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor x = image(bx, dt, N, C, H, nhwc), y = image(by, dt, N, C, OH, nhwc);
    WgcTensor w = vector_of(bw, dt, 4, (int64_t[]){C, 1, 3, 3}), b = vector_of(bb, dt, 1, (int64_t[]){C});
    layer_call(l, &x, &w, &b, &y);
    size_t es = dt == WGC_DTYPE_F16 ? 2 : 4;
    void *host = malloc(ny * es);
    CHECK(wgc_buffer_read(by, 0, host, ny * es));
    int bad = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OH; ox++) {
                    double acc = host_value(dt, (3u << 30) + (uint64_t)c), mag = fabs(acc);
                    for (int a = 0; a < 3; a++)
                        for (int bb2 = 0; bb2 < 3; bb2++) {
                            int64_t iy = oy * s - 1 + a, ix = ox * s - 1 + bb2;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                            int64_t xi = nhwc ? ((n * H + iy) * H + ix) * C + c : ((n * C + c) * H + iy) * H + ix;
                            double p = (double)host_value(dt, 1 + (uint64_t)xi) *
                                       host_value(dt, (1u << 30) + (uint64_t)(c * 9 + a * 3 + bb2));
                            acc += p, mag += fabs(p);
                        }
                    double ref = acc < 0 ? 0 : acc > 6 ? 6 : acc;
                    int64_t yi = nhwc ? ((n * OH + oy) * OH + ox) * C + c : ((n * C + c) * OH + oy) * OH + ox;
                    double got = es == 2 ? half_value(((uint16_t *)host)[yi]) : ((float *)host)[yi];
                    double tol = 4e-6 * mag + (es == 2 ? fabs(ref) / 1024 + ldexp(1, -25) : 1e-6 * fabs(ref));
                    if (!(fabs(got - ref) <= tol) && bad++ < 3)
                        fprintf(stderr, "check C%lld H%lld s%lld %s %s: out[%lld,%lld,%lld,%lld] = %.7g, expected %.7g\n",
                                (long long)C, (long long)H, (long long)s, es == 2 ? "f16" : "f32",
                                nhwc ? "nhwc" : "nchw", (long long)n, (long long)c, (long long)oy, (long long)ox, got,
                                ref);
                }
    free(host);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
    return bad;
}

/* Mean GPU ns per call (all its commands: the convolution, and an
 * activation pass where the route has none) over `iters` calls. */
static double timed(const Layer *l, WgcTensor *x, WgcTensor *w, WgcTensor *b, WgcTensor *y, int iters) {
    for (int i = 0; i < 3; i++) layer_call(l, x, w, b, y);
    CHECK(wgc_stream_synchronize(stream));
    CHECK(wgc_stream_profile_clear(stream));
    CHECK(wgc_stream_set_profiling(stream, 1));
    for (int i = 0; i < iters; i++) layer_call(l, x, w, b, y);
    CHECK(wgc_stream_set_profiling(stream, 0));
    WgcProfileRecord *r = NULL;
    size_t n = 0;
    CHECK(wgc_stream_profile_records(stream, &r, &n));
    double total = 0;
    for (size_t i = 0; i < n; i++) total += (double)r[i].gpu_ns;
    CHECK(wgc_profile_records_free(r));
    CHECK(wgc_stream_profile_clear(stream));
    return total / iters;
}

static int parse_list(const char *s, int max, char out[][8]) {
    int n = 0;
    while (*s && n < max) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len > 7) len = 7;
        memcpy(out[n], s, len);
        out[n][len] = 0;
        n++;
        s += len + (e ? 1 : 0);
        if (!e) break;
    }
    return n;
}

int main(int argc, char **argv) {
    char batches[4][8] = {"32", "256"}, dtypes[2][8] = {"f16", "f32"}, layouts[2][8] = {"nchw", "nhwc"};
    int nb = 2, nd = 2, nl = 2, iters = 20, check = 0;
    const char *tag = "wgc";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--check")) check = 1;
        else if (!strcmp(a, "--batch")) nb = parse_list(v, 4, batches), i++;
        else if (!strcmp(a, "--dtype")) nd = parse_list(v, 2, dtypes), i++;
        else if (!strcmp(a, "--layout")) nl = parse_list(v, 2, layouts), i++;
        else if (!strcmp(a, "--iters")) iters = atoi(v), i++;
        else if (!strcmp(a, "--tag")) tag = v, i++;
        else {
            fprintf(stderr, "usage: %s [--check] [--batch 32,256] [--dtype f32,f16] [--layout nchw,nhwc] "
                            "[--iters 20] [--tag NAME]\n", argv[0]);
            return 2;
        }
    }
    WgcInstance *instance = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &instance));
    WgcDeviceOptions opts = {0};
    opts.struct_size = sizeof opts;
    opts.adapter_index = -1;
    CHECK(wgc_device_create(instance, &opts, &dev));
    CHECK(wgc_stream_create(dev, &stream));
    int failures = 0;
    for (int d = 0; d < nd; d++)
        for (int l = 0; check && l < nl; l++) {
            WgcDtype dt = strcmp(dtypes[d], "f16") ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
            int bad = 0;
            for (int i = 0; i < NLAYERS; i++) bad += check_layer(&LAYERS[i], dt, !strcmp(layouts[l], "nhwc"));
            printf("{\"tag\": \"%s\", \"check\": \"%s %s\", \"wrong\": %d}\n", tag, dtypes[d], layouts[l], bad);
            failures += bad;
        }
    fflush(stdout);
    for (int d = 0; d < nd && !failures && iters > 0; d++)
        for (int bi = 0; bi < nb; bi++) {
            WgcDtype dt = strcmp(dtypes[d], "f16") ? WGC_DTYPE_F32 : WGC_DTYPE_F16;
            size_t es = dt == WGC_DTYPE_F16 ? 2 : 4;
            int64_t N = atoll(batches[bi]);
            size_t max_in = 0, max_out = 0, max_c = 0;
            for (int i = 0; i < NLAYERS; i++) {
                size_t in = (size_t)(N * LAYERS[i].c * LAYERS[i].h * LAYERS[i].h);
                size_t o = (size_t)(N * LAYERS[i].c * out_size(&LAYERS[i]) * out_size(&LAYERS[i]));
                max_in = in > max_in ? in : max_in, max_out = o > max_out ? o : max_out;
                max_c = (size_t)LAYERS[i].c > max_c ? (size_t)LAYERS[i].c : max_c;
            }
            WgcBuffer *bx = filled(dt, max_in, 1), *bw = filled(dt, max_c * 9, 7), *bb = filled(dt, max_c, 9);
            WgcBuffer *by = NULL;
            CHECK(wgc_buffer_create(dev, max_out * es + 16, WGC_BUFFER_USAGE_STORAGE, &by));
            for (int l = 0; l < nl; l++) {
                int nhwc = !strcmp(layouts[l], "nhwc");
                /* Memory-bound kernels run slowly for a while after a big upload: warm up 0.5 s. */
                const Layer *first = &LAYERS[0];
                WgcTensor x0 = image(bx, dt, N, first->c, first->h, nhwc);
                WgcTensor y0 = image(by, dt, N, first->c, out_size(first), nhwc);
                WgcTensor w0 = vector_of(bw, dt, 4, (int64_t[]){first->c, 1, 3, 3});
                WgcTensor b0 = vector_of(bb, dt, 1, (int64_t[]){first->c});
                for (double t0 = now(); now() - t0 < 0.5;) {
                    for (int i = 0; i < 10; i++) layer_call(first, &x0, &w0, &b0, &y0);
                    CHECK(wgc_stream_synchronize(stream));
                }
                for (int i = 0; i < NLAYERS; i++) {
                    const Layer *ly = &LAYERS[i];
                    int64_t OH = out_size(ly);
                    WgcTensor x = image(bx, dt, N, ly->c, ly->h, nhwc), y = image(by, dt, N, ly->c, OH, nhwc);
                    WgcTensor w = vector_of(bw, dt, 4, (int64_t[]){ly->c, 1, 3, 3});
                    WgcTensor b = vector_of(bb, dt, 1, (int64_t[]){ly->c});
                    double ns = timed(ly, &x, &w, &b, &y, iters);
                    double bytes = (double)es * (double)N * (double)ly->c * (double)(ly->h * ly->h + OH * OH);
                    printf("{\"tag\": \"%s\", \"layer\": \"dw%lld_%lld_s%lld\", \"batch\": %lld, \"dtype\": \"%s\", "
                           "\"layout\": \"%s\", \"us\": %.2f, \"gbs\": %.1f}\n",
                           tag, (long long)ly->c, (long long)ly->h, (long long)ly->stride, (long long)N, dtypes[d],
                           layouts[l], ns / 1e3, bytes / ns);
                    fflush(stdout);
                }
            }
            wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
        }
    wgc_stream_release(stream);
    wgc_device_release(dev);
    wgc_instance_release(instance);
    return failures ? 1 : 0;
}
