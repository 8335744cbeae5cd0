/* wgc_blocks: the model blocks of blocks.h, timed and profiled.
 *
 *     wgc_blocks [--list] [--small] [--profile-rows N] [FILTER ...]
 *
 * --small runs every block at a tiny size (the CTest check on a software
 * driver). FILTERs select blocks whose name or class contains one. */
#include "blocks.h"

extern int g_list, g_failures, g_filter_count;
extern const char **g_filters;

static int g_profile_rows = 8;

WgcTensor view_of(const HT *h, uint32_t rank, const int64_t *shape, const int64_t *strides, int64_t offset) {
    WgcTensor t = h->t;
    t.rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        t.shape[i] = shape[i];
        t.strides[i] = strides[i];
    }
    t.offset = offset;
    return t;
}

HT ht_scaled(WgcDtype dt, uint32_t rank, const int64_t *shape, double scale, double center) {
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= (size_t)shape[i];
    float *v = malloc(n * sizeof(float) + 4);
    for (size_t i = 0; i < n; i++) v[i] = (float)(center + scale * frand());
    HT h = ht_values(dt, rank, shape, v);
    free(v);
    return h;
}

int check_close(const char *what, const float *got, const double *ref, size_t n, double atol, double rtol) {
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        if (d > worst || got[i] != got[i]) worst = got[i] != got[i] ? INFINITY : d;
        if (!close_to(got[i], ref[i], atol, rtol)) {
            if (bad < 5) fprintf(stderr, "  %s[%zu]: got %.6g, expected %.6g\n", what, i, got[i], ref[i]);
            bad++;
        }
    }
    fprintf(stderr, "  check %s: %zu values, largest difference %.3g, %d outside %.3g + %.3g |ref|\n", what, n, worst,
            bad, atol, rtol);
    return bad;
}

static double wall_ms(RunFn fn, void *ctx, int reps) {
    CHECK(wgc_stream_synchronize(g_stream));
    double t0 = now_ms();
    for (int i = 0; i < reps; i++) CHECK(fn(ctx));
    CHECK(wgc_stream_synchronize(g_stream));
    return (now_ms() - t0) / reps;
}

/* One run under the profiler; its table (by operator) on stdout, each
 * line starting with '#', so JSON readers skip it. */
static void print_profile(const Case *c, RunFn fn, void *ctx) {
    CHECK(wgc_stream_synchronize(g_stream));
    CHECK(wgc_stream_profile_clear(g_stream));
    CHECK(wgc_stream_set_profiling(g_stream, 1));
    CHECK(fn(ctx));
    CHECK(wgc_stream_set_profiling(g_stream, 0));
    WgcProfileRecord *r = NULL;
    size_t n = 0, len = 0;
    CHECK(wgc_stream_profile_records(g_stream, &r, &n));
    CHECK(wgc_profile_table(r, n, WGC_PROFILE_GROUP_BY_OPERATOR, (uint32_t)g_profile_rows, NULL, 0, &len));
    char *text = malloc(len + 1);
    CHECK(wgc_profile_table(r, n, WGC_PROFILE_GROUP_BY_OPERATOR, (uint32_t)g_profile_rows, text, len + 1, &len));
    printf("# profile of %s (%s), one run, %zu GPU commands\n", c->name, c->size, n);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) printf("#   %s\n", line);
    fflush(stdout);
    free(text);
    CHECK(wgc_profile_records_free(r));
    CHECK(wgc_stream_profile_clear(g_stream));
}

void block_report(const Case *c, RunFn fn, void *ctx, int ok) {
    if (!ok) {
        g_failures++;
        printf("{\"case\": \"%s\", \"class\": \"%s\", \"dtype\": \"%s\", \"size\": \"%s\", \"ms\": -1, "
               "\"wall_ms\": -1, \"check\": \"WRONG\", \"limit\": \"block\", \"amount\": %.6g}\n",
               c->name, c->cls, c->dtype, c->size, c->amount);
        return;
    }
    double gpu = time_events(c, fn, ctx, 20);
    double wall = wall_ms(fn, ctx, g_small ? 1 : 20);
    printf("{\"case\": \"%s\", \"class\": \"%s\", \"dtype\": \"%s\", \"size\": \"%s\", \"ms\": %.6f, "
           "\"wall_ms\": %.6f, \"check\": \"ok\", \"limit\": \"block\", \"amount\": %.6g}\n",
           c->name, c->cls, c->dtype, c->size, gpu, wall, c->amount);
    fflush(stdout);
    print_profile(c, fn, ctx);
}

