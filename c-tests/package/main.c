/* Smallest useful wgcompute program: double 256 numbers on the GPU. */
#include <stdio.h>
#include "wgcompute.h"

#define N 256

static int fail(const char *what, WgcStatus s) {
    fprintf(stderr, "%s: %s: %s\n", what, wgc_status_string(s), wgc_last_error_message());
    return 1;
}

int main(void) {
    static const char *src =
        "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n"
        "@compute @workgroup_size(64)\n"
        "fn twice(@builtin(global_invocation_id) id: vec3<u32>) {\n"
        "    if (id.x < arrayLength(&x)) { x[id.x] = 2.0 * x[id.x]; }\n"
        "}\n";
    WgcInstance *instance = NULL;
    WgcDevice *device = NULL;
    WgcBuffer *buffer = NULL;
    WgcKernel *kernel = NULL;
    WgcStream *stream = NULL;
    WgcStatus s;
    float data[N];
    int i, bad = 0;
    for (i = 0; i < N; i++) data[i] = (float)i;

    if ((s = wgc_instance_create(WGC_ABI_VERSION, &instance))) return fail("instance", s);
    if ((s = wgc_device_create(instance, NULL, &device))) return fail("device", s);
    if ((s = wgc_buffer_create(device, sizeof data, WGC_BUFFER_USAGE_STORAGE, &buffer))) return fail("buffer", s);
    if ((s = wgc_buffer_write(buffer, 0, data, sizeof data))) return fail("write", s);
    {
        WgcKernelDesc desc = {0};
        WgcBinding binding = {0};
        WgcLaunch launch = {0};
        desc.struct_size = sizeof desc;
        desc.source = src;
        desc.entry_point = "twice";
        if ((s = wgc_kernel_create(device, &desc, &kernel))) return fail("kernel", s);
        if ((s = wgc_stream_create(device, &stream))) return fail("stream", s);
        binding.buffer = buffer;
        launch.struct_size = sizeof launch;
        launch.bindings = &binding;
        launch.binding_count = 1;
        launch.workgroups[0] = N / 64;
        launch.workgroups[1] = launch.workgroups[2] = 1;
        if ((s = wgc_stream_launch(stream, kernel, &launch))) return fail("launch", s);
    }
    if ((s = wgc_buffer_read(buffer, 0, data, sizeof data))) return fail("read", s);
    for (i = 0; i < N; i++) bad += data[i] != 2.0f * (float)i;
    printf("wgcompute %u.%u.%u: %s\n", wgc_version() >> 16, (wgc_version() >> 8) & 0xff, wgc_version() & 0xff,
           bad ? "WRONG" : "ok");

    wgc_stream_release(stream);
    wgc_kernel_release(kernel);
    wgc_buffer_release(buffer);
    wgc_device_release(device);
    wgc_instance_release(instance);
    return bad != 0;
}
