/* What the GPU layer would reject when a batch is submitted is refused when
 * the launch is recorded, and other recorded work is unaffected; indirect
 * workgroup counts above the adapter's limit run nothing. */
#include "test_util.h"

static const char *SRC =
    "struct P { v: u32 }\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<atomic<u32>>;\n"
    "@compute @workgroup_size(1)\n"
    "fn count() { atomicAdd(&y[0], 1u); }\n"
    "@group(0) @binding(1) var<storage, read> x: array<u32>;\n"
    "@compute @workgroup_size(1)\n"
    "fn count_read() { atomicAdd(&y[0], x[0]); }\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@compute @workgroup_size(1)\n"
    "fn count_uniform() { atomicAdd(&y[0], p.v); }\n";

static WgcBuffer *buffer(WgcDevice *dev, uint64_t size, uint32_t usage) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, size, usage, &b));
    return b;
}

static uint32_t read_u32(WgcBuffer *b, uint64_t offset) {
    uint32_t v = 0xdeadbeef;
    CHECK(wgc_buffer_read(b, offset, &v, 4));
    return v;
}

static WgcLaunch launch_desc(const WgcBinding *b, uint32_t n) {
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = n;
    l.workgroups[0] = l.workgroups[1] = l.workgroups[2] = 1;
    return l;
}

static void write_counts(WgcBuffer *b, uint64_t offset, uint32_t x, uint32_t y, uint32_t z) {
    uint32_t c[3] = {x, y, z};
    CHECK(wgc_buffer_write(b, offset, c, sizeof c));
}

/* A buffer written by the launch may not also be its indirect or uniform
 * buffer, nor be bound read-only; the fill recorded before is not lost and
 * the next unrelated call succeeds. */
static void test_conflicts(TestEnv *e) {
    WgcKernel *count = compile(e->device, SRC, "count");
    WgcKernel *count_read = compile(e->device, SRC, "count_read");
    WgcKernel *count_uniform = compile(e->device, SRC, "count_uniform");
    WgcBuffer *a = buffer(e->device, 64, WGC_BUFFER_USAGE_STORAGE);
    WgcBuffer *both = buffer(e->device, 512, WGC_BUFFER_USAGE_ALL);
    WgcBuffer *other = buffer(e->device, 64, WGC_BUFFER_USAGE_STORAGE);
    write_counts(both, 0, 1, 1, 1);
    uint32_t zero = 0;

    CHECK(wgc_stream_fill_buffer(e->stream, a, 0, 64, 7));
    WgcBinding b = {0, both, 0, 0};
    WgcLaunch l = launch_desc(&b, 1);
    l.indirect_buffer = both;
    EXPECT_STATUS(wgc_stream_launch(e->stream, count, &l), WGC_ERROR_BINDING_MISMATCH);

    WgcBinding bu[2] = {{0, both, 0, 0}, {2, both, 0, 16}};
    l = launch_desc(bu, 2);
    EXPECT_STATUS(wgc_stream_launch(e->stream, count_uniform, &l), WGC_ERROR_BINDING_MISMATCH);

    WgcBinding br[2] = {{0, both, 0, 16}, {1, both, 256, 16}}; /* disjoint ranges */
    l = launch_desc(br, 2);
    EXPECT_STATUS(wgc_stream_launch(e->stream, count_read, &l), WGC_ERROR_BINDING_MISMATCH);

    EXPECT_STATUS(wgc_buffer_write(other, 0, &zero, 4), WGC_OK);
    CHECK(wgc_stream_synchronize(e->stream));
    EXPECT(read_u32(a, 60) == 7);

    /* Read-only uses together are fine: counts and a read-only binding in
     * one buffer, the counter in another. */
    WgcBuffer *y = buffer(e->device, 16, WGC_BUFFER_USAGE_STORAGE);
    uint32_t counts[4] = {3, 1, 1, 5}; /* x, y, z of the grid; then x[0] */
    CHECK(wgc_buffer_write(both, 0, counts, sizeof counts));
    WgcBinding ok[2] = {{0, y, 0, 0}, {1, both, 0, 0}};
    l = launch_desc(ok, 2);
    l.indirect_buffer = both;
    CHECK(wgc_stream_launch(e->stream, count_read, &l));
    EXPECT(read_u32(y, 0) == 3 * 3);

    wgc_buffer_release(y);
    wgc_buffer_release(a);
    wgc_buffer_release(both);
    wgc_buffer_release(other);
    wgc_kernel_release(count);
    wgc_kernel_release(count_read);
    wgc_kernel_release(count_uniform);
}

/* Indirect counts within the limit run; any count above it runs nothing,
 * and the device stays responsive. */
static void test_indirect_counts(TestEnv *e) {
    uint32_t limit = e->info.limits.max_compute_workgroups_per_dimension;
    WgcKernel *count = compile(e->device, SRC, "count");
    WgcBuffer *y = buffer(e->device, 16, WGC_BUFFER_USAGE_STORAGE);
    WgcBuffer *args = buffer(e->device, 512, WGC_BUFFER_USAGE_INDIRECT);
    WgcBinding b = {0, y, 0, 0};
    WgcLaunch l = launch_desc(&b, 1);
    l.indirect_buffer = args;

    write_counts(args, 0, 2, 3, 1);
    write_counts(args, 300, 4, 1, 1); /* an offset that is not 256-aligned */
    CHECK(wgc_stream_launch(e->stream, count, &l));
    l.indirect_offset = 300;
    CHECK(wgc_stream_launch(e->stream, count, &l));
    EXPECT(read_u32(y, 0) == 2 * 3 + 4);

    CHECK(wgc_stream_fill_buffer(e->stream, y, 0, 16, 0));
    write_counts(args, 0, limit + 1, 1, 1);
    write_counts(args, 16, 1, limit + 1, 1);
    write_counts(args, 32, 1, 1, limit + 1);
    for (uint64_t off = 0; off <= 32; off += 16) {
        l.indirect_offset = off;
        CHECK(wgc_stream_launch(e->stream, count, &l));
    }
    uint32_t ran = read_u32(y, 0);
    if (ran != 0) {
        fprintf(stderr, "indirect counts above the limit %u ran %u workgroups\n", limit, ran);
        g_failures++;
        /* Without the check, the next case would keep the GPU busy for minutes. */
    } else {
        write_counts(args, 0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu);
        l.indirect_offset = 0;
        CHECK(wgc_stream_launch(e->stream, count, &l));
        EXPECT(read_u32(y, 0) == 0);
    }
    /* The limit itself is allowed. */
    write_counts(args, 0, limit, 1, 1);
    CHECK(wgc_stream_launch(e->stream, count, &l));
    EXPECT(read_u32(y, 0) == limit);

    wgc_buffer_release(y);
    wgc_buffer_release(args);
    wgc_kernel_release(count);
}

int main(void) {
    TestEnv env = test_env();
    test_conflicts(&env);
    test_indirect_counts(&env);
    test_env_release(&env);
    return test_finish("test_launch_checks");
}
