/* wgc_op_gemm and wgc_op_matmul against double-precision references:
 * odd sizes, transposes (flags and strided views), alpha/beta, broadcast
 * batches, 1-D operands, f16 inputs, and every error status.
 * Tolerances: f32 |err| <= 1e-5 + 1e-5*|ref| per unit-scale inputs
 * (times 1 + sqrt(K)); f16 inputs with f32 output the same (references use
 * the f16-rounded inputs, and products of f16 values are exact in f32); f16
 * output adds the f16 rounding: 2e-3 + 2e-3*|ref|. */
#define _POSIX_C_SOURCE 200809L
#include "gemm_check.h"

static void test_gemm_f32(void) {
    gemm_case("odd 67x33x129", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 67, 33), 0, V(2, 33, 129), 0, V(2, 67, 129), 1, 0);
    gemm_case("1xKx1", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 1, 50), 0, V(2, 50, 1), 0, V(2, 1, 1), 1, 0);
    gemm_case("long odd K", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 33, 517), 0, V(2, 517, 45), 0, V(2, 33, 45), 1, 0);
    gemm_case("K=1", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 37, 1), 0, V(2, 1, 45), 0, V(2, 37, 45), 1, 0);
    gemm_case("transpose a", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 33, 67), 1, V(2, 33, 70), 0, V(2, 67, 70), 0.5f, -1.5f);
    gemm_case("transpose b", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 67, 33), 0, V(2, 70, 33), 1, V(2, 67, 70), 2.0f, 1.0f);
    gemm_case("transpose both", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 19, 41), 1, V(2, 23, 19), 1, V(2, 41, 23), 1, 0.25f);
    gemm_case("broadcast batch", WGC_DTYPE_F32, WGC_DTYPE_F32, V(4, 3, 1, 20, 17), 0, V(3, 4, 17, 23), 0,
              V(4, 3, 4, 20, 23), 1, 0);
    gemm_case("broadcast batch, transposed, beta", WGC_DTYPE_F32, WGC_DTYPE_F32, V(3, 2, 17, 20), 1, V(2, 23, 17), 1,
              V(3, 2, 20, 23), -1, 0.5f);
    /* Large enough for the 128x128 tiles, with b broadcast over 41 matrices. */
    gemm_case("batched 128 tiles", WGC_DTYPE_F32, WGC_DTYPE_F32, V(3, 41, 257, 20), 0, V(2, 20, 257), 0,
              V(3, 41, 257, 257), 1, 0);
    gemm_case("tall skinny", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 65600, 10), 0, V(2, 10, 3), 0, V(2, 65600, 3), 1, 0);
    gemm_case("short wide", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 5, 7), 0, V(2, 7, 65600), 0, V(2, 5, 65600), 1, 0);
    gemm_case("K=0 scales c", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 9, 0), 0, V(2, 0, 11), 0, V(2, 9, 11), 1, 3.0f);
    gemm_case("M=0", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 0, 5), 0, V(2, 5, 11), 0, V(2, 0, 11), 1, 0);

    /* Strided views: a as a transposed view (column-major), b with every
     * other column (no unit stride), c column-major with an offset. */
    View a = V(2, 45, 31);
    a.shape[0] = 31, a.shape[1] = 45, a.strides[0] = 1, a.strides[1] = 31;
    View b = V(2, 45, 2 * 29);
    b.shape[1] = 29, b.strides[1] = 2, b.offset = 1;
    View c = V(2, 31, 29);
    c.strides[0] = 1, c.strides[1] = 31, c.offset = 7;
    gemm_case("strided views", WGC_DTYPE_F32, WGC_DTYPE_F32, a, 0, b, 0, c, 1.5f, -0.5f);
    /* Rows of a with a gap (row stride > K) and a negative stride in b. */
    View a2 = V(2, 21, 40);
    a2.shape[1] = 33;
    View b2 = V(2, 33, 18);
    b2.strides[0] = -18, b2.offset = 32 * 18;
    gemm_case("padded rows, negative stride", WGC_DTYPE_F32, WGC_DTYPE_F32, a2, 0, b2, 0, V(2, 21, 18), 1, 0);
}

