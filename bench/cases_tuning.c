/* First-call cost of the operators the autotuner tunes: each on a fresh
 * device (made with the benchmark device's options, so `wgc_bench
 * --autotune` tunes here too), the wall time of its first call (kernel
 * compilation, and with tuning on the timing of every candidate) and of the
 * second. Compare `wgc_bench first_call` with `wgc_bench --autotune
 * first_call` for the cost of tuning; the other cases, run with and without
 * --autotune, show what the tuned choices gain. */
#include <math.h>

#include "cases.h"

typedef struct {
    int op; /* 0 sum of rows, 1 skinny product, 2 softmax of long rows */
    HT a, b, o;
} First;

static WgcStatus run_first(void *p) {
    First *f = p;
    int32_t axis = 1;
    switch (f->op) {
    case 0: return OP(wgc_op_reduce, g_stream, WGC_REDUCE_OP_SUM, &f->a.t, &axis, 1, 0, &f->o.t);
    case 1: return OP(wgc_op_matmul, g_stream, &f->a.t, &f->b.t, &f->o.t);
    default: return OP(wgc_op_softmax, g_stream, &f->a.t, 1, &f->o.t);
    }
}

static double wall_once(First *f) {
    double t0 = now_ms();
    CHECK(run_first(f));
    CHECK(wgc_stream_synchronize(g_stream));
    return now_ms() - t0;
}

/* The first output element against a double reference. */
static int first_ok(First *f, int64_t k, int64_t n) {
    float *got = ht_read(&f->o);
    double ref = 0;
    if (f->op == 0) {
        for (int64_t i = 0; i < k; i++) ref += f->a.host[i];
    } else if (f->op == 1) {
        for (int64_t i = 0; i < k; i++) ref += (double)f->a.host[i] * f->b.host[i * n];
    } else {
        double mx = -INFINITY, sum = 0;
        for (int64_t i = 0; i < k; i++) mx = fmax(mx, f->a.host[i]);
        for (int64_t i = 0; i < k; i++) sum += exp(f->a.host[i] - mx);
        ref = exp(f->a.host[0] - mx) / sum;
    }
    int ok = close_to(got[0], ref, 1e-3, 1e-3);
    free(got);
    return ok;
}

static void first_call_case(const char *name, const char *size, int op, int64_t m, int64_t k, int64_t n) {
    Case c = {name, "latency/first_call", "f32", "", "latency", 0, 0};
    snprintf(c.size, sizeof c.size, "%s", size);
    if (!case_begin(&c)) return;
    WgcDevice *main_dev = g_dev;
    WgcStream *main_stream = g_stream;
    CHECK(wgc_device_create(g_instance, &g_device_options, &g_dev));
    CHECK(wgc_stream_create(g_dev, &g_stream));
    First f = {op, {0}, {0}, {0}};
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, so[2] = {m, op == 1 ? n : op == 0 ? 1 : k};
    f.a = ht_random(WGC_DTYPE_F32, 2, sa);
    if (op == 1) f.b = ht_random(WGC_DTYPE_F32, 2, sb);
    f.o = ht_empty(WGC_DTYPE_F32, op == 0 ? 1 : 2, so);
    double first = wall_once(&f), again = wall_once(&f);
    int ok = first_ok(&f, k, n);
    char again_name[96];
    snprintf(again_name, sizeof again_name, "%s_again", name);
    case_emit(&c, name, first, ok);
    case_emit(&c, again_name, again, ok);
    ht_free(&f.a), ht_free(&f.o);
    if (op == 1) ht_free(&f.b);
    wgc_stream_release(g_stream);
    wgc_device_release(g_dev);
    g_dev = main_dev;
    g_stream = main_stream;
}

void cases_tuning(void) {
    first_call_case("first_call_sum_rows_wall", g_small ? "37x1001" : "4096x4096", 0, SZ(4096, 37), SZ(4096, 1001), 1);
    first_call_case("first_call_gemv_wall", g_small ? "5x333 @ 333x1028" : "8x4096 @ 4096x14336", 1, SZ(8, 5),
                    SZ(4096, 333), SZ(14336, 1028));
    first_call_case("first_call_softmax_long_wall", g_small ? "3x40001" : "32x128256", 2, SZ(32, 3), SZ(128256, 40001),
                    1);
}
