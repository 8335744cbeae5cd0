/* Copies between devices and collectives over several devices, opened on
 * the one adapter (the copy and collective logic does not need several
 * GPUs): byte ranges and strided views in both directions, ordering with the
 * streams on both sides, odd sizes, chunked transfers (4 KiB chunks so small
 * copies cross many), N = 1..4 devices, every collective and dtype, misuse. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "test_util.h"

#define MAX_DEV 4

static WgcInstance *g_inst;
static WgcDevice *g_dev[MAX_DEV];
static WgcStream *g_stream[MAX_DEV];
static int g_has_f16;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static WgcBuffer *make_buffer(int d, uint64_t bytes) {
    WgcBuffer *b;
    CHECK(wgc_buffer_create(g_dev[d], bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static size_t dtype_size(WgcDtype t) { return (t == WGC_DTYPE_F16 || t == WGC_DTYPE_BF16) ? 2 : 4; }

/* Store doubles as `t` (values chosen exact in every dtype where it matters). */
static void encode(WgcDtype t, const double *x, size_t n, void *out) {
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case WGC_DTYPE_F32: ((float *)out)[i] = (float)x[i]; break;
        case WGC_DTYPE_F16: ((uint16_t *)out)[i] = f32_to_f16((float)x[i]); break;
        case WGC_DTYPE_BF16: ((uint16_t *)out)[i] = f32_to_bf16((float)x[i]); break;
        case WGC_DTYPE_I32: ((int32_t *)out)[i] = (int32_t)x[i]; break;
        default: ((uint32_t *)out)[i] = (uint32_t)x[i]; break;
        }
    }
}

static void decode(WgcDtype t, const void *in, size_t n, double *x) {
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case WGC_DTYPE_F32: x[i] = ((const float *)in)[i]; break;
        case WGC_DTYPE_F16: x[i] = f16_to_f32(((const uint16_t *)in)[i]); break;
        case WGC_DTYPE_BF16: x[i] = bf16_to_f32(((const uint16_t *)in)[i]); break;
        case WGC_DTYPE_I32: x[i] = ((const int32_t *)in)[i]; break;
        default: x[i] = ((const uint32_t *)in)[i]; break;
        }
    }
}

/* A device buffer holding `x` as dtype `t` (padded to 4 bytes). */
static WgcBuffer *upload_as(int d, WgcDtype t, const double *x, size_t n) {
    size_t bytes = (n * dtype_size(t) + 3) / 4 * 4;
    if (bytes == 0) bytes = 4;
    void *tmp = calloc(1, bytes);
    encode(t, x, n, tmp);
    WgcBuffer *b = make_buffer(d, bytes);
    CHECK(wgc_buffer_write(b, 0, tmp, bytes));
    free(tmp);
    return b;
}

static void read_as(WgcBuffer *b, WgcDtype t, size_t n, double *x) {
    size_t bytes = n * dtype_size(t);
    void *tmp = calloc(1, bytes + 4);
    CHECK(wgc_buffer_read(b, 0, tmp, bytes));
    decode(t, tmp, n, x);
    free(tmp);
}

static WgcTensor flat(WgcBuffer *b, WgcDtype t, int64_t n) { return tensor_of(b, t, 1, &n); }

/* Byte ranges: every ordered pair of two devices, odd word counts, offsets,
 * many chunks; the source written on its stream just before the copy, the
 * destination read by a kernel on its stream just after. */
