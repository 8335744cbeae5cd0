/* Graph capture and replay: a chain of built-in operators and a user kernel
 * captured once and replayed against double-precision references, with new
 * inputs written into captured buffers, with buffers rebound through a
 * binding table, with a patched kernel parameter, from several threads at
 * once; and every misuse the header names. */
#include <pthread.h>

#include "test_util.h"

#define R 7
#define C 150
#define N (R * C)

static const char *AFFINE =
    "struct P { scale: f32, shift: f32, n: u32, pad: u32 }\n"
    "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n"
    "  if (g.x < p.n) { y[g.x] = x[g.x] * p.scale + p.shift; }\n"
    "}\n";

typedef struct AffineParams {
    float scale, shift;
    uint32_t n, pad;
} AffineParams;

/* The buffers of one run of the chain. */
typedef struct Chain {
    WgcBuffer *x, *w, *a, *b, *c, *d, *e;
} Chain;

static TestEnv env;
static WgcKernel *affine;

static WgcBuffer *new_buffer(WgcDevice *dev, size_t bytes) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static Chain chain_new(void) {
    Chain ch;
    ch.x = new_buffer(env.device, N * 4);
    ch.w = new_buffer(env.device, N * 4);
    ch.a = new_buffer(env.device, N * 4);
    ch.b = new_buffer(env.device, N * 4);
    ch.c = new_buffer(env.device, N * 4);
    ch.d = new_buffer(env.device, N * 4);
    ch.e = new_buffer(env.device, R * 4);
    return ch;
}

static void chain_release(Chain *ch) {
    WgcBuffer *all[] = {ch->x, ch->w, ch->a, ch->b, ch->c, ch->d, ch->e};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgc_buffer_release(all[i]);
}

/* a = x * 1.5; b = a + w; c = affine(b, scale, 0.25); d = softmax(c, 1);
 * e = sum(c, 1). Returns the user kernel's launch index when capturing. */
static uint32_t record_chain(WgcStream *s, const Chain *ch, float scale) {
    int64_t shape[2] = {R, C}, rows[1] = {R};
    WgcTensor x = tensor_of(ch->x, WGC_DTYPE_F32, 2, shape), w = tensor_of(ch->w, WGC_DTYPE_F32, 2, shape);
    WgcTensor a = tensor_of(ch->a, WGC_DTYPE_F32, 2, shape), b = tensor_of(ch->b, WGC_DTYPE_F32, 2, shape);
    WgcTensor c = tensor_of(ch->c, WGC_DTYPE_F32, 2, shape), d = tensor_of(ch->d, WGC_DTYPE_F32, 2, shape);
    WgcTensor e = tensor_of(ch->e, WGC_DTYPE_F32, 1, rows);
    CHECK(wgc_op_binary_scalar(s, WGC_BINARY_OP_MUL, &x, 1.5, &a));
    CHECK(wgc_op_binary(s, WGC_BINARY_OP_ADD, &a, &w, &b));
    uint32_t capturing = 0, index = UINT32_MAX;
    CHECK(wgc_stream_is_capturing(s, &capturing));
    if (capturing) CHECK(wgc_stream_capture_launch_count(s, &index));
    WgcBinding binds[2] = {{0, ch->b, 0, 0}, {1, ch->c, 0, 0}};
    AffineParams p = {scale, 0.25f, N, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = binds;
    l.binding_count = 2;
    l.params = &p;
    l.params_size = sizeof p;
    l.workgroups[0] = (N + 63) / 64;
    l.workgroups[1] = l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(s, affine, &l));
    CHECK(wgc_op_softmax(s, &c, 1, &d));
    int32_t axis = 1;
    CHECK(wgc_op_reduce(s, WGC_REDUCE_OP_SUM, &c, &axis, 1, 0, &e));
    return index;
}

