/* Reductions (wgc_op_reduce), variance and standard deviation, softmax and
 * log-softmax, against double-precision references, for every dtype, axis
 * sets, keepdim, odd and empty sizes, transposed and offset views, and the
 * error cases. Run once with subgroup kernels (where the adapter has them)
 * and once with the workgroup-memory-only kernels (WGC_DISABLE_SUBGROUPS).
 *
 * Tolerances: |got - ref| <= rel * (scale + |ref|), where scale is the sum
 * of |x| over the reduced elements for sums and means (divided by n for
 * means), 0 otherwise. rel: f32 sum/mean 2e-6, prod 1e-5, var/std 1e-5,
 * softmax 1e-5 (log-softmax absolute 1e-5); f16 results 2e-3 (their
 * rounding); max, min, arg* and integer results exact. NaN and infinities
 * follow the header's Numerics section (test_nan_inf). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

static TestEnv env;

/* A logical tensor: shape, and the physical layout its buffer uses: dims
 * stored in order perm (perm = identity: contiguous), after `offset` elements. */
typedef struct {
    uint32_t rank;
    int64_t shape[8];
    int perm[8];
    int64_t offset;
} Layout;

static size_t numel(const Layout *l) {
    size_t n = 1;
    for (uint32_t i = 0; i < l->rank; i++) n *= (size_t)l->shape[i];
    return n;
}

static Layout layout(uint32_t rank, const int64_t *shape) {
    Layout l;
    memset(&l, 0, sizeof l);
    l.rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        l.shape[i] = shape[i];
        l.perm[i] = (int)i;
    }
    return l;
}

/* Logical strides of the layout's view. */
static void strides_of(const Layout *l, int64_t *strides) {
    int64_t acc = 1;
    for (int i = (int)l->rank - 1; i >= 0; i--) {
        strides[l->perm[i]] = acc;
        acc *= l->shape[l->perm[i]] > 0 ? l->shape[l->perm[i]] : 1;
    }
}

static size_t dtype_size(WgcDtype dt) { return dt == WGC_DTYPE_F16 ? 2 : 4; }

/* Round a value to what the dtype stores. */
static double as_dtype(WgcDtype dt, double v) {
    switch (dt) {
    case WGC_DTYPE_F32: return (float)v;
    case WGC_DTYPE_F16: return f16_to_f32(f32_to_f16((float)v));
    case WGC_DTYPE_I32: return (double)(int32_t)v;
    default: return (double)(uint32_t)v;
    }
}

static void put(WgcDtype dt, void *buf, size_t i, double v) {
    switch (dt) {
    case WGC_DTYPE_F32: ((float *)buf)[i] = (float)v; break;
    case WGC_DTYPE_F16: ((uint16_t *)buf)[i] = f32_to_f16((float)v); break;
    case WGC_DTYPE_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    default: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    }
}

static double get(WgcDtype dt, const void *buf, size_t i) {
    switch (dt) {
    case WGC_DTYPE_F32: return ((const float *)buf)[i];
    case WGC_DTYPE_F16: return f16_to_f32(((const uint16_t *)buf)[i]);
    case WGC_DTYPE_I32: return ((const int32_t *)buf)[i];
    default: return ((const uint32_t *)buf)[i];
    }
}

/* Upload logical values `vals` (row-major) in the layout; fill *t with the view. */
static WgcBuffer *make_tensor(WgcDtype dt, const Layout *l, const double *vals, WgcTensor *t) {
    size_t n = numel(l), total = (size_t)l->offset + n;
    void *host = calloc(total + 4, 4);
    int64_t strides[8];
    strides_of(l, strides);
    for (size_t i = 0; i < n; i++) {
        size_t rem = i, off = (size_t)l->offset;
        for (int d = (int)l->rank - 1; d >= 0; d--) {
            off += (rem % (size_t)l->shape[d]) * (size_t)strides[d];
            rem /= (size_t)l->shape[d];
        }
        put(dt, host, off, vals[i]);
    }
    WgcBuffer *b = upload(env.device, host, (total ? total : 1) * dtype_size(dt));
    free(host);
    *t = tensor_of(b, dt, l->rank, l->shape);
    for (uint32_t i = 0; i < l->rank; i++) t->strides[i] = strides[i];
    t->offset = l->offset;
    return b;
}

static WgcBuffer *make_out(WgcDtype dt, uint32_t rank, const int64_t *shape, size_t n, WgcTensor *t) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(env.device, (n ? n : 1) * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &b));
    *t = tensor_of(b, dt, rank, shape);
    return b;
}

static double *read_out(WgcBuffer *b, WgcDtype dt, size_t n) {
    void *host = calloc(n + 1, 4);
    double *vals = calloc(n + 1, sizeof(double));
    if (n) CHECK(wgc_buffer_read(b, 0, host, n * dtype_size(dt)));
    for (size_t i = 0; i < n; i++) vals[i] = get(dt, host, i);
    free(host);
    return vals;
}

