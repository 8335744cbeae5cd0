/* Data movement operators: copy, permute, transpose, cast, fill, arange.
 * All results are exact except casts to f16 (compared after rounding the
 * reference through f16, so also exact) and f32 arange (1e-6 relative). */
#include "test_arrays.h"


static const char *dname(WgcDtype d) {
    return d == WGC_DTYPE_F32 ? "f32" : d == WGC_DTYPE_F16 ? "f16" : d == WGC_DTYPE_I32 ? "i32" : "u32";
}

static TestEnv env;
static const WgcDtype DTYPES[4] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};

static void expect_equal(const char *what, const Arr *o, const double *ref) { compare_f64(what, o->val, ref, o->n, 0, 0); }

static void test_copy(WgcDtype d) {
    int64_t s2[2] = {37, 29}, s1[1] = {5003};
    int layouts[5][2] = {{TRANSPOSED, CONTIG}, {CONTIG, TRANSPOSED}, {REVERSED, OFFSET3}, {OFFSET3, CONTIG}, {OFFSET4, CONTIG}};
    for (int c = 0; c < 5; c++) {
        int rank = c < 3 ? 2 : 1;
        const int64_t *s = c < 3 ? s2 : s1;
        Arr a = make_arr(&env, d, rank, s, layouts[c][0], 0, 1000, 1);
        Arr o = make_arr(&env, d, rank, s, layouts[c][1], 0, 0, 1);
        CHECK(wgc_op_copy(env.stream, &a.t, &o.t));
        read_arr(&o);
        char what[64];
        snprintf(what, sizeof what, "copy %s case %d", dname(d), c);
        expect_equal(what, &o, a.val);
        free_arr(&a);
        free_arr(&o);
    }
}

static void test_permute(WgcDtype d) {
    int64_t s[4] = {3, 5, 2, 7};
    uint32_t perm[4] = {2, 0, 3, 1};
    int64_t ps[4];
    for (int i = 0; i < 4; i++) ps[i] = s[perm[i]];
    Arr a = make_arr(&env, d, 4, s, TRANSPOSED, 0, 1000, 1);
    Arr o = make_arr(&env, d, 4, ps, CONTIG, 0, 0, 1);
    CHECK(wgc_op_permute(env.stream, &a.t, perm, 4, &o.t));
    read_arr(&o);
    double *ref = malloc(o.n * sizeof(double));
    for (size_t i = 0; i < o.n; i++) {
        /* Output multi-index -> input multi-index. */
        size_t rem = i, idx[4], in_idx[4];
        for (int k = 3; k >= 0; k--) { idx[k] = rem % (size_t)ps[k]; rem /= (size_t)ps[k]; }
        for (int k = 0; k < 4; k++) in_idx[perm[k]] = idx[k];
        size_t li = ((in_idx[0] * 5 + in_idx[1]) * 2 + in_idx[2]) * 7 + in_idx[3];
        ref[i] = a.val[li];
    }
    char what[64];
    snprintf(what, sizeof what, "permute %s", dname(d));
    expect_equal(what, &o, ref);
    /* transpose(-1, 0) of a [9, 4, 6] tensor. */
    int64_t ts[3] = {9, 4, 6}, tts[3] = {6, 4, 9};
    Arr t = make_arr(&env, d, 3, ts, CONTIG, 0, 1000, 1);
    Arr to = make_arr(&env, d, 3, tts, OFFSET3, 0, 0, 1);
    CHECK(wgc_op_transpose(env.stream, &t.t, -1, 0, &to.t));
    read_arr(&to);
    double *tref = malloc(to.n * sizeof(double));
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 4; j++)
            for (size_t k = 0; k < 9; k++) tref[(i * 4 + j) * 9 + k] = t.val[(k * 4 + j) * 6 + i];
    snprintf(what, sizeof what, "transpose %s", dname(d));
    expect_equal(what, &to, tref);
    /* Batched transpose with partial 32 x 32 tiles: [3, 40, 70] -> [3, 70, 40]. */
    int64_t bs[3] = {3, 40, 70}, bts[3] = {3, 70, 40};
    uint32_t bperm[3] = {0, 2, 1};
    Arr bt = make_arr(&env, d, 3, bs, CONTIG, 0, 1000, 1);
    Arr bto = make_arr(&env, d, 3, bts, CONTIG, 0, 0, 1);
    CHECK(wgc_op_permute(env.stream, &bt.t, bperm, 3, &bto.t));
    read_arr(&bto);
    double *bref = malloc(bto.n * sizeof(double));
    for (size_t b = 0; b < 3; b++)
        for (size_t i = 0; i < 70; i++)
            for (size_t j = 0; j < 40; j++) bref[(b * 70 + i) * 40 + j] = bt.val[(b * 40 + j) * 70 + i];
    snprintf(what, sizeof what, "batched transpose %s", dname(d));
    expect_equal(what, &bto, bref);
    free(bref);
    free_arr(&bt);
    free_arr(&bto);
    free(ref);
    free(tref);
    free_arr(&a);
    free_arr(&o);
    free_arr(&t);
    free_arr(&to);
}

