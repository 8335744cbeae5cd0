/* Custom WGSL kernels: parameters through the uniform (copied at launch)
 * or from a bound uniform buffer, bindings with offsets and sizes, 2D
 * workgroups, indirect dispatch, f16 and subgroups where available, and the
 * in-memory kernel cache. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "test_util.h"

static WgcLaunch launch_of(const WgcBinding *b, uint32_t n, const void *params, uint64_t psize, uint32_t gx,
                           uint32_t gy) {
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = n;
    l.params = params;
    l.params_size = psize;
    l.workgroups[0] = gx;
    l.workgroups[1] = gy;
    l.workgroups[2] = 1;
    return l;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *AXPBY =
    "struct P { a: f32, b: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn axpby(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = p.a * x[id.x] + p.b * y[id.x]; }\n"
    "}\n"
    "@compute @workgroup_size(32)\n"
    "fn scale(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = p.a * y[id.x]; }\n"
    "}\n";

/* Params copied at each launch: changing the host struct afterwards does not
 * affect recorded launches. */
static void test_params(TestEnv *e) {
    enum { N = 1001 };
    float x[N], y[N], out[N];
    double ref[N];
    fill_uniform_f32(x, N, -2, 2);
    fill_uniform_f32(y, N, -2, 2);
    WgcBuffer *bx = upload(e->device, x, sizeof x), *by = upload(e->device, y, sizeof y);
    WgcKernel *k = compile(e->device, AXPBY, "axpby");
    uint32_t wg[3] = {0, 0, 0}, nb = 0;
    CHECK(wgc_kernel_workgroup_size(k, wg));
    EXPECT(wg[0] == 64 && wg[1] == 1 && wg[2] == 1);
    CHECK(wgc_kernel_binding_count(k, &nb));
    EXPECT(nb == 3);

    struct { float a, b; uint32_t n, pad; } p = {2.0f, -0.5f, N, 0};
    WgcBinding b[2] = {{0, bx, 0, 0}, {1, by, 0, 0}};
    WgcLaunch l = launch_of(b, 2, &p, sizeof p, (N + 63) / 64, 1);
    CHECK(wgc_stream_launch(e->stream, k, &l));
    p.a = 3.0f; /* second launch sees the new values, the first the old */
    p.b = 1.0f;
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(by, 0, out, sizeof out));
    for (int i = 0; i < N; i++) {
        double y1 = 2.0 * x[i] - 0.5 * y[i];
        ref[i] = 3.0 * x[i] + y1;
    }
    compare_f32("params per launch", out, ref, N, 1e-5, 1e-5);

    /* Another entry point of the same module, with its own workgroup size. */
    WgcKernel *s = compile(e->device, AXPBY, "scale");
    CHECK(wgc_kernel_workgroup_size(s, wg));
    EXPECT(wg[0] == 32);
    CHECK(wgc_kernel_binding_count(s, &nb));
    EXPECT(nb == 2); /* x is not used by `scale` */
    WgcBinding b1[1] = {{1, by, 0, 0}};
    p.a = -1.0f;
    WgcLaunch l2 = launch_of(b1, 1, &p, sizeof p, (N + 31) / 32, 1);
    CHECK(wgc_stream_launch(e->stream, s, &l2));
    CHECK(wgc_buffer_read(by, 0, out, sizeof out));
    for (int i = 0; i < N; i++) ref[i] = -ref[i];
    compare_f32("second entry point", out, ref, N, 1e-5, 1e-5);

    /* The uniform from a bound buffer instead of params. */
    WgcBuffer *ub = NULL;
    CHECK(wgc_buffer_create(e->device, 256, WGC_BUFFER_USAGE_UNIFORM, &ub));
    struct { float a, b; uint32_t n, pad; } up = {0.0f, 2.0f, N, 0};
    CHECK(wgc_buffer_write(ub, 0, &up, sizeof up));
    WgcBinding b3[3] = {{0, bx, 0, 0}, {1, by, 0, 0}, {2, ub, 0, 16}};
    WgcLaunch l3 = launch_of(b3, 3, NULL, 0, (N + 63) / 64, 1);
    CHECK(wgc_stream_launch(e->stream, k, &l3));
    CHECK(wgc_buffer_read(by, 0, out, sizeof out));
    for (int i = 0; i < N; i++) ref[i] *= 2.0;
    compare_f32("uniform buffer", out, ref, N, 1e-5, 1e-5);

    wgc_kernel_release(s);
    wgc_kernel_release(k);
    wgc_buffer_release(ub);
    wgc_buffer_release(bx);
    wgc_buffer_release(by);
}

