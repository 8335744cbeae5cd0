/* cumsum against float64 (floats) and wrapping 32-bit (integers)
 * references: every dtype, every axis, rows along contiguous and strided
 * axes, rows long enough to need the three-pass split (including a strided
 * axis of 70,000 elements, past the 65,535 loop iterations a CPU driver
 * allows one invocation), transposed, offset and reversed views, NaN and
 * infinity propagation, integer wrap-around, and bad input (which must
 * write nothing).
 *
 * Tolerance (floats): |got - ref| <= 2e-6 * sqrt(terms) * sum(|x|) over the
 * prefix, plus for f16 the rounding of the result (1e-3 * |ref| + 1e-3).
 * Integers: exact. */
#include "test_arrays.h"

static TestEnv env;

static int is_float(WgcDtype d) { return d == WGC_DTYPE_F32 || d == WGC_DTYPE_F16; }

/* ref and tolerance scale along `axis` of x's logical values. */
static void reference(const Arr *x, int axis, double *ref, double *tol) {
    int rank = (int)x->t.rank;
    size_t len = (size_t)x->t.shape[axis], outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= (size_t)x->t.shape[k];
    for (int k = axis + 1; k < rank; k++) inner *= (size_t)x->t.shape[k];
    WgcDtype d = (WgcDtype)x->t.dtype;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            double acc = 0, abs_acc = 0;
            uint32_t iacc = 0;
            for (size_t j = 0; j < len; j++) {
                size_t li = (o * len + j) * inner + i;
                double v = x->val[li];
                if (is_float(d)) {
                    acc += v;
                    abs_acc += fabs(v);
                    ref[li] = acc;
                    tol[li] = 2e-6 * sqrt((double)(j + 1)) * abs_acc +
                              (d == WGC_DTYPE_F16 ? 1e-3 * fabs(acc) + 1e-3 : 0);
                } else {
                    iacc += d == WGC_DTYPE_I32 ? (uint32_t)(int32_t)v : (uint32_t)v;
                    ref[li] = d == WGC_DTYPE_I32 ? (double)(int32_t)iacc : (double)iacc;
                    tol[li] = 0;
                }
            }
        }
}

static void compare_tol(const char *what, const double *got, const double *ref, const double *tol, size_t n) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        int ok = (isnan(r) && isnan(g)) || (isinf(r) && g == r) || fabs(g - r) <= tol[i];
        if (!ok && bad++ < 4) fprintf(stderr, "%s: out[%zu] = %.9g, expected %.9g\n", what, i, g, r);
    }
    if (bad) {
        fprintf(stderr, "%s: %d of %zu wrong\n", what, bad, n);
        g_failures++;
    }
}

static void check(WgcDtype d, int rank, const int64_t *shape, int axis, int xl, int ol) {
    double lo = is_float(d) ? -1 : d == WGC_DTYPE_I32 ? -2e9 : 0, hi = is_float(d) ? 1 : d == WGC_DTYPE_I32 ? 2e9 : 4e9;
    Arr x = make_arr(&env, d, rank, shape, xl, lo, hi, !is_float(d));
    Arr o = make_arr(&env, d, rank, shape, ol, 0, 0, 1);
    int a = axis < 0 ? axis + rank : axis;
    CHECK(wgc_op_cumsum(env.stream, &x.t, axis, &o.t));
    read_arr(&o);
    double *ref = malloc((x.n + 1) * sizeof(double)), *tol = malloc((x.n + 1) * sizeof(double));
    reference(&x, a, ref, tol);
    char what[128];
    snprintf(what, sizeof what, "cumsum dtype %d rank %d shape[0] %lld axis %d layouts %d/%d", d, rank,
             (long long)shape[0], axis, xl, ol);
    compare_tol(what, o.val, ref, tol, x.n);
    free(ref), free(tol);
    free_arr(&x), free_arr(&o);
}

