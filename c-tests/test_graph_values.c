/* Replay values: built-in operators' scalar arguments changed at replay
 * (wgc_op_binary_scalar's scalar in f32 and i32, wgc_op_rope's position
 * offset, wgc_op_attention's kv_len), checked against double-precision
 * references and against the eager call with the same argument; and the
 * misuse the header names (out of range, not whole, NaN counts, indices past
 * the graph's, queries outside a capture). */
#include "test_util.h"

static TestEnv env;

static WgcGraphReplay values_desc(const WgcGraphValue *v, uint32_t n) {
    WgcGraphReplay r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.values = v;
    r.value_count = n;
    return r;
}

static WgcStatus replay_value(WgcGraph *g, uint32_t index, double value) {
    WgcGraphValue v = {index, 0, value};
    WgcGraphReplay r = values_desc(&v, 1);
    return wgc_graph_replay(g, env.stream, &r);
}

/* x * s over 1029 floats (a vec4 launch and a tail launch both take s). */
static void test_binary_scalar_f32(void) {
    enum { N = 1029 };
    static float x[N], got[N], eager[N];
    static double ref[N];
    fill_uniform_f32(x, N, -3, 3);
    int64_t n = N;
    WgcBuffer *bx = upload(env.device, x, sizeof x), *by = upload(env.device, got, sizeof got);
    WgcBuffer *be = upload(env.device, got, sizeof got);
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 1, &n), ty = tensor_of(by, WGC_DTYPE_F32, 1, &n);
    WgcTensor te = tensor_of(be, WGC_DTYPE_F32, 1, &n);
    uint32_t first = 99, count = 0;
    EXPECT_STATUS(wgc_stream_capture_value_count(env.stream, &first), WGC_ERROR_INVALID_OPERATION);
    CHECK(wgc_stream_begin_capture(env.stream));
    EXPECT_STATUS(wgc_stream_capture_value_count(NULL, &first), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_stream_capture_value_count(env.stream, NULL), WGC_ERROR_NULL_POINTER);
    CHECK(wgc_stream_capture_value_count(env.stream, &first));
    EXPECT(first == 0);
    CHECK(wgc_op_binary_scalar(env.stream, WGC_BINARY_OP_MUL, &tx, 3.0, &ty));
    CHECK(wgc_stream_capture_value_count(env.stream, &count));
    EXPECT(count == 1);
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    CHECK(wgc_graph_value_count(g, &count));
    EXPECT(count == 1);
    double captured = 0, lo = 0, hi = 0;
    CHECK(wgc_graph_value_info(g, 0, &captured, &lo, &hi));
    EXPECT(captured == 3.0 && lo < -1e300 && hi > 1e300);
    EXPECT_STATUS(wgc_graph_value_info(g, 1, &captured, NULL, NULL), WGC_ERROR_OUT_OF_RANGE);

    const double scales[] = {3.0, -0.7, 1e-3, 3.0};
    for (int k = 0; k < 4; k++) {
        if (k == 3)
            CHECK(wgc_graph_replay(g, env.stream, NULL)); /* as captured again */
        else
            CHECK(replay_value(g, 0, scales[k]));
        CHECK(wgc_op_binary_scalar(env.stream, WGC_BINARY_OP_MUL, &tx, scales[k], &te));
        CHECK(wgc_buffer_read(by, 0, got, sizeof got));
        CHECK(wgc_buffer_read(be, 0, eager, sizeof eager));
        for (int i = 0; i < N; i++) ref[i] = (double)x[i] * (double)(float)scales[k];
        compare_f32("replayed x * s", got, ref, N, 0, 1e-6);
        EXPECT(memcmp(got, eager, sizeof got) == 0);
    }
    /* NaN is a value an elementwise scalar may take. */
    CHECK(replay_value(g, 0, NAN));
    CHECK(wgc_buffer_read(by, 0, got, sizeof got));
    int nans = 0;
    for (int i = 0; i < N; i++) nans += isnan(got[i]);
    EXPECT(nans == N);
    EXPECT_STATUS(replay_value(g, 1, 2.0), WGC_ERROR_OUT_OF_RANGE);
    WgcGraphReplay r = values_desc(NULL, 1);
    EXPECT_STATUS(wgc_graph_replay(g, env.stream, &r), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_graph_value_count(NULL, &count), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_graph_value_count(g, NULL), WGC_ERROR_NULL_POINTER);
    /* A struct from an older header (without the values) still replays. */
    WgcGraphReplay old = values_desc(NULL, 0);
    old.struct_size = offsetof(WgcGraphReplay, values);
    CHECK(wgc_graph_replay(g, env.stream, &old));
    CHECK(wgc_buffer_read(by, 0, got, sizeof got));
    for (int i = 0; i < N; i++) ref[i] = (double)x[i] * 3.0;
    compare_f32("replay with an older struct", got, ref, N, 0, 1e-6);
    wgc_graph_release(g);
    wgc_buffer_release(bx);
    wgc_buffer_release(by);
    wgc_buffer_release(be);
}

