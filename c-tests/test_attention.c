/* Scaled dot-product attention (wgc_op_attention) against a float64
 * evaluation of PyTorch's SDPA with the library's documented semantics:
 * grouped-query heads, bottom-right and top-left causal masks with
 * Sq != Skv, additive and boolean masks (broadcast), sliding windows, valid
 * lengths (one for all and per batch entry), tokens-first views, odd D and
 * S, rows no key reaches (0 and lse -inf), NaN and infinities, f32, f16 and
 * bf16, decode shapes split over chunks, keys past one invocation's loop
 * budget, and bad input (statuses, output untouched).
 *
 * Tolerance per element: 2e-5 * sum_j p_j |v_j| + 1e-6 plus the output's
 * rounding (2^-11 relative for f16, 2^-8 for bf16); lse 1e-5 * (|lse| + 1). */
#include <time.h>

#include "test_util.h"

static TestEnv env;

typedef struct Ten {
    WgcBuffer *buf;
    WgcTensor t;
    double *val; /* logical values, row-major */
    size_t n, phys;
} Ten;

static size_t esize(WgcDtype d) { return d == WGC_DTYPE_F16 || d == WGC_DTYPE_BF16 ? 2 : 4; }

static uint16_t bf16_of(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static double bf16_val(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static void put(void *p, WgcDtype d, size_t i, double v) {
    switch (d) {
    case WGC_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case WGC_DTYPE_F16: ((uint16_t *)p)[i] = f32_to_f16((float)v); break;
    case WGC_DTYPE_BF16: ((uint16_t *)p)[i] = bf16_of(v); break;
    case WGC_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((uint32_t *)p)[i] = (uint32_t)v; break;
    }
}
static double get(const void *p, WgcDtype d, size_t i) {
    switch (d) {
    case WGC_DTYPE_F32: return ((const float *)p)[i];
    case WGC_DTYPE_F16: return f16_to_f32(((const uint16_t *)p)[i]);
    case WGC_DTYPE_BF16: return bf16_val(((const uint16_t *)p)[i]);
    case WGC_DTYPE_I32: return ((const int32_t *)p)[i];
    default: return ((const uint32_t *)p)[i];
    }
}
static double quantize(WgcDtype d, double v) {
    uint32_t tmp = 0;
    put(&tmp, d, 0, v);
    return get(&tmp, d, 0);
}
static int64_t phys_of(const WgcTensor *t, size_t li) {
    int64_t o = t->offset;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
        o += (int64_t)(li % (size_t)t->shape[d]) * t->strides[d];
        li /= (size_t)t->shape[d];
    }
    return o;
}

/* A tensor of `shape` stored with its dims in the order `perm` (outermost
 * first; NULL: as given) after `offset` padding elements, holding `vals`
 * (NULL: uniform in [-1, 1)), quantized to the dtype. */
static Ten make(WgcDtype d, int rank, const int64_t *shape, const int *perm, int64_t offset, const double *vals) {
    Ten a;
    memset(&a, 0, sizeof a);
    a.t.dtype = d;
    a.t.rank = (uint32_t)rank;
    a.n = 1;
    for (int i = 0; i < rank; i++) a.t.shape[i] = shape[i], a.n *= (size_t)shape[i];
    int64_t acc = 1;
    for (int i = rank - 1; i >= 0; i--) {
        int dim = perm ? perm[i] : i;
        a.t.strides[dim] = acc;
        acc *= shape[dim];
    }
    a.t.offset = offset;
    a.phys = (size_t)acc + (size_t)offset + 2;
    a.val = calloc(a.n + 1, sizeof(double));
    void *host = calloc(a.phys + 1, 4);
    for (size_t i = 0; i < a.phys; i++) put(host, d, i, 7); /* padding */
    for (size_t i = 0; i < a.n; i++) {
        a.val[i] = quantize(d, vals ? vals[i] : rng_uniform(-1, 1));
        put(host, d, (size_t)phys_of(&a.t, i), a.val[i]);
    }
    a.buf = upload(env.device, host, ((a.phys * esize(d)) + 3) & ~(size_t)3);
    a.t.buffer = a.buf;
    free(host);
    return a;
}
static void fetch(Ten *a) {
    size_t bytes = ((a->phys * esize(a->t.dtype)) + 3) & ~(size_t)3;
    void *host = malloc(bytes);
    CHECK(wgc_buffer_read(a->buf, 0, host, bytes));
    for (size_t i = 0; i < a->n; i++) a->val[i] = get(host, a->t.dtype, (size_t)phys_of(&a->t, i));
    free(host);
}
static void drop(Ten *a) {
    if (!a->buf) return;
    wgc_buffer_release(a->buf);
    free(a->val);
    memset(a, 0, sizeof *a);
}

typedef struct Case {
    const char *name;
    WgcDtype dt;
    int64_t b, hq, hkv, sq, skv, d;
    int tokens_first; /* q, k, v and out stored (B, S, H, D) */
    uint32_t causal, window, kv_len;
    float scale;
    int mask_kind;          /* 0 none, 1 additive, 2 boolean (u32), 3 boolean (i32) */
    int mask_rank;          /* 2: (Sq, Skv); 4: (B or 1, Hq or 1, Sq or 1, Skv) */
    int64_t mask_shape[4];  /* for rank 4 */
    int lens;               /* per-batch lengths (i32) */
    int special;            /* 1: NaN in a q row and +inf in a k element; 2: keys growing along Skv */
    int aligned;            /* every tensor at offset 0 (16-byte K/V rows: the vectorised kernels) */
} Case;

/* Entry 1 has no valid key. */
static int64_t lens_of(const Case *c, int64_t b) { return b == 1 ? 0 : (b * 1237 + 5) % (c->skv + 1); }

/* The mask's additive value for (b, h, i, j), -inf for a false boolean. */
static double mask_at(const Case *c, const Ten *m, int64_t b, int64_t h, int64_t i, int64_t j) {
    if (!c->mask_kind) return 0;
    int64_t idx;
    if (c->mask_rank == 2) {
        idx = i * c->skv + j;
    } else {
        const int64_t *s = c->mask_shape;
        int64_t co[4] = {b, h, i, j};
        idx = 0;
        for (int k = 0; k < 4; k++) idx = idx * s[k] + (s[k] == 1 ? 0 : co[k]);
    }
    double v = m->val[idx];
    if (c->mask_kind == 1) return v;
    return v != 0 ? 0 : -INFINITY;
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_case(const Case *c) {
    int fails0 = g_failures;
    double t0 = seconds_now();
    int64_t qs[4] = {c->b, c->hq, c->sq, c->d}, ks[4] = {c->b, c->hkv, c->skv, c->d};
    static const int tf[4] = {0, 2, 1, 3};
    const int *perm = c->tokens_first ? tf : NULL;
    int al = !c->aligned;
    Ten q = make(c->dt, 4, qs, perm, 3 * al, NULL);
    Ten k = make(c->dt, 4, ks, perm, 0, NULL);
    Ten v = make(c->dt, 4, ks, perm, 5 * al, NULL);
    Ten o = make(c->dt, 4, qs, perm, 1 * al, NULL);
    int64_t ls[3] = {c->b, c->hq, c->sq};
    Ten lse = make(WGC_DTYPE_F32, 3, ls, NULL, 0, NULL);
    if (c->special == 2) {
        /* Scores that grow with the key: the running max rises tile after tile. */
        double *tmp = malloc(sizeof(double) * (size_t)(c->b * c->hkv * c->skv * c->d));
        for (int64_t i = 0; i < c->b * c->hkv * c->skv * c->d; i++)
            tmp[i] = rng_uniform(0.2, 1) * (double)((i / c->d) % c->skv + 8) / 16;
        drop(&k);
        k = make(c->dt, 4, ks, perm, 0, tmp);
        free(tmp);
    }
    if (c->special == 1) {
        /* NaN in row (0, 0, 1); +inf in key 2 of kv head 0 of batch 0. */
        double *qv = q.val;
        qv[(0 * c->sq + 1) * c->d + 0] = NAN;
        drop(&q);
        double *tmp = malloc(sizeof(double) * (size_t)(c->b * c->hq * c->sq * c->d));
        for (int64_t i = 0; i < c->b * c->hq * c->sq * c->d; i++) tmp[i] = rng_uniform(-1, 1);
        tmp[(0 * c->sq + 1) * c->d + 0] = NAN;
        q = make(c->dt, 4, qs, perm, 3, tmp);
        free(tmp);
        tmp = malloc(sizeof(double) * (size_t)(c->b * c->hkv * c->skv * c->d));
        for (int64_t i = 0; i < c->b * c->hkv * c->skv * c->d; i++) tmp[i] = rng_uniform(-1, 1);
        tmp[2 * c->d + 3] = INFINITY;
        drop(&k);
        k = make(c->dt, 4, ks, perm, 0, tmp);
        free(tmp);
    }
    Ten m;
    memset(&m, 0, sizeof m);
    if (c->mask_kind) {
        int64_t ms2[2] = {c->sq, c->skv};
        const int64_t *ms = c->mask_rank == 2 ? ms2 : c->mask_shape;
        size_t mn = 1;
        for (int i = 0; i < c->mask_rank; i++) mn *= (size_t)ms[i];
        double *mv = malloc(sizeof(double) * mn);
        for (size_t i = 0; i < mn; i++) {
            double r = rng_uniform(0, 1);
            if (c->mask_kind == 1) mv[i] = r < 0.2 ? -INFINITY : rng_uniform(-2, 2);
            else mv[i] = r < 0.3 ? 0 : (c->mask_kind == 3 ? -1 : 5);
        }
        /* A row of every batch entry's first head that no key passes. */
        if (c->mask_rank == 4 && c->mask_shape[2] > 1)
            for (int64_t j = 0; j < c->skv; j++) mv[(size_t)(1 * c->skv + j)] = c->mask_kind == 1 ? -INFINITY : 0;
        WgcDtype mdt = c->mask_kind == 1 ? c->dt : c->mask_kind == 2 ? WGC_DTYPE_U32 : WGC_DTYPE_I32;
        m = make(mdt, c->mask_rank, ms, NULL, 2 * al, mv);
        free(mv);
    }
    Ten lens;
    memset(&lens, 0, sizeof lens);
    if (c->lens) {
        double *lv = malloc(sizeof(double) * (size_t)c->b);
        for (int64_t b = 0; b < c->b; b++) lv[b] = (double)lens_of(c, b);
        int64_t bs[1] = {c->b};
        lens = make(WGC_DTYPE_I32, 1, bs, NULL, 0, lv);
        free(lv);
    }

    WgcAttentionDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.causal = c->causal;
    desc.scale = c->scale;
    desc.window = c->window;
    desc.kv_len = c->kv_len;
    CHECK(wgc_op_attention(env.stream, &q.t, &k.t, &v.t, c->mask_kind ? &m.t : NULL, c->lens ? &lens.t : NULL,
                           &desc, &o.t, &lse.t));
    fetch(&o);
    fetch(&lse);

    double scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)c->d);
    double rel = c->dt == WGC_DTYPE_F16 ? ldexp(1, -11) : c->dt == WGC_DTYPE_BF16 ? ldexp(1, -8) : 0;
    int64_t g = c->hq / c->hkv;
    double *s = malloc(sizeof(double) * (size_t)c->skv);
    int bad = 0;
    for (int64_t b = 0; b < c->b; b++)
        for (int64_t h = 0; h < c->hq; h++)
            for (int64_t i = 0; i < c->sq; i++) {
                int64_t hk = h / g;
                int64_t len = c->kv_len ? (c->kv_len < c->skv ? c->kv_len : c->skv) : c->skv;
                if (c->lens && lens_of(c, b) < len) len = lens_of(c, b);
                int64_t pos = i + (c->causal == 2 ? 0 : len - c->sq);
                double mx = -INFINITY;
                for (int64_t j = 0; j < len; j++) {
                    int ok = !(c->causal && j > pos) && !(c->window && j <= pos - (int64_t)c->window);
                    double dot = 0;
                    for (int64_t e = 0; e < c->d; e++)
                        dot += q.val[((b * c->hq + h) * c->sq + i) * c->d + e] *
                               k.val[((b * c->hkv + hk) * c->skv + j) * c->d + e];
                    s[j] = ok ? dot * scale + mask_at(c, &m, b, h, i, j) : -INFINITY;
                    if (s[j] > mx) mx = s[j];
                }
                double l = 0;
                for (int64_t j = 0; j < len; j++) {
                    s[j] = s[j] == -INFINITY ? 0 : exp(s[j] - mx);
                    l += s[j];
                }
                size_t row = (size_t)((b * c->hq + h) * c->sq + i);
                for (int64_t e = 0; e < c->d; e++) {
                    double acc = 0, mag = 0;
                    for (int64_t j = 0; j < len; j++) {
                        double vv = v.val[((b * c->hkv + hk) * c->skv + j) * c->d + e];
                        acc += s[j] * vv;
                        mag += s[j] * fabs(vv);
                    }
                    double ref = l == 0 ? 0 : acc / l, got = o.val[row * (size_t)c->d + (size_t)e];
                    /* f16 on tensor cores rounds the weights to f16 before they meet v. */
                    double wrel = c->dt == WGC_DTYPE_F16 ? ldexp(1, -11) : 0;
                    double tol = (2e-5 + wrel) * (l == 0 ? 0 : mag / l) + 1e-6 + rel * fabs(ref);
                    int ok = isnan(ref) ? isnan(got) : (isinf(ref) ? got == ref : fabs(got - ref) <= tol);
                    if (!ok && bad++ < 5)
                        fprintf(stderr, "%s: out[%lld,%lld,%lld,%lld] = %.9g, expected %.9g (tol %.3g)\n", c->name,
                                (long long)b, (long long)h, (long long)i, (long long)e, got, ref, tol);
                }
                double lref = l == 0 ? -INFINITY : mx + log(l), lgot = lse.val[row];
                int ok = isnan(lref) ? isnan(lgot)
                                     : (isinf(lref) ? lgot == lref : fabs(lgot - lref) <= 1e-5 * (fabs(lref) + 1));
                if (!ok && bad++ < 5)
                    fprintf(stderr, "%s: lse[%lld,%lld,%lld] = %.9g, expected %.9g\n", c->name, (long long)b,
                            (long long)h, (long long)i, lgot, lref);
            }
    if (bad) {
        fprintf(stderr, "%s: %d mismatches\n", c->name, bad);
        g_failures++;
    }
    free(s);
    drop(&q), drop(&k), drop(&v), drop(&o), drop(&lse), drop(&m), drop(&lens);
    printf("%-40s %s %.2f s\n", c->name, g_failures == fails0 ? "ok" : "FAILED", seconds_now() - t0);
    return g_failures == fails0;
}

