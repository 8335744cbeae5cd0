/* The wgcompute side of the benchmark. Each case is checked against a CPU
 * reference first, then timed with GPU timestamps (events around each run,
 * median of repeated runs after a warm-up). Prints one JSON object per case:
 * {"case", "size", "ms", "check"}. Arguments select cases by substring. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"


static WgcDevice *g_dev;
static WgcStream *g_stream;
static int g_argc;
static char **g_argv;

static int want(const char *name) {
    if (g_argc <= 1) return 1;
    for (int i = 1; i < g_argc; i++)
        if (strstr(name, g_argv[i])) return 1;
    return 0;
}

static uint64_t g_rng = 0x243F6A8885A308D3ull;
static float frand(void) { /* uniform [-1, 1) */
    g_rng ^= g_rng >> 12; g_rng ^= g_rng << 25; g_rng ^= g_rng >> 27;
    return (float)((double)((g_rng * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0);
}

static WgcBuffer *buffer_random(size_t n) {
    float *h = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) h[i] = frand();
    WgcBuffer *b;
    CHECK(wgc_buffer_create(g_dev, n * sizeof(float), WGC_BUFFER_USAGE_STORAGE, &b));
    CHECK(wgc_buffer_write(b, 0, h, n * sizeof(float)));
    free(h);
    return b;
}

