/* Every bad input gets a status and a message, never a crash or a hang:
 * NULL handles and out-pointers, bad sizes, ranges and alignment, bindings
 * that do not match the kernel, objects of two devices mixed, invalid WGSL,
 * limits, use after the device is destroyed. Failed calls leave their
 * out-parameters untouched and record nothing. */
#include "test_util.h"

#define SENTINEL ((void *)(uintptr_t)0x5a5a5a5a)

static WgcStatus try_compile(WgcDevice *dev, const char *src, const char *entry) {
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = src;
    d.entry_point = entry;
    WgcKernel *k = (WgcKernel *)SENTINEL;
    WgcStatus s = wgc_kernel_create(dev, &d, &k);
    if (s == WGC_OK) wgc_kernel_release(k);
    else EXPECT(k == (WgcKernel *)SENTINEL);
    return s;
}

static WgcLaunch launch_of(const WgcBinding *b, uint32_t n, const void *params, uint64_t psize) {
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = n;
    l.params = params;
    l.params_size = psize;
    l.workgroups[0] = l.workgroups[1] = l.workgroups[2] = 1;
    return l;
}

static void test_status_strings(void) {
    const char *seen[WGC_ERROR_INVALID_OPERATION + 1];
    EXPECT(strcmp(wgc_status_string(WGC_OK), "WGC_OK") == 0);
    EXPECT(strcmp(wgc_status_string(WGC_ERROR_OUT_OF_RANGE), "WGC_ERROR_OUT_OF_RANGE") == 0);
    for (uint32_t s = 0; s <= WGC_ERROR_INVALID_OPERATION; s++) {
        seen[s] = wgc_status_string((WgcStatus)s);
        EXPECT(seen[s] != NULL && strncmp(seen[s], "WGC_", 4) == 0);
        if (s > 0) EXPECT(strncmp(seen[s], "WGC_ERROR_", 10) == 0);
        for (uint32_t t = 0; t < s; t++) EXPECT(strcmp(seen[s], seen[t]) != 0);
    }
    EXPECT(wgc_status_string((WgcStatus)1000) != NULL);
    EXPECT(wgc_status_string((WgcStatus)0xffffffffu) != NULL);
}

static void test_release_null(void) {
    wgc_instance_retain(NULL);
    wgc_instance_release(NULL);
    wgc_device_retain(NULL);
    wgc_device_release(NULL);
    wgc_buffer_retain(NULL);
    wgc_buffer_release(NULL);
    wgc_kernel_retain(NULL);
    wgc_kernel_release(NULL);
    wgc_stream_retain(NULL);
    wgc_stream_release(NULL);
    wgc_event_retain(NULL);
    wgc_event_release(NULL);
}

static void test_null_instance_device(TestEnv *e) {
    const WgcStatus NP = WGC_ERROR_NULL_POINTER;
    uint32_t u = 0;
    WgcAdapterInfo info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    WgcMemoryStats m;
    memset(&m, 0, sizeof m);
    m.struct_size = sizeof m;
    WgcDevice *dev = (WgcDevice *)SENTINEL;

    EXPECT_STATUS(wgc_instance_create(WGC_ABI_VERSION, NULL), NP);
    EXPECT_STATUS(wgc_instance_adapter_count(NULL, &u), NP);
    EXPECT_STATUS(wgc_instance_adapter_count(e->instance, NULL), NP);
    EXPECT_STATUS(wgc_instance_adapter_info(NULL, 0, &info), NP);
    EXPECT_STATUS(wgc_instance_adapter_info(e->instance, 0, NULL), NP);
    info.struct_size = 0;
    EXPECT_STATUS(wgc_instance_adapter_info(e->instance, 0, &info), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_device_info(e->device, &info), WGC_ERROR_INVALID_ARGUMENT);

    EXPECT_STATUS(wgc_device_create(NULL, NULL, &dev), NP);
    EXPECT(dev == (WgcDevice *)SENTINEL);
    EXPECT_STATUS(wgc_device_create(e->instance, NULL, NULL), NP);
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o); /* struct_size left 0 */
    EXPECT_STATUS(wgc_device_create(e->instance, &o, &dev), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(dev == (WgcDevice *)SENTINEL);
    EXPECT_STATUS(wgc_device_info(NULL, &info), NP);
    EXPECT_STATUS(wgc_device_info(e->device, NULL), NP);
    EXPECT_STATUS(wgc_device_synchronize(NULL), NP);
    EXPECT_STATUS(wgc_device_memory_stats(NULL, &m), NP);
    EXPECT_STATUS(wgc_device_memory_stats(e->device, NULL), NP);
    m.struct_size = 0;
    EXPECT_STATUS(wgc_device_memory_stats(e->device, &m), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_device_trim_pool(NULL, 0), NP);
    EXPECT_STATUS(wgc_device_save_pipeline_cache(NULL, &u), NP);
    EXPECT_STATUS(wgc_device_destroy(NULL), NP);
}

