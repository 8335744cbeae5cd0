/* Two ceilings of the GPU kernels, measured with user kernels:
 *   stream_probe [--small] [--only stream|vocab|axpy|micro]
 *
 * 1. Bandwidth of the f16 decode GEMM's load structure. A workgroup of 128
 *    threads takes 64 rows of an (N, K) f16 weight and one of SPLITS runs of
 *    K, walking it 64 halves (8 vec4 per row) at a time, with PREFETCH steps
 *    of loads in flight in registers, as the skinny tensor-core GEMM does.
 *    STAGE 0 only xors the loads together; STAGE 1 also passes them through
 *    workgroup memory between two barriers, as the real kernel stages its
 *    tiles (minus the tensor-core math). A grid-stride "roofline" kernel
 *    gives the plain streaming rate to compare with. Rate: GB/s of weight.
 *    1b ("vocab"): the same over the vocabulary projection's 1.05 GB weight.
 * 3. ("axpy") The load structure of the matrix-vector axpy kernel (one or
 *    two rows against an f16 weight stored (K, N)), loads only.
 * 2. FLOP rate of the f32 SGEMM micro-kernel (multiply_staged of
 *    shaders/gemm_tile.wgsl, 128x128 tile, 8x8 results a thread, BK = 8)
 *    with no global memory: the tiles are loaded once and multiplied STEPS
 *    times, alone ("inner"), with the real kernel's two barriers and stores
 *    a step ("barriers"), and both with a 16x8 register tile (BM = 256).
 *    Without a barrier in the loop a compiler may keep the tiles' values in
 *    registers across steps, so "inner" is an upper bound; "barriers" not.
 *
 * Every variant is checked against a CPU reference, then timed: median of
 * 20 GPU-timestamped launches after at least 0.5 s of warm-up launches, so
 * that the GPU's clocks rise. --small: sizes for lavapipe (correctness
 * only). Exits 1 if any check is wrong. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define TIMED_RUNS 20
#define SRC_MAX 8192

static WgcDevice *g_dev;
static WgcStream *g_st;
static int g_small;
static int g_failures;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* NULL (and the reason printed) if the source does not compile. */
static WgcKernel *compile(const char *src, const char *name) {
    WgcKernelDesc d = {0};
    d.struct_size = sizeof d;
    d.source = src;
    d.entry_point = "main";
    d.skip_bounds_checks = 1; /* every kernel here indexes in bounds, see each body */
    WgcKernel *k;
    WgcStatus s = wgc_kernel_create(g_dev, &d, &k);
    if (s == WGC_OK) return k;
    printf("%s: %s: %.300s, check WRONG\n", name, wgc_status_string(s), wgc_last_error_message());
    g_failures++;
    return NULL;
}

static WgcLaunch launch_of(const WgcBinding *bind, uint32_t count, uint32_t gx, uint32_t gy) {
    WgcLaunch l = {0};
    l.struct_size = sizeof l;
    l.bindings = bind;
    l.binding_count = count;
    l.workgroups[0] = gx;
    l.workgroups[1] = gy;
    l.workgroups[2] = 1;
    return l;
}

/* Median GPU ms of TIMED_RUNS launches. The warm-up keeps work queued
 * (a flush every 4 launches) and waits only every 32, since a GPU that
 * idles between short launches keeps its clocks low. */
static double time_launch(const WgcKernel *k, const WgcLaunch *l) {
    double t0 = now_ms(), limit = g_small ? 0 : 500;
    for (int runs = 1; runs <= 2 || now_ms() - t0 < limit; runs++) {
        CHECK(wgc_stream_launch(g_st, k, l));
        if (runs % 32 == 0) CHECK(wgc_stream_synchronize(g_st));
        else if (runs % 4 == 0) CHECK(wgc_stream_flush(g_st));
    }
    CHECK(wgc_stream_synchronize(g_st));
    WgcEvent *ev[2 * TIMED_RUNS];
    for (int i = 0; i < TIMED_RUNS; i++) {
        CHECK(wgc_stream_record_event(g_st, &ev[2 * i]));
        CHECK(wgc_stream_launch(g_st, k, l));
        CHECK(wgc_stream_record_event(g_st, &ev[2 * i + 1]));
        CHECK(wgc_stream_flush(g_st));
    }
    double ms[TIMED_RUNS];
    for (int i = 0; i < TIMED_RUNS; i++) {
        CHECK(wgc_event_elapsed_ms(ev[2 * i], ev[2 * i + 1], &ms[i]));
        wgc_event_release(ev[2 * i]);
        wgc_event_release(ev[2 * i + 1]);
    }
    qsort(ms, TIMED_RUNS, sizeof ms[0], cmp_double);
    return (ms[TIMED_RUNS / 2 - 1] + ms[TIMED_RUNS / 2]) / 2;
}