/* The tiled kernel stores C four columns at a time where N, C's row stride,
 * offset and batch strides are multiples of 4 and its columns are dense
 * (short K, so no split): check those stores with alpha, beta, f16 C,
 * padded rows, an offset, rows in reverse order and 128-wide tiles, next
 * to a C that misses one condition. */
static void test_gemm_vec4_stores(void) {
    gemm_case("vec4 C: batched, alpha, beta", WGC_DTYPE_F32, WGC_DTYPE_F32, V(4, 3, 2, 45, 20), 0, V(2, 20, 68), 0,
              V(4, 3, 2, 45, 68), 1.5f, -0.5f);
    gemm_case("vec4 C: f16 out, b transposed, beta", WGC_DTYPE_F16, WGC_DTYPE_F16, V(2, 37, 24), 0, V(2, 36, 24), 1,
              V(2, 37, 36), 1, 0.25f);
    View c = V(2, 45, 72);
    c.shape[1] = 68, c.offset = 8;
    gemm_case("vec4 C: padded rows, offset", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 45, 20), 0, V(2, 20, 68), 0, c, 1,
              2.0f);
    View odd = V(2, 45, 72);
    odd.shape[1] = 68, odd.offset = 6;
    gemm_case("C offset not a multiple of 4", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 45, 20), 0, V(2, 20, 68), 0, odd, 1,
              2.0f);
    View flipped = V(2, 45, 68);
    flipped.strides[0] = -68, flipped.offset = 44 * 68;
    gemm_case("vec4 C: negative row stride, beta", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 45, 20), 0, V(2, 20, 68), 0,
              flipped, 1, -1.0f);
    gemm_case("vec4 C: 128-wide tiles", WGC_DTYPE_F32, WGC_DTYPE_F32, V(3, 128, 130, 12), 0, V(3, 128, 12, 132), 0,
              V(3, 128, 130, 132), 1, 0);
}

/* PyTorch's NaN policy through the tiled kernel's stores, vec4 (C offset 0)
 * and scalar (offset 2): a NaN in A makes its row NaN, an inf in B (times
 * positive A) its column inf; with beta 0 the NaNs C held are overwritten,
 * with beta 1 a NaN in C stays. A 70 x 20, B 20 x 68. */
static void test_gemm_nan_inf_stores(void) {
    enum { M = 70, K = 20, N = 68 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    float *c0 = malloc(sizeof(float) * (M * N + 2)), *got = malloc(sizeof(float) * (M * N + 2));
    for (int i = 0; i < M * K; i++) a[i] = 0.5f + (float)(i % 7) / 8;
    for (int i = 0; i < K * N; i++) b[i] = (float)(i % 5) / 4 - 0.5f;
    a[3 * K + 5] = NAN;
    b[7 * N + 10] = INFINITY;
    for (int offset = 0; offset <= 2; offset += 2) {
        for (int beta = 0; beta <= 1; beta++) {
            for (int i = 0; i < M * N + 2; i++) c0[i] = beta ? 1.0f : NAN;
            c0[offset + 40 * N + 50] = NAN;
            WgcBuffer *ab = upload(env.device, a, sizeof(float) * M * K);
            WgcBuffer *bb = upload(env.device, b, sizeof(float) * K * N);
            WgcBuffer *cb = upload(env.device, c0, sizeof(float) * (M * N + 2));
            int64_t as[2] = {M, K}, bs[2] = {K, N}, cs[2] = {M, N};
            WgcTensor at = tensor_of(ab, WGC_DTYPE_F32, 2, as), bt = tensor_of(bb, WGC_DTYPE_F32, 2, bs);
            WgcTensor ct = tensor_of(cb, WGC_DTYPE_F32, 2, cs);
            ct.offset = offset;
            CHECK(wgc_op_gemm(env.stream, 1.0f, &at, 0, &bt, 0, (float)beta, &ct));
            CHECK(wgc_stream_synchronize(env.stream));
            CHECK(wgc_buffer_read(cb, 0, got, sizeof(float) * (M * N + 2)));
            int bad = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    float g = got[offset + i * N + j];
                    int nan = i == 3 || (beta && i == 40 && j == 50);
                    if (nan) bad += !isnan(g);
                    else if (j == 10) bad += !(isinf(g) && g > 0);
                    else bad += !isfinite(g);
                }
            if (bad) {
                fprintf(stderr, "NaN/inf through the tiled stores (C offset %d, beta %d): %d wrong\n", offset, beta, bad);
                g_failures++;
            }
            wgc_buffer_release(ab);
            wgc_buffer_release(bb);
            wgc_buffer_release(cb);
        }
    }
    free(a);
    free(b);
    free(c0);
    free(got);
}

