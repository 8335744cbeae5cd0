/* The profiler: off by default, records of operators, user kernels and
 * copies with names, shapes, FLOPs and bytes, GPU times where the adapter has
 * timestamps (and a clear status where it has not), results unchanged while
 * profiling, batches of more commands than one query set holds, the summary
 * table, clearing, records outliving their stream, and misuse. */
#include "test_util.h"

static const char *SRC =
    "struct P { add: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(1) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn bump(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = y[id.x] + p.add; }\n"
    "}\n";

static WgcKernel *g_bump;

static void bump(WgcStream *st, WgcBuffer *y, uint32_t n) {
    struct { float add; uint32_t n; } p = {1.0f, n};
    WgcBinding b = {0, y, 0, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = &b;
    l.binding_count = 1;
    l.params = &p;
    l.params_size = sizeof p;
    l.workgroups[0] = (n + 63) / 64;
    l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(st, g_bump, &l));
}

static WgcBuffer *make_f32(WgcDevice *dev, const float *x, size_t n) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, n * 4, 0, &b));
    if (x) CHECK(wgc_buffer_write(b, 0, x, n * 4));
    return b;
}

static WgcTensor view(WgcBuffer *b, uint32_t rank, const int64_t *shape) {
    WgcTensor t;
    CHECK(wgc_tensor_contiguous(b, WGC_DTYPE_F32, rank, shape, &t));
    return t;
}

static char *table(const WgcProfileRecord *r, size_t n, uint32_t group, uint32_t rows) {
    size_t len = 0;
    CHECK(wgc_profile_table(r, n, group, rows, NULL, 0, &len));
    char *text = malloc(len + 1);
    size_t len2 = 0;
    CHECK(wgc_profile_table(r, n, group, rows, text, len + 1, &len2));
    EXPECT(len2 == len && strlen(text) == len);
    return text;
}

static void expect_time(const TestEnv *e, const WgcProfileRecord *r) {
    if (e->info.has_timestamps) {
        EXPECT(r->time_status == WGC_PROFILE_TIME_MEASURED);
        EXPECT(r->gpu_ns < 60ull * 1000 * 1000 * 1000);
    } else {
        EXPECT(r->time_status == WGC_PROFILE_TIME_NO_TIMESTAMPS);
        EXPECT(r->gpu_ns == 0);
    }
}

/* Off by default: nothing is recorded. */
static void test_off_by_default(TestEnv *e) {
    WgcBuffer *y = make_f32(e->device, NULL, 100);
    bump(e->stream, y, 100);
    WgcProfileRecord *r = (WgcProfileRecord *)1;
    size_t n = 99;
    CHECK(wgc_stream_profile_records(e->stream, &r, &n));
    EXPECT(n == 0 && r == NULL);
    CHECK(wgc_profile_records_free(r));
    wgc_buffer_release(y);
}

/* A matmul, a softmax, an elementwise op, a user kernel and a copy, each
 * described; results as without the profiler; nothing after it is off. */