/* Bindings at an offset and with a size: arrayLength sees the bound size. */
static void test_binding_offsets(TestEnv *e) {
    static const char *src =
        "@group(0) @binding(0) var<storage, read> x: array<u32>;\n"
        "@group(0) @binding(1) var<storage, read_write> y: array<u32>;\n"
        "@compute @workgroup_size(64)\n"
        "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
        "    let n = arrayLength(&x);\n"
        "    if (id.x < n) { y[id.x + 1u] = x[id.x] * 3u; }\n"
        "    if (id.x == 0u) { y[0] = n; }\n"
        "}\n";
    uint32_t align = e->info.limits.min_storage_buffer_offset_alignment;
    const uint32_t words = 3 * align / 4 + 100;
    uint32_t *host = malloc(words * 4), *out = malloc(words * 4);
    for (uint32_t i = 0; i < words; i++) host[i] = i + 1;
    WgcBuffer *bx = upload(e->device, host, words * 4);
    WgcBuffer *by = NULL;
    CHECK(wgc_buffer_create(e->device, words * 4, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcKernel *k = compile(e->device, src, "main");

    const uint32_t n = 37; /* bind words [align/4, align/4 + 37) of x */
    WgcBinding b[2] = {{0, bx, align, n * 4}, {1, by, 2 * (uint64_t)align, 0}};
    WgcLaunch l = launch_of(b, 2, NULL, 0, 1, 1);
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(by, 0, out, words * 4));
    int bad = 0;
    uint32_t base = 2 * align / 4;
    for (uint32_t i = 0; i < words; i++) {
        uint32_t want = 0;
        if (i == base) want = n;
        else if (i > base && i <= base + n) want = host[align / 4 + i - base - 1] * 3u;
        bad += out[i] != want;
    }
    EXPECT(bad == 0);
    wgc_kernel_release(k);
    wgc_buffer_release(bx);
    wgc_buffer_release(by);
    free(host);
    free(out);
}

/* A 2D grid: transpose an odd-sized matrix with 8x8 workgroups. */
static void test_2d(TestEnv *e) {
    static const char *src =
        "struct P { rows: u32, cols: u32 }\n"
        "@group(0) @binding(0) var<storage, read> a: array<i32>;\n"
        "@group(0) @binding(1) var<storage, read_write> t: array<i32>;\n"
        "@group(0) @binding(2) var<uniform> p: P;\n"
        "@compute @workgroup_size(8, 8)\n"
        "fn transpose(@builtin(global_invocation_id) id: vec3<u32>) {\n"
        "    if (id.x < p.cols && id.y < p.rows) { t[id.x * p.rows + id.y] = a[id.y * p.cols + id.x]; }\n"
        "}\n";
    enum { R = 45, C = 77 };
    int32_t a[R * C], t[R * C];
    for (int i = 0; i < R * C; i++) a[i] = (int32_t)(rng_next() % 2001) - 1000;
    WgcBuffer *ba = upload(e->device, a, sizeof a), *bt = NULL;
    CHECK(wgc_buffer_create(e->device, sizeof t, 0, &bt));
    WgcKernel *k = compile(e->device, src, "transpose");
    uint32_t wg[3];
    CHECK(wgc_kernel_workgroup_size(k, wg));
    EXPECT(wg[0] == 8 && wg[1] == 8 && wg[2] == 1);
    struct { uint32_t rows, cols; } p = {R, C};
    WgcBinding b[2] = {{0, ba, 0, 0}, {1, bt, 0, 0}};
    WgcLaunch l = launch_of(b, 2, &p, sizeof p, (C + 7) / 8, (R + 7) / 8);
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(bt, 0, t, sizeof t));
    int bad = 0;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) bad += t[c * R + r] != a[r * C + c];
    EXPECT(bad == 0);
    wgc_kernel_release(k);
    wgc_buffer_release(ba);
    wgc_buffer_release(bt);
}