static void test_gemm_f16(void) {
    if (!env.info.has_f16) {
        printf("no f16 on this adapter: f16 cases skipped\n");
        return;
    }
    gemm_case("f16 -> f32", WGC_DTYPE_F16, WGC_DTYPE_F32, V(2, 45, 70), 0, V(2, 70, 38), 0, V(2, 45, 38), 1, 0);
    gemm_case("f16 -> f16, transposed", WGC_DTYPE_F16, WGC_DTYPE_F16, V(2, 70, 45), 1, V(2, 38, 70), 1, V(2, 45, 38), 1,
              0);
    View ht = V(2, 40, 30);
    ht.shape[0] = 30, ht.shape[1] = 40, ht.strides[0] = 1, ht.strides[1] = 30;
    gemm_case("f16 transposed view, long K", WGC_DTYPE_F16, WGC_DTYPE_F32, V(2, 21, 300), 0, V(2, 300, 19), 0,
              V(2, 21, 19), 1, 0);
    gemm_case("f16 strided view", WGC_DTYPE_F16, WGC_DTYPE_F32, ht, 0, V(2, 40, 11), 0, V(2, 30, 11), 1, 0);
    gemm_case("f16 -> f16 batched, beta", WGC_DTYPE_F16, WGC_DTYPE_F16, V(3, 3, 17, 9), 0, V(3, 1, 9, 13), 0,
              V(3, 3, 17, 13), 0.5f, 0.5f);
}

/* K longer than one workgroup accumulates (16384) is split over workgroups
 * and summed in a second pass: every feature through that path. */
static void test_gemm_split_k(void) {
    gemm_case("split K, alpha, beta", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 5, 16401), 0, V(2, 16401, 7), 0, V(2, 5, 7),
              0.5f, -1.5f);
    gemm_case("split K, broadcast batch, transposes", WGC_DTYPE_F32, WGC_DTYPE_F32, V(3, 3, 33000, 4), 1,
              V(2, 6, 33000), 1, V(3, 3, 4, 6), 1, 0);
    View c = V(2, 6, 5);
    c.strides[0] = 1, c.strides[1] = 6, c.offset = 3;
    gemm_case("split K, column-major c with offset, beta", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 6, 20000), 0,
              V(2, 20000, 5), 0, c, -1, 2);
    gemm_case("split K, 65 x 70 output", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 65, 16500), 0, V(2, 16500, 70), 0,
              V(2, 65, 70), 1, 0);
    if (env.info.has_f16) {
        gemm_case("split K, f16 -> f16, beta", WGC_DTYPE_F16, WGC_DTYPE_F16, V(2, 3, 17000), 0, V(2, 17000, 5), 0,
                  V(2, 3, 5), 1, 0.5f);
        gemm_case("split K, f16 -> f32", WGC_DTYPE_F16, WGC_DTYPE_F32, V(2, 4, 17000), 0, V(2, 17000, 3), 0,
                  V(2, 4, 3), 1, 0);
    }
    /* Too few tiles to fill a GPU: K in 17 runs of 256, whose slabs the
     * second pass adds in order. */
    gemm_case("split K to fill the GPU, 17 runs, alpha, beta", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 70, 4352), 0,
              V(2, 4352, 66), 0, V(2, 70, 66), -0.5f, 2);
    /* Scratch for two of the six splits at a time: three waves, later ones
     * adding into the slabs (33 x 33: wider than the skinny-product kernels
     * take, so the tiled GEMM runs), on a device created with that setting. */
    TestEnv outer = env;
    env = test_env_setting("WGC_GEMM_SCRATCH_BYTES", "9000");
    gemm_case("split K in waves", WGC_DTYPE_F32, WGC_DTYPE_F32, V(2, 33, 5 * 16384 + 1), 0, V(2, 5 * 16384 + 1, 33), 0,
              V(2, 33, 33), 1, 0.5f);
    test_env_release(&env);
    env = outer;
}

