/* ResNet-50's and MobileNetV2's dense convolution layers one by one
 * (conv + folded bias + ReLU through wgc_op_conv2d_bn_act, channels-last
 * input and output), timed on the GPU, for comparing routes, builds and
 * PyTorch (bench/torch_conv_layers.py) in one run, and each f16 layer
 * against its f32 twin.
 *
 *   wgc_conv_layers [--check] [--batch 32,256] [--dtype f16,f32] [--iters 15]
 *
 * --check compares 64 sampled outputs of every layer at batch 1 with a
 * double-precision reference first (exit 1 on a mismatch); --iters 0
 * only checks. Timing: per layer, the median over `iters` runs of 5
 * calls of GPU event time, after a 0.3 s warm-up. One JSON line per layer
 * and configuration, with the route wgc_op_conv2d_explain names. */
#include <math.h>

#include "bench_timing.h"

typedef struct {
    int64_t c, o, hw, k;
} Layer;

/* The distinct dense layers (stride 1) of ResNet-50 and MobileNetV2 at 224x224. */
static const Layer LAYERS[] = {{64, 64, 56, 1},    {256, 64, 56, 1},   {64, 256, 56, 1},  {256, 128, 56, 1},
                               {128, 512, 28, 1},  {512, 128, 28, 1},  {256, 1024, 14, 1}, {1024, 256, 14, 1},
                               {512, 2048, 7, 1},  {2048, 512, 7, 1},  {64, 64, 56, 3},   {128, 128, 28, 3},
                               {256, 256, 14, 3},  {512, 512, 7, 3},   {24, 144, 56, 1},  {144, 24, 56, 1},
                               {32, 192, 28, 1},   {192, 32, 28, 1}};
#define NLAYERS ((int)(sizeof LAYERS / sizeof LAYERS[0]))

static WgcDevice *dev;
static WgcStream *st;

typedef struct {
    WgcConv2dBnActParams p;
    WgcTensor x, w, b, y;
} Conv;

static void run(void *c_) {
    const Conv *c = c_;
    CHECK(wgc_op_conv2d_bn_act(st, &c->p, &c->x, NULL, NULL, NULL, NULL, NULL, NULL, &c->w, &c->b, &c->y));
}

/* n values in [-scale, scale) of dtype dt, as stored (rounded) in *host. */
static WgcBuffer *values(WgcDtype dt, size_t n, double scale, uint64_t seed, double **host) {
    size_t size = (n * (dt == WGC_DTYPE_F16 ? 2 : 4) + 3) & ~(size_t)3;
    void *bytes = calloc(1, size);
    double *h = host ? malloc(n * sizeof *h) : NULL;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        float v = (float)(((double)(seed >> 11) / 9007199254740992.0 * 2 - 1) * scale);
        if (dt == WGC_DTYPE_F16) ((uint16_t *)bytes)[i] = to_half(v), v = from_half(((uint16_t *)bytes)[i]);
        else ((float *)bytes)[i] = v;
        if (h) h[i] = v;
    }
    WgcBuffer *b;
    CHECK(wgc_buffer_create(dev, size, WGC_BUFFER_USAGE_STORAGE, &b));
    CHECK(wgc_buffer_write(b, 0, bytes, size));
    free(bytes);
    if (host) *host = h;
    return b;
}

/* (N, C, H, W) with channels-last strides. */
static WgcTensor nhwc(WgcBuffer *b, WgcDtype dt, int64_t n, int64_t c, int64_t h, int64_t w) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b, t.dtype = dt, t.rank = 4;
    t.shape[0] = n, t.shape[1] = c, t.shape[2] = h, t.shape[3] = w;
    t.strides[0] = c * h * w, t.strides[1] = 1, t.strides[2] = w * c, t.strides[3] = c;
    return t;
}