static void test_buffers(TestEnv *e) {
    const WgcStatus NP = WGC_ERROR_NULL_POINTER;
    WgcBuffer *b = (WgcBuffer *)SENTINEL;
    uint64_t max = e->info.limits.max_buffer_size;
    EXPECT_STATUS(wgc_buffer_create(NULL, 16, 0, &b), NP);
    EXPECT_STATUS(wgc_buffer_create(e->device, 16, 0, NULL), NP);
    EXPECT_STATUS(wgc_buffer_create(e->device, 0, 0, &b), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_buffer_create(e->device, 16, 8, &b), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_buffer_create(e->device, 16, 0x80000000u, &b), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_buffer_create(e->device, max + 1, 0, &b), WGC_ERROR_TOO_LARGE);
    EXPECT_STATUS(wgc_buffer_create(e->device, UINT64_MAX, 0, &b), WGC_ERROR_TOO_LARGE);
    EXPECT(b == (WgcBuffer *)SENTINEL);

    CHECK(wgc_buffer_create(e->device, 64, 0, &b));
    uint64_t size = 12345;
    unsigned char data[128] = {0};
    EXPECT_STATUS(wgc_buffer_size(NULL, &size), NP);
    EXPECT_STATUS(wgc_buffer_size(b, NULL), NP);
    EXPECT(size == 12345);

    EXPECT_STATUS(wgc_buffer_write(NULL, 0, data, 4), NP);
    EXPECT_STATUS(wgc_buffer_write(b, 0, NULL, 4), NP);
    EXPECT_STATUS(wgc_buffer_write(b, 0, data, 68), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_write(b, 64, data, 4), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_write(b, 68, data, 0), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_write(b, UINT64_MAX - 3, data, 8), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_write(b, 2, data, 4), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_buffer_write(b, 0, data, 6), WGC_ERROR_ALIGNMENT);

    EXPECT_STATUS(wgc_buffer_read(NULL, 0, data, 4), NP);
    EXPECT_STATUS(wgc_buffer_read(b, 0, NULL, 4), NP);
    EXPECT_STATUS(wgc_buffer_read(b, 0, data, 65), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_read(b, 63, data, 2), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_read(b, UINT64_MAX, data, 2), WGC_ERROR_OUT_OF_RANGE);

    /* Copies and fills. */
    WgcBuffer *c = NULL;
    CHECK(wgc_buffer_create(e->device, 64, 0, &c));
    WgcStream *st = e->stream;
    EXPECT_STATUS(wgc_stream_copy_buffer(NULL, b, 0, c, 0, 4), NP);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, NULL, 0, c, 0, 4), NP);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 0, NULL, 0, 4), NP);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 0, c, 0, 68), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 32, c, 0, 36), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 0, c, 32, 36), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, UINT64_MAX - 3, c, 0, 8), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 2, c, 0, 4), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 0, c, 2, 4), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 0, c, 0, 6), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 0, b, 8, 16), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_stream_fill_buffer(NULL, b, 0, 4, 0), NP);
    EXPECT_STATUS(wgc_stream_fill_buffer(st, NULL, 0, 4, 0), NP);
    EXPECT_STATUS(wgc_stream_fill_buffer(st, b, 0, 68, 0), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_stream_fill_buffer(st, b, 64, 4, 0), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_stream_fill_buffer(st, b, UINT64_MAX - 3, 8, 0), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_stream_fill_buffer(st, b, 2, 4, 0), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_stream_fill_buffer(st, b, 0, 6, 0), WGC_ERROR_ALIGNMENT);

    /* Nothing of the failed calls happened: both buffers still read zero. */
    unsigned char back[64];
    CHECK(wgc_buffer_read(b, 0, back, 64));
    int nonzero = 0;
    for (int i = 0; i < 64; i++) nonzero += back[i] != 0;
    CHECK(wgc_buffer_read(c, 0, back, 64));
    for (int i = 0; i < 64; i++) nonzero += back[i] != 0;
    EXPECT(nonzero == 0);
    wgc_buffer_release(b);
    wgc_buffer_release(c);
}