static void misuse(void) {
    int64_t qs[4] = {1, 4, 5, 16}, ks[4] = {1, 2, 7, 16}, ls[3] = {1, 4, 5};
    Ten q = make(WGC_DTYPE_F32, 4, qs, NULL, 0, NULL), k = make(WGC_DTYPE_F32, 4, ks, NULL, 0, NULL);
    Ten v = make(WGC_DTYPE_F32, 4, ks, NULL, 0, NULL), o = make(WGC_DTYPE_F32, 4, qs, NULL, 0, NULL);
    Ten lse = make(WGC_DTYPE_F32, 3, ls, NULL, 0, NULL);
    WgcAttentionDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    WgcStream *st = env.stream;
    EXPECT_STATUS(wgc_op_attention(st, NULL, &k.t, &v.t, NULL, NULL, &d, &o.t, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, NULL, &o.t, NULL), WGC_ERROR_NULL_POINTER);
    WgcAttentionDesc bad = d;
    bad.causal = 7;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &bad, &o.t, NULL), WGC_ERROR_INVALID_ARGUMENT);
    bad = d;
    bad.scale = INFINITY;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &bad, &o.t, NULL), WGC_ERROR_INVALID_ARGUMENT);
    bad = d;
    bad.struct_size = 0;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &bad, &o.t, NULL), WGC_ERROR_INVALID_ARGUMENT);
    /* k as q: 2 heads do not hold 4 query heads' shape; q with 3 heads. */
    WgcTensor t = q.t;
    t.shape[1] = 3;
    EXPECT_STATUS(wgc_op_attention(st, &t, &k.t, &v.t, NULL, NULL, &d, &t, NULL), WGC_ERROR_SHAPE_MISMATCH);
    t = v.t;
    t.shape[3] = 8;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &t, NULL, NULL, &d, &o.t, NULL), WGC_ERROR_SHAPE_MISMATCH);
    t = o.t;
    t.dtype = WGC_DTYPE_I32;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &d, &t, NULL), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &d, &q.t, NULL), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &d, &o.t, &o.t), WGC_ERROR_SHAPE_MISMATCH);
    t = lse.t;
    t.dtype = WGC_DTYPE_I32;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &d, &o.t, &t), WGC_ERROR_DTYPE_MISMATCH);
    /* lse in out's buffer. */
    t = lse.t;
    t.buffer = o.buf;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &d, &o.t, &t), WGC_ERROR_INVALID_ARGUMENT);
    t = lse.t;
    t.shape[2] = 4;
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, NULL, &d, &o.t, &t), WGC_ERROR_SHAPE_MISMATCH);
    /* A head dim past 256. */
    int64_t bigq[4] = {1, 1, 1, 300};
    Ten q3 = make(WGC_DTYPE_F32, 4, bigq, NULL, 0, NULL), o3 = make(WGC_DTYPE_F32, 4, bigq, NULL, 0, NULL);
    EXPECT_STATUS(wgc_op_attention(st, &q3.t, &q3.t, &q3.t, NULL, NULL, &d, &o3.t, NULL), WGC_ERROR_INVALID_ARGUMENT);
    /* Rank 2. */
    t = q.t;
    t.rank = 2;
    EXPECT_STATUS(wgc_op_attention(st, &t, &t, &t, NULL, NULL, &d, &t, NULL), WGC_ERROR_INVALID_ARGUMENT);
    /* Masks: a shape that does not broadcast, a dtype that is neither. */
    int64_t ms[2] = {5, 6};
    Ten mk = make(WGC_DTYPE_F32, 2, ms, NULL, 0, NULL);
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, &mk.t, NULL, &d, &o.t, NULL), WGC_ERROR_SHAPE_MISMATCH);
    int64_t ms2[2] = {5, 7};
    Ten mh = make(WGC_DTYPE_F16, 2, ms2, NULL, 0, NULL);
    if (env.info.has_f16)
        EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, &mh.t, NULL, &d, &o.t, NULL), WGC_ERROR_DTYPE_MISMATCH);
    /* kv_lens of the wrong shape. */
    int64_t lsz[1] = {2};
    Ten ln = make(WGC_DTYPE_I32, 1, lsz, NULL, 0, NULL);
    EXPECT_STATUS(wgc_op_attention(st, &q.t, &k.t, &v.t, NULL, &ln.t, &d, &o.t, NULL), WGC_ERROR_SHAPE_MISMATCH);
    /* Nothing was written. */
    CHECK(wgc_stream_synchronize(st));
    double before[4] = {o.val[0], o.val[1], o.val[2], o.val[3]};
    fetch(&o);
    EXPECT(o.val[0] == before[0] && o.val[1] == before[1] && o.val[2] == before[2] && o.val[3] == before[3]);
    drop(&q), drop(&k), drop(&v), drop(&o), drop(&lse), drop(&q3), drop(&o3), drop(&mk), drop(&mh), drop(&ln);
}

