/* f16 products on the wide-block VK_KHR_cooperative_matrix kernel
 * (src/ops/gemm/wide.rs, shaders/spirv/gemm_khr_wide.comp), through the
 * public API. Most cases run on a device created with WGC_GEMM_WIDE=1
 * (the kernel wherever it can run, so that small products reach it);
 * the last ones on a default device check the planner's rule: A read
 * along K with K >= 512 and enough blocks takes it, with B either way.
 *
 * Every case compares every entry of the rows and columns at and around
 * the 128-wide block edges, and about 1 in 2000 of the others, with a
 * double-precision reference of the same f16 inputs: odd M, N and K
 * (through the aligned copies), partial blocks with aligned dims, whole
 * blocks and K runs of whole steps (loaded without bounds checks) beside
 * partial ones in the same product, B as
 * (K, N) and as an (N, K) weight, f16 and f32 C, a batch, alpha and beta,
 * bf16 operands (into f32, or bf16 through f32 scratch; the wide block
 * where the device was opened with bf16 cooperative matrices),
 * views of A and C inside wider rows at offsets, and a per-row bias (a
 * 1x1 convolution, whose output channels are the rows).
 *
 * Where wgc_op_gemm_explain names the route `khr_wide`, the profile must
 * show the kernel `gemm_khr_wide` ran. On adapters with cooperative
 * matrices on Vulkan, the forced device must route every case there.
 * Adapters without them (lavapipe) have no such kernel: the program says
 * so, checks the same products on the route they take, and skips the
 * large cases. */
#include "test_util.h"

static TestEnv forced, plain;
static int wide_expected; /* the adapter runs the VK_KHR_cooperative_matrix kernels */

typedef struct {
    const char *name;
    int64_t batch, m, n, k;
    int b_nk;                /* B stored (N, K) and transposed by the call */
    WgcDtype in;             /* A's and B's dtype: f16 or bf16 */
    WgcDtype out;            /* f16, bf16 or f32 */
    float alpha, beta;
    int64_t a_pad, c_pad;    /* extra elements per row of A's and C's buffers */
    int64_t a_off, c_off;    /* element offsets of the A and C views */
    int big;                 /* only where the kernel runs (slow on a CPU driver) */
    int expect;              /* 1: the route must be khr_wide there; 0: it must not; -1: either */
} Case;

/* 1 if the profile shows gemm_khr_wide ran; `seen` lists every kernel. */
static int ran_wide(TestEnv *env, char *seen, size_t size) {
    WgcProfileRecord *recs = NULL;
    size_t n = 0;
    CHECK(wgc_stream_profile_records(env->stream, &recs, &n));
    int found = 0;
    seen[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (strcmp(recs[i].kernel, "gemm_khr_wide") == 0) found = 1;
        size_t used = strlen(seen);
        snprintf(seen + used, size - used, "%s%s", used ? ", " : "", recs[i].kernel);
    }
    wgc_profile_records_free(recs);
    CHECK(wgc_stream_profile_clear(env->stream));
    return found;
}

/* Rows (or columns) worth checking in full: both sides of every 128-wide
 * block edge near the start, and near the end. */
static int edge_index(int64_t x, int64_t size) {
    int64_t r = x % 128;
    return x < 260 ? (r <= 1 || r >= 126) : (x >= size - 130 && (r <= 1 || r >= 126 || x >= size - 2));
}

/* bf16 <-> float (round to nearest even; the values here are finite). */
static uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
static float bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t to_16(WgcDtype dt, float v) { return dt == WGC_DTYPE_BF16 ? f32_to_bf16(v) : f32_to_f16(v); }
static float from_16(WgcDtype dt, uint16_t h) { return dt == WGC_DTYPE_BF16 ? bf16_to_f32(h) : f16_to_f32(h); }

/* `count` values uniform in [-1, 1) stored as `dt`, and their exact values. */
static uint16_t *random_16(WgcDtype dt, int64_t count, float **values) {
    uint16_t *h = malloc((size_t)count * 2);
    *values = malloc((size_t)count * 4);
    for (int64_t i = 0; i < count; i++) {
        h[i] = to_16(dt, (float)rng_uniform(-1, 1));
        (*values)[i] = from_16(dt, h[i]);
    }
    return h;
}