/* The reference conversion: float -> int truncates and saturates, NaN -> 0;
 * i32 <-> u32 reinterpret bits. */
static double cast_ref(WgcDtype from, WgcDtype to, double v) {
    if (from == to) return v;
    if (to == WGC_DTYPE_F32 || to == WGC_DTYPE_F16) return quant(to, v);
    if (isnan(v)) return 0;
    if (from == WGC_DTYPE_I32 && to == WGC_DTYPE_U32) return (double)(uint32_t)(int32_t)v;
    if (from == WGC_DTYPE_U32 && to == WGC_DTYPE_I32) return (double)(int32_t)(uint32_t)v;
    double t = trunc(v);
    if (to == WGC_DTYPE_I32) return t < -2147483648.0 ? -2147483648.0 : t > 2147483520.0 ? 2147483520.0 : t;
    return t < 0 ? 0 : t > 4294967040.0 ? 4294967040.0 : t;
}

static void test_cast(WgcDtype from, WgcDtype to) {
    int64_t s[2] = {23, 19};
    double lo = from == WGC_DTYPE_U32 ? 0 : -300, hi = 300;
    Arr a = make_arr(&env, from, 2, s, TRANSPOSED, lo, hi, 0);
    Arr o = make_arr(&env, to, 2, s, OFFSET4, 0, 0, 1);
    CHECK(wgc_op_cast(env.stream, &a.t, &o.t));
    read_arr(&o);
    double *ref = malloc(o.n * sizeof(double));
    for (size_t i = 0; i < o.n; i++) ref[i] = cast_ref(from, to, a.val[i]);
    char what[64];
    snprintf(what, sizeof what, "cast %s -> %s", dname(from), dname(to));
    expect_equal(what, &o, ref);
    free(ref);
    free_arr(&a);
    free_arr(&o);
}

/* Saturation, NaN and negative values in float -> int casts. */
static void test_cast_edges(void) {
    float v[8] = {1e10f, -1e10f, NAN, -5.9f, 5.9f, -0.5f, 3e9f, 2147483520.0f};
    int64_t s[1] = {8};
    WgcBuffer *in = upload(env.device, v, sizeof v), *oi = NULL, *ou = NULL;
    CHECK(wgc_buffer_create(env.device, sizeof v, 0, &oi));
    CHECK(wgc_buffer_create(env.device, sizeof v, 0, &ou));
    WgcTensor ti = tensor_of(in, WGC_DTYPE_F32, 1, s), toi = tensor_of(oi, WGC_DTYPE_I32, 1, s),
              tou = tensor_of(ou, WGC_DTYPE_U32, 1, s);
    CHECK(wgc_op_cast(env.stream, &ti, &toi));
    CHECK(wgc_op_cast(env.stream, &ti, &tou));
    int32_t gi[8];
    uint32_t gu[8];
    CHECK(wgc_buffer_read(oi, 0, gi, sizeof gi));
    CHECK(wgc_buffer_read(ou, 0, gu, sizeof gu));
    EXPECT(gi[0] == 2147483520 && gi[1] == INT32_MIN && gi[2] == 0 && gi[3] == -5 && gi[4] == 5 && gi[5] == 0 &&
           gi[6] == 2147483520 && gi[7] == 2147483520);
    EXPECT(gu[0] == 4294967040u && gu[1] == 0 && gu[2] == 0 && gu[3] == 0 && gu[4] == 5 && gu[5] == 0 &&
           gu[6] == 3000000000u);
    wgc_buffer_release(in);
    wgc_buffer_release(oi);
    wgc_buffer_release(ou);
}

/* Fill a column of a matrix: the rest stays as it was. */
static void test_fill(WgcDtype d) {
    int64_t s[2] = {17, 5};
    Arr m = make_arr(&env, d, 2, s, CONTIG, 0, 100, 1);
    WgcTensor col = m.t;
    col.rank = 1;
    col.shape[0] = 17;
    col.strides[0] = 5;
    col.offset = 2;
    double value = d == WGC_DTYPE_U32 ? 42 : -3.25;
    CHECK(wgc_op_fill(env.stream, &col, value));
    double *ref = malloc(m.n * sizeof(double));
    for (size_t i = 0; i < m.n; i++) ref[i] = i % 5 == 2 ? quant(d, value) : m.val[i];
    read_arr(&m);
    char what[64];
    snprintf(what, sizeof what, "fill %s", dname(d));
    expect_equal(what, &m, ref);
    /* Contiguous fill of an odd size (vec4 + tail). */
    int64_t big[1] = {5003};
    Arr b = make_arr(&env, d, 1, big, OFFSET4, 0, 100, 1);
    CHECK(wgc_op_fill(env.stream, &b.t, 7));
    read_arr(&b);
    int ok = 1;
    for (size_t i = 0; i < b.n; i++) ok &= b.val[i] == 7;
    EXPECT(ok);
    free(ref);
    free_arr(&m);
    free_arr(&b);
}