/* matmul with 1-D operands: compare with gemm on explicit 2-D shapes. */
static void matmul_case(const char *name, uint32_t ra, const int64_t *sa, uint32_t rb, const int64_t *sb, uint32_t rc,
                        const int64_t *sc, int64_t M, int64_t K, int64_t N, int64_t batches) {
    int64_t na = 1, nb = 1, nc = 1;
    for (uint32_t i = 0; i < ra; i++) na *= sa[i];
    for (uint32_t i = 0; i < rb; i++) nb *= sb[i];
    for (uint32_t i = 0; i < rc; i++) nc *= sc[i];
    float *ha = malloc(na * 4), *hb = malloc(nb * 4), *hc = malloc(nc * 4);
    double *ref = malloc(nc * 8);
    fill_uniform_f32(ha, na, -1, 1);
    fill_uniform_f32(hb, nb, -1, 1);
    WgcBuffer *ba = upload(env.device, ha, na * 4), *bb = upload(env.device, hb, nb * 4);
    memset(hc, 0, nc * 4);
    WgcBuffer *bc = upload(env.device, hc, nc * 4);
    WgcTensor ta = tensor_of(ba, WGC_DTYPE_F32, ra, sa), tb = tensor_of(bb, WGC_DTYPE_F32, rb, sb),
              tc = tensor_of(bc, WGC_DTYPE_F32, rc, sc);
    CHECK(wgc_op_matmul(env.stream, &ta, &tb, &tc));
    CHECK(wgc_buffer_read(bc, 0, hc, nc * 4));
    /* a is batches x M x K (or K), b is K x N (or K): row-major either way. */
    int64_t a_batch = na / (M * K);
    for (int64_t bi = 0; bi < batches; bi++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)ha[(a_batch > 1 ? bi : 0) * M * K + m * K + k] * hb[k * N + n];
                ref[(bi * M + m) * N + n] = s;
            }
    compare_f32(name, hc, ref, nc, 1e-5 * (1 + sqrt((double)K)), 1e-5);
    free(ha), free(hb), free(hc), free(ref);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
}

static void test_matmul_1d(void) {
    matmul_case("vector x matrix", 1, SHAPE(37), 2, SHAPE(37, 29), 1, SHAPE(29), 1, 37, 29, 1);
    matmul_case("matrix x vector", 2, SHAPE(29, 37), 1, SHAPE(37), 1, SHAPE(29), 29, 37, 1, 1);
    matmul_case("vector x vector", 1, SHAPE(53), 1, SHAPE(53), 0, SHAPE(0), 1, 53, 1, 1);
    matmul_case("batched matrix x vector", 3, SHAPE(2, 13, 37), 1, SHAPE(37), 2, SHAPE(2, 13), 13, 37, 1, 2);
    matmul_case("plain 2-D", 2, SHAPE(31, 9), 2, SHAPE(9, 40), 2, SHAPE(31, 40), 31, 9, 40, 1);
}