static void test_buffer_copies(void) {
    const size_t words = 25013; /* about 24 chunks of 4 KiB */
    uint32_t *src = malloc(words * 4), *got = malloc(words * 4);
    for (size_t i = 0; i < words; i++) src[i] = (uint32_t)(rng_next() >> 7);
    for (int a = 0; a < 2; a++) {
        int b = 1 - a;
        WgcBuffer *s = make_buffer(a, words * 4 + 64), *d = make_buffer(b, words * 4 + 64);
        CHECK(wgc_buffer_write(s, 16, src, words * 4));
        CHECK(wgc_buffer_copy_to_device(g_stream[a], s, 16, g_stream[b], d, 8, words * 4));
        CHECK(wgc_buffer_read(d, 8, got, words * 4));
        EXPECT(memcmp(src, got, words * 4) == 0);
        uint32_t head[2];
        CHECK(wgc_buffer_read(d, 0, head, 8));
        EXPECT(head[0] == 0 && head[1] == 0);

        /* Ordering: a fill recorded on the source stream right before the
         * copy is what arrives; a fill of the destination recorded before
         * the copy is overwritten; a kernel recorded after reads the copy. */
        int64_t n = (int64_t)words;
        WgcTensor ts = flat(s, WGC_DTYPE_F32, n), td = flat(d, WGC_DTYPE_F32, n);
        WgcBuffer *o = make_buffer(b, words * 4);
        WgcTensor to = flat(o, WGC_DTYPE_F32, n);
        CHECK(wgc_op_fill(g_stream[a], &ts, 3.5));
        CHECK(wgc_op_fill(g_stream[b], &td, 7.0));
        CHECK(wgc_buffer_copy_to_device(g_stream[a], s, 0, g_stream[b], d, 0, words * 4));
        CHECK(wgc_op_binary_scalar(g_stream[b], WGC_BINARY_OP_ADD, &td, 1.0, &to));
        CHECK(wgc_stream_synchronize(g_stream[b]));
        float *f = (float *)got;
        CHECK(wgc_buffer_read(o, 0, f, words * 4));
        int bad = 0;
        for (size_t i = 0; i < words; i++) bad += f[i] != 4.5f;
        EXPECT(bad == 0);
        /* Tiny: one word; zero bytes do nothing. */
        CHECK(wgc_buffer_copy_to_device(g_stream[a], s, 4, g_stream[b], d, 4, 4));
        CHECK(wgc_buffer_copy_to_device(g_stream[a], s, 0, g_stream[b], d, 0, 0));
        wgc_buffer_release(s);
        wgc_buffer_release(d);
        wgc_buffer_release(o);
    }
    /* Within one device, between two streams and on one stream. */
    WgcStream *other;
    CHECK(wgc_stream_create(g_dev[0], &other));
    WgcBuffer *s = make_buffer(0, 4096), *d = make_buffer(0, 4096);
    CHECK(wgc_buffer_write(s, 0, src, 4096));
    CHECK(wgc_buffer_copy_to_device(g_stream[0], s, 0, other, d, 0, 4096));
    CHECK(wgc_buffer_read(d, 0, got, 4096));
    EXPECT(memcmp(src, got, 4096) == 0);
    CHECK(wgc_buffer_copy_to_device(g_stream[0], s, 0, g_stream[0], s, 2048, 2048));
    CHECK(wgc_buffer_read(s, 2048, got, 2048));
    EXPECT(memcmp(src, got, 2048) == 0);
    wgc_buffer_release(s);
    wgc_buffer_release(d);
    wgc_stream_release(other);
    free(src);
    free(got);
}

/* Strided and offset views in both directions, every dtype, odd sizes. */
static void test_view_copies(void) {
    WgcDtype dtypes[] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_BF16, WGC_DTYPE_I32};
    for (int di = 0; di < 4; di++) {
        WgcDtype t = dtypes[di];
        if (t == WGC_DTYPE_F16 && !g_has_f16) continue;
        for (int a = 0; a < 2; a++) {
            int b = 1 - a;
            const int64_t rows = 37, cols = 23; /* odd, not tile multiples */
            size_t n = (size_t)(rows * cols);
            double *x = malloc(n * 8), *y = malloc(n * 8 + 8);
            for (size_t i = 0; i < n; i++) x[i] = (double)((int)(rng_next() % 512) - 256);
            WgcBuffer *s = upload_as(a, t, x, n), *d = make_buffer(b, (n + 3) * 4);
            /* src: the transpose (strided) of the rows x cols array;
             * dst: contiguous cols x rows at element offset 3. */
            WgcTensor st = flat(s, t, 1);
            st.rank = 2;
            st.shape[0] = cols, st.shape[1] = rows;
            st.strides[0] = 1, st.strides[1] = cols;
            int64_t shape[2] = {cols, rows};
            WgcTensor dt = tensor_of(d, t, 2, shape);
            dt.offset = 3;
            CHECK(wgc_tensor_copy_to_device(g_stream[a], &st, g_stream[b], &dt));
            double *full = malloc((n + 3) * 8);
            read_as(d, t, n + 3, full);
            int bad = 0;
            for (int64_t i = 0; i < cols; i++)
                for (int64_t j = 0; j < rows; j++) bad += full[3 + i * rows + j] != x[j * cols + i];
            EXPECT(bad == 0);
            /* Back again into a reversed view on the source device. */
            WgcBuffer *back = make_buffer(a, n * 4 + 4);
            WgcTensor rev = flat(back, t, (int64_t)n);
            rev.offset = (int64_t)n - 1;
            rev.strides[0] = -1;
            WgcTensor flat_d = flat(d, t, (int64_t)n);
            flat_d.offset = 3;
            CHECK(wgc_tensor_copy_to_device(g_stream[b], &flat_d, g_stream[a], &rev));
            CHECK(wgc_stream_synchronize(g_stream[a]));
            read_as(back, t, n, y);
            bad = 0;
            for (size_t k = 0; k < n; k++) bad += y[n - 1 - k] != full[3 + k];
            EXPECT(bad == 0);
            free(x), free(y), free(full);
            wgc_buffer_release(s), wgc_buffer_release(d), wgc_buffer_release(back);
        }
    }
}

