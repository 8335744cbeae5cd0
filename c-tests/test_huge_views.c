/* Views far larger than their buffers, and small views of buffers larger
 * than one binding:
 *  - a shape whose element count overflows 64 bits is OUT_OF_RANGE for every
 *    operator (it used to count as empty: OK, and a sum wrote 0);
 *  - broadcast (zero-stride) dims past 2^31 are TOO_LARGE where a kernel
 *    cannot count them (matmul K, conv2d channels and kernel size, pooling
 *    windows and planes used to give wrong values or a shader error), and
 *    computed where they fit;
 *  - operators on a few elements of a buffer past the adapter's storage
 *    binding limit bind only that part, and fills of such buffers work. */
#include "test_util.h"

static const float MARK = -777.0f;

static WgcTensor view(WgcBuffer *b, uint32_t rank, const int64_t *shape, const int64_t *strides, int64_t offset) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = WGC_DTYPE_F32;
    t.rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        t.shape[i] = shape[i];
        t.strides[i] = strides[i];
    }
    t.offset = offset;
    return t;
}

static WgcBuffer *filled(WgcDevice *dev, size_t n, float v) {
    float *x = (float *)malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = v;
    WgcBuffer *b = upload(dev, x, n * sizeof(float));
    free(x);
    return b;
}

/* Nothing was written: every element still holds MARK. */
static void expect_untouched(WgcBuffer *b, size_t n, const char *what) {
    float got[16];
    CHECK(wgc_buffer_read(b, 0, got, n * sizeof(float)));
    for (size_t i = 0; i < n; i++)
        if (got[i] != MARK) {
            fprintf(stderr, "%s: element %zu changed to %g\n", what, i, got[i]);
            g_failures++;
            return;
        }
}

/* Shape {2^32, 2^32}: 2^64 elements. */
static void test_overflowing_counts(TestEnv *e) {
    WgcBuffer *in = filled(e->device, 16, 1.0f), *out = filled(e->device, 16, MARK);
    int64_t big[2] = {(int64_t)1 << 32, (int64_t)1 << 32};
    /* wgc_tensor_contiguous refuses the shape (test_errors); the view is built by hand. */
    int64_t row_major[2] = {(int64_t)1 << 32, 1};
    WgcTensor huge = view(out, 2, big, row_major, 0);
    int64_t zeros[2] = {0, 0};
    WgcTensor broadcast = view(in, 2, big, zeros, 0), huge_in = huge;
    huge_in.buffer = in;
    int64_t one = 1;
    WgcTensor scalar_out = view(out, 0, &one, &one, 0);
    uint32_t perm[2] = {1, 0};

    WgcTensor outs[2] = {huge, view(out, 2, big, zeros, 0)};
    for (int k = 0; k < 2; k++) {
        WgcTensor *o = &outs[k];
        EXPECT_STATUS(wgc_op_fill(e->stream, o, 2.0), WGC_ERROR_OUT_OF_RANGE);
        EXPECT_STATUS(wgc_op_unary(e->stream, WGC_UNARY_OP_NEG, &broadcast, o), WGC_ERROR_OUT_OF_RANGE);
        EXPECT_STATUS(wgc_op_copy(e->stream, &huge_in, o), WGC_ERROR_OUT_OF_RANGE);
        EXPECT_STATUS(wgc_op_cast(e->stream, &broadcast, o), WGC_ERROR_OUT_OF_RANGE);
        EXPECT_STATUS(wgc_op_binary(e->stream, WGC_BINARY_OP_ADD, &broadcast, &huge_in, o), WGC_ERROR_OUT_OF_RANGE);
        EXPECT_STATUS(wgc_op_permute(e->stream, &broadcast, perm, 2, o), WGC_ERROR_OUT_OF_RANGE);
        EXPECT_STATUS(wgc_op_random_uniform(e->stream, o, 1, 0, 0.0, 1.0), WGC_ERROR_OUT_OF_RANGE);
        EXPECT_STATUS(wgc_op_rms_norm(e->stream, &broadcast, NULL, 1, 1e-5f, o), WGC_ERROR_OUT_OF_RANGE);
    }
    EXPECT_STATUS(wgc_op_reduce(e->stream, WGC_REDUCE_OP_SUM, &broadcast, NULL, 0, 0, &scalar_out),
                  WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_op_reduce(e->stream, WGC_REDUCE_OP_SUM, &huge_in, NULL, 0, 0, &scalar_out),
                  WGC_ERROR_OUT_OF_RANGE);
    expect_untouched(out, 16, "overflowing views");
    wgc_buffer_release(in);
    wgc_buffer_release(out);
}

