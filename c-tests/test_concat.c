/* concat against references built from the inputs' logical values: every
 * dtype, every axis, three inputs (one of them empty along the axis),
 * strided, offset, reversed and transposed views, rows copied four at a
 * time; slicing views with wgc_tensor_slice (split, steps, negative
 * bounds) and joining the parts again; bad input, which must leave out
 * untouched. Results are exact. CTest also runs it with WGC_CONCAT=scalar
 * (unaligned 2-byte rows one element per invocation). */
#include "test_arrays.h"

static TestEnv env;
static const WgcDtype DTYPES[4] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};

/* Concat of `n` rank-`rank` inputs whose shapes are `base` with dim `axis`
 * set to lens[i]; input i laid out as layouts[i], out as ol. */
static void check_concat(WgcDtype d, int rank, const int64_t *base, int axis, int n, const int64_t *lens,
                         const int *layouts, int ol) {
    Arr in[4];
    WgcTensor views[4];
    int64_t os[8], total = 0;
    for (int i = 0; i < rank; i++) os[i] = base[i];
    for (int i = 0; i < n; i++) {
        int64_t s[8];
        for (int k = 0; k < rank; k++) s[k] = base[k];
        s[axis] = lens[i];
        total += lens[i];
        in[i] = make_arr(&env, d, rank, s, layouts[i], -1000, 1000, 1);
        views[i] = in[i].t;
    }
    os[axis] = total;
    Arr o = make_arr(&env, d, rank, os, ol, 0, 0, 1);
    CHECK(wgc_op_concat(env.stream, views, (uint32_t)n, axis - rank * (axis % 2), &o.t)); /* odd axes negative */
    read_arr(&o);
    double *ref = malloc((o.n + 1) * sizeof(double));
    /* outer = product of dims before axis, inner = after. */
    size_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= (size_t)base[k];
    for (int k = axis + 1; k < rank; k++) inner *= (size_t)base[k];
    size_t w = 0;
    for (size_t a = 0; a < outer; a++)
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < (size_t)lens[i] * inner; j++) ref[w++] = in[i].val[a * (size_t)lens[i] * inner + j];
    char what[128];
    snprintf(what, sizeof what, "concat dtype %d rank %d axis %d layouts %d/%d/%d -> %d", d, rank, axis, layouts[0],
             n > 1 ? layouts[1] : -1, n > 2 ? layouts[2] : -1, ol);
    compare_f64(what, o.val, ref, o.n, 0, 0);
    free(ref);
    for (int i = 0; i < n; i++) free_arr(&in[i]);
    free_arr(&o);
}

/* Split a [6, 10] tensor into column blocks by slicing, join them in
 * another order, and check; also a strided, negative-bound slice. */
