/* Indexing and per-row algorithms of transformer inference: embedding
 * lookup, gather, rotary embedding, top-k over vocabulary rows, cumsum. */
#include <math.h>

#include "cases.h"

enum { I_EMBED, I_GATHER, I_ROPE, I_TOPK, I_CUMSUM };

typedef struct {
    int kind;
    HT x, idx, out, out2;
    WgcRopeDesc rope;
    uint32_t k;
    int32_t axis;
} Ix;

static WgcStatus run_ix(void *p) {
    Ix *e = p;
    switch (e->kind) {
    case I_EMBED: return OP(wgc_op_embedding, g_stream, &e->x.t, &e->idx.t, &e->out.t);
    case I_GATHER: return OP(wgc_op_gather, g_stream, &e->x.t, -1, &e->idx.t, &e->out.t);
    case I_ROPE: return OP(wgc_op_rope, g_stream, &e->x.t, &e->rope, &e->out.t);
    case I_TOPK: return OP(wgc_op_topk, g_stream, &e->x.t, e->k, 1, &e->out.t, &e->out2.t);
    default: return OP(wgc_op_cumsum, g_stream, &e->x.t, e->axis, &e->out.t);
    }
}

static HT random_indices(uint32_t rank, const int64_t *shape, int64_t bound) {
    size_t n = 1;
    for (uint32_t d = 0; d < rank; d++) n *= (size_t)shape[d];
    float *v = malloc(n * sizeof(float) + 4);
    /* In double and clamped: frand() near 1 rounds frand() + 1 to 2 in float (index `bound`). */
    for (size_t i = 0; i < n; i++) {
        int64_t ix = (int64_t)(((double)frand() + 1) * 0.5 * (double)bound);
        v[i] = (float)(ix < bound ? ix : bound - 1);
    }
    HT h = ht_values(WGC_DTYPE_I32, rank, shape, v);
    free(v);
    return h;
}