/* Zero-stride dims past 2^31 over one element. */
static void test_broadcast_past_32_bits(TestEnv *e) {
    const int64_t K = ((int64_t)1 << 32) + 16, zeros[4] = {0, 0, 0, 0};
    WgcBuffer *ones = filled(e->device, 4, 1.0f), *out = filled(e->device, 4, MARK);
    int64_t one[4] = {1, 1, 1, 1};

    /* matmul: (1, K) x (K, 1) used to return 16. */
    int64_t a_shape[2] = {1, K}, b_shape[2] = {K, 1};
    WgcTensor a = view(ones, 2, a_shape, zeros, 0), b = view(ones, 2, b_shape, zeros, 0), c = view(out, 2, one, one, 0);
    EXPECT_STATUS(wgc_op_matmul(e->stream, &a, &b, &c), WGC_ERROR_TOO_LARGE);
    EXPECT_STATUS(wgc_op_gemm(e->stream, 1.0f, &a, 0, &b, 0, 0.0f, &c), WGC_ERROR_TOO_LARGE);

    /* conv2d with K + 1 broadcast input channels used to return 1; an absurd
     * broadcast kernel height failed inside an internal shader. */
    int64_t in_shape[4] = {1, K + 1, 1, 1}, w_shape[4] = {1, K + 1, 1, 1};
    WgcTensor in = view(ones, 4, in_shape, zeros, 0), w = view(ones, 4, w_shape, zeros, 0);
    WgcTensor o4 = view(out, 4, one, one, 0);
    WgcConv2dParams cp;
    memset(&cp, 0, sizeof cp);
    cp.struct_size = sizeof cp;
    EXPECT_STATUS(wgc_op_conv2d(e->stream, &cp, &in, &w, NULL, &o4), WGC_ERROR_TOO_LARGE);
    int64_t tall_in[4] = {1, 1, (int64_t)1 << 40, 1}, tall_w[4] = {1, 1, (int64_t)1 << 40, 1};
    in = view(ones, 4, tall_in, zeros, 0);
    w = view(ones, 4, tall_w, zeros, 0);
    EXPECT_STATUS(wgc_op_conv2d(e->stream, &cp, &in, &w, NULL, &o4), WGC_ERROR_TOO_LARGE);
    cp.stride_h = 0xffffffffu; /* a stride that does not fit the kernel's i32 */
    int64_t tall2[4] = {1, 1, ((int64_t)1 << 32) + 5, 1};
    in = view(ones, 4, tall2, zeros, 0);
    w = view(ones, 4, one, one, 0);
    int64_t o_shape2[4] = {1, 1, 2, 1}, o_strides2[4] = {2, 2, 1, 1};
    WgcTensor o2 = view(out, 4, o_shape2, o_strides2, 0);
    EXPECT_STATUS(wgc_op_conv2d(e->stream, &cp, &in, &w, NULL, &o2), WGC_ERROR_TOO_LARGE);

    /* Global average pool over 2^33 elements used to give NaN. */
    int64_t plane[4] = {1, 1, (int64_t)1 << 17, (int64_t)1 << 16};
    in = view(ones, 4, plane, zeros, 0);
    EXPECT_STATUS(wgc_op_global_avg_pool2d(e->stream, &in, &o4), WGC_ERROR_TOO_LARGE);
    /* A window past 2^31 rows. */
    int64_t rows[4] = {1, 1, ((int64_t)1 << 31) + 8, 1};
    in = view(ones, 4, rows, zeros, 0);
    WgcPool2dParams pp;
    memset(&pp, 0, sizeof pp);
    pp.struct_size = sizeof pp;
    pp.kernel_h = (1u << 31) + 4;
    pp.kernel_w = 1;
    EXPECT_STATUS(wgc_op_avg_pool2d(e->stream, &pp, &in, &o4), WGC_ERROR_TOO_LARGE);
    EXPECT_STATUS(wgc_op_max_pool2d(e->stream, &pp, &in, &o4), WGC_ERROR_TOO_LARGE);
    expect_untouched(out, 4, "refused broadcasts");

    /* Broadcasts that fit are computed. */
    float got[4];
    a_shape[1] = b_shape[0] = 3000;
    a = view(ones, 2, a_shape, zeros, 0);
    b = view(ones, 2, b_shape, zeros, 0);
    CHECK(wgc_op_matmul(e->stream, &a, &b, &c));
    CHECK(wgc_buffer_read(out, 0, got, 4));
    EXPECT(got[0] == 3000.0f);
    int64_t chans[4] = {1, 5000, 1, 1};
    in = view(ones, 4, chans, zeros, 0);
    w = view(ones, 4, chans, zeros, 0);
    cp.stride_h = 0;
    CHECK(wgc_op_conv2d(e->stream, &cp, &in, &w, NULL, &o4));
    CHECK(wgc_buffer_read(out, 0, got, 4));
    EXPECT(got[0] == 5000.0f);
    int64_t square[4] = {1, 1, 1000, 1000};
    in = view(ones, 4, square, zeros, 0);
    CHECK(wgc_op_global_avg_pool2d(e->stream, &in, &o4));
    CHECK(wgc_buffer_read(out, 0, got, 4));
    EXPECT(fabsf(got[0] - 1.0f) < 1e-6f);
    wgc_buffer_release(ones);
    wgc_buffer_release(out);
}

