/* Skinny products through wgc_op_gemm / wgc_op_matmul (M or N up to 32, any
 * K) against double-precision references: M in {1,2,3,7,16,31,32}, odd and
 * vec4-aligned K and N, the weight row-major (K, N) and stored (N, K) used
 * transposed (flag or transposed view), f32 and f16 in, f32 and f16 out,
 * alpha/beta, batches (weight broadcast or per matrix, rows evenly spaced or
 * not), few columns (the transposed product), K past a software driver's
 * 65,535 loop iterations, NaN/inf, and the f32 kernel of 9-32 rows.
 * Tolerances as test_matmul.c: f32 1e-5 * (1 + sqrt(K)) absolute plus 1e-5
 * relative; f16 output 2e-3 + 2e-3*|ref|. */
#define _POSIX_C_SOURCE 200809L
#include "gemm_check.h"

/* The last two dims swapped (a transposed view of the same memory). */
static View view_t(View v) {
    uint32_t r = v.rank;
    int64_t s = v.shape[r - 1], st = v.strides[r - 1];
    v.shape[r - 1] = v.shape[r - 2], v.strides[r - 1] = v.strides[r - 2];
    v.shape[r - 2] = s, v.strides[r - 2] = st;
    return v;
}

#define F32 WGC_DTYPE_F32
#define F16 WGC_DTYPE_F16

static const int64_t ROWS[] = {1, 2, 3, 7, 16, 31, 32};
#define NROWS (sizeof ROWS / sizeof ROWS[0])

/* M rows times a K x N weight, in both layouts, odd and vec4-aligned. */
static void test_rows_times_weight(WgcDtype in, WgcDtype out) {
    const char *tag = in == F16 ? (out == F16 ? "f16->f16" : "f16->f32") : "f32";
    char name[128];
    for (size_t i = 0; i < NROWS; i++) {
        int64_t M = ROWS[i];
        float alpha = (i % 2) ? 0.5f : 1.0f, beta = (i % 3 == 1) ? -1.5f : 0.0f;
        /* Weight (K, N) row-major: odd sizes, then multiples of 4. */
        snprintf(name, sizeof name, "%s M=%lld weight KxN odd", tag, (long long)M);
        gemm_case_planted(name, in, out, V(2, M, 131), 0, V(2, 131, 77), 0, V(2, M, 77), alpha, beta, NULL);
        snprintf(name, sizeof name, "%s M=%lld weight KxN vec4", tag, (long long)M);
        gemm_case_planted(name, in, out, V(2, M, 132), 0, V(2, 132, 140), 0, V(2, M, 140), alpha, beta, NULL);
        /* Weight stored (N, K) and used transposed (flag). */
        snprintf(name, sizeof name, "%s M=%lld weight NxK odd", tag, (long long)M);
        gemm_case_planted(name, in, out, V(2, M, 133), 0, V(2, 45, 133), 1, V(2, M, 45), alpha, beta, NULL);
        snprintf(name, sizeof name, "%s M=%lld weight NxK vec4", tag, (long long)M);
        gemm_case_planted(name, in, out, V(2, M, 136), 0, V(2, 44, 136), 1, V(2, M, 44), alpha, beta, NULL);
    }
}

/* Few columns: the transposed product (a is the large operand). */
static void test_few_columns(void) {
    gemm_case_planted("N=3, a row-major", F32, F32, V(2, 300, 65), 0, V(2, 65, 3), 0, V(2, 300, 3), 1, 0, NULL);
    gemm_case_planted("N=5, a transposed", F32, F32, V(2, 64, 300), 1, V(2, 64, 5), 0, V(2, 300, 5), 2, 0.5f, NULL);
    gemm_case_planted("N=1, b transposed", F32, F32, V(2, 257, 33), 0, V(2, 1, 33), 1, V(2, 257, 1), 1, 0, NULL);
    /* K = 0: C = beta * C; the empty weight is read by no vec4 kernel. */
    gemm_case_planted("K=0 scales c", F32, F32, V(2, 3, 0), 0, V(2, 0, 8), 0, V(2, 3, 8), 1, 2, NULL);
    if (env.info.has_f16)
        gemm_case_planted("K=0 f16 scales c", F16, F16, V(2, 3, 0), 0, V(2, 0, 8), 0, V(2, 3, 8), 1, 2, NULL);
    if (env.info.has_f16)
        gemm_case_planted("N=31 f16", F16, F16, V(2, 200, 96), 0, V(2, 96, 31), 0, V(2, 200, 31), 1, 0, NULL);
}

