/* f16 GEMM rates at prefill and square shapes through the public API, one
 * JSON line per product, for comparing two builds of the library (the
 * same binary run with each on LD_LIBRARY_PATH) and torch.matmul
 * (bench/torch_gemm_shapes.py, the same shapes and timing):
 *   gemm_wide_bench LABEL [full|small] [f16|bf16]
 * Shapes: LLaMA-7B prefill projections (M = 2048: Q/K/V/O 4096 x 4096, the
 * fused QKV 12288 x 4096, MLP up 11008 x 4096 and down 4096 x 11008, as
 * N x K), 4096^3, 8192^3, an odd 4095 x 4097 x 1023, and two nearer the
 * rule's block count (1024 x 11008 x 4096; a 32000-word LM head at 512
 * rows), each with B stored
 * (N, K) (an nn.Linear weight, transposed by the call) and (K, N), into f16
 * and f32 C. Every product is first checked (32 sampled entries against a
 * double-precision dot product of the same f16 inputs) and its kernels
 * named from the profiler, then timed with GPU events: after a warm-up of
 * about half a second (0.3 s for each later product), the median of 5
 * runs of R back-to-back products.
 * `small` runs reduced shapes once each (a check on any driver, lavapipe
 * included). `bf16`: bf16 A and B into bf16 and f32 C, the first five
 * shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

typedef struct {
    const char *name;
    int64_t m, n, k;
} Shape;

static const Shape FULL[] = {
    {"llama7b_qo_2048x4096x4096", 2048, 4096, 4096},   {"llama7b_qkv_2048x12288x4096", 2048, 12288, 4096},
    {"llama7b_up_2048x11008x4096", 2048, 11008, 4096}, {"llama7b_down_2048x4096x11008", 2048, 4096, 11008},
    {"4096^3", 4096, 4096, 4096},                      {"8192^3", 8192, 8192, 8192},
    {"odd_4095x4097x1023", 4095, 4097, 1023},          {"llama7b_up_1024x11008x4096", 1024, 11008, 4096},
    {"lm_head_512x32000x4096", 512, 32000, 4096},
};
static const Shape SMALL[] = {
    {"small_300x520x1016", 300, 520, 1016},
    {"small_odd_129x130x521", 129, 130, 521},
};

static WgcStream *st;

static WgcTensor view(WgcBuffer *buf, WgcDtype dt, int64_t rows, int64_t cols) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = buf, t.dtype = dt, t.rank = 2;
    t.shape[0] = rows, t.shape[1] = cols;
    t.strides[0] = cols, t.strides[1] = 1;
    return t;
}

/* The distinct kernels the profiled product ran, '+'-separated. */
static void kernels_of(char *out, size_t size) {
    WgcProfileRecord *recs = NULL;
    size_t n = 0;
    CHECK(wgc_stream_profile_records(st, &recs, &n));
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (strstr(out, recs[i].kernel)) continue;
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", used ? "+" : "", recs[i].kernel);
    }
    wgc_profile_records_free(recs);
    CHECK(wgc_stream_profile_clear(st));
}

static double time_products(int reps, const WgcTensor *a, const WgcTensor *b, int b_nk, const WgcTensor *c) {
    WgcEvent *e0, *e1;
    double ms = 0;
    CHECK(wgc_stream_record_event(st, &e0));
    for (int r = 0; r < reps; r++) CHECK(wgc_op_gemm(st, 1.0f, a, 0, b, (uint32_t)b_nk, 0.0f, c));
    CHECK(wgc_stream_record_event(st, &e1));
    CHECK(wgc_event_elapsed_ms(e0, e1, &ms));
    wgc_event_release(e0), wgc_event_release(e1);
    return ms / reps;
}

