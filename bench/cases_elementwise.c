/* Elementwise and data movement: contiguous, broadcast (bias add) and
 * transposed-view adds, activations, casts, permutes, concatenation and
 * random numbers. */
#include <math.h>

#include "cases.h"

enum { E_ADD, E_UNARY, E_CAST, E_PERMUTE, E_CONCAT, E_NORMAL, E_COPY };

typedef struct {
    int kind;
    uint32_t op; /* unary op */
    HT a, b, out;
    uint32_t perm[4];
} Ew;

static WgcStatus run_ew(void *p) {
    Ew *e = p;
    switch (e->kind) {
    case E_ADD: return OP(wgc_op_binary, g_stream, WGC_BINARY_OP_ADD, &e->a.t, &e->b.t, &e->out.t);
    case E_UNARY: return OP(wgc_op_unary, g_stream, e->op, &e->a.t, &e->out.t);
    case E_CAST: return OP(wgc_op_cast, g_stream, &e->a.t, &e->out.t);
    case E_COPY: return OP(wgc_op_copy, g_stream, &e->a.t, &e->out.t);
    case E_PERMUTE: return OP(wgc_op_permute, g_stream, &e->a.t, e->perm, e->a.t.rank, &e->out.t);
    case E_CONCAT: {
        WgcTensor in[2] = {e->a.t, e->b.t};
        return OP(wgc_op_concat, g_stream, in, 2, -1, &e->out.t);
    }
    default: return OP(wgc_op_random_normal, g_stream, &e->out.t, 1234, 0, 0.0, 1.0);
    }
}

/* Host value of view element `i` (row-major over the view's shape). */
static double view_at(const HT *h, size_t i) {
    int64_t off = h->t.offset;
    for (int d = (int)h->t.rank - 1; d >= 0; d--) {
        off += (int64_t)(i % (size_t)h->t.shape[d]) * h->t.strides[d];
        i /= (size_t)h->t.shape[d];
    }
    return h->host[off];
}

