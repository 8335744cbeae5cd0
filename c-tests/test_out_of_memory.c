/* Out of memory is reported as WGC_ERROR_OUT_OF_MEMORY by the call that
 * ran out, never as a later, unrelated error, and the device recovers once
 * memory is freed. The software driver's GPU memory is host memory, so an
 * address-space limit set after start-up exhausts it. */
#include <sys/resource.h>

#include "test_util.h"

enum { MAX_BUFFERS = 4096 };

static long vm_bytes(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) pages = 0;
    fclose(f);
    return pages * 4096;
}

static uint32_t read_u32(WgcBuffer *b) {
    uint32_t v = 0;
    CHECK(wgc_buffer_read(b, 0, &v, 4));
    return v;
}

/* `st` is OK or OUT_OF_MEMORY (with a message); true if it ran out. */
static int ok_or_oom(WgcStatus st, const char *what) {
    if (st != WGC_OK && st != WGC_ERROR_OUT_OF_MEMORY) {
        fprintf(stderr, "%s: %s (%s), expected WGC_OK or WGC_ERROR_OUT_OF_MEMORY\n", what, wgc_status_string(st),
                wgc_last_error_message());
        g_failures++;
    }
    if (st == WGC_ERROR_OUT_OF_MEMORY && wgc_last_error_message()[0] == '\0') {
        fprintf(stderr, "%s: out of memory without a message\n", what);
        g_failures++;
    }
    return st == WGC_ERROR_OUT_OF_MEMORY;
}

int main(void) {
    TestEnv env = test_env();
    WgcBuffer *w = NULL, *in = NULL, *out = NULL;
    CHECK(wgc_buffer_create(env.device, 64, WGC_BUFFER_USAGE_STORAGE, &w));
    CHECK(wgc_buffer_create(env.device, 4096, WGC_BUFFER_USAGE_STORAGE, &in));
    CHECK(wgc_buffer_create(env.device, 4, WGC_BUFFER_USAGE_STORAGE, &out));
    CHECK(wgc_stream_fill_buffer(env.stream, w, 0, 64, 1));
    CHECK(wgc_stream_synchronize(env.stream));

    struct rlimit saved;
    getrlimit(RLIMIT_AS, &saved);
    struct rlimit limited = saved;
    limited.rlim_cur = (rlim_t)vm_bytes() + (128u << 20);
    if (setrlimit(RLIMIT_AS, &limited) != 0) return 1;

    /* Fill the address space with buffers until the driver refuses. */
    WgcBuffer *bufs[MAX_BUFFERS];
    int n = 0;
    uint64_t size = 16u << 20;
    while (n < MAX_BUFFERS) {
        WgcStatus st = wgc_buffer_create(env.device, size, WGC_BUFFER_USAGE_STORAGE, &bufs[n]);
        if (st == WGC_OK) {
            n++;
            continue;
        }
        EXPECT_STATUS(st, WGC_ERROR_OUT_OF_MEMORY);
        if (size == (1u << 20)) break;
        size /= 4;
    }
    printf("%d buffers until out of memory\n", n);

    /* A new stream needs memory for its first launch's uniforms, a reduction
     * for its scratch: each call either works or says it ran out, and
     * nothing fails later in its place. */
    WgcStream *s = NULL;
    CHECK(wgc_stream_create(env.device, &s));
    int fill_oom = ok_or_oom(wgc_stream_fill_buffer(s, w, 0, 64, 2), "fill on a new stream");
    int64_t n_in = 1024, one = 1;
    WgcTensor t_in = tensor_of(in, WGC_DTYPE_F32, 1, &n_in), t_out = tensor_of(out, WGC_DTYPE_F32, 0, &one);
    WgcStream *s2 = NULL;
    CHECK(wgc_stream_create(env.device, &s2));
    ok_or_oom(wgc_op_reduce(s2, WGC_REDUCE_OP_SUM, &t_in, NULL, 0, 0, &t_out), "sum on a new stream");
    EXPECT_STATUS(wgc_stream_synchronize(s), WGC_OK);
    EXPECT_STATUS(wgc_stream_synchronize(s2), WGC_OK);
    EXPECT_STATUS(wgc_device_synchronize(env.device), WGC_OK);
    EXPECT(read_u32(w) == (fill_oom ? 1u : 2u));

    /* Memory back: everything works again. */
    for (int i = 0; i < n; i++) wgc_buffer_release(bufs[i]);
    CHECK(wgc_device_trim_pool(env.device, 0));
    setrlimit(RLIMIT_AS, &saved);
    CHECK(wgc_stream_fill_buffer(s, w, 0, 64, 3));
    CHECK(wgc_op_reduce(s2, WGC_REDUCE_OP_SUM, &t_in, NULL, 0, 0, &t_out));
    CHECK(wgc_stream_synchronize(s));
    EXPECT(read_u32(w) == 3);
    float sum = -1;
    CHECK(wgc_buffer_read(out, 0, &sum, 4));
    EXPECT(sum == 0.0f);

    wgc_stream_release(s);
    wgc_stream_release(s2);
    wgc_buffer_release(w);
    wgc_buffer_release(in);
    wgc_buffer_release(out);
    test_env_release(&env);
    return test_finish("test_out_of_memory");
}