/* Views: transposed views of the weight and of a, an unaligned weight, a
 * weight with no unit stride (the tiled GEMM), c column-major. */
static void test_views(void) {
    /* (K, N) seen through a transposed view of an (N, K) buffer. */
    gemm_case_planted("weight transposed view", F32, F32, V(2, 4, 96), 0, view_t(V(2, 50, 96)), 0, V(2, 4, 50), 1, 0, NULL);
    gemm_case_planted("a transposed view", F32, F32, view_t(V(2, 96, 5)), 0, V(2, 96, 60), 0, V(2, 5, 60), 1, 0, NULL);
    View w = V(2, 64, 48);
    w.offset = 1; /* not on a vec4: scalar reads */
    gemm_case_planted("weight offset 1", F32, F32, V(2, 2, 64), 0, w, 0, V(2, 2, 48), 1, 0, NULL);
    View wr = V(2, 40, 70); /* rows longer than K: a row stride of 70 */
    wr.shape[1] = 64;
    gemm_case_planted("weight padded rows, transposed", F32, F32, V(2, 3, 64), 0, wr, 1, V(2, 3, 40), 1, 0, NULL);
    View ws = V(2, 64, 2 * 40); /* every other column, 40 of them: no unit stride, the tiled GEMM */
    ws.shape[1] = 40, ws.strides[1] = 2;
    gemm_case_planted("weight without unit stride", F32, F32, V(2, 3, 64), 0, ws, 0, V(2, 3, 40), 1, 0, NULL);
    View c = V(2, 30, 6); /* column-major c with an offset */
    c.shape[0] = 6, c.shape[1] = 30, c.strides[0] = 1, c.strides[1] = 6, c.offset = 3;
    gemm_case_planted("c column-major, beta", F32, F32, V(2, 6, 40), 0, V(2, 40, 30), 0, c, 1, 2, NULL);
    View ap = V(2, 3, 70); /* rows of a 70 apart and a at offset 2: a read by elements */
    ap.shape[1] = 64, ap.offset = 2;
    gemm_case_planted("a padded rows, weight NxK vec4", F32, F32, ap, 0, V(2, 24, 64), 1, V(2, 3, 24), 1, 0, NULL);
    /* 12 rows times a wide (N, K) weight: two 8-row tiles of the
     * matrix-vector kernel rather than the tiled GEMM. */
    gemm_case_planted("M=12 wide weight NxK", F32, F32, V(2, 12, 32), 0, V(2, 8200, 32), 1, V(2, 12, 8200), 1, 0, NULL);
    View neg = V(2, 40, 24); /* reversed weight rows */
    neg.strides[0] = -24, neg.offset = 39 * 24;
    gemm_case_planted("weight negative stride", F32, F32, V(2, 2, 40), 0, neg, 0, V(2, 2, 24), 1, 0, NULL);
}

/* Batches: one weight for all (rows folded or not), a weight per matrix. */
static void test_batches(void) {
    gemm_case_planted("batch of M=1, weight broadcast", F32, F32, V(3, 8, 1, 100), 0, V(2, 100, 36), 0, V(3, 8, 1, 36), 1, 0,
              NULL);
    gemm_case_planted("batch of M=3, weight NxK broadcast", F32, F32, V(4, 2, 3, 3, 64), 0, V(2, 50, 64), 1,
              V(4, 2, 3, 3, 50), 0.5f, 0.5f, NULL);
    View a = V(3, 4, 5, 33); /* batch stride 5*33 but only 2 rows used: not evenly spaced */
    a.shape[1] = 2;
    gemm_case_planted("batch, rows not evenly spaced", F32, F32, a, 0, V(2, 33, 20), 0, V(3, 4, 2, 20), 1, 0, NULL);
    gemm_case_planted("batch, weight per matrix", F32, F32, V(3, 3, 2, 70), 0, V(3, 3, 70, 21), 0, V(3, 3, 2, 21), 1, 0,
              NULL);
    gemm_case_planted("batch, weight per matrix transposed", F32, F32, V(3, 3, 4, 72), 0, V(3, 3, 24, 72), 1,
              V(3, 3, 4, 24), 1, -1, NULL);
    if (env.info.has_f16)
        gemm_case_planted("f16 batch of M=1", F16, F32, V(3, 6, 1, 64), 0, V(2, 64, 40), 0, V(3, 6, 1, 40), 1, 0, NULL);
}

