/* Streams and events: many launches in one batch, dependent launches in
 * order, events (query, wait, GPU time), flush and synchronize, several
 * streams on one device, and work left on a released stream. */
#include "test_util.h"

static const char *SRC =
    "struct P { add: f32, mul: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn step(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = x[id.x] * p.mul + p.add; }\n"
    "}\n"
    "@compute @workgroup_size(64)\n"
    "fn bump(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = y[id.x] + p.add; }\n"
    "}\n";

typedef struct {
    float add, mul;
    uint32_t n, pad;
} Params;

static WgcKernel *g_step, *g_bump;

static void launch(WgcStream *st, WgcKernel *k, WgcBuffer *x, WgcBuffer *y, float add, float mul, uint32_t n) {
    Params p = {add, mul, n, 0};
    WgcBinding b[2] = {{0, x, 0, 0}, {1, y, 0, 0}};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = k == g_bump ? b + 1 : b;
    l.binding_count = k == g_bump ? 1 : 2;
    l.params = &p;
    l.params_size = sizeof p;
    l.workgroups[0] = (n + 63) / 64;
    l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(st, k, &l));
}

static WgcBuffer *zeros(WgcDevice *dev, uint32_t n) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, n * 4, 0, &b));
    return b;
}

static void expect_all(WgcBuffer *b, uint32_t n, float v, const char *what) {
    float *out = malloc(n * 4);
    double *ref = malloc(n * sizeof *ref);
    CHECK(wgc_buffer_read(b, 0, out, n * 4));
    for (uint32_t i = 0; i < n; i++) ref[i] = v;
    compare_f32(what, out, ref, n, 0, 0);
    free(out);
    free(ref);
}

static void test_many_launches(TestEnv *e) {
    enum { N = 777, LAUNCHES = 600 };
    WgcBuffer *y = zeros(e->device, N);
    for (int i = 0; i < LAUNCHES; i++) launch(e->stream, g_bump, NULL, y, 1.0f, 0, N);
    expect_all(y, N, LAUNCHES, "600 launches");
    wgc_buffer_release(y);
}

static void test_dependent(TestEnv *e) {
    enum { N = 300 };
    float host[N], out[N];
    double ref[N];
    fill_uniform_f32(host, N, -1, 1);
    WgcBuffer *a = upload(e->device, host, sizeof host), *b = zeros(e->device, N), *c = zeros(e->device, N);
    /* a -> b -> c -> a -> b, each step reading what the previous wrote. */
    launch(e->stream, g_step, a, b, 1.0f, 2.0f, N);
    launch(e->stream, g_step, b, c, -3.0f, 0.5f, N);
    launch(e->stream, g_step, c, a, 0.25f, 4.0f, N);
    CHECK(wgc_stream_copy_buffer(e->stream, a, 0, b, 0, sizeof host));
    launch(e->stream, g_bump, NULL, b, 10.0f, 0, N);
    CHECK(wgc_buffer_read(b, 0, out, sizeof out));
    for (int i = 0; i < N; i++) {
        double v = host[i] * 2.0 + 1.0;
        v = v * 0.5 - 3.0;
        v = v * 4.0 + 0.25;
        ref[i] = v + 10.0;
    }
    compare_f32("dependent launches", out, ref, N, 1e-5, 1e-6);
    wgc_buffer_release(a);
    wgc_buffer_release(b);
    wgc_buffer_release(c);
}

