/* f16 x f16 GEMM in every layout, against double-precision references
 * (tolerances as test_matmul.c). On an adapter with cooperative matrices
 * every case here except the skinny one runs on the tensor-core kernel:
 * A and B each row-major or transposed (flag or view), f32 or f16 C,
 * alpha/beta, whole and partial 128x128x32 tiles, batches with broadcast,
 * strided C and split K. Operands that 16-byte loads cannot read (K not a
 * multiple of 8, offsets and strides not multiples of 8) take the tiled
 * kernel at these sizes, or the tensor cores through aligned copies under
 * WGC_GEMM_STAGE=always; NaN and inf go through such a K. Elsewhere the
 * same cases check the tiled kernel. CTest runs it five times: as it is
 * (the default routes), with WGC_GEMM_SPIRV=0 (the WGSL tensor-core kernel
 * for every K), with WGC_GEMM_SPIRV=1 (the SPIR-V one on
 * VK_KHR_cooperative_matrix), with WGC_GEMM_SPIRV=2 (the one on
 * VK_NV_cooperative_matrix2), each where the adapter has what it needs,
 * and with WGC_GEMM_STAGE=always (without cooperative matrices, the
 * WGC_GEMM_SPIRV runs check the layouts and sizes only: the setting changes
 * nothing there). Each case prints its sizes; a failure names its case. */
#define _POSIX_C_SOURCE 200809L
#include "gemm_check.h"

static const char *dt_name(WgcDtype d) {
    return d == WGC_DTYPE_F16 ? "f16" : "f32";
}

/* A plain case: op(A) M x K, op(B) K x N, stored transposed when ta / tb. */
static void plain_case(const char *what, int64_t m, int64_t n, int64_t k, int ta, int tb, WgcDtype out, float alpha,
                       float beta) {
    char name[160];
    snprintf(name, sizeof name, "%s %lldx%lldx%lld a%s b%s -> %s alpha %g beta %g", what, (long long)m, (long long)n,
             (long long)k, ta ? "^T" : "", tb ? "^T" : "", dt_name(out), alpha, beta);
    printf("case: %s\n", name);
    View a = ta ? V(2, k, m) : V(2, m, k);
    View b = tb ? V(2, n, k) : V(2, k, n);
    gemm_case(name, WGC_DTYPE_F16, out, a, ta, b, tb, V(2, m, n), alpha, beta);
}

static void test_layouts_and_sizes(void) {
    static const int64_t sizes[][3] = {
        {256, 256, 64},  /* whole tiles */
        {129, 257, 40},  /* partial tiles in M and N, K not a multiple of 32 */
        {200, 100, 1000}, /* partial tiles, long K */
        {67, 150, 37},   /* K % 8 != 0: the element-wise path for K-dense operands */
        {1, 130, 72},    /* one row: the matrix-vector kernel */
    };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int layout = 0; layout < 4; layout++)
            for (int o = 0; o < 2; o++) {
                int ta = layout & 1, tb = layout >> 1;
                WgcDtype out = o ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
                /* alpha 1, beta 0 (the direct store where tiles are whole), then an epilogue. */
                plain_case("plain", sizes[s][0], sizes[s][1], sizes[s][2], ta, tb, out, 1, 0);
                if (s < 3) plain_case("epilogue", sizes[s][0], sizes[s][1], sizes[s][2], ta, tb, out, 0.5f, -1.5f);
            }
}