static double reduce2(double a, double b, uint32_t op) { return op == WGC_COLLECTIVE_OP_SUM ? a + b : (a > b ? a : b); }

/* All four collectives on the first `n` devices. */
static void test_collectives(int n) {
    WgcComm *comm;
    CHECK(wgc_comm_create((const WgcDevice *const *)g_dev, (uint32_t)n, &comm));
    /* A second reference, dropped again: the communicator stays usable. */
    wgc_comm_retain(comm);
    wgc_comm_release(comm);
    wgc_comm_retain(NULL);
    wgc_comm_release(NULL);
    uint32_t size = 0;
    CHECK(wgc_comm_size(comm, &size));
    EXPECT(size == (uint32_t)n);
    const WgcStream *streams[MAX_DEV];
    for (int i = 0; i < n; i++) streams[i] = g_stream[i];
    WgcDtype dtypes[] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_BF16};
    size_t lens[] = {1, 7, 1027};
    for (int di = 0; di < 3; di++) {
        WgcDtype t = dtypes[di];
        if (t == WGC_DTYPE_F16 && !g_has_f16) continue;
        /* Every dtype on 1 and 2 devices; beyond, f32 and bf16 (each dtype
         * compiles its kernels once per device, most of this test's time). */
        if (n > 2 && t == WGC_DTYPE_F16) continue;
        for (int li = 0; li < 3; li++) {
            size_t len = lens[li];
            double *x[MAX_DEV], *ref = malloc(n * len * 8), *got = malloc(n * len * 8);
            for (int i = 0; i < n; i++) {
                x[i] = malloc(n * len * 8);
                /* Small integers: sums exact in f16 and bf16 too. */
                for (size_t k = 0; k < n * len; k++) x[i][k] = (double)((int)(rng_next() % 17) - 8);
            }
            for (uint32_t op = 0; op < 2; op++) {
                /* all-reduce */
                WgcBuffer *b[MAX_DEV];
                WgcTensor ts[MAX_DEV];
                for (int i = 0; i < n; i++) b[i] = upload_as(i, t, x[i], len), ts[i] = flat(b[i], t, (int64_t)len);
                CHECK(wgc_comm_all_reduce(comm, streams, ts, op));
                for (size_t k = 0; k < len; k++) {
                    ref[k] = x[0][k];
                    for (int i = 1; i < n; i++) ref[k] = reduce2(ref[k], x[i][k], op);
                }
                for (int i = 0; i < n; i++) {
                    read_as(b[i], t, len, got);
                    int bad = 0;
                    for (size_t k = 0; k < len; k++) bad += got[k] != ref[k];
                    if (bad) fprintf(stderr, "all_reduce n=%d dtype=%d len=%zu op=%u rank %d: %d wrong\n", n, t, len, op, i, bad);
                    EXPECT(bad == 0);
                    wgc_buffer_release(b[i]);
                }
                /* reduce-scatter: inputs of n * len, outputs of len */
                WgcBuffer *in[MAX_DEV], *out[MAX_DEV];
                WgcTensor ti[MAX_DEV], to[MAX_DEV];
                for (int i = 0; i < n; i++) {
                    in[i] = upload_as(i, t, x[i], n * len), ti[i] = flat(in[i], t, (int64_t)(n * len));
                    out[i] = make_buffer(i, len * 4), to[i] = flat(out[i], t, (int64_t)len);
                }
                CHECK(wgc_comm_reduce_scatter(comm, streams, ti, to, op));
                for (int i = 0; i < n; i++) {
                    read_as(out[i], t, len, got);
                    int bad = 0;
                    for (size_t k = 0; k < len; k++) {
                        double r = x[0][i * len + k];
                        for (int j = 1; j < n; j++) r = reduce2(r, x[j][i * len + k], op);
                        bad += got[k] != r;
                    }
                    if (bad) fprintf(stderr, "reduce_scatter n=%d dtype=%d len=%zu rank %d: %d wrong\n", n, t, len, i, bad);
                    EXPECT(bad == 0);
                    wgc_buffer_release(in[i]), wgc_buffer_release(out[i]);
                }
            }
            /* all-gather: inputs of len, outputs of n * len */
            WgcBuffer *in[MAX_DEV], *out[MAX_DEV];
            WgcTensor ti[MAX_DEV], to[MAX_DEV];
            for (int i = 0; i < n; i++) {
                in[i] = upload_as(i, t, x[i], len), ti[i] = flat(in[i], t, (int64_t)len);
                out[i] = make_buffer(i, n * len * 4), to[i] = flat(out[i], t, (int64_t)(n * len));
            }
            CHECK(wgc_comm_all_gather(comm, streams, ti, to));
            for (int i = 0; i < n; i++) {
                read_as(out[i], t, n * len, got);
                int bad = 0;
                for (int j = 0; j < n; j++)
                    for (size_t k = 0; k < len; k++) bad += got[j * len + k] != x[j][k];
                if (bad) fprintf(stderr, "all_gather n=%d dtype=%d len=%zu rank %d: %d wrong\n", n, t, len, i, bad);
                EXPECT(bad == 0);
            }
            /* broadcast from the last rank into the inputs */
            CHECK(wgc_comm_broadcast(comm, streams, ti, (uint32_t)(n - 1)));
            for (int i = 0; i < n; i++) {
                read_as(in[i], t, len, got);
                int bad = 0;
                for (size_t k = 0; k < len; k++) bad += got[k] != x[n - 1][k];
                EXPECT(bad == 0);
                wgc_buffer_release(in[i]), wgc_buffer_release(out[i]);
            }
            for (int i = 0; i < n; i++) free(x[i]);
            free(ref), free(got);
        }
    }
    /* f32 all-reduce of random values against a double reference. */
    {
        size_t len = 5001;
        double *x[MAX_DEV], *got = malloc(len * 8);
        WgcBuffer *b[MAX_DEV];
        WgcTensor ts[MAX_DEV];
        for (int i = 0; i < n; i++) {
            x[i] = malloc(len * 8);
            for (size_t k = 0; k < len; k++) x[i][k] = rng_uniform(-1, 1);
            b[i] = upload_as(i, WGC_DTYPE_F32, x[i], len), ts[i] = flat(b[i], WGC_DTYPE_F32, (int64_t)len);
        }
        CHECK(wgc_comm_all_reduce(comm, streams, ts, WGC_COLLECTIVE_OP_SUM));
        double *ref = malloc(len * 8);
        for (size_t k = 0; k < len; k++) {
            ref[k] = 0;
            for (int i = 0; i < n; i++) ref[k] += (double)(float)x[i][k];
        }
        double *first = malloc(len * 8);
        for (int i = 0; i < n; i++) {
            read_as(b[i], WGC_DTYPE_F32, len, got);
            if (i == 0) memcpy(first, got, len * 8);
            EXPECT(compare_f64("all_reduce f32", got, ref, len, 1e-6, 1e-6) == 0);
            EXPECT(memcmp(first, got, len * 8) == 0); /* every rank the same bits */
            wgc_buffer_release(b[i]);
            free(x[i]);
        }
        free(got), free(ref), free(first);
    }
    wgc_comm_release(comm);
}