int main(int argc, char **argv) {
    const char *label = argc > 1 ? argv[1] : "library";
    int small = argc > 2 && strcmp(argv[2], "small") == 0;
    int bf16 = argc > 3 && strcmp(argv[3], "bf16") == 0;
    const Shape *shapes = small ? SMALL : FULL;
    size_t nshapes = small ? sizeof SMALL / sizeof SMALL[0] : sizeof FULL / sizeof FULL[0];
    if (bf16 && !small) nshapes = 5;
    WgcDtype in = bf16 ? WGC_DTYPE_BF16 : WGC_DTYPE_F16, out16 = in;
    int64_t max_a = 0, max_b = 0, max_c = 0;
    for (size_t si = 0; si < nshapes; si++) {
        const Shape *s = &shapes[si];
        if (s->m * s->k > max_a) max_a = s->m * s->k;
        if (s->k * s->n > max_b) max_b = s->k * s->n;
        if (s->m * s->n > max_c) max_c = s->m * s->n;
    }
    WgcInstance *inst;
    WgcDevice *dev;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev));
    CHECK(wgc_stream_create(dev, &st));
    uint16_t *ha = malloc((size_t)max_a * 2), *hb = malloc((size_t)max_b * 2);
    /* Uniform in [-1, 1): 4096 f16 values drawn by a 64-bit xorshift* index. */
    uint16_t table[4096];
    for (int i = 0; i < 4096; i++) {
        float v = (float)(i * 2 + 1 - 4096) / 4096.0f;
        table[i] = bf16 ? to_bf16(v) : to_half(v);
    }
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < max_a + max_b; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint16_t h = table[(x * 2685821657736338717ull) >> 52];
        if (i < max_a) ha[i] = h;
        else hb[i - max_a] = h;
    }
    WgcBuffer *ba, *bb, *bc;
    CHECK(wgc_buffer_create(dev, (size_t)max_a * 2, WGC_BUFFER_USAGE_STORAGE, &ba));
    CHECK(wgc_buffer_create(dev, (size_t)max_b * 2, WGC_BUFFER_USAGE_STORAGE, &bb));
    CHECK(wgc_buffer_create(dev, (size_t)max_c * 4, WGC_BUFFER_USAGE_STORAGE, &bc));
    CHECK(wgc_buffer_write(ba, 0, ha, (size_t)max_a * 2));
    CHECK(wgc_buffer_write(bb, 0, hb, (size_t)max_b * 2));
    int warmed = 0, failures = 0;
    for (size_t si = 0; si < nshapes; si++) {
        for (int b_nk = 1; b_nk >= 0; b_nk--) {
            for (int out_f16 = 1; out_f16 >= 0; out_f16--) {
                const Shape *s = &shapes[si];
                WgcTensor a = view(ba, in, s->m, s->k);
                WgcTensor b = b_nk ? view(bb, in, s->n, s->k) : view(bb, in, s->k, s->n);
                WgcTensor c = view(bc, out_f16 ? out16 : WGC_DTYPE_F32, s->m, s->n);
                CHECK(wgc_stream_set_profiling(st, 1));
                CHECK(wgc_op_gemm(st, 1.0f, &a, 0, &b, (uint32_t)b_nk, 0.0f, &c));
                CHECK(wgc_stream_set_profiling(st, 0));
                char kernels[512];
                kernels_of(kernels, sizeof kernels);
                int bad = 0;
                for (int t = 0; t < 32; t++) {
                    int64_t i = (int64_t)((t * 2654435761u) % (uint64_t)s->m), j = (t * 40503 + 17) % s->n;
                    if (t == 31) i = s->m - 1, j = s->n - 1;
                    double ref = 0;
                    for (int64_t kk = 0; kk < s->k; kk++) {
                        int64_t bi = b_nk ? j * s->k + kk : kk * s->n + j;
                        ref += bf16 ? (double)from_bf16(ha[i * s->k + kk]) * (double)from_bf16(hb[bi])
                                    : (double)from_half(ha[i * s->k + kk]) * (double)from_half(hb[bi]);
                    }
                    size_t es = out_f16 ? 2 : 4, at = (size_t)(i * s->n + j) * es;
                    unsigned char raw[4] = {0};
                    CHECK(wgc_buffer_read(bc, at & ~(size_t)3, raw, 4));
                    double got;
                    if (out_f16) {
                        uint16_t h;
                        memcpy(&h, raw + (at & 3), 2);
                        got = bf16 ? from_bf16(h) : from_half(h);
                    } else {
                        float f;
                        memcpy(&f, raw, 4);
                        got = f;
                    }
                    double ulp = !out_f16 ? 0.0 : bf16 ? 1.0 / 128.0 : 1.0 / 1024.0;
                    double tol = 1e-4 + 1e-6 * (double)s->k + fabs(ref) * ulp;
                    if (!(fabs(got - ref) <= tol)) {
                        if (bad < 3)
                            fprintf(stderr, "%s: [%lld,%lld] got %g want %g\n", s->name, (long long)i, (long long)j,
                                    got, ref);
                        bad++;
                    }
                }
                failures += bad > 0;
                double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
                int reps = small ? 1 : flop > 5e11 ? 4 : 10;
                if (!small) {
                    /* Clocks up: the host's check leaves the GPU idle, and its
                     * clocks drop (single products then ran 3-8x slower on an
                     * H200); half a second of products first, 0.3 s after. */
                    double ms = time_products(20, &a, &b, b_nk, &c);
                    int more = ms > 0 ? (int)((warmed ? 300.0 : 500.0) / ms) : 100;
                    for (int r = 0; r < more && r < 5000; r++)
                        CHECK(wgc_op_gemm(st, 1.0f, &a, 0, &b, (uint32_t)b_nk, 0.0f, &c));
                    CHECK(wgc_stream_synchronize(st));
                    warmed = 1;
                }
                int runs = small ? 1 : 5;
                if (!small) time_products(2, &a, &b, b_nk, &c);
                double per[5];
                for (int rep = 0; rep < runs; rep++) per[rep] = time_products(reps, &a, &b, b_nk, &c);
                qsort(per, (size_t)runs, sizeof(double), cmp_double);
                double med = per[runs / 2], tf = flop / (med * 1e9);
                printf("{\"route\":\"%s\",\"in\":\"%s\",\"shape\":\"%s\",\"b\":\"%s\",\"out\":\"%s\",\"ms\":%.4f,\"tflops\":%.1f,"
                       "\"check\":\"%s\",\"kernels\":\"%s\"}\n",
                       label, bf16 ? "bf16" : "f16", s->name, b_nk ? "nk" : "kn",
                       out_f16 ? (bf16 ? "bf16" : "f16") : "f32", med, tf, bad ? "WRONG" : "ok",
                       kernels);
                fflush(stdout);
            }
        }
    }
    free(ha), free(hb);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
    wgc_stream_release(st), wgc_device_release(dev), wgc_instance_release(inst);
    return failures ? 1 : 0;
}