static void test_arange(WgcDtype d) {
    int64_t s[1] = {1001};
    Arr o = make_arr(&env, d, 1, s, OFFSET3, 0, 0, 1);
    double start = d == WGC_DTYPE_U32 ? 5000 : -20, step = d == WGC_DTYPE_U32 ? -3 : ((d == WGC_DTYPE_F32 || d == WGC_DTYPE_F16) ? 0.25 : 7);
    CHECK(wgc_op_arange(env.stream, &o.t, start, step));
    read_arr(&o);
    double *ref = malloc(o.n * sizeof(double));
    for (size_t i = 0; i < o.n; i++) ref[i] = quant(d, start + (double)i * step);
    char what[64];
    snprintf(what, sizeof what, "arange %s", dname(d));
    compare_f64(what, o.val, ref, o.n, 0, d == WGC_DTYPE_F32 ? 1e-6 : 0);
    free(ref);
    free_arr(&o);
}

static void test_errors(void) {
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s6[1] = {6};
    Arr a = make_arr(&env, WGC_DTYPE_F32, 2, s23, CONTIG, 0, 1, 0);
    Arr b = make_arr(&env, WGC_DTYPE_F32, 2, s32, CONTIG, 0, 1, 0);
    Arr bi = make_arr(&env, WGC_DTYPE_I32, 2, s23, CONTIG, 0, 1, 1);
    Arr flat = make_arr(&env, WGC_DTYPE_F32, 1, s6, CONTIG, 0, 1, 0);
    WgcStream *st = env.stream;
    EXPECT_STATUS(wgc_op_copy(st, &a.t, &b.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_copy(st, &a.t, &bi.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_cast(st, &a.t, &b.t), WGC_ERROR_SHAPE_MISMATCH);
    uint32_t bad_perm[2] = {0, 0}, good_perm[2] = {1, 0}, long_perm[3] = {0, 1, 2};
    EXPECT_STATUS(wgc_op_permute(st, &a.t, bad_perm, 2, &b.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_permute(st, &a.t, long_perm, 3, &b.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_permute(st, &a.t, NULL, 2, &b.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_permute(st, &a.t, good_perm, 2, &a.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_transpose(st, &a.t, 0, 2, &b.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_transpose(st, &a.t, -3, 1, &b.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_arange(st, &a.t, 0, 1), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_arange(st, &flat.t, NAN, 1), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_fill(st, NULL, 1), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_copy(NULL, &a.t, &a.t), WGC_ERROR_NULL_POINTER);
    /* Transposing a matrix onto itself overlaps without being the same view. */
    WgcTensor at = a.t;
    at.shape[0] = 3; at.shape[1] = 2; at.strides[0] = 1; at.strides[1] = 3;
    EXPECT_STATUS(wgc_op_copy(st, &at, &b.t), WGC_OK);
    WgcTensor rev = b.t; /* b with its rows reversed, copied into b */
    rev.strides[0] = -2; rev.offset = 4;
    EXPECT_STATUS(wgc_op_copy(st, &rev, &b.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_copy(st, &b.t, &b.t), WGC_OK);
    WgcTensor bcast = flat.t;
    bcast.strides[0] = 0;
    EXPECT_STATUS(wgc_op_fill(st, &bcast, 1), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor past = flat.t;
    past.shape[0] = 100;
    EXPECT_STATUS(wgc_op_fill(st, &past, 1), WGC_ERROR_OUT_OF_RANGE);
    /* Empty tensors succeed. */
    int64_t s0[2] = {0, 3};
    Arr e = make_arr(&env, WGC_DTYPE_F32, 2, s0, CONTIG, 0, 1, 0);
    EXPECT_STATUS(wgc_op_copy(st, &e.t, &e.t), WGC_OK);
    EXPECT_STATUS(wgc_op_fill(st, &e.t, 1), WGC_OK);
    free_arr(&e);
    free_arr(&a);
    free_arr(&b);
    free_arr(&bi);
    free_arr(&flat);
}

int main(void) {
    env = test_env();
    for (int i = 0; i < 4; i++) {
        test_copy(DTYPES[i]);
        test_permute(DTYPES[i]);
        test_fill(DTYPES[i]);
        test_arange(DTYPES[i]);
        for (int j = 0; j < 4; j++) test_cast(DTYPES[i], DTYPES[j]);
    }
    test_cast_edges();
    test_errors();
    test_env_release(&env);
    return test_finish("test_movement");
}