/* NaN poisons the rest of its row; inf + -inf is NaN; other rows are fine. */
static void check_special_values(void) {
    int64_t s[2] = {3, 5};
    float v[15] = {1, 2, NAN, 3, 4, /**/ INFINITY, 1, -INFINITY, 2, 3, /**/ 1, 1, 1, 1, 1};
    WgcBuffer *b = upload(env.device, v, sizeof v);
    WgcTensor t = tensor_of(b, WGC_DTYPE_F32, 2, s);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, 0, 0, 1);
    CHECK(wgc_op_cumsum(env.stream, &t, 1, &o.t));
    read_arr(&o);
    double ref[15] = {1, 3, NAN, NAN, NAN, INFINITY, INFINITY, NAN, NAN, NAN, 1, 2, 3, 4, 5};
    compare_f64("cumsum NaN and inf", o.val, ref, 15, 0, 0);
    wgc_buffer_release(b);
    free_arr(&o);
}

static void check_bad_input(void) {
    int64_t s[2] = {4, 6}, s2[2] = {4, 7};
    Arr x = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, -1, 1, 0);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, 0, 0, 1);
    Arr oi = make_arr(&env, WGC_DTYPE_I32, 2, s, CONTIG, 0, 0, 1);
    Arr o2 = make_arr(&env, WGC_DTYPE_F32, 2, s2, CONTIG, 0, 0, 1);
    CHECK(wgc_op_fill(env.stream, &o.t, 42));
    WgcStream *st = env.stream;
    EXPECT_STATUS(wgc_op_cumsum(st, &x.t, 2, &o.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_cumsum(st, &x.t, -3, &o.t), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_cumsum(st, &x.t, 1, &oi.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_cumsum(st, &x.t, 1, &o2.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_cumsum(st, NULL, 1, &o.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_cumsum(st, &x.t, 1, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_cumsum(st, &o.t, 1, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor zero = o.t;
    zero.strides[1] = 0;
    EXPECT_STATUS(wgc_op_cumsum(st, &x.t, 1, &zero), WGC_ERROR_INVALID_ARGUMENT);
    read_arr(&o);
    int untouched = 1;
    for (size_t i = 0; i < o.n; i++) untouched &= o.val[i] == 42;
    EXPECT(untouched);
    free_arr(&x), free_arr(&o), free_arr(&oi), free_arr(&o2);
}

int main(void) {
    env = test_env();
    static const WgcDtype DTYPES[4] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};
    int64_t s3[3] = {5, 37, 11}, wide[2] = {700, 1500}, s1[1] = {3000}, s0[1] = {1};
    for (int di = 0; di < 4; di++) {
        WgcDtype d = DTYPES[di];
        if (d == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        for (int axis = -3; axis < 3; axis++) check(d, 3, s3, axis, CONTIG, CONTIG);
        check(d, 3, s3, 2, TRANSPOSED, REVERSED);
        check(d, 3, s3, 1, OFFSET3, TRANSPOSED);
        check(d, 3, s3, 0, REVERSED, OFFSET4);
        check(d, 2, wide, 1, CONTIG, CONTIG); /* one workgroup walks each row's tiles */
        check(d, 2, wide, 0, CONTIG, CONTIG); /* strided axis, many rows: chunked */
        check(d, 1, s1, 0, REVERSED, CONTIG);
        check(d, 1, s0, 0, CONTIG, CONTIG);
    }
    /* Long rows: three passes, along a contiguous and a strided axis. */
    int64_t long_row[2] = {3, 100000}, long_col[2] = {70000, 70}, one_row[1] = {300001};
    check(WGC_DTYPE_F32, 2, long_row, 1, CONTIG, CONTIG);
    check(WGC_DTYPE_I32, 2, long_row, -1, OFFSET3, CONTIG);
    check(WGC_DTYPE_F32, 2, long_col, 0, CONTIG, CONTIG);
    check(WGC_DTYPE_U32, 2, long_col, 0, CONTIG, OFFSET4);
    check(WGC_DTYPE_F32, 1, one_row, 0, CONTIG, REVERSED);
    if (env.info.has_f16) check(WGC_DTYPE_F16, 2, long_row, 1, CONTIG, CONTIG);
    check_special_values();
    check_bad_input();
    test_env_release(&env);
    return test_finish("test_cumsum");
}