static const char *verdict(int ok) {
    if (!ok) g_failures++;
    return ok ? "ok" : "WRONG";
}

/* ================= experiment 1: streaming the f16 weight ================= */

/* Prepended: N, KV (vec4 per row), GRID_X (= N / BN), SPLITS, STEPS (per
 * split), PREFETCH, REGS (= PREFETCH * LOADS), STAGE. In bounds: rows
 * wg.x * BN + s / BKV < GRID_X * BN = N; columns wg.y * STEPS * BKV +
 * t * BKV + s % BKV < SPLITS * STEPS * BKV = KV (t < STEPS); regs index
 * h * LOADS + l < REGS; out index < GRID_X * SPLITS * THREADS, its size. */
static const char BLOCK_BODY[] =
    "const BN: u32 = 64u;     // rows a workgroup\n"
    "const BKV: u32 = 8u;     // vec4 a row a step (BK = 64 halves)\n"
    "const THREADS: u32 = 128u;\n"
    "const LOADS: u32 = 4u;   // BN * BKV / THREADS\n"
    "const TILE: u32 = 512u;  // BN * BKV\n"
    "@group(0) @binding(0) var<storage, read> w: array<vec4<u32>>;\n"
    "@group(0) @binding(1) var<storage, read_write> out: array<u32>;\n"
    "var<workgroup> tile: array<vec4<u32>, TILE>;\n"
    "alias Regs = array<vec4<u32>, REGS>;\n"
    "\n"
    "// Step t's tile into regs[h]: slot s = l * THREADS + tid is row s / BKV,\n"
    "// vec4 column s % BKV (consecutive threads read consecutive 16 bytes).\n"
    "fn load_step(base: u32, t: u32, tid: u32, h: u32, regs: ptr<function, Regs>) {\n"
    "    for (var l = 0u; l < LOADS; l++) {\n"
    "        let s = l * THREADS + tid;\n"
    "        (*regs)[h * LOADS + l] = w[base + (s / BKV) * KV + t * BKV + s % BKV];\n"
    "    }\n"
    "}\n"
    "\n"
    "fn consume(h: u32, tid: u32, regs: ptr<function, Regs>, acc: ptr<function, vec4<u32>>) {\n"
    "    if (STAGE) {\n"
    "        workgroupBarrier();\n"
    "        for (var l = 0u; l < LOADS; l++) {\n"
    "            tile[l * THREADS + tid] = (*regs)[h * LOADS + l];\n"
    "        }\n"
    "        workgroupBarrier();\n"
    "        // Another warp's slots (a permutation: each read once a step).\n"
    "        for (var l = 0u; l < LOADS; l++) {\n"
    "            *acc ^= tile[((l + 1u) % LOADS) * THREADS + (tid ^ 64u)];\n"
    "        }\n"
    "    } else {\n"
    "        for (var l = 0u; l < LOADS; l++) {\n"
    "            *acc ^= (*regs)[h * LOADS + l];\n"
    "        }\n"
    "    }\n"
    "}\n"
    "\n"
    "@compute @workgroup_size(128)\n"
    "fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {\n"
    "    let base = wg.x * BN * KV + wg.y * STEPS * BKV;\n"
    "    var regs: Regs;\n"
    "    var acc = vec4<u32>(0u);\n"
    "    for (var h = 0u; h < PREFETCH; h++) {\n"
    "        if (h < STEPS) {\n"
    "            load_step(base, h, tid, h, &regs);\n"
    "        }\n"
    "    }\n"
    "    for (var t0 = 0u; t0 < STEPS; t0 += PREFETCH) {\n"
    "        for (var h = 0u; h < PREFETCH; h++) {\n"
    "            let t = t0 + h;\n"
    "            if (t < STEPS) {\n"
    "                consume(h, tid, &regs, &acc);\n"
    "                if (t + PREFETCH < STEPS) {\n"
    "                    load_step(base, t + PREFETCH, tid, h, &regs);\n"
    "                }\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    out[(wg.y * GRID_X + wg.x) * THREADS + tid] = acc.x ^ acc.y ^ acc.z ^ acc.w;\n"
    "}\n";

