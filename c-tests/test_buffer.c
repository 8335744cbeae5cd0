/* Buffers: sizes, writes and reads of sub-ranges (reads at any byte
 * offset), copies, fills, zero-initialisation (also of pooled memory), and
 * ordering of host writes after recorded GPU work. */
#include "test_util.h"

static WgcBuffer *make(WgcDevice *dev, uint64_t size) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, size, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

static void test_size(WgcDevice *dev) {
    const uint64_t sizes[] = {4, 12, 1000, 65540, 3 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        WgcBuffer *b = make(dev, sizes[i]);
        uint64_t got = 0;
        CHECK(wgc_buffer_size(b, &got));
        EXPECT(got == sizes[i]);
        wgc_buffer_release(b);
    }
    /* Every usage combination is accepted. */
    for (uint32_t u = 0; u <= WGC_BUFFER_USAGE_ALL; u++) {
        WgcBuffer *b = NULL;
        CHECK(wgc_buffer_create(dev, 256, u, &b));
        wgc_buffer_release(b);
    }
}

static void test_write_read(WgcDevice *dev) {
    enum { SIZE = 4096 };
    unsigned char host[SIZE], back[SIZE];
    WgcBuffer *b = make(dev, SIZE);
    CHECK(wgc_buffer_read(b, 0, back, SIZE));
    EXPECT(all_bytes(back, SIZE, 0));

    for (int i = 0; i < SIZE; i++) host[i] = (unsigned char)(i * 7 + 3);
    CHECK(wgc_buffer_write(b, 256, host, 1024));
    CHECK(wgc_buffer_write(b, SIZE - 8, host + 2000, 8));
    CHECK(wgc_buffer_read(b, 0, back, SIZE));
    EXPECT(all_bytes(back, 256, 0));
    EXPECT(memcmp(back + 256, host, 1024) == 0);
    EXPECT(all_bytes(back + 1280, SIZE - 8 - 1280, 0));
    EXPECT(memcmp(back + SIZE - 8, host + 2000, 8) == 0);

    /* Reads may start and end anywhere. */
    unsigned char small[5];
    CHECK(wgc_buffer_read(b, 259, small, 5));
    EXPECT(memcmp(small, host + 3, 5) == 0);
    CHECK(wgc_buffer_read(b, SIZE - 1, small, 1));
    EXPECT(small[0] == host[2007]);
    CHECK(wgc_buffer_read(b, 1279, small, 3));
    EXPECT(small[0] == host[1023] && small[1] == 0 && small[2] == 0);
    /* Zero-length reads and writes inside the buffer do nothing. */
    CHECK(wgc_buffer_read(b, 100, small, 0));
    CHECK(wgc_buffer_write(b, 100, host, 0));
    wgc_buffer_release(b);

    /* A bigger round trip. */
    const size_t n = 2u << 20;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    fill_uniform_f32(x, n, -1, 1);
    b = make(dev, n * sizeof *x);
    CHECK(wgc_buffer_write(b, 0, x, n * sizeof *x));
    CHECK(wgc_buffer_read(b, 0, y, n * sizeof *y));
    EXPECT(memcmp(x, y, n * sizeof *x) == 0);
    wgc_buffer_release(b);
    free(x);
    free(y);
}

static void test_copy_fill(WgcDevice *dev, WgcStream *st) {
    enum { N = 1024 };
    uint32_t src[N], out[N];
    for (uint32_t i = 0; i < N; i++) src[i] = i * 2654435761u;
    WgcBuffer *a = make(dev, sizeof src), *b = make(dev, sizeof src);
    CHECK(wgc_buffer_write(a, 0, src, sizeof src));

    /* Copy 100 words from word 10 of a to word 500 of b, then within a. */
    CHECK(wgc_stream_copy_buffer(st, a, 40, b, 2000, 400));
    CHECK(wgc_stream_copy_buffer(st, a, 0, a, 2048, 64));
    /* Fill words 3..66 of b with 1.0f, and one word at the very end. */
    float one = 1.0f;
    uint32_t one_bits;
    memcpy(&one_bits, &one, 4);
    CHECK(wgc_stream_fill_buffer(st, b, 12, 256, one_bits));
    CHECK(wgc_stream_fill_buffer(st, b, sizeof src - 4, 4, 0xDEADBEEFu));

    CHECK(wgc_buffer_read(b, 0, out, sizeof out));
    int bad = 0;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = 0;
        if (i >= 3 && i < 67) want = one_bits;
        else if (i >= 500 && i < 600) want = src[i - 490];
        else if (i == N - 1) want = 0xDEADBEEFu;
        bad += out[i] != want;
    }
    EXPECT(bad == 0);
    CHECK(wgc_buffer_read(a, 0, out, sizeof out));
    bad = 0;
    for (uint32_t i = 0; i < N; i++) bad += out[i] != (i >= 512 && i < 528 ? src[i - 512] : src[i]);
    EXPECT(bad == 0);

    /* Fill the whole buffer; the float reads back exactly. */
    CHECK(wgc_stream_fill_buffer(st, a, 0, sizeof src, one_bits));
    float f[N];
    CHECK(wgc_buffer_read(a, 0, f, sizeof f));
    bad = 0;
    for (int i = 0; i < N; i++) bad += f[i] != 1.0f;
    EXPECT(bad == 0);
    wgc_buffer_release(a);
    wgc_buffer_release(b);
}

static void test_zero_init_from_pool(WgcDevice *dev) {
    enum { SIZE = 8192 };
    unsigned char junk[SIZE], back[SIZE];
    memset(junk, 0x5A, SIZE);
    WgcMemoryStats before, after;
    memset(&before, 0, sizeof before);
    before.struct_size = sizeof before;
    after = before;

    WgcBuffer *b = make(dev, SIZE);
    CHECK(wgc_buffer_write(b, 0, junk, SIZE));
    wgc_buffer_release(b);
    CHECK(wgc_device_synchronize(dev));
    CHECK(wgc_device_memory_stats(dev, &before));
    b = make(dev, SIZE - 12);
    CHECK(wgc_device_memory_stats(dev, &after));
    EXPECT(after.pool_hits == before.pool_hits + 1); /* the same memory, reused */
    CHECK(wgc_buffer_read(b, 0, back, SIZE - 12));
    EXPECT(all_bytes(back, SIZE - 12, 0));
    wgc_buffer_release(b);
}

static void test_ordering(WgcDevice *dev, WgcStream *st) {
    /* A write after recorded (unsubmitted) work lands after it. */
    enum { N = 256 };
    uint32_t w[4] = {2, 2, 2, 2}, out[N];
    WgcBuffer *b = make(dev, N * 4);
    CHECK(wgc_stream_fill_buffer(st, b, 0, N * 4, 1));
    CHECK(wgc_buffer_write(b, 0, w, sizeof w));
    CHECK(wgc_stream_fill_buffer(st, b, 8, 4, 3));
    CHECK(wgc_buffer_read(b, 0, out, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != (uint32_t)(i == 2 ? 3 : i < 4 ? 2 : 1);
    EXPECT(bad == 0);

    /* Retained handles stay usable until the last release. */
    wgc_buffer_retain(b);
    wgc_buffer_release(b);
    CHECK(wgc_buffer_read(b, 0, out, 4));
    EXPECT(out[0] == 2);
    wgc_buffer_release(b);
}

int main(void) {
    TestEnv env = test_env();
    test_size(env.device);
    test_write_read(env.device);
    test_copy_fill(env.device, env.stream);
    test_zero_init_from_pool(env.device);
    test_ordering(env.device, env.stream);
    test_env_release(&env);
    return test_finish("test_buffer");
}
