/* index_select, gather and embedding against references computed from the
 * inputs' logical values: every dtype, i32 and u32 indices (including
 * negative and past-the-end ones, which must give 0), every axis, strided,
 * offset, reversed and transposed views of the source, the indices and the
 * output, rows copied four at a time and one at a time, and bad input
 * (each failing call must leave out untouched). Results are exact. */
#include "test_arrays.h"

static TestEnv env;
static const WgcDtype DTYPES[4] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};

static void unravel(size_t li, int rank, const int64_t *shape, int64_t *c) {
    for (int d = rank - 1; d >= 0; d--) {
        c[d] = (int64_t)(li % (size_t)shape[d]);
        li /= (size_t)shape[d];
    }
}
static size_t ravel(int rank, const int64_t *shape, const int64_t *c) {
    size_t li = 0;
    for (int d = 0; d < rank; d++) li = li * (size_t)shape[d] + (size_t)c[d];
    return li;
}
/* An index value as the kernel sees it: i32 as is, u32 as unsigned. */
static int in_range(double k, int64_t len) { return k >= 0 && k < (double)len; }

static void test_index_select(WgcDtype d, WgcDtype id, int rank, const int64_t *xs, int axis, int64_t nidx,
                              int xl, int il, int ol) {
    int a = axis < 0 ? axis + rank : axis;
    Arr x = make_arr(&env, d, rank, xs, xl, -50, 50, 1);
    int64_t is[1] = {nidx};
    Arr idx = make_arr(&env, id, 1, is, il, -3, (double)xs[a] + 3, 1);
    int64_t os[8];
    for (int i = 0; i < rank; i++) os[i] = xs[i];
    os[a] = nidx;
    Arr o = make_arr(&env, d, rank, os, ol, 0, 0, 1);
    CHECK(wgc_op_index_select(env.stream, &x.t, axis, &idx.t, &o.t));
    read_arr(&o);
    double *ref = malloc((o.n + 1) * sizeof(double));
    int64_t c[8];
    for (size_t i = 0; i < o.n; i++) {
        unravel(i, rank, os, c);
        double k = idx.val[c[a]];
        if (!in_range(k, xs[a])) {
            ref[i] = 0;
            continue;
        }
        c[a] = (int64_t)k;
        ref[i] = x.val[ravel(rank, xs, c)];
    }
    char what[128];
    snprintf(what, sizeof what, "index_select dtype %d index %d rank %d axis %d layouts %d/%d/%d", d, id, rank, axis,
             xl, il, ol);
    compare_f64(what, o.val, ref, o.n, 0, 0);
    free(ref);
    free_arr(&x), free_arr(&idx), free_arr(&o);
}

static void test_gather(WgcDtype d, WgcDtype id, int axis, int xl, int il, int ol) {
    int64_t xs[3] = {5, 7, 6}, is[3] = {4, 7, 3};
    is[axis] = 9; /* any length along the gathered axis */
    Arr x = make_arr(&env, d, 3, xs, xl, -50, 50, 1);
    Arr idx = make_arr(&env, id, 3, is, il, -2, (double)xs[axis] + 2, 1);
    Arr o = make_arr(&env, d, 3, is, ol, 0, 0, 1);
    CHECK(wgc_op_gather(env.stream, &x.t, axis, &idx.t, &o.t));
    read_arr(&o);
    double *ref = malloc((o.n + 1) * sizeof(double));
    int64_t c[3];
    for (size_t i = 0; i < o.n; i++) {
        unravel(i, 3, is, c);
        double k = idx.val[i];
        if (!in_range(k, xs[axis])) {
            ref[i] = 0;
            continue;
        }
        c[axis] = (int64_t)k;
        ref[i] = x.val[ravel(3, xs, c)];
    }
    char what[128];
    snprintf(what, sizeof what, "gather dtype %d index %d axis %d layouts %d/%d/%d", d, id, axis, xl, il, ol);
    compare_f64(what, o.val, ref, o.n, 0, 0);
    free(ref);
    free_arr(&x), free_arr(&idx), free_arr(&o);
}