/* Transposed operands as views (not flags), batches with broadcast, odd offsets. */
static void test_views_and_batches(void) {
    /* QK^T: 3 batches of (160 x 64) x (160 x 64)^T, K passed as a transposed view. */
    View q = V(3, 3, 160, 64);
    View kt = V(3, 3, 160, 64);
    kt.shape[1] = 64, kt.shape[2] = 160, kt.strides[1] = 1, kt.strides[2] = 64;
    printf("case: qk^T view 3 x 160x160x64 -> f32\n");
    gemm_case("qk^T view 3 x 160x160x64", WGC_DTYPE_F16, WGC_DTYPE_F32, q, 0, kt, 0, V(3, 3, 160, 160), 1, 0);
    /* A (2, 1, 130, 40) broadcast against B (3, 40, 136): C (2, 3, 130, 136). */
    printf("case: broadcast batch 2x3 x 130x136x40 -> f16, beta\n");
    gemm_case("broadcast batch 2x3 x 130x136x40", WGC_DTYPE_F16, WGC_DTYPE_F16, V(4, 2, 1, 130, 40), 0,
              V(3, 3, 40, 136), 0, V(4, 2, 3, 130, 136), 1, 0.75f);
    /* Weights (N, K) shared by a batch of transposed activations. */
    printf("case: batched a^T, shared b^T 4 x 136x144x48 -> f32\n");
    gemm_case("batched a^T, shared b^T 4 x 136x144x48", WGC_DTYPE_F16, WGC_DTYPE_F32, V(3, 4, 48, 136), 1,
              V(2, 144, 48), 1, V(3, 4, 136, 144), 1, 0);
    /* Offsets that are not multiples of 8 (A, B and C). */
    View a = V(2, 130, 64);
    a.offset = 3;
    View b = V(2, 64, 136);
    b.offset = 5;
    View c = V(2, 130, 136);
    c.offset = 1;
    printf("case: odd offsets 130x136x64 -> f32\n");
    gemm_case("odd offsets 130x136x64", WGC_DTYPE_F16, WGC_DTYPE_F32, a, 0, b, 0, c, 1, 0);
    /* A with padded rows (stride 72 > K = 64), B with every other column, C column-major. */
    View ap = V(2, 140, 72);
    ap.shape[1] = 64;
    View bs = V(2, 64, 2 * 131);
    bs.shape[1] = 131, bs.strides[1] = 2;
    View cc = V(2, 140, 131);
    cc.strides[0] = 1, cc.strides[1] = 140;
    printf("case: strided views 140x131x64 -> f16\n");
    gemm_case("strided views 140x131x64", WGC_DTYPE_F16, WGC_DTYPE_F16, ap, 0, bs, 0, cc, 2, 0);
    /* f16 C dense along N: written in pairs of halves where the offset and row stride are even
     * (here not multiples of 8, rows padded), one half at a time where they are odd. */
    View ce = V(2, 130, 136);
    ce.offset = 2, ce.strides[0] = 138;
    printf("case: f16 c at even offset and row stride 130x136x64, beta\n");
    gemm_case("f16 c at even offset and row stride 130x136x64", WGC_DTYPE_F16, WGC_DTYPE_F16, V(2, 130, 64), 0,
              V(2, 64, 136), 0, ce, 0.5f, 0.75f);
    View co = V(2, 128, 128);
    co.offset = 1, co.strides[0] = 129;
    printf("case: f16 c at odd offset and row stride 128x128x64, beta\n");
    gemm_case("f16 c at odd offset and row stride 128x128x64", WGC_DTYPE_F16, WGC_DTYPE_F16, V(2, 64, 128), 1,
              V(2, 64, 128), 0, co, 1, -0.5f);
    /* Whole tiles, column-major C: the epilogue at a non-unit column stride. */
    View cm = V(2, 128, 128);
    cm.strides[0] = 1, cm.strides[1] = 128;
    printf("case: column-major c 128x128x64 -> f32\n");
    gemm_case("column-major c 128x128x64", WGC_DTYPE_F16, WGC_DTYPE_F32, V(2, 128, 64), 0, V(2, 64, 128), 0, cm, 1, 0);
}

/* Few rows of A (a decode step): the skinny tensor-core tile where the
 * adapter runs VK_KHR_cooperative_matrix kernels (3-16 rows in one fragment,
 * 17-32 in two; K split into runs; partial column blocks), weights (K, N) or
 * (N, K), own weights per batch matrix; the matrix-vector kernels for one
 * row, for a weight shared by the batch, and on other adapters. */
static void test_skinny(void) {
    static const int64_t sizes[][3] = {
        {1, 136, 72}, {5, 520, 1000}, {16, 256, 4104}, {17, 264, 600}, {32, 1000, 2048}, {8, 2056, 256},
        {3, 264, 20000}, /* K past one workgroup's 16,384 */
        /* N and K whole 16s: whole fragments, but for the last K step */
        {7, 528, 1040}, {20, 512, 2064}, {3, 272, 20016},
    };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int tb = 0; tb < 2; tb++)
            for (int o = 0; o < 2; o++) {
                WgcDtype out = o ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
                plain_case("skinny", sizes[s][0], sizes[s][1], sizes[s][2], 0, tb, out, 1, 0);
                if ((s % 2 == 0 && s < 6) || s == 7) plain_case("skinny epilogue", sizes[s][0], sizes[s][1], sizes[s][2], 0, tb, out, 0.5f, -1.5f);
            }
    /* Each batch matrix its own weight (3 x 8x136x64), and one weight shared by the batch. */
    printf("case: skinny batch, own weights 3 x 8x136x64 -> f16\n");
    gemm_case("skinny batch, own weights", WGC_DTYPE_F16, WGC_DTYPE_F16, V(3, 3, 8, 64), 0, V(3, 3, 64, 136), 0,
              V(3, 3, 8, 136), 1, 0);
    gemm_case("skinny batch, own weights^T", WGC_DTYPE_F16, WGC_DTYPE_F32, V(3, 2, 5, 160), 0, V(3, 2, 96, 160), 1,
              V(3, 2, 5, 96), 1, 0);
    /* Views: A and the (N, K) weight with padded rows at offsets of whole
     * 16-byte words, C column-major with beta. */
    View ap = V(2, 6, 72), wp = V(2, 200, 72), cc = V(2, 6, 200);
    ap.shape[1] = 64, ap.offset = 8;
    wp.shape[1] = 64, wp.offset = 16;
    cc.strides[0] = 1, cc.strides[1] = 6;
    printf("case: skinny strided views 6x200x64 -> f16, beta\n");
    gemm_case("skinny strided views", WGC_DTYPE_F16, WGC_DTYPE_F16, ap, 0, wp, 1, cc, 0.5f, 0.25f);
    printf("case: skinny batch, shared weight^T 3 x 20x136x64 -> f32, beta\n");
    gemm_case("skinny batch, shared weight^T", WGC_DTYPE_F16, WGC_DTYPE_F32, V(3, 3, 20, 64), 0, V(2, 136, 64), 1,
              V(3, 3, 20, 136), 1, 0.5f);
}