static void test_misuse(void) {
    WgcComm *comm = NULL;
    const WgcDevice *twice[2] = {g_dev[0], g_dev[0]};
    EXPECT_STATUS(wgc_comm_create(twice, 2, &comm), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_comm_create((const WgcDevice *const *)g_dev, 0, &comm), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_comm_create(NULL, 2, &comm), WGC_ERROR_NULL_POINTER);
    const WgcDevice *with_null[2] = {g_dev[0], NULL};
    EXPECT_STATUS(wgc_comm_create(with_null, 2, &comm), WGC_ERROR_NULL_POINTER);
    EXPECT(comm == NULL);
    CHECK(wgc_comm_create((const WgcDevice *const *)g_dev, 2, &comm));
    EXPECT_STATUS(wgc_comm_size(NULL, NULL), WGC_ERROR_NULL_POINTER);

    WgcBuffer *a = make_buffer(0, 64), *b = make_buffer(1, 64), *c = make_buffer(1, 64);
    /* Buffer copies. */
    EXPECT_STATUS(wgc_buffer_copy_to_device(NULL, a, 0, g_stream[1], b, 0, 4), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[1], NULL, 0, 4), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[0], b, 0, 4), WGC_ERROR_DEVICE_MISMATCH);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[1], a, 0, g_stream[1], b, 0, 4), WGC_ERROR_DEVICE_MISMATCH);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[1], b, 0, 6), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 2, g_stream[1], b, 0, 4), WGC_ERROR_ALIGNMENT);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[1], b, 4, 64), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, UINT64_MAX, g_stream[1], b, 0, 4), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[0], a, 8, 16), WGC_ERROR_INVALID_ARGUMENT);
    /* Tensor copies. */
    WgcTensor ta = flat(a, WGC_DTYPE_F32, 16), tb = flat(b, WGC_DTYPE_F32, 16);
    WgcTensor tb_i32 = flat(b, WGC_DTYPE_I32, 16), tb_short = flat(b, WGC_DTYPE_F32, 15);
    EXPECT_STATUS(wgc_tensor_copy_to_device(g_stream[0], &ta, g_stream[1], &tb_i32), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_tensor_copy_to_device(g_stream[0], &ta, g_stream[1], &tb_short), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_tensor_copy_to_device(g_stream[0], NULL, g_stream[1], &tb), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_tensor_copy_to_device(g_stream[1], &ta, g_stream[1], &tb), WGC_ERROR_DEVICE_MISMATCH);
    WgcTensor zero_stride = tb;
    zero_stride.strides[0] = 0;
    EXPECT_STATUS(wgc_tensor_copy_to_device(g_stream[0], &ta, g_stream[1], &zero_stride), WGC_ERROR_INVALID_ARGUMENT);
    /* Collectives. */
    const WgcStream *ok[2] = {g_stream[0], g_stream[1]}, *swapped[2] = {g_stream[1], g_stream[0]};
    const WgcStream *null_stream[2] = {g_stream[0], NULL};
    WgcTensor pair[2] = {ta, tb}, wrong_dev[2] = {tb, ta}, wrong_dtype[2] = {ta, tb_i32}, wrong_shape[2] = {ta, tb_short};
    EXPECT_STATUS(wgc_comm_all_reduce(comm, ok, pair, 7), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_comm_all_reduce(NULL, ok, pair, 0), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_comm_all_reduce(comm, NULL, pair, 0), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_comm_all_reduce(comm, null_stream, pair, 0), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_comm_all_reduce(comm, ok, NULL, 0), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_comm_all_reduce(comm, swapped, pair, 0), WGC_ERROR_DEVICE_MISMATCH);
    EXPECT_STATUS(wgc_comm_all_reduce(comm, ok, wrong_dev, 0), WGC_ERROR_DEVICE_MISMATCH);
    EXPECT_STATUS(wgc_comm_all_reduce(comm, ok, wrong_dtype, 0), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_comm_all_reduce(comm, ok, wrong_shape, 0), WGC_ERROR_SHAPE_MISMATCH);
    WgcTensor strided[2] = {ta, tb};
    strided[0].shape[0] = 8, strided[0].strides[0] = 2;
    strided[1].shape[0] = 8, strided[1].strides[0] = 2;
    EXPECT_STATUS(wgc_comm_all_reduce(comm, ok, strided, 0), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_comm_broadcast(comm, ok, pair, 2), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor outs[2] = {flat(a, WGC_DTYPE_F32, 16), flat(c, WGC_DTYPE_F32, 16)};
    EXPECT_STATUS(wgc_comm_all_gather(comm, ok, pair, outs), WGC_ERROR_SHAPE_MISMATCH);
    WgcTensor small_in[2] = {flat(a, WGC_DTYPE_F32, 8), flat(b, WGC_DTYPE_F32, 8)};
    EXPECT_STATUS(wgc_comm_all_gather(comm, ok, small_in, outs), WGC_ERROR_INVALID_ARGUMENT); /* out 0 overlaps in 0 */
    EXPECT_STATUS(wgc_comm_reduce_scatter(comm, ok, pair, pair, 0), WGC_ERROR_SHAPE_MISMATCH);

    /* A destroyed device: a clear status, before and in collectives. */
    WgcDevice *gone;
    WgcStream *gone_stream;
    WgcBuffer *gone_buf;
    CHECK(wgc_device_create(g_inst, NULL, &gone));
    CHECK(wgc_stream_create(gone, &gone_stream));
    CHECK(wgc_buffer_create(gone, 64, WGC_BUFFER_USAGE_STORAGE, &gone_buf));
    const WgcDevice *with_gone[2] = {g_dev[0], gone};
    WgcComm *comm_gone;
    CHECK(wgc_comm_create(with_gone, 2, &comm_gone));
    CHECK(wgc_device_destroy(gone));
    EXPECT_STATUS(wgc_buffer_copy_to_device(g_stream[0], a, 0, gone_stream, gone_buf, 0, 16), WGC_ERROR_DEVICE_LOST);
    EXPECT_STATUS(wgc_buffer_copy_to_device(gone_stream, gone_buf, 0, g_stream[0], a, 0, 16), WGC_ERROR_DEVICE_LOST);
    const WgcStream *gone_streams[2] = {g_stream[0], gone_stream};
    WgcTensor gone_pair[2] = {ta, flat(gone_buf, WGC_DTYPE_F32, 16)};
    EXPECT_STATUS(wgc_comm_all_reduce(comm_gone, gone_streams, gone_pair, 0), WGC_ERROR_DEVICE_LOST);
    EXPECT_STATUS(wgc_comm_create(with_gone, 2, &comm), WGC_ERROR_DEVICE_LOST);
    wgc_comm_release(comm_gone);
    wgc_buffer_release(gone_buf);
    wgc_stream_release(gone_stream);
    wgc_device_release(gone);
    /* The live devices still work. */
    CHECK(wgc_buffer_copy_to_device(g_stream[0], a, 0, g_stream[1], b, 0, 64));

    wgc_comm_release(NULL);
    wgc_comm_release(comm);
    wgc_buffer_release(a), wgc_buffer_release(b), wgc_buffer_release(c);
}