static void test_kernels(TestEnv *e) {
    const WgcStatus NP = WGC_ERROR_NULL_POINTER;
    static const char *ok_src =
        "@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n"
        "@compute @workgroup_size(64) fn main() { x[0] = 1u; }\n";
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = ok_src;
    d.entry_point = "main";
    WgcKernel *k = (WgcKernel *)SENTINEL;
    EXPECT_STATUS(wgc_kernel_create(NULL, &d, &k), NP);
    EXPECT_STATUS(wgc_kernel_create(e->device, NULL, &k), NP);
    EXPECT_STATUS(wgc_kernel_create(e->device, &d, NULL), NP);
    d.source = NULL;
    EXPECT_STATUS(wgc_kernel_create(e->device, &d, &k), NP);
    d.source = ok_src;
    d.entry_point = NULL;
    EXPECT_STATUS(wgc_kernel_create(e->device, &d, &k), NP);
    d.entry_point = "main";
    d.struct_size = 0;
    EXPECT_STATUS(wgc_kernel_create(e->device, &d, &k), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(k == (WgcKernel *)SENTINEL);

    /* Invalid WGSL: the diagnostic names the line (3) and column. */
    static const char *bad =
        "@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n"
        "@compute @workgroup_size(64) fn main() {\n"
        "    x[0] = undefined_thing + 1u;\n"
        "}\n";
    EXPECT_STATUS(try_compile(e->device, bad, "main"), WGC_ERROR_SHADER_COMPILATION);
    const char *msg = wgc_last_error_message();
    EXPECT(strstr(msg, ":3:") != NULL);
    EXPECT(strstr(msg, "undefined_thing") != NULL);
    static const char *syntax = "@compute @workgroup_size(1) fn main() {\n  let a = ;\n}\n";
    EXPECT_STATUS(try_compile(e->device, syntax, "main"), WGC_ERROR_SHADER_COMPILATION);
    EXPECT(strstr(wgc_last_error_message(), ":2:") != NULL);
    /* A type error caught by validation rather than parsing. */
    static const char *types =
        "@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n"
        "@compute @workgroup_size(1) fn main() { x[0] = 1.5; }\n";
    EXPECT_STATUS(try_compile(e->device, types, "main"), WGC_ERROR_SHADER_COMPILATION);
    EXPECT_STATUS(try_compile(e->device, "", "main"), WGC_ERROR_NOT_FOUND);

    EXPECT_STATUS(try_compile(e->device, ok_src, "nope"), WGC_ERROR_NOT_FOUND);
    EXPECT(strstr(wgc_last_error_message(), "nope") != NULL);

    /* Workgroup sizes beyond the adapter's limits. */
    char src[512];
    snprintf(src, sizeof src, "@compute @workgroup_size(%u) fn main() {}\n",
             e->info.limits.max_compute_invocations_per_workgroup * 2);
    EXPECT_STATUS(try_compile(e->device, src, "main"), WGC_ERROR_LIMIT_EXCEEDED);
    snprintf(src, sizeof src, "@compute @workgroup_size(1, 1, %u) fn main() {}\n",
             e->info.limits.max_compute_workgroup_size_z + 1);
    EXPECT_STATUS(try_compile(e->device, src, "main"), WGC_ERROR_LIMIT_EXCEEDED);
    snprintf(src, sizeof src, "@compute @workgroup_size(%u) fn main() {}\n",
             e->info.limits.max_compute_workgroup_size_x + 1);
    EXPECT_STATUS(try_compile(e->device, src, "main"), WGC_ERROR_LIMIT_EXCEEDED);
    /* More workgroup memory than the adapter allows (wgpu does not check
     * this itself; a driver was seen to hang on such a dispatch). */
    snprintf(src, sizeof src,
             "var<workgroup> big: array<f32, %u>;\n"
             "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n"
             "@compute @workgroup_size(1) fn main() { big[0] = 1.0; x[0] = big[0]; }\n",
             e->info.limits.max_compute_workgroup_storage_size / 4 + 1);
    EXPECT_STATUS(try_compile(e->device, src, "main"), WGC_ERROR_LIMIT_EXCEEDED);
    EXPECT(strstr(wgc_last_error_message(), "workgroup memory") != NULL);
    /* Other groups and textures are not supported. */
    EXPECT_STATUS(try_compile(e->device,
                              "@group(1) @binding(0) var<storage, read_write> x: array<u32>;\n"
                              "@compute @workgroup_size(1) fn main() { x[0] = 1u; }\n",
                              "main"),
                  WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(try_compile(e->device,
                              "@group(0) @binding(0) var t: texture_2d<f32>;\n"
                              "@group(0) @binding(1) var<storage, read_write> x: array<f32>;\n"
                              "@compute @workgroup_size(1) fn main() { x[0] = textureLoad(t, vec2(0), 0).x; }\n",
                              "main"),
                  WGC_ERROR_UNSUPPORTED);

    k = compile(e->device, ok_src, "main");
    uint32_t wg[3] = {9, 9, 9}, n = 9;
    EXPECT_STATUS(wgc_kernel_workgroup_size(NULL, wg), NP);
    EXPECT_STATUS(wgc_kernel_workgroup_size(k, NULL), NP);
    EXPECT(wg[0] == 9);
    EXPECT_STATUS(wgc_kernel_binding_count(NULL, &n), NP);
    EXPECT_STATUS(wgc_kernel_binding_count(k, NULL), NP);
    EXPECT(n == 9);
    wgc_kernel_release(k);
}

static const char *TWO =
    "struct P { k: u32, pad: u32, pad2: u32, pad3: u32 }\n"
    "struct Pair { a: vec4<u32>, b: vec4<u32> }\n"
    "@group(0) @binding(0) var<storage, read> x: array<u32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<u32>;\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@group(0) @binding(3) var<storage, read> pair: Pair;\n"
    "@compute @workgroup_size(64)\n"
    "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < arrayLength(&y)) { y[id.x] = y[id.x] + x[id.x] * p.k + pair.a.x; }\n"
    "}\n";

static void test_launches(TestEnv *e) {
    const WgcStatus NP = WGC_ERROR_NULL_POINTER, BM = WGC_ERROR_BINDING_MISMATCH;
    WgcStream *st = e->stream;
    WgcKernel *k = compile(e->device, TWO, "main");
    uint32_t align = e->info.limits.min_storage_buffer_offset_alignment;
    enum { N = 64 };
    WgcBuffer *x = NULL, *y = NULL, *pairb = NULL, *ub = NULL, *small = NULL, *ind = NULL, *big = NULL;
    uint32_t ones[N];
    for (int i = 0; i < N; i++) ones[i] = 1;
    x = upload(e->device, ones, sizeof ones);
    CHECK(wgc_buffer_create(e->device, N * 4, 0, &y));
    CHECK(wgc_buffer_create(e->device, 32, 0, &pairb));
    CHECK(wgc_buffer_create(e->device, 16, WGC_BUFFER_USAGE_UNIFORM, &ub));
    CHECK(wgc_buffer_create(e->device, 16, 0, &small));
    CHECK(wgc_buffer_create(e->device, 16, WGC_BUFFER_USAGE_STORAGE, &ind));
    CHECK(wgc_buffer_create(e->device, 4 * (uint64_t)align, 0, &big));
    uint32_t p[4] = {2, 0, 0, 0};

    WgcBinding good[3] = {{0, x, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}};
    WgcLaunch l = launch_of(good, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(NULL, k, &l), NP);
    EXPECT_STATUS(wgc_stream_launch(st, NULL, &l), NP);
    EXPECT_STATUS(wgc_stream_launch(st, k, NULL), NP);
    l.struct_size = 0;
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_INVALID_ARGUMENT);
    l = launch_of(NULL, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), NP);
    l = launch_of(good, 3, NULL, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), NP);
    WgcBinding nullbuf[3] = {{0, NULL, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}};
    l = launch_of(nullbuf, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), NP);

    /* Bindings that do not match the kernel. */
    WgcBinding missing[2] = {{0, x, 0, 0}, {1, y, 0, 0}};
    l = launch_of(missing, 2, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    l = launch_of(good, 3, NULL, 0); /* the uniform neither bound nor given */
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding extra[4] = {{0, x, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}, {7, x, 0, 0}};
    l = launch_of(extra, 4, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding twice[4] = {{0, x, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}, {1, y, 0, 0}};
    l = launch_of(twice, 4, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding both_uniform[4] = {{0, x, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}, {2, ub, 0, 0}};
    l = launch_of(both_uniform, 4, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding too_small[3] = {{0, x, 0, 0}, {1, y, 0, 0}, {3, small, 0, 0}}; /* Pair needs 32 */
    l = launch_of(too_small, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding too_small2[3] = {{0, x, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 16}};
    l = launch_of(too_small2, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding wrong_usage[3] = {{0, x, 0, 0}, {1, ub, 0, 0}, {3, pairb, 0, 0}}; /* uniform-only as storage */
    l = launch_of(wrong_usage, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding storage_as_uniform[4] = {{0, x, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}, {2, small, 0, 0}};
    l = launch_of(storage_as_uniform, 4, NULL, 0);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    WgcBinding aliased[3] = {{0, y, 0, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}}; /* read-only and writable */
    l = launch_of(aliased, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);
    l = launch_of(good, 3, p, 8); /* params smaller than the uniform */
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), BM);

    /* Offsets and sizes of bindings. */
    WgcBinding misaligned[3] = {{0, big, 4, 16}, {1, y, 0, 0}, {3, pairb, 0, 0}};
    l = launch_of(misaligned, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_ALIGNMENT);
    WgcBinding odd_size[3] = {{0, big, 0, 6}, {1, y, 0, 0}, {3, pairb, 0, 0}};
    l = launch_of(odd_size, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_ALIGNMENT);
    WgcBinding past_end[3] = {{0, big, 5 * (uint64_t)align, 0}, {1, y, 0, 0}, {3, pairb, 0, 0}};
    l = launch_of(past_end, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_OUT_OF_RANGE);
    WgcBinding past_end2[3] = {{0, big, 3 * (uint64_t)align, (uint64_t)align + 4}, {1, y, 0, 0}, {3, pairb, 0, 0}};
    l = launch_of(past_end2, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_OUT_OF_RANGE);
    WgcBinding huge[3] = {{0, big, (uint64_t)align, UINT64_MAX - 8}, {1, y, 0, 0}, {3, pairb, 0, 0}};
    l = launch_of(huge, 3, p, sizeof p);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_OUT_OF_RANGE);

    /* Dispatches beyond the adapter's limits. */
    uint32_t maxg = e->info.limits.max_compute_workgroups_per_dimension;
    for (int dim = 0; dim < 3; dim++) {
        l = launch_of(good, 3, p, sizeof p);
        l.workgroups[dim] = maxg + 1;
        EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_LIMIT_EXCEEDED);
    }
    l = launch_of(good, 3, p, sizeof p);
    l.workgroups[0] = UINT32_MAX;
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_LIMIT_EXCEEDED);

    /* Indirect buffers: usage, alignment, range. */
    l = launch_of(good, 3, p, sizeof p);
    l.indirect_buffer = ind; /* created without INDIRECT usage */
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_INVALID_ARGUMENT);
    WgcBuffer *ind_ok = NULL;
    CHECK(wgc_buffer_create(e->device, 16, WGC_BUFFER_USAGE_INDIRECT, &ind_ok));
    l.indirect_buffer = ind_ok;
    l.indirect_offset = 2;
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_ALIGNMENT);
    l.indirect_offset = 8; /* 8 + 12 > 16 */
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_OUT_OF_RANGE);
    l.indirect_offset = UINT64_MAX - 3;
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), WGC_ERROR_OUT_OF_RANGE);

    /* After all of that, nothing was recorded: one good launch gives y = 2. */
    l = launch_of(good, 3, p, sizeof p);
    CHECK(wgc_stream_launch(st, k, &l));
    uint32_t out[N];
    CHECK(wgc_buffer_read(y, 0, out, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != 2;
    EXPECT(bad == 0);

    WgcBuffer *bufs[] = {x, y, pairb, ub, small, ind, big, ind_ok};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) wgc_buffer_release(bufs[i]);
    wgc_kernel_release(k);
}


