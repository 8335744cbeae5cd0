/* Threads: several threads share one device, each with its own stream and
 * buffers, compiling the same kernels at the same time, reading a shared
 * input buffer, and keeping their own last-error message. One stream shared
 * by two threads is serialized, not corrupted. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "test_util.h"

enum { THREADS = 6, ROUNDS = 8, N = 2000 };

static const char *SRC =
    "struct P { k: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn acc(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = y[id.x] + p.k * x[id.x]; }\n"
    "}\n";

typedef struct {
    int index;
    WgcDevice *device;
    WgcBuffer *shared_x;
    const float *host_x;
    int failures;
} Job;

static void launch_acc(WgcStream *st, WgcKernel *k, WgcBuffer *x, WgcBuffer *y, float kf) {
    struct { float k; uint32_t n; } p = {kf, N};
    WgcBinding b[2] = {{0, x, 0, 0}, {1, y, 0, 0}};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = 2;
    l.params = &p;
    l.params_size = sizeof p;
    l.workgroups[0] = (N + 63) / 64;
    l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(st, k, &l));
}

static void *worker(void *arg) {
    Job *job = arg;
    WgcStream *st = NULL;
    CHECK(wgc_stream_create(job->device, &st));
    /* The shared source (cache contention) and one of its own. */
    WgcKernel *shared = compile(job->device, SRC, "acc");
    char own_src[256];
    snprintf(own_src, sizeof own_src,
             "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
             "@compute @workgroup_size(64) fn own(@builtin(global_invocation_id) id: vec3<u32>) {\n"
             "    if (id.x < arrayLength(&y)) { y[id.x] = y[id.x] * %d.0; } }\n",
             job->index + 2);
    WgcKernel *own = compile(job->device, own_src, "own");

    float *out = malloc(N * sizeof *out);
    double *ref = malloc(N * sizeof *ref);
    for (int round = 0; round < ROUNDS; round++) {
        WgcBuffer *y = NULL;
        CHECK(wgc_buffer_create(job->device, N * 4, 0, &y)); /* pooled memory, zeroed */
        float k = (float)(job->index + 1) * 0.5f;
        for (int rep = 0; rep < 3; rep++) launch_acc(st, shared, job->shared_x, y, k);
        WgcBinding b[1] = {{0, y, 0, 0}};
        WgcLaunch l;
        memset(&l, 0, sizeof l);
        l.struct_size = sizeof l;
        l.bindings = b;
        l.binding_count = 1;
        l.workgroups[0] = (N + 63) / 64;
        l.workgroups[1] = l.workgroups[2] = 1;
        CHECK(wgc_stream_launch(st, own, &l));
        if (round % 2) CHECK(wgc_stream_synchronize(st));
        CHECK(wgc_buffer_read(y, 0, out, N * 4));
        int bad = 0;
        for (int i = 0; i < N; i++) {
            double r = 3.0 * k * job->host_x[i] * (job->index + 2);
            bad += out[i] != r;
        }
        if (bad) {
            fprintf(stderr, "thread %d round %d: %d wrong elements\n", job->index, round, bad);
            job->failures++;
        }
        /* The last-error message belongs to this thread. */
        char name[32];
        snprintf(name, sizeof name, "missing_%d_%d", job->index, round);
        WgcKernelDesc d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        d.source = SRC;
        d.entry_point = name;
        WgcKernel *none = NULL;
        if (wgc_kernel_create(job->device, &d, &none) != WGC_ERROR_NOT_FOUND ||
            strstr(wgc_last_error_message(), name) == NULL) {
            fprintf(stderr, "thread %d: wrong error message: %s\n", job->index, wgc_last_error_message());
            job->failures++;
        }
        wgc_buffer_release(y);
    }
    free(out);
    free(ref);
    wgc_kernel_release(shared);
    wgc_kernel_release(own);
    wgc_stream_release(st);
    return NULL;
}

typedef struct {
    WgcStream *stream;
    WgcKernel *kernel;
    WgcBuffer *x, *y;
} SharedStream;

static void *shared_stream_worker(void *arg) {
    SharedStream *s = arg;
    for (int i = 0; i < 100; i++) launch_acc(s->stream, s->kernel, s->x, s->y, 1.0f);
    CHECK(wgc_stream_flush(s->stream));
    return NULL;
}

int main(void) {
    TestEnv env = test_env();
    float *x = malloc(N * sizeof *x);
    /* Multiples of 1/64: every sum below is exact in f32. */
    for (int i = 0; i < N; i++) x[i] = (float)((int)(rng_next() % 129) - 64) / 64.0f;
    WgcBuffer *bx = upload(env.device, x, N * sizeof *x);

    pthread_t threads[THREADS];
    Job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t].index = t;
        jobs[t].device = env.device;
        jobs[t].shared_x = bx;
        jobs[t].host_x = x;
        jobs[t].failures = 0;
        if (pthread_create(&threads[t], NULL, worker, &jobs[t]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        g_failures += jobs[t].failures;
    }

    /* Two threads recording on one stream: 200 launches, all applied. */
    SharedStream s = {env.stream, NULL, bx, NULL};
    s.kernel = compile(env.device, SRC, "acc");
    CHECK(wgc_buffer_create(env.device, N * 4, 0, &s.y));
    pthread_t a, b;
    pthread_create(&a, NULL, shared_stream_worker, &s);
    pthread_create(&b, NULL, shared_stream_worker, &s);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    float *out = malloc(N * sizeof *out);
    double *ref = malloc(N * sizeof *ref);
    CHECK(wgc_buffer_read(s.y, 0, out, N * 4));
    for (int i = 0; i < N; i++) ref[i] = 200.0 * x[i];
    compare_f32("shared stream", out, ref, N, 0, 0);

    free(out);
    free(ref);
    free(x);
    wgc_kernel_release(s.kernel);
    wgc_buffer_release(s.y);
    wgc_buffer_release(bx);
    test_env_release(&env);
    return test_finish("test_threads");
}