/* The chain's d and e in double precision. */
static void reference(const float *x, const float *w, float scale, double *d, double *e) {
    for (int r = 0; r < R; r++) {
        double c[C], mx = -INFINITY, sum = 0, total = 0;
        for (int j = 0; j < C; j++) {
            double a = (double)(float)(x[r * C + j] * 1.5f);
            c[j] = (a + w[r * C + j]) * scale + 0.25;
            mx = c[j] > mx ? c[j] : mx;
            total += c[j];
        }
        for (int j = 0; j < C; j++) sum += exp(c[j] - mx);
        for (int j = 0; j < C; j++) d[r * C + j] = exp(c[j] - mx) / sum;
        e[r] = total;
    }
}

static int check_outputs(const char *what, WgcBuffer *dbuf, WgcBuffer *ebuf, const float *x, const float *w,
                         float scale) {
    static float d[N], e[R];
    static double dref[N], eref[R];
    CHECK(wgc_buffer_read(dbuf, 0, d, sizeof d));
    CHECK(wgc_buffer_read(ebuf, 0, e, sizeof e));
    reference(x, w, scale, dref, eref);
    char name[128];
    snprintf(name, sizeof name, "%s: softmax", what);
    int bad = compare_f32(name, d, dref, N, 1e-7, 2e-5);
    snprintf(name, sizeof name, "%s: row sums", what);
    return bad + compare_f32(name, e, eref, R, 1e-3, 1e-5);
}

static float xs[N], ws[N], xs2[N], ws2[N];

static WgcGraphReplay replay_desc(const WgcGraphRebind *rebinds, uint32_t nr, const WgcGraphScalar *scalars,
                                  uint32_t ns) {
    WgcGraphReplay r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.rebinds = rebinds;
    r.rebind_count = nr;
    r.scalars = scalars;
    r.scalar_count = ns;
    return r;
}

static uint32_t slot_of(WgcGraph *g, WgcBuffer *b) {
    uint32_t slot = UINT32_MAX;
    CHECK(wgc_graph_buffer_slot(g, b, &slot));
    return slot;
}

