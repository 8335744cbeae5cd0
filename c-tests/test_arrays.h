/* Typed host arrays mirrored by tensor views of any layout, shared by the
 * element-wise and data-movement tests: each array keeps its logical values
 * in double precision beside a GPU buffer laid out as its view says. */
#ifndef WGC_TEST_ARRAYS_H
#define WGC_TEST_ARRAYS_H

#include "test_util.h"

enum { CONTIG = 0, TRANSPOSED = 1, OFFSET3 = 2, OFFSET4 = 3, REVERSED = 4 };

typedef struct Arr {
    WgcBuffer *buf;
    WgcTensor t;
    double *val; /* logical values, row-major over the shape */
    size_t n;
    size_t phys; /* elements in the buffer */
} Arr;

static size_t dsize(WgcDtype d) { return d == WGC_DTYPE_F16 ? 2 : 4; }

static void store_elem(void *p, WgcDtype d, size_t i, double v) {
    switch (d) {
    case WGC_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case WGC_DTYPE_F16: ((uint16_t *)p)[i] = f32_to_f16((float)v); break;
    case WGC_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((uint32_t *)p)[i] = (uint32_t)v; break;
    }
}
static double load_elem(const void *p, WgcDtype d, size_t i) {
    switch (d) {
    case WGC_DTYPE_F32: return ((const float *)p)[i];
    case WGC_DTYPE_F16: return f16_to_f32(((const uint16_t *)p)[i]);
    case WGC_DTYPE_I32: return ((const int32_t *)p)[i];
    default: return ((const uint32_t *)p)[i];
    }
}
/* The value as the dtype stores it. */
static double quant(WgcDtype d, double v) {
    uint32_t tmp;
    store_elem(&tmp, d, 0, v);
    return load_elem(&tmp, d, 0);
}
static size_t numel(int rank, const int64_t *shape) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}
/* Physical element index of logical row-major index li. */
static int64_t phys_index(const WgcTensor *t, size_t li) {
    int64_t o = t->offset;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
        int64_t c = (int64_t)(li % (size_t)t->shape[d]);
        li /= (size_t)t->shape[d];
        o += c * t->strides[d];
    }
    return o;
}

/* A tensor of `shape` laid out as `layout`, filled with values in [lo, hi)
 * (integers if `integral`), already quantized to the dtype. */
static Arr make_arr(TestEnv *env, WgcDtype d, int rank, const int64_t *shape, int layout, double lo, double hi,
                    int integral) {
    Arr a;
    memset(&a, 0, sizeof a);
    a.n = numel(rank, shape);
    a.t.dtype = d;
    a.t.rank = (uint32_t)rank;
    for (int i = 0; i < rank; i++) a.t.shape[i] = shape[i];
    int64_t acc = 1;
    if (layout == TRANSPOSED && rank >= 2) {
        /* Physically [.., s[r-1], s[r-2]]: the last two dims are swapped. */
        a.t.strides[rank - 2] = 1;
        a.t.strides[rank - 1] = shape[rank - 2];
        acc = shape[rank - 2] * shape[rank - 1];
        for (int i = rank - 3; i >= 0; i--) { a.t.strides[i] = acc; acc *= shape[i]; }
    } else {
        for (int i = rank - 1; i >= 0; i--) { a.t.strides[i] = acc; acc *= shape[i]; }
    }
    if (layout == OFFSET3) a.t.offset = 3;
    if (layout == OFFSET4) a.t.offset = 4;
    if (layout == REVERSED && rank >= 1 && shape[0] > 0) {
        a.t.offset = (shape[0] - 1) * a.t.strides[0];
        a.t.strides[0] = -a.t.strides[0];
    }
    a.phys = (size_t)acc + (size_t)(layout == OFFSET3 ? 3 : layout == OFFSET4 ? 4 : 0) + 1;
    a.val = calloc(a.n + 1, sizeof(double));
    void *host = calloc(a.phys, 4);
    for (size_t i = 0; i < a.phys; i++) store_elem(host, d, i, -7); /* padding */
    for (size_t i = 0; i < a.n; i++) {
        double v = rng_uniform(lo, hi);
        if (integral) v = floor(v);
        a.val[i] = quant(d, v);
        store_elem(host, d, (size_t)phys_index(&a.t, i), a.val[i]);
    }
    a.buf = upload(env->device, host, a.phys * dsize(d));
    a.t.buffer = a.buf;
    free(host);
    return a;
}

/* Read the view's logical values back into a->val. */
static void read_arr(Arr *a) {
    size_t bytes = (a->phys * dsize(a->t.dtype) + 3) & ~(size_t)3;
    void *host = malloc(bytes);
    CHECK(wgc_buffer_read(a->buf, 0, host, bytes));
    for (size_t i = 0; i < a->n; i++) a->val[i] = load_elem(host, a->t.dtype, (size_t)phys_index(&a->t, i));
    free(host);
}

static void free_arr(Arr *a) {
    wgc_buffer_release(a->buf);
    free(a->val);
}

#endif