static double *random_vals(WgcDtype dt, size_t n, double lo, double hi) {
    double *v = malloc((n + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double r = rng_uniform(lo, hi);
        v[i] = as_dtype(dt, dt == WGC_DTYPE_I32 || dt == WGC_DTYPE_U32 ? floor(r) : r);
    }
    return v;
}

enum { OP_VAR = 100, OP_STD = 101 };

static const char *op_name(int op) {
    static const char *names[] = {"sum", "mean", "max", "min", "prod", "argmax", "argmin"};
    return op == OP_VAR ? "var" : op == OP_STD ? "std" : names[op];
}

/* Reference reduction in double. Fills ref[rows], scale[rows]. */
static void reference(int op, WgcDtype dt, uint32_t unbiased, const Layout *l, const double *x, const int *mask,
                      double *ref, double *scale, size_t rows) {
    size_t n = numel(l);
    size_t *count = calloc(rows + 1, sizeof(size_t));
    double *sumv = calloc(rows + 1, sizeof(double));
    uint32_t *wrap = calloc(rows + 1, sizeof(uint32_t));
    for (size_t o = 0; o < rows; o++) {
        scale[o] = 0;
        ref[o] = op == WGC_REDUCE_OP_PROD ? 1 : 0;
        wrap[o] = op == WGC_REDUCE_OP_PROD ? 1 : 0;
    }
    size_t *outidx = malloc((n + 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        size_t rem = i, o = 0, omul = 1;
        for (int d = (int)l->rank - 1; d >= 0; d--) {
            size_t c = rem % (size_t)l->shape[d];
            rem /= (size_t)l->shape[d];
            if (!mask[d]) {
                o += c * omul;
                omul *= (size_t)l->shape[d];
            }
        }
        outidx[i] = o;
        double v = x[i];
        size_t k = count[o]++;
        scale[o] += fabs(v);
        sumv[o] += v;
        switch (op) {
        case WGC_REDUCE_OP_SUM: wrap[o] += (uint32_t)(int64_t)v; break;
        case WGC_REDUCE_OP_PROD: wrap[o] *= (uint32_t)(int64_t)v; ref[o] *= v; break;
        case WGC_REDUCE_OP_MAX: if (k == 0 || v > ref[o]) ref[o] = v; break;
        case WGC_REDUCE_OP_MIN: if (k == 0 || v < ref[o]) ref[o] = v; break;
        default: break;
        }
    }
    /* arg ops and var need a second look at each row */
    if (op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN) {
        double *best = calloc(rows + 1, sizeof(double));
        size_t *seen = calloc(rows + 1, sizeof(size_t));
        for (size_t i = 0; i < n; i++) {
            size_t o = outidx[i], k = seen[o]++;
            int better = op == WGC_REDUCE_OP_ARGMAX ? x[i] > best[o] : x[i] < best[o];
            if (k == 0 || better) {
                best[o] = x[i];
                ref[o] = (double)k;
            }
        }
        free(best);
        free(seen);
    }
    for (size_t o = 0; o < rows; o++) {
        if (op == WGC_REDUCE_OP_SUM) ref[o] = sumv[o];
        if (op == WGC_REDUCE_OP_MEAN) {
            ref[o] = count[o] ? sumv[o] / (double)count[o] : NAN;
            scale[o] = count[o] ? scale[o] / (double)count[o] : 0;
        }
        if (dt == WGC_DTYPE_I32 && (op == WGC_REDUCE_OP_SUM || op == WGC_REDUCE_OP_PROD)) ref[o] = (int32_t)wrap[o];
        if (dt == WGC_DTYPE_U32 && (op == WGC_REDUCE_OP_SUM || op == WGC_REDUCE_OP_PROD)) ref[o] = wrap[o];
        if (op != WGC_REDUCE_OP_SUM && op != WGC_REDUCE_OP_MEAN) scale[o] = 0;
    }
    if (op == OP_VAR || op == OP_STD) {
        double *sq = calloc(rows + 1, sizeof(double));
        for (size_t i = 0; i < n; i++) {
            size_t o = outidx[i];
            double d = x[i] - sumv[o] / (double)count[o];
            sq[o] += d * d;
        }
        for (size_t o = 0; o < rows; o++) {
            double denom = (double)count[o] - unbiased;
            ref[o] = denom > 0 ? sq[o] / denom : NAN;
            if (op == OP_STD) ref[o] = sqrt(ref[o]);
        }
        free(sq);
    }
    free(outidx);
    free(count);
    free(sumv);
    free(wrap);
}

static double tolerance(int op, WgcDtype dt) {
    int is_float = dt == WGC_DTYPE_F32 || dt == WGC_DTYPE_F16;
    if (!is_float || op == WGC_REDUCE_OP_MAX || op == WGC_REDUCE_OP_MIN || op == WGC_REDUCE_OP_ARGMAX ||
        op == WGC_REDUCE_OP_ARGMIN)
        return 0;
    if (dt == WGC_DTYPE_F16) return 2e-3;
    if (op == WGC_REDUCE_OP_PROD) return 1e-5;
    if (op == OP_VAR || op == OP_STD) return 1e-5;
    return 2e-6;
}

static WgcStatus call_reduce(int op, const WgcTensor *in, const int32_t *axes, uint32_t naxes, uint32_t keepdim,
                             uint32_t unbiased, const WgcTensor *out) {
    if (op == OP_VAR) return wgc_op_var(env.stream, in, axes, naxes, keepdim, unbiased, out);
    if (op == OP_STD) return wgc_op_std(env.stream, in, axes, naxes, keepdim, unbiased, out);
    return wgc_op_reduce(env.stream, (WgcReduceOp)op, in, axes, naxes, keepdim, out);
}

/* Reduce random data of layout `l` over `axes` and compare with the reference. */
static void check_reduce(int op, WgcDtype dt, const Layout *l, const int32_t *axes, uint32_t naxes, uint32_t keepdim,
                         uint32_t unbiased, double lo, double hi) {
    int mask[8] = {0};
    for (uint32_t d = 0; d < l->rank; d++) mask[d] = naxes == 0;
    for (uint32_t a = 0; a < naxes; a++) mask[axes[a] < 0 ? axes[a] + (int)l->rank : axes[a]] = 1;
    int64_t oshape[8];
    uint32_t orank = 0;
    size_t rows = 1;
    for (uint32_t d = 0; d < l->rank; d++) {
        if (!mask[d]) {
            oshape[orank++] = l->shape[d];
            rows *= (size_t)l->shape[d];
        } else if (keepdim) {
            oshape[orank++] = 1;
        }
    }
    size_t n = numel(l);
    double *x = random_vals(dt, n, lo, hi);
    WgcTensor in, out;
    WgcBuffer *bin = make_tensor(dt, l, x, &in);
    int is_arg = op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN;
    WgcDtype odt = is_arg ? WGC_DTYPE_I32 : dt;
    WgcBuffer *bout = make_out(odt, orank, oshape, rows, &out);
    CHECK(call_reduce(op, &in, axes, naxes, keepdim, unbiased, &out));
    double *got = read_out(bout, odt, rows);
    double *ref = calloc(rows + 1, sizeof(double)), *scale = calloc(rows + 1, sizeof(double));
    reference(op, dt, unbiased, l, x, mask, ref, scale, rows);
    double rel = tolerance(op, dt);
    int bad = 0;
    for (size_t o = 0; o < rows; o++) {
        double g = got[o], r = ref[o];
        if (!is_arg && odt != WGC_DTYPE_I32 && odt != WGC_DTYPE_U32) r = as_dtype(odt, r);
        int ok = (isnan(r) && isnan(g)) || g == r || fabs(g - r) <= rel * (scale[o] + fabs(r));
        if (!ok && bad++ < 3)
            fprintf(stderr, "%s %s dtype %d rank %u naxes %u keepdim %u: out[%zu] = %.9g, expected %.9g\n",
                    op_name(op), "", (int)dt, l->rank, naxes, keepdim, o, g, r);
    }
    if (bad) g_failures++;
    free(x);
    free(got);
    free(ref);
    free(scale);
    wgc_buffer_release(bin);
    wgc_buffer_release(bout);
}

static void test_axis_sets(void) {
    static const int64_t shape[3] = {7, 13, 5};
    static const int32_t sets[][3] = {{0}, {1}, {2}, {-1}, {0, 2}, {-3, 1}, {2, 0, 1}};
    static const uint32_t counts[] = {1, 1, 1, 1, 2, 2, 3};
    const int ops[] = {WGC_REDUCE_OP_SUM, WGC_REDUCE_OP_MEAN, WGC_REDUCE_OP_MAX, WGC_REDUCE_OP_MIN,
                       WGC_REDUCE_OP_PROD, OP_VAR, OP_STD};
    Layout l = layout(3, shape);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        double lo = ops[o] == WGC_REDUCE_OP_PROD ? 0.8 : -1, hi = ops[o] == WGC_REDUCE_OP_PROD ? 1.2 : 1;
        for (size_t s = 0; s < sizeof counts / sizeof counts[0]; s++)
            for (uint32_t keep = 0; keep < 2; keep++) check_reduce(ops[o], WGC_DTYPE_F32, &l, sets[s], counts[s], keep, 1, lo, hi);
        check_reduce(ops[o], WGC_DTYPE_F32, &l, NULL, 0, 0, 0, lo, hi);
        check_reduce(ops[o], WGC_DTYPE_F32, &l, NULL, 0, 1, 0, lo, hi);
    }
    for (int op = WGC_REDUCE_OP_ARGMAX; op <= WGC_REDUCE_OP_ARGMIN; op++) {
        for (int32_t a = -3; a < 3; a++)
            for (uint32_t keep = 0; keep < 2; keep++) check_reduce(op, WGC_DTYPE_F32, &l, &a, 1, keep, 0, -1, 1);
        check_reduce(op, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, -1, 1);
    }
}

static void test_dtypes(void) {
    static const int64_t shape[3] = {5, 9, 67};
    static const int32_t last = -1, first = 0, mid = 1;
    Layout l = layout(3, shape);
    const WgcDtype dts[] = {WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32, WGC_DTYPE_F32};
    for (size_t d = 0; d < 4; d++) {
        WgcDtype dt = dts[d];
        int is_int = dt == WGC_DTYPE_I32 || dt == WGC_DTYPE_U32;
        double lo = dt == WGC_DTYPE_U32 ? 0 : -50, hi = 50;
        if (!is_int) lo = -1, hi = 1;
        for (int op = 0; op <= WGC_REDUCE_OP_ARGMIN; op++) {
            if (op == WGC_REDUCE_OP_MEAN && is_int) continue;
            double plo = lo, phi = hi;
            if (op == WGC_REDUCE_OP_PROD && !is_int) plo = 0.9, phi = 1.1;
            if (op == WGC_REDUCE_OP_PROD && is_int) plo = dt == WGC_DTYPE_U32 ? 0 : -7, phi = 7;
            check_reduce(op, dt, &l, &last, 1, 0, 0, plo, phi);
            check_reduce(op, dt, &l, &first, 1, 1, 0, plo, phi);
            check_reduce(op, dt, &l, &mid, 1, 0, 0, plo, phi);
            check_reduce(op, dt, &l, NULL, 0, 0, 0, plo, phi);
        }
        if (!is_int) {
            for (uint32_t unb = 0; unb < 2; unb++) {
                check_reduce(OP_VAR, dt, &l, &last, 1, 0, unb, -1, 1);
                check_reduce(OP_STD, dt, &l, &first, 1, 1, unb, -1, 1);
                check_reduce(OP_STD, dt, &l, NULL, 0, 0, unb, -1, 1);
            }
        }
    }
}

static void test_layouts(void) {
    /* Transposed (dims stored in reverse order) and offset views. */
    static const int64_t shape[3] = {6, 11, 9};
    static const int32_t a0 = 0, a2 = 2, a02[2] = {0, 2};
    Layout l = layout(3, shape);
    l.perm[0] = 2, l.perm[1] = 0, l.perm[2] = 1;
    l.offset = 3;
    for (int op = 0; op <= WGC_REDUCE_OP_ARGMIN; op++) {
        double lo = op == WGC_REDUCE_OP_PROD ? 0.9 : -1, hi = op == WGC_REDUCE_OP_PROD ? 1.1 : 1;
        check_reduce(op, WGC_DTYPE_F32, &l, &a0, 1, 0, 0, lo, hi);
        check_reduce(op, WGC_DTYPE_F32, &l, &a2, 1, 1, 0, lo, hi);
        if (op < WGC_REDUCE_OP_ARGMAX) check_reduce(op, WGC_DTYPE_F32, &l, a02, 2, 0, 0, lo, hi);
        check_reduce(op, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, lo, hi);
    }
    check_reduce(OP_VAR, WGC_DTYPE_F32, &l, a02, 2, 0, 1, -1, 1);
    /* A 2-D transpose: rows become strided columns; vec4 rows with an offset. */
    static const int64_t s2[2] = {37, 64};
    Layout t = layout(2, s2);
    t.perm[0] = 1, t.perm[1] = 0;
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &t, &a0, 1, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_ARGMAX, WGC_DTYPE_F32, &t, &a0, 1, 0, 0, -1, 1);
    Layout v = layout(2, s2);
    v.offset = 8;
    static const int32_t a1 = 1;
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &v, &a1, 1, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_ARGMIN, WGC_DTYPE_F16, &v, &a1, 1, 0, 0, -1, 1);
    /* Size-1 dims and a rank-0 input. */
    static const int64_t ones[3] = {1, 5, 1};
    Layout o = layout(3, ones);
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &o, &a0, 1, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_MAX, WGC_DTYPE_F32, &o, &a2, 1, 1, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_ARGMAX, WGC_DTYPE_F32, &o, &a2, 1, 0, 0, -1, 1);
    Layout scalar = layout(0, NULL);
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &scalar, NULL, 0, 0, 0, -1, 1);
    check_reduce(OP_VAR, WGC_DTYPE_F32, &scalar, NULL, 0, 0, 1, -1, 1); /* NaN: n - 1 = 0 */
}

