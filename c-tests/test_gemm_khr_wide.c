/* f16 products on the VK_KHR_cooperative_matrix block-tile kernel
 * (src/ops/gemm/khr_wide.rs, selected with WGC_GEMM_KHR_WIDE=<tile>):
 *   test_gemm_khr_wide [TILE]     (default m128n128w8k64s1g8, the proposed tile; WGC_GEMM_KHR_WIDE wins)
 * Each case checks that the tile's kernel ran (its profile record names it)
 * and compares every entry of the rows and columns at and around the block
 * edges, and 512 random entries, with a double-precision reference: odd M,
 * N and K (1000 x 1030 x 1010, through the aligned copies), edge blocks
 * with aligned dims, B as (K, N) and as an (N, K) weight viewed transposed,
 * f16 and f32 C, a batch of 3, alpha and beta into an f32 C, and 4096^3.
 * Adapters without 16x16x16 f16 cooperative matrices (lavapipe) cannot run
 * the kernel: the program says so and passes. */
#include "test_util.h"

static TestEnv env;

typedef struct {
    const char *name;
    int64_t batch, m, n, k;
    int b_nk;          /* B stored (N, K), used as its transposed view */
    WgcDtype out;      /* f16 or f32 */
    float alpha, beta; /* wgc_op_gemm where not 1, 0 */
} Case;

/* 1 if a recorded command ran this tile's entry point; `seen` lists them all. */
static int ran_wide_kernel(const char *tile, char *seen, size_t seen_size) {
    WgcProfileRecord *recs = NULL;
    size_t n = 0;
    CHECK(wgc_stream_profile_records(env.stream, &recs, &n));
    char want[96];
    snprintf(want, sizeof want, "khr_wide_%s", tile);
    /* The gm... tiles take whole blocks with K in steps of 32 only; other
     * products run on this tile instead (khr_wide.rs). */
    const char *fallback = strncmp(tile, "gm", 2) == 0 ? "khr_wide_m128n128w8k64s1" : want;
    int found = 0;
    seen[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (strcmp(recs[i].kernel, want) == 0 || strcmp(recs[i].kernel, fallback) == 0) found = 1;
        size_t used = strlen(seen);
        snprintf(seen + used, seen_size - used, "%s%s", used ? ", " : "", recs[i].kernel);
    }
    wgc_profile_records_free(recs);
    CHECK(wgc_stream_profile_clear(env.stream));
    return found;
}

/* A and B hold the f16 inputs' values. */
static double dot(const float *a, const float *b, const Case *c, int64_t z, int64_t i, int64_t j) {
    const float *ar = a + (z * c->m + i) * c->k;
    double s = 0;
    for (int64_t kk = 0; kk < c->k; kk++) {
        int64_t bi = c->b_nk ? (z * c->n + j) * c->k + kk : (z * c->k + kk) * c->n + j;
        s += (double)ar[kk] * (double)b[bi];
    }
    return s;
}

/* Rows (or columns) worth checking in full: both sides of every 128-wide
 * block edge near the start, and the last 130. */
static int edge_index(int64_t x, int64_t size) {
    int64_t r = x % 128;
    return x < 260 ? (r <= 1 || r >= 126) : (x >= size - 130 && (r <= 1 || r >= 126 || x >= size - 2));
}