/* x + s in i32: the value is truncated and saturated as the call converts it. */
static void test_binary_scalar_i32(void) {
    enum { N = 37 };
    int32_t x[N], got[N];
    for (int i = 0; i < N; i++) x[i] = i * 1000 - 17000;
    int64_t n = N;
    WgcBuffer *bx = upload(env.device, x, sizeof x), *by = upload(env.device, x, sizeof x);
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_I32, 1, &n), ty = tensor_of(by, WGC_DTYPE_I32, 1, &n);
    CHECK(wgc_stream_begin_capture(env.stream));
    CHECK(wgc_op_binary_scalar(env.stream, WGC_BINARY_OP_ADD, &tx, 5.0, &ty));
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    CHECK(replay_value(g, 0, -7.9));
    CHECK(wgc_buffer_read(by, 0, got, sizeof got));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += got[i] != x[i] - 7;
    EXPECT(bad == 0);
    wgc_graph_release(g);
    wgc_buffer_release(bx);
    wgc_buffer_release(by);
}

/* RoPE (S, H, D) = (5, 3, 8), interleaved pairs, positions from `offset`. */
enum { RS = 5, RH = 3, RD = 8 };
static void rope_ref(const float *x, uint32_t offset, double *y) {
    for (int s = 0; s < RS; s++)
        for (int h = 0; h < RH; h++)
            for (int i = 0; i < RD / 2; i++) {
                double theta = pow(10000.0, -2.0 * i / RD), a = (double)(offset + s) * theta;
                const float *p = x + (s * RH + h) * RD + 2 * i;
                double *q = y + (s * RH + h) * RD + 2 * i;
                q[0] = p[0] * cos(a) - p[1] * sin(a);
                q[1] = p[0] * sin(a) + p[1] * cos(a);
            }
}

