/* Matrix products: square SGEMM and f16 GEMM, LLaMA-sized prefill (f32 and
 * f16 out) and decode (M = 1, 8, 32) with the weight stored (K, N) or
 * (N, K) and used transposed, odd and tall-skinny SGEMM, batched products
 * and attention scores with K as a transposed view. */
#include <math.h>

#include "cases.h"

/* A (batched) matrix operand: element (b, r, c) lives at host index
 * b * sb + r * sr + c * sc, and the view has the same strides. */
typedef struct {
    HT h;
    int64_t sb, sr, sc;
} Mat;

typedef struct {
    Mat a, b;
    HT out;
} Gemm;

static WgcStatus run_gemm(void *p) {
    Gemm *g = p;
    return OP(wgc_op_matmul, g_stream, &g->a.h.t, &g->b.h.t, &g->out.t);
}

/* (batch, rows, cols) random operand; `transposed`: stored as (cols, rows)
 * and viewed transposed, as a weight (N, K) used as (K, N). */
static Mat mat_random(WgcDtype dt, int64_t batch, int64_t rows, int64_t cols, int transposed) {
    Mat m;
    int64_t s3[3] = {batch, transposed ? cols : rows, transposed ? rows : cols};
    uint32_t rank = batch > 1 ? 3 : 2;
    m.h = ht_random(dt, rank, batch > 1 ? s3 : s3 + 1);
    m.sb = rows * cols;
    m.sr = transposed ? 1 : cols;
    m.sc = transposed ? rows : 1;
    if (transposed) {
        WgcTensor *t = &m.h.t;
        int64_t s = t->shape[rank - 1], st = t->strides[rank - 1];
        t->shape[rank - 1] = t->shape[rank - 2];
        t->strides[rank - 1] = t->strides[rank - 2];
        t->shape[rank - 2] = s;
        t->strides[rank - 2] = st;
    }
    return m;
}

static double mat_at(const Mat *m, int64_t b, int64_t r, int64_t c) { return m->h.host[b * m->sb + r * m->sr + c * m->sc]; }

/* 64 sampled entries against a double-precision dot product. */
static int check_gemm(const Gemm *g, int64_t B, int64_t M, int64_t N, int64_t K) {
    float *got = ht_read(&g->out);
    int bad = 0;
    for (int s = 0; s < 64; s++) {
        int64_t b = (s * 7919) % B, i = (int64_t)((s * 2654435761u) % (uint64_t)M), j = (s * 40503 + 17) % N;
        if (s == 63) i = M - 1, j = N - 1;
        double ref = 0;
        for (int64_t k = 0; k < K; k++) ref += mat_at(&g->a, b, i, k) * mat_at(&g->b, b, k, j);
        bad += !close_to(got[(b * M + i) * N + j], ref, 1e-6 * (double)K + 1e-6, f16_slack(g->out.t.dtype));
    }
    free(got);
    if (bad) fprintf(stderr, "gemm: %d of 64 sampled entries wrong\n", bad);
    return bad;
}

/* Times one product (after case_begin); `limit` "bytes" (decode: the weight read) or the FLOP
 * rate of the input dtype. Frees nothing: the caller owns the operands. */
static void gemm_time(Case *c, Gemm *g, int64_t B, int64_t M, int64_t N, int64_t K, int reps) {
    WgcDtype in = g->a.h.t.dtype, out = g->out.t.dtype;
    c->in_bytes = (double)(g->a.h.n + g->b.h.n) * dtype_size(in);
    if (!strcmp(c->limit, "bytes")) c->amount = c->in_bytes + (double)(B * M * N) * dtype_size(out);
    else c->amount = 2.0 * B * M * N * K;
    if (!case_first_run(c, run_gemm, g)) return;
    int bad = check_gemm(g, B, M, N, K);
    case_time(c, run_gemm, g, !bad, reps);
}