/* Replay equals eager; new inputs by writing; by rebinding; a new scalar. */
static void test_replay(void) {
    Chain eager = chain_new(), cap = chain_new();
    CHECK(wgc_buffer_write(eager.x, 0, xs, sizeof xs));
    CHECK(wgc_buffer_write(eager.w, 0, ws, sizeof ws));
    record_chain(env.stream, &eager, 0.5f);
    check_outputs("eager", eager.d, eager.e, xs, ws, 0.5f);

    CHECK(wgc_buffer_write(cap.x, 0, xs, sizeof xs));
    CHECK(wgc_buffer_write(cap.w, 0, ws, sizeof ws));
    CHECK(wgc_stream_begin_capture(env.stream));
    uint32_t launch = record_chain(env.stream, &cap, 0.5f);
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    uint32_t dispatches = 0, launches = 0, slots = 0;
    CHECK(wgc_graph_counts(g, &dispatches, &launches, &slots));
    EXPECT(launch >= 2 && launch < launches);
    EXPECT(dispatches >= 5 && launches == dispatches && slots >= 7);

    /* Nothing ran during the capture: the outputs are still zero. */
    float d0[N];
    CHECK(wgc_buffer_read(cap.d, 0, d0, sizeof d0));
    int zero = 1;
    for (int i = 0; i < N; i++) zero &= d0[i] == 0.0f;
    EXPECT(zero);

    CHECK(wgc_graph_replay(g, env.stream, NULL));
    check_outputs("replay", cap.d, cap.e, xs, ws, 0.5f);
    float de[N], dr[N];
    CHECK(wgc_buffer_read(eager.d, 0, de, sizeof de));
    CHECK(wgc_buffer_read(cap.d, 0, dr, sizeof dr));
    EXPECT(memcmp(de, dr, sizeof de) == 0);

    /* New inputs written into the captured buffers. */
    CHECK(wgc_buffer_write(cap.x, 0, xs2, sizeof xs2));
    CHECK(wgc_graph_replay(g, env.stream, NULL));
    check_outputs("replay after a write", cap.d, cap.e, xs2, ws, 0.5f);

    /* A binding table: other inputs and outputs; the captured ones untouched. */
    Chain other = chain_new();
    CHECK(wgc_buffer_write(other.x, 0, xs, sizeof xs));
    CHECK(wgc_buffer_write(other.w, 0, ws2, sizeof ws2));
    WgcGraphRebind table[4] = {
        {slot_of(g, cap.x), other.x}, {slot_of(g, cap.w), other.w}, {slot_of(g, cap.d), other.d},
        {slot_of(g, cap.e), other.e}};
    WgcGraphReplay r = replay_desc(table, 4, NULL, 0);
    for (int i = 0; i < 2; i++) { /* the second replay reuses the table's bind groups */
        CHECK(wgc_graph_replay(g, env.stream, &r));
        check_outputs("rebound", other.d, other.e, xs, ws2, 0.5f);
    }
    check_outputs("captured outputs after a rebound replay", cap.d, cap.e, xs2, ws, 0.5f);

    /* A patched scalar: the user kernel's scale, for one replay only. */
    float scale = -1.25f;
    WgcGraphScalar patch = {launch, 0, &scale, 4};
    WgcGraphReplay rs = replay_desc(table, 4, &patch, 1);
    CHECK(wgc_graph_replay(g, env.stream, &rs));
    check_outputs("patched scale", other.d, other.e, xs, ws2, -1.25f);
    CHECK(wgc_graph_replay(g, env.stream, NULL));
    check_outputs("captured scale again", cap.d, cap.e, xs2, ws, 0.5f);

    /* Another stream of the device. */
    WgcStream *s2 = NULL;
    CHECK(wgc_stream_create(env.device, &s2));
    CHECK(wgc_buffer_write(cap.x, 0, xs, sizeof xs));
    CHECK(wgc_graph_replay(g, s2, NULL));
    CHECK(wgc_stream_flush(s2));
    check_outputs("replay on another stream", cap.d, cap.e, xs, ws, 0.5f);
    wgc_stream_release(s2);

    /* Bad replays: checked before anything is recorded. */
    WgcBuffer *small = new_buffer(env.device, N * 4 - 4);
    WgcGraphRebind bad_size = {slot_of(g, cap.x), small};
    WgcGraphReplay rb = replay_desc(&bad_size, 1, NULL, 0);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_INVALID_ARGUMENT);
    WgcGraphRebind past = {slots, other.x};
    rb = replay_desc(&past, 1, NULL, 0);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_OUT_OF_RANGE);
    WgcGraphRebind twice[2] = {{slot_of(g, cap.x), other.x}, {slot_of(g, cap.x), other.x}};
    rb = replay_desc(twice, 2, NULL, 0);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_INVALID_ARGUMENT);
    /* The affine kernel would read and write one buffer. */
    WgcGraphRebind alias = {slot_of(g, cap.b), cap.c};
    rb = replay_desc(&alias, 1, NULL, 0);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_BINDING_MISMATCH);
    WgcGraphRebind null_buf = {0, NULL};
    rb = replay_desc(&null_buf, 1, NULL, 0);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_NULL_POINTER);
    WgcGraphScalar far = {launch, 12, &scale, 8};
    rb = replay_desc(NULL, 0, &far, 1);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_OUT_OF_RANGE);
    WgcGraphScalar no_launch = {launches, 0, &scale, 4};
    rb = replay_desc(NULL, 0, &no_launch, 1);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_OUT_OF_RANGE);
    rb = replay_desc(NULL, 3, NULL, 0);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_NULL_POINTER);
    uint32_t slot = 0;
    EXPECT_STATUS(wgc_graph_buffer_slot(g, small, &slot), WGC_ERROR_NOT_FOUND);
    EXPECT_STATUS(wgc_graph_replay(NULL, env.stream, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_graph_replay(g, NULL, NULL), WGC_ERROR_NULL_POINTER);
    /* Nothing of the refused replays ran. */
    CHECK(wgc_buffer_write(cap.x, 0, xs2, sizeof xs2));
    CHECK(wgc_stream_synchronize(env.stream));
    check_outputs("after refused replays", cap.d, cap.e, xs, ws, 0.5f);
    wgc_buffer_release(small);

    /* Another device. */
    WgcDevice *dev2 = NULL;
    WgcStream *s3 = NULL;
    CHECK(wgc_device_create(env.instance, NULL, &dev2));
    CHECK(wgc_stream_create(dev2, &s3));
    EXPECT_STATUS(wgc_graph_replay(g, s3, NULL), WGC_ERROR_DEVICE_MISMATCH);
    WgcBuffer *foreign = new_buffer(dev2, N * 4);
    WgcGraphRebind cross = {slot_of(g, cap.x), foreign};
    rb = replay_desc(&cross, 1, NULL, 0);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &rb), WGC_ERROR_DEVICE_MISMATCH);
    wgc_buffer_release(foreign);
    wgc_stream_release(s3);
    wgc_device_release(dev2);

    wgc_graph_release(g);
    chain_release(&eager);
    chain_release(&cap);
    chain_release(&other);
}