static int cmp_desc(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

/* Rows (the last dim, `C` long) to check, each against a host computation. */
static int check_ix(const Ix *e) {
    float *got = ht_read(&e->out), *gi = e->kind == I_TOPK ? ht_read(&e->out2) : NULL;
    const WgcTensor *o = &e->out.t, *x = &e->x.t;
    int64_t C = o->shape[o->rank - 1], XC = x->shape[x->rank - 1];
    size_t R = e->out.n / (size_t)C, rows[64], nr = sample_rows(R, 64, rows);
    double slack = f16_slack(o->dtype);
    int bad = 0;
    float *sorted = e->kind == I_TOPK ? malloc(XC * sizeof(float)) : NULL;
    for (size_t s = 0; s < nr; s++) {
        size_t r = rows[s];
        const float *g = got + r * C;
        if (e->kind == I_EMBED) {
            const float *src = e->x.host + (size_t)e->idx.host[r] * C;
            for (int64_t j = 0; j < C; j++) bad += g[j] != src[j];
        } else if (e->kind == I_GATHER) {
            for (int64_t j = 0; j < C; j++) bad += g[j] != e->x.host[r * XC + (size_t)e->idx.host[r * C + j]];
        } else if (e->kind == I_ROPE) {
            /* row r of (B, S, H, D): position s = (r / H) % S, half-split pairs (i, i + D/2) */
            int64_t H = x->shape[2], S = x->shape[1], D = C, p = (int64_t)(r / (size_t)H) % S;
            const float *in = e->x.host + r * C;
            for (int64_t i = 0; i < D / 2; i++) {
                double th = (double)p * pow(e->rope.base, -2.0 * i / D), cs = cos(th), sn = sin(th);
                /* f16 results below 2^-14 may be flushed to 0 (the header's subnormal rule). */
                double a = in[i], b = in[i + D / 2], tol = 2e-6 * (fabs(a) + fabs(b)) + 1e-7 + (slack ? 0x1p-14 : 0);
                bad += !close_to(g[i], a * cs - b * sn, tol, slack) + !close_to(g[i + D / 2], a * sn + b * cs, tol, slack);
            }
        } else if (e->kind == I_TOPK) {
            memcpy(sorted, e->x.host + r * XC, XC * sizeof(float));
            qsort(sorted, (size_t)XC, sizeof(float), cmp_desc);
            for (int64_t j = 0; j < C; j++)
                bad += g[j] != sorted[j] || e->x.host[r * XC + (size_t)gi[r * C + j]] != g[j];
        } else {
            double acc = 0, mag = 0;
            for (int64_t j = 0; j < C; j++) {
                acc += e->x.host[r * C + j];
                mag += fabs(e->x.host[r * C + j]);
                bad += !close_to(g[j], acc, 1e-6 * sqrt((double)(j + 1)) * mag + 1e-7, slack);
            }
        }
    }
    if (bad) fprintf(stderr, "%d entries wrong\n", bad);
    free(got);
    free(gi);
    free(sorted);
    return bad;
}

static void ix_time(Case *c, Ix *e) {
    if (case_first_run(c, run_ix, e)) {
        int bad = check_ix(e);
        case_time(c, run_ix, e, !bad, 10);
    }
    HT *all[4] = {&e->x, &e->idx, &e->out, &e->out2};
    for (int i = 0; i < 4; i++)
        if (all[i]->buf) ht_free(all[i]);
}

void cases_index(void) {
    const WgcDtype F32 = WGC_DTYPE_F32, F16 = WGC_DTYPE_F16;
    {
        int64_t V = SZ(32000, 301), D = SZ(4096, 260), T = SZ(8192, 77), ts[2] = {V, D}, os[2] = {T, D};
        Case c = {"embedding_f16", "index/embedding", "f16", "", "bytes", 0, 0};
        snprintf(c.size, sizeof c.size, "table %lldx%lld, %lld tokens", (long long)V, (long long)D, (long long)T);
        c.in_bytes = 2.0 * (double)(V * D);
        c.amount = 2 * 2.0 * (double)(T * D);
        if (case_begin(&c)) {
            Ix e = {I_EMBED, ht_random(F16, 2, ts), random_indices(1, &T, V), ht_empty(F16, 2, os), {0}, {0}, 0, 0};
            ix_time(&c, &e);
        }
    }
    {
        int64_t R = SZ(8192, 37), C = SZ(4096, 301), K = SZ(1024, 77), xs[2] = {R, C}, is[2] = {R, K};
        Case c = {"gather_last_f32", "index/gather", "f32", "", "bytes", 0, 0};
        snprintf(c.size, sizeof c.size, "%lldx%lld by %lldx%lld", (long long)R, (long long)C, (long long)R, (long long)K);
        c.in_bytes = 4.0 * (double)(R * C + R * K);
        c.amount = 4.0 * 3 * (double)(R * K);
        if (case_begin(&c)) {
            Ix e = {I_GATHER, ht_random(F32, 2, xs), random_indices(2, is, C), ht_empty(F32, 2, is), {0}, {0}, 0, 0};
            ix_time(&c, &e);
        }
    }
    for (int h = 0; h < 2; h++) {
        WgcDtype dt = h ? F32 : F16;
        int64_t s[4] = {SZ(8, 2), SZ(2048, 37), SZ(32, 3), 128};
        Case c = {h ? "rope_f32" : "rope_f16", "rope/half-split", h ? "f32" : "f16", "", "bytes", 0, 0};
        fmt_shape(c.size, sizeof c.size, 4, s);
        strcat(c.size, " (B,S,H,D)");
        c.in_bytes = (double)(s[0] * s[1] * s[2] * s[3]) * dtype_size(dt);
        c.amount = 2 * c.in_bytes;
        if (!case_begin(&c)) continue;
        Ix e = {I_ROPE, ht_random(dt, 4, s), {0}, ht_empty(dt, 4, s), {0}, {0}, 0, 0};
        e.rope.struct_size = sizeof e.rope;
        e.rope.layout = WGC_ROPE_LAYOUT_HALF_SPLIT;
        e.rope.seq_axis = 1;
        e.rope.base = 10000.0f;
        ix_time(&c, &e);
    }
    for (int t = 0; t < 2; t++) {
        int64_t K = t ? 256 : 50;
        int64_t R = SZ(32, 3), V = SZ(128256, 70001), xs[2] = {R, V}, os[2] = {R, K};
        Case c = {t ? "topk256_vocab_f32" : "topk50_vocab_f32", "topk/vocab", "f32", "", "bytes", 0, 0};
        snprintf(c.size, sizeof c.size, "%lldx%lld k=%lld", (long long)R, (long long)V, (long long)K);
        c.in_bytes = c.amount = 4.0 * (double)(R * V);
        if (case_begin(&c)) {
            Ix e = {I_TOPK, ht_random(F32, 2, xs), {0}, ht_empty(F32, 2, os), ht_empty(WGC_DTYPE_I32, 2, os), {0}, (uint32_t)K, 0};
            ix_time(&c, &e);
        }
    }
    {
        int64_t s[2] = {SZ(1024, 9), SZ(32000, 32000)};
        Case c = {"cumsum_rows32k_f32", "scan/rows", "f32", "", "bytes", 0, 0};
        fmt_shape(c.size, sizeof c.size, 2, s);
        c.in_bytes = 4.0 * (double)(s[0] * s[1]);
        c.amount = 2 * c.in_bytes;
        if (case_begin(&c)) {
            Ix e = {I_CUMSUM, ht_random(F32, 2, s), {0}, ht_empty(F32, 2, s), {0}, {0}, 0, -1};
            ix_time(&c, &e);
        }
    }
}