/* Indirect dispatch: the counts come from a buffer written by a kernel. */
static void test_indirect(TestEnv *e) {
    static const char *src =
        "@group(0) @binding(0) var<storage, read_write> args: array<u32>;\n"
        "@compute @workgroup_size(1)\n"
        "fn setup() { args[0] = 5u; args[1] = 3u; args[2] = 2u; }\n";
    static const char *count_src =
        "@group(0) @binding(0) var<storage, read_write> hits: array<atomic<u32>>;\n"
        "@compute @workgroup_size(4)\n"
        "fn count(@builtin(workgroup_id) w: vec3<u32>) {\n"
        "    atomicAdd(&hits[0], 1u);\n"
        "    atomicMax(&hits[1], w.x); atomicMax(&hits[2], w.y); atomicMax(&hits[3], w.z);\n"
        "}\n";
    WgcBuffer *args = NULL, *hits = NULL;
    CHECK(wgc_buffer_create(e->device, 64, WGC_BUFFER_USAGE_STORAGE | WGC_BUFFER_USAGE_INDIRECT, &args));
    CHECK(wgc_buffer_create(e->device, 16, WGC_BUFFER_USAGE_STORAGE, &hits));
    WgcKernel *setup = compile(e->device, src, "setup"), *count = compile(e->device, count_src, "count");

    /* setup writes the counts at byte 0; a copy moves them to byte 16 so the
     * dispatch reads them at a non-zero offset. */
    uint32_t host[16] = {0};
    CHECK(wgc_buffer_write(args, 0, host, sizeof host));
    WgcBinding b0[1] = {{0, args, 0, 0}};
    WgcLaunch l0 = launch_of(b0, 1, NULL, 0, 1, 1);
    CHECK(wgc_stream_launch(e->stream, setup, &l0));
    CHECK(wgc_stream_copy_buffer(e->stream, args, 0, args, 16, 12));
    WgcBinding b1[1] = {{0, hits, 0, 0}};
    WgcLaunch l1 = launch_of(b1, 1, NULL, 0, 999, 999); /* ignored */
    l1.indirect_buffer = args;
    l1.indirect_offset = 16;
    CHECK(wgc_stream_launch(e->stream, count, &l1));
    uint32_t got[4];
    CHECK(wgc_buffer_read(hits, 0, got, sizeof got));
    EXPECT(got[0] == 5 * 3 * 2 * 4);
    EXPECT(got[1] == 4 && got[2] == 2 && got[3] == 1);
    wgc_kernel_release(setup);
    wgc_kernel_release(count);
    wgc_buffer_release(args);
    wgc_buffer_release(hits);
}

