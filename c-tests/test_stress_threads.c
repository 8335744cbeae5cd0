/* Thread stress: 8 threads, two streams each, on one device, for a bounded
 * time (WGC_STRESS_SECONDS, default 20). Each thread runs a random mix of
 * operators (binary, reductions, matmul, softmax, variance), copies and
 * fills, a shared kernel on a shared input, and events: its own and ones
 * other threads recorded, waited on, queried and timed from every thread at
 * once. Every result is checked against the CPU, every call must succeed,
 * and when all is released no buffer memory stays live. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

enum { THREADS = 8, SHARED_EVENTS = 32, SHARED_N = 1 << 16, TASKS = 9 };

static const char *AXPY =
    "struct P { a: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn axpy(@builtin(global_invocation_id) id: vec3<u32>) {\n"
    "    if (id.x < p.n) { y[id.x] = p.a * x[id.x] + y[id.x]; }\n"
    "}\n";

static const char *TASK_NAMES[TASKS] = {"binary", "sum", "two-stream sums", "matmul", "softmax",
                                        "fill+copy", "shared kernel", "variance", "events"};

typedef struct Shared {
    WgcDevice *dev;
    int has_timestamps;
    WgcKernel *axpy;
    WgcBuffer *ones; /* SHARED_N ones, read by every thread */
    pthread_mutex_t lock;
    WgcEvent *events[SHARED_EVENTS];
    double deadline;
    int failures;
    long done[TASKS], failed[TASKS];
} Shared;

typedef struct Worker {
    Shared *sh;
    int index;
    uint64_t rng;
    WgcStream *s[2];
    volatile int task; /* what it is doing, for a hang report */
    volatile long finished;
} Worker;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint32_t rnd(Worker *w, uint32_t n) {
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return (uint32_t)((w->rng * 2685821657736338717ull) >> 33) % n;
}

static void fail(Worker *w, const char *what) {
    pthread_mutex_lock(&w->sh->lock);
    w->sh->failures++;
    if (w->sh->failed[w->task]++ < 3) /* the first few of each kind */
        fprintf(stderr, "thread %d, %s: %s\n", w->index, TASK_NAMES[w->task], what);
    pthread_mutex_unlock(&w->sh->lock);
}

/* A call that must succeed; on failure the task stops (returns 0). */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        WgcStatus s_ = (call);                                                                     \
        if (s_ != WGC_OK) {                                                                        \
            char m_[512];                                                                          \
            snprintf(m_, sizeof m_, "%s -> %s: %s", #call, wgc_status_string(s_),                  \
                     wgc_last_error_message());                                                    \
            fail(w, m_);                                                                           \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static WgcBuffer *buffer(Worker *w, uint64_t bytes) {
    WgcBuffer *b = NULL;
    WgcStatus s = wgc_buffer_create(w->sh->dev, bytes, 0, &b);
    if (s != WGC_OK) {
        char m[300];
        snprintf(m, sizeof m, "wgc_buffer_create(%llu) -> %s: %s", (unsigned long long)bytes, wgc_status_string(s),
                 wgc_last_error_message());
        fail(w, m);
    }
    return b;
}

static WgcTensor vec(WgcBuffer *b, uint32_t rank, int64_t d0, int64_t d1) {
    int64_t shape[2] = {d0, d1};
    WgcTensor t;
    wgc_tensor_contiguous(b, WGC_DTYPE_F32, rank, shape, &t);
    return t;
}

static int check_exact(Worker *w, const float *got, const float *want, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            char m[200];
            snprintf(m, sizeof m, "%s: element %zu is %.9g, expected %.9g", what, i, got[i], want[i]);
            fail(w, m);
            return 0;
        }
    return 1;
}

static int check_close(Worker *w, const float *got, const double *want, size_t n, double rel, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= rel * (fabs(want[i]) + 1e-6))) {
            char m[200];
            snprintf(m, sizeof m, "%s: element %zu is %.9g, expected %.9g", what, i, got[i], want[i]);
            fail(w, m);
            return 0;
        }
    return 1;
}

