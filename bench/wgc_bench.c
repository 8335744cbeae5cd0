/* The wgcompute side of the benchmark: every operator family on several
 * shape classes (cases_*.c). Each case is checked against a CPU reference
 * first, then timed with GPU timestamps (events around each run, median
 * after a warm-up of at least 1 s under load). Prints one JSON object per
 * case: {"case", "class", "dtype", "size", "ms", "check", "limit", "amount"}.
 *
 *   wgc_bench [--list] [--small] [--autotune] [FILTER ...]
 * FILTERs select cases whose name or class contains one of them; --list
 * prints the selected cases without running them; --small runs every case
 * at a reduced size (a correctness check for software drivers); --autotune
 * opens the device with the autotuner on (WGC_AUTOTUNE_ON: each tuned
 * operator times its candidates on its first call of a shape class, which
 * the checked first run of each case absorbs), and WGC_BENCH_TUNING_FILE
 * names its tuning cache file (to time with choices loaded from a file). Exit status
 * 1 if a case was wrong or unsupported. `wgc_bench diag` and `diag2` time
 * one add and one SGEMM three ways (see BENCHMARKS.md). */
#include "cases.h"

extern int g_list, g_failures, g_filter_count;
extern const char **g_filters;

typedef struct {
    HT a, b, o;
} Bin;
static WgcStatus run_add(void *p) {
    Bin *c = p;
    return wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, &c->a.t, &c->b.t, &c->o.t);
}
static WgcStatus run_matmul(void *p) {
    Bin *c = p;
    return wgc_op_matmul(g_stream, &c->a.t, &c->b.t, &c->o.t);
}

/* ---- timing diagnostics: the same work timed three ways ---- */
static double time_batch(RunFn fn, void *ctx, int reps) {
    WgcEvent *e0, *e1;
    double ms;
    CHECK(wgc_stream_record_event(g_stream, &e0));
    for (int i = 0; i < reps; i++) CHECK(fn(ctx));
    CHECK(wgc_stream_record_event(g_stream, &e1));
    CHECK(wgc_event_elapsed_ms(e0, e1, &ms));
    wgc_event_release(e0);
    wgc_event_release(e1);
    return ms / reps;
}
static double time_wall(RunFn fn, void *ctx, int reps) {
    double t0 = now_ms();
    for (int i = 0; i < reps; i++) CHECK(fn(ctx));
    CHECK(wgc_stream_synchronize(g_stream));
    return (now_ms() - t0) / reps;
}

static void diag_three_ways(const char *what, RunFn fn, void *ctx, double in_bytes) {
    Case c = {what, "diag", "f32", "", "none", 0, in_bytes};
    double ev = time_events(&c, fn, ctx, 10);
    fprintf(stderr, "diag %s: events/rep %.4f ms, batch %.4f ms, wall %.4f ms\n", what, ev, time_batch(fn, ctx, 10),
            time_wall(fn, ctx, 10));
}

static void bench_diag(void) {
    int64_t n = (int64_t)1 << 28, m[2] = {4096, 4096};
    Bin c = {ht_random(WGC_DTYPE_F32, 1, &n), ht_random(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 1, &n)};
    diag_three_ways("add op", run_add, &c, 8.0 * n);
    ht_free(&c.a), ht_free(&c.b), ht_free(&c.o);
    Bin g = {ht_random(WGC_DTYPE_F32, 2, m), ht_random(WGC_DTYPE_F32, 2, m), ht_empty(WGC_DTYPE_F32, 2, m)};
    diag_three_ways("sgemm 4096", run_matmul, &g, 8.0 * 4096 * 4096);
    ht_free(&g.a), ht_free(&g.b), ht_free(&g.o);
}

/* Two sets of host-written 1 GiB inputs, each add timed, then timed again:
 * shows the transient after preparing gigabytes of inputs. */
static void bench_diag2(void) {
    int64_t n = (int64_t)1 << 28;
    for (int set = 0; set < 2; set++) {
        Bin c = {ht_random(WGC_DTYPE_F32, 1, &n), ht_random(WGC_DTYPE_F32, 1, &n), ht_empty(WGC_DTYPE_F32, 1, &n)};
        Case k = {"add", "diag", "f32", "", "none", 0, 0};
        double first = time_events(&k, run_add, &c, 10), again = time_events(&k, run_add, &c, 10);
        fprintf(stderr, "diag2 set %d: add op %.4f ms, add op again %.4f ms\n", set, first, again);
        ht_free(&c.a), ht_free(&c.b), ht_free(&c.o);
    }
}

int main(int argc, char **argv) {
    g_filters = calloc((size_t)argc, sizeof(char *));
    int diag = 0, autotune = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list")) g_list = 1;
        else if (!strcmp(argv[i], "--small")) g_small = 1;
        else if (!strcmp(argv[i], "--autotune")) autotune = 1;
        else if (!strcmp(argv[i], "diag")) diag = 1;
        else if (!strcmp(argv[i], "diag2")) diag = 2;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--list] [--small] [--autotune] [FILTER ...] | diag | diag2\n", argv[0]);
            return 2;
        } else g_filters[g_filter_count++] = argv[i];
    }
    if (!g_list) {
        CHECK(wgc_instance_create(WGC_ABI_VERSION, &g_instance));
        /* WGC_BENCH_POOL_MIB: the device's buffer pool limit (default 1 GiB). */
        WgcDeviceOptions opts = {0};
        opts.struct_size = sizeof opts;
        opts.adapter_index = -1;
        if (getenv("WGC_BENCH_POOL_MIB")) opts.pool_limit_bytes = (uint64_t)atoll(getenv("WGC_BENCH_POOL_MIB")) << 20;
        if (autotune) opts.autotune = WGC_AUTOTUNE_ON;
        opts.tuning_cache_path = getenv("WGC_BENCH_TUNING_FILE");
        g_device_options = opts;
        CHECK(wgc_device_create(g_instance, &opts, &g_dev));
        WgcAdapterInfo info = {0};
        info.struct_size = sizeof info;
        CHECK(wgc_device_info(g_dev, &info));
        fprintf(stderr, "adapter: %s, driver %s %s; f16=%u subgroups=%u (%u-%u) timestamps=%u coop=%u\n", info.name,
                info.driver, info.driver_info, info.has_f16, info.has_subgroups, info.subgroup_min_size,
                info.subgroup_max_size, info.has_timestamps, info.has_cooperative_matrix);
        CHECK(wgc_stream_create(g_dev, &g_stream));
    }
    double t0 = now_ms();
    if (diag == 1) bench_diag();
    else if (diag == 2) bench_diag2();
    else {
        cases_elementwise();
        cases_reduce();
        cases_rows();
        cases_gemm();
        cases_conv();
        cases_conv_winograd();
        cases_norm_batch();
        cases_index();
        cases_latency();
        cases_tuning();
        cases_graph();
        cases_attention();
        cases_fusion();
        cases_fused_reduce();
    }
    if (!g_list) {
        fprintf(stderr, "%d case(s) wrong or unsupported; %.1f s\n", g_failures, (now_ms() - t0) / 1e3);
        wgc_stream_release(g_stream);
        wgc_device_release(g_dev);
        wgc_instance_release(g_instance);
    }
    free(g_filters);
    return g_failures ? 1 : 0;
}