static void test_records(TestEnv *e) {
    enum { M = 33, K = 47, N = 29 };
    float *a = malloc(M * K * 4), *b = malloc(K * N * 4), *c = malloc(M * N * 4);
    fill_uniform_f32(a, M * K, -1, 1);
    fill_uniform_f32(b, K * N, -1, 1);
    WgcBuffer *ab = make_f32(e->device, a, M * K), *bb = make_f32(e->device, b, K * N);
    WgcBuffer *cb = make_f32(e->device, NULL, M * N), *sb = make_f32(e->device, NULL, M * N);
    WgcBuffer *copy = make_f32(e->device, NULL, M * N);
    int64_t sa[2] = {M, K}, sbs[2] = {K, N}, sc[2] = {M, N};
    WgcTensor ta = view(ab, 2, sa), tb = view(bb, 2, sbs), tc = view(cb, 2, sc), ts = view(sb, 2, sc);

    CHECK(wgc_stream_set_profiling(e->stream, 1));
    CHECK(wgc_op_matmul(e->stream, &ta, &tb, &tc));
    CHECK(wgc_op_softmax(e->stream, &tc, -1, &ts));
    CHECK(wgc_op_binary(e->stream, WGC_BINARY_OP_MUL, &ts, &ts, &ts));
    bump(e->stream, sb, M * N);
    CHECK(wgc_stream_copy_buffer(e->stream, sb, 0, copy, 0, M * N * 4));
    CHECK(wgc_stream_set_profiling(e->stream, 0));
    CHECK(wgc_op_fill(e->stream, &tc, 0.0)); /* not recorded */

    WgcProfileRecord *r = NULL;
    size_t n = 0;
    CHECK(wgc_stream_profile_records(e->stream, &r, &n));
    EXPECT(n >= 5);
    const char *want[5] = {"matmul", "softmax", "binary.mul", "launch:bump", "copy_buffer"};
    /* Each call's commands are consecutive, calls in order, every call there. */
    uint64_t last_call = 0;
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        EXPECT(r[i].op && r[i].kernel && r[i].shapes);
        EXPECT(r[i].call != UINT64_MAX);
        EXPECT(i == 0 || r[i].call == last_call || r[i].call == last_call + 1);
        if (i == 0 || r[i].call != last_call) {
            EXPECT(seen < 5 && strcmp(r[i].op, want[seen]) == 0);
            seen++;
        }
        last_call = r[i].call;
        expect_time(e, &r[i]);
    }
    EXPECT(seen == 5);
    EXPECT(strcmp(r[0].shapes, "f32[33,47], f32[47,29] -> f32[33,29]") == 0);
    EXPECT(r[0].flops == 2ull * M * N * K);
    EXPECT(r[0].bytes == 4ull * (M * K + K * N + M * N));
    EXPECT(strstr(r[0].kernel, ".wgsl:") != NULL);
    EXPECT(r[0].groups[0] > 0);
    const WgcProfileRecord *last = &r[n - 1], *user = &r[n - 2];
    EXPECT(strcmp(user->kernel, "bump") == 0 && user->groups[0] == (M * N + 63) / 64);
    EXPECT(strcmp(last->kernel, "copy_buffer") == 0 && last->bytes == 2ull * M * N * 4);
    EXPECT(strcmp(last->shapes, "") == 0);

    /* The table: every operator, a total; times only where measured. */
    char *t = table(r, n, WGC_PROFILE_GROUP_BY_OPERATOR, 0);
    printf("%s", t);
    for (int i = 0; i < 5; i++) EXPECT(strstr(t, want[i]) != NULL);
    EXPECT(strstr(t, "total") != NULL);
    EXPECT((strstr(t, "no timestamp queries") != NULL) == !e->info.has_timestamps);
    free(t);
    t = table(r, n, WGC_PROFILE_GROUP_BY_KERNEL, 2);
    EXPECT(strstr(t, "more rows") != NULL && strstr(t, "kernel") != NULL);
    free(t);

    /* The matmul's result is the product. */
    CHECK(wgc_buffer_read(sb, 0, c, M * N * 4)); /* softmax(a @ b)^2 + 1 */
    float *prod = malloc(M * N * 4);
    CHECK(wgc_stream_synchronize(e->stream));
    double *ref = malloc(M * N * sizeof *ref);
    for (int i = 0; i < M; i++) {
        double mx = -1e300, sum = 0;
        double row[N];
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += (double)a[i * K + k] * b[k * N + j];
            row[j] = acc;
            mx = acc > mx ? acc : mx;
        }
        for (int j = 0; j < N; j++) sum += exp(row[j] - mx);
        for (int j = 0; j < N; j++) {
            double s = exp(row[j] - mx) / sum;
            ref[i * N + j] = s * s + 1.0;
        }
    }
    compare_f32("softmax(a @ b)^2 + 1 while profiling", c, ref, M * N, 1e-5, 1e-5);
    CHECK(wgc_buffer_read(copy, 0, prod, M * N * 4));
    compare_f32("copy while profiling", prod, ref, M * N, 1e-5, 1e-5);

    /* Records outlive a clear; clearing forgets them for the next call. */
    CHECK(wgc_stream_profile_clear(e->stream));
    EXPECT(strcmp(r[0].op, "matmul") == 0);
    WgcProfileRecord *r2 = NULL;
    size_t n2 = 7;
    CHECK(wgc_stream_profile_records(e->stream, &r2, &n2));
    EXPECT(n2 == 0 && r2 == NULL);

    /* Misuse of free: a pointer not handed out, then a double free. */
    WgcProfileRecord fake;
    EXPECT_STATUS(wgc_profile_records_free(&fake), WGC_ERROR_INVALID_ARGUMENT);
    CHECK(wgc_profile_records_free(r));
    EXPECT_STATUS(wgc_profile_records_free(r), WGC_ERROR_INVALID_ARGUMENT);

    free(a), free(b), free(c), free(prod), free(ref);
    wgc_buffer_release(ab), wgc_buffer_release(bb), wgc_buffer_release(cb), wgc_buffer_release(sb);
    wgc_buffer_release(copy);
}

/* More timed commands than one query set holds (256), in one batch and
 * over several; every one measured and the work all done. */
