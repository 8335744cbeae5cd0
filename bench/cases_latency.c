/* Per-operator cost: long chains of small dependent operators (GPU span
 * and host wall clock per operator) and the small write + op + read round
 * trip. Limits here are times, not bandwidth. */
#include <math.h>

#include "cases.h"

/* ---- the original chain: 1000 dependent x + 1, * 0.5 on 2^20 elements ---- */
typedef struct {
    HT x, y;
} Small;

static WgcStatus run_small(void *p) {
    Small *c = p;
    WgcStatus s = WGC_OK;
    for (int i = 0; i < 500 && s == WGC_OK; i++) {
        s = OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_ADD, &c->x.t, 1.0, &c->y.t);
        if (s == WGC_OK) s = OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_MUL, &c->y.t, 0.5, &c->x.t);
    }
    return s;
}

/* Median wall ms of `reps` runs, each followed by a wait for the stream. */
static double wall_ms(RunFn fn, void *ctx, int reps) {
    double *w = malloc(sizeof(double) * reps);
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        CHECK(fn(ctx));
        CHECK(wgc_stream_synchronize(g_stream));
        w[r] = now_ms() - t0;
    }
    qsort(w, reps, sizeof(double), cmp_double);
    double m = w[reps / 2];
    free(w);
    return m;
}

static void small_ops_case(void) {
    int64_t n = SZ(1 << 20, 4099);
    Case c = {"small_ops_1000", "latency/chain", "f32", "1000 x 2^20", "latency", 0, 0};
    if (g_small) snprintf(c.size, sizeof c.size, "1000 x %lld", (long long)n);
    c.in_bytes = 4.0 * n;
    if (!case_begin(&c)) return;
    Small s = {ht_random(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 1, &n)};
    if (case_first_run(&c, run_small, &s)) {
        float *h1 = ht_read(&s.x);
        int bad = 0;
        for (size_t i = 0; i < (size_t)n; i += 4099) {
            double v = s.x.host[i];
            for (int k = 0; k < 500; k++) v = (float)((float)(v + 1.0) * 0.5f);
            bad += fabs(h1[i] - v) > 1e-6;
        }
        free(h1);
        double gpu = time_events(&c, run_small, &s, 5) / 1000.0;
        double wall = wall_ms(run_small, &s, 5) / 1000.0;
        case_emit(&c, "small_ops_1000", gpu, !bad);
        case_emit(&c, "small_ops_1000_wall", wall, !bad);
    }
    ht_free(&s.x);
    ht_free(&s.y);
}

/* ---- 2000 dependent small operators of three kinds on 4096 elements:
 * y = x * w, z = tanh(y), m = mean(z), x = z - m; 500 times ---- */
typedef struct {
    HT x, w, y, z, m;
} Chain;

static WgcStatus run_chain(void *p) {
    Chain *c = p;
    WgcStatus s = WGC_OK;
    for (int i = 0; i < 500 && s == WGC_OK; i++) {
        s = OP(wgc_op_binary, g_stream, WGC_BINARY_OP_MUL, &c->x.t, &c->w.t, &c->y.t);
        if (s == WGC_OK) s = OP(wgc_op_unary, g_stream, WGC_UNARY_OP_TANH, &c->y.t, &c->z.t);
        if (s == WGC_OK) s = OP(wgc_op_reduce, g_stream, WGC_REDUCE_OP_MEAN, &c->z.t, NULL, 0, 0, &c->m.t);
        if (s == WGC_OK) s = OP(wgc_op_binary, g_stream, WGC_BINARY_OP_SUB, &c->z.t, &c->m.t, &c->x.t);
    }
    return s;
}

static void chain_case(void) {
    int64_t n = 4096;
    Case c = {"chain2000_4096", "latency/chain", "f32", "2000 ops (mul, tanh, mean, sub) x 4096", "latency", 0, 0};
    c.in_bytes = 4.0 * n;
    if (!case_begin(&c)) return;
    Chain ch = {ht_random(WGC_DTYPE_F32, 1, &n), ht_random(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 1, &n),
                ht_empty(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 0, NULL)};
    if (case_first_run(&c, run_chain, &ch)) {
        float *got = ht_read(&ch.x), *x = malloc(n * sizeof(float)), *z = malloc(n * sizeof(float));
        memcpy(x, ch.x.host, n * sizeof(float));
        for (int k = 0; k < 500; k++) {
            double m = 0;
            for (int64_t i = 0; i < n; i++) z[i] = (float)tanh((double)(x[i] * ch.w.host[i])), m += z[i];
            float mf = (float)(m / (double)n);
            for (int64_t i = 0; i < n; i++) x[i] = z[i] - mf;
        }
        int bad = 0;
        for (int64_t i = 0; i < n; i++) bad += !close_to(got[i], x[i], 1e-4, 0);
        if (bad) fprintf(stderr, "chain: %d of %lld wrong\n", bad, (long long)n);
        free(got);
        free(x);
        free(z);
        double gpu = time_events(&c, run_chain, &ch, 5) / 2000.0;
        double wall = wall_ms(run_chain, &ch, g_small ? 2 : 5) / 2000.0;
        case_emit(&c, "chain2000_4096", gpu, !bad);
        case_emit(&c, "chain2000_4096_wall", wall, !bad);
    }
    ht_free(&ch.x);
    ht_free(&ch.w);
    ht_free(&ch.y);
    ht_free(&ch.z);
    ht_free(&ch.m);
}