int main(void) {
    env = test_env();
    const WgcDtype F32 = WGC_DTYPE_F32;
    Case cases[] = {
        {"plain D80 S37", F32, 2, 3, 3, 37, 37, 80, 0, 0, 0, 0, 0, 0, 0, {0}, 0, 0, 0},
        {"gqa causal Sq<Skv tokens-first", F32, 2, 8, 2, 5, 70, 64, 1, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 0},
        {"top-left causal Sq<Skv D96", F32, 1, 2, 1, 20, 37, 96, 0, 2, 0, 0, 0.3f, 0, 0, {0}, 0, 0, 0},
        {"bottom-right causal Sq>Skv", F32, 1, 2, 2, 40, 19, 32, 0, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 0},
        {"additive mask (Sq,Skv)", F32, 2, 2, 1, 9, 67, 24, 0, 0, 0, 0, 0, 1, 2, {0}, 0, 0, 0},
        {"additive mask broadcast + causal", F32, 2, 4, 2, 9, 9, 16, 0, 1, 0, 0, 0, 1, 4, {2, 1, 9, 9}, 0, 0, 0},
        {"bool mask u32 padding", F32, 3, 2, 2, 6, 45, 40, 1, 0, 0, 0, 0, 2, 4, {3, 1, 1, 45}, 0, 0, 0},
        {"bool mask i32 full", F32, 1, 4, 1, 7, 30, 8, 0, 0, 0, 0, 0, 3, 4, {1, 4, 7, 30}, 0, 0, 0},
        {"sliding window causal", F32, 1, 2, 1, 33, 33, 48, 0, 1, 7, 0, 0, 0, 0, {0}, 0, 0, 0},
        {"valid length + window", F32, 2, 2, 2, 4, 100, 64, 0, 1, 20, 41, 0, 0, 0, {0}, 0, 0, 0},
        {"decode split gqa per-batch lengths", F32, 3, 8, 2, 1, 3000, 128, 1, 1, 0, 0, 0, 0, 0, {0}, 1, 0, 0},
        {"decode Sq 16 D256 long", F32, 1, 1, 1, 16, 9000, 256, 0, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 0},
        {"NaN and inf", F32, 1, 2, 1, 4, 10, 16, 0, 0, 0, 0, 0, 0, 0, {0}, 0, 1, 0},
    };
    size_t nc = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < nc; i++) run_case(&cases[i]);
    /* kv_len past every key's position but below Skv: one valid key. */
    Case one = {"one valid key", F32, 1, 2, 2, 3, 50, 20, 0, 1, 0, 1, 0, 0, 0, {0}, 0, 0, 0};
    run_case(&one);
    if (env.info.has_f16) {
        Case h = {"f16 gqa causal tokens-first", WGC_DTYPE_F16, 2, 4, 2, 21, 50, 80, 1, 1, 0, 0, 0, 1, 4, {2, 1, 21, 50}, 0, 0, 0};
        run_case(&h);
        Case hd = {"f16 decode split", WGC_DTYPE_F16, 2, 4, 4, 1, 1500, 64, 0, 1, 0, 0, 0, 0, 0, {0}, 1, 0, 0};
        run_case(&hd);
        /* Aligned f16 views: the tensor-core prefill kernel where the adapter
         * has cooperative matrices (the portable one elsewhere), and the
         * vectorised decode kernel (Sq <= 16). */
        const WgcDtype H = WGC_DTYPE_F16;
        Case fast[] = {
            {"f16 prefill D64 S130", H, 2, 4, 4, 130, 130, 64, 0, 0, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill gqa causal Sq<Skv D128", H, 1, 8, 2, 100, 161, 128, 0, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill top-left causal D80", H, 1, 2, 2, 77, 90, 80, 0, 2, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill mask broadcast causal D96", H, 2, 4, 2, 40, 40, 96, 0, 1, 0, 0, 0, 1, 4, {2, 1, 40, 40}, 0, 0, 1},
            {"f16 prefill bool mask i32 D64", H, 1, 2, 1, 33, 70, 64, 0, 0, 0, 0, 0, 3, 4, {1, 2, 33, 70}, 0, 0, 1},
            {"f16 prefill window kv_len tokens-first", H, 2, 2, 2, 50, 80, 128, 1, 1, 13, 71, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill per-batch lengths", H, 3, 2, 1, 20, 90, 64, 0, 1, 0, 0, 0, 0, 0, {0}, 1, 0, 1},
            {"f16 prefill growing scores", H, 1, 2, 1, 64, 300, 64, 0, 0, 0, 0, 1.0f, 0, 0, {0}, 0, 2, 1},
            {"f16 prefill NaN and inf", H, 1, 2, 1, 20, 40, 64, 0, 0, 0, 0, 0, 0, 0, {0}, 0, 1, 1},
            {"f16 prefill causal S300 D128", H, 1, 2, 2, 300, 300, 128, 0, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
            /* Sq a multiple of 16 (the wide tensor-core entries' whole row blocks). */
            {"f16 prefill causal S256 gqa D128", H, 1, 4, 2, 256, 256, 128, 0, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill Sq48 mask D64", H, 2, 2, 1, 48, 200, 64, 0, 1, 0, 0, 0, 1, 2, {0}, 0, 0, 1},
            {"f16 prefill window S160 D64", H, 1, 2, 2, 160, 160, 64, 0, 1, 50, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill top-left Sq32 D80", H, 1, 2, 1, 32, 100, 80, 0, 2, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill Sq96 lengths D96", H, 2, 2, 2, 96, 150, 96, 0, 0, 0, 0, 0, 0, 0, {0}, 1, 0, 1},
            /* Head dims past 128: the 64-row tensor-core entries. */
            {"f16 prefill causal S96 gqa D256", H, 1, 4, 2, 96, 96, 256, 0, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 prefill growing scores D256", H, 1, 2, 1, 64, 200, 256, 0, 0, 0, 0, 1.0f, 0, 0, {0}, 0, 2, 1},
            {"f16 prefill bool mask window D192", H, 2, 2, 1, 40, 130, 192, 0, 1, 30, 0, 0, 3, 4, {2, 1, 40, 130}, 0, 0, 1},
            {"f16 prefill lengths D160", H, 3, 2, 2, 70, 90, 160, 0, 0, 0, 0, 0, 0, 0, {0}, 1, 0, 1},
            {"f16 decode gqa lengths D128", H, 3, 8, 2, 1, 3000, 128, 0, 1, 0, 0, 0, 0, 0, {0}, 1, 0, 1},
            {"f16 decode Sq4 mha mask D64", H, 2, 4, 4, 4, 700, 64, 0, 1, 0, 0, 0, 1, 2, {0}, 0, 0, 1},
            {"f16 decode Sq16 gqa window D128", H, 1, 8, 2, 16, 1200, 128, 0, 1, 300, 0, 0, 0, 0, {0}, 0, 0, 1},
            {"f16 decode bool mask D64", H, 2, 4, 1, 2, 500, 64, 0, 0, 0, 0, 0, 2, 4, {2, 1, 1, 500}, 0, 0, 1},
            {"f16 decode NaN and inf D64", H, 1, 2, 1, 4, 40, 64, 0, 0, 0, 0, 0, 0, 0, {0}, 0, 1, 1},
            {"f16 decode D40 tokens-first", H, 2, 6, 3, 3, 333, 40, 1, 1, 0, 0, 0, 0, 0, {0}, 0, 0, 1},
        };
        for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++) run_case(&fast[i]);
    }
    Case bf = {"bf16 gqa causal mask", WGC_DTYPE_BF16, 2, 4, 2, 13, 29, 96, 1, 1, 0, 0, 0, 1, 2, {0}, 0, 0, 0};
    run_case(&bf);
    /* bf16 decode reads K and V as they are (the decode kernel's bf16 words). */
    const WgcDtype B16 = WGC_DTYPE_BF16;
    Case bfd[] = {
        {"bf16 decode gqa lengths D128", B16, 3, 8, 2, 1, 2000, 128, 0, 1, 0, 0, 0, 0, 0, {0}, 1, 0, 1},
        {"bf16 decode Sq4 mask tokens-first D64", B16, 2, 4, 4, 4, 600, 64, 1, 1, 0, 0, 0, 1, 2, {0}, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof bfd / sizeof bfd[0]; i++) run_case(&bfd[i]);
    misuse();
    test_env_release(&env);
    return test_finish("test_attention");
}
