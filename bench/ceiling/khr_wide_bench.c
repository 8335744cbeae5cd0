/* f16 GEMM rates at large shapes for the route WGC_GEMM_KHR_WIDE selects
 * (a tile of shaders/spirv/gemm_khr_wide.comp; unset: the library's
 * current route), one JSON line per product:
 *   khr_wide_bench LABEL [full|quick|diag|small]
 * Every product is first checked (32 sampled entries against a
 * double-precision dot product of the same f16 inputs; `diag` tiles are
 * timing probes whose results are wrong by design, so they are not
 * checked) and its kernel named from the profiler, then timed with GPU
 * events: 5 runs of R back-to-back products, median per product. TFLOP/s
 * and the fraction of 989.4 TFLOP/s (H100 SXM dense f16) are printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_util.h"

typedef struct {
    const char *name;
    int64_t m, n, k;
    int b_nk;      /* B stored (N, K) (an nn.Linear weight), viewed transposed */
    int out_f16;   /* else f32 C */
    int set;       /* 1: the quick set too; 2: the small set only (a check on any driver) */
} Shape;

static const Shape SHAPES[] = {
    {"4096^3", 4096, 4096, 4096, 1, 1, 1},
    {"4096^3", 4096, 4096, 4096, 0, 1, 0},
    {"4096^3", 4096, 4096, 4096, 1, 0, 0},
    {"8192^3", 8192, 8192, 8192, 1, 1, 1},
    {"8192^3", 8192, 8192, 8192, 0, 1, 0},
    {"8192x8192x1024", 8192, 8192, 1024, 1, 1, 0},
    {"llama7b_qkv_2048x4096x4096", 2048, 4096, 4096, 1, 1, 1},
    {"llama7b_up_2048x11008x4096", 2048, 11008, 4096, 1, 1, 1},
    {"llama7b_down_2048x4096x11008", 2048, 4096, 11008, 1, 1, 1},
    {"llama7b_up_2048x11008x4096", 2048, 11008, 4096, 1, 0, 0},
    {"llama3_up_2048x14336x4096", 2048, 14336, 4096, 1, 1, 0},
    {"llama3_down_2048x4096x14336", 2048, 4096, 14336, 1, 1, 0},
    {"odd_4095x4097x1023", 4095, 4097, 1023, 0, 1, 0},
    {"small_300x520x1016", 300, 520, 1016, 1, 1, 2},
    {"small_300x520x1016", 300, 520, 1016, 0, 0, 2},
};
#define PEAK 989.4

static WgcStream *st;
static uint16_t *ha, *hb;

static WgcTensor view(WgcBuffer *buf, WgcDtype dt, int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = buf;
    t.dtype = dt;
    t.rank = 2;
    t.shape[0] = rows, t.shape[1] = cols;
    t.strides[0] = sr, t.strides[1] = sc;
    return t;
}

/* The distinct kernels the profiled product ran, comma-separated. */
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

