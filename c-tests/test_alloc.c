/* Allocation without submissions: wgc_buffer_create_uninit (every operator
 * writes all of an uninitialised output: results into poisoned pool memory
 * equal results into zeroed memory, bit for bit), and the zeros that
 * wgc_buffer_create promises for reused pool memory, whose clear is
 * deferred to the device's next submission: it must land before any later
 * write, operator or copy, and memory must never be handed out while work
 * of its previous owner can still touch it. Misuse of the new call. */
#include "test_util.h"

enum { POISON = 0xFF }; /* NaN in f32/f16/bf16, -1 in i32 */

static WgcDevice *g_dev;
static WgcStream *g_st;

static uint64_t pool_hits(void) {
    WgcMemoryStats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    CHECK(wgc_device_memory_stats(g_dev, &s));
    return s.pool_hits;
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

static size_t words(size_t bytes) { return bytes ? (bytes + 3) & ~(size_t)3 : 4; }

/* Put an allocation of `bytes` full of POISON into the pool, then take it
 * back uninitialised (checked to be the same memory through the pool's hit
 * count). */
static WgcBuffer *poisoned_uninit(size_t bytes) {
    size_t n = words(bytes);
    unsigned char *junk = malloc(n);
    memset(junk, POISON, n);
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(g_dev, n, WGC_BUFFER_USAGE_STORAGE, &b));
    CHECK(wgc_buffer_write(b, 0, junk, n));
    CHECK(wgc_device_synchronize(g_dev));
    CHECK(wgc_device_trim_pool(g_dev, 0)); /* the junk is the only pooled allocation */
    wgc_buffer_release(b);
    free(junk);
    uint64_t before = pool_hits();
    b = NULL;
    CHECK(wgc_buffer_create_uninit(g_dev, n, WGC_BUFFER_USAGE_STORAGE, &b));
    EXPECT(pool_hits() == before + 1);
    return b;
}