/* The graph holds what it captured: the caller's buffers may go. */
static void test_released_buffers(void) {
    Chain ch = chain_new();
    WgcBuffer *out_d = new_buffer(env.device, N * 4), *out_e = new_buffer(env.device, R * 4);
    CHECK(wgc_buffer_write(ch.x, 0, xs, sizeof xs));
    CHECK(wgc_buffer_write(ch.w, 0, ws, sizeof ws));
    CHECK(wgc_stream_begin_capture(env.stream));
    record_chain(env.stream, &ch, 2.0f);
    CHECK(wgc_stream_copy_buffer(env.stream, ch.d, 0, out_d, 0, N * 4));
    CHECK(wgc_stream_copy_buffer(env.stream, ch.e, 0, out_e, 0, R * 4));
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    chain_release(&ch);
    /* Memory churn: released allocations would be handed out again here. */
    for (int i = 0; i < 8; i++) {
        WgcBuffer *junk = new_buffer(env.device, N * 4);
        CHECK(wgc_stream_fill_buffer(env.stream, junk, 0, N * 4, 0x7fc00000u));
        wgc_buffer_release(junk);
    }
    CHECK(wgc_graph_replay(g, env.stream, NULL));
    check_outputs("replay after the caller released the captured buffers", out_d, out_e, xs, ws, 2.0f);
    /* Released graph: the recorded replay still runs. */
    float zeros[N];
    memset(zeros, 0, sizeof zeros);
    CHECK(wgc_buffer_write(out_d, 0, zeros, sizeof zeros));
    /* A second reference keeps the graph when the first is dropped. */
    wgc_graph_retain(g);
    wgc_graph_release(g);
    wgc_graph_retain(NULL);
    wgc_graph_release(NULL);
    CHECK(wgc_graph_replay(g, env.stream, NULL));
    wgc_graph_release(g);
    check_outputs("replay recorded before the graph's release", out_d, out_e, xs, ws, 2.0f);
    wgc_buffer_release(out_d);
    wgc_buffer_release(out_e);
}

