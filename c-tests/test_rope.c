/* Rotary position embedding against a float64 evaluation of the formula:
 * f32 and f16, interleaved and half-split pairs, partial rotation, the
 * sequence dim in several places, large position offsets (up to 2^32 - 1,
 * where the angle must still be exact), strided, transposed, offset and
 * reversed views, in place, and bad input (which must write nothing).
 *
 * Tolerance per element: 3e-6 * (|x[a]| + |x[b]|) + 1e-6 for f32; f16
 * (inputs and outputs rounded to f16): 1e-3 * (|x[a]| + |x[b]|) + 1e-3. */
#include "test_arrays.h"

static TestEnv env;

static WgcRopeDesc desc_of(uint32_t layout, int32_t seq_axis, uint32_t rot, float base, uint32_t offset) {
    WgcRopeDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.layout = layout;
    d.seq_axis = seq_axis;
    d.rotary_dims = rot;
    d.base = base;
    d.position_offset = offset;
    return d;
}

/* out = rope(x) in double, with per-element tolerance scales. */
static void reference(const Arr *x, const WgcRopeDesc *d, double *ref, double *scale) {
    int rank = (int)x->t.rank;
    int seq = d->seq_axis < 0 ? d->seq_axis + rank : d->seq_axis;
    size_t dim = (size_t)x->t.shape[rank - 1];
    size_t r = d->rotary_dims ? d->rotary_dims : dim, h = r / 2;
    size_t rows = x->n / (dim ? dim : 1);
    for (size_t row = 0; row < rows; row++) {
        /* The row's coordinate along seq: unravel over the outer dims. */
        size_t rem = row, coord = 0;
        for (int k = rank - 2; k >= 0; k--) {
            size_t c = rem % (size_t)x->t.shape[k];
            rem /= (size_t)x->t.shape[k];
            if (k == seq) coord = c;
        }
        double pos = (double)d->position_offset + (double)coord;
        const double *v = x->val + row * dim;
        double *o = ref + row * dim, *s = scale + row * dim;
        for (size_t j = r; j < dim; j++) o[j] = v[j], s[j] = 0;
        for (size_t i = 0; i < h; i++) {
            size_t a = d->layout == WGC_ROPE_LAYOUT_INTERLEAVED ? 2 * i : i;
            size_t b = d->layout == WGC_ROPE_LAYOUT_INTERLEAVED ? 2 * i + 1 : i + h;
            double theta = pow((double)d->base, -(double)(2 * i) / (double)r);
            double ang = pos * theta, c = cos(ang), sn = sin(ang);
            o[a] = v[a] * c - v[b] * sn;
            o[b] = v[a] * sn + v[b] * c;
            s[a] = s[b] = fabs(v[a]) + fabs(v[b]);
        }
    }
}

static void compare_rope(const char *what, WgcDtype dt, const double *got, const double *ref, const double *scale,
                         size_t n) {
    double rel = dt == WGC_DTYPE_F16 ? 1e-3 : 3e-6, atol = dt == WGC_DTYPE_F16 ? 1e-3 : 1e-6;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = scale[i] ? rel * scale[i] + atol : 0; /* copied elements are exact */
        if (isnan(ref[i]) && isnan(got[i])) continue;
        if (!(fabs(got[i] - ref[i]) <= tol) && bad++ < 4)
            fprintf(stderr, "%s: out[%zu] = %.9g, expected %.9g\n", what, i, got[i], ref[i]);
    }
    if (bad) {
        fprintf(stderr, "%s: %d of %zu wrong\n", what, bad, n);
        g_failures++;
    }
}

/* nan_at >= 0: that logical element of x is NaN (it must poison its pair only). */
static void check_nan(WgcDtype dt, int rank, const int64_t *shape, WgcRopeDesc d, int xl, int ol, int in_place,
                      long nan_at) {
    Arr x = make_arr(&env, dt, rank, shape, xl, -3, 3, 0);
    if (nan_at >= 0) {
        x.val[nan_at] = NAN;
        float nanf = NAN;
        uint16_t nanh = 0x7e00;
        size_t es = dt == WGC_DTYPE_F16 ? 2 : 4;
        /* Rewrite the whole buffer with the NaN in place. */
        size_t bytes = (x.phys * es + 3) & ~(size_t)3;
        unsigned char *host = malloc(bytes);
        CHECK(wgc_buffer_read(x.buf, 0, host, bytes));
        memcpy(host + (size_t)phys_index(&x.t, (size_t)nan_at) * es, dt == WGC_DTYPE_F16 ? (void *)&nanh : (void *)&nanf,
               es);
        CHECK(wgc_buffer_write(x.buf, 0, host, bytes));
        free(host);
    }
    double *ref = malloc((x.n + 1) * sizeof(double)), *scale = malloc((x.n + 1) * sizeof(double));
    reference(&x, &d, ref, scale);
    Arr o;
    if (in_place) {
        CHECK(wgc_op_rope(env.stream, &x.t, &d, &x.t));
        read_arr(&x);
        o = x;
    } else {
        o = make_arr(&env, dt, rank, shape, ol, 0, 0, 0);
        CHECK(wgc_op_rope(env.stream, &x.t, &d, &o.t));
        read_arr(&o);
    }
    char what[160];
    snprintf(what, sizeof what, "rope dtype %d layout %u rank %d seq %d rot %u base %g offset %u layouts %d/%d%s", dt,
             d.layout, rank, d.seq_axis, d.rotary_dims, d.base, d.position_offset, xl, ol, in_place ? " in place" : "");
    compare_rope(what, dt, o.val, ref, scale, x.n);
    free(ref), free(scale);
    if (!in_place) free_arr(&o);
    free_arr(&x);
}

