/* Enumerate adapters, then run a custom WGSL kernel: y = a * x + y. */
#include <stdio.h>
#include <stdlib.h>
#include "wgcompute.h"

#define CHECK(call)                                                          \
    do {                                                                     \
        WgcStatus s_ = (call);                                               \
        if (s_ != WGC_OK) {                                                  \
            fprintf(stderr, "%s failed: %s: %s\n", #call,                    \
                    wgc_status_string(s_), wgc_last_error_message());        \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static const char *SAXPY =
    "struct Params { a: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p: Params;\n"
    "@compute @workgroup_size(64)\n"
    "fn saxpy(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = p.a * x[id.x] + y[id.x]; }\n"
    "}\n";

int main(void) {
    WgcInstance *instance = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &instance));
    uint32_t count = 0;
    CHECK(wgc_instance_adapter_count(instance, &count));
    for (uint32_t i = 0; i < count; i++) {
        WgcAdapterInfo info = {0};
        info.struct_size = sizeof info;
        CHECK(wgc_instance_adapter_info(instance, i, &info));
        printf("adapter %u: %s (driver: %s) f16=%u subgroups=%u timestamps=%u\n", i, info.name, info.driver,
               info.has_f16, info.has_subgroups, info.has_timestamps);
    }

    WgcDevice *device = NULL;
    CHECK(wgc_device_create(instance, NULL, &device));

    enum { N = 1000 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) { x[i] = (float)i; y[i] = 1.0f; }
    WgcBuffer *bx = NULL, *by = NULL;
    CHECK(wgc_buffer_create(device, sizeof x, WGC_BUFFER_USAGE_STORAGE, &bx));
    CHECK(wgc_buffer_create(device, sizeof y, WGC_BUFFER_USAGE_STORAGE, &by));
    CHECK(wgc_buffer_write(bx, 0, x, sizeof x));
    CHECK(wgc_buffer_write(by, 0, y, sizeof y));

    WgcKernelDesc desc = {0};
    desc.struct_size = sizeof desc;
    desc.source = SAXPY;
    desc.entry_point = "saxpy";
    WgcKernel *kernel = NULL;
    CHECK(wgc_kernel_create(device, &desc, &kernel));

    WgcStream *stream = NULL;
    CHECK(wgc_stream_create(device, &stream));
    struct { float a; uint32_t n; } params = {2.0f, N};
    WgcBinding bindings[2] = {{0, bx, 0, 0}, {1, by, 0, 0}};
    WgcLaunch launch = {0};
    launch.struct_size = sizeof launch;
    launch.bindings = bindings;
    launch.binding_count = 2;
    launch.params = &params;
    launch.params_size = sizeof params;
    launch.workgroups[0] = (N + 63) / 64;
    launch.workgroups[1] = 1;
    launch.workgroups[2] = 1;
    CHECK(wgc_stream_launch(stream, kernel, &launch));
    CHECK(wgc_buffer_read(by, 0, y, sizeof y));

    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != 2.0f * (float)i + 1.0f;
    printf("saxpy on %d elements: %s (y[999] = %g)\n", N, bad ? "WRONG" : "correct", y[N - 1]);

    wgc_stream_release(stream);
    wgc_kernel_release(kernel);
    wgc_buffer_release(bx);
    wgc_buffer_release(by);
    wgc_device_release(device);
    wgc_instance_release(instance);
    return bad != 0;
}