static void test_large(void) {
    /* 3,000,001 elements: the split pass runs thousands of workgroups. */
    static const int64_t big[1] = {3000001};
    Layout l = layout(1, big);
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, 0, 1);
    check_reduce(WGC_REDUCE_OP_MEAN, WGC_DTYPE_F16, &l, NULL, 0, 0, 0, 0, 1);
    check_reduce(WGC_REDUCE_OP_ARGMAX, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_I32, &l, NULL, 0, 0, 0, -1000, 1000);
    check_reduce(OP_STD, WGC_DTYPE_F32, &l, NULL, 0, 0, 1, 999, 1001); /* large mean: stability */
    l.offset = 1; /* not 4-aligned: the strided kernel */
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, -1, 1);
    static const int64_t rows[2] = {3, 100003};
    Layout r = layout(2, rows);
    static const int32_t last = 1;
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &r, &last, 1, 0, 0, -1, 1);
    check_reduce(OP_VAR, WGC_DTYPE_F32, &r, &last, 1, 1, 0, -1, 1);
    /* Column reductions (outputs contiguous): one invocation per output. */
    static const int64_t cols[2] = {3001, 300};
    Layout c = layout(2, cols);
    static const int32_t first = 0;
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &c, &first, 1, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_ARGMAX, WGC_DTYPE_F32, &c, &first, 1, 1, 0, -1, 1);
    check_reduce(OP_VAR, WGC_DTYPE_F16, &c, &first, 1, 0, 1, -1, 1);
}

static void test_ties_and_empty(void) {
    /* Ties: the first index wins, in every chunk arrangement. */
    float tie[9] = {1, 3, 3, 2, 3, -5, -5, 0, -5};
    int64_t shape[1] = {9};
    WgcBuffer *b = upload(env.device, tie, sizeof tie);
    WgcTensor in = tensor_of(b, WGC_DTYPE_F32, 1, shape), out;
    WgcBuffer *ob = make_out(WGC_DTYPE_I32, 0, NULL, 1, &out);
    int32_t got = -1;
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_ARGMAX, &in, NULL, 0, 0, &out));
    CHECK(wgc_buffer_read(ob, 0, &got, 4));
    EXPECT(got == 1);
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_ARGMIN, &in, NULL, 0, 0, &out));
    CHECK(wgc_buffer_read(ob, 0, &got, 4));
    EXPECT(got == 5);
    wgc_buffer_release(b);
    wgc_buffer_release(ob);

    /* Empty reduced dims: sum 0, prod 1, mean NaN; max/min/arg*: error. */
    int64_t eshape[2] = {4, 0}, oshape[1] = {4};
    b = upload(env.device, tie, 4);
    in = tensor_of(b, WGC_DTYPE_F32, 2, eshape);
    ob = make_out(WGC_DTYPE_F32, 1, oshape, 4, &out);
    float r[4];
    int32_t axis = 1;
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &axis, 1, 0, &out));
    CHECK(wgc_buffer_read(ob, 0, r, sizeof r));
    EXPECT(r[0] == 0 && r[3] == 0);
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_PROD, &in, &axis, 1, 0, &out));
    CHECK(wgc_buffer_read(ob, 0, r, sizeof r));
    EXPECT(r[0] == 1 && r[3] == 1);
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_MEAN, &in, &axis, 1, 0, &out));
    CHECK(wgc_buffer_read(ob, 0, r, sizeof r));
    EXPECT(isnan(r[0]) && isnan(r[3]));
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_MAX, &in, &axis, 1, 0, &out), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_MIN, &in, &axis, 1, 0, &out), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor iout = out;
    iout.dtype = WGC_DTYPE_I32;
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_ARGMAX, &in, &axis, 1, 0, &iout), WGC_ERROR_INVALID_ARGUMENT);
    /* Empty kept dims: nothing to write, success. */
    int32_t axis0 = 0;
    int64_t zero[1] = {0};
    WgcTensor eout = tensor_of(ob, WGC_DTYPE_F32, 1, zero);
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &axis0, 1, 0, &eout));
    wgc_buffer_release(b);
    wgc_buffer_release(ob);
}

