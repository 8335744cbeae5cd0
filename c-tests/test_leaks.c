/* Leak check: creating and releasing, in a loop, streams that ran launches,
 * operators and events, buffers, and kernels (one source again and again,
 * and distinct sources, with and without launches) keeps memory bounded. Checked with the library's own counters (no buffer stays
 * live, the pool stays within its limit and empties when trimmed, along
 * with the scratch a stream keeps for its next operator calls) and, on
 * Linux, with the process's resident memory after a warm-up (a generous
 * bound: a leak of a few kilobytes per object is well above it). Under
 * AddressSanitizer the resident size means nothing; LeakSanitizer checks
 * the process at exit instead. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

enum { N = 4096, WARMUP = 40, STREAM_CYCLES = 300, KERNEL_CYCLES = 600, CREATE_CYCLES = 500 };

/* Resident growth allowed per kernel created and released with nothing run
 * in between: lavapipe kept about 100 KiB of every destroyed pipeline until
 * the queue's next submission. */
#define CREATE_BOUND_PER_CYCLE (8u << 10)

static const char *SCALE =
    "struct P { k: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(1) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn scale(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = y[id.x] * p.k; }\n"
    "}\n";

/* Resident bytes of this process, or 0 where unknown. */
static uint64_t resident_bytes(void) {
#if defined(__linux__) && !defined(UNDER_ASAN)
#if defined(__GLIBC__)
    malloc_trim(0); /* give freed heap back first: only what is still held counts */
#endif
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (!f) return 0;
    if (fscanf(f, "%llu %llu", &size, &resident) != 2) resident = 0;
    fclose(f);
    return resident * (uint64_t)sysconf(_SC_PAGESIZE);
#else
    return 0;
#endif
}

static WgcMemoryStats stats(WgcDevice *dev) {
    WgcMemoryStats m;
    memset(&m, 0, sizeof m);
    m.struct_size = sizeof m;
    CHECK(wgc_device_memory_stats(dev, &m));
    return m;
}

static void launch_scale(WgcStream *st, WgcKernel *k, WgcBuffer *y, float factor) {
    struct {
        float k;
        uint32_t n;
    } p = {factor, N};
    WgcBinding b[1] = {{0, y, 0, 0}};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = 1;
    l.params = &p;
    l.params_size = sizeof p;
    l.workgroups[0] = N / 64;
    l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(st, k, &l));
}

/* A stream that runs a launch, operators (a reduction with its temporary
 * buffer, a fill) and two timed events, then everything released. */
static void stream_cycle(TestEnv *e, WgcKernel *scale, int i) {
    WgcStream *st = NULL;
    WgcBuffer *x = NULL, *sum = NULL;
    WgcEvent *a = NULL, *b = NULL;
    int64_t shape[1] = {N};
    CHECK(wgc_stream_create(e->device, &st));
    CHECK(wgc_buffer_create(e->device, N * 4, 0, &x));
    CHECK(wgc_buffer_create(e->device, 4 + 4 * (uint64_t)(i % 7), 0, &sum));
    WgcTensor tx = tensor_of(x, WGC_DTYPE_F32, 1, shape), ts = tensor_of(sum, WGC_DTYPE_F32, 0, shape);
    CHECK(wgc_stream_record_event(st, &a));
    CHECK(wgc_op_fill(st, &tx, 1.0));
    launch_scale(st, scale, x, 2.0f);
    CHECK(wgc_op_reduce(st, WGC_REDUCE_OP_SUM, &tx, NULL, 0, 0, &ts));
    CHECK(wgc_stream_record_event(st, &b));
    if (e->info.has_timestamps) {
        double ms;
        CHECK(wgc_event_elapsed_ms(a, b, &ms));
    } else {
        CHECK(wgc_event_wait(b));
    }
    float got = 0;
    CHECK(wgc_buffer_read(sum, 0, &got, 4));
    if (got != 2.0f * N) {
        fprintf(stderr, "cycle %d: sum %g, expected %g\n", i, got, 2.0 * N);
        g_failures++;
    }
    wgc_event_release(a);
    wgc_event_release(b);
    wgc_buffer_release(x);
    wgc_buffer_release(sum);
    wgc_stream_release(st);
}

/* A kernel of a source never seen before, launched once, then released. */
static void kernel_cycle(TestEnv *e, WgcBuffer *y, int i) {
    char src[512];
    snprintf(src, sizeof src,
             "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
             "@compute @workgroup_size(64)\n"
             "fn add_%d(@builtin(global_invocation_id) id: vec3<u32>) {\n"
             "    if (id.x < arrayLength(&y)) { y[id.x] = y[id.x] + %d.0; }\n"
             "}\n",
             i, i % 5);
    char entry[32];
    snprintf(entry, sizeof entry, "add_%d", i);
    WgcKernel *k = compile(e->device, src, entry);
    WgcBinding b[1] = {{0, y, 0, 0}};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = 1;
    l.workgroups[0] = N / 64;
    l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(e->stream, k, &l));
    wgc_kernel_release(k);
    if (i % 50 == 49) CHECK(wgc_stream_synchronize(e->stream));
}

/* Run `cycles` cycles after a warm-up; fail if resident memory grows more
 * than `bound` bytes or buffer memory stays live. With `settle`, the device
 * is synchronized before memory is read; without, it is read as a program
 * that never waits would see it (a synchronization submits work, which let
 * lavapipe free what it had deferred, and hid a leak). */