static void check_slices(void) {
    int64_t s[2] = {6, 10};
    Arr a = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, -100, 100, 1);
    WgcTensor parts[3];
    CHECK(wgc_tensor_slice(&a.t, 1, 7, 10, 1, &parts[0]));  /* columns 7..9 */
    CHECK(wgc_tensor_slice(&a.t, -1, 0, -3, 1, &parts[1])); /* columns 0..6 */
    CHECK(wgc_tensor_slice(&a.t, 1, 0, 0, 1, &parts[2]));   /* empty */
    EXPECT(parts[0].shape[1] == 3 && parts[0].offset == 7 && parts[1].shape[1] == 7 && parts[2].shape[1] == 0);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, 0, 0, 1);
    CHECK(wgc_op_concat(env.stream, parts, 3, 1, &o.t));
    read_arr(&o);
    double ref[60];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 10; j++) ref[i * 10 + j] = a.val[i * 10 + (j < 3 ? 7 + j : j - 3)];
    compare_f64("split and join", o.val, ref, 60, 0, 0);
    /* Every other row from row 1, then concatenated with row 0 along dim 0. */
    WgcTensor odd, first;
    CHECK(wgc_tensor_slice(&a.t, 0, 1, 6, 2, &odd));
    CHECK(wgc_tensor_slice(&a.t, 0, -6, -5, 1, &first));
    EXPECT(odd.shape[0] == 3 && odd.strides[0] == 20 && odd.offset == 10 && first.shape[0] == 1);
    int64_t s2[2] = {4, 10};
    Arr o2 = make_arr(&env, WGC_DTYPE_F32, 2, s2, CONTIG, 0, 0, 1);
    WgcTensor two[2] = {odd, first};
    CHECK(wgc_op_concat(env.stream, two, 2, 0, &o2.t));
    read_arr(&o2);
    double ref2[40];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 10; j++) ref2[i * 10 + j] = a.val[(i < 3 ? 1 + 2 * i : 0) * 10 + j];
    compare_f64("strided slices", o2.val, ref2, 40, 0, 0);
    /* Bad slices; out_view untouched. */
    WgcTensor keep = odd;
    EXPECT_STATUS(wgc_tensor_slice(&a.t, 0, 4, 2, 1, &odd), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_tensor_slice(&a.t, 0, 0, 7, 1, &odd), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_tensor_slice(&a.t, 0, -7, 2, 1, &odd), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_tensor_slice(&a.t, 2, 0, 1, 1, &odd), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_tensor_slice(&a.t, 0, 0, 1, 0, &odd), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_tensor_slice(NULL, 0, 0, 1, 1, &odd), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_tensor_slice(&a.t, 0, 0, 1, 1, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT(memcmp(&keep, &odd, sizeof odd) == 0);
    free_arr(&a), free_arr(&o), free_arr(&o2);
}

static void check_bad_input(void) {
    int64_t s[2] = {4, 6}, s2[2] = {4, 12}, s3[2] = {5, 6}, s13[2] = {4, 13};
    Arr a = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, 1, 2, 0);
    Arr b = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, 1, 2, 0);
    Arr bi = make_arr(&env, WGC_DTYPE_I32, 2, s, CONTIG, 1, 2, 1);
    Arr c = make_arr(&env, WGC_DTYPE_F32, 2, s3, CONTIG, 1, 2, 0);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 2, s2, CONTIG, 0, 0, 1);
    Arr o13 = make_arr(&env, WGC_DTYPE_F32, 2, s13, CONTIG, 0, 0, 1);
    CHECK(wgc_op_fill(env.stream, &o.t, 42));
    WgcStream *st = env.stream;
    WgcTensor ab[2] = {a.t, b.t}, abi[2] = {a.t, bi.t}, ac[2] = {a.t, c.t};
    EXPECT_STATUS(wgc_op_concat(st, ab, 0, 1, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_concat(st, NULL, 2, 1, &o.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_concat(st, ab, 2, 1, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_concat(st, ab, 2, 2, &o.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_concat(st, ab, 2, 0, &o.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_concat(st, ab, 2, 1, &o13.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_concat(st, abi, 2, 1, &o.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_concat(st, ac, 2, 1, &o.t), WGC_ERROR_SHAPE_MISMATCH);
    /* out overlapping an input, sharing its buffer, or with aliased elements. */
    WgcTensor self[2] = {a.t, b.t};
    self[1].buffer = o.buf;
    EXPECT_STATUS(wgc_op_concat(st, self, 2, 1, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor zero = o.t;
    zero.strides[0] = 0;
    EXPECT_STATUS(wgc_op_concat(st, ab, 2, 1, &zero), WGC_ERROR_INVALID_ARGUMENT);
    read_arr(&o);
    int untouched = 1;
    for (size_t i = 0; i < o.n; i++) untouched &= o.val[i] == 42;
    EXPECT(untouched);
    free_arr(&a), free_arr(&b), free_arr(&bi), free_arr(&c), free_arr(&o), free_arr(&o13);
}

int main(void) {
    env = test_env();
    int64_t b3[3] = {3, 5, 7}, b2[2] = {7, 0}, b1[1] = {0};
    int64_t lens[3] = {4, 0, 3}, wide[2] = {16, 32}, rows[2] = {3, 5};
    int contig[3] = {CONTIG, CONTIG, CONTIG}, mixed[3] = {TRANSPOSED, REVERSED, OFFSET3};
    int off4[2] = {OFFSET4, CONTIG};
    for (int di = 0; di < 4; di++) {
        WgcDtype d = DTYPES[di];
        if (d == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        for (int axis = 0; axis < 3; axis++) {
            check_concat(d, 3, b3, axis, 3, lens, contig, CONTIG);
            check_concat(d, 3, b3, axis, 3, lens, mixed, TRANSPOSED);
            check_concat(d, 3, b3, axis, 3, lens, mixed, REVERSED);
        }
        b2[1] = 64; /* rows of 64 along axis 0: four at a time */
        check_concat(d, 2, b2, 0, 2, rows, contig, CONTIG);
        check_concat(d, 2, b2, 0, 2, rows, off4, OFFSET4);
        b2[1] = 0;
        b2[0] = 7; /* [7, 16] ++ [7, 32] along axis 1 */
        check_concat(d, 2, b2, 1, 2, wide, contig, CONTIG);
        b1[0] = 0;
        int64_t l1[3] = {1001, 1, 517};
        check_concat(d, 1, b1, 0, 3, l1, mixed, OFFSET3);
    }
    if (env.info.has_f16) {
        /* 2-byte rows not 4-aligned (odd widths, odd offsets) go a word at a
         * time (unless WGC_CONCAT=scalar): several workgroups per row, one,
         * rows of 2 and 3 elements, reversed and offset views. */
        int64_t odd[2] = {4097, 1023}, tiny[3] = {2, 3, 1}, b2o[2] = {37, 0}, b3o[3] = {3, 4, 0};
        int rev[2] = {REVERSED, OFFSET3}, off3[3] = {OFFSET3, CONTIG, REVERSED};
        check_concat(WGC_DTYPE_F16, 2, b2o, 1, 2, odd, contig, CONTIG);
        check_concat(WGC_DTYPE_F16, 2, b2o, 1, 2, odd, rev, OFFSET3);
        check_concat(WGC_DTYPE_F16, 3, b3o, 2, 3, tiny, off3, REVERSED);
        check_concat(WGC_DTYPE_F16, 3, b3o, 2, 3, tiny, contig, OFFSET3);
    }
    check_slices();
    check_bad_input();
    test_env_release(&env);
    return test_finish("test_concat");
}