/* NaN and inf through a K that is not a multiple of 8 (on tensor cores: the
 * aligned copies' zero padding must add nothing, not NaN from 0 * inf). */
static void plant_nan_inf(float *a, int64_t na, float *b, int64_t nb) {
    (void)na, (void)nb;
    a[5 * 37 + 3] = NAN;      /* row 5 of A (67 x 37): NaN across C's row 5 */
    b[36 * 150 + 9] = INFINITY; /* B's last row of K, column 9: inf or NaN down column 9 */
}

/* K not a multiple of 8 with A stored transposed and B row-major, M and N
 * multiples of 8: aligned copies keep each operand's own layout (no
 * transposing copy), its padding rows zero; with a batch broadcasting A. */
static void test_k_padding_layouts(void) {
    plain_case("K % 8 != 0, a^T and b dense along M and N", 72, 152, 37, 1, 0, WGC_DTYPE_F32, 1, 0);
    plain_case("K % 8 != 0, a^T and b dense along M and N", 72, 152, 37, 1, 0, WGC_DTYPE_F16, 0.5f, -1.5f);
    printf("case: K %% 8 != 0, batch 3, shared a^T -> f16\n");
    gemm_case("K % 8 != 0, batch 3, shared a^T", WGC_DTYPE_F16, WGC_DTYPE_F16, V(2, 45, 80), 1, V(3, 3, 45, 136), 0,
              V(3, 3, 80, 136), 1, 0);
}

static void test_nan_inf(void) {
    printf("case: NaN and inf, K 37 -> f32\n");
    gemm_case_planted("NaN and inf, K 37", WGC_DTYPE_F16, WGC_DTYPE_F32, V(2, 67, 37), 0, V(2, 37, 150), 0,
                      V(2, 67, 150), 1, 0, plant_nan_inf);
    printf("case: NaN and inf, K 37, b^T -> f16\n");
    gemm_case_planted("NaN and inf, K 37, b^T", WGC_DTYPE_F16, WGC_DTYPE_F16, V(2, 67, 37), 0, V(2, 150, 37), 1,
                      V(2, 67, 150), 1, 0, plant_nan_inf);
}

/* K beyond one workgroup's 16,384, or few tiles: splits summed by a second pass. */
static void test_split_k(void) {
    plain_case("split K", 128, 128, 16896, 0, 0, WGC_DTYPE_F32, 1, 0);
    plain_case("split K", 130, 136, 16500, 1, 1, WGC_DTYPE_F16, 0.5f, 0.25f);
    /* Too few tiles for the GPU: K cut into runs of at least 512 (4 and 5 runs here). */
    plain_case("few tiles", 256, 256, 2048, 0, 1, WGC_DTYPE_F16, 0.5f, 0.25f);
    plain_case("few tiles", 200, 100, 3000, 1, 0, WGC_DTYPE_F32, 1, 0);
}

int main(void) {
    env = test_env();
    if (!env.info.has_f16) {
        printf("no f16 on this adapter: nothing to test\n");
        test_env_release(&env);
        return test_finish("test_gemm_f16");
    }
    const char *spirv = getenv("WGC_GEMM_SPIRV");
    int route = env.info.has_cooperative_matrix && spirv ? atoi(spirv) : 0;
    printf("f16 GEMM on %s%s\n", env.info.has_cooperative_matrix ? "tensor cores (cooperative matrices)" : "the tiled kernel",
           route == 1   ? ", the VK_KHR_cooperative_matrix SPIR-V kernel where the adapter can run it"
           : route == 2 ? ", the VK_NV_cooperative_matrix2 SPIR-V kernel where the adapter has the extension"
                        : "");
    test_layouts_and_sizes();
    if (spirv && !env.info.has_cooperative_matrix) {
        /* The route settings choose among tensor-core kernels only: here
         * every case runs the tiled kernel as without them, which the run
         * without the setting covers; the layouts and sizes show that the
         * setting changes nothing. */
        printf("no cooperative matrices: WGC_GEMM_SPIRV=%s changes nothing (layouts and sizes checked)\n", spirv);
        test_env_release(&env);
        return test_finish("test_gemm_f16");
    }
    test_views_and_batches();
    test_split_k();
    test_nan_inf();
    test_k_padding_layouts();
    test_skinny();
    test_env_release(&env);
    return test_finish("test_gemm_f16");
}