static void test_errors(void) {
    float ones[64 * 64];
    for (int i = 0; i < 64 * 64; i++) ones[i] = 1.0f;
    WgcBuffer *ba = upload(env.device, ones, sizeof ones), *bb = upload(env.device, ones, sizeof ones);
    WgcBuffer *bc = upload(env.device, ones, sizeof ones);
    WgcTensor a = tensor_of(ba, WGC_DTYPE_F32, 2, SHAPE(4, 5)), b = tensor_of(bb, WGC_DTYPE_F32, 2, SHAPE(5, 6));
    WgcTensor c = tensor_of(bc, WGC_DTYPE_F32, 2, SHAPE(4, 6));
    WgcTensor t;

    t = tensor_of(bb, WGC_DTYPE_F32, 2, SHAPE(6, 6));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &t, 0, 0, &c), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bc, WGC_DTYPE_F32, 2, SHAPE(4, 7));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 1, &b, 0, 0, &c), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(ba, WGC_DTYPE_F32, 1, SHAPE(5));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &t, 0, &b, 0, 0, &c), WGC_ERROR_SHAPE_MISMATCH);
    WgcTensor a3 = tensor_of(ba, WGC_DTYPE_F32, 3, SHAPE(2, 4, 5)), b3 = tensor_of(bb, WGC_DTYPE_F32, 3, SHAPE(3, 5, 6));
    t = tensor_of(bc, WGC_DTYPE_F32, 3, SHAPE(2, 4, 6));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a3, 0, &b3, 0, 0, &t), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bb, WGC_DTYPE_F16, 2, SHAPE(5, 6));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &t, 0, 0, &c), WGC_ERROR_DTYPE_MISMATCH);
    if (env.info.has_f16) {
        WgcTensor a16 = tensor_of(ba, WGC_DTYPE_F16, 2, SHAPE(4, 5)), c16 = tensor_of(bc, WGC_DTYPE_F16, 2, SHAPE(4, 6));
        EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &c16), WGC_ERROR_DTYPE_MISMATCH);
        (void)a16;
    }
    WgcTensor ai = tensor_of(ba, WGC_DTYPE_I32, 2, SHAPE(4, 5)), bi = tensor_of(bb, WGC_DTYPE_I32, 2, SHAPE(5, 6));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &ai, 0, &bi, 0, 0, &c), WGC_ERROR_UNSUPPORTED);
    t = tensor_of(bc, WGC_DTYPE_I32, 2, SHAPE(4, 6));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &t), WGC_ERROR_UNSUPPORTED);
    /* Output over an input: overlapping, and in the same buffer. */
    t = tensor_of(ba, WGC_DTYPE_F32, 2, SHAPE(4, 6));
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &t), WGC_ERROR_INVALID_ARGUMENT);
    t.offset = 1000;
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &t), WGC_ERROR_INVALID_ARGUMENT);
    t = c;
    t.strides[0] = 0;
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &t), WGC_ERROR_INVALID_ARGUMENT);
    /* Rows that overlap (a row stride of 2 under 6 columns): elements written twice. */
    t = c;
    t.strides[0] = 2;
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &t), WGC_ERROR_INVALID_ARGUMENT);
    t = c;
    t.offset = 64 * 64;
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, &a, 0, &b, 0, 0, &t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_gemm(env.stream, 1, NULL, 0, &b, 0, 0, &c), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_gemm(NULL, 1, &a, 0, &b, 0, 0, &c), WGC_ERROR_NULL_POINTER);
    /* matmul: 1-D shapes that do not fit, rank 0. */
    WgcTensor v = tensor_of(ba, WGC_DTYPE_F32, 1, SHAPE(5)), w = tensor_of(bc, WGC_DTYPE_F32, 1, SHAPE(5));
    EXPECT_STATUS(wgc_op_matmul(env.stream, &v, &b, &w), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(ba, WGC_DTYPE_F32, 0, NULL);
    EXPECT_STATUS(wgc_op_matmul(env.stream, &t, &b, &c), WGC_ERROR_SHAPE_MISMATCH);
    t = tensor_of(bb, WGC_DTYPE_F16, 1, SHAPE(5));
    EXPECT_STATUS(wgc_op_matmul(env.stream, &v, &t, &w), WGC_ERROR_DTYPE_MISMATCH);

    /* Nothing was written by the failed calls. */
    float back[64 * 64];
    CHECK(wgc_buffer_read(bc, 0, back, sizeof back));
    EXPECT(memcmp(back, ones, sizeof back) == 0);
    CHECK(wgc_buffer_read(ba, 0, back, sizeof back));
    EXPECT(memcmp(back, ones, sizeof back) == 0);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
}

int main(void) {
    env = test_env();
    test_gemm_f32();
    test_gemm_f16();
    test_gemm_vec4_stores();
    test_gemm_nan_inf_stores();
    test_gemm_split_k();
    test_matmul_1d();
    test_errors();
    test_env_release(&env);
    return test_finish("test_matmul");
}