static void measure(TestEnv *e, const char *what, int cycles, uint64_t bound, int settle,
                    void (*cycle)(TestEnv *, void *, int), void *arg) {
    const uint64_t live0 = stats(e->device).live_bytes;
    for (int i = 0; i < WARMUP; i++) cycle(e, arg, i);
    CHECK(wgc_device_synchronize(e->device));
    const uint64_t rss0 = resident_bytes();
    for (int i = WARMUP; i < WARMUP + cycles; i++) cycle(e, arg, i);
    if (settle) CHECK(wgc_device_synchronize(e->device));
    const uint64_t rss1 = resident_bytes();
    if (!settle) CHECK(wgc_device_synchronize(e->device));
    WgcMemoryStats m = stats(e->device);
    printf("%s: %d cycles, resident %+.1f MiB (%+.2f KiB a cycle), live %llu, pooled %llu bytes\n", what, cycles,
           ((double)rss1 - (double)rss0) / 1048576.0, ((double)rss1 - (double)rss0) / 1024.0 / cycles,
           (unsigned long long)m.live_bytes, (unsigned long long)m.pooled_bytes);
    if (m.live_bytes != live0) {
        fprintf(stderr, "%s: %llu bytes live after the cycles, %llu before\n", what, (unsigned long long)m.live_bytes,
                (unsigned long long)live0);
        g_failures++;
    }
    if (rss0 && rss1 > rss0 + bound) {
        fprintf(stderr, "%s: resident memory grew by %.1f MiB over %d cycles (bound %.0f MiB)\n", what,
                (double)(rss1 - rss0) / 1048576.0, cycles, (double)bound / 1048576.0);
        g_failures++;
    }
}

static void stream_step(TestEnv *e, void *arg, int i) {
    stream_cycle(e, (WgcKernel *)arg, i);
}

static void kernel_step(TestEnv *e, void *arg, int i) {
    kernel_cycle(e, (WgcBuffer *)arg, i);
}

/* The same source created and released, nothing run: each create compiles
 * again (the last handle went), so each release must give the pipeline back. */
static void same_source_step(TestEnv *e, void *arg, int i) {
    (void)arg;
    (void)i;
    wgc_kernel_release(compile(e->device, SCALE, "scale"));
}

/* A source never seen before, created and released, nothing run. */
static void fresh_source_step(TestEnv *e, void *arg, int i) {
    (void)arg;
    char src[512];
    snprintf(src, sizeof src, "%s// kernel %d\n", SCALE, i);
    wgc_kernel_release(compile(e->device, src, "scale"));
}

int main(void) {
    TestEnv e;
    memset(&e, 0, sizeof e);
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &e.instance));
    /* A small pool limit: what the pool keeps is bounded by it. */
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.adapter_index = -1;
    o.pool_limit_bytes = 8u << 20;
    CHECK(wgc_device_create(e.instance, &o, &e.device));
    e.info.struct_size = sizeof e.info;
    CHECK(wgc_device_info(e.device, &e.info));
    CHECK(wgc_stream_create(e.device, &e.stream));

    measure(&e, "one source created and released", CREATE_CYCLES, CREATE_CYCLES * CREATE_BOUND_PER_CYCLE, 0,
            same_source_step, NULL);
    measure(&e, "distinct sources created and released", CREATE_CYCLES, CREATE_CYCLES * CREATE_BOUND_PER_CYCLE, 0,
            fresh_source_step, NULL);

    WgcKernel *scale = compile(e.device, SCALE, "scale");
    measure(&e, "streams with launches, operators and events", STREAM_CYCLES, 48u << 20, 1, stream_step, scale);
    wgc_kernel_release(scale);

    WgcBuffer *y = NULL;
    CHECK(wgc_buffer_create(e.device, N * 4, 0, &y));
    measure(&e, "kernels of distinct sources", KERNEL_CYCLES, 24u << 20, 1, kernel_step, y);
    wgc_buffer_release(y);

    /* An f32 3x3 convolution of 32 channels over 1152 pixels (Winograd, its
     * transforms in scratch the stream keeps for its next calls): the
     * scratch is live until wgc_device_trim_pool lets go of it. */
    {
        const int64_t xs[4] = {2, 32, 24, 24}, ws[4] = {32, 32, 3, 3};
        WgcBuffer *bx = NULL, *bw = NULL, *by = NULL;
        CHECK(wgc_buffer_create(e.device, 2 * 32 * 24 * 24 * 4, 0, &bx));
        CHECK(wgc_buffer_create(e.device, 32 * 32 * 9 * 4, 0, &bw));
        CHECK(wgc_buffer_create(e.device, 2 * 32 * 24 * 24 * 4, 0, &by));
        WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 4, xs), tw = tensor_of(bw, WGC_DTYPE_F32, 4, ws);
        WgcTensor ty = tensor_of(by, WGC_DTYPE_F32, 4, xs);
        WgcConv2dParams p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.stride_h = p.stride_w = p.pad_h = p.pad_w = p.dilation_h = p.dilation_w = p.groups = 1;
        const uint64_t before = stats(e.device).live_bytes;
        CHECK(wgc_op_conv2d(e.stream, &p, &tx, &tw, NULL, &ty));
        CHECK(wgc_stream_synchronize(e.stream));
        wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(by);
        const uint64_t kept = stats(e.device).live_bytes;
        printf("a Winograd convolution: %llu bytes live before, %llu after (the stream's kept scratch)\n",
               (unsigned long long)before, (unsigned long long)kept);
        EXPECT(kept > 0);
    }
    WgcMemoryStats m = stats(e.device);
    EXPECT(m.pooled_bytes <= o.pool_limit_bytes);
    EXPECT(m.live_bytes <= m.peak_bytes);
    CHECK(wgc_device_trim_pool(e.device, 0));
    m = stats(e.device);
    EXPECT(m.pooled_bytes == 0);
    EXPECT(m.live_bytes == 0);
    test_env_release(&e);
    return test_finish("test_leaks");
}
