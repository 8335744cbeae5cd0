/* topk against a reference sort of the inputs' logical values: every dtype,
 * i32 and u32 indices, largest and smallest, k from 1 to 1024, rows shorter
 * than one sorting chunk (2048), exactly one, just over, and many chunks
 * (merged in several rounds), many ties (broken by the lower index), NaN
 * (above +inf), infinities and signed zeros, strided, reversed, offset and
 * transposed views, and bad input (which must write nothing). Exact.
 * CTest runs it twice: the radix-select path for k <= 256 and, with
 * WGC_TOPK=sort, the full sort of every chunk. */
#include "test_arrays.h"

static TestEnv env;
static int g_largest;
static const double *g_row;

/* -1 if entry a comes before entry b. */
static int order(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    double va = g_row[a], vb = g_row[b];
    int na = isnan(va), nb = isnan(vb);
    if (na != nb) return (na ^ !g_largest) ? -1 : 1; /* NaN is the largest value */
    if (!na && va != vb) return ((va > vb) == g_largest) ? -1 : 1;
    return a < b ? -1 : 1;
}

static void check(WgcDtype d, WgcDtype id, int rank, const int64_t *shape, int64_t k, int largest, int xl, int ol,
                  double lo, double hi, int integral) {
    int64_t os[8];
    for (int i = 0; i < rank; i++) os[i] = shape[i];
    os[rank - 1] = k;
    Arr x = make_arr(&env, d, rank, shape, xl, lo, hi, integral);
    Arr v = make_arr(&env, d, rank, os, ol, 0, 0, 1);
    Arr ix = make_arr(&env, id, rank, os, ol == TRANSPOSED ? CONTIG : ol, 0, 0, 1);
    CHECK(wgc_op_topk(env.stream, &x.t, (uint32_t)k, (uint32_t)largest, &v.t, &ix.t));
    read_arr(&v);
    read_arr(&ix);
    size_t len = (size_t)shape[rank - 1], rows = len ? x.n / len : 0;
    double *rv = malloc((v.n + 1) * sizeof(double)), *ri = malloc((v.n + 1) * sizeof(double));
    int64_t *perm = malloc((len + 1) * sizeof(int64_t));
    g_largest = largest;
    for (size_t r = 0; r < rows; r++) {
        g_row = x.val + r * len;
        for (size_t j = 0; j < len; j++) perm[j] = (int64_t)j;
        qsort(perm, len, sizeof(int64_t), order);
        for (int64_t j = 0; j < k; j++) {
            rv[r * (size_t)k + (size_t)j] = g_row[perm[j]];
            ri[r * (size_t)k + (size_t)j] = (double)perm[j];
        }
    }
    char what[160];
    snprintf(what, sizeof what, "topk dtype %d index %d len %zu rows %zu k %lld largest %d layouts %d/%d", d, id, len,
             rows, (long long)k, largest, xl, ol);
    compare_f64(what, ix.val, ri, v.n, 0, 0);
    compare_f64(what, v.val, rv, v.n, 0, 0);
    /* Signed zeros: the bits come from the input. */
    for (size_t i = 0; i < v.n; i++)
        if (v.val[i] == 0 && signbit(v.val[i]) != signbit(x.val[(i / (size_t)k) * len + (size_t)ri[i]])) {
            fprintf(stderr, "%s: the sign of zero at %zu was not kept\n", what, i);
            g_failures++;
            break;
        }
    free(rv), free(ri), free(perm);
    free_arr(&x), free_arr(&v), free_arr(&ix);
}