/* Embedding of a [V, D] table by indices of shape [3, 5]. */
static void test_embedding(WgcDtype d, WgcDtype id, int64_t v, int64_t dim, int tl, int ol) {
    int64_t ts[2] = {v, dim}, is[2] = {3, 5}, os[3] = {3, 5, dim};
    Arr t = make_arr(&env, d, 2, ts, tl, -4, 4, 0);
    Arr idx = make_arr(&env, id, 2, is, CONTIG, -2, (double)v + 2, 1);
    Arr o = make_arr(&env, d, 3, os, ol, 0, 0, 1);
    CHECK(wgc_op_embedding(env.stream, &t.t, &idx.t, &o.t));
    read_arr(&o);
    double *ref = malloc((o.n + 1) * sizeof(double));
    for (size_t i = 0; i < 15; i++)
        for (int64_t j = 0; j < dim; j++) {
            double k = idx.val[i];
            ref[i * (size_t)dim + (size_t)j] = in_range(k, v) ? t.val[(size_t)k * (size_t)dim + (size_t)j] : 0;
        }
    char what[128];
    snprintf(what, sizeof what, "embedding dtype %d index %d [%lld, %lld] layouts %d/%d", d, id, (long long)v,
             (long long)dim, tl, ol);
    compare_f64(what, o.val, ref, o.n, 0, 0);
    free(ref);
    free_arr(&t), free_arr(&idx), free_arr(&o);
}

/* A u32 index of 2^31 or more is out of range, not a negative offset. */
static void test_huge_u32_index(void) {
    int64_t xs[2] = {4, 8}, is[1] = {3}, os[2] = {3, 8};
    Arr x = make_arr(&env, WGC_DTYPE_F32, 2, xs, CONTIG, 1, 2, 0);
    uint32_t iv[3] = {0x80000000u, 3, 0xFFFFFFFFu};
    WgcBuffer *ib = upload(env.device, iv, sizeof iv);
    WgcTensor it = tensor_of(ib, WGC_DTYPE_U32, 1, is);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 2, os, CONTIG, 5, 6, 0);
    CHECK(wgc_op_index_select(env.stream, &x.t, 0, &it, &o.t));
    read_arr(&o);
    for (int j = 0; j < 8; j++) {
        EXPECT(o.val[j] == 0);
        EXPECT(o.val[8 + j] == x.val[24 + j]);
        EXPECT(o.val[16 + j] == 0);
    }
    wgc_buffer_release(ib);
    free_arr(&x), free_arr(&o);
}

/* Every failure returns its status, leaves a message and writes nothing. */
static void test_bad_input(void) {
    int64_t xs[2] = {6, 8}, is[1] = {4}, os[2] = {4, 8}, bad_os[2] = {4, 7}, is2[2] = {2, 2};
    Arr x = make_arr(&env, WGC_DTYPE_F32, 2, xs, CONTIG, 1, 2, 0);
    Arr idx = make_arr(&env, WGC_DTYPE_I32, 1, is, CONTIG, 0, 6, 1);
    Arr fidx = make_arr(&env, WGC_DTYPE_F32, 1, is, CONTIG, 0, 6, 1);
    Arr idx2 = make_arr(&env, WGC_DTYPE_I32, 2, is2, CONTIG, 0, 6, 1);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 2, os, CONTIG, 0, 0, 1);
    Arr oi = make_arr(&env, WGC_DTYPE_I32, 2, os, CONTIG, 0, 0, 1);
    Arr obad = make_arr(&env, WGC_DTYPE_F32, 2, bad_os, CONTIG, 0, 0, 1);
    CHECK(wgc_op_fill(env.stream, &o.t, 42));
    WgcStream *s = env.stream;
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 2, &idx.t, &o.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, -3, &idx.t, &o.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, &fidx.t, &o.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, &idx2.t, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, &idx.t, &obad.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, &idx.t, &oi.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_index_select(s, NULL, 0, &idx.t, &o.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, NULL, &o.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_index_select(NULL, &x.t, 0, &idx.t, &o.t), WGC_ERROR_NULL_POINTER);
    /* out sharing the source's buffer, even without overlapping it. */
    WgcBuffer *big = NULL;
    CHECK(wgc_buffer_create(env.device, 4 * 200, WGC_BUFFER_USAGE_STORAGE, &big));
    WgcTensor xin = tensor_of(big, WGC_DTYPE_F32, 2, xs), oin = tensor_of(big, WGC_DTYPE_F32, 2, os);
    oin.offset = 100;
    EXPECT_STATUS(wgc_op_index_select(s, &xin, 0, &idx.t, &oin), WGC_ERROR_INVALID_ARGUMENT);
    oin.offset = 10; /* overlapping */
    EXPECT_STATUS(wgc_op_index_select(s, &xin, 0, &idx.t, &oin), WGC_ERROR_INVALID_ARGUMENT);
    /* out whose elements share memory. */
    WgcTensor ozero = o.t;
    ozero.strides[0] = 0;
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, &idx.t, &ozero), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor orows = o.t;
    orows.strides[0] = 4; /* rows of 8 overlapping by half */
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, &idx.t, &orows), WGC_ERROR_INVALID_ARGUMENT);
    /* An empty source axis: every index is out of range, detectable now. */
    int64_t empty_s[2] = {0, 8};
    WgcTensor xempty = tensor_of(x.buf, WGC_DTYPE_F32, 2, empty_s);
    EXPECT_STATUS(wgc_op_index_select(s, &xempty, 0, &idx.t, &o.t), WGC_ERROR_OUT_OF_RANGE);
    int64_t empty_os[2] = {4, 8};
    WgcTensor oe = tensor_of(o.buf, WGC_DTYPE_F32, 2, empty_os);
    EXPECT_STATUS(wgc_op_embedding(s, &xempty, &idx.t, &oe), WGC_ERROR_OUT_OF_RANGE);
    /* gather: index rank and lengths. */
    EXPECT_STATUS(wgc_op_gather(s, &x.t, 0, &idx.t, &o.t), WGC_ERROR_SHAPE_MISMATCH);
    int64_t long_s[2] = {2, 9};
    WgcTensor idx_long = tensor_of(idx2.buf, WGC_DTYPE_I32, 2, long_s);
    idx_long.strides[0] = 0, idx_long.strides[1] = 0;
    EXPECT_STATUS(wgc_op_gather(s, &x.t, 0, &idx_long, &o.t), WGC_ERROR_SHAPE_MISMATCH);
    /* embedding: out shape must be index.shape ++ [D]. */
    EXPECT_STATUS(wgc_op_embedding(s, &x.t, &idx.t, &obad.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_embedding(s, &x.t, &fidx.t, &o.t), WGC_ERROR_UNSUPPORTED);
    /* Nothing above wrote to o. */
    read_arr(&o);
    int untouched = 1;
    for (size_t i = 0; i < o.n; i++) untouched &= o.val[i] == 42;
    EXPECT(untouched);
    /* An empty index is fine and launches nothing. */
    int64_t zero_s[1] = {0}, zero_os[2] = {0, 8};
    WgcTensor idx0 = tensor_of(idx.buf, WGC_DTYPE_I32, 1, zero_s), o0 = tensor_of(o.buf, WGC_DTYPE_F32, 2, zero_os);
    EXPECT_STATUS(wgc_op_index_select(s, &x.t, 0, &idx0, &o0), WGC_OK);
    wgc_buffer_release(big);
    free_arr(&x), free_arr(&idx), free_arr(&fidx), free_arr(&idx2), free_arr(&o), free_arr(&oi), free_arr(&obad);
}

