/* GEMM + bias + activation fused (wgc_op_gemm_epilogue) against the bare
 * GEMM (wgc_op_gemm) of the same shape in the same run, and convolution +
 * bias + ReLU (wgc_op_conv2d_bn_act, folded) against the bare convolution:
 *   gemm_epilogue_bench            the prefill shapes and the ResNet conv
 *   gemm_epilogue_bench small      small shapes only (a check on any device)
 * Every case is checked first: the fused GEMM against a double-precision
 * reference on sampled elements (all of them for small shapes), the conv
 * with ReLU against the bare conv's output with ReLU applied on the host.
 * Timings are GPU timestamps, the median of 15 runs of 5 calls each.
 * Build: cc -O2 -std=c11 -Iinclude bench/gemm_epilogue_bench.c
 * -Ltarget/release -lwgcompute -lm -o gemm_epilogue_bench */
#include <math.h>
#include <time.h>

#include "bench_timing.h"

static WgcDevice *dev;
static WgcStream *st;
static int failures;

/* The median GPU time of op over 15 runs, after a warm-up of 1 s. */
static double median_ms(void (*op)(void *), void *arg) { return median_gpu_ms(st, op, arg, 15, 1000.0); }

static uint64_t rng = 88172645463325252ull;
static float uniform(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1;
}

/* n values in [-1, 1) in dt (f16 or f32); their exact values in *host. */
static WgcBuffer *random_buffer(WgcDtype dt, size_t n, float scale, float **host) {
    float *h = malloc(n * 4);
    void *bytes = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        float v = uniform() * scale;
        if (dt == WGC_DTYPE_F16) {
            ((uint16_t *)bytes)[i] = to_half(v);
            v = from_half(((uint16_t *)bytes)[i]);
        } else {
            ((float *)bytes)[i] = v;
        }
        h[i] = v;
    }
    WgcBuffer *b;
    size_t size = (n * (dt == WGC_DTYPE_F16 ? 2 : 4) + 3) & ~(size_t)3;
    CHECK(wgc_buffer_create(dev, size, WGC_BUFFER_USAGE_STORAGE, &b));
    CHECK(wgc_buffer_write(b, 0, bytes, size));
    free(bytes);
    if (host) *host = h;
    else free(h);
    return b;
}

static WgcTensor tensor(WgcBuffer *b, WgcDtype dt, uint32_t rank, const int64_t *shape) {
    WgcTensor t;
    CHECK(wgc_tensor_contiguous(b, dt, rank, shape, &t));
    return t;
}

typedef struct {
    WgcGemmEpilogueParams p;
    WgcTensor x, w, bias, y;
} Gemm;

static void run_bare(void *g_) {
    Gemm *g = g_;
    CHECK(wgc_op_gemm(st, 1.0f, &g->x, 0, &g->w, 1, 0.0f, &g->y));
}
/* The bare product with alpha 0.5: what the kernels' epilogue store costs
 * by itself (alpha 1 stores the fragments directly). */
static void run_bare_alpha(void *g_) {
    Gemm *g = g_;
    CHECK(wgc_op_gemm(st, 0.5f, &g->x, 0, &g->w, 1, 0.0f, &g->y));
}
/* The bias alone, fused. */
static void run_bias(void *g_) {
    Gemm *g = g_;
    WgcGemmEpilogueParams p = g->p;
    p.activation = WGC_ACTIVATION_NONE;
    CHECK(wgc_op_gemm_epilogue(st, &p, &g->x, &g->w, &g->bias, NULL, NULL, &g->y));
}
static void run_fused(void *g_) {
    Gemm *g = g_;
    CHECK(wgc_op_gemm_epilogue(st, &g->p, &g->x, &g->w, &g->bias, NULL, NULL, &g->y));
}
/* The same unfused: the product with its bias, then GELU as its own pass. */
static void run_separate(void *g_) {
    Gemm *g = g_;
    WgcGemmEpilogueParams p = g->p;
    p.activation = WGC_ACTIVATION_NONE;
    CHECK(wgc_op_gemm_epilogue(st, &p, &g->x, &g->w, &g->bias, NULL, NULL, &g->y));
    CHECK(wgc_op_unary(st, WGC_UNARY_OP_GELU_ERF, &g->y, &g->y));
}