/* NaN, infinities and signed zeros, in both directions. */
static void check_special(int largest, int64_t len) {
    int64_t s[1] = {len}, ks[1] = {9};
    float *h = malloc((size_t)len * sizeof(float));
    for (int64_t i = 0; i < len; i++) h[i] = (float)rng_uniform(-100, 100);
    int64_t at[8] = {3, len / 2, 0, 1, 5, 7, len / 3, len - 1}; /* +inf before the NaNs */
    h[at[0]] = NAN, h[at[1]] = NAN, h[at[2]] = INFINITY, h[at[3]] = -INFINITY, h[at[4]] = -0.0f, h[at[5]] = 0.0f;
    h[at[6]] = -NAN, h[at[7]] = -INFINITY;
    WgcBuffer *b = upload(env.device, h, (size_t)len * sizeof(float));
    WgcTensor t = tensor_of(b, WGC_DTYPE_F32, 1, s);
    Arr v = make_arr(&env, WGC_DTYPE_F32, 1, ks, CONTIG, 0, 0, 1);
    Arr ix = make_arr(&env, WGC_DTYPE_I32, 1, ks, CONTIG, 0, 0, 1);
    CHECK(wgc_op_topk(env.stream, &t, 9, (uint32_t)largest, &v.t, &ix.t));
    read_arr(&v), read_arr(&ix);
    double *row = malloc((size_t)len * sizeof(double));
    int64_t *perm = malloc((size_t)len * sizeof(int64_t));
    for (int64_t i = 0; i < len; i++) row[i] = h[i], perm[i] = i;
    g_row = row, g_largest = largest;
    qsort(perm, (size_t)len, sizeof(int64_t), order);
    double rv[9], ri[9];
    for (int j = 0; j < 9; j++) rv[j] = row[perm[j]], ri[j] = (double)perm[j];
    char what[64];
    snprintf(what, sizeof what, "topk special values largest %d len %lld", largest, (long long)len);
    compare_f64(what, ix.val, ri, 9, 0, 0);
    compare_f64(what, v.val, rv, 9, 0, 0);
    free(h), free(row), free(perm);
    wgc_buffer_release(b);
    free_arr(&v), free_arr(&ix);
}

static void check_bad_input(void) {
    int64_t s[2] = {3, 50}, ks[2] = {3, 5}, kbad[2] = {3, 6}, s1[1] = {2000}, k1[1] = {1025}, s0[1] = {0};
    Arr x = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, -1, 1, 0);
    Arr v = make_arr(&env, WGC_DTYPE_F32, 2, ks, CONTIG, 0, 0, 1);
    Arr vi = make_arr(&env, WGC_DTYPE_I32, 2, ks, CONTIG, 0, 0, 1);
    Arr ix = make_arr(&env, WGC_DTYPE_I32, 2, ks, CONTIG, 0, 0, 1);
    Arr ixf = make_arr(&env, WGC_DTYPE_F32, 2, ks, CONTIG, 0, 0, 1);
    Arr vbad = make_arr(&env, WGC_DTYPE_F32, 2, kbad, CONTIG, 0, 0, 1);
    Arr big = make_arr(&env, WGC_DTYPE_F32, 1, s1, CONTIG, -1, 1, 0);
    Arr vbig = make_arr(&env, WGC_DTYPE_F32, 1, k1, CONTIG, 0, 0, 1);
    Arr ibig = make_arr(&env, WGC_DTYPE_I32, 1, k1, CONTIG, 0, 0, 1);
    CHECK(wgc_op_fill(env.stream, &v.t, 42));
    CHECK(wgc_op_fill(env.stream, &ix.t, 42));
    WgcStream *st = env.stream;
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 2, &v.t, &ix.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 51, 1, &v.t, &ix.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 6, 1, &v.t, &ix.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, &vbad.t, &ix.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, &vi.t, &ix.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, &v.t, &ixf.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_topk(st, &big.t, 1025, 1, &vbig.t, &ibig.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_topk(st, NULL, 5, 1, &v.t, &ix.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, NULL, &ix.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, &v.t, NULL), WGC_ERROR_NULL_POINTER);
    /* values and indices in one buffer; values overlapping in. */
    WgcTensor vshared = v.t;
    vshared.buffer = ix.buf;
    vshared.dtype = WGC_DTYPE_F32;
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, &vshared, &ix.t), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor vin = v.t;
    vin.buffer = x.buf;
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, &vin, &ix.t), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor vzero = v.t;
    vzero.strides[1] = 0;
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 5, 1, &vzero, &ix.t), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor x0 = tensor_of(x.buf, WGC_DTYPE_F32, 0, s0);
    EXPECT_STATUS(wgc_op_topk(st, &x0, 0, 1, &v.t, &ix.t), WGC_ERROR_INVALID_ARGUMENT);
    read_arr(&v), read_arr(&ix);
    int untouched = 1;
    for (size_t i = 0; i < v.n; i++) untouched &= v.val[i] == 42 && ix.val[i] == 42;
    EXPECT(untouched);
    /* k = 0 and empty rows succeed and launch nothing. */
    int64_t k0[2] = {3, 0};
    WgcTensor v0 = tensor_of(v.buf, WGC_DTYPE_F32, 2, k0), i0 = tensor_of(ix.buf, WGC_DTYPE_I32, 2, k0);
    EXPECT_STATUS(wgc_op_topk(st, &x.t, 0, 1, &v0, &i0), WGC_OK);
    free_arr(&x), free_arr(&v), free_arr(&vi), free_arr(&ix), free_arr(&ixf), free_arr(&vbad);
    free_arr(&big), free_arr(&vbig), free_arr(&ibig);
}