/* K past 65,535 (split over workgroups and summed by a second pass). */
static void test_long_k(void) {
    int64_t K = 70001;
    gemm_case_planted("long K, weight KxN", F32, F32, V(2, 1, K), 0, V(2, K, 5), 0, V(2, 1, 5), 1, 0, NULL);
    gemm_case_planted("long K, weight NxK, beta", F32, F32, V(2, 3, K), 0, V(2, 6, K), 1, V(2, 3, 6), 0.5f, -1.5f, NULL);
    gemm_case_planted("long K, weight KxN vec4, batch", F32, F32, V(3, 2, 2, 70000), 0, V(2, 70000, 8), 0, V(3, 2, 2, 8), 1,
              0.25f, NULL);
    if (env.info.has_f16) {
        gemm_case_planted("long K f16, weight NxK vec4", F16, F16, V(2, 2, 70000), 0, V(2, 4, 70000), 1, V(2, 2, 4), 1, 0,
                  NULL);
        gemm_case_planted("long K f16, weight KxN", F16, F32, V(2, 1, K), 0, V(2, K, 7), 0, V(2, 1, 7), 1, 0, NULL);
    }
}

/* a (3 x 64) and b (64 x N, or N x 64 transposed; N = g_plant_n, 20 unless
 * set): an inf in a meeting a zero in b (NaN), a NaN in a (a NaN row), an
 * inf in b (an inf column). */
static int64_t g_plant_tb, g_plant_n = 20;
static void plant_specials(float *a, int64_t na, float *b, int64_t nb) {
    (void)nb;
    int64_t bk = g_plant_tb ? 1 : g_plant_n, bn = g_plant_tb ? 64 : 1;
    a[0 * 64 + 5] = INFINITY;
    b[5 * bk + 2 * bn] = 0.0f;
    if (na > 1 * 64 + 7) a[1 * 64 + 7] = NAN; /* a second row, where A has one */
    b[9 * bk + 4 * bn] = -INFINITY;
}

static void test_nan_inf(void) {
    g_plant_tb = 0;
    gemm_case_planted("NaN/inf, weight KxN", F32, F32, V(2, 3, 64), 0, V(2, 64, 20), 0, V(2, 3, 20), 1, 0, plant_specials);
    g_plant_tb = 1;
    gemm_case_planted("NaN/inf, weight NxK", F32, F32, V(2, 3, 64), 0, V(2, 20, 64), 1, V(2, 3, 20), 1, 0, plant_specials);
    if (env.info.has_f16) {
        gemm_case_planted("NaN/inf f16, weight NxK", F16, F16, V(2, 3, 64), 0, V(2, 20, 64), 1, V(2, 3, 20), 1, 0,
                          plant_specials);
        /* N a multiple of 8: the skinny tensor-core kernel where it runs. */
        g_plant_tb = 0, g_plant_n = 24;
        gemm_case_planted("NaN/inf f16, weight KxN", F16, F32, V(2, 3, 64), 0, V(2, 64, 24), 0, V(2, 3, 24), 1, 0,
                          plant_specials);
        /* One and two rows: the matrix-vector kernel's 16-byte units (one tile of both rows). */
        gemm_case_planted("NaN/inf f16 one row, weight KxN", F16, F32, V(2, 1, 64), 0, V(2, 64, 24), 0, V(2, 1, 24), 1,
                          0, plant_specials);
        gemm_case_planted("NaN/inf f16 two rows, weight KxN", F16, F32, V(2, 2, 64), 0, V(2, 64, 24), 0, V(2, 2, 24), 1,
                          0, plant_specials);
        g_plant_n = 20;
    }
}