/* Prepended: NV (vec4 in the weight), STRIDE (threads in the grid). In
 * bounds: i + 3 * STRIDE < NV in the unrolled loop, i < NV in the tail; out
 * has one word a thread. */
static const char ROOFLINE_BODY[] =
    "@group(0) @binding(0) var<storage, read> w: array<vec4<u32>>;\n"
    "@group(0) @binding(1) var<storage, read_write> out: array<u32>;\n"
    "\n"
    "@compute @workgroup_size(256)\n"
    "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
    "    var acc = vec4<u32>(0u);\n"
    "    var i = gid.x;\n"
    "    for (; i + 3u * STRIDE < NV; i += 4u * STRIDE) {\n"
    "        let v0 = w[i];\n"
    "        let v1 = w[i + STRIDE];\n"
    "        let v2 = w[i + 2u * STRIDE];\n"
    "        let v3 = w[i + 3u * STRIDE];\n"
    "        acc ^= (v0 ^ v1) ^ (v2 ^ v3);\n"
    "    }\n"
    "    for (; i < NV; i += STRIDE) {\n"
    "        acc ^= w[i];\n"
    "    }\n"
    "    out[gid.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;\n"
    "}\n";

/* 16 a streaming multiprocessor of an H100 (132 of them); --small: few
 * enough that lavapipe's weight takes both loops, as on the GPU. */
#define ROOFLINE_GROUPS (132u * 16u)
#define ROOFLINE_GROUPS_SMALL 12u

typedef struct {
    WgcBuffer *w;    /* the weight */
    WgcBuffer *out;  /* one u32 a thread, sized for the largest grid */
    uint64_t words;  /* u32 words in the weight */
    uint32_t expect; /* xor of all words */
} Stream;

/* Launch once over poisoned output and compare the xor of `threads` output
 * words with the xor of the weight (each word is read exactly once). */
static int check_xor(const Stream *s, const WgcKernel *k, const WgcLaunch *l, uint64_t threads) {
    CHECK(wgc_stream_fill_buffer(g_st, s->out, 0, threads * 4, 0x9e3779b9u));
    CHECK(wgc_stream_launch(g_st, k, l));
    uint32_t *got = malloc(threads * 4);
    CHECK(wgc_buffer_read(s->out, 0, got, threads * 4));
    uint32_t x = 0;
    for (uint64_t i = 0; i < threads; i++) x ^= got[i];
    free(got);
    return x == s->expect;
}

static void run_block(const Stream *s, uint32_t n, uint32_t k, int stage, uint32_t prefetch, uint32_t splits) {
    if (n % 64 || k % (64 * splits)) { fprintf(stderr, "N %u, K %u: not whole tiles\n", n, k); exit(1); }
    uint32_t kv = k / 8, grid_x = n / 64, steps = k / 64 / splits;
    char name[128], src[SRC_MAX];
    snprintf(name, sizeof name, "block N=%u K=%u stage=%d prefetch=%u splits=%u (grid %ux%u, steps %u)", n, k, stage,
             prefetch, splits, grid_x, splits, steps);
    int len = snprintf(src, sizeof src,
                       "const N: u32 = %uu;\nconst KV: u32 = %uu;\nconst GRID_X: u32 = %uu;\n"
                       "const SPLITS: u32 = %uu;\nconst STEPS: u32 = %uu;\nconst PREFETCH: u32 = %uu;\n"
                       "const REGS: u32 = %uu;\nconst STAGE: bool = %s;\n%s",
                       n, kv, grid_x, splits, steps, prefetch, prefetch * 4, stage ? "true" : "false", BLOCK_BODY);
    if (len >= (int)sizeof src) { fprintf(stderr, "source too long\n"); exit(1); }
    WgcKernel *kern = compile(src, name);
    if (!kern) return;
    WgcBinding bind[2] = {{0, s->w, 0, 0}, {1, s->out, 0, (uint64_t)grid_x * splits * 128 * 4}};
    WgcLaunch l = launch_of(bind, 2, grid_x, splits);
    int ok = check_xor(s, kern, &l, (uint64_t)grid_x * splits * 128);
    double ms = time_launch(kern, &l);
    printf("%s: %.4f ms, %.1f GB/s, check %s\n", name, ms, s->words * 4 / (ms * 1e6), verdict(ok));
    fflush(stdout);
    wgc_kernel_release(kern);
}