/* An output whose rows overlap (strides that interleave, no zero stride)
 * would race on write: reductions, softmax, norms and pooling refuse it. */
static void test_self_overlapping_outputs(void) {
    float data[64] = {0};
    WgcBuffer *b = upload(env.device, data, sizeof data);
    WgcBuffer *ob = upload(env.device, data, sizeof data);
    int64_t shape3[3] = {2, 3, 4}, shape2[2] = {3, 4};
    WgcTensor in3 = tensor_of(b, WGC_DTYPE_F32, 3, shape3), in2 = tensor_of(b, WGC_DTYPE_F32, 2, shape2);
    WgcTensor red = tensor_of(ob, WGC_DTYPE_F32, 2, (int64_t[2]){2, 3});
    red.strides[0] = 2; /* rows of 3 elements 2 apart */
    int32_t last = -1;
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in3, &last, 1, 0, &red), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_var(env.stream, &in3, &last, 1, 0, 1, &red), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor rows = tensor_of(ob, WGC_DTYPE_F32, 2, shape2);
    rows.strides[0] = 2; /* rows of 4 elements 2 apart */
    EXPECT_STATUS(wgc_op_softmax(env.stream, &in2, 1, &rows), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_layer_norm(env.stream, &in2, NULL, NULL, 1, 1e-5f, &rows), WGC_ERROR_INVALID_ARGUMENT);
    int64_t nchw[4] = {1, 3, 2, 2}, chan[1] = {3};
    WgcTensor x4 = tensor_of(b, WGC_DTYPE_F32, 4, nchw), stats = tensor_of(b, WGC_DTYPE_F32, 1, chan);
    WgcTensor y4 = tensor_of(ob, WGC_DTYPE_F32, 4, nchw);
    y4.strides[1] = 2; /* channel planes of 4 elements 2 apart */
    EXPECT_STATUS(wgc_op_batch_norm(env.stream, &x4, &stats, &stats, NULL, NULL, 1e-5f, &y4), WGC_ERROR_INVALID_ARGUMENT);
    WgcPool2dParams pp = {sizeof pp, 1, 1, 1, 1, 0, 0, 0};
    EXPECT_STATUS(wgc_op_max_pool2d(env.stream, &pp, &x4, &y4), WGC_ERROR_INVALID_ARGUMENT);
    wgc_buffer_release(b);
    wgc_buffer_release(ob);
}

static void test_errors(void) {
    float data[64] = {0};
    int64_t shape[2] = {4, 8}, oshape[1] = {4}, wrong[1] = {8};
    WgcBuffer *b = upload(env.device, data, sizeof data);
    WgcTensor out;
    WgcBuffer *ob = make_out(WGC_DTYPE_F32, 1, oshape, 64, &out);
    WgcTensor in = tensor_of(b, WGC_DTYPE_F32, 2, shape);
    int32_t a1 = 1, dup[2] = {1, -1}, bad3 = 2, badneg = -3, two[2] = {0, 1};
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, &out));
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, dup, 2, 0, &out), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &bad3, 1, 0, &out), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &badneg, 1, 0, &out), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, NULL, 1, 0, &out), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_reduce(env.stream, (WgcReduceOp)99, &in, &a1, 1, 0, &out), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 1, &out), WGC_ERROR_SHAPE_MISMATCH);
    WgcTensor wout = tensor_of(ob, WGC_DTYPE_F32, 1, wrong);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, &wout), WGC_ERROR_SHAPE_MISMATCH);
    WgcTensor iout = tensor_of(ob, WGC_DTYPE_I32, 1, oshape);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, &iout), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_ARGMAX, &in, &a1, 1, 0, &out), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_ARGMAX, &in, two, 2, 0, &iout), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor iin = tensor_of(b, WGC_DTYPE_I32, 2, shape);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_MEAN, &iin, &a1, 1, 0, &iout), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_var(env.stream, &iin, &a1, 1, 0, 1, &iout), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_std(env.stream, &in, dup, 2, 0, 1, &out), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor alias = tensor_of(b, WGC_DTYPE_F32, 1, oshape);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, &alias), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor bcast = out; /* out whose elements alias each other */
    bcast.strides[0] = 0;
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, &bcast), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor scalar_in = tensor_of(b, WGC_DTYPE_F32, 0, NULL), scalar_out = tensor_of(ob, WGC_DTYPE_F32, 0, NULL);
    int32_t a0 = 0;
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &scalar_in, &a0, 1, 0, &scalar_out), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor after = alias; /* same buffer, past the input: allowed */
    after.offset = 32;
    CHECK(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, &after));
    WgcTensor past = in;
    past.offset = 40;
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &past, &a1, 1, 0, &out), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_reduce(NULL, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, &out), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, NULL, &a1, 1, 0, &out), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_reduce(env.stream, WGC_REDUCE_OP_SUM, &in, &a1, 1, 0, NULL), WGC_ERROR_NULL_POINTER);
    /* softmax */
    WgcTensor sout = tensor_of(ob, WGC_DTYPE_F32, 2, shape);
    EXPECT_STATUS(wgc_op_softmax(env.stream, &in, 2, &sout), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_softmax(env.stream, &in, -3, &sout), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_softmax(env.stream, &in, 1, &out), WGC_ERROR_SHAPE_MISMATCH);
    WgcTensor siout = tensor_of(ob, WGC_DTYPE_I32, 2, shape);
    EXPECT_STATUS(wgc_op_log_softmax(env.stream, &in, 1, &siout), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_softmax(env.stream, &iin, 1, &siout), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_softmax(env.stream, &in, 1, &in), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_softmax(env.stream, &past, 1, &sout), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_softmax(env.stream, &in, 1, NULL), WGC_ERROR_NULL_POINTER);
    wgc_buffer_release(b);
    wgc_buffer_release(ob);
}

/* Softmax / log-softmax of layout l along axis, against double. */
static void check_softmax(WgcDtype dt, const Layout *l, int32_t axis, int log_sm, double scale) {
    size_t n = numel(l);
    double *x = random_vals(dt, n, -scale, scale);
    WgcTensor in, out;
    WgcBuffer *bin = make_tensor(dt, l, x, &in);
    WgcBuffer *bout = make_out(dt, l->rank, l->shape, n, &out);
    CHECK(log_sm ? wgc_op_log_softmax(env.stream, &in, axis, &out) : wgc_op_softmax(env.stream, &in, axis, &out));
    double *got = read_out(bout, dt, n);
    double *ref = calloc(n + 1, sizeof(double));
    uint32_t ax = (uint32_t)(axis < 0 ? axis + (int32_t)l->rank : axis);
    size_t inner = 1, len = l->rank ? (size_t)l->shape[ax] : 1;
    for (uint32_t d = ax + 1; d < l->rank; d++) inner *= (size_t)l->shape[d];
    for (size_t base = 0; base < n; base++) {
        if ((base / inner) % len != 0) continue; /* first element of a row */
        double m = -INFINITY, s = 0;
        for (size_t j = 0; j < len; j++) m = fmax(m, x[base + j * inner]);
        for (size_t j = 0; j < len; j++) s += exp(x[base + j * inner] - m);
        for (size_t j = 0; j < len; j++) {
            double v = x[base + j * inner] - m;
            ref[base + j * inner] = log_sm ? v - log(s) : exp(v) / s;
        }
    }
    int bad = 0;
    double rel = dt == WGC_DTYPE_F16 ? 2e-3 : 1e-5, atol = dt == WGC_DTYPE_F16 ? 1e-3 : 1e-6;
    if (log_sm) atol = dt == WGC_DTYPE_F16 ? 1e-2 : 1e-5;
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(got[i] - ref[i]) <= atol + rel * fabs(ref[i])) && bad++ < 3)
            fprintf(stderr, "%s dtype %d rank %u axis %d: out[%zu] = %.9g, expected %.9g\n",
                    log_sm ? "log_softmax" : "softmax", (int)dt, l->rank, axis, i, got[i], ref[i]);
    }
    if (bad) g_failures++;
    free(x);
    free(got);
    free(ref);
    wgc_buffer_release(bin);
    wgc_buffer_release(bout);
}