static uint16_t *random_halves(int64_t count, float **values) { return random_16(WGC_DTYPE_F16, count, values); }

/* Checks the route (explain and profile) against the case's expectation. */
static void check_route(TestEnv *env, const char *name, const char *line, int expect) {
    char seen[1024];
    int said = strstr(line, "route coop khr_wide") != NULL;
    int ran = ran_wide(env, seen, sizeof seen);
    if (said != ran) {
        fprintf(stderr, "%s: explain says \"%s\" but the kernels were: %s\n", name, line, seen);
        g_failures++;
    }
    if (wide_expected && expect >= 0 && said != expect) {
        fprintf(stderr, "%s: expected %s the wide block, planned: %s\n", name, expect ? "on" : "off", line);
        g_failures++;
    }
    printf("  %s: %s (ran %s)\n", name, said ? "khr_wide" : "another route", seen);
}

static void run_gemm(TestEnv *env, const Case *c) {
    int64_t lda = c->k + c->a_pad, ldc = c->n + c->c_pad;
    int64_t za = c->a_off + c->batch * c->m * lda, zb = c->batch * c->n * c->k, zc = c->c_off + c->batch * c->m * ldc;
    float *fa, *fb;
    uint16_t *ha = random_16(c->in, za, &fa), *hb = random_16(c->in, zb, &fb);
    int f16_out = c->out != WGC_DTYPE_F32; /* a 16-bit C: f16 or bf16 */
    size_t es = f16_out ? 2 : 4;
    /* C's initial values (beta reads them), as the dtype stores them. */
    float *c0 = malloc((size_t)zc * 4);
    void *c0_raw = malloc((size_t)zc * es);
    for (int64_t i = 0; i < zc; i++) {
        float v = (float)rng_uniform(-1, 1);
        if (f16_out) {
            ((uint16_t *)c0_raw)[i] = to_16(c->out, v);
            c0[i] = from_16(c->out, ((uint16_t *)c0_raw)[i]);
        } else {
            ((float *)c0_raw)[i] = c0[i] = v;
        }
    }
    WgcBuffer *ba = upload(env->device, ha, (size_t)za * 2), *bb = upload(env->device, hb, (size_t)zb * 2);
    WgcBuffer *bc = upload(env->device, c0_raw, (size_t)zc * es);
    int batched = c->batch > 1;
    uint32_t rank = batched ? 3 : 2, r = rank - 2;
    WgcTensor ta, tb, tc;
    memset(&ta, 0, sizeof ta);
    ta.buffer = ba, ta.dtype = c->in, ta.rank = rank, ta.offset = c->a_off;
    ta.shape[0] = c->batch, ta.strides[0] = c->m * lda;
    ta.shape[r] = c->m, ta.shape[r + 1] = c->k, ta.strides[r] = lda, ta.strides[r + 1] = 1;
    int64_t sb[3] = {c->batch, c->b_nk ? c->n : c->k, c->b_nk ? c->k : c->n};
    tb = tensor_of(bb, c->in, rank, batched ? sb : sb + 1);
    tc = ta;
    tc.buffer = bc, tc.dtype = c->out, tc.offset = c->c_off;
    tc.strides[0] = c->m * ldc;
    tc.shape[r + 1] = c->n, tc.strides[r] = ldc;
    char line[1024];
    size_t len = 0;
    CHECK(wgc_op_gemm_explain(env->stream, c->alpha, &ta, 0, &tb, (uint32_t)c->b_nk, c->beta, &tc, line, sizeof line,
                              &len));
    CHECK(wgc_stream_set_profiling(env->stream, 1));
    CHECK(wgc_op_gemm(env->stream, c->alpha, &ta, 0, &tb, (uint32_t)c->b_nk, c->beta, &tc));
    CHECK(wgc_stream_set_profiling(env->stream, 0));
    check_route(env, c->name, line, c->expect);
    void *got = malloc((size_t)zc * es);
    CHECK(wgc_buffer_read(bc, 0, got, (size_t)zc * es));
    int64_t checked = 0, bad = 0;
    double worst = 0;
    for (int64_t z = 0; z < c->batch; z++) {
        for (int64_t i = 0; i < c->m; i++) {
            int row = edge_index(i, c->m);
            for (int64_t j = 0; j < c->n; j++) {
                if (!(row || edge_index(j, c->n) || (rng_next() % 2048) == 0)) continue;
                const float *ar = fa + c->a_off + (z * c->m + i) * lda;
                double s = 0;
                for (int64_t kk = 0; kk < c->k; kk++) {
                    int64_t bi = c->b_nk ? (z * c->n + j) * c->k + kk : (z * c->k + kk) * c->n + j;
                    s += (double)ar[kk] * (double)fb[bi];
                }
                int64_t at = c->c_off + (z * c->m + i) * ldc + j;
                double ref = c->alpha * s + c->beta * (double)c0[at];
                double g = f16_out ? from_16(c->out, ((uint16_t *)got)[at]) : ((float *)got)[at];
                /* A 16-bit C is rounded once: half an ulp of f16 (2^-11) or bf16 (2^-8). */
                double ulp = c->out == WGC_DTYPE_BF16 ? 1.0 / 128.0 : c->out == WGC_DTYPE_F16 ? 1.0 / 1024.0 : 0.0;
                double tol = 1e-4 + 1e-6 * (double)c->k + fabs(ref) * ulp;
                double err = fabs(g - ref);
                if (!(err <= tol)) {
                    if (bad < 5)
                        fprintf(stderr, "%s: [%lld,%lld,%lld] got %g want %g\n", c->name, (long long)z, (long long)i,
                                (long long)j, g, ref);
                    bad++;
                }
                if (err > worst) worst = err;
                checked++;
            }
        }
    }
    /* The padding around the views is untouched. */
    for (int64_t z = 0; z < c->batch && c->c_pad; z++) {
        for (int64_t i = 0; i < c->m; i++) {
            for (int64_t j = c->n; j < ldc; j++) {
                int64_t at = c->c_off + (z * c->m + i) * ldc + j;
                if (memcmp((char *)got + at * (int64_t)es, (char *)c0_raw + at * (int64_t)es, es) != 0) bad++;
            }
        }
    }
    printf("%s: %lld entries, %lld wrong, largest error %.3g\n", c->name, (long long)checked, (long long)bad, worst);
    g_failures += bad > 0;
    free(ha), free(hb), free(fa), free(fb), free(c0), free(c0_raw), free(got);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
}