static void run_roofline(const Stream *s) {
    uint32_t groups = g_small ? ROOFLINE_GROUPS_SMALL : ROOFLINE_GROUPS;
    char name[128], src[SRC_MAX];
    snprintf(name, sizeof name, "roofline %u x 256 threads, grid-stride, 4 vec4 loads an iteration", groups);
    snprintf(src, sizeof src, "const NV: u32 = %uu;\nconst STRIDE: u32 = %uu;\n%s", (uint32_t)(s->words / 4),
             groups * 256, ROOFLINE_BODY);
    WgcKernel *kern = compile(src, name);
    if (!kern) return;
    WgcBinding bind[2] = {{0, s->w, 0, 0}, {1, s->out, 0, (uint64_t)groups * 256 * 4}};
    WgcLaunch l = launch_of(bind, 2, groups, 1);
    int ok = check_xor(s, kern, &l, (uint64_t)groups * 256);
    double ms = time_launch(kern, &l);
    printf("%s: %.4f ms, %.1f GB/s, check %s\n", name, ms, s->words * 4 / (ms * 1e6), verdict(ok));
    fflush(stdout);
    wgc_kernel_release(kern);
}

/* The weight as pseudo-random u32 words (pairs of f16 bit patterns). */
static Stream make_stream(uint64_t words) {
    Stream s = {0};
    s.words = words;
    uint32_t *host = malloc(words * 4);
    uint64_t r = 88172645463325252ull;
    for (uint64_t i = 0; i < words; i++) {
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        host[i] = (uint32_t)(r >> 32);
        s.expect ^= host[i];
    }
    CHECK(wgc_buffer_create(g_dev, words * 4, WGC_BUFFER_USAGE_STORAGE, &s.w));
    CHECK(wgc_buffer_write(s.w, 0, host, words * 4));
    free(host);
    /* The largest output: the roofline's threads or 8 splits of N / 64 groups. */
    CHECK(wgc_buffer_create(g_dev, (uint64_t)ROOFLINE_GROUPS * 256 * 4, WGC_BUFFER_USAGE_STORAGE, &s.out));
    return s;
}

static void experiment_stream(void) {
    /* Two shapes of the same number of words, so one buffer serves both;
     * --small: 1 to 8 steps, since lavapipe's compile time grows with them. */
    uint32_t n1 = g_small ? 1024 : 14336, k1 = g_small ? 256 : 4096;
    uint32_t n2 = g_small ? 256 : 4096, k2 = g_small ? 1024 : 14336;
    Stream s = make_stream((uint64_t)n1 * k1 / 2);
    printf("== experiment 1: streaming a %.1f MB f16 weight (decode GEMM load structure)\n", s.words * 4 / 1e6);
    static const uint32_t prefetch1[] = {1, 2, 4, 8}, splits1[] = {1, 2, 4};
    static const uint32_t prefetch2[] = {2, 4}, splits2[] = {2, 4, 8};
    for (int stage = 0; stage <= 1; stage++)
        for (int p = 0; p < 4; p++)
            for (int q = 0; q < 3; q++) run_block(&s, n1, k1, stage, prefetch1[p], splits1[q]);
    for (int stage = 0; stage <= 1; stage++)
        for (int p = 0; p < 2; p++)
            for (int q = 0; q < 3; q++) run_block(&s, n2, k2, stage, prefetch2[p], splits2[q]);
    run_roofline(&s);
    wgc_buffer_release(s.w);
    wgc_buffer_release(s.out);
}

/* The same structure over the vocabulary projection's (N, K) f16 weight
 * (128256 x 4096, 1.05 GB): 2004 workgroups and one run of K, as the skinny
 * kernel launches it for 3-16 rows, and the roofline over that size. */
