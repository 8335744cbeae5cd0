/* Caches let go of what callers release: streams that ran launches (their
 * uniform arenas were kept by cached bind groups) and kernels (kept by the
 * kernel cache). Checked with the library's own counters and, generously,
 * with the process's resident memory. */
#include "test_util.h"

enum { STREAMS = 300, KERNELS = 60 };

static const char *SRC_FMT =
    "struct P { add: f32 }\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(1) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < arrayLength(&y)) { y[id.x] = y[id.x] + p.add + %d.0; }\n"
    "}\n";

static double rss_mib(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return resident * 4096.0 / (1 << 20);
}

static WgcMemoryStats stats(WgcDevice *dev) {
    WgcMemoryStats s;
    memset(&s, 0xff, sizeof s); /* fields the library does not write stay huge */
    s.struct_size = sizeof s;
    CHECK(wgc_device_memory_stats(dev, &s));
    return s;
}

static void add(WgcStream *s, WgcKernel *k, WgcBuffer *y, float v) {
    WgcBinding b = {0, y, 0, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = &b;
    l.binding_count = 1;
    l.params = &v;
    l.params_size = 4;
    l.workgroups[0] = l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(s, k, &l));
}

static WgcKernel *kernel_n(WgcDevice *dev, int n) {
    char src[1024];
    snprintf(src, sizeof src, SRC_FMT, n);
    return compile(dev, src, "main");
}

static void test_streams(TestEnv *e) {
    WgcKernel *k = kernel_n(e->device, 0);
    WgcBuffer *y = NULL;
    CHECK(wgc_buffer_create(e->device, 256, WGC_BUFFER_USAGE_STORAGE, &y));
    add(e->stream, k, y, 1);
    CHECK(wgc_device_synchronize(e->device));
    WgcMemoryStats before = stats(e->device);
    double rss_before = rss_mib();
    for (int i = 0; i < STREAMS; i++) {
        WgcStream *s = NULL;
        CHECK(wgc_stream_create(e->device, &s));
        add(s, k, y, 1);
        CHECK(wgc_stream_synchronize(s));
        wgc_stream_release(s);
    }
    CHECK(wgc_device_synchronize(e->device));
    WgcMemoryStats after = stats(e->device);
    double grew = rss_mib() - rss_before;
    printf("%d streams: bind groups %llu -> %llu, resident memory +%.1f MiB\n", STREAMS,
           (unsigned long long)before.cached_bind_groups, (unsigned long long)after.cached_bind_groups, grew);
    EXPECT(after.cached_bind_groups <= before.cached_bind_groups + 4);
    EXPECT(grew < STREAMS / 4.0); /* each kept arena was 1 MiB */
    float got = 0;
    CHECK(wgc_buffer_read(y, 0, &got, 4));
    EXPECT(got == 1.0f + STREAMS);
    wgc_buffer_release(y);
    wgc_kernel_release(k);
}

static void test_kernels(TestEnv *e) {
    WgcBuffer *y = NULL;
    CHECK(wgc_buffer_create(e->device, 256, WGC_BUFFER_USAGE_STORAGE, &y));
    WgcKernel *warm = kernel_n(e->device, 1000);
    add(e->stream, warm, y, 0);
    wgc_kernel_release(warm);
    CHECK(wgc_device_synchronize(e->device));
    WgcMemoryStats before = stats(e->device);
    for (int i = 1; i <= KERNELS; i++) {
        WgcKernel *k = kernel_n(e->device, i);
        WgcKernel *again = kernel_n(e->device, i); /* the cached one */
        if (i == 1) EXPECT(stats(e->device).cached_kernels == before.cached_kernels + 1);
        add(e->stream, k, y, 0);
        add(e->stream, again, y, 0);
        wgc_kernel_release(k);
        add(e->stream, again, y, 0); /* still usable with one handle left */
        wgc_kernel_release(again);
    }
    CHECK(wgc_device_synchronize(e->device));
    WgcMemoryStats after = stats(e->device);
    printf("%d kernels: cached kernels %llu -> %llu, bind groups %llu -> %llu\n", KERNELS,
           (unsigned long long)before.cached_kernels, (unsigned long long)after.cached_kernels,
           (unsigned long long)before.cached_bind_groups, (unsigned long long)after.cached_bind_groups);
    EXPECT(after.cached_kernels == before.cached_kernels);
    EXPECT(after.cached_bind_groups <= before.cached_bind_groups);
    float got = 0;
    CHECK(wgc_buffer_read(y, 0, &got, 4));
    double want = 1000;
    for (int i = 1; i <= KERNELS; i++) want += 3.0 * i;
    EXPECT(got == (float)want);
    wgc_buffer_release(y);
}

int main(void) {
    TestEnv env = test_env();
    test_streams(&env);
    test_kernels(&env);
    test_env_release(&env);
    return test_finish("test_cache_bounds");
}