/* Finish the stream's work one of three ways before the host reads. */
static WgcStatus settle(Worker *w, WgcStream *s) {
    switch (rnd(w, 3)) {
    case 0: return wgc_stream_synchronize(s);
    case 1: {
        WgcEvent *e = NULL;
        WgcStatus st = wgc_stream_record_event(s, &e);
        if (st == WGC_OK) st = wgc_event_wait(e);
        wgc_event_release(e);
        return st;
    }
    default: return WGC_OK; /* wgc_buffer_read waits by itself */
    }
}

static int task_binary(Worker *w, WgcStream *s) {
    int ok = 0;
    uint32_t n = 1 + rnd(w, 50000), op = rnd(w, 3);
    const uint32_t OPS[3] = {WGC_BINARY_OP_ADD, WGC_BINARY_OP_MUL, WGC_BINARY_OP_MAXIMUM};
    float *a = malloc(n * 4), *b = malloc(n * 4), *want = malloc(n * 4), *got = malloc(n * 4);
    WgcBuffer *ba = buffer(w, n * 4), *bb = buffer(w, n * 4), *bo = buffer(w, n * 4);
    if (!ba || !bb || !bo) goto out;
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (float)((int)rnd(w, 2001) - 1000) / 7.0f;
        b[i] = (float)((int)rnd(w, 2001) - 1000) / 3.0f;
        want[i] = op == 0 ? a[i] + b[i] : op == 1 ? a[i] * b[i] : (a[i] > b[i] ? a[i] : b[i]);
    }
    TRY(wgc_buffer_write(ba, 0, a, n * 4));
    TRY(wgc_buffer_write(bb, 0, b, n * 4));
    WgcTensor ta = vec(ba, 1, n, 0), tb = vec(bb, 1, n, 0), to = vec(bo, 1, n, 0);
    TRY(wgc_op_binary(s, OPS[op], &ta, &tb, &to));
    TRY(settle(w, s));
    TRY(wgc_buffer_read(bo, 0, got, n * 4));
    ok = check_exact(w, got, want, n, "a OP b");
out:
    wgc_buffer_release(ba);
    wgc_buffer_release(bb);
    wgc_buffer_release(bo);
    free(a), free(b), free(want), free(got);
    return ok;
}

/* A sum of small integers (exact in f32), sometimes right behind enough
 * launches that the reduction's passes fall into two submissions. */
static int task_sum(Worker *w, WgcStream *s) {
    int ok = 0;
    uint32_t n = 1000 + rnd(w, 300000), fills = rnd(w, 2) ? 120 + rnd(w, 10) : 0;
    float *x = malloc(n * 4), got = -1, want = 0;
    WgcBuffer *bx = buffer(w, n * 4), *bo = buffer(w, 4), *scratch = buffer(w, 64);
    if (!bx || !bo || !scratch) goto out;
    for (uint32_t i = 0; i < n; i++) want += x[i] = (float)rnd(w, 8);
    TRY(wgc_buffer_write(bx, 0, x, n * 4));
    for (uint32_t i = 0; i < fills; i++) TRY(wgc_stream_fill_buffer(s, scratch, 0, 64, i));
    WgcTensor tx = vec(bx, 1, n, 0), to = vec(bo, 0, 0, 0);
    TRY(wgc_op_reduce(s, WGC_REDUCE_OP_SUM, &tx, NULL, 0, 0, &to));
    TRY(settle(w, s));
    TRY(wgc_buffer_read(bo, 0, &got, 4));
    ok = check_exact(w, &got, &want, 1, "sum");
out:
    wgc_buffer_release(bx);
    wgc_buffer_release(bo);
    wgc_buffer_release(scratch);
    free(x);
    return ok;
}

/* 127 fills on one stream, a sum of ones there, a sum of twos on the other
 * stream, then the second stream synchronized first. */