static double unary_ref(uint32_t op, double x) {
    if (op == WGC_UNARY_OP_SILU) return x / (1 + exp(-x));
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

/* Every output element (a sample of them for big outputs) against the host. */
static int check_ew(const Ew *e) {
    float *got = ht_read(&e->out);
    size_t n = e->out.n, step = n > (1u << 22) ? 4099 : 1, bad = 0;
    if (e->kind == E_NORMAL) {
        double s = 0, s2 = 0;
        for (size_t i = 0; i < n; i++) s += got[i], s2 += (double)got[i] * got[i];
        double mean = s / n, var = s2 / n - mean * mean;
        bad = !(fabs(mean) < 6 / sqrt((double)n)) || !(fabs(var - 1) < 6 * sqrt(2.0 / n));
        if (bad) fprintf(stderr, "random_normal: mean %g var %g over %zu\n", mean, var, n);
        free(got);
        return (int)bad;
    }
    double slack = f16_slack(e->out.t.dtype);
    int64_t C = e->out.t.shape[e->out.t.rank - 1], Ca = e->kind == E_CONCAT ? e->a.t.shape[e->a.t.rank - 1] : 0;
    for (size_t i = 0; i < n; i += step) {
        double ref;
        if (e->kind == E_ADD) ref = (float)(view_at(&e->a, i) + view_at(&e->b, i % e->b.n));
        else if (e->kind == E_UNARY) ref = unary_ref(e->op, e->a.host[i]);
        else if (e->kind == E_CAST || e->kind == E_COPY) ref = e->a.host[i];
        else if (e->kind == E_CONCAT) {
            size_t row = i / (size_t)C, col = i % (size_t)C, Cb = (size_t)(C - Ca);
            ref = (int64_t)col < Ca ? e->a.host[row * Ca + col] : e->b.host[row * Cb + col - Ca];
        } else {
            /* out[i0, i1, i2, i3] = a[... out dim k is a's dim perm[k] ...] */
            size_t rest = i, off = 0;
            int64_t astride[4] = {1, 1, 1, 1};
            for (int d = 2; d >= 0; d--) astride[d] = astride[d + 1] * e->a.t.shape[d + 1];
            for (int d = 3; d >= 0; d--) {
                off += (rest % (size_t)e->out.t.shape[d]) * (size_t)astride[e->perm[d]];
                rest /= (size_t)e->out.t.shape[d];
            }
            ref = e->a.host[off];
        }
        /* f16: results below the normal range (6.1e-5) read back as 0 */
        double atol = (e->kind == E_UNARY ? 1e-6 : 0) + slack * 0.07;
        if (e->out.t.dtype == WGC_DTYPE_F16 && e->kind == E_ADD) ref = from_half(to_half((float)ref));
        if (e->out.t.dtype == WGC_DTYPE_BF16 && e->kind == E_ADD) ref = from_bf16(to_bf16((float)ref));
        bad += !close_to(got[i], ref, atol, slack + (e->kind == E_UNARY ? 1e-6 : 0));
    }
    if (bad) fprintf(stderr, "%zu elements wrong\n", bad);
    free(got);
    return bad != 0;
}

static void ew_time(Case *c, Ew *e) {
    if (case_first_run(c, run_ew, e)) {
        int bad = check_ew(e);
        case_time(c, run_ew, e, !bad, 10);
    }
    if (e->a.buf) ht_free(&e->a);
    if (e->b.buf) ht_free(&e->b);
    ht_free(&e->out);
}

static const char *dt_name(WgcDtype dt) { return dtype_name(dt); }

/* out (R, C) = a (R, C) + b: b (C) broadcast, or b (C, R) viewed transposed. */
static void add_case(const char *name, const char *cls, const char *size, WgcDtype dt, int64_t R, int64_t C, int bias,
                     int transposed) {
    Case c = {name, cls, dt_name(dt), "", "bytes", 0, 0};
    int64_t s[2] = {R, C}, st[2] = {C, R};
    if (size) snprintf(c.size, sizeof c.size, "%s", size);
    else {
        fmt_shape(c.size, sizeof c.size, 2, s);
        strcat(c.size, bias ? " + bias" : transposed ? " + B^T view" : "");
    }
    c.in_bytes = (double)(R * C) * dtype_size(dt) * (bias ? 1 : 2);
    c.amount = c.in_bytes + (double)(R * C) * dtype_size(dt);
    if (!case_begin(&c)) return;
    Ew e = {E_ADD, 0, ht_random(dt, 2, s), {0}, ht_empty(dt, 2, s), {0}};
    if (bias) e.b = ht_random(dt, 1, s + 1);
    else if (transposed) {
        e.b = ht_random(dt, 2, st);
        e.b.t.shape[0] = R, e.b.t.shape[1] = C, e.b.t.strides[0] = 1, e.b.t.strides[1] = R;
    } else e.b = ht_random(dt, 2, s);
    ew_time(&c, &e);
}

static void unary_case(const char *name, uint32_t op, WgcDtype dt, int64_t R, int64_t C) {
    Case c = {name, "elementwise/unary", dt_name(dt), "", "bytes", 0, 0};
    int64_t s[2] = {R, C};
    fmt_shape(c.size, sizeof c.size, 2, s);
    c.in_bytes = (double)(R * C) * dtype_size(dt);
    c.amount = 2 * c.in_bytes;
    if (!case_begin(&c)) return;
    Ew e = {E_UNARY, op, ht_random(dt, 2, s), {0}, ht_empty(dt, 2, s), {0}};
    ew_time(&c, &e);
}

/* A cast, or a copy (the copy bandwidth the other cases compare with) when
 * both dtypes are the same. */
static void cast_case(const char *name, WgcDtype from, WgcDtype to, int64_t n) {
    char dts[16];
    snprintf(dts, sizeof dts, "%s->%s", dt_name(from), dt_name(to));
    Case c = {name, from == to ? "elementwise/copy" : "elementwise/cast", from == to ? dt_name(from) : dts, "", "bytes",
              0, 0};
    fmt_shape(c.size, sizeof c.size, 1, &n);
    c.in_bytes = (double)n * dtype_size(from);
    c.amount = c.in_bytes + (double)n * dtype_size(to);
    if (!case_begin(&c)) return;
    Ew e = {from == to ? E_COPY : E_CAST, 0, ht_random(from, 1, &n), {0}, ht_empty(to, 1, &n), {0}};
    ew_time(&c, &e);
}

static void permute_case(const char *name, WgcDtype dt, const int64_t *s, const uint32_t *perm) {
    Case c = {name, "movement/permute", dt_name(dt), "", "bytes", 0, 0};
    int64_t os[4];
    for (int d = 0; d < 4; d++) os[d] = s[perm[d]];
    fmt_shape(c.size, sizeof c.size, 4, s);
    size_t len = strlen(c.size);
    snprintf(c.size + len, sizeof c.size - len, " perm %u%u%u%u", perm[0], perm[1], perm[2], perm[3]);
    c.in_bytes = (double)(s[0] * s[1] * s[2] * s[3]) * dtype_size(dt);
    c.amount = 2 * c.in_bytes;
    if (!case_begin(&c)) return;
    Ew e = {E_PERMUTE, 0, ht_random(dt, 4, s), {0}, ht_empty(dt, 4, os), {0}};
    memcpy(e.perm, perm, sizeof e.perm);
    ew_time(&c, &e);
}

/* (R, Ca) and (R, Cb) joined along the last axis. */
static void concat_case(const char *name, WgcDtype dt, int64_t R, int64_t Ca, int64_t Cb) {
    Case c = {name, "movement/concat", dt_name(dt), "", "bytes", 0, 0};
    int64_t sa[2] = {R, Ca}, sb[2] = {R, Cb}, so[2] = {R, Ca + Cb};
    snprintf(c.size, sizeof c.size, "%lldx%lld + %lldx%lld axis 1", (long long)R, (long long)Ca, (long long)R,
             (long long)Cb);
    c.in_bytes = (double)(R * (Ca + Cb)) * dtype_size(dt);
    c.amount = 2 * c.in_bytes;
    if (!case_begin(&c)) return;
    Ew e = {E_CONCAT, 0, ht_random(dt, 2, sa), ht_random(dt, 2, sb), ht_empty(dt, 2, so), {0}};
    ew_time(&c, &e);
}

static void normal_case(const char *name, WgcDtype dt, int64_t n) {
    Case c = {name, "random/normal", dt_name(dt), "", "bytes", 0, 0};
    fmt_shape(c.size, sizeof c.size, 1, &n);
    c.amount = (double)n * dtype_size(dt);
    if (!case_begin(&c)) return;
    Ew e = {E_NORMAL, 0, {0}, {0}, ht_empty(dt, 1, &n), {0}};
    ew_time(&c, &e);
}

void cases_elementwise(void) {
    const WgcDtype F32 = WGC_DTYPE_F32, F16 = WGC_DTYPE_F16, BF16 = WGC_DTYPE_BF16;
    cast_case("copy_f32", F32, F32, SZ(1 << 28, 100003));
    add_case("add_f32", "elementwise/contiguous", g_small ? NULL : "2^28", F32, SZ(1 << 14, 3), SZ(1 << 14, 1001), 0, 0);
    add_case("bias_add_f32", "elementwise/broadcast", NULL, F32, SZ(16384, 33), SZ(4096, 4096), 1, 0);
    add_case("bias_add_f16", "elementwise/broadcast", NULL, F16, SZ(8192, 17), SZ(14336, 1433), 1, 0);
    add_case("add_transposed_f32", "elementwise/strided", NULL, F32, SZ(8192, 67), SZ(8192, 129), 0, 1);
    add_case("add_odd_f32", "elementwise/contiguous", NULL, F32, SZ(10007, 13), SZ(10009, 1001), 0, 0);
    unary_case("silu_f16", WGC_UNARY_OP_SILU, F16, SZ(8192, 17), SZ(14336, 1433));
    unary_case("gelu_tanh_f32", WGC_UNARY_OP_GELU_TANH, F32, SZ(16384, 17), SZ(4096, 1001));
    cast_case("cast_f32_f16", F32, F16, SZ(1 << 28, 100003));
    cast_case("cast_f16_f32", F16, F32, SZ(1 << 28, 100003));
    /* bf16: rounding casts, a contiguous add (the bf16 kernels), a bias add. */
    cast_case("cast_f32_bf16", F32, BF16, SZ(1 << 28, 100003));
    cast_case("cast_bf16_f32", BF16, F32, SZ(1 << 28, 100003));
    add_case("add_bf16", "elementwise/contiguous", g_small ? NULL : "2^28", BF16, SZ(1 << 14, 3), SZ(1 << 14, 1001), 0, 0);
    add_case("bias_add_bf16", "elementwise/broadcast", NULL, BF16, SZ(8192, 17), SZ(14336, 1436), 1, 0);
    {
        int64_t s[4] = {SZ(8, 2), SZ(2048, 33), SZ(32, 5), SZ(128, 64)};
        uint32_t perm[4] = {0, 2, 1, 3};
        permute_case("permute_heads_f16", F16, s, perm);
    }
    {
        int64_t s[4] = {SZ(32, 2), SZ(256, 7), SZ(56, 9), SZ(56, 11)};
        uint32_t perm[4] = {0, 2, 3, 1};
        permute_case("permute_nchw_nhwc_f32", F32, s, perm);
    }
    concat_case("concat_last_f32", F32, SZ(16384, 37), SZ(2048, 130), SZ(2048, 67));
    concat_case("concat_odd_f16", F16, SZ(8192, 37), SZ(4097, 131), SZ(1023, 33));
    normal_case("random_normal_f32", F32, SZ(1 << 28, 1 << 20));
}