static void experiment_stream_vocab(void) {
    uint32_t n = g_small ? 1024 : 128256, k = g_small ? 256 : 4096;
    Stream s = make_stream((uint64_t)n * k / 2);
    printf("== experiment 1b: streaming a %.1f MB f16 weight (vocabulary projection)\n", s.words * 4 / 1e6);
    for (int stage = 0; stage <= 1; stage++)
        for (uint32_t prefetch = 1; prefetch <= 2; prefetch++) run_block(&s, n, k, stage, prefetch, 1);
    run_roofline(&s);
    wgc_buffer_release(s.w);
    wgc_buffer_release(s.out);
}

/* ============ experiment 3: streaming a (K, N) f16 weight ================= */

/* The matrix-vector axpy kernel's load structure (one or two rows of A
 * against a weight stored (K, N)) without its math: a workgroup of
 * AXU * AK threads takes AXU 16-byte units (8 columns each) of every row
 * of one run of RUN values of K, AK threads interleaved along K, each with
 * UNROLL loads issued before they are used. Prepended: N8 (units a row),
 * AXU, AK, RUN, UNROLL, TILES (= N8 / AXU). In bounds: columns
 * wg.x * AXU + tid % AXU < TILES * AXU = N8; rows wg.y * RUN + k < K for
 * k < RUN (RUN a multiple of AK * UNROLL, K of RUN); out index <
 * TILES * runs * AXU * AK, its size. */
static const char AXPY_BODY[] =
    "@group(0) @binding(0) var<storage, read> w: array<vec4<u32>>;\n"
    "@group(0) @binding(1) var<storage, read_write> out: array<u32>;\n"
    "\n"
    "@compute @workgroup_size(AXU * AK)\n"
    "fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {\n"
    "    let col = wg.x * AXU + tid % AXU;\n"
    "    let k0 = wg.y * RUN;\n"
    "    var acc = vec4<u32>(0u);\n"
    "    for (var k = tid / AXU; k < RUN; k += AK * UNROLL) {\n"
    "        var v: array<vec4<u32>, UNROLL>;\n"
    "        for (var j = 0u; j < UNROLL; j++) {\n"
    "            v[j] = w[(k0 + k + j * AK) * N8 + col];\n"
    "        }\n"
    "        for (var j = 0u; j < UNROLL; j++) {\n"
    "            acc ^= v[j];\n"
    "        }\n"
    "    }\n"
    "    out[(wg.y * TILES + wg.x) * AXU * AK + tid] = acc.x ^ acc.y ^ acc.z ^ acc.w;\n"
    "}\n";

static void run_axpy(const Stream *s, uint32_t k, uint32_t n, uint32_t axu, uint32_t ak, uint32_t runs,
                     uint32_t unroll) {
    uint32_t n8 = n / 8, tiles = n8 / axu, run = k / runs, threads = axu * ak;
    if (n8 % axu || k % runs || run % (ak * unroll)) { fprintf(stderr, "axpy probe: not whole tiles\n"); exit(1); }
    uint64_t outs = (uint64_t)tiles * runs * threads;
    if (outs > (uint64_t)ROOFLINE_GROUPS * 256) { fprintf(stderr, "axpy probe: output too large\n"); exit(1); }
    char name[160], src[SRC_MAX];
    snprintf(name, sizeof name, "axpy K=%u N=%u threads %ux%u runs=%u unroll=%u (%u workgroups, %u columns each)", k, n,
             axu, ak, runs, unroll, tiles * runs, axu * 8);
    snprintf(src, sizeof src,
             "const N8: u32 = %uu;\nconst AXU: u32 = %uu;\nconst AK: u32 = %uu;\nconst RUN: u32 = %uu;\n"
             "const UNROLL: u32 = %uu;\nconst TILES: u32 = %uu;\n%s",
             n8, axu, ak, run, unroll, tiles, AXPY_BODY);
    WgcKernel *kern = compile(src, name);
    if (!kern) return;
    WgcBinding bind[2] = {{0, s->w, 0, 0}, {1, s->out, 0, outs * 4}};
    WgcLaunch l = launch_of(bind, 2, tiles, runs);
    int ok = check_xor(s, kern, &l, outs);
    double ms = time_launch(kern, &l);
    printf("%s: %.4f ms, %.1f GB/s, check %s\n", name, ms, s->words * 4 / (ms * 1e6), verdict(ok));
    fflush(stdout);
    wgc_kernel_release(kern);
}