static WgcBuffer *zeroed(size_t bytes) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(g_dev, words(bytes), WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static WgcTensor view_of(WgcBuffer *b, WgcDtype dt, uint32_t rank, const int64_t *shape) {
    return tensor_of(b, dt, rank, shape);
}

static size_t elem_size(WgcDtype dt) { return dt == WGC_DTYPE_F16 || dt == WGC_DTYPE_BF16 ? 2 : 4; }

static size_t bytes_of(WgcDtype dt, uint32_t rank, const int64_t *shape) {
    size_t n = elem_size(dt);
    for (uint32_t i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}

typedef WgcStatus (*RunOp)(const WgcTensor *out, void *ctx);

/* Run `op` into a zeroed and into a poisoned uninitialised output: every
 * byte must come out the same. */
static void same_into_uninit(const char *name, WgcDtype dt, uint32_t rank, const int64_t *shape, RunOp op, void *ctx) {
    size_t bytes = bytes_of(dt, rank, shape);
    WgcBuffer *z = zeroed(bytes), *u = poisoned_uninit(bytes);
    WgcTensor tz = view_of(z, dt, rank, shape), tu = view_of(u, dt, rank, shape);
    CHECK(op(&tz, ctx));
    CHECK(op(&tu, ctx));
    unsigned char *a = malloc(words(bytes)), *b = malloc(words(bytes));
    CHECK(wgc_buffer_read(z, 0, a, bytes));
    CHECK(wgc_buffer_read(u, 0, b, bytes));
    if (memcmp(a, b, bytes) != 0) {
        size_t i = 0;
        while (a[i] == b[i]) i++;
        fprintf(stderr, "%s: an uninitialised output differs from a zeroed one at byte %zu of %zu (%02x vs %02x)\n",
                name, i, bytes, b[i], a[i]);
        g_failures++;
    }
    free(a);
    free(b);
    wgc_buffer_release(z);
    wgc_buffer_release(u);
}

/* ---- the operators, with inputs shared through a context ---- */
typedef struct {
    WgcTensor x, y, x4, w4, bias, mask, idx, idx2, tall, w_gemm, xi;
} In;

#define OP1(fn_name, call)                                                          \
    static WgcStatus fn_name(const WgcTensor *out, void *p) {                       \
        In *in = p;                                                                 \
        (void)in;                                                                   \
        return call;                                                                \
    }

static const int32_t AX1[1] = {1}, AX0[1] = {0};
OP1(op_add, wgc_op_binary(g_st, WGC_BINARY_OP_ADD, &in->x, &in->y, out))
OP1(op_scalar, wgc_op_binary_scalar(g_st, WGC_BINARY_OP_MUL, &in->x, 3.0, out))
OP1(op_cmp, wgc_op_binary(g_st, WGC_BINARY_OP_LT, &in->x, &in->y, out))
OP1(op_exp, wgc_op_unary(g_st, WGC_UNARY_OP_EXP, &in->x, out))
OP1(op_clamp, wgc_op_clamp(g_st, &in->x, -0.5, 0.5, out))
OP1(op_leaky, wgc_op_leaky_relu(g_st, &in->x, 0.1f, out))
OP1(op_fma, wgc_op_fma(g_st, &in->x, &in->y, &in->x, out))
OP1(op_where, wgc_op_where(g_st, &in->mask, &in->x, &in->y, out))
OP1(op_sum_rows, wgc_op_reduce(g_st, WGC_REDUCE_OP_SUM, &in->x, AX1, 1, 0, out))
OP1(op_max_cols, wgc_op_reduce(g_st, WGC_REDUCE_OP_MAX, &in->x, AX0, 1, 0, out))
OP1(op_mean_all, wgc_op_reduce(g_st, WGC_REDUCE_OP_MEAN, &in->tall, NULL, 0, 0, out))
OP1(op_argmax, wgc_op_reduce(g_st, WGC_REDUCE_OP_ARGMAX, &in->x, AX1, 1, 0, out))
OP1(op_var, wgc_op_var(g_st, &in->x, AX1, 1, 0, 1, out))
OP1(op_softmax, wgc_op_softmax(g_st, &in->x, -1, out))
OP1(op_log_softmax, wgc_op_log_softmax(g_st, &in->x, -1, out))
OP1(op_layer_norm, wgc_op_layer_norm(g_st, &in->x, NULL, NULL, 1, 1e-5f, out))
OP1(op_rms_norm, wgc_op_rms_norm(g_st, &in->x, NULL, 1, 1e-6f, out))
OP1(op_matmul, wgc_op_matmul(g_st, &in->x, &in->w_gemm, out))
OP1(op_gemm, wgc_op_gemm(g_st, 1.5f, &in->x, 0, &in->w_gemm, 0, 0.0f, out))
OP1(op_copy_t, wgc_op_transpose(g_st, &in->x, 0, 1, out))
OP1(op_cast, wgc_op_cast(g_st, &in->x, out))
OP1(op_fill, wgc_op_fill(g_st, out, 2.5))
OP1(op_arange, wgc_op_arange(g_st, out, 1.0, 0.5))
OP1(op_random, wgc_op_random_uniform(g_st, out, 7, 0, -1.0, 1.0))
OP1(op_index_select, wgc_op_index_select(g_st, &in->x, 0, &in->idx, out))
OP1(op_gather, wgc_op_gather(g_st, &in->x, 1, &in->idx2, out))
OP1(op_embedding, wgc_op_embedding(g_st, &in->x, &in->idx, out))
OP1(op_cumsum, wgc_op_cumsum(g_st, &in->x, 1, out))
OP1(op_global_pool, wgc_op_global_avg_pool2d(g_st, &in->x4, out))

static WgcStatus op_concat(const WgcTensor *out, void *p) {
    In *in = p;
    WgcTensor parts[2] = {in->x, in->y};
    return wgc_op_concat(g_st, parts, 2, 0, out);
}

static WgcStatus op_conv(const WgcTensor *out, void *p) {
    In *in = p;
    WgcConv2dParams c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.stride_h = c.stride_w = 1;
    c.pad_h = c.pad_w = 1;
    c.dilation_h = c.dilation_w = 1;
    c.groups = 1;
    return wgc_op_conv2d(g_st, &c, &in->x4, &in->w4, &in->bias, out);
}

static WgcStatus pool(const WgcTensor *out, void *p, int avg) {
    In *in = p;
    WgcPool2dParams c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.kernel_h = c.kernel_w = 3;
    c.stride_h = c.stride_w = 2;
    c.pad_h = c.pad_w = 1;
    c.count_include_pad = 1;
    return avg ? wgc_op_avg_pool2d(g_st, &c, &in->x4, out) : wgc_op_max_pool2d(g_st, &c, &in->x4, out);
}
static WgcStatus op_max_pool(const WgcTensor *out, void *p) { return pool(out, p, 0); }
static WgcStatus op_avg_pool(const WgcTensor *out, void *p) { return pool(out, p, 1); }

static WgcStatus op_rope(const WgcTensor *out, void *p) {
    In *in = p;
    WgcRopeDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.layout = WGC_ROPE_LAYOUT_HALF_SPLIT;
    d.seq_axis = 0;
    d.base = 10000.0f;
    return wgc_op_rope(g_st, &in->x, &d, out);
}

/* topk writes two outputs: each is checked uninitialised in turn. */
static WgcTensor g_topk_other;
static WgcStatus op_topk_values(const WgcTensor *out, void *p) {
    return wgc_op_topk(g_st, &((In *)p)->x, 5, 1, out, &g_topk_other);
}
static WgcStatus op_topk_indices(const WgcTensor *out, void *p) {
    return wgc_op_topk(g_st, &((In *)p)->x, 5, 1, &g_topk_other, out);
}

static WgcBuffer *upload_f32(const float *v, size_t n) { return upload(g_dev, v, n * sizeof *v); }

static void test_every_output_path(void) {
    enum { R = 37, C = 70, N4 = 2, C4 = 3, H4 = 9, W4 = 11, O4 = 4, K = 29 };
    static float x[R * C], y[R * C], x4[N4 * C4 * H4 * W4], w4[O4 * C4 * 9], bias[O4], wg[C * K];
    static uint32_t mask[R * C];
    fill_uniform_f32(x, R * C, -2, 2);
    fill_uniform_f32(y, R * C, -2, 2);
    fill_uniform_f32(x4, N4 * C4 * H4 * W4, -1, 1);
    fill_uniform_f32(w4, O4 * C4 * 9, -1, 1);
    fill_uniform_f32(bias, O4, -1, 1);
    fill_uniform_f32(wg, C * K, -1, 1);
    for (int i = 0; i < R * C; i++) mask[i] = (uint32_t)(rng_next() & 1);
    int32_t idx[23], idx2[R * 13];
    for (int i = 0; i < 23; i++) idx[i] = (int32_t)(rng_next() % R);
    for (int i = 0; i < R * 13; i++) idx2[i] = (int32_t)(rng_next() % C);

    const int64_t s2[2] = {R, C}, s4[4] = {N4, C4, H4, W4}, sw4[4] = {O4, C4, 3, 3}, sb[1] = {O4},
                  sg[2] = {C, K}, si[1] = {23}, si2[2] = {R, 13}, stall[1] = {R * C};
    WgcBuffer *bx = upload_f32(x, R * C), *by = upload_f32(y, R * C), *bx4 = upload_f32(x4, N4 * C4 * H4 * W4),
              *bw4 = upload_f32(w4, O4 * C4 * 9), *bb = upload_f32(bias, O4), *bg = upload_f32(wg, C * K),
              *bm = upload(g_dev, mask, sizeof mask), *bi = upload(g_dev, idx, sizeof idx),
              *bi2 = upload(g_dev, idx2, sizeof idx2);
    In in;
    in.x = view_of(bx, WGC_DTYPE_F32, 2, s2);
    in.y = view_of(by, WGC_DTYPE_F32, 2, s2);
    in.x4 = view_of(bx4, WGC_DTYPE_F32, 4, s4);
    in.w4 = view_of(bw4, WGC_DTYPE_F32, 4, sw4);
    in.bias = view_of(bb, WGC_DTYPE_F32, 1, sb);
    in.w_gemm = view_of(bg, WGC_DTYPE_F32, 2, sg);
    in.mask = view_of(bm, WGC_DTYPE_U32, 2, s2);
    in.idx = view_of(bi, WGC_DTYPE_I32, 1, si);
    in.idx2 = view_of(bi2, WGC_DTYPE_I32, 2, si2);
    in.tall = view_of(bx, WGC_DTYPE_F32, 1, stall);

    const int64_t rows[1] = {R}, cols[1] = {C}, mk[2] = {R, K}, cat[2] = {2 * R, C}, t[2] = {C, R},
                  sel[2] = {23, C}, g2[2] = {R, 13}, emb[2] = {23, C}, conv[4] = {N4, O4, H4, W4},
                  pooled[4] = {N4, C4, 5, 6}, gpool[4] = {N4, C4, 1, 1}, odd[1] = {1001}, tk[2] = {R, 5};
    same_into_uninit("binary", WGC_DTYPE_F32, 2, s2, op_add, &in);
    same_into_uninit("binary_scalar", WGC_DTYPE_F32, 2, s2, op_scalar, &in);
    same_into_uninit("comparison", WGC_DTYPE_U32, 2, s2, op_cmp, &in);
    same_into_uninit("unary", WGC_DTYPE_F32, 2, s2, op_exp, &in);
    same_into_uninit("clamp", WGC_DTYPE_F32, 2, s2, op_clamp, &in);
    same_into_uninit("leaky_relu", WGC_DTYPE_F32, 2, s2, op_leaky, &in);
    same_into_uninit("fma", WGC_DTYPE_F32, 2, s2, op_fma, &in);
    same_into_uninit("where", WGC_DTYPE_F32, 2, s2, op_where, &in);
    same_into_uninit("reduce rows", WGC_DTYPE_F32, 1, rows, op_sum_rows, &in);
    same_into_uninit("reduce columns", WGC_DTYPE_F32, 1, cols, op_max_cols, &in);
    same_into_uninit("reduce all", WGC_DTYPE_F32, 0, NULL, op_mean_all, &in);
    same_into_uninit("argmax", WGC_DTYPE_I32, 1, rows, op_argmax, &in);
    same_into_uninit("var", WGC_DTYPE_F32, 1, rows, op_var, &in);
    same_into_uninit("softmax", WGC_DTYPE_F32, 2, s2, op_softmax, &in);
    same_into_uninit("log_softmax", WGC_DTYPE_F32, 2, s2, op_log_softmax, &in);
    same_into_uninit("layer_norm", WGC_DTYPE_F32, 2, s2, op_layer_norm, &in);
    same_into_uninit("rms_norm", WGC_DTYPE_F32, 2, s2, op_rms_norm, &in);
    same_into_uninit("matmul", WGC_DTYPE_F32, 2, mk, op_matmul, &in);
    same_into_uninit("gemm beta 0", WGC_DTYPE_F32, 2, mk, op_gemm, &in);
    same_into_uninit("transpose", WGC_DTYPE_F32, 2, t, op_copy_t, &in);
    same_into_uninit("cast", WGC_DTYPE_I32, 2, s2, op_cast, &in);
    same_into_uninit("cast f16", WGC_DTYPE_F16, 2, s2, op_cast, &in);
    same_into_uninit("fill", WGC_DTYPE_F32, 1, odd, op_fill, &in);
    same_into_uninit("arange", WGC_DTYPE_F32, 1, odd, op_arange, &in);
    same_into_uninit("random_uniform", WGC_DTYPE_F32, 1, odd, op_random, &in);
    same_into_uninit("index_select", WGC_DTYPE_F32, 2, sel, op_index_select, &in);
    same_into_uninit("gather", WGC_DTYPE_F32, 2, g2, op_gather, &in);
    same_into_uninit("embedding", WGC_DTYPE_F32, 2, emb, op_embedding, &in);
    same_into_uninit("cumsum", WGC_DTYPE_F32, 2, s2, op_cumsum, &in);
    same_into_uninit("concat", WGC_DTYPE_F32, 2, cat, op_concat, &in);
    same_into_uninit("rope", WGC_DTYPE_F32, 2, s2, op_rope, &in);
    same_into_uninit("conv2d", WGC_DTYPE_F32, 4, conv, op_conv, &in);
    same_into_uninit("max_pool2d", WGC_DTYPE_F32, 4, pooled, op_max_pool, &in);
    same_into_uninit("avg_pool2d", WGC_DTYPE_F32, 4, pooled, op_avg_pool, &in);
    same_into_uninit("global_avg_pool2d", WGC_DTYPE_F32, 4, gpool, op_global_pool, &in);

    WgcBuffer *other = zeroed(R * 5 * 4);
    g_topk_other = view_of(other, WGC_DTYPE_I32, 2, tk);
    same_into_uninit("topk values", WGC_DTYPE_F32, 2, tk, op_topk_values, &in);
    g_topk_other = view_of(other, WGC_DTYPE_F32, 2, tk);
    same_into_uninit("topk indices", WGC_DTYPE_I32, 2, tk, op_topk_indices, &in);
    wgc_buffer_release(other);

    WgcBuffer *all[] = {bx, by, bx4, bw4, bb, bg, bm, bi, bi2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgc_buffer_release(all[i]);
}

/* ---- zeros from the pool, and the order of the deferred clear ---- */

/* Put `n` bytes of POISON back into the pool, finished on the GPU. */
static void pool_junk(size_t n) {
    WgcBuffer *b = poisoned_uninit(n);
    wgc_buffer_release(b);
    CHECK(wgc_device_synchronize(g_dev));
}

/* A zeroed buffer that reuses pooled junk (checked). */
static WgcBuffer *zeroed_from_junk(size_t n) {
    pool_junk(n);
    uint64_t before = pool_hits();
    WgcBuffer *b = zeroed(n);
    EXPECT(pool_hits() == before + 1);
    return b;
}

static void test_zeros_from_pool(void) {
    enum { N = 4096 };
    unsigned char back[N];
    /* Read right away: the read's submission carries the clear. */
    WgcBuffer *b = zeroed_from_junk(N);
    CHECK(wgc_buffer_read(b, 0, back, N));
    EXPECT(all_bytes(back, N, 0));
    wgc_buffer_release(b);

    /* A host write right after creation lands after the clear. */
    unsigned char data[256];
    for (int i = 0; i < 256; i++) data[i] = (unsigned char)(i + 1);
    b = zeroed_from_junk(N);
    CHECK(wgc_buffer_write(b, 512, data, sizeof data));
    CHECK(wgc_buffer_read(b, 0, back, N));
    EXPECT(all_bytes(back, 512, 0));
    EXPECT(memcmp(back + 512, data, sizeof data) == 0);
    EXPECT(all_bytes(back + 768, N - 768, 0));
    wgc_buffer_release(b);

    /* Recorded work after creation runs after the clear: a fill of part of
     * the buffer, then an operator that reads all of it. */
    b = zeroed_from_junk(N);
    CHECK(wgc_stream_fill_buffer(g_st, b, 0, 64, 0x3F800000u)); /* 1.0f */
    WgcBuffer *out = NULL;
    CHECK(wgc_buffer_create_uninit(g_dev, N, WGC_BUFFER_USAGE_STORAGE, &out));
    const int64_t n[1] = {N / 4};
    WgcTensor tb = tensor_of(b, WGC_DTYPE_F32, 1, n), to = tensor_of(out, WGC_DTYPE_F32, 1, n);
    CHECK(wgc_op_binary_scalar(g_st, WGC_BINARY_OP_ADD, &tb, 2.0, &to));
    float vals[N / 4];
    CHECK(wgc_buffer_read(out, 0, vals, N));
    int bad = 0;
    for (int i = 0; i < N / 4; i++) bad += vals[i] != (i < 16 ? 3.0f : 2.0f);
    EXPECT(bad == 0);
    wgc_buffer_release(out);
    wgc_buffer_release(b);

    /* The same through a second stream that is flushed on its own first. */
    WgcStream *s2 = NULL;
    CHECK(wgc_stream_create(g_dev, &s2));
    b = zeroed_from_junk(N);
    WgcBuffer *dst = zeroed(N);
    CHECK(wgc_stream_copy_buffer(s2, b, 0, dst, 0, N));
    CHECK(wgc_stream_synchronize(s2));
    CHECK(wgc_buffer_read(dst, 0, back, N));
    EXPECT(all_bytes(back, N, 0));
    wgc_buffer_release(dst);
    wgc_buffer_release(b);

    /* A zeroed buffer released before anything was submitted: its memory
     * may go to the next buffer at once, and the pending clear must still
     * come before that buffer's own writes. */
    pool_junk(N);
    b = zeroed(N);
    wgc_buffer_release(b);
    uint64_t before = pool_hits();
    WgcBuffer *u = NULL;
    CHECK(wgc_buffer_create_uninit(g_dev, N, WGC_BUFFER_USAGE_STORAGE, &u));
    EXPECT(pool_hits() == before + 1);
    CHECK(wgc_stream_fill_buffer(s2, u, 0, N, 0x07070707u));
    CHECK(wgc_buffer_read(u, 0, back, N));
    EXPECT(all_bytes(back, N, 7));
    wgc_buffer_release(u);
    /* ... and before its host writes. */
    pool_junk(N);
    b = zeroed(N);
    wgc_buffer_release(b);
    CHECK(wgc_buffer_create_uninit(g_dev, N, WGC_BUFFER_USAGE_STORAGE, &u));
    memset(back, 9, N);
    CHECK(wgc_buffer_write(u, 0, back, N));
    memset(back, 0, N);
    CHECK(wgc_buffer_read(u, 0, back, N));
    EXPECT(all_bytes(back, N, 9));
    wgc_buffer_release(u);
    wgc_stream_release(s2);
}

/* Memory whose previous owner still has recorded or running work is not
 * handed out: that work would write into the new buffer after its own. */
static void test_no_reuse_before_work_finished(void) {
    enum { N = 8192 };
    unsigned char back[N];
    WgcStream *s2 = NULL;
    CHECK(wgc_stream_create(g_dev, &s2));
    for (int round = 0; round < 3; round++) {
        /* The previous owner's fill is recorded (round 0), submitted
         * (round 1) or submitted and perhaps running (round 2) when it
         * lets go of the buffer. */
        WgcBuffer *a = zeroed(N);
        CHECK(wgc_stream_fill_buffer(g_st, a, 0, N, 0x05050505u));
        for (int k = 0; k < round * 20; k++) CHECK(wgc_stream_fill_buffer(g_st, a, 0, N, 0x05050505u));
        if (round >= 1) CHECK(wgc_stream_flush(g_st));
        wgc_buffer_release(a);

        /* A zeroed buffer of the same size reads zeros ... */
        WgcBuffer *z = zeroed(N);
        CHECK(wgc_buffer_read(z, 0, back, N));
        EXPECT(all_bytes(back, N, 0));
        wgc_buffer_release(z);

        /* ... and an uninitialised one written on another stream keeps what
         * that stream wrote, even when the first stream is submitted last. */
        a = zeroed(N);
        CHECK(wgc_stream_fill_buffer(g_st, a, 0, N, 0x05050505u));
        wgc_buffer_release(a);
        WgcBuffer *u = NULL;
        CHECK(wgc_buffer_create_uninit(g_dev, N, WGC_BUFFER_USAGE_STORAGE, &u));
        CHECK(wgc_stream_fill_buffer(s2, u, 0, N, 0x0B0B0B0Bu));
        CHECK(wgc_stream_flush(s2));
        CHECK(wgc_stream_flush(g_st));
        CHECK(wgc_buffer_read(u, 0, back, N));
        EXPECT(all_bytes(back, N, 0x0B));
        wgc_buffer_release(u);
    }
    /* Many rounds of write, release, allocate zeroed: never a stale byte. */
    int bad = 0;
    for (int i = 0; i < 40; i++) {
        WgcBuffer *a = zeroed(N);
        CHECK(wgc_stream_fill_buffer(g_st, a, 0, N, 0x01010101u * (uint32_t)(1 + i % 200)));
        if (i % 3 == 0) CHECK(wgc_stream_flush(g_st));
        if (i % 7 == 0) CHECK(wgc_stream_synchronize(g_st));
        wgc_buffer_release(a);
        WgcBuffer *z = zeroed(N);
        CHECK(wgc_buffer_read(z, 0, back, N));
        bad += !all_bytes(back, N, 0);
        wgc_buffer_release(z);
    }
    EXPECT(bad == 0);
    wgc_stream_release(s2);
}

static void test_misuse(void) {
    WgcBuffer *b = (WgcBuffer *)(uintptr_t)0x1234;
    EXPECT_STATUS(wgc_buffer_create_uninit(NULL, 64, WGC_BUFFER_USAGE_STORAGE, &b), WGC_ERROR_NULL_POINTER);
    EXPECT(b == (WgcBuffer *)(uintptr_t)0x1234);
    EXPECT_STATUS(wgc_buffer_create_uninit(g_dev, 64, WGC_BUFFER_USAGE_STORAGE, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_buffer_create_uninit(g_dev, 0, WGC_BUFFER_USAGE_STORAGE, &b), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_buffer_create_uninit(g_dev, 64, 0x100, &b), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_buffer_create_uninit(g_dev, UINT64_MAX, WGC_BUFFER_USAGE_STORAGE, &b), WGC_ERROR_TOO_LARGE);
    EXPECT(b == (WgcBuffer *)(uintptr_t)0x1234);
    /* Every usage combination is accepted, and works for copies and reads. */
    for (uint32_t u = 0; u <= WGC_BUFFER_USAGE_ALL; u++) {
        WgcBuffer *c = NULL;
        CHECK(wgc_buffer_create_uninit(g_dev, 256, u, &c));
        uint64_t size = 0;
        CHECK(wgc_buffer_size(c, &size));
        EXPECT(size == 256);
        uint32_t w[4] = {1, 2, 3, 4}, r[4];
        CHECK(wgc_buffer_write(c, 16, w, sizeof w));
        CHECK(wgc_buffer_read(c, 16, r, sizeof r));
        EXPECT(memcmp(w, r, sizeof w) == 0);
        wgc_buffer_release(c);
    }
    /* On a destroyed device. */
    WgcInstance *inst = NULL;
    WgcDevice *dev = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev));
    WgcBuffer *z = NULL;
    CHECK(wgc_buffer_create(dev, 64, WGC_BUFFER_USAGE_STORAGE, &z));
    wgc_buffer_release(z);
    CHECK(wgc_device_synchronize(dev));
    CHECK(wgc_buffer_create(dev, 64, WGC_BUFFER_USAGE_STORAGE, &z)); /* a clear waits */
    CHECK(wgc_device_destroy(dev));
    b = NULL;
    EXPECT_STATUS(wgc_buffer_create_uninit(dev, 64, WGC_BUFFER_USAGE_STORAGE, &b), WGC_ERROR_DEVICE_LOST);
    EXPECT_STATUS(wgc_buffer_create(dev, 64, WGC_BUFFER_USAGE_STORAGE, &b), WGC_ERROR_DEVICE_LOST);
    EXPECT(b == NULL);
    wgc_buffer_release(z);
    wgc_device_release(dev);
    wgc_instance_release(inst);
}

int main(void) {
    TestEnv env = test_env();
    g_dev = env.device;
    g_st = env.stream;
    test_misuse();
    test_zeros_from_pool();
    test_no_reuse_before_work_finished();
    test_every_output_path();
    test_env_release(&env);
    return test_finish("test_alloc");
}