/* What cannot be captured fails and leaves the capture usable. */
static void test_capture_misuse(void) {
    WgcGraph *g = NULL;
    EXPECT_STATUS(wgc_stream_end_capture(env.stream, &g), WGC_ERROR_INVALID_OPERATION);
    uint32_t count = 0;
    EXPECT_STATUS(wgc_stream_capture_launch_count(env.stream, &count), WGC_ERROR_INVALID_OPERATION);
    Chain ch = chain_new();
    WgcBuffer *unrelated = new_buffer(env.device, 16);
    CHECK(wgc_buffer_write(ch.x, 0, xs, sizeof xs));
    CHECK(wgc_buffer_write(ch.w, 0, ws, sizeof ws));
    CHECK(wgc_stream_begin_capture(env.stream));
    EXPECT_STATUS(wgc_stream_begin_capture(env.stream), WGC_ERROR_INVALID_OPERATION);
    record_chain(env.stream, &ch, 1.0f);
    float host[N];
    EXPECT_STATUS(wgc_buffer_read(ch.d, 0, host, sizeof host), WGC_ERROR_INVALID_OPERATION);
    EXPECT_STATUS(wgc_buffer_read(ch.x, 0, host, 16), WGC_ERROR_INVALID_OPERATION);
    EXPECT_STATUS(wgc_buffer_write(ch.x, 0, xs, 16), WGC_ERROR_INVALID_OPERATION);
    EXPECT_STATUS(wgc_stream_synchronize(env.stream), WGC_ERROR_INVALID_OPERATION);
    WgcEvent *ev = NULL;
    EXPECT_STATUS(wgc_stream_record_event(env.stream, &ev), WGC_ERROR_INVALID_OPERATION);
    /* Host transfers of buffers the capture does not use are allowed. */
    float four[4] = {1, 2, 3, 4}, back[4];
    CHECK(wgc_buffer_write(unrelated, 0, four, sizeof four));
    CHECK(wgc_buffer_read(unrelated, 0, back, sizeof back));
    EXPECT(memcmp(four, back, sizeof four) == 0);
    CHECK(wgc_stream_flush(env.stream));
    /* Replay onto a capturing stream. */
    WgcStream *s2 = NULL;
    CHECK(wgc_stream_create(env.device, &s2));
    CHECK(wgc_stream_begin_capture(s2));
    WgcGraph *empty = NULL;
    CHECK(wgc_stream_end_capture(s2, &empty));
    uint32_t dispatches = 1;
    CHECK(wgc_graph_counts(empty, &dispatches, NULL, NULL));
    EXPECT(dispatches == 0);
    EXPECT_STATUS(wgc_graph_replay(empty, env.stream, NULL), WGC_ERROR_INVALID_OPERATION);
    CHECK(wgc_graph_replay(empty, s2, NULL));
    wgc_graph_release(empty);
    wgc_stream_release(s2);
    /* The capture is still whole: end it and replay it. */
    CHECK(wgc_stream_is_capturing(env.stream, &count));
    EXPECT(count == 1);
    CHECK(wgc_stream_end_capture(env.stream, &g));
    CHECK(wgc_stream_is_capturing(env.stream, &count));
    EXPECT(count == 0);
    CHECK(wgc_graph_replay(g, env.stream, NULL));
    check_outputs("replay of a capture with refused calls", ch.d, ch.e, xs, ws, 1.0f);
    EXPECT_STATUS(wgc_stream_end_capture(env.stream, &g), WGC_ERROR_INVALID_OPERATION);
    wgc_graph_release(g);
    wgc_buffer_release(unrelated);
    chain_release(&ch);

    /* A stream released while capturing drops its capture. */
    WgcStream *s3 = NULL;
    CHECK(wgc_stream_create(env.device, &s3));
    CHECK(wgc_stream_begin_capture(s3));
    Chain c3 = chain_new();
    record_chain(s3, &c3, 1.0f);
    wgc_stream_release(s3);
    chain_release(&c3);
}

/* Concurrent replays of one graph, each thread on its own stream with its
 * own outputs (a binding table) and its own scale. */
typedef struct Worker {
    WgcGraph *g;
    uint32_t slot_d, slot_e, launch;
    int index, failures;
} Worker;

static void *worker(void *arg) {
    Worker *wk = (Worker *)arg;
    WgcStream *s = NULL;
    CHECK(wgc_stream_create(env.device, &s));
    WgcBuffer *d = new_buffer(env.device, N * 4), *e = new_buffer(env.device, R * 4);
    WgcGraphRebind table[2] = {{wk->slot_d, d}, {wk->slot_e, e}};
    for (int round = 0; round < 4; round++) {
        float scale = 0.1f * (float)(wk->index * 4 + round + 1);
        WgcGraphScalar patch = {wk->launch, 0, &scale, 4};
        WgcGraphReplay r = replay_desc(table, 2, &patch, 1);
        CHECK(wgc_graph_replay(wk->g, s, &r));
        CHECK(wgc_stream_flush(s));
        float dg[N], eg[R];
        CHECK(wgc_buffer_read(d, 0, dg, sizeof dg));
        CHECK(wgc_buffer_read(e, 0, eg, sizeof eg));
        double dr[N], er[R];
        reference(xs, ws, scale, dr, er);
        for (int i = 0; i < N; i++) wk->failures += fabs(dg[i] - dr[i]) > 1e-7 + 2e-5 * fabs(dr[i]);
        for (int i = 0; i < R; i++) wk->failures += fabs(eg[i] - er[i]) > 1e-3 + 1e-5 * fabs(er[i]);
    }
    wgc_buffer_release(d);
    wgc_buffer_release(e);
    wgc_stream_release(s);
    return NULL;
}