/* Shapes whose element count or row-major strides overflow int64_t are
 * OUT_OF_RANGE and leave the output untouched ({8, 2^62, 2^62} used to give
 * WGC_OK with saturated strides); the largest that fit are accepted. */
static void test_contiguous_overflow(WgcBuffer *b) {
    const int64_t G = (int64_t)1 << 62;
    struct {
        uint32_t rank;
        int64_t shape[4];
        int ok;
    } cases[] = {
        {3, {8, G, G}, 0},
        {2, {4, G}, 0},                        /* count 2^64 */
        {2, {(int64_t)1 << 32, (int64_t)1 << 32}, 0}, /* count 2^64 */
        {3, {0, G, G}, 0},                     /* no elements, but the first stride is 2^124 */
        {4, {3, 3, 3, INT64_MAX / 9 + 1}, 0},
        {2, {1, INT64_MAX}, 1},
        {2, {G, 0}, 1},
        {3, {2, 2, G / 2 - 1}, 1}, /* count 2^63 - 4 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        WgcTensor t, before;
        memset(&t, 0x5a, sizeof t);
        before = t;
        WgcStatus s = wgc_tensor_contiguous(b, WGC_DTYPE_F32, cases[i].rank, cases[i].shape, &t);
        if (!cases[i].ok) {
            EXPECT_STATUS(s, WGC_ERROR_OUT_OF_RANGE);
            EXPECT(memcmp(&t, &before, sizeof t) == 0);
            continue;
        }
        EXPECT(s == WGC_OK);
        /* Row-major strides, exact. */
        int64_t stride = 1;
        for (uint32_t d = cases[i].rank; d-- > 0;) {
            EXPECT(t.strides[d] == stride && t.shape[d] == cases[i].shape[d]);
            if (d > 0) stride *= cases[i].shape[d] > 0 ? cases[i].shape[d] : 1;
        }
    }
}
static void test_streams_events(TestEnv *e) {
    const WgcStatus NP = WGC_ERROR_NULL_POINTER;
    WgcStream *s = (WgcStream *)SENTINEL;
    WgcEvent *ev = (WgcEvent *)SENTINEL;
    EXPECT_STATUS(wgc_stream_create(NULL, &s), NP);
    EXPECT_STATUS(wgc_stream_create(e->device, NULL), NP);
    EXPECT(s == (WgcStream *)SENTINEL);
    EXPECT_STATUS(wgc_stream_flush(NULL), NP);
    EXPECT_STATUS(wgc_stream_synchronize(NULL), NP);
    EXPECT_STATUS(wgc_stream_record_event(NULL, &ev), NP);
    EXPECT_STATUS(wgc_stream_record_event(e->stream, NULL), NP);
    EXPECT(ev == (WgcEvent *)SENTINEL);

    CHECK(wgc_stream_record_event(e->stream, &ev));
    uint32_t done = 9;
    double ms = -7;
    EXPECT_STATUS(wgc_event_wait(NULL), NP);
    EXPECT_STATUS(wgc_event_query(NULL, &done), NP);
    EXPECT_STATUS(wgc_event_query(ev, NULL), NP);
    EXPECT(done == 9);
    EXPECT_STATUS(wgc_event_elapsed_ms(NULL, ev, &ms), NP);
    EXPECT_STATUS(wgc_event_elapsed_ms(ev, NULL, &ms), NP);
    EXPECT_STATUS(wgc_event_elapsed_ms(ev, ev, NULL), NP);
    EXPECT(ms == -7);
    wgc_event_release(ev);

    int64_t shape[2] = {4, 4};
    WgcTensor t;
    EXPECT_STATUS(wgc_tensor_contiguous(NULL, WGC_DTYPE_F32, 2, shape, &t), NP);
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(e->device, 64, 0, &b));
    EXPECT_STATUS(wgc_tensor_contiguous(b, WGC_DTYPE_F32, 2, shape, NULL), NP);
    EXPECT_STATUS(wgc_tensor_contiguous(b, WGC_DTYPE_F32, 2, NULL, &t), NP);
    EXPECT_STATUS(wgc_tensor_contiguous(b, WGC_DTYPE_F32, WGC_MAX_RANK + 1, shape, &t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_tensor_contiguous(b, 99, 2, shape, &t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_tensor_contiguous(b, 0xffffffffu, 2, shape, &t), WGC_ERROR_INVALID_ARGUMENT);
    shape[1] = -1;
    EXPECT_STATUS(wgc_tensor_contiguous(b, WGC_DTYPE_F32, 2, shape, &t), WGC_ERROR_INVALID_ARGUMENT);
    test_contiguous_overflow(b);
    wgc_buffer_release(b);
}

/* Two devices on the same adapter: their objects do not mix. */
static void test_device_mismatch(TestEnv *e) {
    const WgcStatus DM = WGC_ERROR_DEVICE_MISMATCH;
    WgcDevice *other = NULL;
    CHECK(wgc_device_create(e->instance, NULL, &other));
    WgcStream *ost = NULL;
    CHECK(wgc_stream_create(other, &ost));
    static const char *src =
        "@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n"
        "@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }\n";
    WgcKernel *k_a = compile(e->device, src, "main"), *k_b = compile(other, src, "main");
    WgcBuffer *b_a = NULL, *b_b = NULL, *ind_a = NULL;
    CHECK(wgc_buffer_create(e->device, 16, 0, &b_a));
    CHECK(wgc_buffer_create(other, 16, 0, &b_b));
    CHECK(wgc_buffer_create(e->device, 16, WGC_BUFFER_USAGE_INDIRECT, &ind_a));

    WgcBinding ba[1] = {{0, b_a, 0, 0}}, bb[1] = {{0, b_b, 0, 0}};
    WgcLaunch l = launch_of(ba, 1, NULL, 0);
    EXPECT_STATUS(wgc_stream_launch(ost, k_b, &l), DM); /* buffer of A on B's stream */
    l = launch_of(bb, 1, NULL, 0);
    EXPECT_STATUS(wgc_stream_launch(ost, k_a, &l), DM); /* kernel of A on B's stream */
    EXPECT_STATUS(wgc_stream_launch(e->stream, k_b, &l), DM);
    l.indirect_buffer = ind_a;
    EXPECT_STATUS(wgc_stream_launch(ost, k_b, &l), DM);
    EXPECT_STATUS(wgc_stream_copy_buffer(ost, b_a, 0, b_b, 0, 16), DM);
    EXPECT_STATUS(wgc_stream_copy_buffer(ost, b_b, 0, b_a, 0, 16), DM);
    EXPECT_STATUS(wgc_stream_fill_buffer(ost, b_a, 0, 16, 1), DM);
    /* An empty fill is checked like any other. */
    EXPECT_STATUS(wgc_stream_fill_buffer(ost, b_a, 0, 0, 1), DM);

    WgcEvent *ea = NULL, *eb = NULL;
    CHECK(wgc_stream_record_event(e->stream, &ea));
    CHECK(wgc_stream_record_event(ost, &eb));
    double ms = -7;
    WgcStatus s = wgc_event_elapsed_ms(ea, eb, &ms);
    EXPECT(s == DM || (s == WGC_ERROR_UNSUPPORTED && !e->info.has_timestamps));
    EXPECT(ms == -7);

    /* Both devices still work. */
    l = launch_of(bb, 1, NULL, 0);
    CHECK(wgc_stream_launch(ost, k_b, &l));
    uint32_t v[4];
    CHECK(wgc_buffer_read(b_b, 0, v, 16));
    EXPECT(v[0] == 1);
    CHECK(wgc_buffer_read(b_a, 0, v, 16));
    EXPECT(v[0] == 0);

    wgc_event_release(ea);
    wgc_event_release(eb);
    wgc_kernel_release(k_a);
    wgc_kernel_release(k_b);
    wgc_buffer_release(b_a);
    wgc_buffer_release(b_b);
    wgc_buffer_release(ind_a);
    wgc_stream_release(ost);
    wgc_device_release(other);
}

/* After wgc_device_destroy every call on the device or its children fails
 * with DEVICE_LOST; releasing still works. */
static void test_device_lost(TestEnv *e) {
    const WgcStatus DL = WGC_ERROR_DEVICE_LOST;
    WgcDevice *dev = NULL;
    CHECK(wgc_device_create(e->instance, NULL, &dev));
    static const char *src =
        "@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n"
        "@compute @workgroup_size(1) fn main() { x[0] = 1u; }\n";
    WgcKernel *k = compile(dev, src, "main");
    WgcBuffer *b = NULL, *c = NULL;
    CHECK(wgc_buffer_create(dev, 16, 0, &b));
    CHECK(wgc_buffer_create(dev, 16, 0, &c));
    WgcStream *st = NULL;
    CHECK(wgc_stream_create(dev, &st));
    WgcEvent *ev = NULL;
    CHECK(wgc_stream_record_event(st, &ev));
    WgcBinding bind[1] = {{0, b, 0, 0}};
    WgcLaunch l = launch_of(bind, 1, NULL, 0);
    CHECK(wgc_stream_launch(st, k, &l)); /* recorded, never submitted */

    CHECK(wgc_device_destroy(dev));
    uint32_t data[4] = {0};
    WgcBuffer *nb = (WgcBuffer *)SENTINEL;
    EXPECT_STATUS(wgc_buffer_create(dev, 16, 0, &nb), DL);
    EXPECT(nb == (WgcBuffer *)SENTINEL);
    EXPECT_STATUS(wgc_buffer_write(b, 0, data, 16), DL);
    EXPECT_STATUS(wgc_buffer_read(b, 0, data, 16), DL);
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = src;
    d.entry_point = "main";
    WgcKernel *nk = NULL;
    EXPECT_STATUS(wgc_kernel_create(dev, &d, &nk), DL);
    WgcStream *ns = NULL;
    EXPECT_STATUS(wgc_stream_create(dev, &ns), DL);
    EXPECT_STATUS(wgc_stream_launch(st, k, &l), DL);
    EXPECT_STATUS(wgc_stream_copy_buffer(st, b, 0, c, 0, 16), DL);
    EXPECT_STATUS(wgc_stream_fill_buffer(st, b, 0, 16, 0), DL);
    WgcEvent *ne = NULL;
    EXPECT_STATUS(wgc_stream_record_event(st, &ne), DL);
    EXPECT_STATUS(wgc_stream_flush(st), DL);
    EXPECT_STATUS(wgc_stream_synchronize(st), DL);
    EXPECT_STATUS(wgc_device_synchronize(dev), DL);
    EXPECT_STATUS(wgc_event_wait(ev), DL);
    uint32_t saved = 0;
    EXPECT_STATUS(wgc_device_save_pipeline_cache(dev, &saved), DL);
    /* Queries of what is already known still answer. */
    uint64_t size = 0;
    CHECK(wgc_buffer_size(b, &size));
    EXPECT(size == 16);

    wgc_event_release(ev);
    wgc_stream_release(st);
    wgc_kernel_release(k);
    wgc_buffer_release(b);
    wgc_buffer_release(c);
    wgc_device_release(dev);
}

int main(void) {
    test_status_strings();
    test_release_null();
    TestEnv env = test_env();
    test_null_instance_device(&env);
    test_buffers(&env);
    test_kernels(&env);
    test_launches(&env);
    test_streams_events(&env);
    test_device_mismatch(&env);
    test_device_lost(&env);
    /* The shared device is unharmed by all of the above. */
    CHECK(wgc_device_synchronize(env.device));
    test_env_release(&env);
    return test_finish("test_errors");
}