static void test_softmax(void) {
    static const int64_t s3[3] = {3, 17, 12}, big[2] = {3, 20000}, wide[2] = {2, 1027}, vocab[2] = {3, 50257};
    for (int lg = 0; lg < 2; lg++) {
        for (int dti = 0; dti < 2; dti++) {
            WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
            Layout l = layout(3, s3);
            for (int32_t a = -3; a < 3; a++) check_softmax(dt, &l, a, lg, 5);
            l.perm[0] = 2, l.perm[1] = 1, l.perm[2] = 0; /* transposed */
            l.offset = 5;
            check_softmax(dt, &l, -1, lg, 5);
            check_softmax(dt, &l, 0, lg, 5);
            Layout b = layout(2, big); /* contiguous, beyond the register cache */
            check_softmax(dt, &b, 1, lg, 30);
            Layout w = layout(2, wide); /* odd length: strided kernel */
            check_softmax(dt, &w, 1, lg, 30);
            Layout v = layout(2, vocab); /* few long rows: cut into chunks */
            v.offset = 3;
            check_softmax(dt, &v, 1, lg, 30);
            v.perm[0] = 1, v.perm[1] = 0;
            check_softmax(dt, &v, 1, lg, 30);
        }
        static const int64_t one[2] = {5, 1};
        Layout o = layout(2, one);
        check_softmax(WGC_DTYPE_F32, &o, 1, lg, 1);
        Layout s = layout(0, NULL);
        check_softmax(WGC_DTYPE_F32, &s, 0, lg, 1);
        static const int64_t fit[2] = {9, 4096};
        Layout f = layout(2, fit); /* the benchmark shape's rows */
        check_softmax(WGC_DTYPE_F32, &f, -1, lg, 100);
    }
}

/* Reduce `vals` (logical, row-major, in layout `l`) over `axes` into a fresh
 * output; returns the results (rows of them) as doubles. */
static double *reduce_of(int op, WgcDtype dt, const Layout *l, const double *vals, const int32_t *axes, uint32_t naxes,
                         size_t rows) {
    WgcTensor in, out;
    WgcBuffer *bin = make_tensor(dt, l, vals, &in);
    int is_arg = op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN;
    WgcDtype odt = is_arg ? WGC_DTYPE_I32 : dt;
    int64_t oshape[8];
    uint32_t orank = 0;
    for (uint32_t d = 0; d < l->rank; d++) {
        int reduced = naxes == 0;
        for (uint32_t a = 0; a < naxes; a++) reduced |= (uint32_t)(axes[a] < 0 ? axes[a] + (int32_t)l->rank : axes[a]) == d;
        if (!reduced) oshape[orank++] = l->shape[d];
    }
    WgcBuffer *bout = make_out(odt, orank, oshape, rows, &out);
    CHECK(call_reduce(op, &in, axes, naxes, 0, 1, &out));
    double *got = read_out(bout, odt, rows);
    wgc_buffer_release(bin);
    wgc_buffer_release(bout);
    return got;
}

/* The header's NaN and infinity policy: MAX/MIN propagate NaN, ARG* return
 * the first NaN's index, sums of +inf stay inf (the compensation terms must
 * not turn them into NaN), inf - inf is NaN, var/std of NaN or inf is NaN.
 * Short rows (one workgroup), long rows (many chunks, the vec4 and strided
 * kernels), column reductions, f32 and f16. */
static void test_nan_inf(int long_rows) {
    static const int32_t a0 = 0;
    for (int h = 0; h < 2; h++) {
        WgcDtype dt = h ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        static const int64_t s3[1] = {3};
        Layout l3 = layout(1, s3);
        double v[3] = {1, NAN, 2};
        double *r = reduce_of(WGC_REDUCE_OP_MAX, dt, &l3, v, NULL, 0, 1);
        EXPECT(isnan(r[0]));
        free(r);
        r = reduce_of(WGC_REDUCE_OP_MIN, dt, &l3, v, NULL, 0, 1);
        EXPECT(isnan(r[0]));
        free(r);
        r = reduce_of(WGC_REDUCE_OP_ARGMAX, dt, &l3, v, NULL, 0, 1);
        EXPECT(r[0] == 1);
        free(r);
        r = reduce_of(WGC_REDUCE_OP_ARGMIN, dt, &l3, v, NULL, 0, 1);
        EXPECT(r[0] == 1);
        free(r);
        double w[3] = {NAN, 5, NAN};
        r = reduce_of(WGC_REDUCE_OP_ARGMIN, dt, &l3, w, NULL, 0, 1);
        EXPECT(r[0] == 0);
        free(r);
        double ninf[3] = {-INFINITY, -INFINITY, -INFINITY};
        r = reduce_of(WGC_REDUCE_OP_ARGMAX, dt, &l3, ninf, NULL, 0, 1);
        EXPECT(r[0] == 0);
        free(r);
        double pinf[3] = {1, INFINITY, 2}, both[3] = {INFINITY, 1, -INFINITY};
        for (int op = WGC_REDUCE_OP_SUM; op <= WGC_REDUCE_OP_MEAN; op++) {
            r = reduce_of(op, dt, &l3, pinf, NULL, 0, 1);
            EXPECT(isinf(r[0]) && r[0] > 0);
            free(r);
            r = reduce_of(op, dt, &l3, both, NULL, 0, 1);
            EXPECT(isnan(r[0]));
            free(r);
            r = reduce_of(op, dt, &l3, v, NULL, 0, 1);
            EXPECT(isnan(r[0]));
            free(r);
        }
        double zinf[3] = {0, INFINITY, 1};
        r = reduce_of(WGC_REDUCE_OP_PROD, dt, &l3, zinf, NULL, 0, 1);
        EXPECT(isnan(r[0]));
        free(r);
        for (int op = OP_VAR; op <= OP_STD; op++) {
            r = reduce_of(op, dt, &l3, v, NULL, 0, 1);
            EXPECT(isnan(r[0]));
            free(r);
            r = reduce_of(op, dt, &l3, pinf, NULL, 0, 1);
            EXPECT(isnan(r[0]));
            free(r);
        }
    }
    /* Sums overflowing f32 give inf, not NaN. */
    static const int64_t s3[1] = {3};
    Layout l3 = layout(1, s3);
    double big[3] = {3e38, 3e38, -1};
    double *r = reduce_of(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &l3, big, NULL, 0, 1);
    EXPECT(isinf(r[0]) && r[0] > 0);
    free(r);
    /* Compensated merging: 1e8 + 1 - 1e8 is 1, not 0. */
    double cancel[3] = {1e8, 1, -1e8};
    r = reduce_of(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &l3, cancel, NULL, 0, 1);
    EXPECT(r[0] == 1);
    free(r);

    if (!long_rows) return;
    /* Long rows: NaNs at 700003 and 900000 (different chunks), 4-aligned
     * (vec4 kernel) and offset by 1 (strided kernel); a single +inf. */
    static const int64_t sn[1] = {1000001};
    Layout ln = layout(1, sn);
    double *x = random_vals(WGC_DTYPE_F32, 1000001, -1, 1);
    for (int off = 0; off < 2; off++) {
        ln.offset = off;
        x[900000] = NAN;
        x[700003] = NAN;
        for (int op = WGC_REDUCE_OP_MAX; op <= WGC_REDUCE_OP_ARGMIN; op++) {
            if (op == WGC_REDUCE_OP_PROD) continue;
            r = reduce_of(op, WGC_DTYPE_F32, &ln, x, NULL, 0, 1);
            if (op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN) EXPECT(r[0] == 700003);
            else EXPECT(isnan(r[0]));
            free(r);
        }
        x[900000] = 0.5;
        x[700003] = INFINITY;
        r = reduce_of(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &ln, x, NULL, 0, 1);
        EXPECT(isinf(r[0]) && r[0] > 0);
        free(r);
        r = reduce_of(WGC_REDUCE_OP_ARGMAX, WGC_DTYPE_F32, &ln, x, NULL, 0, 1);
        EXPECT(r[0] == 700003);
        free(r);
        x[700003] = 0.25;
    }
    free(x);
    /* Columns (one invocation per output): NaN in column 7 at rows 2000 and 2500. */
    static const int64_t sc[2] = {3001, 300};
    Layout lc = layout(2, sc);
    x = random_vals(WGC_DTYPE_F32, 3001 * 300, -1, 1);
    x[2500 * 300 + 7] = NAN;
    x[2000 * 300 + 7] = NAN;
    r = reduce_of(WGC_REDUCE_OP_ARGMIN, WGC_DTYPE_F32, &lc, x, &a0, 1, 300);
    EXPECT(r[7] == 2000 && r[8] != 2000);
    free(r);
    r = reduce_of(WGC_REDUCE_OP_MAX, WGC_DTYPE_F32, &lc, x, &a0, 1, 300);
    EXPECT(isnan(r[7]) && !isnan(r[6]) && !isnan(r[8]));
    free(r);
    free(x);
}