/* ---- 4 KiB written from the host, one operator, read back (blocking) ---- */
typedef struct {
    HT x, y;
    float in[1024], out[1024];
} Trip;

static WgcStatus run_trip(void *p) {
    Trip *t = p;
    WgcStatus s = wgc_buffer_write(t->x.buf, 0, t->in, sizeof t->in);
    if (s == WGC_OK) s = OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_MUL, &t->x.t, 2.0, &t->y.t);
    if (s == WGC_OK) s = wgc_buffer_read(t->y.buf, 0, t->out, sizeof t->out);
    return s;
}

static void roundtrip_case(void) {
    int64_t n = 1024;
    Case c = {"roundtrip_4k_wall", "latency/roundtrip", "f32", "write 4 KiB, x * 2, read 4 KiB", "latency", 0, 0};
    if (!case_begin(&c)) return;
    Trip *t = calloc(1, sizeof *t);
    t->x = ht_empty(WGC_DTYPE_F32, 1, &n);
    t->y = ht_empty(WGC_DTYPE_F32, 1, &n);
    for (int i = 0; i < 1024; i++) t->in[i] = frand();
    if (case_first_run(&c, run_trip, t)) {
        int bad = 0;
        for (int i = 0; i < 1024; i++) bad += t->out[i] != 2 * t->in[i];
        int reps = g_small ? 5 : 300;
        for (int r = 0; r < reps / 5; r++) CHECK(run_trip(t));
        case_emit(&c, c.name, wall_ms(run_trip, t, reps), !bad);
    }
    ht_free(&t->x);
    ht_free(&t->y);
    free(t);
}

/* ---- the round trip as `(x.cuda() * 2).cpu()` does it: a new buffer for
 * the input, written from the host, an operator into a new buffer, a read;
 * both buffers released (the pool hands their memory out again) ---- */
#if defined(__GNUC__) && !defined(_WIN32)
#pragma weak wgc_buffer_create_uninit
#define HAVE_UNINIT (&wgc_buffer_create_uninit != NULL)
#else
#define HAVE_UNINIT 1
#endif

static WgcBuffer *output_buffer(uint64_t bytes) {
    WgcBuffer *b = NULL;
    if (HAVE_UNINIT)
        CHECK(wgc_buffer_create_uninit(g_dev, bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    else
        CHECK(wgc_buffer_create(g_dev, bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static WgcStatus run_trip_alloc(void *p) {
    Trip *t = p;
    const int64_t n = 1024;
    WgcBuffer *x = output_buffer(sizeof t->in), *y = output_buffer(sizeof t->out);
    WgcTensor tx, ty;
    WgcStatus s = wgc_buffer_write(x, 0, t->in, sizeof t->in);
    if (s == WGC_OK) s = wgc_tensor_contiguous(x, WGC_DTYPE_F32, 1, &n, &tx);
    if (s == WGC_OK) s = wgc_tensor_contiguous(y, WGC_DTYPE_F32, 1, &n, &ty);
    if (s == WGC_OK) s = OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_MUL, &tx, 2.0, &ty);
    if (s == WGC_OK) s = wgc_buffer_read(y, 0, t->out, sizeof t->out);
    wgc_buffer_release(x);
    wgc_buffer_release(y);
    return s;
}

static void roundtrip_alloc_case(void) {
    Case c = {"roundtrip_alloc_4k_wall", "latency/roundtrip", "f32", "new buffers: write 4 KiB, x * 2, read 4 KiB",
              "latency", 0, 0};
    if (!case_begin(&c)) return;
    Trip *t = calloc(1, sizeof *t);
    for (int i = 0; i < 1024; i++) t->in[i] = frand();
    if (case_first_run(&c, run_trip_alloc, t)) {
        int bad = 0;
        for (int i = 0; i < 1024; i++) bad += t->out[i] != 2 * t->in[i];
        int reps = g_small ? 5 : 300;
        for (int r = 0; r < reps / 5; r++) CHECK(run_trip_alloc(t));
        case_emit(&c, c.name, wall_ms(run_trip_alloc, t, reps), !bad);
    }
    free(t);
}

/* ---- host time of recording one small operator (no waits while
 * recording): 2000 x * 2 and * 0.5 on 4096 elements, each into existing
 * buffers, and each into a new buffer as a binding allocates outputs ---- */
typedef struct {
    HT x, y;
    int alloc;
    double host_ms;
} Record;

static WgcStatus run_record(void *p) {
    Record *r = p;
    WgcStatus s = WGC_OK;
    double t0 = now_ms();
    if (!r->alloc) {
        for (int i = 0; i < 1000 && s == WGC_OK; i++) {
            s = OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_MUL, &r->x.t, 2.0, &r->y.t);
            if (s == WGC_OK) s = OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_MUL, &r->y.t, 0.5, &r->x.t);
        }
    } else {
        WgcTensor cur = r->x.t;
        wgc_buffer_retain((WgcBuffer *)cur.buffer);
        for (int i = 0; i < 2000 && s == WGC_OK; i++) {
            WgcTensor next = cur;
            next.buffer = output_buffer(4 * r->x.n);
            s = OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_MUL, &cur, i % 2 ? 0.5 : 2.0, &next);
            wgc_buffer_release((WgcBuffer *)cur.buffer);
            cur = next;
        }
        if (s == WGC_OK) s = OP(wgc_op_copy, g_stream, &cur, &r->x.t);
        wgc_buffer_release((WgcBuffer *)cur.buffer);
    }
    r->host_ms = now_ms() - t0;
    return s;
}

static void record_host_case(int alloc) {
    int64_t n = 4096;
    Case c = {alloc ? "record_alloc_host_4096" : "record_host_4096", "latency/host", "f32", "", "latency", 0, 0};
    snprintf(c.size, sizeof c.size, "2000 x * 2 and * 0.5 into %s buffers, host time per op", alloc ? "new" : "existing");
    if (!case_begin(&c)) return;
    Record r = {ht_random(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 1, &n), alloc, 0};
    if (case_first_run(&c, run_record, &r)) {
        float *got = ht_read(&r.x);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) bad += got[i] != r.x.host[i];
        free(got);
        int reps = g_small ? 3 : 11;
        double *h = malloc(sizeof(double) * reps);
        for (int k = 0; k < reps; k++) {
            CHECK(run_record(&r));
            CHECK(wgc_stream_synchronize(g_stream));
            h[k] = r.host_ms / 2000.0;
        }
        qsort(h, reps, sizeof(double), cmp_double);
        case_emit(&c, c.name, h[reps / 2], !bad);
        free(h);
    }
    ht_free(&r.x);
    ht_free(&r.y);
}