static int task_two_stream_sums(Worker *w) {
    int ok = 0;
    enum { N = 100000 };
    float got[2] = {-1, -1}, want[2] = {N, 2 * N};
    WgcBuffer *b1 = buffer(w, N * 4), *b2 = buffer(w, N * 4), *o1 = buffer(w, 4), *o2 = buffer(w, 4),
              *scratch = buffer(w, 64);
    if (!b1 || !b2 || !o1 || !o2 || !scratch) goto out;
    WgcTensor t1 = vec(b1, 1, N, 0), t2 = vec(b2, 1, N, 0), r1 = vec(o1, 0, 0, 0), r2 = vec(o2, 0, 0, 0);
    TRY(wgc_op_fill(w->s[0], &t1, 1.0));
    TRY(wgc_op_fill(w->s[1], &t2, 2.0));
    TRY(wgc_stream_synchronize(w->s[0]));
    TRY(wgc_stream_synchronize(w->s[1]));
    for (int i = 0; i < 127; i++) TRY(wgc_stream_fill_buffer(w->s[0], scratch, 0, 64, (uint32_t)i));
    TRY(wgc_op_reduce(w->s[0], WGC_REDUCE_OP_SUM, &t1, NULL, 0, 0, &r1));
    TRY(wgc_op_reduce(w->s[1], WGC_REDUCE_OP_SUM, &t2, NULL, 0, 0, &r2));
    TRY(wgc_stream_synchronize(w->s[1]));
    TRY(wgc_stream_synchronize(w->s[0]));
    TRY(wgc_buffer_read(o1, 0, &got[0], 4));
    TRY(wgc_buffer_read(o2, 0, &got[1], 4));
    ok = check_exact(w, got, want, 2, "sums of ones and of twos");
out:
    wgc_buffer_release(b1), wgc_buffer_release(b2), wgc_buffer_release(o1), wgc_buffer_release(o2);
    wgc_buffer_release(scratch);
    return ok;
}

/* Small integers: every product and sum is exact in f32. */
static int task_matmul(Worker *w, WgcStream *s) {
    int ok = 0;
    uint32_t M = 1 + rnd(w, 64), K = 1 + rnd(w, 64), N = 1 + rnd(w, 64);
    float *a = malloc(M * K * 4), *b = malloc(K * N * 4), *want = calloc(M * N, 4), *got = malloc(M * N * 4);
    WgcBuffer *ba = buffer(w, M * K * 4), *bb = buffer(w, K * N * 4), *bc = buffer(w, M * N * 4);
    if (!ba || !bb || !bc) goto out;
    for (uint32_t i = 0; i < M * K; i++) a[i] = (float)((int)rnd(w, 5) - 2);
    for (uint32_t i = 0; i < K * N; i++) b[i] = (float)((int)rnd(w, 5) - 2);
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t k = 0; k < K; k++)
            for (uint32_t j = 0; j < N; j++) want[i * N + j] += a[i * K + k] * b[k * N + j];
    TRY(wgc_buffer_write(ba, 0, a, M * K * 4));
    TRY(wgc_buffer_write(bb, 0, b, K * N * 4));
    WgcTensor ta = vec(ba, 2, M, K), tb = vec(bb, 2, K, N), tc = vec(bc, 2, M, N);
    TRY(wgc_op_matmul(s, &ta, &tb, &tc));
    TRY(settle(w, s));
    TRY(wgc_buffer_read(bc, 0, got, M * N * 4));
    ok = check_exact(w, got, want, M * N, "matmul");
out:
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
    free(a), free(b), free(want), free(got);
    return ok;
}

static int task_softmax(Worker *w, WgcStream *s) {
    int ok = 0;
    uint32_t rows = 1 + rnd(w, 16), len = 1 + rnd(w, 1000), n = rows * len;
    float *x = malloc(n * 4), *got = malloc(n * 4);
    double *want = malloc(n * sizeof *want);
    WgcBuffer *bx = buffer(w, n * 4), *bo = buffer(w, n * 4);
    if (!bx || !bo) goto out;
    for (uint32_t i = 0; i < n; i++) x[i] = (float)rnd(w, 6001) / 1000.0f - 3.0f;
    for (uint32_t r = 0; r < rows; r++) {
        double m = -1e30, sum = 0;
        for (uint32_t i = 0; i < len; i++) m = fmax(m, x[r * len + i]);
        for (uint32_t i = 0; i < len; i++) sum += exp(x[r * len + i] - m);
        for (uint32_t i = 0; i < len; i++) want[r * len + i] = exp(x[r * len + i] - m) / sum;
    }
    TRY(wgc_buffer_write(bx, 0, x, n * 4));
    WgcTensor tx = vec(bx, 2, rows, len), to = vec(bo, 2, rows, len);
    TRY(wgc_op_softmax(s, &tx, -1, &to));
    TRY(settle(w, s));
    TRY(wgc_buffer_read(bo, 0, got, n * 4));
    ok = check_close(w, got, want, n, 1e-5, "softmax");
out:
    wgc_buffer_release(bx), wgc_buffer_release(bo);
    free(x), free(got), free(want);
    return ok;
}

