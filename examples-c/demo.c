/* wgcompute demo: pick an adapter, say what it is, run a WGSL kernel on a
 * million numbers, time it on the GPU, check the result on the CPU, then run
 * two built-in operators (softmax and a row sum) on views of the result.
 * Choose the adapter with WGC_ADAPTER=<index or part of the name>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "wgcompute.h"

#define CHECK(call)                                                                   \
    do {                                                                              \
        WgcStatus s_ = (call);                                                        \
        if (s_ != WGC_OK) {                                                           \
            fprintf(stderr, "%s failed: %s: %s\n", #call, wgc_status_string(s_),      \
                    wgc_last_error_message());                                        \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* y = sqrt(x) * x + 1, one element per invocation; a 2D grid because one
 * dimension holds at most 65535 workgroups. */
static const char *KERNEL =
    "struct Params { n: u32, row: u32 }\n"
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p: Params;\n"
    "@compute @workgroup_size(256)\n"
    "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    let i = id.y * p.row + id.x;\n"
    "    if (i < p.n) { y[i] = sqrt(x[i]) * x[i] + 1.0; }\n"
    "}\n";

static const char *backend_name(WgcBackend b) {
    switch (b) {
    case WGC_BACKEND_VULKAN: return "Vulkan";
    case WGC_BACKEND_METAL: return "Metal";
    case WGC_BACKEND_DX12: return "DX12";
    case WGC_BACKEND_GL: return "OpenGL";
    default: return "other";
    }
}

int main(void) {
    enum { N = 1 << 20, WG = 256 };
    WgcInstance *instance = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &instance));

    uint32_t count = 0;
    CHECK(wgc_instance_adapter_count(instance, &count));
    printf("wgcompute %u.%u.%u, %u adapter(s):\n", wgc_version() >> 16, (wgc_version() >> 8) & 0xff,
           wgc_version() & 0xff, count);
    for (uint32_t i = 0; i < count; i++) {
        WgcAdapterInfo a = {0};
        a.struct_size = sizeof a;
        CHECK(wgc_instance_adapter_info(instance, i, &a));
        printf("  [%u] %s (%s, %s)\n", i, a.name, backend_name(a.backend), a.driver);
    }

    /* NULL options: WGC_ADAPTER if set, else the fastest adapter present. */
    WgcDevice *device = NULL;
    CHECK(wgc_device_create(instance, NULL, &device));
    WgcAdapterInfo info = {0};
    info.struct_size = sizeof info;
    CHECK(wgc_device_info(device, &info));
    printf("using: %s on %s\n", info.name, backend_name(info.backend));
    printf("  max buffer %.0f MiB, max workgroup %u invocations, f16 %s, subgroups %s (%u..%u), timestamps %s\n",
           (double)info.limits.max_buffer_size / (1 << 20), info.limits.max_compute_invocations_per_workgroup,
           info.has_f16 ? "yes" : "no", info.has_subgroups ? "yes" : "no", info.subgroup_min_size,
           info.subgroup_max_size, info.has_timestamps ? "yes" : "no");

    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    if (!x || !y) return 1;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 1000) * 0.01f;

    WgcBuffer *bx = NULL, *by = NULL;
    CHECK(wgc_buffer_create(device, N * sizeof *x, WGC_BUFFER_USAGE_STORAGE, &bx));
    CHECK(wgc_buffer_create(device, N * sizeof *y, WGC_BUFFER_USAGE_STORAGE, &by));
    CHECK(wgc_buffer_write(bx, 0, x, N * sizeof *x));

    WgcKernelDesc desc = {0};
    desc.struct_size = sizeof desc;
    desc.source = KERNEL;
    desc.entry_point = "main";
    WgcKernel *kernel = NULL;
    CHECK(wgc_kernel_create(device, &desc, &kernel));

    uint32_t groups = (N + WG - 1) / WG, gx = groups < 32768 ? groups : 32768, gy = (groups + gx - 1) / gx;
    struct { uint32_t n, row; } params = {N, gx * WG};
    WgcBinding bindings[2] = {{0, bx, 0, 0}, {1, by, 0, 0}};
    WgcLaunch launch = {0};
    launch.struct_size = sizeof launch;
    launch.bindings = bindings;
    launch.binding_count = 2;
    launch.params = &params;
    launch.params_size = sizeof params;
    launch.workgroups[0] = gx;
    launch.workgroups[1] = gy;
    launch.workgroups[2] = 1;

    WgcStream *stream = NULL;
    CHECK(wgc_stream_create(device, &stream));
    WgcEvent *start = NULL, *end = NULL;
    CHECK(wgc_stream_record_event(stream, &start));
    CHECK(wgc_stream_launch(stream, kernel, &launch));
    CHECK(wgc_stream_record_event(stream, &end));
    CHECK(wgc_buffer_read(by, 0, y, N * sizeof *y));
    double ms = 0;
    if (info.has_timestamps && wgc_event_elapsed_ms(start, end, &ms) == WGC_OK)
        printf("kernel on %d elements: %.3f ms of GPU time\n", N, ms);

    int bad = 0;
    for (int i = 0; i < N; i++) {
        double ref = sqrt((double)x[i]) * x[i] + 1.0;
        bad += fabs(y[i] - ref) > 1e-5 * (1.0 + fabs(ref));
    }
    printf("result check: %s (%d of %d wrong; y[%d] = %g)\n", bad ? "FAILED" : "ok", bad, N, N - 1, y[N - 1]);

    /* Built-in operators on tensor views of the same buffers: softmax over
     * the rows of y seen as a 1024 x 1024 matrix, then the sum of each row,
     * which must be 1. */
    int64_t shape[2] = {1024, 1024}, rows_shape[1] = {1024};
    WgcBuffer *bs = NULL, *bsum = NULL;
    CHECK(wgc_buffer_create(device, N * sizeof(float), WGC_BUFFER_USAGE_STORAGE, &bs));
    CHECK(wgc_buffer_create(device, 1024 * sizeof(float), WGC_BUFFER_USAGE_STORAGE, &bsum));
    WgcTensor ty, ts, tsum;
    CHECK(wgc_tensor_contiguous(by, WGC_DTYPE_F32, 2, shape, &ty));
    CHECK(wgc_tensor_contiguous(bs, WGC_DTYPE_F32, 2, shape, &ts));
    CHECK(wgc_tensor_contiguous(bsum, WGC_DTYPE_F32, 1, rows_shape, &tsum));
    int32_t last_axis = 1;
    CHECK(wgc_op_softmax(stream, &ty, -1, &ts));
    CHECK(wgc_op_reduce(stream, WGC_REDUCE_OP_SUM, &ts, &last_axis, 1, 0, &tsum));
    float sums[1024];
    CHECK(wgc_buffer_read(bsum, 0, sums, sizeof sums));
    int bad_rows = 0;
    for (int r = 0; r < 1024; r++) bad_rows += fabs(sums[r] - 1.0) > 1e-4;
    printf("softmax rows sum to 1: %s (%d of 1024 rows off)\n", bad_rows ? "FAILED" : "ok", bad_rows);
    bad += bad_rows;
    wgc_buffer_release(bs);
    wgc_buffer_release(bsum);

    wgc_event_release(start);
    wgc_event_release(end);
    wgc_stream_release(stream);
    wgc_kernel_release(kernel);
    wgc_buffer_release(bx);
    wgc_buffer_release(by);
    wgc_device_release(device);
    wgc_instance_release(instance);
    free(x);
    free(y);
    return bad != 0;
}