static void experiment_axpy(void) {
    uint32_t k1 = g_small ? 256 : 4096, n1 = g_small ? 1024 : 14336;
    uint32_t k2 = g_small ? 256 : 14336, n2 = g_small ? 1024 : 4096;
    Stream s = make_stream((uint64_t)n1 * k1 / 2);
    printf("== experiment 3: streaming a %.1f MB f16 weight stored (K, N) (matrix-vector axpy load structure)\n",
           s.words * 4 / 1e6);
    static const uint32_t unrolls[] = {1, 4};
    /* The kernel's workgroup (32 units across, 4 along K) at 224-896 workgroups,
     * and one of 128 units across (1024 columns) with no lanes along K. */
    for (int u = 0; u < 2; u++) {
        for (uint32_t runs = 4; runs <= (g_small ? 4u : 16u); runs *= 2) run_axpy(&s, k1, n1, 32, 4, runs, unrolls[u]);
        for (uint32_t runs = 16; runs <= (g_small ? 16u : 64u); runs *= 2) run_axpy(&s, k2, n2, 32, 4, runs, unrolls[u]);
        for (uint32_t runs = 8; runs <= (g_small ? 8u : 32u); runs *= 2) run_axpy(&s, k1, n1, 128, 1, runs, unrolls[u]);
        for (uint32_t runs = 32; runs <= (g_small ? 32u : 128u); runs *= 2) run_axpy(&s, k2, n2, 128, 1, runs, unrolls[u]);
    }
    /* Narrow column blocks with many threads along K (8 or 16 units across, 32 or 16 along K, 256
     * threads): the workgroup count a single pass over K (runs=1, no second pass) would launch. */
    for (uint32_t runs = 1; runs <= (g_small ? 1u : 4u); runs *= 2) {
        run_axpy(&s, k1, n1, 8, 32, runs, 4);
        run_axpy(&s, k2, n2, 8, 32, runs, 4);
        run_axpy(&s, k2, n2, 4, 64, runs, 4);
    }
    run_roofline(&s);
    wgc_buffer_release(s.w);
    wgc_buffer_release(s.out);
}

/* ============ experiment 2: the SGEMM micro-kernel's FLOP rate ============ */

/* Prepended: RM, RN (blocks of 64 rows, columns), ACC_ROWS (= 4 * RM),
 * A_ROW, B_ROW (= BM / 4 + 1, BN / 4 + 1), A_VECS, B_VECS (= BK * A_ROW,
 * BK * B_ROW), STEPS, BARRIERS, GRID_X. multiply_staged is gemm_tile.wgsl's
 * with its register arrays sized by RM and RN. In bounds: As index
 * kk * A_ROW + i * 16 + ty <= 7 * A_ROW + 16 * RM - 1 < A_VECS (likewise
 * Bs); the fill loops stop at A_VECS, B_VECS, the sizes of a and b; tid <
 * 256 <= A_VECS, B_VECS (264 or more); out index < grid * 256, its size. */