/* Replay of a captured run: the block's run is captured once into a graph
 * and replayed per step, as a decode loop would. The replay's output must
 * equal the eager run's bit for bit before it is timed (GPU time between
 * events, wall time of 20 replays then a wait); printed as <case>_replay.
 * `out` is the block's output. */
typedef struct {
    WgcGraph *g;
} Replay;

static WgcStatus run_replay(void *ctx) {
    return wgc_graph_replay(((Replay *)ctx)->g, g_stream, NULL);
}

void block_replay(const Case *c, RunFn fn, void *ctx, const HT *out) {
    char name[160], cls[96];
    snprintf(name, sizeof name, "%s_replay", c->name);
    snprintf(cls, sizeof cls, "%s/replay", c->cls);
    Case rc = *c;
    rc.name = name;
    rc.cls = cls;
    CHECK(wgc_stream_synchronize(g_stream));
    size_t n = 1;
    for (uint32_t i = 0; i < out->t.rank; i++) n *= (size_t)out->t.shape[i];
    float *eager = ht_read(out);
    Replay r = {NULL};
    CHECK(wgc_stream_begin_capture(g_stream));
    WgcStatus rec = fn(ctx);
    CHECK(wgc_stream_end_capture(g_stream, &r.g));
    int same = 0;
    if (rec == WGC_OK) {
        /* Cleared first: the output compared is the replay's own. */
        uint64_t bytes = (n * dtype_size(out->t.dtype) + 3) / 4 * 4;
        CHECK(wgc_stream_fill_buffer(g_stream, out->buf, 0, bytes, 0));
        CHECK(run_replay(&r));
        float *got = ht_read(out);
        same = !memcmp(got, eager, n * sizeof(float));
        fprintf(stderr, "  replay of %s: %s the eager run's output\n", c->name, same ? "equals" : "DIFFERS from");
        free(got);
    }
    free(eager);
    if (same) {
        uint32_t dispatches = 0;
        CHECK(wgc_graph_counts(r.g, &dispatches, NULL, NULL));
        double gpu = time_events(&rc, run_replay, &r, 20);
        double wall = wall_ms(run_replay, &r, g_small ? 1 : 20);
        printf("{\"case\": \"%s\", \"class\": \"%s\", \"dtype\": \"%s\", \"size\": \"%s, %u dispatches\", "
               "\"ms\": %.6f, \"wall_ms\": %.6f, \"check\": \"ok\", \"limit\": \"block\", \"amount\": %.6g}\n",
               name, cls, c->dtype, c->size, dispatches, gpu, wall, c->amount);
    } else {
        g_failures++;
        printf("{\"case\": \"%s\", \"class\": \"%s\", \"dtype\": \"%s\", \"size\": \"%s\", \"ms\": -1, "
               "\"wall_ms\": -1, \"check\": \"WRONG\", \"limit\": \"block\", \"amount\": %.6g}\n",
               name, cls, c->dtype, c->size, c->amount);
    }
    fflush(stdout);
    wgc_graph_release(r.g);
}

int main(int argc, char **argv) {
    g_filters = calloc((size_t)argc, sizeof(char *));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list")) g_list = 1;
        else if (!strcmp(argv[i], "--small")) g_small = 1;
        else if (!strcmp(argv[i], "--profile-rows") && i + 1 < argc) g_profile_rows = atoi(argv[++i]);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--list] [--small] [--profile-rows N] [FILTER ...]\n", argv[0]);
            return 2;
        } else g_filters[g_filter_count++] = argv[i];
    }
    if (!g_list) {
        CHECK(wgc_instance_create(WGC_ABI_VERSION, &g_instance));
        WgcDeviceOptions opts = {0};
        opts.struct_size = sizeof opts;
        opts.adapter_index = -1;
        g_device_options = opts;
        CHECK(wgc_device_create(g_instance, &opts, &g_dev));
        WgcAdapterInfo info = {0};
        info.struct_size = sizeof info;
        CHECK(wgc_device_info(g_dev, &info));
        fprintf(stderr, "adapter: %s, driver %s %s; f16=%u timestamps=%u coop=%u\n", info.name, info.driver,
                info.driver_info, info.has_f16, info.has_timestamps, info.has_cooperative_matrix);
        CHECK(wgc_stream_create(g_dev, &g_stream));
    }
    double t0 = now_ms();
    blocks_llama();
    blocks_cnn();
    blocks_mlp();
    if (!g_list) {
        fprintf(stderr, "%d block(s) wrong or unsupported; %.1f s\n", g_failures, (now_ms() - t0) / 1e3);
        wgc_stream_release(g_stream);
        wgc_device_release(g_dev);
        wgc_instance_release(g_instance);
    }
    free(g_filters);
    return g_failures ? 1 : 0;
}