int main(int argc, char **argv) {
    const char *label = argc > 1 ? argv[1] : "library";
    const char *set = argc > 2 ? argv[2] : "full";
    int diag = strcmp(set, "diag") == 0, quick = diag || strcmp(set, "quick") == 0, small = strcmp(set, "small") == 0;
    size_t nshapes = sizeof SHAPES / sizeof SHAPES[0];
    int64_t MAX_A = 0, MAX_B = 0, MAX_C = 0;
    for (size_t si = 0; si < nshapes; si++) {
        const Shape *s = &SHAPES[si];
        if ((small != (s->set == 2)) || (quick && s->set != 1)) continue;
        if (s->m * s->k > MAX_A) MAX_A = s->m * s->k;
        if (s->k * s->n > MAX_B) MAX_B = s->k * s->n;
        if (s->m * s->n > MAX_C) MAX_C = s->m * s->n;
    }
    WgcInstance *inst;
    WgcDevice *dev;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev));
    CHECK(wgc_stream_create(dev, &st));
    ha = malloc((size_t)MAX_A * 2), hb = malloc((size_t)MAX_B * 2);
    /* Uniform in [-1, 1): 4096 f16 values drawn by a 64-bit xorshift* index
     * (converting 2^27 values one by one took seconds). */
    uint16_t table[4096];
    for (int i = 0; i < 4096; i++) table[i] = to_half((float)(i * 2 + 1 - 4096) / 4096.0f);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < MAX_A + MAX_B; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint16_t h = table[(x * 2685821657736338717ull) >> 52];
        if (i < MAX_A) ha[i] = h; else hb[i - MAX_A] = h;
    }
    WgcBuffer *ba, *bb, *bc;
    CHECK(wgc_buffer_create(dev, (size_t)MAX_A * 2, WGC_BUFFER_USAGE_STORAGE, &ba));
    CHECK(wgc_buffer_create(dev, (size_t)MAX_B * 2, WGC_BUFFER_USAGE_STORAGE, &bb));
    CHECK(wgc_buffer_create(dev, (size_t)MAX_C * 4, WGC_BUFFER_USAGE_STORAGE, &bc));
    CHECK(wgc_buffer_write(ba, 0, ha, (size_t)MAX_A * 2));
    CHECK(wgc_buffer_write(bb, 0, hb, (size_t)MAX_B * 2));
    int warmed = 0;
    for (size_t si = 0; si < nshapes; si++) {
        const Shape *s = &SHAPES[si];
        if ((small != (s->set == 2)) || (quick && s->set != 1)) continue;
        if (diag && si > 3) continue;
        WgcTensor a = view(ba, WGC_DTYPE_F16, s->m, s->k, s->k, 1);
        WgcTensor b = s->b_nk ? view(bb, WGC_DTYPE_F16, s->k, s->n, 1, s->k) : view(bb, WGC_DTYPE_F16, s->k, s->n, s->n, 1);
        WgcDtype odt = s->out_f16 ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        WgcTensor c = view(bc, odt, s->m, s->n, s->n, 1);
        CHECK(wgc_stream_set_profiling(st, 1));
        CHECK(wgc_op_matmul(st, &a, &b, &c));
        CHECK(wgc_stream_set_profiling(st, 0));
        char kernels[512];
        kernels_of(kernels, sizeof kernels);
        int bad = 0;
        for (int t = 0; !diag && t < 32; t++) {
            int64_t i = (int64_t)((t * 2654435761u) % (uint64_t)s->m), j = (t * 40503 + 17) % s->n;
            if (t == 31) i = s->m - 1, j = s->n - 1;
            double ref = 0;
            for (int64_t kk = 0; kk < s->k; kk++) {
                int64_t bi = s->b_nk ? j * s->k + kk : kk * s->n + j;
                ref += (double)from_half(ha[i * s->k + kk]) * (double)from_half(hb[bi]);
            }
            size_t es = s->out_f16 ? 2 : 4, at = (size_t)(i * s->n + j) * es;
            unsigned char raw[4] = {0};
            CHECK(wgc_buffer_read(bc, at & ~(size_t)3, raw, 4));
            double got;
            if (s->out_f16) {
                uint16_t h;
                memcpy(&h, raw + (at & 3), 2);
                got = from_half(h);
            } else {
                float f;
                memcpy(&f, raw, 4);
                got = f;
            }
            double tol = 1e-4 + 1e-6 * (double)s->k + (s->out_f16 ? fabs(ref) / 1024.0 : 0.0);
            if (!(fabs(got - ref) <= tol)) {
                if (bad < 3) fprintf(stderr, "%s: [%lld,%lld] got %g want %g\n", s->name, (long long)i, (long long)j, got, ref);
                bad++;
            }
        }
        double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
        int reps = small ? 1 : flop > 5e11 ? 4 : 10;
        if (!warmed && !small) { /* clocks up: about half a second of products */
            WgcEvent *e0, *e1;
            double ms = 0;
            CHECK(wgc_stream_record_event(st, &e0));
            for (int r = 0; r < 20; r++) CHECK(wgc_op_matmul(st, &a, &b, &c));
            CHECK(wgc_stream_record_event(st, &e1));
            CHECK(wgc_event_elapsed_ms(e0, e1, &ms));
            wgc_event_release(e0), wgc_event_release(e1);
            int more = ms > 0 ? (int)(500.0 / (ms / 20)) : 100;
            for (int r = 0; r < more && r < 5000; r++) CHECK(wgc_op_matmul(st, &a, &b, &c));
            CHECK(wgc_stream_synchronize(st));
            warmed = 1;
        }
        /* The small set (a check on any driver) times one product. */
        int runs = small ? 1 : 5;
        for (int r = 0; r < 2 && !small; r++) CHECK(wgc_op_matmul(st, &a, &b, &c));
        double per[5];
        for (int rep = 0; rep < runs; rep++) {
            WgcEvent *e0, *e1;
            CHECK(wgc_stream_record_event(st, &e0));
            for (int r = 0; r < reps; r++) CHECK(wgc_op_matmul(st, &a, &b, &c));
            CHECK(wgc_stream_record_event(st, &e1));
            CHECK(wgc_event_elapsed_ms(e0, e1, &per[rep]));
            per[rep] /= reps;
            wgc_event_release(e0), wgc_event_release(e1);
        }
        qsort(per, (size_t)runs, sizeof(double), cmp_double);
        double med = per[runs / 2], tf = flop / (med * 1e9);
        printf("{\"route\":\"%s\",\"shape\":\"%s\",\"b\":\"%s\",\"out\":\"%s\",\"ms\":%.4f,\"tflops\":%.1f,"
               "\"of_peak\":%.3f,\"check\":\"%s\",\"kernels\":\"%s\"}\n",
               label, s->name, s->b_nk ? "nk" : "kn", s->out_f16 ? "f16" : "f32", med, tf, tf / PEAK,
               diag ? "diag" : bad ? "WRONG" : "ok", kernels);
        fflush(stdout);
    }
    free(ha), free(hb);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
    wgc_stream_release(st), wgc_device_release(dev), wgc_instance_release(inst);
    return 0;
}