/* Rows of A staged in workgroup memory (weight (K, N), N a multiple of 4,
 * M >= 2): one K run, K runs longer than one staging block (512) with a short
 * last block, f16, and wide products (N / 64 >= 128 tiled-GEMM tiles) that
 * keep the staged kernel up to 32 rows unless WGC_GEMV_AXPY says otherwise,
 * f16 with 16-byte loads where N is a multiple of 8 (CTest runs this program
 * under every WGC_GEMV_AXPY and WGC_GEMV_F16_LOAD mode). */
static void test_staged(void) {
    gemm_case_planted("staged, one K run", F32, F32, V(2, 5, 60), 0, V(2, 60, 36), 0, V(2, 5, 36), 1, 0, NULL);
    gemm_case_planted("staged, two blocks per K run, weight per matrix", F32, F32, V(3, 512, 2, 1100), 0,
              V(3, 512, 1100, 4), 0, V(3, 512, 2, 4), 0.5f, 1, NULL);
    gemm_case_planted("staged wide, M=32", F32, F32, V(2, 32, 24), 0, V(2, 24, 8200), 0, V(2, 32, 8200), 1, -0.5f, NULL);
    gemm_case_planted("staged wide, M=17", F32, F32, V(2, 17, 40), 0, V(2, 40, 8196), 0, V(2, 17, 8196), 1, 0, NULL);
    if (env.info.has_f16) {
        gemm_case_planted("staged f16, one K run", F16, F16, V(2, 6, 100), 0, V(2, 100, 44), 0, V(2, 6, 44), 1, 0, NULL);
        gemm_case_planted("staged wide f16, M=24", F16, F32, V(2, 24, 36), 0, V(2, 36, 8196), 0, V(2, 24, 8196), 2, 0,
                  NULL);
        /* N a multiple of 8: 16-byte loads of 8 columns, also for one row. */
        gemm_case_planted("f16 16-byte, M=1, split", F16, F16, V(2, 1, 200), 0, V(2, 200, 264), 0, V(2, 1, 264), 1, 0, NULL);
        gemm_case_planted("f16 16-byte, M=5, one K run", F16, F16, V(2, 5, 40), 0, V(2, 40, 264), 0, V(2, 5, 264), 0.5f,
                  -1, NULL);
        /* One and two rows: 64-column blocks with 32 lanes along K
         * (axpy_unit_narrow); the last: 1096 columns, the 18th block
         * partial. */
        gemm_case_planted("f16 16-byte, M=2, one K run", F16, F32, V(2, 2, 40), 0, V(2, 40, 264), 0, V(2, 2, 264), 1,
                  0.5f, NULL);
        gemm_case_planted("f16 16-byte, M=2, split", F16, F16, V(2, 2, 3000), 0, V(2, 3000, 136), 0, V(2, 2, 136), 0.5f,
                  0, NULL);
        gemm_case_planted("f16 16-byte, M=1, two column blocks", F16, F32, V(2, 1, 100), 0, V(2, 100, 1096), 0,
                  V(2, 1, 1096), 1, 0, NULL);
        gemm_case_planted("f16 16-byte, M=1, K in three runs, alpha, beta", F16, F16, V(2, 1, 9000), 0,
                          V(2, 9000, 72), 0, V(2, 1, 72), -0.5f, 2, NULL);
        gemm_case_planted("f16 16-byte, M=1, weight per matrix", F16, F32, V(3, 4, 1, 136), 0, V(3, 4, 136, 72), 0,
                          V(3, 4, 1, 72), 1, 0, NULL);
        gemm_case_planted("f16 16-byte, batch of M=1 as two rows", F16, F32, V(3, 2, 1, 64), 0, V(2, 64, 40), 0,
                          V(3, 2, 1, 40), 1, 0.5f, NULL);
        gemm_case_planted("f16 16-byte, M=8, two blocks, weight per matrix", F16, F32, V(3, 300, 8, 1100), 0,
                  V(3, 300, 1100, 8), 0, V(3, 300, 8, 8), 1, 0, NULL);
        gemm_case_planted("f16 16-byte wide, M=32", F16, F16, V(2, 32, 20), 0, V(2, 20, 8200), 0, V(2, 32, 8200), 1, 0,
                  NULL);
        View w4 = V(2, 48, 72); /* offset 4: 8-byte loads only */
        w4.offset = 4, w4.shape[1] = 64;
        gemm_case_planted("f16 weight offset 4", F16, F16, V(2, 3, 48), 0, w4, 0, V(2, 3, 64), 1, 0, NULL);
    }
}