static void gemm_case(const char *name, const char *cls, const char *size, WgcDtype in, WgcDtype out, int64_t B,
                      int64_t M, int64_t N, int64_t K, int b_transposed, int reps) {
    /* The limit is the dtype's peak: 16-bit tensor cores for f16 and bf16 (which run on the f32 units
     * where the device has no bf16 cooperative matrices). */
    Case c = {name, cls, "", "", in == WGC_DTYPE_F16 || in == WGC_DTYPE_BF16 ? "fp16" : "fp32", 0, 0};
    char dts[16];
    snprintf(dts, sizeof dts, "%s->%s", dtype_name(in), dtype_name(out));
    c.dtype = in == out ? dtype_name(in) : dts;
    if (size) snprintf(c.size, sizeof c.size, "%s", size);
    else if (B > 1)
        snprintf(c.size, sizeof c.size, "%lldx M=%lld N=%lld K=%lld%s", (long long)B, (long long)M, (long long)N,
                 (long long)K, b_transposed ? " B^T view" : "");
    else
        snprintf(c.size, sizeof c.size, "M=%lld N=%lld K=%lld%s", (long long)M, (long long)N, (long long)K,
                 b_transposed ? " B^T view" : "");
    if (!case_begin(&c)) return;
    int64_t os[3] = {B, M, N};
    Gemm g = {mat_random(in, B, M, K, 0), mat_random(in, B, K, N, b_transposed), ht_empty(out, B > 1 ? 3 : 2, B > 1 ? os : os + 1)};
    gemm_time(&c, &g, B, M, N, K, reps);
    ht_free(&g.a.h);
    ht_free(&g.b.h);
    ht_free(&g.out);
}

/* The first pass of an M x N x (B * KR) product split into B runs of KR, as
 * B batched products of the runs: A (M, B * KR) viewed (B, M, KR) with the
 * runs' columns strided as the split reads them, B (B * KR, N) viewed
 * (B, KR, N), each run's product into its own (M, N) slab of the output. */
static void split_pass_case(const char *name, int64_t B, int64_t M, int64_t N, int64_t KR) {
    Case c = {name, "gemm/split-parts", "f32", "", "fp32", 0, 0};
    snprintf(c.size, sizeof c.size, "%lldx M=%lld N=%lld K=%lld A runs strided", (long long)B, (long long)M,
             (long long)N, (long long)KR);
    if (!case_begin(&c)) return;
    int64_t as[2] = {M, B * KR}, os[3] = {B, M, N};
    Gemm g = {{ht_random(WGC_DTYPE_F32, 2, as), KR, B * KR, 1}, mat_random(WGC_DTYPE_F32, B, KR, N, 0), ht_empty(WGC_DTYPE_F32, 3, os)};
    WgcTensor *a = &g.a.h.t;
    a->rank = 3;
    a->shape[0] = B, a->shape[1] = M, a->shape[2] = KR;
    a->strides[0] = KR, a->strides[1] = B * KR, a->strides[2] = 1;
    gemm_time(&c, &g, B, M, N, KR, 10);
    ht_free(&g.a.h);
    ht_free(&g.b.h);
    ht_free(&g.out);
}

/* Decode: `count` row counts `ms` against one weight (K, N), stored (K, N) or
 * (N, K) and viewed transposed; memory bound, so the limit is the bytes read.
 * The weight is made once for them all. */
static void decode_rows(WgcDtype dt, int64_t K, int64_t N, int transposed, const int64_t *ms, int count) {
    int64_t k = SZ(K, K / 64 + 5), n = SZ(N, N / 64 + 3);
    Mat w = {{0}, 0, 0, 0};
    for (int i = 0; i < count; i++) {
        char name[64];
        snprintf(name, sizeof name, "decode_%s_m%lld_k%lld_n%lld_%s", dtype_name(dt),
                 (long long)ms[i], (long long)K, (long long)N, transposed ? "nk" : "kn");
        Case c = {name, "gemm/decode", dtype_name(dt), "", "bytes", 0, 0};
        snprintf(c.size, sizeof c.size, "M=%lld N=%lld K=%lld%s", (long long)ms[i], (long long)n, (long long)k,
                 transposed ? " W(N,K)^T" : "");
        if (!case_begin(&c)) continue;
        if (!w.h.buf) w = mat_random(dt, 1, k, n, transposed);
        int64_t os[2] = {ms[i], n};
        Gemm g = {mat_random(dt, 1, ms[i], k, 0), w, ht_empty(dt, 2, os)};
        gemm_time(&c, &g, 1, ms[i], n, k, 20);
        ht_free(&g.a.h);
        ht_free(&g.out);
    }
    if (w.h.buf) ht_free(&w.h);
}

/* M = 1, 8, 16 and 32 rows. */
static void decode_cases(WgcDtype dt, int64_t K, int64_t N, int transposed) {
    static const int64_t ms[4] = {1, 8, 16, 32};
    decode_rows(dt, K, N, transposed, ms, 4);
}

