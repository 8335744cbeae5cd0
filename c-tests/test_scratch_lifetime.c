/* Memory that recorded work still uses is never handed to anyone else:
 * operator scratch (reduce, var, std), the scratch of a copy within one
 * buffer, and a released buffer whose work is recorded but not yet
 * submitted. Each case makes one stream's use of an allocation straddle a
 * submission (streams submit every 128 launches) while another stream asks
 * the pool for an allocation of the same size class. */
#include "test_util.h"

enum { N = 100000, FILLS = 127 };

static WgcBuffer *filled(WgcDevice *dev, uint64_t bytes, float v) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    float *host = malloc(bytes);
    for (uint64_t i = 0; i < bytes / 4; i++) host[i] = v;
    CHECK(wgc_buffer_write(b, 0, host, bytes));
    free(host);
    return b;
}

static float read_f32(WgcBuffer *b) {
    float v = -1;
    CHECK(wgc_buffer_read(b, 0, &v, 4));
    return v;
}

/* 127 launches, so that the next launch is the 128th of the batch and the
 * one after it starts a new submission. */
static void fill_batch(WgcStream *s, WgcBuffer *junk) {
    for (int i = 0; i < FILLS; i++) CHECK(wgc_stream_fill_buffer(s, junk, 0, 16, (uint32_t)i));
}

typedef WgcStatus (*ReduceFn)(WgcStream *s, const WgcTensor *in, const WgcTensor *out);

static WgcStatus sum(WgcStream *s, const WgcTensor *in, const WgcTensor *out) {
    return wgc_op_reduce(s, WGC_REDUCE_OP_SUM, in, NULL, 0, 0, out);
}
static WgcStatus var(WgcStream *s, const WgcTensor *in, const WgcTensor *out) {
    return wgc_op_var(s, in, NULL, 0, 0, 0, out);
}
static WgcStatus stdev(WgcStream *s, const WgcTensor *in, const WgcTensor *out) {
    return wgc_op_std(s, in, NULL, 0, 0, 0, out);
}

/* Stream 1's reduction straddles a submission; stream 2 runs the same
 * reduction on other data and finishes first. */
static void check_reduction(TestEnv *e, const char *name, ReduceFn fn, float a, float b, double want_a,
                            double want_b) {
    WgcStream *s1 = NULL, *s2 = NULL;
    CHECK(wgc_stream_create(e->device, &s1));
    CHECK(wgc_stream_create(e->device, &s2));
    WgcBuffer *junk = filled(e->device, 16, 0);
    WgcBuffer *in1 = filled(e->device, N * 4, a), *in2 = filled(e->device, N * 4, b);
    /* Alternating values give var/std something to compute. */
    if (fn != sum) {
        float *host = malloc(N * 4);
        for (int i = 0; i < N; i++) host[i] = (i % 2) ? a : -a;
        CHECK(wgc_buffer_write(in1, 0, host, N * 4));
        for (int i = 0; i < N; i++) host[i] = (i % 2) ? b : -b;
        CHECK(wgc_buffer_write(in2, 0, host, N * 4));
        free(host);
    }
    WgcBuffer *out1 = filled(e->device, 4, 0), *out2 = filled(e->device, 4, 0);
    int64_t n = N, one = 1;
    WgcTensor t1 = tensor_of(in1, WGC_DTYPE_F32, 1, &n), t2 = tensor_of(in2, WGC_DTYPE_F32, 1, &n);
    WgcTensor o1 = tensor_of(out1, WGC_DTYPE_F32, 0, &one), o2 = tensor_of(out2, WGC_DTYPE_F32, 0, &one);

    fill_batch(s1, junk);
    CHECK(fn(s1, &t1, &o1));
    CHECK(fn(s2, &t2, &o2));
    CHECK(wgc_stream_synchronize(s2));
    CHECK(wgc_stream_synchronize(s1));
    double got_a = read_f32(out1), got_b = read_f32(out2);
    if (fabs(got_a - want_a) > 1e-3 * fabs(want_a) + 1e-6 || fabs(got_b - want_b) > 1e-3 * fabs(want_b) + 1e-6) {
        fprintf(stderr, "%s: stream 1 got %.9g (want %.9g), stream 2 got %.9g (want %.9g)\n", name, got_a, want_a,
                got_b, want_b);
        g_failures++;
    }
    wgc_buffer_release(junk);
    wgc_buffer_release(in1);
    wgc_buffer_release(in2);
    wgc_buffer_release(out1);
    wgc_buffer_release(out2);
    wgc_stream_release(s1);
    wgc_stream_release(s2);
}