/* var and std within 1e-5 relative when the mean is far larger than the
 * spread (mean 1e4 and 1e6, std 1): long rows, many rows, columns. */
static void test_var_large_mean(void) {
    static const int64_t one[1] = {1000003}, rows[2] = {64, 5001}, cols[2] = {5001, 64};
    static const int32_t last = -1, first = 0;
    for (int m = 0; m < 2; m++) {
        double mean = m ? 1e6 : 1e4;
        for (int c = 0; c < (m ? 1 : 3); c++) {
            Layout l = c == 0 ? layout(1, one) : layout(2, c == 1 ? rows : cols);
            size_t n = numel(&l), nrows = c == 0 ? 1 : 64;
            double *x = random_vals(WGC_DTYPE_F32, n, mean - sqrt(3.0), mean + sqrt(3.0));
            int mask[2] = {c == 0 || c == 2, c == 1};
            const int32_t *ax = c == 0 ? NULL : c == 1 ? &last : &first;
            for (int op = OP_VAR; op <= OP_STD; op++) {
                double *got = reduce_of(op, WGC_DTYPE_F32, &l, x, ax, c == 0 ? 0 : 1, nrows);
                double *ref = calloc(nrows, sizeof(double)), *scale = calloc(nrows, sizeof(double));
                reference(op, WGC_DTYPE_F32, 1, &l, x, mask, ref, scale, nrows);
                int bad = 0;
                for (size_t o = 0; o < nrows; o++)
                    if (!(fabs(got[o] - ref[o]) <= 1e-5 * ref[o]) && bad++ < 3)
                        fprintf(stderr, "%s, mean %g, case %d: out[%zu] = %.9g, expected %.9g\n", op_name(op), mean, c, o,
                                got[o], ref[o]);
                if (bad) g_failures++;
                free(got);
                free(ref);
                free(scale);
            }
            free(x);
        }
    }
}

/* Column reductions (the kept innermost dim contiguous): one column per
 * invocation (odd column counts, an odd offset) and four per invocation
 * (vec4), a reduced range split over many chunks (few columns, long
 * columns), two reduced dims decoded per run, outer kept dims, size-1
 * dims, every op and dtype, NaN and inf in long columns. */
/* Many short rows (one invocation per row): every op over the last axis of
 * 2000 rows of widths 1 to 64, f32 and f16, and over a transposed view. */
static void test_short_rows(void) {
    static const int64_t widths[] = {1, 3, 32, 33, 64};
    const int ops[] = {WGC_REDUCE_OP_SUM,    WGC_REDUCE_OP_MEAN,   WGC_REDUCE_OP_MAX, WGC_REDUCE_OP_MIN,
                       WGC_REDUCE_OP_ARGMAX, WGC_REDUCE_OP_ARGMIN, OP_VAR,            OP_STD};
    const int32_t last = -1, first = 0;
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
            for (int dti = 0; dti < 2; dti++) {
                WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
                int64_t shape[2] = {2000, widths[w]}, tshape[2] = {widths[w], 2000};
                Layout l = layout(2, shape), lt = layout(2, tshape);
                check_reduce(ops[o], dt, &l, &last, 1, 0, 1, -1, 1);
                check_reduce(ops[o], dt, &lt, &first, 1, 1, 0, -1, 1);
            }
}

