/* The case machinery shared by every cases_*.c file (see harness.h). */
#define _POSIX_C_SOURCE 199309L
#include "harness.h"

#include <math.h>
#include <time.h>

WgcInstance *g_instance;
WgcDeviceOptions g_device_options;
WgcDevice *g_dev;
WgcStream *g_stream;
int g_small;
int g_list;
int g_failures; /* cases that were wrong or unsupported */
const char **g_filters;
int g_filter_count;

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int case_begin(const Case *c) {
    if (g_filter_count) {
        int hit = 0;
        for (int i = 0; i < g_filter_count; i++)
            hit |= strstr(c->name, g_filters[i]) || strstr(c->cls, g_filters[i]);
        if (!hit) return 0;
    }
    if (g_list) {
        printf("%-34s %-22s %-9s %s\n", c->name, c->cls, c->dtype, c->size);
        return 0;
    }
    fprintf(stderr, "case %s (%s)\n", c->name, c->size);
    return 1;
}

static void print_case(const Case *c, const char *name, double ms, const char *check) {
    printf("{\"case\": \"%s\", \"class\": \"%s\", \"dtype\": \"%s\", \"size\": \"%s\", \"ms\": %.6f, "
           "\"check\": \"%s\", \"limit\": \"%s\", \"amount\": %.6g}\n",
           name, c->cls, c->dtype, c->size, ms, check, c->limit, c->amount);
    fflush(stdout);
}

int case_first_run(const Case *c, RunFn fn, void *ctx) {
    WgcStatus s = fn(ctx);
    if (s == WGC_OK) s = wgc_stream_synchronize(g_stream);
    if (s == WGC_OK) return 1;
    char check[64];
    snprintf(check, sizeof check, "unsupported: %s", wgc_status_string(s));
    fprintf(stderr, "%s: %s: %s\n", c->name, wgc_status_string(s), wgc_last_error_message());
    print_case(c, c->name, -1.0, check);
    g_failures++;
    return 0;
}

void case_emit(const Case *c, const char *name, double ms, int ok) {
    if (!ok) g_failures++;
    print_case(c, name, ms, ok ? "ok" : "WRONG");
}

/* The GPU's clocks fall to idle (345 MHz on an H100) while the host is busy,
 * for instance compiling a case's pipelines, and a light load does not raise
 * them again: a warm-up that waited for the GPU every 4 runs left the SM
 * clock at 540 MHz for 1.5 s and timed cases 3-4x slow (BENCHMARKS.md,
 * "Run to run"). So the warm-up lasts at least 1 s and keeps work queued,
 * waiting only every 64 runs or 20 ms; 2 s after gigabytes of new inputs.
 * WGC_BENCH_WARMUP_MS fixes it for every case. */
static double warm_up_ms(const Case *c) {
    const char *env = getenv("WGC_BENCH_WARMUP_MS");
    if (env) return atof(env);
    if (g_small) return 0;
    return c->in_bytes > (double)(1u << 30) ? 2000 : 1000;
}

static void warm_up(const Case *c, RunFn fn, void *ctx) {
    double t0 = now_ms(), limit = warm_up_ms(c), waited = t0;
    int runs = 0;
    while (runs < 2 || now_ms() - t0 < limit) {
        CHECK(fn(ctx));
        if (++runs % 64 == 0 || now_ms() - waited > 20) {
            CHECK(wgc_stream_synchronize(g_stream));
            waited = now_ms();
        }
    }
    CHECK(wgc_stream_synchronize(g_stream));
}

double time_events(const Case *c, RunFn fn, void *ctx, int reps) {
    if (g_small) reps = 2;
    warm_up(c, fn, ctx);
    double *ms = malloc(sizeof(double) * reps);
    WgcEvent **ev = malloc(sizeof(WgcEvent *) * 2 * reps);
    for (int i = 0; i < reps; i++) {
        CHECK(wgc_stream_record_event(g_stream, &ev[2 * i]));
        CHECK(fn(ctx));
        CHECK(wgc_stream_record_event(g_stream, &ev[2 * i + 1]));
        CHECK(wgc_stream_flush(g_stream));
    }
    for (int i = 0; i < reps; i++) {
        CHECK(wgc_event_elapsed_ms(ev[2 * i], ev[2 * i + 1], &ms[i]));
        wgc_event_release(ev[2 * i]);
        wgc_event_release(ev[2 * i + 1]);
    }
    qsort(ms, reps, sizeof(double), cmp_double);
    double m = ms[reps / 2];
    free(ms);
    free(ev);
    return m;
}

void case_time(const Case *c, RunFn fn, void *ctx, int ok, int reps) {
    case_emit(c, c->name, time_events(c, fn, ctx, reps), ok);
}