/* A copy within one buffer goes through scratch; that scratch must not be
 * handed to a reduction whose two passes straddle the copy's submission. */
static void check_copy_scratch(TestEnv *e) {
    WgcStream *s1 = NULL, *s2 = NULL;
    CHECK(wgc_stream_create(e->device, &s1));
    CHECK(wgc_stream_create(e->device, &s2));
    WgcBuffer *junk = filled(e->device, 16, 0);
    WgcBuffer *a = NULL;
    CHECK(wgc_buffer_create(e->device, 1024, WGC_BUFFER_USAGE_STORAGE, &a));
    /* Buffers first: creating one may submit recorded work. */
    WgcBuffer *in = filled(e->device, N * 4, 1.0f), *out = filled(e->device, 4, 0);
    int64_t n = N, one = 1;
    WgcTensor t = tensor_of(in, WGC_DTYPE_F32, 1, &n), o = tensor_of(out, WGC_DTYPE_F32, 0, &one);
    CHECK(wgc_stream_fill_buffer(s1, a, 0, 1024, 0x7fc00000u)); /* NaN */
    CHECK(wgc_stream_copy_buffer(s1, a, 0, a, 512, 400)); /* scratch of 400 bytes */
    fill_batch(s2, junk);
    CHECK(sum(s2, &t, &o)); /* its partial sums need a few hundred bytes of scratch too */
    CHECK(wgc_stream_flush(s1));
    CHECK(wgc_stream_synchronize(s2));
    float got = read_f32(out);
    if (got != (float)N) {
        fprintf(stderr, "sum next to a copy's scratch: got %.9g, want %d\n", got, N);
        g_failures++;
    }
    wgc_buffer_release(junk);
    wgc_buffer_release(a);
    wgc_buffer_release(in);
    wgc_buffer_release(out);
    wgc_stream_release(s1);
    wgc_stream_release(s2);
}

static const char *COPY_SRC =
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@compute @workgroup_size(64)\n"
    "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < arrayLength(&y)) { y[id.x] = x[id.x]; }\n"
    "}\n";

/* A buffer released while recorded work still reads it keeps its contents
 * until that work has run, even if another stream allocates meanwhile. */
static void check_released_buffer(TestEnv *e) {
    WgcKernel *copy = compile(e->device, COPY_SRC, "main");
    WgcStream *s1 = NULL, *s2 = NULL;
    CHECK(wgc_stream_create(e->device, &s1));
    CHECK(wgc_stream_create(e->device, &s2));
    WgcBuffer *junk = filled(e->device, 16, 0);
    WgcBuffer *src = filled(e->device, 300, 5.0f), *dst = filled(e->device, 300, 0);
    WgcBuffer *in = filled(e->device, N * 4, 1.0f), *out = filled(e->device, 4, 0);
    int64_t n = N, one = 1;
    WgcTensor t = tensor_of(in, WGC_DTYPE_F32, 1, &n), o = tensor_of(out, WGC_DTYPE_F32, 0, &one);
    WgcBinding b[2] = {{0, src, 0, 0}, {1, dst, 0, 0}};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = 2;
    l.workgroups[0] = 2;
    l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(s1, copy, &l));
    wgc_buffer_release(src); /* the launch is recorded, not submitted */
    fill_batch(s2, junk);
    CHECK(sum(s2, &t, &o));
    CHECK(wgc_stream_flush(s2)); /* the sum's first pass runs before stream 1's copy */
    CHECK(wgc_stream_synchronize(s1));
    CHECK(wgc_stream_synchronize(s2));
    float host[75];
    CHECK(wgc_buffer_read(dst, 0, host, sizeof host));
    int bad = 0;
    for (int i = 0; i < 75; i++) bad += host[i] != 5.0f;
    if (bad) {
        fprintf(stderr, "released source buffer: %d of 75 copied values wrong (first %g)\n", bad, host[0]);
        g_failures++;
    }
    EXPECT(read_f32(out) == (float)N);
    wgc_buffer_release(junk);
    wgc_buffer_release(dst);
    wgc_buffer_release(in);
    wgc_buffer_release(out);
    wgc_stream_release(s1);
    wgc_stream_release(s2);
    wgc_kernel_release(copy);
}

int main(void) {
    TestEnv env = test_env();
    check_reduction(&env, "sum", sum, 1.0f, 2.0f, N, 2.0 * N);
    check_reduction(&env, "var", var, 1.0f, 3.0f, 1.0, 9.0);
    check_reduction(&env, "std", stdev, 2.0f, 5.0f, 2.0, 5.0);
    check_copy_scratch(&env);
    check_released_buffer(&env);
    test_env_release(&env);
    return test_finish("test_scratch_lifetime");
}