/* One and two f16 rows times a weight stored (N, K) with K a multiple of 8:
 * 16-byte loads of 8 values of K, two units per pass (CTest also runs this
 * program with WGC_GEMV_F16_LOAD=8, the 8-byte loads). K 1096 is 137 units:
 * threads 0-8 read a second unit and the others do not. The weight's inf at
 * column 4, K 163 (unit 20, which only thread 20's first pass reads) meets
 * positive A: column 4 is inf, not NaN. Then a padded weight view at offset
 * 8 (16-byte loads) and at offset 4 (8-byte loads). */
static void plant_row_dot(float *a, int64_t na, float *b, int64_t nb) {
    (void)nb;
    for (int64_t i = 0; i < na; i++) a[i] = 0.25f + fabsf(a[i]);
    b[4 * 1096 + 163] = INFINITY;
}

static void test_row_dot_units(void) {
    if (!env.info.has_f16) return;
    char name[96];
    for (int64_t M = 1; M <= 2; M++) {
        snprintf(name, sizeof name, "f16 16-byte dot, M=%lld, inf in W", (long long)M);
        gemm_case_planted(name, F16, F32, V(2, M, 1096), 0, V(2, 20, 1096), 1, V(2, M, 20), 1, 0, plant_row_dot);
        for (int64_t off = 4; off <= 8; off += 4) {
            View w = V(2, 36, 1112); /* rows of 1104 values of K, 8 apart */
            w.shape[1] = 1104, w.offset = off;
            snprintf(name, sizeof name, "f16 dot, M=%lld, padded weight at offset %lld", (long long)M, (long long)off);
            gemm_case_planted(name, F16, F16, V(2, M, 1104), 0, w, 1, V(2, M, 36), 0.5f, -1, NULL);
        }
    }
    /* A weight per batch matrix: batch strides in whole 16-byte units. */
    gemm_case_planted("f16 16-byte dot, batch, weight per matrix", F16, F32, V(3, 3, 2, 72), 0, V(3, 3, 24, 72), 1,
                      V(3, 3, 2, 24), 1, 0, NULL);
}

/* f32 products of 9-32 rows (every row in one tile, K in runs summed by a
 * second pass): both weight layouts, 9, 16, 17 and 32 rows (tiles of 16 and
 * 32), N not a multiple of the 128-column tile, K not a multiple of the
 * 32-deep step and split into runs with a short last one, K past a software
 * driver's loop budget, few columns (the transposed product), padded A rows
 * at an offset, weights at an offset with padded or reversed rows,
 * column-major C with beta, and NaN/inf in both operands. */