static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }

/* y = gelu(x w^T + b): x (M, K), w (N, K), F.linear's layout. */
static void gemm_case(const char *name, int64_t m, int64_t n, int64_t k, int full_check) {
    WgcDtype dt = WGC_DTYPE_F16;
    float *hx, *hw, *hb;
    WgcBuffer *bx = random_buffer(dt, (size_t)(m * k), 1, &hx), *bw = random_buffer(dt, (size_t)(n * k), 0.05f, &hw);
    WgcBuffer *bb = random_buffer(dt, (size_t)n, 1, &hb), *by;
    CHECK(wgc_buffer_create(dev, (size_t)(m * n * 2 + 4), WGC_BUFFER_USAGE_STORAGE, &by));
    Gemm g = {{sizeof(WgcGemmEpilogueParams), 1.0f, 0, 1, WGC_ACTIVATION_GELU, 0},
              tensor(bx, dt, 2, (int64_t[]){m, k}), tensor(bw, dt, 2, (int64_t[]){n, k}),
              tensor(bb, dt, 1, (int64_t[]){n}), tensor(by, dt, 2, (int64_t[]){m, n})};
    char line[1024];
    size_t len;
    CHECK(wgc_op_gemm_epilogue_explain(st, &g.p, &g.x, &g.w, &g.bias, NULL, NULL, &g.y, line, sizeof line, &len));
    printf("%s fused: %s\n", name, line);
    CHECK(wgc_op_gemm_explain(st, 1.0f, &g.x, 0, &g.w, 1, 0.0f, &g.y, line, sizeof line, &len));
    printf("%s bare: %s\n", name, line);
    run_fused(&g);
    float *got = read_back(by, dt, (size_t)(m * n));
    int bad = 0, checked = 0;
    for (int64_t s = 0; s < (full_check ? m * n : 4096); s++) {
        int64_t i = full_check ? s : (int64_t)((rng = rng * 6364136223846793005ull + 1) >> 33) % (m * n);
        int64_t r = i / n, c = i % n;
        double acc = 0;
        for (int64_t q = 0; q < k; q++) acc += (double)hx[r * k + q] * hw[c * k + q];
        double ref = gelu(acc + hb[c]);
        checked++;
        if (!(fabs(got[i] - ref) <= 2e-3 + 4e-3 * fabs(ref))) {
            if (bad < 3) fprintf(stderr, "%s: (%lld, %lld) got %g expected %g\n", name, (long long)r, (long long)c,
                                 got[i], ref);
            bad++;
        }
    }
    printf("%s check: %d of %d sampled elements wrong\n", name, bad, checked);
    failures += bad != 0;
    free(got);
    if (!full_check) {
        double bare = median_ms(run_bare, &g), fused = median_ms(run_fused, &g), sep = median_ms(run_separate, &g);
        double alpha = median_ms(run_bare_alpha, &g), bias = median_ms(run_bias, &g);
        double tflops = 2.0 * m * n * k / 1e9;
        printf("%s: bare gemm %.4f ms (%.1f TFLOP/s), gemm+bias+gelu fused %.4f ms (%.1f TFLOP/s), fused/bare %.3f, "
               "unfused (gemm+bias, then gelu) %.4f ms, bare with alpha 0.5 %.4f ms, bias alone fused %.4f ms\n",
               name, bare, tflops / bare, fused, tflops / fused, fused / bare, sep, alpha, bias);
    }
    free(hx), free(hw), free(hb);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

typedef struct {
    WgcConv2dParams cp;
    WgcConv2dBnActParams bp;
    WgcTensor x, w, b, y;
} Conv;

static void run_conv(void *c_) {
    Conv *c = c_;
    CHECK(wgc_op_conv2d(st, &c->cp, &c->x, &c->w, &c->b, &c->y));
}
static void run_conv_relu(void *c_) {
    Conv *c = c_;
    CHECK(wgc_op_conv2d_bn_act(st, &c->bp, &c->x, NULL, NULL, NULL, NULL, NULL, NULL, &c->w, &c->b, &c->y));
}

/* relu(conv2d(x, w, b)), 3x3 pad 1, against the bare convolution. */
static void conv_case(const char *name, WgcDtype dt, int64_t n, int64_t ch, int64_t hw, int timed) {
    int64_t o = ch;
    size_t nx = (size_t)(n * ch * hw * hw), nw = (size_t)(o * ch * 9), ny = (size_t)(n * o * hw * hw);
    WgcBuffer *bx = random_buffer(dt, nx, 1, NULL), *bw = random_buffer(dt, nw, 0.1f, NULL);
    WgcBuffer *bb = random_buffer(dt, (size_t)o, 0.5f, NULL), *by;
    CHECK(wgc_buffer_create(dev, ny * 4 + 4, WGC_BUFFER_USAGE_STORAGE, &by));
    Conv c;
    memset(&c, 0, sizeof c);
    c.cp.struct_size = sizeof c.cp;
    c.cp.pad_h = c.cp.pad_w = 1;
    c.bp.struct_size = sizeof c.bp;
    c.bp.pad_h = c.bp.pad_w = 1;
    c.bp.activation = WGC_ACTIVATION_RELU;
    c.bp.folded = 1;
    c.x = tensor(bx, dt, 4, (int64_t[]){n, ch, hw, hw});
    c.w = tensor(bw, dt, 4, (int64_t[]){o, ch, 3, 3});
    c.b = tensor(bb, dt, 1, (int64_t[]){o});
    c.y = tensor(by, dt, 4, (int64_t[]){n, o, hw, hw});
    char line[1024];
    size_t len;
    CHECK(wgc_op_conv2d_explain(st, &c.cp, &c.x, &c.w, &c.b, &c.y, line, sizeof line, &len));
    printf("%s conv: %s\n", name, line);
    run_conv(&c);
    float *bare = read_back(by, dt, ny);
    run_conv_relu(&c);
    float *fused = read_back(by, dt, ny);
    int bad = 0;
    for (size_t i = 0; i < ny; i++)
        if (fused[i] != (bare[i] > 0 ? bare[i] : 0.0f)) bad++;
    printf("%s check: %d of %zu elements differ from relu(bare conv)\n", name, bad, ny);
    failures += bad != 0;
    free(bare), free(fused);
    if (timed) {
        double t0 = median_ms(run_conv, &c), t1 = median_ms(run_conv_relu, &c);
        printf("%s: bare conv %.4f ms, conv+bias+relu %.4f ms, ratio %.3f\n", name, t0, t1, t1 / t0);
    }
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

int main(int argc, char **argv) {
    int small = argc > 1 && strcmp(argv[1], "small") == 0;
    WgcInstance *inst;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev));
    CHECK(wgc_stream_create(dev, &st));
    gemm_case("check 70x66x40", 70, 66, 40, 1);
    gemm_case("check 130x200x600", 130, 200, 600, 1);
    conv_case("check conv f32 2x8x9x9", WGC_DTYPE_F32, 2, 8, 9, 0);
    conv_case("check conv f16 2x8x9x9", WGC_DTYPE_F16, 2, 8, 9, 0);
    if (!small) {
        gemm_case("f16 2048x4096x4096", 2048, 4096, 4096, 0);
        gemm_case("f16 2048x11008x4096", 2048, 11008, 4096, 0);
        gemm_case("f16 2048x4096x11008", 2048, 4096, 11008, 0);
        conv_case("conv f16 32x64x56x56 3x3", WGC_DTYPE_F16, 32, 64, 56, 1);
        conv_case("conv f32 32x64x56x56 3x3", WGC_DTYPE_F32, 32, 64, 56, 1);
    }
    wgc_stream_release(st);
    wgc_device_release(dev);
    wgc_instance_release(inst);
    printf("gemm_epilogue_bench: %d failed check(s)\n", failures);
    return failures != 0;
}