/* A buffer one page past the storage binding limit, read at a few places. */
static void test_views_of_a_buffer_past_the_binding_limit(TestEnv *e) {
    uint64_t limit = e->info.limits.max_storage_buffer_binding_size;
    uint64_t size = limit + 4096;
    if (size > e->info.limits.max_buffer_size || size > ((uint64_t)1 << 31)) {
        printf("skipping: a buffer past the %llu-byte binding limit is too large here\n", (unsigned long long)limit);
        return;
    }
    WgcBuffer *big = NULL, *small = filled(e->device, 8, MARK);
    CHECK(wgc_buffer_create(e->device, size, WGC_BUFFER_USAGE_STORAGE, &big));
    const int64_t n_elems = (int64_t)(size / 4);
    /* Three 4-element views, one past the limit, none 256-byte aligned. */
    const int64_t at[3] = {n_elems - 4, n_elems - 1000 - 3, 123};
    int64_t four = 4, unit = 1;
    WgcTensor v[3];
    for (int i = 0; i < 3; i++) v[i] = view(big, 1, &four, &unit, at[i]);

    /* Fill every byte (several launches), then views. */
    EXPECT_STATUS(wgc_stream_fill_buffer(e->stream, big, 0, size, 0x3f800000u), WGC_OK); /* 1.0f */
    float got[4];
    uint64_t probes[3] = {0, size / 2, size - 16};
    for (int i = 0; i < 3; i++) {
        CHECK(wgc_buffer_read(big, probes[i], got, sizeof got));
        EXPECT(got[0] == 1.0f && got[3] == 1.0f);
    }
    EXPECT_STATUS(wgc_op_fill(e->stream, &v[0], 2.5), WGC_OK);
    EXPECT_STATUS(wgc_op_arange(e->stream, &v[1], 10.0, 1.0), WGC_OK);
    EXPECT_STATUS(wgc_op_binary(e->stream, WGC_BINARY_OP_ADD, &v[0], &v[1], &v[2]), WGC_OK);
    CHECK(wgc_buffer_read(big, (uint64_t)at[2] * 4, got, sizeof got));
    for (int i = 0; i < 4; i++) EXPECT(got[i] == 12.5f + (float)i);
    CHECK(wgc_buffer_read(big, (uint64_t)(at[0] - 1) * 4, got, 4));
    EXPECT(got[0] == 1.0f); /* the element before the view is untouched */

    /* Reduction, softmax and matmul on views far into the buffer. */
    WgcTensor s = view(small, 0, &unit, &unit, 0);
    EXPECT_STATUS(wgc_op_reduce(e->stream, WGC_REDUCE_OP_SUM, &v[1], NULL, 0, 0, &s), WGC_OK);
    CHECK(wgc_buffer_read(small, 0, got, 4));
    EXPECT(got[0] == 46.0f);
    WgcTensor sm = view(small, 1, &four, &unit, 4);
    EXPECT_STATUS(wgc_op_softmax(e->stream, &v[0], 0, &sm), WGC_OK);
    CHECK(wgc_buffer_read(small, 16, got, 16));
    for (int i = 0; i < 4; i++) EXPECT(fabsf(got[i] - 0.25f) < 1e-6f);
    int64_t sq[2] = {2, 2}, sq_strides[2] = {2, 1};
    WgcTensor ma = view(big, 2, sq, sq_strides, at[1]), mc = view(small, 2, sq, sq_strides, 0);
    EXPECT_STATUS(wgc_op_matmul(e->stream, &ma, &ma, &mc), WGC_OK); /* [[10,11],[12,13]]^2 */
    CHECK(wgc_buffer_read(small, 0, got, sizeof got));
    EXPECT(got[0] == 232.0f && got[1] == 253.0f && got[2] == 276.0f && got[3] == 301.0f);
    wgc_buffer_release(big);
    wgc_buffer_release(small);
}

int main(void) {
    TestEnv e = test_env();
    test_overflowing_counts(&e);
    test_broadcast_past_32_bits(&e);
    test_views_of_a_buffer_past_the_binding_limit(&e);
    test_env_release(&e);
    return test_finish("test_huge_views");
}
