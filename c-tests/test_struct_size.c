/* `struct_size` decides which fields the library reads or writes: fields it
 * covers fully are used, fields past it keep their defaults, and a size that
 * ends inside a field is refused (reading part of a pointer used to crash).
 * Every struct that begins with struct_size is covered here. */
#include <stddef.h>

#include "test_util.h"

#define SENTINEL ((void *)(uintptr_t)0x5a5a5a5a)

static const char *COPY =
    "@group(0) @binding(0) var<storage, read_write> y: array<u32>;\n"
    "@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3<u32>) { y[w.x] = w.x + 1u; }\n";

static void test_kernel_desc(TestEnv *e) {
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.source = COPY;
    d.entry_point = "main";
    WgcKernel *k = (WgcKernel *)SENTINEL;
    /* Ends inside `source` (the case: 9) and inside `entry_point`. */
    size_t inside[] = {9, offsetof(WgcKernelDesc, source) + 4, offsetof(WgcKernelDesc, entry_point) + 1};
    for (size_t i = 0; i < 3; i++) {
        d.struct_size = (uint32_t)inside[i];
        EXPECT_STATUS(wgc_kernel_create(e->device, &d, &k), WGC_ERROR_INVALID_ARGUMENT);
        EXPECT(k == (WgcKernel *)SENTINEL);
    }
    /* Covering source but not entry_point: entry_point is NULL (its default). */
    d.struct_size = offsetof(WgcKernelDesc, entry_point);
    EXPECT_STATUS(wgc_kernel_create(e->device, &d, &k), WGC_ERROR_NULL_POINTER);
    /* An older struct without skip_bounds_checks compiles. */
    d.struct_size = offsetof(WgcKernelDesc, skip_bounds_checks);
    CHECK(wgc_kernel_create(e->device, &d, &k));
    wgc_kernel_release(k);
}

static void test_device_options(TestEnv *e) {
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o);
    o.adapter_index = -1;
    o.pipeline_cache_path = "/nonexistent-dir/wgc-cache.bin";
    WgcDevice *d = (WgcDevice *)SENTINEL;
    o.struct_size = offsetof(WgcDeviceOptions, pipeline_cache_path) + 1; /* the 17 */
    EXPECT_STATUS(wgc_device_create(e->instance, &o, &d), WGC_ERROR_INVALID_ARGUMENT);
    o.struct_size = offsetof(WgcDeviceOptions, pool_limit_bytes) + 7;
    EXPECT_STATUS(wgc_device_create(e->instance, &o, &d), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(d == (WgcDevice *)SENTINEL);
    /* Up to the preference only: no cache path is read. */
    o.struct_size = offsetof(WgcDeviceOptions, pipeline_cache_path);
    CHECK(wgc_device_create(e->instance, &o, &d));
    wgc_device_release(d);
}

static void test_launch(TestEnv *e) {
    WgcKernel *k = compile(e->device, COPY, "main");
    uint32_t zeros[4] = {0, 0, 0, 0}, host[4];
    WgcBuffer *b = upload(e->device, zeros, sizeof zeros);
    WgcBuffer *ind = NULL;
    CHECK(wgc_buffer_create(e->device, 16, WGC_BUFFER_USAGE_INDIRECT, &ind));
    uint32_t counts[4] = {3, 1, 1, 0};
    CHECK(wgc_buffer_write(ind, 0, counts, sizeof counts));
    WgcBinding bind = {0, b, 0, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.bindings = &bind;
    l.binding_count = 1;
    l.workgroups[0] = 2;
    l.workgroups[1] = l.workgroups[2] = 1;
    l.indirect_buffer = ind;
    /* Ends inside indirect_buffer (the 60), bindings, params. */
    size_t inside[] = {offsetof(WgcLaunch, indirect_buffer) + 4, offsetof(WgcLaunch, bindings) + 2,
                       offsetof(WgcLaunch, params) + 5, offsetof(WgcLaunch, workgroups) + 6};
    for (size_t i = 0; i < 4; i++) {
        l.struct_size = (uint32_t)inside[i];
        EXPECT_STATUS(wgc_stream_launch(e->stream, k, &l), WGC_ERROR_INVALID_ARGUMENT);
    }
    CHECK(wgc_buffer_read(b, 0, host, sizeof host));
    EXPECT(host[0] == 0 && host[1] == 0 && host[2] == 0); /* nothing was recorded */
    /* Without the indirect fields: a direct launch of 2 workgroups. */
    l.struct_size = offsetof(WgcLaunch, indirect_buffer);
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(b, 0, host, sizeof host));
    EXPECT(host[0] == 1 && host[1] == 2 && host[2] == 0);
    /* All of it: 3 workgroups from the indirect buffer. */
    l.struct_size = sizeof l;
    CHECK(wgc_stream_launch(e->stream, k, &l));
    CHECK(wgc_buffer_read(b, 0, host, sizeof host));
    EXPECT(host[0] == 1 && host[1] == 2 && host[2] == 3);
    wgc_buffer_release(ind);
    wgc_buffer_release(b);
    wgc_kernel_release(k);
}

