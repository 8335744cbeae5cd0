/* Graph replay against eager recording: the 2000-operator chain of
 * cases_latency.c (y = x * w, z = tanh(y), m = mean(z), x = z - m; 500
 * times on 4096 floats) recorded eagerly, and captured once and replayed.
 * Host time per dispatch (recording or replaying it, plus the flush that
 * encodes and submits it, not waiting for the GPU), wall time per dispatch
 * with the wait, and GPU time. The replay is checked against the same
 * double-precision reference as the eager chain first. */
#include <math.h>

#include "cases.h"

#if defined(__GNUC__) && !defined(_WIN32)
#pragma weak wgc_stream_begin_capture
#pragma weak wgc_stream_end_capture
#pragma weak wgc_graph_replay
#pragma weak wgc_graph_counts
#endif

typedef struct {
    HT x, w, y, z, m;
    WgcGraph *graph;
    uint32_t dispatches;
} GChain;

static WgcStatus record_chain(GChain *c) {
    WgcStatus s = WGC_OK;
    for (int i = 0; i < 500 && s == WGC_OK; i++) {
        s = OP(wgc_op_binary, g_stream, WGC_BINARY_OP_MUL, &c->x.t, &c->w.t, &c->y.t);
        if (s == WGC_OK) s = OP(wgc_op_unary, g_stream, WGC_UNARY_OP_TANH, &c->y.t, &c->z.t);
        if (s == WGC_OK) s = OP(wgc_op_reduce, g_stream, WGC_REDUCE_OP_MEAN, &c->z.t, NULL, 0, 0, &c->m.t);
        if (s == WGC_OK) s = OP(wgc_op_binary, g_stream, WGC_BINARY_OP_SUB, &c->z.t, &c->m.t, &c->x.t);
    }
    return s;
}

static WgcStatus run_eager(void *p) {
    return record_chain(p);
}

static WgcStatus run_replay(void *p) {
    GChain *c = p;
    return OP(wgc_graph_replay, c->graph, g_stream, NULL);
}

/* Captures the chain (the first run of the replay case). */
static WgcStatus capture(GChain *c) {
    WgcStatus s = OP(wgc_stream_begin_capture, g_stream);
    if (s != WGC_OK) return s;
    WgcStatus rec = record_chain(c);
    s = OP(wgc_stream_end_capture, g_stream, &c->graph);
    if (rec != WGC_OK) return rec;
    if (s == WGC_OK) s = OP(wgc_graph_counts, c->graph, &c->dispatches, NULL, NULL);
    return s;
}

/* Median over `reps` runs of (host ms to record and flush, wall ms to the
 * end of the wait). */
static void host_and_wall(RunFn fn, void *ctx, int reps, double *host, double *wall) {
    double *h = malloc(sizeof(double) * reps), *w = malloc(sizeof(double) * reps);
    for (int r = 0; r < reps; r++) {
        CHECK(wgc_stream_synchronize(g_stream));
        double t0 = now_ms();
        CHECK(fn(ctx));
        CHECK(wgc_stream_flush(g_stream));
        h[r] = now_ms() - t0;
        CHECK(wgc_stream_synchronize(g_stream));
        w[r] = now_ms() - t0;
    }
    qsort(h, reps, sizeof(double), cmp_double);
    qsort(w, reps, sizeof(double), cmp_double);
    *host = h[reps / 2];
    *wall = w[reps / 2];
    free(h);
    free(w);
}

/* The chain's x after 500 rounds, in double precision from the start values. */
static int check_chain(const GChain *c, const float *start, const char *what) {
    int64_t n = (int64_t)c->x.n;
    float *got = ht_read(&c->x), *x = malloc(n * sizeof(float)), *z = malloc(n * sizeof(float));
    memcpy(x, start, n * sizeof(float));
    for (int k = 0; k < 500; k++) {
        double m = 0;
        for (int64_t i = 0; i < n; i++) z[i] = (float)tanh((double)(x[i] * c->w.host[i])), m += z[i];
        float mf = (float)(m / (double)n);
        for (int64_t i = 0; i < n; i++) x[i] = z[i] - mf;
    }
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += !close_to(got[i], x[i], 1e-4, 0);
    if (bad) fprintf(stderr, "%s: %d of %lld wrong\n", what, bad, (long long)n);
    free(got);
    free(x);
    free(z);
    return bad;
}

static void graph_chain_case(void) {
    int64_t n = 4096;
    Case c = {"graph_chain2000_4096", "latency/graph", "f32", "2000 ops (mul, tanh, mean, sub) x 4096, replayed",
              "latency", 0, 0};
    c.in_bytes = 4.0 * n;
    if (!case_begin(&c)) return;
    GChain ch = {ht_random(WGC_DTYPE_F32, 1, &n), ht_random(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 1, &n),
                 ht_empty(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 0, NULL), NULL, 0};
    float *start = malloc(n * sizeof(float));
    memcpy(start, ch.x.host, n * sizeof(float));
    /* Eager first: its check, then its host and wall time per operator. */
    int bad = 0;
    if (case_first_run(&c, run_eager, &ch)) {
        bad += check_chain(&ch, start, "eager chain");
        int reps = g_small ? 2 : 7;
        double host, wall;
        host_and_wall(run_eager, &ch, reps, &host, &wall);
        case_emit(&c, "graph_chain2000_eager_host", host / 2000.0, !bad);
        case_emit(&c, "graph_chain2000_eager_wall", wall / 2000.0, !bad);
    }
    /* Captured once, replayed from the same start. */
    CHECK(wgc_buffer_write(ch.x.buf, 0, start, n * sizeof(float)));
    WgcStatus s = capture(&ch);
    if (s != WGC_OK) {
        fprintf(stderr, "graph_chain2000_4096: capture: %s: %s\n", wgc_status_string(s), wgc_last_error_message());
    } else if (case_first_run(&c, run_replay, &ch)) {
        bad += check_chain(&ch, start, "replayed chain");
        double per = (double)ch.dispatches;
        int reps = g_small ? 2 : 15;
        double host, wall;
        host_and_wall(run_replay, &ch, reps, &host, &wall);
        double gpu = time_events(&c, run_replay, &ch, g_small ? 2 : 5);
        fprintf(stderr, "graph_chain2000_4096: %u dispatches per replay\n", ch.dispatches);
        case_emit(&c, "graph_chain2000_replay_host", host / per, !bad);
        case_emit(&c, "graph_chain2000_replay_wall", wall / per, !bad);
        case_emit(&c, "graph_chain2000_replay_gpu", gpu / per, !bad);
    }
    if (ch.graph) wgc_graph_release(ch.graph);
    free(start);
    ht_free(&ch.x);
    ht_free(&ch.w);
    ht_free(&ch.y);
    ht_free(&ch.z);
    ht_free(&ch.m);
}

void cases_graph(void) {
    graph_chain_case();
}