static const char MICRO_BODY[] =
    "const BK: u32 = 8u;\n"
    "alias Acc = array<array<vec4<f32>, RN>, ACC_ROWS>;\n"
    "@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;\n"
    "@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;\n"
    "@group(0) @binding(2) var<storage, read_write> out: array<f32>;\n"
    "var<workgroup> As: array<vec4<f32>, A_VECS>;\n"
    "var<workgroup> Bs: array<vec4<f32>, B_VECS>;\n"
    "\n"
    "fn multiply_staged(tx: u32, ty: u32, acc: ptr<function, Acc>) {\n"
    "    for (var kk = 0u; kk < BK; kk++) {\n"
    "        var av: array<vec4<f32>, RM>;\n"
    "        var bv: array<vec4<f32>, RN>;\n"
    "        for (var i = 0u; i < RM; i++) {\n"
    "            av[i] = As[kk * A_ROW + i * 16u + ty];\n"
    "        }\n"
    "        for (var j = 0u; j < RN; j++) {\n"
    "            bv[j] = Bs[kk * B_ROW + j * 16u + tx];\n"
    "        }\n"
    "        for (var i = 0u; i < RM; i++) {\n"
    "            for (var r = 0u; r < 4u; r++) {\n"
    "                let s = av[i][r];\n"
    "                for (var j = 0u; j < RN; j++) {\n"
    "                    (*acc)[i * 4u + r][j] = fma(vec4<f32>(s), bv[j], (*acc)[i * 4u + r][j]);\n"
    "                }\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "}\n"
    "\n"
    "@compute @workgroup_size(16, 16, 1)\n"
    "fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {\n"
    "    let tx = lid.x;\n"
    "    let ty = lid.y;\n"
    "    let tid = ty * 16u + tx;\n"
    "    for (var i = tid; i < A_VECS; i += 256u) {\n"
    "        As[i] = a[i];\n"
    "    }\n"
    "    for (var i = tid; i < B_VECS; i += 256u) {\n"
    "        Bs[i] = b[i];\n"
    "    }\n"
    "    workgroupBarrier();\n"
    "    let a_own = As[tid];\n"
    "    let b_own = Bs[tid];\n"
    "    var acc: Acc;\n"
    "    for (var step = 0u; step < STEPS; step++) {\n"
    "        if (BARRIERS) {\n"
    "            // The real kernel's staging, storing values the tiles already hold.\n"
    "            workgroupBarrier();\n"
    "            As[tid] = a_own;\n"
    "            Bs[tid] = b_own;\n"
    "            workgroupBarrier();\n"
    "        }\n"
    "        multiply_staged(tx, ty, &acc);\n"
    "    }\n"
    "    var sum = 0.0;\n"
    "    for (var r = 0u; r < ACC_ROWS; r++) {\n"
    "        for (var j = 0u; j < RN; j++) {\n"
    "            let v = acc[r][j];\n"
    "            sum += (v.x + v.y) + (v.z + v.w);\n"
    "        }\n"
    "    }\n"
    "    out[(wg.y * GRID_X + wg.x) * 256u + tid] = sum;\n"
    "}\n";

/* Hashed integers 0..3, so every product, accumulator and sum is an exact
 * f32 integer (below 2^24 up to 512 steps and 16x8 results a thread) and
 * each thread's sum depends on which rows and columns it reads. */
static float a_value(uint32_t e) { return (float)(((e * 2654435761u) >> 13) % 4u); }
static float b_value(uint32_t e) { return (float)(((e * 2246822519u + 12345u) >> 15) % 4u); }

/* What thread (tx, ty) writes: the sum of its results after `steps` steps. */
static double micro_expected(uint32_t rm, uint32_t rn, uint32_t steps, uint32_t tx, uint32_t ty) {
    uint32_t a_row = 16 * rm + 1, b_row = 16 * rn + 1;
    double sum = 0;
    for (uint32_t kk = 0; kk < 8; kk++)
        for (uint32_t i = 0; i < rm; i++)
            for (uint32_t r = 0; r < 4; r++)
                for (uint32_t j = 0; j < rn; j++)
                    for (uint32_t c = 0; c < 4; c++)
                        sum += (double)a_value((kk * a_row + i * 16 + ty) * 4 + r) *
                               b_value((kk * b_row + j * 16 + tx) * 4 + c);
    return sum * steps;
}

static WgcBuffer *upload_values(uint32_t floats, float (*value)(uint32_t)) {
    float *h = malloc(floats * sizeof(float));
    for (uint32_t e = 0; e < floats; e++) h[e] = value(e);
    WgcBuffer *buf;
    CHECK(wgc_buffer_create(g_dev, floats * sizeof(float), WGC_BUFFER_USAGE_STORAGE, &buf));
    CHECK(wgc_buffer_write(buf, 0, h, floats * sizeof(float)));
    free(h);
    return buf;
}

