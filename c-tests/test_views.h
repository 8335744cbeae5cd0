/* Tensor views over their own buffers for the expression tests
 * (test_expr.c, test_expr_reduce.c): values of every dtype to and from
 * their storage, views laid out contiguous, transposed, offset or reversed
 * with padding around them, read back with a check that nothing outside
 * the view was written, and the node-building helper `N`. */
#ifndef WGC_TEST_VIEWS_H
#define WGC_TEST_VIEWS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { CONTIG = 0, TRANSPOSED = 1, OFFSET3 = 2, REVERSED = 3 };

static inline size_t esize(WgcDtype d) { return d == WGC_DTYPE_F16 || d == WGC_DTYPE_BF16 ? 2 : 4; }

static inline uint16_t bf16_of_double(double v) {
    if (isnan(v)) return 0x7fc0;
    float f = (float)v; /* a value of f32 precision already: round its bits */
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline double bf16_value(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline void put(void *p, WgcDtype d, size_t i, double v) {
    switch (d) {
    case WGC_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case WGC_DTYPE_F16: ((uint16_t *)p)[i] = f32_to_f16((float)v); break;
    case WGC_DTYPE_BF16: ((uint16_t *)p)[i] = bf16_of_double(v); break;
    case WGC_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((uint32_t *)p)[i] = (uint32_t)v; break;
    }
}
static inline double get(const void *p, WgcDtype d, size_t i) {
    switch (d) {
    case WGC_DTYPE_F32: return ((const float *)p)[i];
    case WGC_DTYPE_F16: return f16_to_f32(((const uint16_t *)p)[i]);
    case WGC_DTYPE_BF16: return bf16_value(((const uint16_t *)p)[i]);
    case WGC_DTYPE_I32: return ((const int32_t *)p)[i];
    default: return ((const uint32_t *)p)[i];
    }
}
static inline uint32_t bits(const void *p, WgcDtype d, size_t i) {
    if (esize(d) == 2) return ((const uint16_t *)p)[i];
    return ((const uint32_t *)p)[i];
}
/* v as stored in a tensor of dtype d and read back. */
static inline double stored(WgcDtype d, double v) {
    uint32_t tmp = 0;
    put(&tmp, d, 0, v);
    return get(&tmp, d, 0);
}
/* v rounded to d (floats), as the kernels round after each op; integers
 * as they are. */
static inline double quant(WgcDtype d, double v) {
    if (d == WGC_DTYPE_I32 || d == WGC_DTYPE_U32) return v;
    return stored(d, v);
}

/* A tensor view over its own buffer, with its logical values in double. */
typedef struct T {
    WgcBuffer *buf;
    WgcTensor t;
    double *val;
    size_t n, phys;
} T;

static inline size_t count(int rank, const int64_t *shape) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}
static inline int64_t phys_at(const WgcTensor *t, size_t li) {
    int64_t o = t->offset;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
        o += (int64_t)(li % (size_t)t->shape[d]) * t->strides[d];
        li /= (size_t)t->shape[d];
    }
    return o;
}

/* `shape` laid out as `layout`, values from `gen(i)` (or uniform in
 * [lo, hi) where gen is NULL; integers floored), as stored in the dtype;
 * the padding around the view is 0x5a bytes. */
static inline T make(TestEnv *env, WgcDtype d, int rank, const int64_t *shape, int layout, double lo, double hi,
              double (*gen)(size_t)) {
    T a;
    memset(&a, 0, sizeof a);
    a.n = count(rank, shape);
    a.t.dtype = d;
    a.t.rank = (uint32_t)rank;
    int64_t acc = 1;
    for (int i = 0; i < rank; i++) a.t.shape[i] = shape[i];
    if (layout == TRANSPOSED && rank >= 2) {
        a.t.strides[rank - 2] = 1;
        a.t.strides[rank - 1] = shape[rank - 2];
        acc = shape[rank - 2] * shape[rank - 1];
        for (int i = rank - 3; i >= 0; i--) { a.t.strides[i] = acc; acc *= shape[i]; }
    } else {
        for (int i = rank - 1; i >= 0; i--) { a.t.strides[i] = acc; acc *= shape[i]; }
    }
    if (layout == OFFSET3) a.t.offset = 3;
    if (layout == REVERSED && rank >= 1 && shape[0] > 0) {
        a.t.offset = (shape[0] - 1) * a.t.strides[0];
        a.t.strides[0] = -a.t.strides[0];
    }
    a.phys = (size_t)acc + 4;
    a.val = calloc(a.n + 1, sizeof(double));
    size_t bytes = (a.phys * esize(d) + 3) & ~(size_t)3;
    unsigned char *host = malloc(bytes);
    memset(host, 0x5a, bytes);
    for (size_t i = 0; i < a.n; i++) {
        double v = gen ? gen(i) : rng_uniform(lo, hi);
        if (d == WGC_DTYPE_I32 || d == WGC_DTYPE_U32) v = floor(v);
        a.val[i] = stored(d, v);
        put(host, d, (size_t)phys_at(&a.t, i), a.val[i]);
    }
    a.buf = upload(env->device, host, bytes);
    a.t.buffer = a.buf;
    free(host);
    return a;
}

/* Read the view: logical values into val, raw bits into `raw` (if given);
 * returns whether the padding (elements outside the view) is intact. */
static inline int readback(T *a, uint32_t *raw) {
    size_t bytes = (a->phys * esize(a->t.dtype) + 3) & ~(size_t)3;
    unsigned char *host = malloc(bytes);
    CHECK(wgc_buffer_read(a->buf, 0, host, bytes));
    char *in_view = calloc(a->phys, 1);
    for (size_t i = 0; i < a->n; i++) {
        size_t at = (size_t)phys_at(&a->t, i);
        in_view[at] = 1;
        a->val[i] = get(host, a->t.dtype, at);
        if (raw) raw[i] = bits(host, a->t.dtype, at);
    }
    int intact = 1;
    uint32_t pad = esize(a->t.dtype) == 2 ? 0x5a5au : 0x5a5a5a5au;
    for (size_t i = 0; i < a->phys; i++)
        if (!in_view[i] && bits(host, a->t.dtype, i) != pad) intact = 0;
    free(in_view);
    free(host);
    return intact;
}
static inline void release(T *a) {
    wgc_buffer_release(a->buf);
    free(a->val);
}

/* The id a build call wrote to *id (read after the call has run); a failed
 * build ends the test. */
static inline uint32_t node(WgcStatus s, const uint32_t *id) {
    if (s != WGC_OK) {
        fprintf(stderr, "building failed: %s: %s\n", wgc_status_string(s), wgc_last_error_message());
        exit(1);
    }
    return *id;
}
static uint32_t id_;
#define N(call_writing_id_) node(call_writing_id_, &id_)

#endif
