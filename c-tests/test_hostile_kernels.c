/* Hostile WGSL gets a status, never a crash or a stall: expressions nested
 * tens of thousands deep (naga's front end recursed until the stack ran
 * out), private arrays too large for drivers to compile, and `override`
 * workgroup sizes, which are checked and reported with their values. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "test_util.h"

#define SENTINEL ((WgcKernel *)(uintptr_t)0x5a5a5a5a)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Create a kernel; a failure must leave *out untouched and say why. */
static WgcStatus try_create(WgcDevice *dev, const char *src, const char *entry, WgcKernel **out) {
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = src;
    d.entry_point = entry;
    WgcKernel *k = SENTINEL;
    WgcStatus s = wgc_kernel_create(dev, &d, &k);
    if (s != WGC_OK) {
        EXPECT(k == SENTINEL);
        EXPECT(wgc_last_error_message()[0] != '\0');
        k = NULL;
    }
    if (out) *out = k;
    else wgc_kernel_release(k);
    return s;
}

/* Run a one-invocation kernel over y (binding 0, `n` floats) and return y[0]. */
static float run_once(TestEnv *e, WgcKernel *k, float x) {
    float y[4] = {x, 0, 0, 0};
    WgcBuffer *b = upload(e->device, y, sizeof y);
    WgcBinding bind = {0, b, 0, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = &bind;
    l.binding_count = 1;
    l.workgroups[0] = l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(b, 0, y, sizeof y));
    wgc_buffer_release(b);
    return y[0];
}

/* `y[0] = <head><piece><piece>...<tail>;` with `terms` pieces, x = y[0]. */
static char *chain_kernel(const char *head, const char *piece, int terms, const char *tail) {
    size_t cap = strlen(piece) * (size_t)terms + 512;
    char *src = (char *)malloc(cap);
    size_t k = (size_t)sprintf(src,
                               "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
                               "@compute @workgroup_size(1) fn main() {\n"
                               "    let x = y[0];\n"
                               "    y[0] = %s", head);
    for (int i = 0; i < terms; i++) {
        memcpy(src + k, piece, strlen(piece));
        k += strlen(piece);
    }
    sprintf(src + k, "%s;\n}\n", tail);
    return src;
}

/* The cases: 15,000 chained terms compile (and compute the right
 * value) or fail with SHADER_COMPILATION; far deeper ones fail. */