static void test_columns(void) {
    static const int64_t wide[2] = {1003, 301}, wide4[2] = {1003, 300}, narrow[2] = {20011, 17};
    static const int64_t four[4] = {6, 5, 9, 40}, ones[4] = {1, 301, 1, 19};
    static const int32_t a0 = 0, a02[2] = {0, 2}, a12[2] = {1, 2}, a01[2] = {0, 1};
    const WgcDtype dts[] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};
    for (int s = 0; s < 4; s++) {
        Layout l = layout(2, s == 0 ? wide : s == 1 ? wide4 : narrow);
        if (s == 3) l = layout(2, wide4), l.offset = 1; /* not 4-aligned: one column per invocation */
        for (size_t d = 0; d < 4; d++) {
            WgcDtype dt = dts[d];
            int is_int = dt == WGC_DTYPE_I32 || dt == WGC_DTYPE_U32;
            for (int op = 0; op <= WGC_REDUCE_OP_ARGMIN; op++) {
                if (op == WGC_REDUCE_OP_MEAN && is_int) continue;
                /* f32 products of 20011 factors drift past the test's tolerance in any order. */
                if (op == WGC_REDUCE_OP_PROD && s == 2 && !is_int) continue;
                double lo = is_int ? (dt == WGC_DTYPE_U32 ? 0 : -50) : -1, hi = is_int ? 50 : 1;
                if (op == WGC_REDUCE_OP_PROD) lo = is_int ? 0 : 0.999, hi = is_int ? 1.9 : 1.001;
                check_reduce(op, dt, &l, &a0, 1, s & 1, 0, lo, hi);
            }
            if (!is_int)
                for (int op = OP_VAR; op <= OP_STD; op++) check_reduce(op, dt, &l, &a0, 1, 0, s & 1, -1, 1);
        }
    }
    Layout f = layout(4, four);
    const int32_t *sets[] = {a02, a12, a01};
    for (int k = 0; k < 3; k++) {
        for (int op = WGC_REDUCE_OP_SUM; op <= WGC_REDUCE_OP_PROD; op++) {
            double lo = op == WGC_REDUCE_OP_PROD ? 0.99 : -1, hi = op == WGC_REDUCE_OP_PROD ? 1.01 : 1;
            check_reduce(op, WGC_DTYPE_F32, &f, sets[k], 2, k == 1, 0, lo, hi);
            check_reduce(op, WGC_DTYPE_F16, &f, sets[k], 2, 0, 0, lo, hi);
        }
        check_reduce(OP_VAR, WGC_DTYPE_F32, &f, sets[k], 2, 0, 1, -1, 1);
        check_reduce(OP_STD, WGC_DTYPE_F16, &f, sets[k], 2, 1, 0, -1, 1);
    }
    for (int op = WGC_REDUCE_OP_ARGMAX; op <= WGC_REDUCE_OP_ARGMIN; op++)
        for (int32_t a = 0; a < 3; a++) check_reduce(op, WGC_DTYPE_F32, &f, &a, 1, 0, 0, -1, 1);
    Layout o = layout(4, ones);
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &o, &a0, 1, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_MEAN, WGC_DTYPE_F32, &o, a02, 2, 1, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_ARGMIN, WGC_DTYPE_F32, &o, &a0, 1, 0, 0, -1, 1);
    check_reduce(OP_VAR, WGC_DTYPE_F32, &o, a02, 2, 0, 1, -1, 1);

    /* Long columns over many chunks: NaN in column 3 at rows 15000 and
     * 9000 (different chunks), +inf alone in column 5, ties in column 8. */
    Layout n = layout(2, narrow);
    size_t rows = (size_t)narrow[0], cols = (size_t)narrow[1];
    double *x = random_vals(WGC_DTYPE_F32, rows * cols, -1, 1);
    x[15000 * cols + 3] = NAN;
    x[9000 * cols + 3] = NAN;
    x[12345 * cols + 5] = INFINITY;
    x[17000 * cols + 8] = 7;
    x[4000 * cols + 8] = 7;
    for (int h = 0; h < 2; h++) {
        WgcDtype dt = h ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        double *r = reduce_of(WGC_REDUCE_OP_ARGMAX, dt, &n, x, &a0, 1, cols);
        EXPECT(r[3] == 9000 && r[5] == 12345 && r[8] == 4000);
        free(r);
        r = reduce_of(WGC_REDUCE_OP_ARGMIN, dt, &n, x, &a0, 1, cols);
        EXPECT(r[3] == 9000 && r[5] != 12345);
        free(r);
        for (int op = WGC_REDUCE_OP_MAX; op <= WGC_REDUCE_OP_MIN; op++) {
            r = reduce_of(op, dt, &n, x, &a0, 1, cols);
            EXPECT(isnan(r[3]) && !isnan(r[2]) && !isnan(r[4]));
            EXPECT(op == WGC_REDUCE_OP_MIN || (isinf(r[5]) && r[5] > 0));
            free(r);
        }
        for (int op = WGC_REDUCE_OP_SUM; op <= WGC_REDUCE_OP_MEAN; op++) {
            r = reduce_of(op, dt, &n, x, &a0, 1, cols);
            EXPECT(isnan(r[3]) && isinf(r[5]) && r[5] > 0 && isfinite(r[4]));
            free(r);
        }
        for (int op = OP_VAR; op <= OP_STD; op++) {
            r = reduce_of(op, dt, &n, x, &a0, 1, cols);
            EXPECT(isnan(r[3]) && isnan(r[5]) && isfinite(r[4]));
            free(r);
        }
    }
    free(x);
    /* Compensated sums across chunks: 1e8, then 20010 ones, then -1e8. */
    x = calloc(rows * cols, sizeof(double));
    for (size_t i = 0; i < rows * cols; i++) x[i] = 1;
    for (size_t c = 0; c < cols; c++) x[c] = 1e8, x[(rows - 1) * cols + c] = -1e8;
    double *r = reduce_of(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &n, x, &a0, 1, cols);
    for (size_t c = 0; c < cols; c++) EXPECT(r[c] == (double)(rows - 2));
    free(r);
    /* n equal values: the mean is exactly that value, the variance exactly 0. */
    for (size_t i = 0; i < rows * cols; i++) x[i] = 0.1;
    r = reduce_of(WGC_REDUCE_OP_MEAN, WGC_DTYPE_F32, &n, x, &a0, 1, cols);
    for (size_t c = 0; c < cols; c++) EXPECT(r[c] == (double)0.1f);
    free(r);
    r = reduce_of(OP_VAR, WGC_DTYPE_F32, &n, x, &a0, 1, cols);
    for (size_t c = 0; c < cols; c++) EXPECT(r[c] == 0);
    free(r);
    free(x);
}

/* Contiguous rows reduced in one launch (several rows per workgroup, the
 * invocations per row set by the row length): lengths that give every
 * invocation count (4 to 256), rows starting at every alignment (odd
 * lengths, an odd offset, permuted outer dims), every op, f32, f16 and
 * i32; then ties and NaN in the head, vec4 body and tail of odd rows. */
static void test_rows(int all_ops) {
    static const int64_t widths[] = {1, 2, 3, 5, 33, 200, 301, 1001, 1500, 4000};
    static const int32_t last = -1;
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        int64_t shape[3] = {3, 13, widths[w]};
        for (int v = 0; v < 3; v++) {
            /* Every layout for odd lengths, one each for the others. */
            if (widths[w] % 2 == 0 && v != (int)(w % 3)) continue;
            Layout l = layout(3, shape);
            if (v == 1) l.offset = 1;
            if (v == 2) l.perm[0] = 1, l.perm[1] = 0, l.offset = 2;
            for (int o = 0; o < 9; o++) {
                int op = o < 7 ? o : o == 7 ? OP_VAR : OP_STD;
                if (!all_ops && op != WGC_REDUCE_OP_SUM && op != WGC_REDUCE_OP_ARGMAX && op != OP_VAR) continue;
                double lo = op == WGC_REDUCE_OP_PROD ? 0.999 : -1, hi = op == WGC_REDUCE_OP_PROD ? 1.001 : 1;
                for (int h = 0; h < 2; h++) check_reduce(op, h ? WGC_DTYPE_F16 : WGC_DTYPE_F32, &l, &last, 1, v == 1, 1, lo, hi);
                if (all_ops && op <= WGC_REDUCE_OP_ARGMIN && op != WGC_REDUCE_OP_MEAN && op != WGC_REDUCE_OP_PROD)
                    check_reduce(op, WGC_DTYPE_I32, &l, &last, 1, 0, 0, -50, 50);
            }
        }
    }
    if (all_ops) {
        /* 2100 rows of 4101: 256 invocations per row. */
        static const int64_t big[2] = {2100, 4101};
        Layout b = layout(2, big);
        b.offset = 3;
        check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &b, &last, 1, 0, 0, -1, 1);
        check_reduce(WGC_REDUCE_OP_ARGMIN, WGC_DTYPE_F32, &b, &last, 1, 0, 0, -1, 1);
        check_reduce(OP_STD, WGC_DTYPE_F32, &b, &last, 1, 0, 1, 999, 1001);
    }
    /* Small integers (many ties: the first index wins), NaNs. */
    static const int64_t odd[] = {5, 33, 1001};
    for (size_t w = 0; w < sizeof odd / sizeof *odd; w++) {
        size_t k = (size_t)odd[w], rows = 21;
        int64_t shape[2] = {(int64_t)rows, (int64_t)k};
        Layout l = layout(2, shape);
        double *x = random_vals(WGC_DTYPE_F32, rows * k, -1, 1);
        for (size_t i = 0; i < rows * k; i++) x[i] = round(2 * x[i]);
        for (size_t r = 10; r < rows; r++) {
            x[r * k + (r * 7) % k] = NAN;
            x[r * k + (r * 13 + 5) % k] = NAN;
        }
        for (int h = 0; h < 2; h++) {
            WgcDtype dt = h ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
            for (int op = WGC_REDUCE_OP_MAX; op <= WGC_REDUCE_OP_ARGMIN; op++) {
                if (op == WGC_REDUCE_OP_PROD) continue;
                double *got = reduce_of(op, dt, &l, x, &last, 1, rows);
                for (size_t r = 0; r < rows; r++) {
                    const double *row = x + r * k;
                    size_t best = 0;
                    for (size_t j = 1; j < k; j++) {
                        if (isnan(row[best])) break;
                        int better = op == WGC_REDUCE_OP_MIN || op == WGC_REDUCE_OP_ARGMIN ? row[j] < row[best] : row[j] > row[best];
                        if (isnan(row[j]) || better) best = j;
                    }
                    int is_arg = op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN;
                    int ok = is_arg ? got[r] == (double)best : (isnan(row[best]) ? isnan(got[r]) : got[r] == row[best]);
                    if (!ok) {
                        fprintf(stderr, "rows of %zu, %s %s: row %zu got %g, expected %g (index %zu)\n", k,
                                op_name(op), h ? "f16" : "f32", r, got[r], is_arg ? (double)best : row[best], best);
                        g_failures++;
                    }
                }
                free(got);
            }
        }
        free(x);
    }
}