static int task_fill_copy(Worker *w, WgcStream *s) {
    int ok = 0;
    uint32_t n = 16 + rnd(w, 100000), from = rnd(w, n / 2), count = 1 + rnd(w, n - from), pattern = rnd(w, 1u << 30);
    float *got = malloc(n * 4), *want = malloc(n * 4), fpat;
    memcpy(&fpat, &pattern, 4);
    WgcBuffer *src = buffer(w, n * 4), *dst = buffer(w, n * 4);
    if (!src || !dst) goto out;
    for (uint32_t i = 0; i < n; i++) want[i] = i >= from && i < from + count ? fpat : 0.0f;
    TRY(wgc_stream_fill_buffer(s, src, 0, n * 4, pattern));
    TRY(wgc_stream_copy_buffer(s, src, (uint64_t)from * 4, dst, (uint64_t)from * 4, (uint64_t)count * 4));
    TRY(settle(w, s));
    TRY(wgc_buffer_read(dst, 0, got, n * 4));
    ok = check_exact(w, got, want, n, "fill then copy");
out:
    wgc_buffer_release(src), wgc_buffer_release(dst);
    free(got), free(want);
    return ok;
}

/* The shared kernel on the shared input: y = a * ones + y. */
static int task_shared_kernel(Worker *w, WgcStream *s) {
    int ok = 0;
    uint32_t n = 1 + rnd(w, SHARED_N), reps = 1 + rnd(w, 20);
    float a = (float)rnd(w, 9), *y = malloc(n * 4), *got = malloc(n * 4);
    WgcBuffer *by = buffer(w, n * 4);
    if (!by) goto out;
    for (uint32_t i = 0; i < n; i++) y[i] = (float)rnd(w, 100);
    TRY(wgc_buffer_write(by, 0, y, n * 4));
    struct {
        float a;
        uint32_t n;
    } p = {a, n};
    WgcBinding b[2] = {{0, w->sh->ones, 0, 0}, {1, by, 0, 0}};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = 2;
    l.params = &p;
    l.params_size = sizeof p;
    l.workgroups[0] = (n + 63) / 64;
    l.workgroups[1] = l.workgroups[2] = 1;
    for (uint32_t r = 0; r < reps; r++) TRY(wgc_stream_launch(s, w->sh->axpy, &l));
    for (uint32_t i = 0; i < n; i++) y[i] += a * (float)reps;
    TRY(settle(w, s));
    TRY(wgc_buffer_read(by, 0, got, n * 4));
    ok = check_exact(w, got, y, n, "shared kernel");
out:
    wgc_buffer_release(by);
    free(y), free(got);
    return ok;
}

static int task_variance(Worker *w, WgcStream *s) {
    int ok = 0;
    uint32_t rows = 1 + rnd(w, 8), len = 2 + rnd(w, 5000), n = rows * len;
    float *x = malloc(n * 4), got[8];
    double want[8];
    WgcBuffer *bx = buffer(w, n * 4), *bo = buffer(w, rows * 4);
    if (!bx || !bo) goto out;
    for (uint32_t i = 0; i < n; i++) x[i] = (float)rnd(w, 10001) / 10000.0f + 100.0f;
    for (uint32_t r = 0; r < rows; r++) {
        double mean = 0, m2 = 0;
        for (uint32_t i = 0; i < len; i++) mean += x[r * len + i];
        mean /= len;
        for (uint32_t i = 0; i < len; i++) m2 += (x[r * len + i] - mean) * (x[r * len + i] - mean);
        want[r] = m2 / (len - 1);
    }
    TRY(wgc_buffer_write(bx, 0, x, n * 4));
    int32_t axis = 1;
    WgcTensor tx = vec(bx, 2, rows, len), to = vec(bo, 1, rows, 0);
    TRY(wgc_op_var(s, &tx, &axis, 1, 0, 1, &to));
    TRY(settle(w, s));
    TRY(wgc_buffer_read(bo, 0, got, rows * 4));
    ok = check_close(w, got, want, rows, 1e-3, "variance");
out:
    wgc_buffer_release(bx), wgc_buffer_release(bo);
    free(x);
    return ok;
}

