/* Copies between devices at the sizes where chunking goes wrong (the
 * smallest, one under a page, one past the 16 MiB chunk, 64 MiB), at
 * offsets, in both directions, from several threads at once, with buffers
 * released while their copy may still run, and the route query; on the
 * route the devices take (imported host memory where the adapter has
 * VK_EXT_external_memory_host, as lavapipe does; staged otherwise). */
#include <pthread.h>

#include "test_util.h"

#define CHUNK (16u << 20)

static WgcInstance *g_inst;
static WgcDevice *g_dev[2];
static WgcStream *g_stream[2];

static WgcBuffer *make_buffer(int d, uint64_t bytes) {
    WgcBuffer *b;
    CHECK(wgc_buffer_create(g_dev[d], bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static void fill_pattern(uint8_t *p, uint64_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (uint8_t)(x >> 24);
    }
}

/* `size` bytes from `src_off` of a patterned buffer of device `a` to
 * `dst_off` of a patterned buffer of device 1 - a; every byte of the
 * destination checked (the copied range and what surrounds it). */
static void copy_and_check(int a, uint64_t size, uint64_t src_off, uint64_t dst_off) {
    int b = 1 - a;
    uint64_t src_len = src_off + size + 8, dst_len = dst_off + size + 12;
    uint8_t *src_bytes = malloc(src_len), *want = malloc(dst_len), *got = malloc(dst_len);
    fill_pattern(src_bytes, src_len, (uint32_t)size);
    fill_pattern(want, dst_len, (uint32_t)size + 99);
    WgcBuffer *src = make_buffer(a, src_len), *dst = make_buffer(b, dst_len);
    CHECK(wgc_buffer_write(src, 0, src_bytes, src_len));
    CHECK(wgc_buffer_write(dst, 0, want, dst_len));
    CHECK(wgc_buffer_copy_to_device(g_stream[a], src, src_off, g_stream[b], dst, dst_off, size));
    memcpy(want + dst_off, src_bytes + src_off, size);
    CHECK(wgc_buffer_read(dst, 0, got, dst_len));
    if (memcmp(got, want, dst_len) != 0) {
        uint64_t i = 0;
        while (got[i] == want[i]) i++;
        fprintf(stderr, "copy %d -> %d of %llu bytes (%llu -> %llu): first wrong byte at %llu\n", a, b,
                (unsigned long long)size, (unsigned long long)src_off, (unsigned long long)dst_off,
                (unsigned long long)i);
        EXPECT(0);
    }
    wgc_buffer_release(src), wgc_buffer_release(dst);
    free(src_bytes), free(want), free(got);
}

static void test_sizes(void) {
    uint64_t sizes[] = {4, 4096 - 4, CHUNK + 4, 64u << 20};
    for (int dir = 0; dir < 2; dir++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            copy_and_check(dir, sizes[k], 0, 0);
            if (sizes[k] < CHUNK) copy_and_check(dir, sizes[k], 4 * (k + 1), 8);
        }
    copy_and_check(0, (64u << 20) + 8, 12, 4);
}

/* 2-byte elements: one (2 bytes), 2047 (4 KiB - 2) and chunk/2 + 1 (one
 * past the chunk), from an odd element offset to an even one. */
static void test_odd_tensors(void) {
    int64_t lens[] = {1, 2047, CHUNK / 2 + 1};
    for (size_t k = 0; k < 3; k++) {
        int64_t n = lens[k];
        uint64_t bytes = (uint64_t)(n + 3) * 2;
        uint8_t *x = malloc(bytes), *y = malloc(bytes), *got = malloc(bytes);
        fill_pattern(x, bytes, (uint32_t)k), fill_pattern(y, bytes, (uint32_t)k + 7);
        WgcBuffer *src = make_buffer(1, bytes), *dst = make_buffer(0, bytes);
        CHECK(wgc_buffer_write(src, 0, x, bytes));
        CHECK(wgc_buffer_write(dst, 0, y, bytes));
        WgcTensor ts, td;
        CHECK(wgc_tensor_contiguous(src, WGC_DTYPE_BF16, 1, &n, &ts));
        CHECK(wgc_tensor_contiguous(dst, WGC_DTYPE_BF16, 1, &n, &td));
        ts.offset = 1, td.offset = 2;
        CHECK(wgc_tensor_copy_to_device(g_stream[1], &ts, g_stream[0], &td));
        memcpy(y + 4, x + 2, (size_t)n * 2);
        CHECK(wgc_buffer_read(dst, 0, got, bytes));
        EXPECT(memcmp(got, y, bytes) == 0);
        wgc_buffer_release(src), wgc_buffer_release(dst);
        free(x), free(y), free(got);
    }
}

/* Buffers released as soon as the call returns (the destination's copy
 * may not have run): the copy completes, nothing else is disturbed. */
static void test_release_while_pending(void) {
    uint64_t size = CHUNK + 4096;
    uint8_t *x = malloc(size), *got = malloc(size);
    fill_pattern(x, size, 5);
    WgcBuffer *keep = make_buffer(1, size);
    for (int round = 0; round < 3; round++) {
        WgcBuffer *src = make_buffer(0, size), *dst = make_buffer(1, size);
        CHECK(wgc_buffer_write(src, 0, x, size));
        CHECK(wgc_buffer_copy_to_device(g_stream[0], src, 0, g_stream[1], dst, 0, size));
        wgc_buffer_release(src);
        CHECK(wgc_stream_copy_buffer(g_stream[1], dst, 0, keep, 0, size));
        wgc_buffer_release(dst);
    }
    CHECK(wgc_stream_synchronize(g_stream[1]));
    CHECK(wgc_buffer_read(keep, 0, got, size));
    EXPECT(memcmp(got, x, size) == 0);
    wgc_buffer_release(keep);
    free(x), free(got);
}

struct job {
    int index;
    int failed;
};

/* Each thread its own streams on both devices, copying one way or the other. */
static void *copy_thread(void *arg) {
    struct job *job = arg;
    int a = job->index % 2, b = 1 - a;
    WgcStream *sa, *sb;
    CHECK(wgc_stream_create(g_dev[a], &sa));
    CHECK(wgc_stream_create(g_dev[b], &sb));
    uint64_t size = (1u << 20) + 4 * (uint64_t)job->index;
    uint8_t *x = malloc(size), *got = malloc(size);
    WgcBuffer *src = make_buffer(a, size), *dst = make_buffer(b, size);
    for (int round = 0; round < 4 && !job->failed; round++) {
        fill_pattern(x, size, (uint32_t)(job->index * 10 + round));
        CHECK(wgc_buffer_write(src, 0, x, size));
        if (wgc_buffer_copy_to_device(sa, src, 0, sb, dst, 0, size) != WGC_OK) job->failed = 1;
        CHECK(wgc_buffer_read(dst, 0, got, size));
        if (memcmp(got, x, size) != 0) job->failed = 1;
    }
    wgc_buffer_release(src), wgc_buffer_release(dst);
    wgc_stream_release(sa), wgc_stream_release(sb);
    free(x), free(got);
    return NULL;
}

static void test_concurrent(void) {
    pthread_t threads[4];
    struct job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i].index = i, jobs[i].failed = 0;
        EXPECT(pthread_create(&threads[i], NULL, copy_thread, &jobs[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        EXPECT(!jobs[i].failed);
    }
}

static void test_route_and_misuse(void) {
    WgcPeerRoute route = (WgcPeerRoute)99;
    CHECK(wgc_device_peer_route(g_dev[0], g_dev[1], &route));
    EXPECT(route == WGC_PEER_ROUTE_STAGED || route == WGC_PEER_ROUTE_IMPORTED);
    printf("route between two devices: %s\n", route == WGC_PEER_ROUTE_IMPORTED ? "imported host memory" : "staged");
    WgcPeerRoute back;
    CHECK(wgc_device_peer_route(g_dev[1], g_dev[0], &back));
    EXPECT(back == route);
    EXPECT_STATUS(wgc_device_peer_route(NULL, g_dev[1], &route), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_device_peer_route(g_dev[0], NULL, &route), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_device_peer_route(g_dev[0], g_dev[1], NULL), WGC_ERROR_NULL_POINTER);

    WgcBuffer *a = make_buffer(0, 64), *b = make_buffer(1, 64);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[1], b, 0, 1), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[1], b, 2, 4), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 60, g_stream[1], b, 0, 8), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[1], b, UINT64_MAX - 3, 4),
                  WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], b, 0, g_stream[1], a, 0, 4), WGC_ERROR_DEVICE_MISMATCH);
    /* A failed call leaves both devices usable. */
    copy_and_check(0, 64, 0, 0);

    /* A destroyed destination: a clear status, and the route query still answers. */
    WgcDevice *gone;
    WgcStream *gone_stream;
    WgcBuffer *gone_buf;
    CHECK(wgc_device_create(g_inst, NULL, &gone));
    CHECK(wgc_stream_create(gone, &gone_stream));
    CHECK(wgc_buffer_create(gone, 64, WGC_BUFFER_USAGE_STORAGE, &gone_buf));
    CHECK(wgc_buffer_copy_to_device(g_stream[0], a, 0, gone_stream, gone_buf, 0, 64));
    CHECK(wgc_device_destroy(gone));
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, gone_stream, gone_buf, 0, 64), WGC_ERROR_DEVICE_LOST);
    CHECK(wgc_device_peer_route(g_dev[0], gone, &route));
    wgc_buffer_release(gone_buf), wgc_stream_release(gone_stream), wgc_device_release(gone);
    copy_and_check(1, 64, 0, 0);
    wgc_buffer_release(a), wgc_buffer_release(b);
}

int main(void) {
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &g_inst));
    for (int i = 0; i < 2; i++) {
        CHECK(wgc_device_create(g_inst, NULL, &g_dev[i]));
        CHECK(wgc_stream_create(g_dev[i], &g_stream[i]));
    }
    test_route_and_misuse();
    test_sizes();
    test_odd_tensors();
    test_release_while_pending();
    test_concurrent();
    for (int i = 0; i < 2; i++) CHECK(wgc_device_synchronize(g_dev[i]));
    for (int i = 0; i < 2; i++) wgc_stream_release(g_stream[i]), wgc_device_release(g_dev[i]);
    wgc_instance_release(g_inst);
    return test_finish("test_peer_route");
}