/* ---- tensors mirrored on the host ---- */
static uint64_t g_rng = 0x243F6A8885A308D3ull;
float frand(void) {
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return (float)((double)((g_rng * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0);
}

size_t dtype_size(WgcDtype dt) { return dt == WGC_DTYPE_F16 || dt == WGC_DTYPE_BF16 ? 2 : 4; }

const char *dtype_name(WgcDtype dt) {
    return dt == WGC_DTYPE_F16 ? "f16" : dt == WGC_DTYPE_BF16 ? "bf16" : dt == WGC_DTYPE_I32 ? "i32" : "f32";
}

static size_t count(uint32_t rank, const int64_t *shape) {
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}

/* Buffers are created in whole 4-byte words (an odd number of f16 too). */
static size_t padded_bytes(WgcDtype dt, size_t n) { return (n * dtype_size(dt) + 3) & ~(size_t)3; }

HT ht_empty(WgcDtype dt, uint32_t rank, const int64_t *shape) {
    HT h = {0};
    h.n = count(rank, shape);
    size_t bytes = padded_bytes(dt, h.n);
    CHECK(wgc_buffer_create(g_dev, bytes ? bytes : 4, WGC_BUFFER_USAGE_STORAGE, &h.buf));
    CHECK(wgc_tensor_contiguous(h.buf, dt, rank, shape, &h.t));
    return h;
}

HT ht_values(WgcDtype dt, uint32_t rank, const int64_t *shape, const float *values) {
    HT h = ht_empty(dt, rank, shape);
    size_t bytes = padded_bytes(dt, h.n);
    void *raw = calloc(1, bytes ? bytes : 4);
    h.host = malloc(h.n * sizeof(float) + 4);
    for (size_t i = 0; i < h.n; i++) {
        float v = values[i];
        if (dt == WGC_DTYPE_F16) {
            ((uint16_t *)raw)[i] = to_half(v);
            v = from_half(((uint16_t *)raw)[i]);
        } else if (dt == WGC_DTYPE_BF16) {
            ((uint16_t *)raw)[i] = to_bf16(v);
            v = from_bf16(((uint16_t *)raw)[i]);
        } else if (dt == WGC_DTYPE_I32) {
            ((int32_t *)raw)[i] = (int32_t)v;
        } else {
            ((float *)raw)[i] = v;
        }
        h.host[i] = v;
    }
    if (bytes) CHECK(wgc_buffer_write(h.buf, 0, raw, bytes));
    free(raw);
    return h;
}

HT ht_random(WgcDtype dt, uint32_t rank, const int64_t *shape) {
    size_t n = count(rank, shape);
    float *v = malloc(n * sizeof(float) + 4);
    for (size_t i = 0; i < n; i++) v[i] = frand();
    HT h = ht_values(dt, rank, shape, v);
    free(v);
    return h;
}

float *ht_read(const HT *h) {
    WgcDtype dt = h->t.dtype;
    size_t bytes = padded_bytes(dt, h->n);
    void *raw = malloc(bytes ? bytes : 4);
    float *out = malloc(h->n * sizeof(float) + 4);
    if (bytes) CHECK(wgc_buffer_read(h->buf, 0, raw, bytes));
    for (size_t i = 0; i < h->n; i++)
        out[i] = dt == WGC_DTYPE_F16    ? from_half(((uint16_t *)raw)[i])
                 : dt == WGC_DTYPE_BF16 ? from_bf16(((uint16_t *)raw)[i])
                 : dt == WGC_DTYPE_I32 ? (float)((int32_t *)raw)[i]
                                       : ((float *)raw)[i];
    free(raw);
    return out;
}

void ht_free(HT *h) {
    wgc_buffer_release(h->buf);
    free(h->host);
    memset(h, 0, sizeof *h);
}

size_t sample_rows(size_t rows, size_t k, size_t *out) {
    if (rows <= k) {
        for (size_t i = 0; i < rows; i++) out[i] = i;
        return rows;
    }
    for (size_t i = 0; i < k; i++) out[i] = i == k - 1 ? rows - 1 : (i * 2654435761u) % rows;
    return k;
}

int close_to(double got, double ref, double atol, double rtol) {
    return fabs(got - ref) <= atol + rtol * fabs(ref);
}

double f16_slack(WgcDtype dt) { return dt == WGC_DTYPE_F16 ? 1.0 / 1024 : dt == WGC_DTYPE_BF16 ? 1.0 / 128 : 0; }

void fmt_shape(char *buf, size_t cap, uint32_t rank, const int64_t *shape) {
    for (uint32_t i = 0; i < rank; i++) {
        size_t len = strlen(buf);
        long long v = shape[i];
        int log2 = 0;
        while (v > 65536 && (1ll << log2) < v) log2++;
        if (v > 65536 && (1ll << log2) == v) snprintf(buf + len, cap - len, i ? "x2^%d" : "2^%d", log2);
        else snprintf(buf + len, cap - len, i ? "x%lld" : "%lld", v);
    }
}