/* Returns the number of wrong sampled outputs (check), else times the layer. */
static int layer(const Layer *l, WgcDtype dt, int64_t n, int check, int iters) {
    int64_t pad = l->k / 2, hw = l->hw, k = l->k;
    size_t nx = (size_t)(n * l->c * hw * hw), nw = (size_t)(l->o * l->c * k * k), ny = (size_t)(n * l->o * hw * hw);
    double *hx = NULL, *hwt = NULL, *hb = NULL;
    WgcBuffer *bx = values(dt, nx, 1.0, 1, check ? &hx : NULL);
    WgcBuffer *bw = values(dt, nw, 1.0 / sqrt((double)(l->c * k * k)), 2, check ? &hwt : NULL);
    WgcBuffer *bb = values(dt, (size_t)l->o, 0.5, 3, check ? &hb : NULL);
    WgcBuffer *by = values(dt, ny, 0, 4, NULL);
    Conv c;
    memset(&c, 0, sizeof c);
    c.p.struct_size = sizeof c.p;
    c.p.stride_h = c.p.stride_w = 1;
    c.p.pad_h = c.p.pad_w = (uint32_t)pad;
    c.p.activation = WGC_ACTIVATION_RELU;
    c.p.folded = 1;
    c.x = nhwc(bx, dt, n, l->c, hw, hw), c.y = nhwc(by, dt, n, l->o, hw, hw);
    c.w = nhwc(bw, dt, l->o, l->c, k, k); /* (O, KH, KW, C) in memory */
    CHECK(wgc_tensor_contiguous(bb, dt, 1, (int64_t[]){l->o}, &c.b));
    const char *dts = dt == WGC_DTYPE_F16 ? "f16" : "f32";
    int bad = 0;
    if (check) {
        run(&c);
        float *y = read_back(by, dt, ny);
        uint64_t s = 7;
        for (int i = 0; i < 64; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            int64_t b = (int64_t)((s >> 33) % (uint64_t)n), o = (int64_t)((s >> 13) % (uint64_t)l->o);
            int64_t oy = (int64_t)((s >> 23) % (uint64_t)hw), ox = (int64_t)((s >> 43) % (uint64_t)hw);
            double acc = hb[o], mag = fabs(hb[o]);
            for (int64_t ky = 0; ky < k; ky++)
                for (int64_t kx = 0; kx < k; kx++) {
                    int64_t iy = oy - pad + ky, ix = ox - pad + kx;
                    if (iy < 0 || iy >= hw || ix < 0 || ix >= hw) continue;
                    for (int64_t ch = 0; ch < l->c; ch++) {
                        double v = hx[((b * hw + iy) * hw + ix) * l->c + ch] * hwt[((o * k + ky) * k + kx) * l->c + ch];
                        acc += v, mag += fabs(v);
                    }
                }
            double ref = acc > 0 ? acc : 0, got = y[((b * hw + oy) * hw + ox) * l->o + o];
            double tol = dt == WGC_DTYPE_F16 ? mag / 512 + fabs(ref) / 1024 : mag / 1e5 + 1e-6;
            if (!(fabs(got - ref) <= tol)) {
                if (bad < 3) fprintf(stderr, "%dx%d %lld->%lld %s: out[%lld,%lld,%lld,%lld] = %g, expected %g\n",
                                     (int)k, (int)k, (long long)l->c, (long long)l->o, dts, (long long)b,
                                     (long long)o, (long long)oy, (long long)ox, got, ref);
                bad++;
            }
        }
        free(y);
    } else {
        double ms = median_gpu_ms(st, run, &c, iters, 300.0);
        double flop = 2.0 * (double)ny * (double)(l->c * k * k);
        double bytes = (double)(nx + ny) * (dt == WGC_DTYPE_F16 ? 2 : 4);
        char line[2048] = "";
        size_t len = 0;
        WgcConv2dParams cp = {sizeof cp, 1, 1, (uint32_t)pad, (uint32_t)pad, 1, 1, 1};
        if (wgc_op_conv2d_explain(st, &cp, &c.x, &c.w, &c.b, &c.y, line, sizeof line, &len) == WGC_OK) {
            char *cut = strstr(line, " because");
            if (cut) *cut = 0;
        }
        printf("{\"case\": \"conv%dx%d_%lld_%lld_%lld\", \"dtype\": \"%s\", \"batch\": %lld, \"ms\": %.4f, "
               "\"tflops\": %.1f, \"tb_s\": %.2f, \"route\": \"%s\"}\n",
               (int)k, (int)k, (long long)l->c, (long long)l->o, (long long)hw, dts, (long long)n, ms,
               flop / ms / 1e9, bytes / ms / 1e9, line + (strncmp(line, "route ", 6) ? 0 : 6));
        fflush(stdout);
    }
    free(hx), free(hwt), free(hb);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
    return bad;
}

static int list(const char *s, int64_t *out, int max) {
    int n = 0;
    while (s && *s && n < max) {
        out[n++] = strtoll(s, NULL, 10);
        s = strchr(s, ',');
        if (s) s++;
    }
    return n;
}

int main(int argc, char **argv) {
    int check = 0, iters = 15, f16 = 1, f32 = 1;
    int64_t batches[8] = {32, 256};
    int nb = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check")) check = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) nb = list(argv[++i], batches, 8);
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            const char *d = argv[++i];
            f16 = strstr(d, "f16") != NULL, f32 = strstr(d, "f32") != NULL;
        }
    }
    WgcInstance *inst;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev));
    CHECK(wgc_stream_create(dev, &st));
    WgcAdapterInfo info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK(wgc_device_info(dev, &info));
    if (!info.has_f16) f16 = 0;
    WgcDtype dts[2];
    int nd = 0;
    if (f16) dts[nd++] = WGC_DTYPE_F16;
    if (f32) dts[nd++] = WGC_DTYPE_F32;
    int bad = 0;
    if (check) {
        for (int d = 0; d < nd; d++)
            for (int i = 0; i < NLAYERS; i++) bad += layer(&LAYERS[i], dts[d], 1, 1, 0) != 0;
        fprintf(stderr, "wgc_conv_layers: %d of %d layer checks failed\n", bad, NLAYERS * nd);
    }
    if (iters > 0 && !bad)
        for (int b = 0; b < nb; b++)
            for (int d = 0; d < nd; d++)
                for (int i = 0; i < NLAYERS; i++) layer(&LAYERS[i], dts[d], batches[b], 0, iters);
    wgc_stream_release(st);
    wgc_device_release(dev);
    wgc_instance_release(inst);
    return bad ? 1 : 0;
}