static void test_threads(void) {
    Chain ch = chain_new();
    CHECK(wgc_buffer_write(ch.x, 0, xs, sizeof xs));
    CHECK(wgc_buffer_write(ch.w, 0, ws, sizeof ws));
    CHECK(wgc_stream_begin_capture(env.stream));
    uint32_t launch = record_chain(env.stream, &ch, 1.0f);
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    enum { THREADS = 4 };
    pthread_t th[THREADS];
    Worker wk[THREADS];
    for (int i = 0; i < THREADS; i++) {
        Worker w = {g, slot_of(g, ch.d), slot_of(g, ch.e), launch, i, 0};
        wk[i] = w;
        pthread_create(&th[i], NULL, worker, &wk[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        if (wk[i].failures) {
            fprintf(stderr, "thread %d: %d wrong elements\n", i, wk[i].failures);
            g_failures++;
        }
    }
    wgc_graph_release(g);
    chain_release(&ch);
}

/* A reduction long enough to sum in two passes through scratch space: the
 * graph keeps that scratch (a third slot) while it lives, so eager work that
 * takes scratch of the same size in between does not disturb its replays. */
static void test_scratch(void) {
    enum { LONG = 300000 };
    float *host = malloc(LONG * sizeof(float));
    double ref = 0;
    for (int i = 0; i < LONG; i++) host[i] = (float)rng_uniform(-1, 1), ref += host[i];
    WgcBuffer *x = upload(env.device, host, LONG * sizeof(float));
    WgcBuffer *out = new_buffer(env.device, 4), *out2 = new_buffer(env.device, 4);
    int64_t n = LONG;
    WgcTensor tx = tensor_of(x, WGC_DTYPE_F32, 1, &n), to = tensor_of(out, WGC_DTYPE_F32, 0, NULL);
    WgcTensor to2 = tensor_of(out2, WGC_DTYPE_F32, 0, NULL);
    CHECK(wgc_stream_begin_capture(env.stream));
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &tx, NULL, 0, 0, &to));
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    uint32_t dispatches = 0, slots = 0;
    CHECK(wgc_graph_counts(g, &dispatches, NULL, &slots));
    EXPECT(dispatches >= 2 && slots >= 3);
    WgcStream *s2 = NULL;
    CHECK(wgc_stream_create(env.device, &s2));
    for (int r = 0; r < 3; r++) {
        CHECK(wgc_graph_replay(g, env.stream, NULL));
        CHECK(wgc_op_reduce(s2, WGC_REDUCE_OP_SUM, &tx, NULL, 0, 0, &to2));
        CHECK(wgc_stream_flush(env.stream));
        CHECK(wgc_stream_flush(s2));
        float got = 0, got2 = 0;
        CHECK(wgc_buffer_read(out, 0, &got, 4));
        CHECK(wgc_buffer_read(out2, 0, &got2, 4));
        double gd = got, ref_sum = ref;
        compare_f64("replayed two-pass sum", &gd, &ref_sum, 1, 1e-3, 1e-5);
        gd = got2;
        compare_f64("eager two-pass sum beside it", &gd, &ref_sum, 1, 1e-3, 1e-5);
    }
    wgc_stream_release(s2);
    wgc_graph_release(g);
    wgc_buffer_release(x);
    wgc_buffer_release(out);
    wgc_buffer_release(out2);
    free(host);
}