/* A 1x1 convolution with a bias: the GEMM weight (O, C) x image (C, H*W)
 * per image, the bias added per row (output channel). */
static void run_conv_bias(TestEnv *env) {
    const int64_t nb = 2, ci = 64, co = 136, h = 10, w = 52, hw = h * w;
    float *fx, *fw, *fbias;
    uint16_t *hx = random_halves(nb * ci * hw, &fx), *hwt = random_halves(co * ci, &fw);
    uint16_t *hbias = random_halves(co, &fbias);
    WgcBuffer *bx = upload(env->device, hx, (size_t)(nb * ci * hw) * 2);
    WgcBuffer *bw = upload(env->device, hwt, (size_t)(co * ci) * 2);
    WgcBuffer *bbias = upload(env->device, hbias, (size_t)co * 2);
    WgcBuffer *bo;
    CHECK(wgc_buffer_create(env->device, (size_t)(nb * co * hw) * 2, WGC_BUFFER_USAGE_STORAGE, &bo));
    int64_t sx[4] = {nb, ci, h, w}, sw[4] = {co, ci, 1, 1}, so[4] = {nb, co, h, w};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F16, 4, sx), tw = tensor_of(bw, WGC_DTYPE_F16, 4, sw);
    WgcTensor tbias = tensor_of(bbias, WGC_DTYPE_F16, 1, &co), to = tensor_of(bo, WGC_DTYPE_F16, 4, so);
    WgcConv2dParams p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p, p.stride_h = p.stride_w = 1, p.dilation_h = p.dilation_w = 1, p.groups = 1;
    CHECK(wgc_stream_set_profiling(env->stream, 1));
    CHECK(wgc_op_conv2d(env->stream, &p, &tx, &tw, &tbias, &to));
    CHECK(wgc_stream_set_profiling(env->stream, 0));
    char seen[1024];
    int ran = ran_wide(env, seen, sizeof seen);
    if (wide_expected && !ran) {
        fprintf(stderr, "conv 1x1 bias: the wide block did not run (kernels: %s)\n", seen);
        g_failures++;
    }
    uint16_t *got = malloc((size_t)(nb * co * hw) * 2);
    CHECK(wgc_buffer_read(bo, 0, got, (size_t)(nb * co * hw) * 2));
    int64_t bad = 0, checked = 0;
    double worst = 0;
    for (int64_t n = 0; n < nb; n++) {
        for (int64_t o = 0; o < co; o++) {
            for (int64_t q = 0; q < hw; q++) {
                if (!(edge_index(o, co) || edge_index(q, hw) || (rng_next() % 64) == 0)) continue;
                double s = fbias[o];
                for (int64_t c = 0; c < ci; c++) s += (double)fw[o * ci + c] * (double)fx[(n * ci + c) * hw + q];
                double g = f16_to_f32(got[(n * co + o) * hw + q]);
                double err = fabs(g - s), tol = 1e-4 + 1e-6 * (double)ci + fabs(s) / 1024.0;
                if (!(err <= tol)) {
                    if (bad < 5) fprintf(stderr, "conv 1x1 bias: [%lld,%lld,%lld] got %g want %g\n", (long long)n,
                                         (long long)o, (long long)q, g, s);
                    bad++;
                }
                if (err > worst) worst = err;
                checked++;
            }
        }
    }
    printf("conv 1x1 bias 2x64x10x52 -> 136 f16: %lld entries, %lld wrong, largest error %.3g (ran %s)\n",
           (long long)checked, (long long)bad, worst, seen);
    g_failures += bad > 0;
    free(hx), free(hwt), free(hbias), free(fx), free(fw), free(fbias), free(got);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bbias), wgc_buffer_release(bo);
}

