/* Shared by the GEMM tests: host-side views, and one gemm case checked
 * against a double-precision reference (see test_matmul.c's header for the
 * tolerances). The including file defines nothing named env. */
#ifndef WGC_GEMM_CHECK_H
#define WGC_GEMM_CHECK_H
#include "test_util.h"

static TestEnv env;

/* A host-side view: the same numbers given to the GPU. */
typedef struct {
    uint32_t rank;
    int64_t shape[8];
    int64_t strides[8];
    int64_t offset;
} View;

static View view_contig(uint32_t rank, const int64_t *shape) {
    View v;
    memset(&v, 0, sizeof v);
    v.rank = rank;
    int64_t acc = 1;
    for (int i = (int)rank - 1; i >= 0; i--) {
        v.shape[i] = shape[i];
        v.strides[i] = acc;
        acc *= shape[i] > 0 ? shape[i] : 1;
    }
    return v;
}

static int64_t view_span(const View *v) {
    int64_t hi = v->offset;
    for (uint32_t i = 0; i < v->rank; i++)
        if (v->shape[i] > 0 && v->strides[i] > 0) hi += (v->shape[i] - 1) * v->strides[i];
    return hi + 1;
}

static WgcTensor gpu_view(WgcBuffer *b, WgcDtype dt, const View *v) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = dt;
    t.rank = v->rank;
    for (uint32_t i = 0; i < v->rank; i++) {
        t.shape[i] = v->shape[i];
        t.strides[i] = v->strides[i];
    }
    t.offset = v->offset;
    return t;
}

/* Element of a batch-broadcast matrix view: batch index aligned right. */
static double mat_at(const float *d, const View *v, const int64_t *bidx, uint32_t brank, int64_t r, int64_t c) {
    int64_t off = v->offset;
    uint32_t vb = v->rank - 2;
    for (uint32_t i = 0; i < vb; i++) {
        int64_t idx = bidx[brank - vb + i];
        if (v->shape[i] == 1) idx = 0;
        off += idx * v->strides[i];
    }
    off += r * v->strides[vb] + c * v->strides[vb + 1];
    return d[off];
}

static uint16_t *to_f16(const float *x, size_t n, float *rounded) {
    uint16_t *h = malloc(n * 2 + 2);
    for (size_t i = 0; i < n; i++) {
        h[i] = f32_to_f16(x[i]);
        rounded[i] = f16_to_f32(h[i]);
    }
    return h;
}

/* One gemm case. Data buffers are sized from the views; c starts with
 * random content (or NaN when beta == 0, which must be ignored). */
/* Values a case may plant in a and b before upload (NaN/inf cases). */
typedef void (*Plant)(float *a, int64_t na, float *b, int64_t nb);

static void gemm_case_planted(const char *name, WgcDtype in_dt, WgcDtype out_dt, View av, int ta, View bv, int tb,
                              View cv, float alpha, float beta, Plant plant) {
    int64_t na = view_span(&av), nb = view_span(&bv), nc = view_span(&cv);
    float *ha = malloc(na * 4 + 4), *hb = malloc(nb * 4 + 4), *hc = malloc(nc * 4 + 4);
    fill_uniform_f32(ha, na, -1, 1);
    fill_uniform_f32(hb, nb, -1, 1);
    fill_uniform_f32(hc, nc, -1, 1);
    if (plant) plant(ha, na, hb, nb);
    if (beta == 0.0f)
        for (int64_t i = 0; i < nc; i++) hc[i] = NAN;
    WgcBuffer *ba, *bb, *bc;
    if (in_dt == WGC_DTYPE_F16) {
        uint16_t *fa = to_f16(ha, na, ha), *fb = to_f16(hb, nb, hb);
        ba = upload(env.device, fa, na * 2);
        bb = upload(env.device, fb, nb * 2);
        free(fa);
        free(fb);
    } else {
        ba = upload(env.device, ha, na * 4);
        bb = upload(env.device, hb, nb * 4);
    }
    if (out_dt == WGC_DTYPE_F16) {
        uint16_t *fc = to_f16(hc, nc, hc);
        bc = upload(env.device, fc, nc * 2);
        free(fc);
    } else {
        bc = upload(env.device, hc, nc * 4);
    }
    WgcTensor ta_ = gpu_view(ba, in_dt, &av), tb_ = gpu_view(bb, in_dt, &bv), tc_ = gpu_view(bc, out_dt, &cv);
    CHECK(wgc_op_gemm(env.stream, alpha, &ta_, (uint32_t)ta, &tb_, (uint32_t)tb, beta, &tc_));

    uint32_t cr = cv.rank, brank = cr - 2;
    int64_t M = cv.shape[cr - 2], N = cv.shape[cr - 1];
    int64_t K = ta ? av.shape[av.rank - 2] : av.shape[av.rank - 1];
    int64_t batches = 1;
    for (uint32_t i = 0; i < brank; i++) batches *= cv.shape[i];
    size_t total = (size_t)(batches * M * N);
    double *ref = malloc(total * 8 + 8);
    float *got = malloc(total * 4 + 4);
    float *raw = malloc(nc * 4 + 4);
    if (out_dt == WGC_DTYPE_F16) {
        uint16_t *h = malloc(nc * 2 + 4);
        CHECK(wgc_buffer_read(bc, 0, h, ((nc * 2) + 3) & ~3));
        for (int64_t i = 0; i < nc; i++) raw[i] = f16_to_f32(h[i]);
        free(h);
    } else {
        CHECK(wgc_buffer_read(bc, 0, raw, nc * 4));
    }
    size_t o = 0;
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t bidx[8], rest = bi;
        for (int i = (int)brank - 1; i >= 0; i--) {
            bidx[i] = rest % cv.shape[i];
            rest /= cv.shape[i];
        }
        int64_t coff = cv.offset;
        for (uint32_t i = 0; i < brank; i++) coff += bidx[i] * cv.strides[i];
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++, o++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) {
                    double x = ta ? mat_at(ha, &av, bidx, brank, k, m) : mat_at(ha, &av, bidx, brank, m, k);
                    double y = tb ? mat_at(hb, &bv, bidx, brank, n, k) : mat_at(hb, &bv, bidx, brank, k, n);
                    s += x * y;
                }
                int64_t ci = coff + m * cv.strides[brank] + n * cv.strides[brank + 1];
                ref[o] = alpha * s + (beta != 0.0f ? beta * (double)hc[ci] : 0.0);
                got[o] = raw[ci];
            }
    }
    double tol = (out_dt == WGC_DTYPE_F16) ? 2e-3 : 1e-5 * (1 + sqrt((double)K));
    compare_f32(name, got, ref, total, tol, out_dt == WGC_DTYPE_F16 ? 2e-3 : 1e-5);
    free(ha), free(hb), free(hc), free(ref), free(got), free(raw);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
}

static inline void gemm_case(const char *name, WgcDtype in_dt, WgcDtype out_dt, View av, int ta, View bv, int tb,
                             View cv, float alpha, float beta) {
    gemm_case_planted(name, in_dt, out_dt, av, ta, bv, tb, cv, alpha, beta, NULL);
}

#define SHAPE(...) ((int64_t[]){__VA_ARGS__})
#define V(rank, ...) view_contig(rank, SHAPE(__VA_ARGS__))

#endif