static void run_case(const char *tile, const Case *c) {
    int64_t za = c->batch * c->m * c->k, zb = c->batch * c->k * c->n, zc = c->batch * c->m * c->n;
    uint16_t *ha = malloc((size_t)za * 2), *hb = malloc((size_t)zb * 2);
    for (int64_t i = 0; i < za; i++) ha[i] = f32_to_f16((float)rng_uniform(-1, 1));
    for (int64_t i = 0; i < zb; i++) hb[i] = f32_to_f16((float)rng_uniform(-1, 1));
    float *fa = malloc((size_t)za * 4), *fb = malloc((size_t)zb * 4);
    for (int64_t i = 0; i < za; i++) fa[i] = f16_to_f32(ha[i]);
    for (int64_t i = 0; i < zb; i++) fb[i] = f16_to_f32(hb[i]);
    size_t out_size = c->out == WGC_DTYPE_F16 ? 2 : 4;
    float *c0 = malloc((size_t)zc * 4);
    for (int64_t i = 0; i < zc; i++) c0[i] = (float)rng_uniform(-1, 1);
    WgcBuffer *ba = upload(env.device, ha, (size_t)za * 2), *bb = upload(env.device, hb, (size_t)zb * 2);
    WgcBuffer *bc = upload(env.device, c0, (size_t)zc * 4); /* f32 C starts as c0 (beta); f16 C is overwritten */
    int batched = c->batch > 1;
    int64_t sa[3] = {c->batch, c->m, c->k}, sc[3] = {c->batch, c->m, c->n};
    int64_t sb[3] = {c->batch, c->b_nk ? c->n : c->k, c->b_nk ? c->k : c->n};
    uint32_t rank = batched ? 3 : 2;
    WgcTensor ta = tensor_of(ba, WGC_DTYPE_F16, rank, batched ? sa : sa + 1);
    WgcTensor tb = tensor_of(bb, WGC_DTYPE_F16, rank, batched ? sb : sb + 1);
    WgcTensor tc = tensor_of(bc, c->out, rank, batched ? sc : sc + 1);
    CHECK(wgc_stream_set_profiling(env.stream, 1));
    if (c->alpha != 1.0f || c->beta != 0.0f) {
        CHECK(wgc_op_gemm(env.stream, c->alpha, &ta, 0, &tb, (uint32_t)c->b_nk, c->beta, &tc));
    } else {
        if (c->b_nk) { /* the (N, K) weight viewed as (K, N) */
            int64_t s = tb.shape[rank - 1];
            tb.shape[rank - 1] = tb.shape[rank - 2];
            tb.shape[rank - 2] = s;
            s = tb.strides[rank - 1];
            tb.strides[rank - 1] = tb.strides[rank - 2];
            tb.strides[rank - 2] = s;
        }
        CHECK(wgc_op_matmul(env.stream, &ta, &tb, &tc));
    }
    CHECK(wgc_stream_set_profiling(env.stream, 0));
    char seen[1024];
    if (!ran_wide_kernel(tile, seen, sizeof seen)) {
        fprintf(stderr, "%s: the %s kernel did not run (kernels: %s)\n", c->name, tile, seen);
        g_failures++;
    }
    void *got = malloc((size_t)zc * out_size);
    CHECK(wgc_buffer_read(bc, 0, got, (size_t)zc * out_size));
    int64_t checked = 0, bad = 0;
    double worst = 0;
    for (int64_t z = 0; z < c->batch; z++) {
        for (int64_t i = 0; i < c->m; i++) {
            int row = edge_index(i, c->m);
            for (int64_t j = 0; j < c->n; j++) {
                int pick = row || edge_index(j, c->n) || (rng_next() % 4096) < 2;
                if (!pick) continue;
                int64_t at = (z * c->m + i) * c->n + j;
                double ref = c->alpha * dot(fa, fb, c, z, i, j) + c->beta * (double)c0[at];
                double g = c->out == WGC_DTYPE_F16 ? f16_to_f32(((uint16_t *)got)[at]) : ((float *)got)[at];
                double tol = 1e-4 + 1e-6 * (double)c->k + (c->out == WGC_DTYPE_F16 ? fabs(ref) / 1024.0 : 0.0);
                double err = fabs(g - ref);
                if (!(err <= tol)) {
                    if (bad < 5) fprintf(stderr, "%s: [%lld,%lld,%lld] got %g want %g\n", c->name, (long long)z,
                                         (long long)i, (long long)j, g, ref);
                    bad++;
                }
                if (err > worst) worst = err;
                checked++;
            }
        }
    }
    printf("%s %s: %lld entries, %lld wrong, largest error %.3g (ran %s)\n", tile, c->name, (long long)checked,
           (long long)bad, worst, seen);
    g_failures += bad > 0;
    free(ha); free(hb); free(fa); free(fb); free(c0); free(got);
    wgc_buffer_release(ba); wgc_buffer_release(bb); wgc_buffer_release(bc);
}

int main(int argc, char **argv) {
    const char *tile = getenv("WGC_GEMM_KHR_WIDE");
    if (!tile || !*tile) {
        tile = argc > 1 ? argv[1] : "m128n128w8k64s1g8";
        setenv("WGC_GEMM_KHR_WIDE", tile, 1); /* read at the first product */
    }
    env = test_env();
    if (!env.info.has_cooperative_matrix) {
        printf("test_gemm_khr_wide: skipped: %s has no 16x16x16 f16 cooperative matrices, so the "
               "VK_KHR_cooperative_matrix kernels cannot exist there\n", env.info.name);
        test_env_release(&env);
        return 0;
    }
    const Case cases[] = {
        {"odd 1000x1030x1010 B(K,N) f16", 1, 1000, 1030, 1010, 0, WGC_DTYPE_F16, 1, 0},
        {"odd 1000x1030x1010 B(N,K) f32", 1, 1000, 1030, 1010, 1, WGC_DTYPE_F32, 1, 0},
        {"edges 1000x1032x1016 B(N,K) f16", 1, 1000, 1032, 1016, 1, WGC_DTYPE_F16, 1, 0},
        {"edges 1000x1032x1016 B(K,N) f32", 1, 1000, 1032, 1016, 0, WGC_DTYPE_F32, 1, 0},
        {"batch 3x300x520x1016 B(N,K) f16", 3, 300, 520, 1016, 1, WGC_DTYPE_F16, 1, 0},
        {"alpha 0.5 beta 2 1000x1032x1016 B(N,K) f32", 1, 1000, 1032, 1016, 1, WGC_DTYPE_F32, 0.5f, 2.0f},
        {"whole 4096^3 B(N,K) f16", 1, 4096, 4096, 4096, 1, WGC_DTYPE_F16, 1, 0},
        {"whole 4096^3 B(K,N) f32", 1, 4096, 4096, 4096, 0, WGC_DTYPE_F32, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(tile, &cases[i]);
    test_env_release(&env);
    return test_finish("test_gemm_khr_wide");
}
