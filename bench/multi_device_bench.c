/* Several devices: copies between devices (256 MiB and 1 GiB, both
 * directions), all-reduce bus bandwidth (256 MiB and 1 GiB of f32) and
 * small all-reduce latency (8-64 KiB), with the host link measured in the
 * same run through the library (a buffer write and read of the same size)
 * and a plain host memcpy. bench/torch_multi_gpu.py is the PyTorch / NCCL
 * twin (pinned host copies, peer copies, NCCL all-reduce).
 *
 *   multi_device_bench [--devices N] [--same-adapter] [--small]
 *
 * Devices: the first N adapters that are not CPUs (--same-adapter: N
 * devices on the default adapter). --small: 2 devices on the default adapter
 * and small sizes, checking every result (runs on lavapipe). Every timed
 * operation is checked against its expected values first. Times are host
 * clock around the call and a synchronize of every stream involved,
 * medians. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

/* Libraries from before the route query lack it: print "unknown" there. */
#pragma weak wgc_device_peer_route

#define MAX_DEV 8

static int g_n = 2;
static int g_small = 0;
static WgcDevice *g_dev[MAX_DEV];
static WgcStream *g_stream[MAX_DEV];

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void sync_all(void) {
    for (int i = 0; i < g_n; i++) CHECK(wgc_stream_synchronize(g_stream[i]));
}