/* ---- the round trip's two halves: a 4 KiB write followed by a device
 * synchronize, and a 4 KiB read with no work pending ---- */
static WgcStatus run_write(void *p) {
    Trip *t = p;
    WgcStatus s = wgc_buffer_write(t->x.buf, 0, t->in, sizeof t->in);
    return s == WGC_OK ? wgc_device_synchronize(g_dev) : s;
}

static WgcStatus run_read(void *p) {
    Trip *t = p;
    return wgc_buffer_read(t->x.buf, 0, t->out, sizeof t->out);
}

/* Median wall ms of `reps` runs after `reps / 5` warm-up runs. */
static double warm_wall_ms(RunFn fn, void *ctx, int reps) {
    wall_ms(fn, ctx, reps / 5);
    return wall_ms(fn, ctx, reps);
}

static void halves_case(void) {
    int64_t n = 1024;
    Case w = {"write_4k_wall", "latency/roundtrip", "f32", "write 4 KiB, synchronize", "latency", 0, 0};
    Case r = {"read_4k_wall", "latency/roundtrip", "f32", "read 4 KiB, nothing pending", "latency", 0, 0};
    int want_w = case_begin(&w), want_r = case_begin(&r);
    if (!want_w && !want_r) return;
    Trip *t = calloc(1, sizeof *t);
    t->x = ht_empty(WGC_DTYPE_F32, 1, &n);
    for (int i = 0; i < 1024; i++) t->in[i] = frand();
    if (case_first_run(&w, run_write, t) && case_first_run(&r, run_read, t)) {
        int bad = memcmp(t->in, t->out, sizeof t->in) != 0;
        int reps = g_small ? 5 : 300;
        if (want_w) case_emit(&w, w.name, warm_wall_ms(run_write, t, reps), !bad);
        if (want_r) case_emit(&r, r.name, warm_wall_ms(run_read, t, reps), !bad);
    }
    ht_free(&t->x);
    free(t);
}

/* ---- the submission floor: one operator on one element, then a wait for
 * the stream (no host copies), next to the round trip above ---- */
typedef struct {
    HT x, y;
} Floor;

static WgcStatus run_floor(void *p) {
    Floor *f = p;
    return OP(wgc_op_binary_scalar, g_stream, WGC_BINARY_OP_MUL, &f->x.t, 2.0, &f->y.t);
}

static void submit_floor_case(void) {
    int64_t n = 1;
    Case c = {"submit_floor_wall", "latency/roundtrip", "f32", "x * 2 on 1 element, synchronize", "latency", 0, 0};
    if (!case_begin(&c)) return;
    Floor f = {ht_random(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 1, &n)};
    if (case_first_run(&c, run_floor, &f)) {
        float *got = ht_read(&f.y);
        int bad = got[0] != 2 * f.x.host[0];
        free(got);
        case_emit(&c, c.name, warm_wall_ms(run_floor, &f, g_small ? 5 : 300), !bad);
    }
    ht_free(&f.x);
    ht_free(&f.y);
}

void cases_latency(void) {
    small_ops_case();
    chain_case();
    roundtrip_case();
    roundtrip_alloc_case();
    halves_case();
    record_host_case(0);
    record_host_case(1);
    submit_floor_case();
}