/* An indirect launch: its counts are read and checked again at each replay,
 * from the captured buffer or from one a binding table puts in its place. */
static void test_indirect(void) {
    WgcBuffer *x = upload(env.device, xs, sizeof xs), *y = new_buffer(env.device, N * 4);
    uint32_t all[4] = {(N + 63) / 64, 1, 1, 0}, one[4] = {1, 1, 1, 0}, none[4] = {0, 1, 1, 0};
    WgcBuffer *counts = NULL, *counts2 = NULL, *plain = new_buffer(env.device, 16);
    CHECK(wgc_buffer_create(env.device, 16, WGC_BUFFER_USAGE_ALL, &counts));
    CHECK(wgc_buffer_create(env.device, 16, WGC_BUFFER_USAGE_ALL, &counts2));
    CHECK(wgc_buffer_write(counts, 0, all, sizeof all));
    CHECK(wgc_buffer_write(counts2, 0, none, sizeof none));
    WgcBinding binds[2] = {{0, x, 0, 0}, {1, y, 0, 0}};
    AffineParams p = {2.0f, 0.25f, N, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = binds;
    l.binding_count = 2;
    l.params = &p;
    l.params_size = sizeof p;
    l.indirect_buffer = counts;
    CHECK(wgc_stream_begin_capture(env.stream));
    CHECK(wgc_stream_launch(env.stream, affine, &l));
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    uint32_t dispatches = 0, launches = 0;
    CHECK(wgc_graph_counts(g, &dispatches, &launches, NULL));
    EXPECT(launches == 1 && dispatches == 2); /* the counts check and the launch */
    static float got[N];
    static double ref[N];
    for (int i = 0; i < N; i++) ref[i] = (double)xs[i] * 2.0 + 0.25;
    CHECK(wgc_graph_replay(g, env.stream, NULL));
    CHECK(wgc_buffer_read(y, 0, got, sizeof got));
    compare_f32("indirect replay", got, ref, N, 1e-6, 1e-6);
    /* New counts written into the captured buffer: one workgroup. */
    float zeros[N];
    memset(zeros, 0, sizeof zeros);
    CHECK(wgc_buffer_write(y, 0, zeros, sizeof zeros));
    CHECK(wgc_buffer_write(counts, 0, one, sizeof one));
    CHECK(wgc_graph_replay(g, env.stream, NULL));
    CHECK(wgc_buffer_read(y, 0, got, sizeof got));
    int right = 1;
    for (int i = 0; i < N; i++) right &= i < 64 ? fabs(got[i] - ref[i]) <= 1e-6 + 1e-6 * fabs(ref[i]) : got[i] == 0.0f;
    EXPECT(right);
    /* Rebound counts: zero workgroups, y untouched. */
    CHECK(wgc_buffer_write(y, 0, zeros, sizeof zeros));
    WgcGraphRebind table = {slot_of(g, counts), counts2};
    WgcGraphReplay r = replay_desc(&table, 1, NULL, 0);
    CHECK(wgc_graph_replay(g, env.stream, &r));
    CHECK(wgc_buffer_read(y, 0, got, sizeof got));
    EXPECT(memcmp(got, zeros, sizeof zeros) == 0);
    table.buffer = plain; /* no indirect usage */
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &r), WGC_ERROR_BINDING_MISMATCH);
    wgc_graph_release(g);
    WgcBuffer *all_bufs[] = {x, y, counts, counts2, plain};
    for (int i = 0; i < 5; i++) wgc_buffer_release(all_bufs[i]);
}

int main(void) {
    env = test_env();
    affine = compile(env.device, AFFINE, "main");
    fill_uniform_f32(xs, N, -2, 2);
    fill_uniform_f32(ws, N, -1, 1);
    fill_uniform_f32(xs2, N, -3, 3);
    fill_uniform_f32(ws2, N, -1, 1);
    test_replay();
    test_released_buffers();
    test_capture_misuse();
    test_threads();
    test_scratch();
    test_indirect();
    wgc_kernel_release(affine);
    test_env_release(&env);
    return test_finish("test_graph");
}