static void test_events(TestEnv *e) {
    enum { N = 4096 };
    WgcBuffer *y = zeros(e->device, N);
    WgcEvent *start = NULL, *end = NULL;
    CHECK(wgc_stream_record_event(e->stream, &start));
    for (int i = 0; i < 50; i++) launch(e->stream, g_bump, NULL, y, 1.0f, 0, N);
    CHECK(wgc_stream_record_event(e->stream, &end));
    uint32_t done = 7;
    CHECK(wgc_event_query(end, &done));
    EXPECT(done == 0); /* recorded, not yet submitted: query does not flush */
    CHECK(wgc_event_wait(end));
    CHECK(wgc_event_query(end, &done));
    EXPECT(done == 1);
    CHECK(wgc_event_query(start, &done));
    EXPECT(done == 1);
    double ms = -1;
    if (e->info.has_timestamps) {
        CHECK(wgc_event_elapsed_ms(start, end, &ms));
        printf("50 launches on %d elements: %.3f ms\n", N, ms);
        EXPECT(ms >= 0 && ms < 60000);
        double back = 1;
        CHECK(wgc_event_elapsed_ms(start, start, &back));
        EXPECT(back == 0);
    } else {
        EXPECT_STATUS(wgc_event_elapsed_ms(start, end, &ms), WGC_ERROR_UNSUPPORTED);
    }
    expect_all(y, N, 50, "work before the event");

    /* Retained events outlive their stream. */
    WgcStream *st = NULL;
    WgcEvent *ev = NULL;
    CHECK(wgc_stream_create(e->device, &st));
    launch(st, g_bump, NULL, y, 1.0f, 0, N);
    CHECK(wgc_stream_record_event(st, &ev));
    wgc_event_retain(ev);
    wgc_event_release(ev);
    wgc_stream_release(st);
    CHECK(wgc_event_wait(ev));
    CHECK(wgc_event_query(ev, &done));
    EXPECT(done == 1);
    wgc_event_release(ev);
    expect_all(y, N, 51, "work of a released stream");

    wgc_event_release(start);
    wgc_event_release(end);
    wgc_buffer_release(y);
}

static void test_flush_sync(TestEnv *e) {
    enum { N = 1000 };
    WgcBuffer *y = zeros(e->device, N);
    launch(e->stream, g_bump, NULL, y, 2.0f, 0, N);
    CHECK(wgc_stream_flush(e->stream));
    CHECK(wgc_stream_flush(e->stream)); /* nothing recorded: fine */
    launch(e->stream, g_bump, NULL, y, 3.0f, 0, N);
    CHECK(wgc_stream_synchronize(e->stream));
    WgcEvent *ev = NULL;
    CHECK(wgc_stream_record_event(e->stream, &ev));
    CHECK(wgc_stream_synchronize(e->stream));
    uint32_t done = 0;
    CHECK(wgc_event_query(ev, &done));
    EXPECT(done == 1);
    wgc_event_release(ev);
    CHECK(wgc_device_synchronize(e->device));
    expect_all(y, N, 5, "flush and synchronize");
    wgc_buffer_release(y);
}

static void test_streams(TestEnv *e) {
    enum { N = 513, STREAMS = 4 };
    WgcStream *st[STREAMS];
    WgcBuffer *y[STREAMS];
    for (int s = 0; s < STREAMS; s++) {
        CHECK(wgc_stream_create(e->device, &st[s]));
        y[s] = zeros(e->device, N);
    }
    /* Interleave recording across the streams. */
    for (int round = 0; round < 10; round++)
        for (int s = 0; s < STREAMS; s++) launch(st[s], g_bump, NULL, y[s], (float)(s + 1), 0, N);
    CHECK(wgc_stream_flush(st[0]));
    CHECK(wgc_device_synchronize(e->device)); /* submits the others too */
    for (int s = 0; s < STREAMS; s++) {
        expect_all(y[s], N, 10.0f * (s + 1), "stream results");
        wgc_stream_release(st[s]);
        wgc_buffer_release(y[s]);
    }
    /* A host write is ordered after other streams' recorded work. */
    WgcStream *other = NULL;
    CHECK(wgc_stream_create(e->device, &other));
    WgcBuffer *z = zeros(e->device, N);
    launch(other, g_bump, NULL, z, 1.0f, 0, N);
    float *ones = malloc(N * 4);
    for (int i = 0; i < N; i++) ones[i] = 7.0f;
    CHECK(wgc_buffer_write(z, 0, ones, N * 4));
    launch(e->stream, g_bump, NULL, z, 1.0f, 0, N);
    expect_all(z, N, 8.0f, "write between streams");
    free(ones);
    wgc_buffer_release(z);
    wgc_stream_release(other);
}

int main(void) {
    TestEnv env = test_env();
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = SRC;
    d.entry_point = "step";
    CHECK(wgc_kernel_create(env.device, &d, &g_step));
    d.entry_point = "bump";
    CHECK(wgc_kernel_create(env.device, &d, &g_bump));
    test_many_launches(&env);
    test_dependent(&env);
    test_events(&env);
    test_flush_sync(&env);
    test_streams(&env);
    wgc_kernel_release(g_step);
    wgc_kernel_release(g_bump);
    test_env_release(&env);
    return test_finish("test_stream");
}