/* Take a reference to a shared event (NULL if none yet). */
static WgcEvent *shared_event(Worker *w) {
    pthread_mutex_lock(&w->sh->lock);
    WgcEvent *e = w->sh->events[rnd(w, SHARED_EVENTS)];
    wgc_event_retain(e);
    pthread_mutex_unlock(&w->sh->lock);
    return e;
}

static void publish(Worker *w, WgcEvent *e) {
    wgc_event_retain(e);
    pthread_mutex_lock(&w->sh->lock);
    uint32_t i = rnd(w, SHARED_EVENTS);
    WgcEvent *old = w->sh->events[i];
    w->sh->events[i] = e;
    pthread_mutex_unlock(&w->sh->lock);
    wgc_event_release(old);
}

static int elapsed_ok(Worker *w, WgcEvent *a, WgcEvent *b, const char *what) {
    double ms = -1;
    WgcStatus s = wgc_event_elapsed_ms(a, b, &ms);
    char m[512];
    if (!w->sh->has_timestamps) {
        if (s == WGC_ERROR_UNSUPPORTED) return 1;
        snprintf(m, sizeof m, "%s: wgc_event_elapsed_ms without timestamps -> %s", what, wgc_status_string(s));
    } else if (s != WGC_OK) {
        snprintf(m, sizeof m, "%s: wgc_event_elapsed_ms -> %s: %s", what, wgc_status_string(s), wgc_last_error_message());
    } else if (!isfinite(ms)) {
        snprintf(m, sizeof m, "%s: elapsed %g ms", what, ms);
    } else {
        return 1;
    }
    fail(w, m);
    return 0;
}

static int task_events(Worker *w, WgcStream *s) {
    int ok = 0;
    WgcEvent *start = NULL, *end = NULL, *x = NULL, *y = NULL;
    uint32_t n = 1 + rnd(w, SHARED_N);
    WgcBuffer *by = buffer(w, n * 4);
    if (!by) goto out;
    TRY(wgc_stream_record_event(s, &start));
    WgcTensor t = vec(by, 1, n, 0);
    TRY(wgc_op_fill(s, &t, 3.0));
    TRY(wgc_stream_record_event(s, &end));
    publish(w, start);
    publish(w, end);
    if (rnd(w, 2)) TRY(wgc_stream_flush(s));
    /* Another thread's events: wait, query, time; all at once with the others. */
    x = shared_event(w);
    y = shared_event(w);
    if (x) {
        uint32_t done = 7;
        TRY(wgc_event_wait(x));
        TRY(wgc_event_query(x, &done));
        if (done != 1) {
            fail(w, "wgc_event_query after wgc_event_wait is not 1");
            goto out;
        }
    }
    if (x && y && !elapsed_ok(w, x, y, "shared events")) goto out;
    if (!elapsed_ok(w, start, end, "own events")) goto out;
    float got = 0, three = 3.0f;
    TRY(wgc_buffer_read(by, (uint64_t)(n - 1) * 4, &got, 4));
    ok = check_exact(w, &got, &three, 1, "work between events");
out:
    wgc_event_release(start), wgc_event_release(end), wgc_event_release(x), wgc_event_release(y);
    wgc_buffer_release(by);
    return ok;
}

