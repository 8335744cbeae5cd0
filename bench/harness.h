/* The case machinery of wgc_bench: options (--list, --small, name filters),
 * the device and stream, host-mirrored tensors, the first (checked) run,
 * warm-up scaled to the input size, GPU-event timing and one JSON line per
 * case. Case files (cases_*.c) use only this and the public C API. */
#ifndef WGC_BENCH_HARNESS_H
#define WGC_BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "bench_util.h"

/* Operators are declared weak, so the same binary runs against a library
 * that lacks some of them: OP() then reports WGC_ERROR_UNSUPPORTED and the
 * case is listed as unsupported instead of the program failing to load. */
#if defined(__GNUC__) && !defined(_WIN32)
#pragma weak wgc_op_reduce
#pragma weak wgc_op_var
#pragma weak wgc_op_std
#pragma weak wgc_op_softmax
#pragma weak wgc_op_log_softmax
#pragma weak wgc_op_layer_norm
#pragma weak wgc_op_rms_norm
#pragma weak wgc_op_gemm
#pragma weak wgc_op_matmul
#pragma weak wgc_op_conv2d
#pragma weak wgc_op_max_pool2d
#pragma weak wgc_op_avg_pool2d
#pragma weak wgc_op_global_avg_pool2d
#pragma weak wgc_op_binary
#pragma weak wgc_op_binary_scalar
#pragma weak wgc_op_unary
#pragma weak wgc_op_cast
#pragma weak wgc_op_copy
#pragma weak wgc_op_permute
#pragma weak wgc_op_concat
#pragma weak wgc_op_random_normal
#pragma weak wgc_op_embedding
#pragma weak wgc_op_gather
#pragma weak wgc_op_rope
#pragma weak wgc_op_topk
#pragma weak wgc_op_cumsum
#pragma weak wgc_op_fill
#define OP(fn, ...) ((&fn) ? fn(__VA_ARGS__) : (WgcStatus)WGC_ERROR_UNSUPPORTED)
#else
#define OP(fn, ...) fn(__VA_ARGS__)
#endif

extern WgcInstance *g_instance;
extern WgcDeviceOptions g_device_options; /* g_dev's options (cases that open a device of their own) */
extern WgcDevice *g_dev;
extern WgcStream *g_stream;
extern int g_small; /* --small: every case at a reduced size (a check run) */

/* full size, or the --small one */
#define SZ(full, small) ((int64_t)(g_small ? (small) : (full)))

typedef struct {
    const char *name;  /* unique, stable across versions (compare.py joins on it) */
    const char *cls;   /* shape class, e.g. "reduce/column" */
    const char *dtype; /* e.g. "f32", "f16->f32" */
    char size[96];
    const char *limit; /* "bytes" (memory bound), "fp32"/"fp16" (FLOPs), "latency" */
    double amount;     /* bytes moved or FLOPs per run */
    double in_bytes;   /* bytes of freshly prepared inputs: scales the warm-up */
} Case;

typedef WgcStatus (*RunFn)(void *ctx);

/* Whether the case is selected (filters); in --list mode prints it and
 * returns 0. Call before allocating anything. */
int case_begin(const Case *c);
/* Runs `fn` once and waits. On a failing status prints the case as
 * unsupported (with the status) and returns 0; the caller frees and returns. */
int case_first_run(const Case *c, RunFn fn, void *ctx);
/* Warms up (by input size), times `reps` runs with GPU events and prints
 * the median. */
void case_time(const Case *c, RunFn fn, void *ctx, int ok, int reps);
/* Prints a measured time (wall-clock cases). */
void case_emit(const Case *c, const char *name, double ms, int ok);
double now_ms(void);
/* Median GPU ms of `reps` runs between events, after the scaled warm-up. */
double time_events(const Case *c, RunFn fn, void *ctx, int reps);

/* A tensor with the values it holds mirrored on the host as floats (f16
 * values rounded as stored, integers converted). */
typedef struct {
    WgcBuffer *buf;
    WgcTensor t;
    float *host; /* NULL for outputs until ht_read */
    size_t n;
} HT;

size_t dtype_size(WgcDtype dt);
/* "f32", "f16", "bf16", "i32". */
const char *dtype_name(WgcDtype dt);
float frand(void); /* uniform [-1, 1) */
HT ht_random(WgcDtype dt, uint32_t rank, const int64_t *shape);
HT ht_values(WgcDtype dt, uint32_t rank, const int64_t *shape, const float *values);
HT ht_empty(WgcDtype dt, uint32_t rank, const int64_t *shape);
/* Downloads the whole buffer as floats (caller frees). */
float *ht_read(const HT *h);
void ht_free(HT *h);

/* Row indices to check: all rows when few, else `k` spread over them. */
size_t sample_rows(size_t rows, size_t k, size_t *out);
/* |got - ref| <= atol + rtol * |ref|, NaN never passes. */
int close_to(double got, double ref, double atol, double rtol);
/* "AxBxC" into buf (after what buf already holds). */
void fmt_shape(char *buf, size_t cap, uint32_t rank, const int64_t *shape);
/* Tolerance added for results stored as f16 or bf16. */
double f16_slack(WgcDtype dt);

#endif