int main(void) {
    /* The forced device also copies every misaligned f16 product into
     * aligned scratch (however small), so the odd shapes reach the kernel. */
    const char *stage = getenv("WGC_GEMM_STAGE");
    char *stage_was = stage ? strdup(stage) : NULL;
    setenv("WGC_GEMM_STAGE", "always", 1);
    forced = test_env_setting("WGC_GEMM_WIDE", "1");
    if (stage_was) setenv("WGC_GEMM_STAGE", stage_was, 1);
    else unsetenv("WGC_GEMM_STAGE");
    free(stage_was);
    plain = test_env_setting("WGC_GEMM_WIDE", "");
    wide_expected = forced.info.has_cooperative_matrix && forced.info.backend == WGC_BACKEND_VULKAN;
    if (!wide_expected) {
        printf("test_gemm_khr_wide: %s has no 16x16x16 f16 cooperative matrices on Vulkan, so the wide-block "
               "VK_KHR_cooperative_matrix kernel cannot run there: its route is skipped; the products are "
               "checked on the route they take, the large ones skipped\n", forced.info.name);
    }
    const WgcDtype H = WGC_DTYPE_F16, F = WGC_DTYPE_F32, B = WGC_DTYPE_BF16;
    const Case cases[] = {
        {"odd 300x263x521 B(K,N) f16 (aligned copies)", 1, 300, 263, 521, 0, H, H, 1, 0, 0, 0, 0, 0, 0, 1},
        {"odd 300x263x521 B(N,K) f32 (aligned copies)", 1, 300, 263, 521, 1, H, F, 1, 0, 0, 0, 0, 0, 0, 1},
        {"edges 300x264x520 B(N,K) f16", 1, 300, 264, 520, 1, H, H, 1, 0, 0, 0, 0, 0, 0, 1},
        {"edges 300x264x520 B(K,N) f32", 1, 300, 264, 520, 0, H, F, 1, 0, 0, 0, 0, 0, 0, 1},
        {"whole 256x256x136 B(N,K) f16 (direct)", 1, 256, 256, 136, 1, H, H, 1, 0, 0, 0, 0, 0, 0, 1},
        {"whole 256x384x192 B(N,K) f16 (unchecked loads)", 1, 256, 384, 192, 1, H, H, 1, 0, 0, 0, 0, 0, 0, 1},
        {"whole 384x256x128 B(K,N) f32 (unchecked loads)", 1, 384, 256, 128, 0, H, F, 1, 0, 0, 0, 0, 0, 0, 1},
        {"edges 300x264x512 B(N,K) f16 (inner blocks unchecked)", 1, 300, 264, 512, 1, H, H, 1, 0, 0, 0, 0, 0, 0, 1},
        {"edges 300x264x512 B(K,N) f32 beta 1 (inner blocks unchecked)", 1, 300, 264, 512, 0, H, F, 1, 1.0f, 0, 0, 0, 0, 0, 1},
        {"batch 3x136x264x200 B(N,K) f16", 3, 136, 264, 200, 1, H, H, 1, 0, 0, 0, 0, 0, 0, 1},
        {"alpha 0.5 beta 2 300x264x520 B(N,K) f32", 1, 300, 264, 520, 1, H, F, 0.5f, 2.0f, 0, 0, 0, 0, 0, 1},
        {"beta 1 300x264x520 B(K,N) f16", 1, 300, 264, 520, 0, H, H, 1, 1.0f, 0, 0, 0, 0, 0, 1},
        {"views: A rows of 528 at 8, C rows of 280 at 16, f16", 1, 260, 264, 520, 1, H, H, 1, 0, 8, 16, 8, 16, 0, 1},
        {"views: C rows of 269 at 3 (odd), f32, beta 0.5", 2, 130, 264, 136, 1, H, F, 1, 0.5f, 0, 5, 0, 3, 0, 1},
        {"bf16 edges 300x264x520 B(N,K) f32", 1, 300, 264, 520, 1, B, F, 1, 0, 0, 0, 0, 0, 0, -1},
        {"bf16 alpha 2 beta 1 300x264x520 B(K,N) bf16 C", 1, 300, 264, 520, 0, B, B, 2.0f, 1.0f, 0, 0, 0, 0, 0, -1},
        {"odd 1000x1030x1010 B(N,K) f16", 1, 1000, 1030, 1010, 1, H, H, 1, 0, 0, 0, 0, 0, 1, 1},
        {"whole 2048x1024x1024 B(K,N) f32", 1, 2048, 1024, 1024, 0, H, F, 1, 0, 0, 0, 0, 0, 1, 1},
    };
    const Case rule[] = {
        {"rule: 2048x4096x1024 B(N,K) f16 takes it", 1, 2048, 4096, 1024, 1, H, H, 1, 0, 0, 0, 0, 0, 1, 1},
        {"rule: 2048x4096x1024 B(K,N) f16 takes it", 1, 2048, 4096, 1024, 0, H, H, 1, 0, 0, 0, 0, 0, 1, 1},
        {"rule: 2048x4096x11008 B(N,K) f32 (long K) takes it", 1, 2048, 4096, 11008, 1, H, F, 1, 0, 0, 0, 0, 0, 1, 1},
        {"rule: 2048x4096x256 B(N,K) f16 (short K) does not", 1, 2048, 4096, 256, 1, H, H, 1, 0, 0, 0, 0, 0, 1, 0},
        {"rule: 2048x4096x1024 B(N,K) bf16 into f32", 1, 2048, 4096, 1024, 1, B, F, 1, 0, 0, 0, 0, 0, 1, -1},
        {"rule: 256x4096x1024 B(N,K) f32 (few blocks) does not", 1, 256, 4096, 1024, 1, H, F, 1, 0, 0, 0, 0, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!cases[i].big || wide_expected) run_gemm(&forced, &cases[i]);
    }
    run_conv_bias(&forced);
    for (size_t i = 0; i < sizeof rule / sizeof rule[0] && wide_expected; i++) run_gemm(&plain, &rule[i]);
    test_env_release(&forced);
    test_env_release(&plain);
    return test_finish("test_gemm_khr_wide");
}