static void *worker(void *arg) {
    Worker *w = arg;
    for (int i = 0; i < 2; i++)
        if (wgc_stream_create(w->sh->dev, &w->s[i]) != WGC_OK) {
            w->task = 0;
            fail(w, "wgc_stream_create failed");
            return NULL;
        }
    while (now_s() < w->sh->deadline) {
        w->task = (int)rnd(w, TASKS);
        WgcStream *s = w->s[rnd(w, 2)];
        int ok = 0;
        switch (w->task) {
        case 0: ok = task_binary(w, s); break;
        case 1: ok = task_sum(w, s); break;
        case 2: ok = task_two_stream_sums(w); break;
        case 3: ok = task_matmul(w, s); break;
        case 4: ok = task_softmax(w, s); break;
        case 5: ok = task_fill_copy(w, s); break;
        case 6: ok = task_shared_kernel(w, s); break;
        case 7: ok = task_variance(w, s); break;
        default: ok = task_events(w, s); break;
        }
        if (ok) {
            pthread_mutex_lock(&w->sh->lock);
            w->sh->done[w->task]++;
            pthread_mutex_unlock(&w->sh->lock);
        }
        w->finished++;
    }
    wgc_stream_release(w->s[0]);
    wgc_stream_release(w->s[1]);
    w->task = -1;
    return NULL;
}

static uint64_t live_bytes(WgcDevice *dev) {
    WgcMemoryStats m;
    memset(&m, 0, sizeof m);
    m.struct_size = sizeof m;
    CHECK(wgc_device_memory_stats(dev, &m));
    return m.live_bytes;
}

int main(void) {
    const char *env = getenv("WGC_STRESS_SECONDS");
    double seconds = env ? atof(env) : 20;
    TestEnv e = test_env();
    Shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.lock, NULL);
    sh.dev = e.device;
    sh.has_timestamps = (int)e.info.has_timestamps;
    sh.axpy = compile(e.device, AXPY, "axpy");
    float *ones = malloc(SHARED_N * 4);
    for (int i = 0; i < SHARED_N; i++) ones[i] = 1.0f;
    sh.ones = upload(e.device, ones, SHARED_N * 4);
    free(ones);
    CHECK(wgc_device_synchronize(e.device));
    const uint64_t baseline = live_bytes(e.device);

    Worker w[THREADS];
    pthread_t t[THREADS];
    sh.deadline = now_s() + seconds;
    for (int i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].sh = &sh;
        w[i].index = i;
        w[i].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        if (pthread_create(&t[i], NULL, worker, &w[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    /* A thread stuck far past the deadline is a hang: say where. */
    for (;;) {
        int running = 0;
        for (int i = 0; i < THREADS; i++) running += w[i].task != -1;
        if (!running) break;
        if (now_s() > sh.deadline + 120) {
            for (int i = 0; i < THREADS; i++)
                if (w[i].task != -1)
                    fprintf(stderr, "thread %d stuck in task %s after %ld tasks\n", i, TASK_NAMES[w[i].task],
                            w[i].finished);
            fprintf(stderr, "test_stress_threads: hang\n");
            _exit(1);
        }
        struct timespec tick = {0, 100000000};
        nanosleep(&tick, NULL);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);

    long total = 0;
    for (int k = 0; k < TASKS; k++) {
        printf("  %-16s %5ld passed %5ld failed\n", TASK_NAMES[k], sh.done[k], sh.failed[k]);
        total += sh.done[k];
    }
    printf("%ld tasks checked on %d threads in %.0f s\n", total, THREADS, seconds);
    g_failures += sh.failures;
    EXPECT(total >= THREADS);

    for (int i = 0; i < SHARED_EVENTS; i++) wgc_event_release(sh.events[i]);
    CHECK(wgc_device_synchronize(e.device));
    uint64_t live = live_bytes(e.device);
    if (live != baseline) {
        fprintf(stderr, "%llu bytes live after every task released its buffers (%llu before)\n",
                (unsigned long long)live, (unsigned long long)baseline);
        g_failures++;
    }
    wgc_kernel_release(sh.axpy);
    wgc_buffer_release(sh.ones);
    pthread_mutex_destroy(&sh.lock);
    test_env_release(&e);
    return test_finish("test_stress_threads");
}