int main(void) {
    /* Small chunks, so that small copies cross many of them. */
    setenv("WGC_PEER_CHUNK_KIB", "4", 1);
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &g_inst));
    for (int i = 0; i < MAX_DEV; i++) {
        CHECK(wgc_device_create(g_inst, NULL, &g_dev[i]));
        CHECK(wgc_stream_create(g_dev[i], &g_stream[i]));
    }
    WgcAdapterInfo info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK(wgc_device_info(g_dev[0], &info));
    g_has_f16 = info.has_f16 != 0;

    double t0 = now_s();
    test_buffer_copies();
    printf("buffer copies: %.2f s\n", now_s() - t0), t0 = now_s();
    test_view_copies();
    printf("view copies: %.2f s\n", now_s() - t0), t0 = now_s();
    for (int n = 1; n <= MAX_DEV; n++) {
        test_collectives(n);
        printf("collectives over %d device(s): %.2f s\n", n, now_s() - t0), t0 = now_s();
    }
    test_misuse();
    printf("misuse: %.2f s\n", now_s() - t0);

    /* Nothing the GPU layer refused escaped a call's status. */
    for (int i = 0; i < MAX_DEV; i++) CHECK(wgc_device_synchronize(g_dev[i]));
    for (int i = 0; i < MAX_DEV; i++) {
        wgc_stream_release(g_stream[i]);
        wgc_device_release(g_dev[i]);
    }
    wgc_instance_release(g_inst);
    return test_finish("test_multi_device");
}