static void test_rows_kernel(void) {
    static const int64_t rows[] = {9, 16, 17, 32};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t M = rows[i];
        char name[96];
        snprintf(name, sizeof name, "rows M=%lld weight KxN, split K", (long long)M);
        gemm_case_planted(name, F32, F32, V(2, M, 5000), 0, V(2, 5000, 260), 0, V(2, M, 260), 1, 0, NULL);
        snprintf(name, sizeof name, "rows M=%lld weight NxK, beta", (long long)M);
        gemm_case_planted(name, F32, F32, V(2, M, 1028), 0, V(2, 300, 1028), 1, V(2, M, 300), 0.5f, -1.5f, NULL);
    }
    gemm_case_planted("rows M=12, long K", F32, F32, V(2, 12, 70000), 0, V(2, 70000, 64), 0, V(2, 12, 64), 1, 0, NULL);
    gemm_case_planted("rows N=24, few columns", F32, F32, V(2, 300, 200), 0, V(2, 200, 24), 0, V(2, 300, 24), 1, 0, NULL);
    View ap = V(2, 20, 140); /* rows 140 apart, K = 128, offset 3 */
    ap.shape[1] = 128, ap.offset = 3;
    View cc = V(2, 136, 20); /* column-major C */
    cc.shape[0] = 20, cc.shape[1] = 136, cc.strides[0] = 1, cc.strides[1] = 20;
    gemm_case_planted("rows padded a, column-major c, beta", F32, F32, ap, 0, V(2, 128, 136), 0, cc, 2, 0.5f, NULL);
    /* Weights at an offset of whole vec4s with padded rows, in both layouts,
     * and a (K, N) weight with its rows reversed (a negative row stride). */
    View wk = V(2, 96, 148); /* (K, N) = (96, 140), rows 148 apart, offset 8 */
    wk.shape[1] = 140, wk.shape[0] = 95, wk.offset = 8;
    gemm_case_planted("rows weight KxN offset, padded rows", F32, F32, V(2, 11, 95), 0, wk, 0, V(2, 11, 140), 1, 0,
                      NULL);
    View wn = V(2, 70, 1036); /* (N, K) = (70, 1028), rows 1036 apart, offset 4 */
    wn.shape[1] = 1028, wn.offset = 4;
    gemm_case_planted("rows weight NxK offset, padded rows", F32, F32, V(2, 25, 1028), 0, wn, 1, V(2, 25, 70), 1, 0, NULL);
    View rev = V(2, 300, 24); /* (K, N) = (300, 24), rows reversed */
    rev.strides[0] = -24, rev.offset = 299 * 24;
    gemm_case_planted("rows weight negative stride", F32, F32, V(2, 13, 300), 0, rev, 0, V(2, 13, 24), 1, 0, NULL);
    g_plant_tb = 0, g_plant_n = 20;
    gemm_case_planted("rows NaN/inf, weight KxN", F32, F32, V(2, 10, 64), 0, V(2, 64, 20), 0, V(2, 10, 20), 1, 0,
                      plant_specials);
    g_plant_tb = 1;
    gemm_case_planted("rows NaN/inf, weight NxK", F32, F32, V(2, 10, 64), 0, V(2, 20, 64), 1, V(2, 10, 20), 1, 0,
                      plant_specials);
}

/* matmul reaches the same kernels: vector x matrix, batched rows x vector. */
static void test_matmul(void) {
    int64_t K = 96, N = 40;
    float *ha = malloc(3 * K * 4), *hb = malloc(K * N * 4), *hc = malloc(3 * N * 4);
    fill_uniform_f32(ha, 3 * K, -1, 1);
    fill_uniform_f32(hb, K * N, -1, 1);
    WgcBuffer *ba = upload(env.device, ha, 3 * K * 4), *bb = upload(env.device, hb, K * N * 4);
    WgcBuffer *bc = upload(env.device, hb, 3 * N * 4);
    WgcTensor a = tensor_of(ba, F32, 2, SHAPE(3, K)), b = tensor_of(bb, F32, 2, SHAPE(K, N));
    WgcTensor c = tensor_of(bc, F32, 2, SHAPE(3, N));
    CHECK(wgc_op_matmul(env.stream, &a, &b, &c));
    CHECK(wgc_buffer_read(bc, 0, hc, 3 * N * 4));
    double ref[3 * 40];
    for (int64_t m = 0; m < 3; m++)
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) s += (double)ha[m * K + k] * hb[k * N + n];
            ref[m * N + n] = s;
        }
    compare_f32("matmul 3 rows", hc, ref, 3 * N, 1e-4, 1e-5);
    WgcTensor v = tensor_of(ba, F32, 1, SHAPE(K)), cv = tensor_of(bc, F32, 1, SHAPE(N));
    CHECK(wgc_op_matmul(env.stream, &v, &b, &cv));
    CHECK(wgc_buffer_read(bc, 0, hc, N * 4));
    compare_f32("matmul vector x matrix", hc, ref, N, 1e-4, 1e-5);
    free(ha), free(hb), free(hc);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
}

int main(void) {
    env = test_env();
    test_rows_kernel();
    test_rows_times_weight(F32, F32);
    if (env.info.has_f16) {
        test_rows_times_weight(F16, F32);
        test_rows_times_weight(F16, F16);
    } else {
        printf("no f16 on this adapter: f16 cases skipped\n");
    }
    test_few_columns();
    test_views();
    test_batches();
    test_long_k();
    test_nan_inf();
    test_staged();
    test_row_dot_units();
    test_matmul();
    test_env_release(&env);
    return test_finish("test_gemv");
}