static void test_rope_position(void) {
    enum { N = RS * RH * RD };
    float x[N], got[N];
    double ref[N];
    fill_uniform_f32(x, N, -1, 1);
    int64_t shape[3] = {RS, RH, RD};
    WgcBuffer *bx = upload(env.device, x, sizeof x), *by = upload(env.device, x, sizeof x);
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 3, shape), ty = tensor_of(by, WGC_DTYPE_F32, 3, shape);
    WgcRopeDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.seq_axis = 0;
    d.base = 10000.0f;
    d.position_offset = 3;
    CHECK(wgc_stream_begin_capture(env.stream));
    uint32_t index = 0;
    CHECK(wgc_stream_capture_value_count(env.stream, &index));
    CHECK(wgc_op_rope(env.stream, &tx, &d, &ty));
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    double captured = 0, lo = 1, hi = 0;
    CHECK(wgc_graph_value_info(g, index, &captured, &lo, &hi));
    EXPECT(captured == 3 && lo == 0 && hi == 4294967296.0 - RS);
    const uint32_t positions[] = {3, 0, 41, 1000};
    for (int k = 0; k < 4; k++) {
        CHECK(replay_value(g, index, positions[k]));
        CHECK(wgc_buffer_read(by, 0, got, sizeof got));
        rope_ref(x, positions[k], ref);
        compare_f32("replayed rope position", got, ref, N, 2e-5, 2e-5);
    }
    /* Positions past 2^32, a fraction, NaN: refused, nothing recorded. */
    EXPECT_STATUS(replay_value(g, index, 4294967296.0 - RS + 1), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(replay_value(g, index, -1), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(replay_value(g, index, 2.5), WGC_ERROR_OUT_OF_RANGE);
    EXPECT_STATUS(replay_value(g, index, NAN), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(replay_value(g, index, INFINITY), WGC_ERROR_INVALID_ARGUMENT);
    CHECK(wgc_stream_synchronize(env.stream));
    CHECK(wgc_buffer_read(by, 0, got, sizeof got));
    rope_ref(x, 1000, ref);
    compare_f32("rope after refused replays", got, ref, N, 2e-5, 2e-5);
    wgc_graph_release(g);
    wgc_buffer_release(bx);
    wgc_buffer_release(by);
}

/* Attention of 2 queries over a cache of 10 keys (D 8), kv_len changed per replay. */
enum { AQ = 2, AK = 10, AD = 8 };
static void attention_ref(const float *q, const float *k, const float *v, int kv_len, double *o) {
    for (int i = 0; i < AQ; i++) {
        double s[AK], m = -INFINITY, sum = 0;
        for (int j = 0; j < kv_len; j++) {
            s[j] = 0;
            for (int d = 0; d < AD; d++) s[j] += (double)q[i * AD + d] * k[j * AD + d];
            s[j] /= sqrt((double)AD);
            if (s[j] > m) m = s[j];
        }
        for (int j = 0; j < kv_len; j++) s[j] = exp(s[j] - m), sum += s[j];
        for (int d = 0; d < AD; d++) {
            double acc = 0;
            for (int j = 0; j < kv_len; j++) acc += s[j] * v[j * AD + d];
            o[i * AD + d] = acc / sum;
        }
    }
}

static void test_attention_kv_len(void) {
    float q[AQ * AD], k[AK * AD], v[AK * AD], got[AQ * AD];
    double ref[AQ * AD];
    fill_uniform_f32(q, AQ * AD, -1, 1);
    fill_uniform_f32(k, AK * AD, -1, 1);
    fill_uniform_f32(v, AK * AD, -1, 1);
    int64_t sq[3] = {1, AQ, AD}, sk[3] = {1, AK, AD};
    WgcBuffer *bq = upload(env.device, q, sizeof q), *bk = upload(env.device, k, sizeof k);
    WgcBuffer *bv = upload(env.device, v, sizeof v), *bo = upload(env.device, q, sizeof q);
    WgcTensor tq = tensor_of(bq, WGC_DTYPE_F32, 3, sq), tk = tensor_of(bk, WGC_DTYPE_F32, 3, sk);
    WgcTensor tv = tensor_of(bv, WGC_DTYPE_F32, 3, sk), to = tensor_of(bo, WGC_DTYPE_F32, 3, sq);
    WgcAttentionDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.kv_len = 4;
    CHECK(wgc_stream_begin_capture(env.stream));
    uint32_t index = 0;
    CHECK(wgc_stream_capture_value_count(env.stream, &index));
    CHECK(wgc_op_attention(env.stream, &tq, &tk, &tv, NULL, NULL, &d, &to, NULL));
    WgcGraph *g = NULL;
    CHECK(wgc_stream_end_capture(env.stream, &g));
    double captured = 0, lo = 1, hi = 0;
    CHECK(wgc_graph_value_info(g, index, &captured, &lo, &hi));
    EXPECT(captured == 4 && lo == 0 && hi == AK);
    const int lens[] = {4, 7, 1, AK, 0};
    for (int i = 0; i < 5; i++) {
        CHECK(replay_value(g, index, lens[i]));
        CHECK(wgc_buffer_read(bo, 0, got, sizeof got));
        attention_ref(q, k, v, lens[i] ? lens[i] : AK, ref);
        compare_f32("replayed attention kv_len", got, ref, AQ * AD, 1e-5, 1e-4);
    }
    EXPECT_STATUS(replay_value(g, index, AK + 1), WGC_ERROR_OUT_OF_RANGE);
    wgc_graph_release(g);
    WgcBuffer *all[] = {bq, bk, bv, bo};
    for (int i = 0; i < 4; i++) wgc_buffer_release(all[i]);
}

int main(void) {
    env = test_env();
    test_binary_scalar_f32();
    test_binary_scalar_i32();
    test_rope_position();
    test_attention_kv_len();
    test_env_release(&env);
    return test_finish("test_graph_values");
}