static void test_many(TestEnv *e) {
    enum { N = 1000, LAUNCHES = 700 };
    WgcStream *st = NULL;
    CHECK(wgc_stream_create(e->device, &st));
    WgcBuffer *y = make_f32(e->device, NULL, N);
    CHECK(wgc_stream_fill_buffer(st, y, 0, N * 4, 0));
    CHECK(wgc_stream_set_profiling(st, 1));
    for (int i = 0; i < LAUNCHES; i++) bump(st, y, N);
    WgcProfileRecord *r = NULL;
    size_t n = 0;
    /* Release the stream first: the records are taken from a handle the
     * caller still holds, then outlive it. */
    CHECK(wgc_stream_profile_records(st, &r, &n));
    wgc_stream_release(st);
    EXPECT(n == LAUNCHES);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        expect_time(e, &r[i]);
        EXPECT(r[i].call == i);
        total += r[i].gpu_ns;
    }
    EXPECT(!e->info.has_timestamps || total > 0);
    printf("%d launches profiled, GPU total %.3f ms\n", LAUNCHES, total * 1e-6);
    EXPECT(strcmp(r[n - 1].op, "launch:bump") == 0);
    CHECK(wgc_profile_records_free(r));
    float *out = malloc(N * 4);
    double *ref = malloc(N * sizeof *ref);
    CHECK(wgc_buffer_read(y, 0, out, N * 4));
    for (int i = 0; i < N; i++) ref[i] = LAUNCHES;
    compare_f32("700 profiled launches", out, ref, N, 0, 0);
    free(out), free(ref);
    wgc_buffer_release(y);
}

static void test_misuse(TestEnv *e) {
    WgcProfileRecord *r = NULL;
    size_t n = 0, len = 0;
    char text[8];
    EXPECT_STATUS(wgc_stream_set_profiling(NULL, 1), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_stream_set_profiling(e->stream, 2), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_stream_profile_clear(NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_stream_profile_records(NULL, &r, &n), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_stream_profile_records(e->stream, NULL, &n), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_stream_profile_records(e->stream, &r, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_profile_table(NULL, 3, 0, 0, NULL, 0, &len), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_profile_table(NULL, 0, 0, 0, NULL, 0, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_profile_table(NULL, 0, 0, 0, NULL, 8, &len), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_profile_table(NULL, 0, 7, 0, text, sizeof text, &len), WGC_ERROR_INVALID_ARGUMENT);
    /* Too small: the length comes back, the text is untouched. */
    memset(text, 'x', sizeof text);
    len = 0;
    EXPECT_STATUS(wgc_profile_table(NULL, 0, 0, 0, text, sizeof text, &len), WGC_ERROR_TOO_LARGE);
    EXPECT(len > sizeof text && text[0] == 'x');
    /* A record the caller made, with NULL strings and an unmeasured time. */
    WgcProfileRecord mine;
    memset(&mine, 0, sizeof mine);
    mine.time_status = WGC_PROFILE_TIME_NO_TIMESTAMPS;
    char *t = table(&mine, 1, WGC_PROFILE_GROUP_BY_OPERATOR, 0);
    EXPECT(strstr(t, "?") != NULL && strstr(t, "not measured") != NULL);
    free(t);
    CHECK(wgc_profile_records_free(NULL));
}

/* Records taken before the device is destroyed stay readable; afterwards
 * the profiler's calls report the lost device. */
static void test_destroyed_device(TestEnv *e) {
    WgcDevice *dev = NULL;
    WgcStream *st = NULL;
    CHECK(wgc_device_create(e->instance, NULL, &dev));
    CHECK(wgc_stream_create(dev, &st));
    WgcBuffer *y = make_f32(dev, NULL, 64);
    int64_t n = 64;
    WgcTensor t = view(y, 1, &n);
    CHECK(wgc_stream_set_profiling(st, 1));
    CHECK(wgc_op_fill(st, &t, 1.0));
    WgcProfileRecord *r = NULL;
    size_t count = 0;
    CHECK(wgc_stream_profile_records(st, &r, &count));
    EXPECT(count >= 1 && strcmp(r[0].op, "fill") == 0);
    CHECK(wgc_op_fill(st, &t, 2.0));
    CHECK(wgc_device_destroy(dev));
    WgcProfileRecord *r2 = NULL;
    EXPECT_STATUS(wgc_stream_profile_records(st, &r2, &count), WGC_ERROR_DEVICE_LOST);
    EXPECT_STATUS(wgc_stream_set_profiling(st, 1), WGC_ERROR_DEVICE_LOST);
    EXPECT(strcmp(r[0].shapes, "-> f32[64]") == 0);
    CHECK(wgc_profile_records_free(r));
    wgc_buffer_release(y);
    wgc_stream_release(st);
    wgc_device_release(dev);
}

int main(void) {
    TestEnv env = test_env();
    printf("adapter: %s, timestamps: %u\n", env.info.name, env.info.has_timestamps);
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = SRC;
    d.entry_point = "bump";
    CHECK(wgc_kernel_create(env.device, &d, &g_bump));
    test_off_by_default(&env);
    test_records(&env);
    test_many(&env);
    test_misuse(&env);
    test_destroyed_device(&env);
    wgc_kernel_release(g_bump);
    test_env_release(&env);
    return test_finish("test_profiler");
}
