/* What the C11 benchmarks share beyond bench_util.h: a wall clock, the
 * median GPU time of an operation, and reading a buffer back as floats. */
#ifndef WGC_BENCH_TIMING_H
#define WGC_BENCH_TIMING_H

#include <time.h>

#include "bench_util.h"

static inline double wall_ms(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The median over `runs` runs of 5 calls of `op` of the GPU time between
 * two events, per call, after a warm-up of at least `warm_ms` with work
 * kept queued (a GPU left idle lowers its clocks: BENCHMARKS.md, "Run to
 * run"). */
static inline double median_gpu_ms(WgcStream *st, void (*op)(void *), void *arg, int runs, double warm_ms) {
    enum { CALLS = 5 };
    double *ms = malloc((size_t)runs * sizeof *ms);
    if (!ms) abort();
    double t0 = wall_ms();
    for (int w = 0; wall_ms() - t0 < warm_ms || w < 3; w++) {
        op(arg);
        if (w % 8 == 7) CHECK(wgc_stream_synchronize(st));
    }
    CHECK(wgc_stream_synchronize(st));
    for (int r = 0; r < runs; r++) {
        WgcEvent *e0, *e1;
        CHECK(wgc_stream_record_event(st, &e0));
        for (int c = 0; c < CALLS; c++) op(arg);
        CHECK(wgc_stream_record_event(st, &e1));
        CHECK(wgc_event_elapsed_ms(e0, e1, &ms[r]));
        ms[r] /= CALLS;
        wgc_event_release(e0);
        wgc_event_release(e1);
    }
    qsort(ms, (size_t)runs, sizeof ms[0], cmp_double);
    double m = ms[runs / 2];
    free(ms);
    return m;
}

/* n elements of an f16 or f32 buffer as floats (the caller frees them). */
static inline float *read_back(WgcBuffer *b, WgcDtype dt, size_t n) {
    size_t size = (n * (dt == WGC_DTYPE_F16 ? 2 : 4) + 3) & ~(size_t)3;
    void *bytes = malloc(size);
    float *out = malloc(n * 4);
    if (!bytes || !out) abort();
    CHECK(wgc_buffer_read(b, 0, bytes, size));
    for (size_t i = 0; i < n; i++)
        out[i] = dt == WGC_DTYPE_F16 ? from_half(((uint16_t *)bytes)[i]) : ((float *)bytes)[i];
    free(bytes);
    return out;
}

#endif