int main(void) {
    env = test_env();
    static const WgcDtype DTYPES[4] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};
    int64_t s3[3] = {3, 4, 37}, s2[2] = {2, 2048}, s2b[2] = {3, 2049}, s1[1] = {1};
    for (int di = 0; di < 4; di++) {
        WgcDtype d = DTYPES[di];
        if (d == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        double lo = d == WGC_DTYPE_U32 ? 0 : -1000, hi = 1000;
        for (int largest = 0; largest < 2; largest++) {
            WgcDtype id = largest ? WGC_DTYPE_I32 : WGC_DTYPE_U32;
            check(d, id, 3, s3, 5, largest, CONTIG, CONTIG, lo, hi, 0);
            check(d, id, 3, s3, 37, largest, TRANSPOSED, OFFSET3, lo, hi, 0);
            check(d, id, 3, s3, 1, largest, REVERSED, TRANSPOSED, lo, hi, 0);
            check(d, id, 3, s3, 7, largest, OFFSET4, REVERSED, 0, 5, 1); /* many ties */
            check(d, id, 2, s2, 256, largest, CONTIG, CONTIG, lo, hi, 0);
            check(d, id, 2, s2b, 300, largest, CONTIG, OFFSET3, 0, 20, 1); /* two chunks, ties across them */
            check(d, id, 1, s1, 1, largest, CONTIG, CONTIG, lo, hi, 0);
        }
    }
    /* Long rows: lists merged in rounds. */
    int64_t l1[2] = {2, 70000}, l2[1] = {300000}, l3[2] = {3, 5000};
    check(WGC_DTYPE_F32, WGC_DTYPE_I32, 2, l1, 256, 1, CONTIG, CONTIG, -1e6, 1e6, 0);
    check(WGC_DTYPE_F32, WGC_DTYPE_I32, 2, l1, 1024, 0, TRANSPOSED, CONTIG, -1e6, 1e6, 0);
    check(WGC_DTYPE_I32, WGC_DTYPE_U32, 1, l2, 50, 1, REVERSED, CONTIG, 0, 1000, 1);
    check(WGC_DTYPE_U32, WGC_DTYPE_I32, 2, l3, 1000, 0, CONTIG, REVERSED, 0, 100, 1);
    if (env.info.has_f16) check(WGC_DTYPE_F16, WGC_DTYPE_I32, 2, l3, 600, 1, CONTIG, CONTIG, -100, 100, 0);
    /* k <= 256 is found by radix select (unless WGC_TOPK=sort): k = 1, 50,
     * 256, rows shorter and longer than a chunk, a vocabulary-sized row,
     * rows of one repeated value (every key ties: decided by index bytes). */
    int64_t v1[2] = {3, 128256}, v2[2] = {2, 9000}, v3[2] = {3, 300}, v4[3] = {2, 3, 4099};
    check(WGC_DTYPE_F32, WGC_DTYPE_I32, 2, v1, 50, 1, CONTIG, CONTIG, -1, 1, 0);
    check(WGC_DTYPE_F32, WGC_DTYPE_U32, 2, v2, 1, 0, REVERSED, TRANSPOSED, -1e3, 1e3, 0);
    check(WGC_DTYPE_F32, WGC_DTYPE_I32, 2, v2, 256, 1, TRANSPOSED, OFFSET3, -3, 3, 1);
    check(WGC_DTYPE_I32, WGC_DTYPE_I32, 2, v3, 256, 0, OFFSET4, CONTIG, -50, 50, 1);
    check(WGC_DTYPE_U32, WGC_DTYPE_I32, 3, v4, 50, 1, CONTIG, REVERSED, 7, 7, 1);
    check(WGC_DTYPE_F32, WGC_DTYPE_I32, 3, v4, 256, 0, REVERSED, CONTIG, 0, 0, 1);
    if (env.info.has_f16) {
        check(WGC_DTYPE_F16, WGC_DTYPE_I32, 2, v2, 50, 1, TRANSPOSED, CONTIG, -2, 2, 0);
        check(WGC_DTYPE_F16, WGC_DTYPE_U32, 2, v3, 1, 0, CONTIG, CONTIG, -10, 10, 1);
    }
    for (int largest = 0; largest < 2; largest++) {
        check_special(largest, 100);
        check_special(largest, 9000);
    }
    check_bad_input();
    test_env_release(&env);
    return test_finish("test_topk");
}