void cases_gemm(void) {
    const WgcDtype F32 = WGC_DTYPE_F32, F16 = WGC_DTYPE_F16;
    /* The original square cases (names and sizes kept). */
    for (int i = 0; i < 2; i++) {
        int64_t n = i ? SZ(8192, 200) : SZ(4096, 136);
        char size[32];
        snprintf(size, sizeof size, "%lld^3", (long long)n);
        gemm_case("sgemm_f32", "gemm/square", size, F32, F32, 1, n, n, n, 0, i ? 5 : 10);
    }
    for (int i = 0; i < 2; i++) {
        int64_t n = i ? SZ(8192, 256) : SZ(4096, 128);
        char size[32];
        snprintf(size, sizeof size, "%lld^3", (long long)n);
        gemm_case("gemm_f16_f32acc", "gemm/square", size, F16, F32, 1, n, n, n, 0, i ? 5 : 10);
    }
    gemm_case("gemm_bf16", "gemm/square", g_small ? NULL : "4096^3", WGC_DTYPE_BF16, WGC_DTYPE_BF16, 1, SZ(4096, 136),
              SZ(4096, 136), SZ(4096, 136), 0, 10);
    gemm_case("bmm_f32", "gemm/batched", g_small ? "5x33^3" : "512x128^3", F32, F32, SZ(512, 5), SZ(128, 33),
              SZ(128, 33), SZ(128, 33), 0, 10);
    /* Prefill: LLaMA-8B MLP up (K 4096 -> N 14336) and down projections. */
    static const char *outs[2] = {"f32out", "f16out"};
    for (int o = 0; o < 2; o++)
        for (int t = 0; t < 2; t++) {
            char name[64];
            snprintf(name, sizeof name, "hgemm_prefill_up_%s_%s", outs[o], t ? "nk" : "kn");
            gemm_case(name, "gemm/prefill", NULL, F16, o ? F16 : F32, 1, SZ(4096, 130), SZ(14336, 260), SZ(4096, 96), t, 10);
            snprintf(name, sizeof name, "hgemm_prefill_down_%s_%s", outs[o], t ? "nk" : "kn");
            gemm_case(name, "gemm/prefill", NULL, F16, o ? F16 : F32, 1, SZ(2048, 70), SZ(4096, 100), SZ(14336, 300), t, 10);
        }
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            decode_cases(d ? F32 : F16, 4096, 14336, t);
            decode_cases(d ? F32 : F16, 14336, 4096, t);
        }
    decode_cases(WGC_DTYPE_BF16, 4096, 14336, 1);
    decode_cases(WGC_DTYPE_BF16, 14336, 4096, 0);
    /* Two rows (two sequences decoding), and LLaMA-7B's MLP widths (4096 <-> 11008) with one and two rows. */
    static const int64_t two[1] = {2}, one_two[2] = {1, 2};
    for (int t = 0; t < 2; t++) {
        decode_rows(F16, 4096, 14336, t, two, 1);
        decode_rows(F16, 14336, 4096, t, two, 1);
        decode_rows(F16, 4096, 11008, t, one_two, 2);
        decode_rows(F16, 11008, 4096, t, one_two, 2);
    }
    decode_rows(WGC_DTYPE_BF16, 14336, 4096, 0, two, 1);
    decode_rows(WGC_DTYPE_BF16, 11008, 4096, 0, one_two, 2);
    /* Four and twelve rows (a batch of sequences: twelve is one tile of 8 rows and half of another), and
     * eight at LLaMA-7B's widths. */
    static const int64_t four_twelve[2] = {4, 12}, eight[1] = {8};
    for (int t = 0; t < 2; t++) {
        decode_rows(F16, 4096, 14336, t, four_twelve, 2);
        decode_rows(F16, 14336, 4096, t, four_twelve, 2);
        decode_rows(F16, 4096, 11008, t, eight, 1);
        decode_rows(F16, 11008, 4096, t, eight, 1);
    }
    decode_rows(WGC_DTYPE_BF16, 14336, 4096, 0, four_twelve, 2);
    /* LLaMA-3-8B's key and value projections (4096 -> 1024, grouped-query attention): a narrow output. */
    static const int64_t one_two_eight[3] = {1, 2, 8};
    for (int t = 0; t < 2; t++) decode_rows(F16, 4096, 1024, t, one_two_eight, 3);
    for (int t = 0; t < 2; t++) {
        decode_rows(F32, 4096, 14336, t, two, 1);
        decode_rows(F32, 14336, 4096, t, two, 1);
    }
    /* LLaMA-3.2-1B's MLP (2048 <-> 8192): a 32 MiB weight that stays in a 50 MB L2 cache between calls, so
     * these cases show how fast a kernel reads a weight that memory bandwidth does not bound. */
    static const int64_t one_eight_sixteen[3] = {1, 8, 16};
    for (int t = 0; t < 2; t++) {
        decode_rows(F16, 2048, 8192, t, one_eight_sixteen, 3);
        decode_rows(F16, 8192, 2048, t, one_eight_sixteen, 3);
    }
    /* The vocabulary projection of a decode step (LLaMA-3: 4096 -> 128256, stored (N, K) as nn.Linear
     * stores it): a 1 GiB weight, where a fixed cost per call weighs a tenth of what it does above. */
    decode_cases(F16, 4096, 128256, 1);
    decode_cases(WGC_DTYPE_BF16, 4096, 128256, 1);
    /* bf16 prefill (LLaMA-8B MLP): the up projection with nn.Linear's (N, K) weight into bf16, the down one into f32. */
    gemm_case("bgemm_prefill_up_bf16out_nk", "gemm/prefill", NULL, WGC_DTYPE_BF16, WGC_DTYPE_BF16, 1, SZ(4096, 130),
              SZ(14336, 260), SZ(4096, 96), 1, 10);
    gemm_case("bgemm_prefill_down_f32out_kn", "gemm/prefill", NULL, WGC_DTYPE_BF16, F32, 1, SZ(2048, 70), SZ(4096, 100),
              SZ(14336, 300), 0, 10);
    /* Sizes that are no multiple of any tile, and a tall-skinny product. */
    gemm_case("sgemm_1000_f32", "gemm/odd", NULL, F32, F32, 1, SZ(1000, 61), SZ(1000, 67), SZ(1000, 71), 0, 10);
    gemm_case("sgemm_4095x4097x1023_f32", "gemm/odd", NULL, F32, F32, 1, SZ(4095, 63), SZ(4097, 65), SZ(1023, 31), 0, 10);
    gemm_case("sgemm_3000x50x5000_f32", "gemm/odd", NULL, F32, F32, 1, SZ(3000, 77), 50, SZ(5000, 301), 0, 10);
    /* f16 at sizes off the 128x128x32 tiles: partial tiles (16-byte loads), and K % 8 != 0 (element-wise loads). */
    gemm_case("hgemm_4000x4000x4000_f16out", "gemm/odd", NULL, F16, F16, 1, SZ(4000, 129), SZ(4000, 131), SZ(4000, 72), 0, 10);
    /* One dim off the tile: 4000 tokens through a 4096-wide projection, and a K that ends inside a step. */
    gemm_case("hgemm_4000x4096x4096_f16out", "gemm/odd", NULL, F16, F16, 1, SZ(4000, 129), SZ(4096, 136), SZ(4096, 72), 0, 10);
    gemm_case("hgemm_4096x4096x4080_f16out", "gemm/odd", NULL, F16, F16, 1, SZ(4096, 136), SZ(4096, 136), SZ(4080, 72), 0, 10);
    gemm_case("hgemm_4095x4097x1023_f16out", "gemm/odd", NULL, F16, F16, 1, SZ(4095, 63), SZ(4097, 65), SZ(1023, 31), 0, 10);
    /* K not a multiple of 8 with nn.Linear's (N, K) weight, and in bf16: aligned copies, then the tensor cores. */
    gemm_case("hgemm_2047x4096x4095_f16out_nk", "gemm/odd", NULL, F16, F16, 1, SZ(2047, 63), SZ(4096, 136), SZ(4095, 31), 1,
              10);
    gemm_case("bgemm_4095x4097x1023_f32out", "gemm/odd", NULL, WGC_DTYPE_BF16, F32, 1, SZ(4095, 63), SZ(4097, 65),
              SZ(1023, 31), 0, 10);
    /* f32 with fewer 64x64 tiles than a large GPU has SMs' worth: a classifier head over 8192 tokens
     * (100 classes) and a 512^2 output over a long K; K split into runs. */
    gemm_case("sgemm_8192x100x2048_f32", "gemm/few-tiles", NULL, F32, F32, 1, SZ(8192, 130), SZ(100, 37), SZ(2048, 100), 0,
              10);
    gemm_case("sgemm_512x512x8192_f32", "gemm/few-tiles", NULL, F32, F32, 1, SZ(512, 66), SZ(512, 70), SZ(8192, 600), 0,
              10);
    /* 512 x 512 x 8192 taken apart: its first pass is 17 runs of K (496 long) in 128 x 128 tiles, 272
     * workgroups each writing an f32 slab of C, the same work as 17 batched products of K = 496 (no
     * split); with K = 992 each run is twice as long, so 2 t(496) - t(992) is what a run costs besides
     * its FMAs, and t(512 x 512 x 8192) - t(496) what the second pass (the slabs' sum) adds; 16 runs of
     * 512 make 256 workgroups, two per SM of 132 with none left over. */
    gemm_case("sgemm_parts_17x512x512x496_f32", "gemm/split-parts", NULL, F32, F32, SZ(17, 3), SZ(512, 66), SZ(512, 70),
              SZ(496, 40), 0, 10);
    gemm_case("sgemm_parts_16x512x512x512_f32", "gemm/split-parts", NULL, F32, F32, SZ(16, 3), SZ(512, 66), SZ(512, 70),
              SZ(512, 40), 0, 10);
    gemm_case("sgemm_parts_16x512x512x1024_f32", "gemm/split-parts", NULL, F32, F32, SZ(16, 3), SZ(512, 66), SZ(512, 70),
              SZ(1024, 80), 0, 10);
    split_pass_case("sgemm_parts_16x512x512x512_strided_f32", SZ(16, 3), SZ(512, 66), SZ(512, 70), SZ(512, 40));
    gemm_case("sgemm_parts_17x512x512x992_f32", "gemm/split-parts", NULL, F32, F32, SZ(17, 3), SZ(512, 66), SZ(512, 70),
              SZ(992, 80), 0, 10);
    /* f16 with fewer 128x128 tiles than SMs: K split into runs. */
    gemm_case("hgemm_1024x1024x4096_f16out", "gemm/few-tiles", NULL, F16, F16, 1, SZ(1024, 129), SZ(1024, 131), SZ(4096, 1024), 0, 10);
    gemm_case("sgemm_tall_65536x64x64_f32", "gemm/tall-skinny", NULL, F32, F32, 1, SZ(65536, 1001), 64, 64, 0, 10);
    /* Attention scores Q K^T: 32 heads, seq 2048, head dim 128, K (seq, dim) viewed transposed. */
    gemm_case("qk_bmm_f16", "gemm/attention", NULL, F16, F32, SZ(32, 3), SZ(2048, 67), SZ(2048, 67), SZ(128, 40), 1, 10);
    gemm_case("qk_bmm_f32", "gemm/attention", NULL, F32, F32, SZ(32, 3), SZ(2048, 67), SZ(2048, 67), SZ(128, 40), 1, 10);
    /* The same for 4 sequences of 1024 over 16 heads of dim 64 (a BERT-base-sized layer). */
    gemm_case("qk_bmm_f32_d64", "gemm/attention", NULL, F32, F32, SZ(64, 3), SZ(1024, 67), SZ(1024, 67), SZ(64, 40), 1, 10);
    /* The f16 3x3 convolutions' implicit GEMMs as plain products of the same
     * shape, f16 out: channels-first (M output channels, N pixels of the
     * batch, K = 9 * input channels) and channels-last (M pixels, N output
     * channels, the weight (N, K) viewed transposed). Against the conv/3x3
     * cases they separate what the convolution's gather costs from what
     * these shapes cost a GEMM. */
    static const int64_t conv_shapes[][4] = {{64, 32 * 56 * 56, 576, 16}, {128, 64 * 28 * 28, 1152, 32},
                                             {256, 64 * 14 * 14, 2304, 64}, {512, 64 * 7 * 7, 4608, 128}};
    for (int i = 0; i < 4; i++) {
        const int64_t *cs = conv_shapes[i];
        char name[64];
        snprintf(name, sizeof name, "hgemm_conv_shape_%lld_%lld", (long long)cs[0], (long long)cs[1]);
        gemm_case(name, "conv/gemm-shape", NULL, F16, F16, 1, SZ(cs[0], cs[3]), SZ(cs[1], 200), SZ(cs[2], cs[3]), 0, 10);
        snprintf(name, sizeof name, "hgemm_conv_shape_nhwc_%lld_%lld", (long long)cs[1], (long long)cs[0]);
        gemm_case(name, "conv/gemm-shape", NULL, F16, F16, 1, SZ(cs[1], 200), SZ(cs[0], cs[3]), SZ(cs[2], cs[3]), 1, 10);
    }
    /* An f32 linear layer as nn.Linear stores it, weight (N, K) used transposed: 2048 tokens, 4096 -> 4096. */
    gemm_case("sgemm_linear_2048x4096x4096_nk", "gemm/prefill", NULL, F32, F32, 1, SZ(2048, 70), SZ(4096, 100),
              SZ(4096, 96), 1, 10);
}