static void test_deep_expressions(TestEnv *e) {
    struct {
        const char *piece, *tail;
        int terms;
        float x, expect;
    } cases[] = {
        {"x + ", "x", 15000, 1.0f, 15001.0f},
        {"- ", "x", 15000, 3.0f, 3.0f},
        {"x * ", "x", 15000, 1.0f, 1.0f},
        {"- ", "x", 14999, 3.0f, -3.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *src = chain_kernel("", cases[i].piece, cases[i].terms, cases[i].tail);
        WgcKernel *k = NULL;
        WgcStatus s = try_create(e->device, src, "main", &k);
        EXPECT(s == WGC_OK || s == WGC_ERROR_SHADER_COMPILATION);
        if (s == WGC_OK) {
            float got = run_once(e, k, cases[i].x);
            if (got != cases[i].expect) {
                fprintf(stderr, "chain %zu (%s x %d): got %g, expected %g\n", i, cases[i].piece, cases[i].terms,
                        got, cases[i].expect);
                g_failures++;
            }
            wgc_kernel_release(k);
        }
        free(src);
    }
    /* Past the documented bound: refused before any parser recursion. */
    const char *deeper[][2] = {{"x + ", "x"}, {"- ", "x"}, {"x * ", "x"}, {"(x) + ", "x"}};
    for (size_t i = 0; i < 4; i++) {
        char *src = chain_kernel("", deeper[i][0], 200000, deeper[i][1]);
        EXPECT_STATUS(try_create(e->device, src, "main", NULL), WGC_ERROR_SHADER_COMPILATION);
        free(src);
    }
    /* Member and index chains, and a 20,000-arm else-if chain. */
    char *swizzles = chain_kernel("vec4(x)", ".wzyx", 40000, ".x");
    EXPECT_STATUS(try_create(e->device, swizzles, "main", NULL), WGC_ERROR_SHADER_COMPILATION);
    free(swizzles);
    char *indices = chain_kernel("array(array(x))", "[0][0]", 40000, "");
    EXPECT_STATUS(try_create(e->device, indices, "main", NULL), WGC_ERROR_SHADER_COMPILATION);
    free(indices);
    size_t cap = 20000 * 48 + 512, k = 0;
    char *arms = (char *)malloc(cap);
    k += (size_t)sprintf(arms, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
                               "@compute @workgroup_size(1) fn main() {\n let x = y[0];\n if x < 0.0 { y[0] = 0.0; }");
    for (int i = 1; i < 20000; i++) k += (size_t)sprintf(arms + k, " else if x < %d.0 { y[0] = 1.0; }", i);
    sprintf(arms + k, "\n}\n");
    EXPECT_STATUS(try_create(e->device, arms, "main", NULL), WGC_ERROR_SHADER_COMPILATION);
    free(arms);
}

static const char *PRIVATE_ARRAY =
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@compute @workgroup_size(1) fn main() {\n"
    "    var a: array<f32, %d>;\n"
    "    for (var i = 0u; i < %du; i++) { a[i] = f32(i) * y[0]; }\n"
    "    y[0] = a[u32(y[1]) %% %du];\n"
    "}\n";

/* Private memory past WGC_MAX_PRIVATE_MEMORY_BYTES is refused at once
 * (lavapipe compiled a 256 KiB array for over a minute); below it works. */
static void test_private_memory(TestEnv *e) {
    char src[1024];
    int n = 65536; /* 256 KiB */
    snprintf(src, sizeof src, PRIVATE_ARRAY, n, n, n);
    double t0 = now_s();
    EXPECT_STATUS(try_create(e->device, src, "main", NULL), WGC_ERROR_LIMIT_EXCEEDED);
    EXPECT(now_s() - t0 < 5.0);
    /* Exactly the limit, plus the loop counter: one word over. */
    n = WGC_MAX_PRIVATE_MEMORY_BYTES / 4;
    snprintf(src, sizeof src, PRIVATE_ARRAY, n, n, n);
    EXPECT_STATUS(try_create(e->device, src, "main", NULL), WGC_ERROR_LIMIT_EXCEEDED);

    /* A small array compiles and computes. */
    n = 256;
    snprintf(src, sizeof src, PRIVATE_ARRAY, n, n, n);
    WgcKernel *k = NULL;
    CHECK(try_create(e->device, src, "main", &k));
    float y[4] = {2.0f, 7.0f, 0, 0};
    WgcBuffer *b = upload(e->device, y, sizeof y);
    WgcBinding bind = {0, b, 0, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = &bind;
    l.binding_count = 1;
    l.workgroups[0] = l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(b, 0, y, sizeof y));
    EXPECT(y[0] == 14.0f);
    wgc_buffer_release(b);
    wgc_kernel_release(k);

    /* Private globals, call chains and arrays indexed by value all count. */
    const char *over[] = {
        "var<private> p: array<f32, 8192>;\n"
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
        "@compute @workgroup_size(1) fn main() { p[u32(y[0])] = 1.0; y[0] = p[1]; }\n",
        "fn h(i: u32) -> f32 { var a: array<f32, 3000>; a[i] = 1.0; return a[0]; }\n"
        "fn g(i: u32) -> f32 { var b: array<f32, 2000>; b[i] = h(i); return b[1]; }\n"
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
        "@compute @workgroup_size(1) fn main() { y[0] = g(u32(y[0])); }\n",
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
        "@compute @workgroup_size(1) fn main() { let a = array<f32, 5000>(); y[0] = a[u32(y[0])]; }\n",
    };
    for (size_t i = 0; i < 3; i++) EXPECT_STATUS(try_create(e->device, over[i], "main", NULL), WGC_ERROR_LIMIT_EXCEEDED);
}

static const char *OVERRIDE_WG =
    "override WG = %s;\n"
    "override H: u32 = WG / 8u;\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<u32>;\n"
    "@compute @workgroup_size(WG, H) fn main(@builtin(global_invocation_id) g: vec3<u32>,\n"
    "                                        @builtin(num_workgroups) n: vec3<u32>) {\n"
    "    y[g.y * n.x * WG + g.x] = g.x + 1000u * g.y;\n"
    "}\n";

/* Workgroup sizes from `override`s are checked and reported as resolved. */
static void test_override_workgroup_sizes(TestEnv *e) {
    char src[1024];
    snprintf(src, sizeof src, OVERRIDE_WG, "4096u");
    EXPECT_STATUS(try_create(e->device, src, "main", NULL), WGC_ERROR_LIMIT_EXCEEDED);
    snprintf(src, sizeof src, OVERRIDE_WG, "1024u"); /* 1024 x 128 invocations */
    EXPECT_STATUS(try_create(e->device, src, "main", NULL), WGC_ERROR_LIMIT_EXCEEDED);

    snprintf(src, sizeof src, OVERRIDE_WG, "32u");
    WgcKernel *k = NULL;
    CHECK(try_create(e->device, src, "main", &k));
    uint32_t wg[3] = {0, 0, 0};
    CHECK(wgc_kernel_workgroup_size(k, wg));
    EXPECT(wg[0] == 32 && wg[1] == 4 && wg[2] == 1);
    /* 3 x 2 workgroups of 32 x 4: every invocation writes its own slot. */
    enum { N = 3 * 32 * 2 * 4 };
    uint32_t host[N];
    memset(host, 0xff, sizeof host);
    WgcBuffer *b = upload(e->device, host, sizeof host);
    WgcBinding bind = {0, b, 0, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = &bind;
    l.binding_count = 1;
    l.workgroups[0] = 3;
    l.workgroups[1] = 2;
    l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(b, 0, host, sizeof host));
    int bad = 0;
    for (uint32_t gy = 0; gy < 8; gy++)
        for (uint32_t gx = 0; gx < 96; gx++)
            if (host[gy * 96 + gx] != gx + 1000u * gy) bad++;
    EXPECT(bad == 0);
    wgc_buffer_release(b);
    wgc_kernel_release(k);

    /* Workgroup memory sized by an override counts with its value. */
    EXPECT_STATUS(try_create(e->device,
                             "override N = 1000000u;\n"
                             "var<workgroup> big: array<f32, N>;\n"
                             "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
                             "@compute @workgroup_size(1) fn main() { big[0] = 1.0; y[0] = big[0]; }\n",
                             "main", NULL),
                  WGC_ERROR_LIMIT_EXCEEDED);
    /* An override without a default has no value: kernels get no pipeline constants. */
    EXPECT_STATUS(try_create(e->device,
                             "override WG: u32;\n"
                             "@group(0) @binding(0) var<storage, read_write> y: array<u32>;\n"
                             "@compute @workgroup_size(WG) fn main(@builtin(local_invocation_index) i: u32) { y[i] = 1u; }\n",
                             "main", NULL),
                  WGC_ERROR_SHADER_COMPILATION);
}

int main(void) {
    TestEnv e = test_env();
    test_deep_expressions(&e);
    test_private_memory(&e);
    test_override_workgroup_sizes(&e);
    test_env_release(&e);
    return test_finish("test_hostile_kernels");
}