/* Several reduced axes ending in a contiguous run (the run kernel): runs
 * of 54 (scalar loads), 32 and 260 (vec4), 1001 (scalar, one run per
 * chunk: many chunks merged by the finishing pass), 2 and 3 (teams wider
 * than the run), an offset that breaks 4-alignment, a permuted view whose
 * outputs are strided, every op but the arg ops, f32, f16, i32, u32. */
static void test_runs(void) {
    static const int64_t nchw[4] = {5, 7, 6, 9}, nchw4[4] = {3, 10, 4, 8}, abc[3] = {33, 5, 260},
                         long_runs[3] = {40, 3, 1001}, tiny[3] = {70, 9, 2}, three[3] = {9, 300, 3}, perm4[4] = {4, 5, 6, 7};
    static const int32_t a023[3] = {0, 2, 3}, a02[2] = {0, 2}, a03[2] = {0, 3};
    const WgcDtype dts[] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};
    for (int s = 0; s < 8; s++) {
        Layout l = s == 0 ? layout(4, nchw) : s == 1 || s == 2 ? layout(4, nchw4) : s == 3 ? layout(3, abc)
                   : s == 4 ? layout(3, long_runs) : s == 5 ? layout(3, tiny) : s == 6 ? layout(3, three)
                   : layout(4, perm4);
        if (s == 2) l.offset = 2; /* runs of 32 off 4-alignment: scalar loads */
        if (s == 7) l.perm[0] = 1, l.perm[1] = 0; /* dims 0 and 1 swapped in memory: strided outputs */
        const int32_t *axes = s == 7 ? a03 : l.rank == 4 ? a023 : a02;
        uint32_t naxes = s == 7 ? 2 : l.rank == 4 ? 3 : 2;
        for (size_t d = 0; d < 4; d++) {
            WgcDtype dt = dts[d];
            int is_int = dt == WGC_DTYPE_I32 || dt == WGC_DTYPE_U32;
            if (is_int && s != 0 && s != 3) continue;
            for (int op = WGC_REDUCE_OP_SUM; op <= WGC_REDUCE_OP_PROD; op++) {
                if (op == WGC_REDUCE_OP_MEAN && is_int) continue;
                /* f32 products of 40040 factors drift past the test's tolerance in any order. */
                if (op == WGC_REDUCE_OP_PROD && s == 4) continue;
                double lo = is_int ? (dt == WGC_DTYPE_U32 ? 0 : -50) : -1, hi = is_int ? 50 : 1;
                if (op == WGC_REDUCE_OP_PROD) lo = is_int ? 0 : 0.999, hi = is_int ? 1.9 : 1.001;
                check_reduce(op, dt, &l, axes, naxes, s & 1, 0, lo, hi);
            }
            if (!is_int)
                for (int op = OP_VAR; op <= OP_STD; op++) check_reduce(op, dt, &l, axes, naxes, s & 1, (s >> 1) & 1, -1, 1);
        }
    }
    /* NaN and inf: output 1 has a NaN (sum, max, var are NaN), output 2 a
     * +inf (sum inf, var NaN), output 3 both infinities (sum NaN). */
    for (int h = 0; h < 2; h++) {
        WgcDtype dt = h ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        for (int s = 0; s < 2; s++) {
            static const int64_t sh[2][3] = {{6, 5, 40}, {6, 5, 7}};
            Layout l = layout(3, sh[s]);
            size_t n = numel(&l), run = (size_t)l.shape[2], per = 5 * run;
            double *x = random_vals(dt, n, -1, 1);
            x[4 * per + 1 * run + run - 1] = NAN;
            x[2 * per + 2 * run + 3] = INFINITY;
            x[1 * per + 3 * run] = INFINITY, x[5 * per + 3 * run + 2] = -INFINITY;
            double *r = reduce_of(WGC_REDUCE_OP_SUM, dt, &l, x, a02, 2, 5);
            EXPECT(isnan(r[1]) && isinf(r[2]) && r[2] > 0 && isnan(r[3]) && isfinite(r[0]) && isfinite(r[4]));
            free(r);
            r = reduce_of(WGC_REDUCE_OP_MAX, dt, &l, x, a02, 2, 5);
            EXPECT(isnan(r[1]) && isinf(r[2]) && r[2] > 0 && r[0] <= 1);
            free(r);
            r = reduce_of(WGC_REDUCE_OP_MIN, dt, &l, x, a02, 2, 5);
            EXPECT(isnan(r[1]) && isinf(r[3]) && r[3] < 0);
            free(r);
            r = reduce_of(OP_VAR, dt, &l, x, a02, 2, 5);
            EXPECT(isnan(r[1]) && isnan(r[2]) && isnan(r[3]) && isfinite(r[0]) && isfinite(r[4]));
            free(r);
            free(x);
        }
    }
}

/* Every kernel path for every op and dtype; then the layouts again with
 * the workgroup-memory-only kernels (the subgroup stage is the only difference). */
static void run_all(void) {
    test_axis_sets();
    test_dtypes();
    test_layouts();
    test_large();
    test_ties_and_empty();
    test_nan_inf(1);
    test_var_large_mean();
    test_columns();
    test_runs();
    test_short_rows();
    test_rows(1);
    test_errors();
    test_self_overlapping_outputs();
    test_softmax();
}

static void run_fallback(void) {
    static const int64_t big[1] = {3000001};
    Layout l = layout(1, big);
    check_reduce(WGC_REDUCE_OP_SUM, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, -1, 1);
    check_reduce(WGC_REDUCE_OP_ARGMIN, WGC_DTYPE_F32, &l, NULL, 0, 0, 0, -1, 1);
    test_layouts();
    test_ties_and_empty();
    test_nan_inf(0);
    test_rows(0);
    test_softmax();
}

/* `test_reduction columns`: the column reductions only (run again by CTest
 * with each row-group count forced). `test_reduction main` and
 * `test_reduction fallback` are the two halves of the whole run, which
 * CTest runs as two tests. */
int main(int argc, char **argv) {
    env = test_env();
    const char *part = argc > 1 ? argv[1] : "";
    if (strcmp(part, "columns") == 0) {
        test_columns();
        test_env_release(&env);
        return test_finish("test_reduction columns");
    }
    if (strcmp(part, "fallback") != 0) run_all();
    if (strcmp(part, "main") != 0) {
        /* Again with the workgroup-memory-only kernels: a device created
         * with that setting. */
        test_env_release(&env);
        env = test_env_setting("WGC_DISABLE_SUBGROUPS", "1");
        run_fallback();
    }
    test_env_release(&env);
    return test_finish("test_reduction");
}