static WgcBuffer *make(int d, uint64_t bytes) {
    WgcBuffer *b;
    CHECK(wgc_buffer_create(g_dev[d], bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static WgcTensor flat_f32(WgcBuffer *b, uint64_t bytes) {
    int64_t n = (int64_t)(bytes / 4);
    WgcTensor t;
    CHECK(wgc_tensor_contiguous(b, WGC_DTYPE_F32, 1, &n, &t));
    return t;
}

/* Read `bytes` at a few places of `b` (all of it when small) and compare
 * with `want`'s same bytes; exits on a mismatch. */
static void check_bytes(WgcBuffer *b, const uint8_t *want, uint64_t size, const char *what) {
    uint64_t window = size < (4u << 20) ? size : (1u << 20);
    uint64_t at[3] = {0, (size / 2) / 4 * 4, size - window};
    uint8_t *got = malloc(window);
    for (int k = 0; k < 3; k++) {
        uint64_t off = at[k] + window > size ? size - window : at[k];
        CHECK(wgc_buffer_read(b, off, got, window));
        if (memcmp(got, want + off, window) != 0) {
            fprintf(stderr, "%s: wrong bytes near offset %llu\n", what, (unsigned long long)off);
            exit(1);
        }
    }
    free(got);
}

/* Every element of the sampled windows equals `value`. */
static void check_value(WgcBuffer *b, uint64_t size, float value, const char *what) {
    uint64_t window = size < (4u << 20) ? size : (1u << 20);
    uint64_t at[3] = {0, (size / 2) / 4 * 4, size - window};
    float *got = malloc(window);
    for (int k = 0; k < 3; k++) {
        uint64_t off = at[k] + window > size ? size - window : at[k];
        CHECK(wgc_buffer_read(b, off, got, window));
        for (uint64_t i = 0; i < window / 4; i++) {
            if (got[i] != value) {
                fprintf(stderr, "%s: element %llu is %g, expected %g\n", what, (unsigned long long)(off / 4 + i),
                        got[i], value);
                exit(1);
            }
        }
    }
    free(got);
}

static void bench_host_link(uint64_t size, int iters) {
    uint8_t *host = malloc(size), *copy = malloc(size);
    for (uint64_t i = 0; i < size; i++) host[i] = (uint8_t)(i * 131 + 7);
    double t[16];
    for (int it = 0; it < iters; it++) {
        double t0 = now_ms();
        memcpy(copy, host, size);
        t[it] = now_ms() - t0;
    }
    double ms = median(t, iters);
    printf("host memcpy %llu MiB (one thread, pageable): %.2f ms, %.1f GB/s\n", (unsigned long long)(size >> 20), ms,
           size / ms / 1e6);
    for (int d = 0; d < g_n && d < 2; d++) {
        WgcBuffer *b = make(d, size);
        for (int it = 0; it < iters; it++) {
            sync_all();
            double t0 = now_ms();
            CHECK(wgc_buffer_write(b, 0, host, size));
            CHECK(wgc_device_synchronize(g_dev[d]));
            t[it] = now_ms() - t0;
        }
        double up = median(t, iters);
        for (int it = 0; it < iters; it++) {
            double t0 = now_ms();
            CHECK(wgc_buffer_read(b, 0, copy, size));
            t[it] = now_ms() - t0;
        }
        double down = median(t, iters);
        if (memcmp(copy, host, size) != 0) {
            fprintf(stderr, "host link check failed\n");
            exit(1);
        }
        printf("device %d host link %llu MiB through the library: write %.2f ms %.1f GB/s, read %.2f ms %.1f GB/s\n", d,
               (unsigned long long)(size >> 20), up, size / up / 1e6, down, size / down / 1e6);
        wgc_buffer_release(b);
    }
    free(host);
    free(copy);
}

static void bench_copy(uint64_t size, int iters) {
    uint8_t *pattern = malloc(size);
    for (uint64_t i = 0; i < size; i++) pattern[i] = (uint8_t)(i * 2654435761u >> 13);
    for (int dir = 0; dir < 2; dir++) {
        int a = dir, b = 1 - dir;
        WgcBuffer *src = make(a, size), *dst = make(b, size);
        CHECK(wgc_buffer_write(src, 0, pattern, size));
        CHECK(wgc_buffer_copy_to_device(g_stream[a], src, 0, g_stream[b], dst, 0, size));
        CHECK(wgc_stream_synchronize(g_stream[b]));
        check_bytes(dst, pattern, size, "copy between devices");
        double t[16];
        for (int it = 0; it < iters; it++) {
            sync_all();
            double t0 = now_ms();
            CHECK(wgc_buffer_copy_to_device(g_stream[a], src, 0, g_stream[b], dst, 0, size));
            CHECK(wgc_stream_synchronize(g_stream[b]));
            t[it] = now_ms() - t0;
        }
        double ms = median(t, iters);
        printf("copy device %d -> %d, %llu MiB: %.2f ms, %.1f GB/s (median of %d)\n", a, b,
               (unsigned long long)(size >> 20), ms, size / ms / 1e6, iters);
        wgc_buffer_release(src);
        wgc_buffer_release(dst);
    }
    free(pattern);
}

/* Fill rank i with i + 1, all-reduce, expect n (n + 1) / 2 everywhere. */
static double one_all_reduce(WgcComm *comm, WgcBuffer **b, WgcTensor *t, uint64_t size, int check) {
    for (int i = 0; i < g_n; i++) CHECK(wgc_op_fill(g_stream[i], &t[i], (double)(i + 1)));
    sync_all();
    double t0 = now_ms();
    CHECK(wgc_comm_all_reduce(comm, (const WgcStream *const *)g_stream, t, WGC_COLLECTIVE_OP_SUM));
    sync_all();
    double ms = now_ms() - t0;
    if (check)
        for (int i = 0; i < g_n; i++) check_value(b[i], size, (float)(g_n * (g_n + 1) / 2), "all_reduce");
    return ms;
}

static void bench_all_reduce(WgcComm *comm, uint64_t size, int iters) {
    WgcBuffer *b[MAX_DEV];
    WgcTensor t[MAX_DEV];
    for (int i = 0; i < g_n; i++) b[i] = make(i, size), t[i] = flat_f32(b[i], size);
    one_all_reduce(comm, b, t, size, 1);
    double times[64];
    for (int it = 0; it < iters; it++) times[it] = one_all_reduce(comm, b, t, size, 0);
    double ms = median(times, iters);
    double algbw = size / ms / 1e6, busbw = algbw * 2.0 * (g_n - 1) / g_n;
    if (size >= (1u << 20))
        printf("all_reduce f32 sum, %d devices, %llu MiB: %.2f ms, algbw %.1f GB/s, busbw %.1f GB/s (median of %d)\n",
               g_n, (unsigned long long)(size >> 20), ms, algbw, busbw, iters);
    else
        printf("all_reduce f32 sum, %d devices, %llu KiB: %.1f us latency (median of %d)\n", g_n,
               (unsigned long long)(size >> 10), ms * 1e3, iters);
    for (int i = 0; i < g_n; i++) wgc_buffer_release(b[i]);
}

static void open_devices(WgcInstance *inst, int same_adapter) {
    uint32_t count = 0;
    CHECK(wgc_instance_adapter_count(inst, &count));
    int opened = 0;
    for (uint32_t a = 0; opened < g_n && (same_adapter ? 1 : a < count); a++) {
        WgcAdapterInfo info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        WgcDeviceOptions opts;
        memset(&opts, 0, sizeof opts);
        opts.struct_size = sizeof opts;
        opts.adapter_index = same_adapter ? -1 : (int32_t)a;
        if (!same_adapter) {
            CHECK(wgc_instance_adapter_info(inst, a, &info));
            if (info.device_type == WGC_DEVICE_TYPE_CPU) continue;
        }
        CHECK(wgc_device_create(inst, &opts, &g_dev[opened]));
        CHECK(wgc_device_info(g_dev[opened], &info));
        printf("device %d: %s (%s)\n", opened, info.name, info.driver);
        CHECK(wgc_stream_create(g_dev[opened], &g_stream[opened]));
        opened++;
    }
    if (opened < g_n) {
        fprintf(stderr, "found %d GPU adapters, %d asked for (--same-adapter opens several devices on one)\n", opened,
                g_n);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int same_adapter = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small")) g_small = 1, same_adapter = 1;
        else if (!strcmp(argv[i], "--same-adapter")) same_adapter = 1;
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc) g_n = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--devices N] [--same-adapter] [--small]\n", argv[0]);
            return 2;
        }
    }
    if (g_n < 2 || g_n > MAX_DEV) {
        fprintf(stderr, "--devices takes 2 to %d\n", MAX_DEV);
        return 2;
    }
    WgcInstance *inst;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    open_devices(inst, same_adapter);
    WgcComm *comm;
    CHECK(wgc_comm_create((const WgcDevice *const *)g_dev, (uint32_t)g_n, &comm));
    if (wgc_device_peer_route) {
        WgcPeerRoute route;
        CHECK(wgc_device_peer_route(g_dev[0], g_dev[1], &route));
        printf("route between devices 0 and 1: %s\n",
               route == WGC_PEER_ROUTE_IMPORTED ? "imported host memory" : "staged through mapped buffers");
    } else {
        printf("route between devices 0 and 1: unknown (a library without wgc_device_peer_route)\n");
    }

    uint64_t big[2] = {256u << 20, 1024u << 20};
    int iters = g_small ? 3 : 5;
    if (g_small) big[0] = 1u << 20, big[1] = 3u << 20;
    /* Warm every device (an unwarmed GPU runs its first loops slower). */
    bench_host_link(big[0], iters);
    for (int k = 0; k < 2; k++) bench_host_link(big[k], iters), bench_copy(big[k], iters);
    for (int k = 0; k < 2; k++) bench_all_reduce(comm, big[k], iters);
    uint64_t small[4] = {8u << 10, 16u << 10, 32u << 10, 64u << 10};
    for (int k = 0; k < 4; k++) bench_all_reduce(comm, small[k], g_small ? 5 : 50);

    wgc_comm_release(comm);
    for (int i = 0; i < g_n; i++) wgc_stream_release(g_stream[i]), wgc_device_release(g_dev[i]);
    wgc_instance_release(inst);
    printf("multi_device_bench: all checks passed\n");
    return 0;
}