static void test_op_params(TestEnv *e) {
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    WgcBuffer *bi = upload(e->device, x, sizeof x), *bo = NULL;
    CHECK(wgc_buffer_create(e->device, 64, WGC_BUFFER_USAGE_STORAGE, &bo));
    int64_t in_shape[4] = {1, 1, 4, 4}, out_shape[4] = {1, 1, 2, 2}, w_shape[4] = {1, 1, 3, 3};
    WgcTensor ti = tensor_of(bi, WGC_DTYPE_F32, 4, in_shape), to = tensor_of(bo, WGC_DTYPE_F32, 4, out_shape);
    WgcPool2dParams p;
    memset(&p, 0, sizeof p);
    p.kernel_h = p.kernel_w = 2;
    p.struct_size = offsetof(WgcPool2dParams, kernel_w) + 2;
    EXPECT_STATUS(wgc_op_max_pool2d(e->stream, &p, &ti, &to), WGC_ERROR_INVALID_ARGUMENT);
    p.struct_size = sizeof p;
    CHECK(wgc_op_max_pool2d(e->stream, &p, &ti, &to));
    float got[4];
    CHECK(wgc_buffer_read(bo, 0, got, sizeof got));
    EXPECT(got[0] == 5 && got[1] == 7 && got[2] == 13 && got[3] == 15);

    WgcBuffer *bw = NULL;
    CHECK(wgc_buffer_create(e->device, 36, WGC_BUFFER_USAGE_STORAGE, &bw));
    WgcTensor tw = tensor_of(bw, WGC_DTYPE_F32, 4, w_shape);
    WgcConv2dParams c;
    memset(&c, 0, sizeof c);
    c.struct_size = offsetof(WgcConv2dParams, groups) + 3;
    EXPECT_STATUS(wgc_op_conv2d(e->stream, &c, &ti, &tw, NULL, &to), WGC_ERROR_INVALID_ARGUMENT);
    c.struct_size = offsetof(WgcConv2dParams, pad_h); /* strides only: stride 1, no padding */
    CHECK(wgc_op_conv2d(e->stream, &c, &ti, &tw, NULL, &to));
    CHECK(wgc_stream_synchronize(e->stream));
    wgc_buffer_release(bw);
    wgc_buffer_release(bi);
    wgc_buffer_release(bo);
}

/* Output structs: no byte past struct_size is written, and a size inside a
 * field leaves the whole struct untouched. */
static void test_outputs(TestEnv *e) {
    WgcAdapterInfo info;
    memset(&info, 0xab, sizeof info);
    info.struct_size = offsetof(WgcAdapterInfo, name) + 10;
    EXPECT_STATUS(wgc_device_info(e->device, &info), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(info.vendor_id == 0xabababab);
    info.struct_size = offsetof(WgcAdapterInfo, name);
    CHECK(wgc_device_info(e->device, &info));
    EXPECT(info.struct_size == offsetof(WgcAdapterInfo, name));
    EXPECT((unsigned char)info.name[0] == 0xab);
    info.struct_size = offsetof(WgcAdapterInfo, vendor_id) + 2;
    EXPECT_STATUS(wgc_instance_adapter_info(e->instance, 0, &info), WGC_ERROR_INVALID_ARGUMENT);

    WgcMemoryStats stats;
    memset(&stats, 0xab, sizeof stats);
    stats.struct_size = offsetof(WgcMemoryStats, live_bytes) + 4;
    EXPECT_STATUS(wgc_device_memory_stats(e->device, &stats), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(stats.live_bytes == 0xababababababababull);
    stats.struct_size = offsetof(WgcMemoryStats, peak_bytes);
    CHECK(wgc_device_memory_stats(e->device, &stats));
    EXPECT(stats.live_bytes != 0xababababababababull && stats.peak_bytes == 0xababababababababull);
}

int main(void) {
    TestEnv e = test_env();
    test_kernel_desc(&e);
    test_device_options(&e);
    test_launch(&e);
    test_op_params(&e);
    test_outputs(&e);
    test_env_release(&e);
    return test_finish("test_struct_size");
}