int main(void) {
    env = test_env();
    int64_t s3[3] = {5, 7, 6}, s1[1] = {11}, s2[2] = {13, 64};
    for (int di = 0; di < 4; di++) {
        WgcDtype d = DTYPES[di];
        if (d == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        for (int ii = 0; ii < 2; ii++) {
            WgcDtype id = ii ? WGC_DTYPE_U32 : WGC_DTYPE_I32;
            for (int axis = -3; axis < 3; axis++) test_index_select(d, id, 3, s3, axis, 9, CONTIG, CONTIG, CONTIG);
            test_index_select(d, id, 3, s3, 1, 4, TRANSPOSED, REVERSED, OFFSET3);
            test_index_select(d, id, 3, s3, 2, 1, REVERSED, OFFSET3, TRANSPOSED);
            test_index_select(d, id, 1, s1, 0, 17, OFFSET3, CONTIG, REVERSED);
            /* Rows of 64: four elements at a time, also from offset 4. */
            test_index_select(d, id, 2, s2, 0, 29, CONTIG, CONTIG, CONTIG);
            test_index_select(d, id, 2, s2, 0, 29, OFFSET4, REVERSED, OFFSET4);
            test_index_select(d, id, 2, s2, 0, 29, OFFSET3, CONTIG, CONTIG);
            for (int axis = 0; axis < 3; axis++) test_gather(d, id, axis, CONTIG, CONTIG, CONTIG);
            test_gather(d, id, 1, TRANSPOSED, REVERSED, OFFSET3);
            test_gather(d, id, 2, REVERSED, TRANSPOSED, TRANSPOSED);
        }
    }
    for (int di = 0; di < 2; di++) {
        WgcDtype d = DTYPES[di];
        if (d == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        for (int ii = 0; ii < 2; ii++) {
            WgcDtype id = ii ? WGC_DTYPE_U32 : WGC_DTYPE_I32;
            test_embedding(d, id, 37, 20, CONTIG, CONTIG);
            test_embedding(d, id, 37, 64, CONTIG, CONTIG);
            test_embedding(d, id, 37, 64, OFFSET4, OFFSET4);
            test_embedding(d, id, 5, 3, TRANSPOSED, REVERSED);
            test_embedding(d, id, 1000, 256, CONTIG, OFFSET3);
            /* Rows of 16-byte words (eight f16 each), many rows. */
            test_embedding(d, id, 1000, 264, CONTIG, CONTIG);
        }
    }
    test_huge_u32_index();
    test_bad_input();
    test_env_release(&env);
    return test_finish("test_index");
}