static void check(WgcDtype dt, int rank, const int64_t *shape, WgcRopeDesc d, int xl, int ol, int in_place) {
    check_nan(dt, rank, shape, d, xl, ol, in_place, -1);
}

static void check_bad_input(void) {
    int64_t s[3] = {2, 5, 8}, s1[1] = {8}, big[2] = {2, 520};
    Arr x = make_arr(&env, WGC_DTYPE_F32, 3, s, CONTIG, -1, 1, 0);
    Arr xi = make_arr(&env, WGC_DTYPE_I32, 3, s, CONTIG, -1, 1, 1);
    Arr x1 = make_arr(&env, WGC_DTYPE_F32, 1, s1, CONTIG, -1, 1, 0);
    Arr xb = make_arr(&env, WGC_DTYPE_F32, 2, big, CONTIG, -1, 1, 0);
    Arr ob = make_arr(&env, WGC_DTYPE_F32, 2, big, CONTIG, 0, 0, 0);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 3, s, CONTIG, 0, 0, 0);
    Arr oi = make_arr(&env, WGC_DTYPE_I32, 3, s, CONTIG, 0, 0, 1);
    CHECK(wgc_op_fill(env.stream, &o.t, 42));
    WgcStream *st = env.stream;
    WgcRopeDesc ok = desc_of(WGC_ROPE_LAYOUT_HALF_SPLIT, 1, 0, 10000, 0), d;
    d = ok, d.seq_axis = 2;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_OUT_OF_RANGE);
    d = ok, d.seq_axis = -4;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_OUT_OF_RANGE);
    d = ok, d.rotary_dims = 3;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    d = ok, d.rotary_dims = 10;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    d = ok, d.base = 0;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    d = ok, d.base = NAN;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    d = ok, d.layout = 7;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    d = ok, d.position_offset = 0xFFFFFFFCu; /* 5 positions from there pass 2^32 */
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_OUT_OF_RANGE);
    d = ok, d.struct_size = 0;
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &d, &o.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_rope(st, &x.t, NULL, &o.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &ok, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_rope(st, &xi.t, &ok, &oi.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &ok, &oi.t), WGC_ERROR_DTYPE_MISMATCH);
    d = ok, d.seq_axis = 0;
    EXPECT_STATUS(wgc_op_rope(st, &x1.t, &d, &x1.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_rope(st, &x.t, &ok, &ob.t), WGC_ERROR_SHAPE_MISMATCH);
    d = ok, d.seq_axis = 0; /* 520 rotated dims: more than 512 */
    EXPECT_STATUS(wgc_op_rope(st, &xb.t, &d, &ob.t), WGC_ERROR_INVALID_ARGUMENT);
    /* Overlapping but not the same view, and sharing a buffer. */
    WgcTensor shifted = o.t;
    shifted.offset = 1;
    shifted.shape[0] = 1;
    WgcTensor ohalf = o.t;
    ohalf.shape[0] = 1;
    EXPECT_STATUS(wgc_op_rope(st, &ohalf, &ok, &shifted), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor second = ohalf;
    second.offset = 40;
    EXPECT_STATUS(wgc_op_rope(st, &ohalf, &ok, &second), WGC_ERROR_INVALID_ARGUMENT);
    read_arr(&o);
    int untouched = 1;
    for (size_t i = 0; i < o.n; i++) untouched &= o.val[i] == 42;
    EXPECT(untouched);
    free_arr(&x), free_arr(&xi), free_arr(&x1), free_arr(&xb), free_arr(&ob), free_arr(&o), free_arr(&oi);
}

int main(void) {
    env = test_env();
    int64_t bshd[4] = {2, 7, 3, 10}, bhsd[4] = {2, 3, 9, 64}, sd[2] = {33, 128};
    for (int di = 0; di < 2; di++) {
        WgcDtype dt = di ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        if (dt == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        for (uint32_t layout = 0; layout < 2; layout++) {
            check(dt, 4, bshd, desc_of(layout, 1, 0, 10000, 0), CONTIG, CONTIG, 0);
            check(dt, 4, bshd, desc_of(layout, -3, 6, 10000, 17), TRANSPOSED, REVERSED, 0);
            check(dt, 4, bhsd, desc_of(layout, -2, 0, 500000, 123456), OFFSET3, CONTIG, 0);
            check(dt, 4, bhsd, desc_of(layout, 2, 32, 10000, 0), CONTIG, TRANSPOSED, 0);
            check(dt, 2, sd, desc_of(layout, 0, 0, 10000, 0xFFFFFFFFu - 33), CONTIG, OFFSET4, 0);
            check(dt, 2, sd, desc_of(layout, 0, 64, 10000, 4096), REVERSED, CONTIG, 1);
            check(dt, 4, bshd, desc_of(layout, 1, 0, 10000, 5), CONTIG, CONTIG, 1);
            check(dt, 4, bshd, desc_of(layout, 0, 4, 1.5f, 1000000), TRANSPOSED, CONTIG, 0);
            check_nan(dt, 4, bshd, desc_of(layout, 1, 0, 10000, 0), CONTIG, CONTIG, 0, 2 * 10 + 3);
            /* half-split quads (4 pairs an invocation): in place, partial
             * rotation in place, NaN */
            check(dt, 4, bhsd, desc_of(layout, 2, 0, 10000, 77), CONTIG, CONTIG, 1);
            check(dt, 4, bhsd, desc_of(layout, 2, 32, 10000, 3), CONTIG, CONTIG, 1);
            check_nan(dt, 4, bhsd, desc_of(layout, 2, 0, 10000, 0), CONTIG, CONTIG, 0, 5 * 64 + 7);
        }
    }
    check_bad_input();
    test_env_release(&env);
    return test_finish("test_rope");
}