static void test_f16_and_subgroups(TestEnv *e) {
    enum { N = 256 };
    if (e->info.has_f16) {
        static const char *src =
            "enable f16;\n"
            "@group(0) @binding(0) var<storage, read> x: array<f16>;\n"
            "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
            "@compute @workgroup_size(64)\n"
            "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
            "    if (id.x < arrayLength(&y)) { y[id.x] = f32(x[id.x] * 2.0h); }\n"
            "}\n";
        uint16_t h[N];
        float out[N];
        double ref[N];
        for (int i = 0; i < N; i++) {
            h[i] = f32_to_f16((float)rng_uniform(-100, 100));
            ref[i] = 2.0 * f16_to_f32(h[i]);
        }
        WgcBuffer *bx = upload(e->device, h, sizeof h), *by = NULL;
        CHECK(wgc_buffer_create(e->device, sizeof out, 0, &by));
        WgcKernel *k = compile(e->device, src, "main");
        WgcBinding b[2] = {{0, bx, 0, 0}, {1, by, 0, 0}};
        WgcLaunch l = launch_of(b, 2, NULL, 0, N / 64, 1);
        CHECK(wgc_stream_launch(e->stream, k, &l));
        CHECK(wgc_buffer_read(by, 0, out, sizeof out));
        compare_f32("f16 kernel", out, ref, N, 0, 0);
        wgc_kernel_release(k);
        wgc_buffer_release(bx);
        wgc_buffer_release(by);
    }
    if (e->info.has_subgroups) {
        static const char *src =
            "@group(0) @binding(0) var<storage, read_write> y: array<u32>;\n"
            "@compute @workgroup_size(64)\n"
            "fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(subgroup_size) sg: u32) {\n"
            "    let s = subgroupAdd(1u);\n"
            "    y[id.x] = select(0u, 1u, s == sg);\n"
            "}\n";
        uint32_t out[64];
        WgcBuffer *by = NULL;
        CHECK(wgc_buffer_create(e->device, sizeof out, 0, &by));
        WgcKernel *k = compile(e->device, src, "main");
        WgcBinding b[1] = {{0, by, 0, 0}};
        WgcLaunch l = launch_of(b, 1, NULL, 0, 1, 1);
        CHECK(wgc_stream_launch(e->stream, k, &l));
        CHECK(wgc_buffer_read(by, 0, out, sizeof out));
        int bad = 0;
        for (int i = 0; i < 64; i++) bad += out[i] != 1;
        EXPECT(bad == 0);
        wgc_kernel_release(k);
        wgc_buffer_release(by);
    }
}

/* The same source and entry point compile once: repeated creation is a
 * cache lookup, much faster than the first compilation, and the handles
 * work independently of each other. */
static void test_cache(TestEnv *e) {
    char src[1024];
    snprintf(src, sizeof src,
             "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n"
             "@compute @workgroup_size(64)\n"
             "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
             "    if (id.x < arrayLength(&x)) { x[id.x] = sin(x[id.x]) * %u.0 + cos(x[id.x]); }\n"
             "}\n",
             (unsigned)(rng_next() % 1000 + 2));
    double t0 = now_ms();
    WgcKernel *first = compile(e->device, src, "main");
    double t1 = now_ms();
    enum { REPEAT = 20 };
    WgcKernel *again[REPEAT];
    for (int i = 0; i < REPEAT; i++) again[i] = compile(e->device, src, "main");
    double t2 = now_ms();
    printf("first compile %.3f ms, %d cached creations %.3f ms\n", t1 - t0, REPEAT, t2 - t1);
    EXPECT(t2 - t1 < 2.0 * (t1 - t0) + 1.0);

    float x[64] = {0}, out[64];
    WgcBuffer *b = upload(e->device, x, sizeof x);
    WgcBinding bind[1] = {{0, b, 0, 0}};
    WgcLaunch l = launch_of(bind, 1, NULL, 0, 1, 1);
    wgc_kernel_release(first); /* the cached copies stay valid */
    CHECK(wgc_stream_launch(e->stream, again[REPEAT - 1], &l));
    CHECK(wgc_buffer_read(b, 0, out, sizeof out));
    int bad = 0;
    for (int i = 0; i < 64; i++) bad += out[i] != 1.0f; /* sin(0)*k + cos(0) */
    EXPECT(bad == 0);
    for (int i = 0; i < REPEAT; i++) wgc_kernel_release(again[i]);
    wgc_buffer_release(b);
}

int main(void) {
    TestEnv env = test_env();
    test_params(&env);
    test_binding_offsets(&env);
    test_2d(&env);
    test_indirect(&env);
    test_f16_and_subgroups(&env);
    test_cache(&env);
    test_env_release(&env);
    return test_finish("test_kernel");
}