static WgcBuffer *buffer_empty(size_t bytes) {
    WgcBuffer *b;
    CHECK(wgc_buffer_create(g_dev, bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static float *download(WgcBuffer *b, size_t n) {
    float *h = malloc(n * sizeof(float));
    CHECK(wgc_buffer_read(b, 0, h, n * sizeof(float)));
    return h;
}

static WgcTensor view(WgcBuffer *b, WgcDtype dt, uint32_t rank, const int64_t *shape) {
    WgcTensor t;
    CHECK(wgc_tensor_contiguous(b, dt, rank, shape, &t));
    return t;
}


typedef void (*RunFn)(void *ctx);

static double now_ms(void);

/* Keep the GPU busy with `fn` for at least 2 s (WGC_BENCH_WARMUP_MS) before
 * timing. Right after a case's gigabyte-sized inputs were prepared, the H200
 * ran memory-bound kernels at less than half speed for between 0.3 and 2 s
 * (BENCHMARKS.md, "Run to run"); a few warm-up runs do not cover that. */
static void warm_up(RunFn fn, void *ctx, int min_runs) {
    double t0 = now_ms();
    int runs = 0;
    static double warm_ms = -1;
    if (warm_ms < 0) warm_ms = getenv("WGC_BENCH_WARMUP_MS") ? atof(getenv("WGC_BENCH_WARMUP_MS")) : 2000.0;
    while (runs < min_runs || now_ms() - t0 < warm_ms) {
        fn(ctx);
        if (++runs % 4 == 0) CHECK(wgc_stream_synchronize(g_stream));
    }
    CHECK(wgc_stream_synchronize(g_stream));
}

/* Median GPU milliseconds of `fn` over `reps` runs, each between two events. */
static double time_gpu(RunFn fn, void *ctx, int warmup, int reps) {
    warm_up(fn, ctx, warmup);
    double *ms = malloc(sizeof(double) * reps);
    WgcEvent **ev = malloc(sizeof(WgcEvent *) * 2 * reps);
    for (int i = 0; i < reps; i++) {
        CHECK(wgc_stream_record_event(g_stream, &ev[2 * i]));
        fn(ctx);
        CHECK(wgc_stream_record_event(g_stream, &ev[2 * i + 1]));
        CHECK(wgc_stream_flush(g_stream));
    }
    for (int i = 0; i < reps; i++) {
        CHECK(wgc_event_elapsed_ms(ev[2 * i], ev[2 * i + 1], &ms[i]));
        wgc_event_release(ev[2 * i]);
        wgc_event_release(ev[2 * i + 1]);
    }
    qsort(ms, reps, sizeof(double), cmp_double);
    double m = ms[reps / 2];
    free(ms);
    free(ev);
    return m;
}

static void emit(const char *name, const char *size, double ms, const char *check) {
    printf("{\"case\": \"%s\", \"size\": \"%s\", \"ms\": %.6f, \"check\": \"%s\"}\n", name, size, ms, check);
    fflush(stdout);
}

/* ---- timing diagnostics: the same work timed three ways ---- */
static double time_batch(RunFn fn, void *ctx, int reps) {
    WgcEvent *e0, *e1;
    double ms;
    warm_up(fn, ctx, 1);
    CHECK(wgc_stream_record_event(g_stream, &e0));
    for (int i = 0; i < reps; i++) fn(ctx);
    CHECK(wgc_stream_record_event(g_stream, &e1));
    CHECK(wgc_event_elapsed_ms(e0, e1, &ms));
    wgc_event_release(e0); wgc_event_release(e1);
    return ms / reps;
}
static double time_wall(RunFn fn, void *ctx, int reps) {
    warm_up(fn, ctx, 1);
    double t0 = now_ms();
    for (int i = 0; i < reps; i++) fn(ctx);
    CHECK(wgc_stream_synchronize(g_stream));
    return (now_ms() - t0) / reps;
}

static const char *VADD =
    "@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;\n"
    "@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;\n"
    "@group(0) @binding(2) var<storage, read_write> o: array<vec4<f32>>;\n"
    "struct P { n: u32, row: u32 }\n"
    "@group(0) @binding(3) var<uniform> p: P;\n"
    "@compute @workgroup_size(256)\n"
    "fn vadd(@builtin(global_invocation_id) g: vec3<u32>) {\n"
    "    let i = g.y * p.row + g.x;\n"
    "    if (i < p.n) { o[i] = a[i] + b[i]; }\n"
    "}\n";
typedef struct { WgcKernel *k; WgcLaunch l; WgcBinding bind[3]; uint32_t params[2]; } Custom;
static void run_custom(void *p) { Custom *c = p; CHECK(wgc_stream_launch(g_stream, c->k, &c->l)); }

static WgcKernel *vadd_kernel(void) {
    WgcKernelDesc d = {0};
    WgcKernel *k;
    d.struct_size = sizeof d; d.source = VADD; d.entry_point = "vadd"; d.skip_bounds_checks = 1;
    CHECK(wgc_kernel_create(g_dev, &d, &k));
    return k;
}

/* A launch of `k` (VADD) adding n f32 elements (n a multiple of 4 * 256 * 32768). */
static void vadd_launch(Custom *c, WgcKernel *k, WgcBuffer *a, WgcBuffer *b, WgcBuffer *o, size_t n) {
    memset(c, 0, sizeof *c);
    c->k = k;
    c->bind[0].binding = 0; c->bind[0].buffer = a;
    c->bind[1].binding = 1; c->bind[1].buffer = b;
    c->bind[2].binding = 2; c->bind[2].buffer = o;
    c->params[0] = (uint32_t)(n / 4); c->params[1] = 32768 * 256;
    c->l.struct_size = sizeof c->l; c->l.bindings = c->bind; c->l.binding_count = 3;
    c->l.params = c->params; c->l.params_size = sizeof c->params;
    c->l.workgroups[0] = 32768; c->l.workgroups[1] = (uint32_t)(n / 4 / 256 / 32768); c->l.workgroups[2] = 1;
}

typedef struct { WgcTensor a, b, out; } Bin;
static void run_add(void *p);
static void run_matmul(void *p);

static void bench_diag(void) {
    size_t n = (size_t)1 << 28;
    int64_t shape[1] = {(int64_t)n};
    WgcBuffer *a = buffer_empty(n * 4), *b = buffer_empty(n * 4), *o = buffer_empty(n * 4);
    Bin c = {view(a, WGC_DTYPE_F32, 1, shape), view(b, WGC_DTYPE_F32, 1, shape), view(o, WGC_DTYPE_F32, 1, shape)};
    CHECK(wgc_op_fill(g_stream, &c.a, 1.0));
    CHECK(wgc_op_fill(g_stream, &c.b, 2.0));
    fprintf(stderr, "diag add op: events/rep %.4f ms, batch %.4f ms, wall %.4f ms\n", time_gpu(run_add, &c, 3, 10),
            time_batch(run_add, &c, 10), time_wall(run_add, &c, 10));
    Custom k;
    vadd_launch(&k, vadd_kernel(), a, b, o, n);
    fprintf(stderr, "diag add vec4 kernel: events/rep %.4f ms, batch %.4f ms, wall %.4f ms\n", time_gpu(run_custom, &k, 3, 10),
            time_batch(run_custom, &k, 10), time_wall(run_custom, &k, 10));
    wgc_kernel_release(k.k);
    wgc_buffer_release(a); wgc_buffer_release(b); wgc_buffer_release(o);
    size_t m = 4096;
    int64_t ms[2] = {(int64_t)m, (int64_t)m};
    WgcBuffer *x = buffer_random(m * m), *y = buffer_random(m * m), *z = buffer_empty(m * m * 4);
    Bin g = {view(x, WGC_DTYPE_F32, 2, ms), view(y, WGC_DTYPE_F32, 2, ms), view(z, WGC_DTYPE_F32, 2, ms)};
    fprintf(stderr, "diag sgemm 4096: events/rep %.4f ms, batch %.4f ms, wall %.4f ms\n", time_gpu(run_matmul, &g, 3, 10),
            time_batch(run_matmul, &g, 10), time_wall(run_matmul, &g, 10));
    wgc_buffer_release(x); wgc_buffer_release(y); wgc_buffer_release(z);
}

/* Two sets of host-written 1 GiB buffers, each timed with the add operator
 * and with a plain vec4 kernel: tells a slow buffer from a slow pipeline. */
static void bench_diag2(void) {
    size_t n = (size_t)1 << 28;
    int64_t shape[1] = {(int64_t)n};
    WgcKernel *kernel = vadd_kernel();
    for (int set = 0; set < 2; set++) {
        WgcBuffer *a = buffer_random(n), *b = buffer_random(n), *o = buffer_empty(n * 4);
        Bin c = {view(a, WGC_DTYPE_F32, 1, shape), view(b, WGC_DTYPE_F32, 1, shape), view(o, WGC_DTYPE_F32, 1, shape)};
        Custom k;
        vadd_launch(&k, kernel, a, b, o, n);
        double op1 = time_gpu(run_add, &c, 3, 10), ker = time_gpu(run_custom, &k, 3, 10), op2 = time_gpu(run_add, &c, 3, 10);
        fprintf(stderr, "diag2 set %d: add op %.4f ms, vec4 kernel %.4f ms, add op again %.4f ms\n", set, op1, ker, op2);
        wgc_buffer_release(a); wgc_buffer_release(b); wgc_buffer_release(o);
    }
    wgc_kernel_release(kernel);
}

/* ---- elementwise add ---- */
static void run_add(void *p) { Bin *c = p; CHECK(wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, &c->a, &c->b, &c->out)); }

static void bench_add(void) {
    size_t n = (size_t)1 << 28;
    int64_t shape[1] = {(int64_t)n};
    WgcBuffer *a = buffer_random(n), *b = buffer_random(n), *o = buffer_empty(n * 4);
    Bin c = {view(a, WGC_DTYPE_F32, 1, shape), view(b, WGC_DTYPE_F32, 1, shape), view(o, WGC_DTYPE_F32, 1, shape)};
    run_add(&c);
    float *ha = download(a, n), *hb = download(b, n), *ho = download(o, n);
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad += ho[i] != ha[i] + hb[i];
    free(ha); free(hb); free(ho);
    emit("add_f32", "2^28", time_gpu(run_add, &c, 3, 10), bad ? "WRONG" : "ok");
    wgc_buffer_release(a); wgc_buffer_release(b); wgc_buffer_release(o);
}

/* ---- full sum ---- */
typedef struct { WgcTensor in, out; } Un;
static void run_sum(void *p) { Un *c = p; CHECK(wgc_op_reduce(g_stream, WGC_REDUCE_OP_SUM, &c->in, NULL, 0, 0, &c->out)); }

static void bench_sum(void) {
    size_t n = (size_t)1 << 28;
    int64_t shape[1] = {(int64_t)n};
    WgcBuffer *a = buffer_random(n), *o = buffer_empty(4);
    Un c = {view(a, WGC_DTYPE_F32, 1, shape), view(o, WGC_DTYPE_F32, 0, NULL)};
    run_sum(&c);
    float *ha = download(a, n), got;
    CHECK(wgc_buffer_read(o, 0, &got, 4));
    double ref = 0, mag = 0;
    for (size_t i = 0; i < n; i++) { ref += ha[i]; mag += fabs(ha[i]); }
    free(ha);
    int ok = fabs(got - ref) <= 1e-5 * mag;
    emit("sum_f32", "2^28", time_gpu(run_sum, &c, 3, 10), ok ? "ok" : "WRONG");
    wgc_buffer_release(a); wgc_buffer_release(o);
}

/* ---- softmax and layer norm over rows ---- */
static void run_softmax(void *p) { Un *c = p; CHECK(wgc_op_softmax(g_stream, &c->in, -1, &c->out)); }
typedef struct { WgcTensor in, w, b, out; } Ln;
static void run_ln(void *p) { Ln *c = p; CHECK(wgc_op_layer_norm(g_stream, &c->in, &c->w, &c->b, 1, 1e-5f, &c->out)); }

static void bench_rows(void) {
    const size_t R = 65536, C = 4096, n = R * C;
    int64_t shape[2] = {(int64_t)R, (int64_t)C}, wshape[1] = {(int64_t)C};
    WgcBuffer *x = buffer_random(n), *o = buffer_empty(n * 4);
    float *hx = download(x, n);
    const size_t rows[3] = {0, 12345, R - 1};
    if (want("softmax_f32")) {
        Un c = {view(x, WGC_DTYPE_F32, 2, shape), view(o, WGC_DTYPE_F32, 2, shape)};
        run_softmax(&c);
        float *ho = download(o, n);
        int bad = 0;
        for (int k = 0; k < 3; k++) {
            const float *xr = hx + rows[k] * C, *orow = ho + rows[k] * C;
            double mx = -INFINITY, s = 0;
            for (size_t j = 0; j < C; j++) mx = fmax(mx, xr[j]);
            for (size_t j = 0; j < C; j++) s += exp(xr[j] - mx);
            for (size_t j = 0; j < C; j++) bad += fabs(orow[j] - exp(xr[j] - mx) / s) > 1e-6;
        }
        free(ho);
        emit("softmax_f32", "65536x4096", time_gpu(run_softmax, &c, 3, 10), bad ? "WRONG" : "ok");
        if (getenv("WGC_BENCH_REPEAT"))
            for (int r = 0; r < 3; r++) fprintf(stderr, "softmax again: %.4f ms\n", time_gpu(run_softmax, &c, 3, 10));
    }
    if (want("layer_norm_f32")) {
        WgcBuffer *w = buffer_random(C), *b = buffer_random(C);
        Ln c = {view(x, WGC_DTYPE_F32, 2, shape), view(w, WGC_DTYPE_F32, 1, wshape), view(b, WGC_DTYPE_F32, 1, wshape),
                view(o, WGC_DTYPE_F32, 2, shape)};
        run_ln(&c);
        float *ho = download(o, n), *hw = download(w, C), *hb = download(b, C);
        int bad = 0;
        for (int k = 0; k < 3; k++) {
            const float *xr = hx + rows[k] * C, *orow = ho + rows[k] * C;
            double mean = 0, var = 0;
            for (size_t j = 0; j < C; j++) mean += xr[j];
            mean /= C;
            for (size_t j = 0; j < C; j++) var += (xr[j] - mean) * (xr[j] - mean);
            var /= C;
            for (size_t j = 0; j < C; j++) {
                double ref = (xr[j] - mean) / sqrt(var + 1e-5) * hw[j] + hb[j];
                bad += fabs(orow[j] - ref) > 1e-4;
            }
        }
        free(ho); free(hw); free(hb);
        emit("layer_norm_f32", "65536x4096", time_gpu(run_ln, &c, 3, 10), bad ? "WRONG" : "ok");
        wgc_buffer_release(w); wgc_buffer_release(b);
    }
    free(hx);
    wgc_buffer_release(x); wgc_buffer_release(o);
}

/* ---- matmul ---- */
static void run_matmul(void *p) { Bin *c = p; CHECK(wgc_op_matmul(g_stream, &c->a, &c->b, &c->out)); }


static void bench_gemm(size_t n, int half) {
    char size[32];
    snprintf(size, sizeof size, "%zu^3", n);
    int64_t shape[2] = {(int64_t)n, (int64_t)n};
    size_t nn = n * n;
    float *ha = malloc(nn * 4), *hb = malloc(nn * 4);
    for (size_t i = 0; i < nn; i++) { ha[i] = frand(); hb[i] = frand(); }
    WgcBuffer *a, *b, *o = buffer_empty(nn * 4);
    if (half) {
        uint16_t *t = malloc(nn * 2);
        for (size_t i = 0; i < nn; i++) { t[i] = to_half(ha[i]); ha[i] = from_half(t[i]); }
        CHECK(wgc_buffer_create(g_dev, nn * 2, WGC_BUFFER_USAGE_STORAGE, &a));
        CHECK(wgc_buffer_write(a, 0, t, nn * 2));
        for (size_t i = 0; i < nn; i++) { t[i] = to_half(hb[i]); hb[i] = from_half(t[i]); }
        CHECK(wgc_buffer_create(g_dev, nn * 2, WGC_BUFFER_USAGE_STORAGE, &b));
        CHECK(wgc_buffer_write(b, 0, t, nn * 2));
        free(t);
    } else {
        CHECK(wgc_buffer_create(g_dev, nn * 4, WGC_BUFFER_USAGE_STORAGE, &a));
        CHECK(wgc_buffer_write(a, 0, ha, nn * 4));
        CHECK(wgc_buffer_create(g_dev, nn * 4, WGC_BUFFER_USAGE_STORAGE, &b));
        CHECK(wgc_buffer_write(b, 0, hb, nn * 4));
    }
    WgcDtype in_dt = half ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
    Bin c = {view(a, in_dt, 2, shape), view(b, in_dt, 2, shape), view(o, WGC_DTYPE_F32, 2, shape)};
    run_matmul(&c);
    float *ho = download(o, nn);
    int bad = 0;
    for (int s = 0; s < 64; s++) {
        size_t i = (size_t)(s * 2654435761u) % n, j = (size_t)(s * 40503u + 17) % n;
        double ref = 0, mag = 0;
        for (size_t k = 0; k < n; k++) { ref += (double)ha[i * n + k] * hb[k * n + j]; mag += fabs(ha[i * n + k] * hb[k * n + j]); }
        bad += fabs(ho[i * n + j] - ref) > 1e-5 * mag + 1e-6;
    }
    free(ha); free(hb); free(ho);
    emit(half ? "gemm_f16_f32acc" : "sgemm_f32", size, time_gpu(run_matmul, &c, 2, n >= 8192 ? 5 : 10), bad ? "WRONG" : "ok");
    wgc_buffer_release(a); wgc_buffer_release(b); wgc_buffer_release(o);
}

static void bench_bmm(void) {
    const int64_t B = 512, n = 128;
    int64_t shape[3] = {B, n, n};
    size_t total = (size_t)(B * n * n);
    WgcBuffer *a = buffer_random(total), *b = buffer_random(total), *o = buffer_empty(total * 4);
    Bin c = {view(a, WGC_DTYPE_F32, 3, shape), view(b, WGC_DTYPE_F32, 3, shape), view(o, WGC_DTYPE_F32, 3, shape)};
    run_matmul(&c);
    float *ha = download(a, total), *hb = download(b, total), *ho = download(o, total);
    int bad = 0;
    for (int s = 0; s < 64; s++) {
        size_t bi = (size_t)(s * 7919) % B, i = (size_t)(s * 31) % n, j = (size_t)(s * 17 + 3) % n;
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < n; k++) {
            double p = (double)ha[bi * n * n + i * n + k] * hb[bi * n * n + k * n + j];
            ref += p; mag += fabs(p);
        }
        bad += fabs(ho[bi * n * n + i * n + j] - ref) > 1e-5 * mag + 1e-6;
    }
    free(ha); free(hb); free(ho);
    emit("bmm_f32", "512x128^3", time_gpu(run_matmul, &c, 3, 10), bad ? "WRONG" : "ok");
    wgc_buffer_release(a); wgc_buffer_release(b); wgc_buffer_release(o);
}

/* ---- conv2d ---- */
typedef struct { WgcConv2dParams p; WgcTensor in, w, out; } Conv;
static void run_conv(void *p) { Conv *c = p; CHECK(wgc_op_conv2d(g_stream, &c->p, &c->in, &c->w, NULL, &c->out)); }

static void bench_conv(const char *name, int64_t N, int64_t C, int64_t H, int64_t O, int64_t K, int64_t stride, int64_t pad) {
    int64_t OH = (H + 2 * pad - K) / stride + 1;
    int64_t is[4] = {N, C, H, H}, ws[4] = {O, C, K, K}, os[4] = {N, O, OH, OH};
    size_t ni = (size_t)(N * C * H * H), nw = (size_t)(O * C * K * K), no = (size_t)(N * O * OH * OH);
    WgcBuffer *x = buffer_random(ni), *w = buffer_random(nw), *o = buffer_empty(no * 4);
    Conv c;
    memset(&c, 0, sizeof c);
    c.p.struct_size = sizeof c.p;
    c.p.stride_h = c.p.stride_w = (uint32_t)stride;
    c.p.pad_h = c.p.pad_w = (uint32_t)pad;
    c.p.dilation_h = c.p.dilation_w = 1;
    c.p.groups = 1;
    c.in = view(x, WGC_DTYPE_F32, 4, is);
    c.w = view(w, WGC_DTYPE_F32, 4, ws);
    c.out = view(o, WGC_DTYPE_F32, 4, os);
    run_conv(&c);
    float *hx = download(x, ni), *hw = download(w, nw), *ho = download(o, no);
    int bad = 0;
    for (int s = 0; s < 64; s++) {
        int64_t n = s % N, oc = (s * 37) % O, oy = (s * 13) % OH, ox = (s * 29 + 5) % OH;
        double ref = 0, mag = 0;
        for (int64_t ic = 0; ic < C; ic++)
            for (int64_t ky = 0; ky < K; ky++)
                for (int64_t kx = 0; kx < K; kx++) {
                    int64_t iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                    if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                    double p = (double)hx[((n * C + ic) * H + iy) * H + ix] * hw[((oc * C + ic) * K + ky) * K + kx];
                    ref += p; mag += fabs(p);
                }
        bad += fabs(ho[((n * O + oc) * OH + oy) * OH + ox] - ref) > 1e-5 * mag + 1e-6;
    }
    free(hx); free(hw); free(ho);
    emit(name, "N=32", time_gpu(run_conv, &c, 2, 10), bad ? "WRONG" : "ok");
    wgc_buffer_release(x); wgc_buffer_release(w); wgc_buffer_release(o);
}

/* ---- 1000 small dependent operators ---- */
typedef struct { WgcTensor x, y; } Small;
static void run_small(void *p) {
    Small *c = p;
    for (int i = 0; i < 500; i++) {
        CHECK(wgc_op_binary_scalar(g_stream, WGC_BINARY_OP_ADD, &c->x, 1.0, &c->y));
        CHECK(wgc_op_binary_scalar(g_stream, WGC_BINARY_OP_MUL, &c->y, 0.5, &c->x));
    }
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void bench_small(void) {
    const size_t n = (size_t)1 << 20;
    int64_t shape[1] = {(int64_t)n};
    WgcBuffer *x = buffer_random(n), *y = buffer_empty(n * 4);
    Small c = {view(x, WGC_DTYPE_F32, 1, shape), view(y, WGC_DTYPE_F32, 1, shape)};
    float *h0 = download(x, n);
    run_small(&c);
    float *h1 = download(x, n);
    int bad = 0;
    for (size_t i = 0; i < n; i += 4099) {
        double v = h0[i];
        for (int k = 0; k < 500; k++) v = (float)((float)(v + 1.0) * 0.5f);
        bad += fabs(h1[i] - v) > 1e-6;
    }
    free(h0); free(h1);
    double gpu = time_gpu(run_small, &c, 2, 5) / 1000.0;
    /* Wall clock, host recording and submission included. */
    double walls[5];
    for (int r = 0; r < 5; r++) {
        double t0 = now_ms();
        run_small(&c);
        CHECK(wgc_stream_synchronize(g_stream));
        walls[r] = (now_ms() - t0) / 1000.0;
    }
    qsort(walls, 5, sizeof(double), cmp_double);
    emit("small_ops_1000", "1000 x 2^20", gpu, bad ? "WRONG" : "ok");
    emit("small_ops_1000_wall", "1000 x 2^20", walls[2], bad ? "WRONG" : "ok");
    wgc_buffer_release(x); wgc_buffer_release(y);
}

int main(int argc, char **argv) {
    g_argc = argc;
    g_argv = argv;
    WgcInstance *inst;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    /* WGC_BENCH_POOL_MIB: the device's buffer pool limit (default 1 GiB). */
    WgcDeviceOptions opts = {0};
    opts.struct_size = sizeof opts;
    opts.adapter_index = -1;
    if (getenv("WGC_BENCH_POOL_MIB")) opts.pool_limit_bytes = (uint64_t)atoll(getenv("WGC_BENCH_POOL_MIB")) << 20;
    CHECK(wgc_device_create(inst, &opts, &g_dev));
    WgcAdapterInfo info = {0};
    info.struct_size = sizeof info;
    CHECK(wgc_device_info(g_dev, &info));
    fprintf(stderr, "adapter: %s, driver %s %s; f16=%u subgroups=%u (%u-%u) timestamps=%u coop=%u\n", info.name,
            info.driver, info.driver_info, info.has_f16, info.has_subgroups, info.subgroup_min_size,
            info.subgroup_max_size, info.has_timestamps, info.has_cooperative_matrix);
    CHECK(wgc_stream_create(g_dev, &g_stream));
    if (g_argc > 1 && !strcmp(g_argv[1], "diag")) { bench_diag(); return 0; }
    if (g_argc > 1 && !strcmp(g_argv[1], "diag2")) { bench_diag2(); return 0; }
    if (want("add_f32")) bench_add();
    if (want("sum_f32")) bench_sum();
    if (want("softmax_f32") || want("layer_norm_f32")) bench_rows();
    if (want("sgemm_f32")) { bench_gemm(4096, 0); bench_gemm(8192, 0); }
    if (want("gemm_f16_f32acc")) { bench_gemm(4096, 1); bench_gemm(8192, 1); }
    if (want("bmm_f32")) bench_bmm();
    if (want("conv_3x3_64_56")) bench_conv("conv_3x3_64_56", 32, 64, 56, 64, 3, 1, 1);
    if (want("conv_1x1_256_512_s2")) bench_conv("conv_1x1_256_512_s2", 32, 256, 56, 512, 1, 2, 0);
    if (want("conv_7x7_3_64_s2")) bench_conv("conv_7x7_3_64_s2", 32, 3, 224, 64, 7, 2, 3);
    if (want("small_ops_1000")) bench_small();
    wgc_stream_release(g_stream);
    wgc_device_release(g_dev);
    wgc_instance_release(inst);
    return 0;
}
