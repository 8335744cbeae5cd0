/* Hostile WGSL gets a status, never a crash or a stall: expressions nested
 * tens of thousands deep (naga's front end recursed until the stack ran
 * out), long flat sources (100,000 `let` statements took 193 s to compile,
 * 200,000 functions over 120 s), private arrays too large for drivers to
 * compile, and `override` workgroup sizes, which are checked and reported
 * with their values. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
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

/* A growing source text. */
typedef struct Text {
    char *p;
    size_t len, cap;
} Text;

static void add(Text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->p = (char *)realloc(t->p, t->cap);
        if (!t->p) abort();
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* y[0] = y[0] + n - 1 through `n` chained `let` statements in one function. */
static Text flat_lets(int n) {
    Text t = {NULL, 0, 0};
    add(&t, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
            "@compute @workgroup_size(1) fn main() {\n    let v0 = y[0];\n");
    for (int i = 1; i < n; i++) add(&t, "    let v%d = v%d + 1.0;\n", i, i - 1);
    add(&t, "    y[0] = v%d;\n}\n", n - 1);
    return t;
}

/* y[0] = y[0] + n through `n` functions, each calling the one before
 * (`calls` times: then y[0] = calls^(n-1) * (y[0] + 1) + ...). */
static Text chained_functions(int n, int calls) {
    Text t = {NULL, 0, 0};
    add(&t, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
            "fn g0(x: f32) -> f32 { return x + 1.0; }\n");
    for (int i = 1; i < n; i++) {
        add(&t, "fn g%d(x: f32) -> f32 { return g%d(x) + 1.0", i, i - 1);
        for (int c = 1; c < calls; c++) add(&t, " + g%d(x)", i - 1);
        add(&t, "; }\n");
    }
    add(&t, "@compute @workgroup_size(1) fn main() { y[0] = g%d(y[0]); }\n", n - 1);
    return t;
}

/* Long flat sources past the documented bounds fail with LIMIT_EXCEEDED at
 * once; below them they compile (in time about linear in their size) and
 * compute the right value. */
static void test_flat_kernels(TestEnv *e) {
    struct {
        const char *what;
        Text src;
    } refused[] = {
        {"100,000 chained lets (the issue's 193 s)", flat_lets(100000)},
        {"200,000 functions (over 120 s)", chained_functions(200000, 1)},
        {"4,000 chained functions (two minutes in the driver)", chained_functions(4000, 1)},
        {"40 functions each calling the one before twice", chained_functions(40, 2)},
        {"one function past WGC_MAX_KERNEL_DECLARATION_TOKENS", flat_lets(WGC_MAX_KERNEL_DECLARATION_TOKENS / 7 + 8)},
        {"functions past WGC_MAX_KERNEL_DECLARATIONS", chained_functions(WGC_MAX_KERNEL_DECLARATIONS + 1, 1)},
        {"a source past WGC_MAX_KERNEL_SOURCE_BYTES", {NULL, 0, 0}},
        {"short functions past WGC_MAX_KERNEL_TOKENS", {NULL, 0, 0}},
    };
    Text *comments = &refused[6].src;
    while (comments->len <= WGC_MAX_KERNEL_SOURCE_BYTES) add(comments, "// %0120d\n", 0);
    add(comments, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
                  "@compute @workgroup_size(1) fn main() { y[0] = 1.0; }\n");
    /* 1,000 functions of about 200 tokens each. */
    Text *wide = &refused[7].src;
    add(wide, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n");
    for (int i = 0; i < 1000; i++) {
        add(wide, "fn g%d(x: f32) -> f32 { return x", i);
        for (int j = 0; j < 100; j++) add(wide, " + x");
        add(wide, "; }\n");
    }
    add(wide, "@compute @workgroup_size(1) fn main() { y[0] = g0(y[0]); }\n");
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        double t0 = now_s();
        EXPECT_STATUS(try_create(e->device, refused[i].src.p, "main", NULL), WGC_ERROR_LIMIT_EXCEEDED);
        double took = now_s() - t0;
        printf("%s (%zu bytes): refused in %.3f s\n", refused[i].what, refused[i].src.len, took);
        if (took > 2.0) {
            fprintf(stderr, "%s: refused after %.1f s, not at once\n", refused[i].what, took);
            g_failures++;
        }
        free(refused[i].src.p);
    }

    /* Within the bounds: 1,000 and 4,000 lets in one function, 150 and 600
     * chained functions. */
    for (int big = 0; big < 2; big++) {
        int n[2] = {big ? 4000 : 1000, big ? 600 : 150};
        Text srcs[2] = {flat_lets(n[0]), chained_functions(n[1], 1)};
        float expect[2] = {2.0f + (float)(n[0] - 1), 2.0f + (float)n[1]};
        for (int k = 0; k < 2; k++) {
            WgcKernel *kern = NULL;
            double t0 = now_s();
            CHECK(try_create(e->device, srcs[k].p, "main", &kern));
            double took = now_s() - t0;
            printf("%d %s (%zu bytes): compiled in %.3f s\n", n[k], k ? "chained functions" : "lets", srcs[k].len,
                   took);
            EXPECT(took < 20.0);
            float got = run_once(e, kern, 2.0f);
            if (got != expect[k]) {
                fprintf(stderr, "%d %s: got %g, expected %g\n", n[k], k ? "functions" : "lets", got, expect[k]);
                g_failures++;
            }
            wgc_kernel_release(kern);
            free(srcs[k].p);
        }
    }
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
    test_flat_kernels(&e);
    test_private_memory(&e);
    test_override_workgroup_sizes(&e);
    test_env_release(&e);
    return test_finish("test_hostile_kernels");
}