/* rm x rn blocks of 64: a (64 rm) x (64 rn) tile, (4 rm) x (4 rn) results a thread. */
static void run_micro(const char *variant, uint32_t rm, uint32_t rn, int barriers, uint32_t grid_x, uint32_t grid_y,
                      uint32_t steps) {
    uint32_t a_row = 16 * rm + 1, b_row = 16 * rn + 1, a_vecs = 8 * a_row, b_vecs = 8 * b_row;
    char name[160], src[SRC_MAX];
    snprintf(name, sizeof name, "micro %s: %ux%u tile, %ux%u a thread, grid %ux%u, %u steps of BK 8", variant, 64 * rm,
             64 * rn, 4 * rm, 4 * rn, grid_x, grid_y, steps);
    int len = snprintf(src, sizeof src,
                       "const RM: u32 = %uu;\nconst RN: u32 = %uu;\nconst ACC_ROWS: u32 = %uu;\n"
                       "const A_ROW: u32 = %uu;\nconst B_ROW: u32 = %uu;\nconst A_VECS: u32 = %uu;\n"
                       "const B_VECS: u32 = %uu;\nconst STEPS: u32 = %uu;\nconst BARRIERS: bool = %s;\n"
                       "const GRID_X: u32 = %uu;\n%s",
                       rm, rn, 4 * rm, a_row, b_row, a_vecs, b_vecs, steps, barriers ? "true" : "false", grid_x,
                       MICRO_BODY);
    if (len >= (int)sizeof src) { fprintf(stderr, "source too long\n"); exit(1); }
    WgcKernel *kern = compile(src, name);
    if (!kern) return;
    uint64_t threads = (uint64_t)grid_x * grid_y * 256;
    WgcBuffer *a = upload_values(a_vecs * 4, a_value), *b = upload_values(b_vecs * 4, b_value), *out;
    CHECK(wgc_buffer_create(g_dev, threads * 4, WGC_BUFFER_USAGE_STORAGE, &out));
    CHECK(wgc_stream_fill_buffer(g_st, out, 0, threads * 4, 0x7fc00000u)); /* NaN */
    WgcBinding bind[3] = {{0, a, 0, 0}, {1, b, 0, 0}, {2, out, 0, 0}};
    WgcLaunch l = launch_of(bind, 3, grid_x, grid_y);
    CHECK(wgc_stream_launch(g_st, kern, &l));
    float *got = malloc(threads * 4);
    CHECK(wgc_buffer_read(out, 0, got, threads * 4));
    double expect[256];
    for (uint32_t t = 0; t < 256; t++) expect[t] = micro_expected(rm, rn, steps, t % 16, t / 16);
    int ok = 1;
    for (uint64_t i = 0; i < threads; i++) ok &= got[i] == expect[i % 256];
    free(got);
    double ms = time_launch(kern, &l);
    double flops = 2.0 * (64.0 * rm * grid_y) * (64.0 * rn * grid_x) * steps * 8;
    printf("%s: %.4f ms, %.2f TFLOP/s, check %s\n", name, ms, flops / (ms * 1e9), verdict(ok));
    fflush(stdout);
    wgc_buffer_release(a);
    wgc_buffer_release(b);
    wgc_buffer_release(out);
    wgc_kernel_release(kern);
}

static void experiment_micro(void) {
    /* 4096 x 4096 of C, K = 4096 (2x2 groups and 4 steps with --small). */
    uint32_t g = g_small ? 2 : 32, steps = g_small ? 4 : 512;
    printf("== experiment 2: f32 SGEMM micro-kernel without global memory (gemm_tile.wgsl)\n");
    run_micro("inner", 2, 2, 0, g, g, steps);
    run_micro("barriers", 2, 2, 1, g, g, steps);
    run_micro("inner_16x8", 4, 2, 0, g, g_small ? g : g / 2, steps);
    run_micro("barriers_16x8", 4, 2, 1, g, g_small ? g : g / 2, steps);
}

int main(int argc, char **argv) {
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--small") == 0) {
            g_small = 1;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "usage: stream_probe [--small] [--only stream|vocab|axpy|micro]\n");
            return 2;
        }
    }
    WgcInstance *inst;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &g_dev));
    CHECK(wgc_stream_create(g_dev, &g_st));
    if (!only || strcmp(only, "stream") == 0) experiment_stream();
    if (!only || strcmp(only, "vocab") == 0) experiment_stream_vocab();
    if (!only || strcmp(only, "axpy") == 0) experiment_axpy();
    if (!only || strcmp(only, "micro") == 0) experiment_micro();
    wgc_stream_release(g_st);
    wgc_device_release(g_dev);
    wgc_instance_release(inst);
    if (g_failures) fprintf(stderr, "%d variant(s) WRONG\n", g_failures);
    return g_failures ? 1 : 0;
}
