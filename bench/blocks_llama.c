/* A LLaMA-style decoder layer from today's operators: RMSNorm, Q/K/V
 * projections with weights stored (N, K) as checkpoints store them, RoPE
 * (half-split, as Hugging Face's LLaMA), causal attention as
 * QK^T + mask + softmax + PV, the output projection and residual, RMSNorm,
 * the SwiGLU MLP and residual. LLaMA-7B sizes: hidden 4096, 32 heads of
 * 128, MLP 11008; prefill of 512 and 2048 tokens and decode of one token
 * against KV caches of 1k and 8k, f16 and bf16.
 *
 * The KV cache is (positions, heads, head_dim), so the K and V projections
 * of new tokens write straight into it and RoPE turns the keys in place.
 * Operators that take no bf16 (rms_norm, rope, softmax) run in f32 on
 * casts, as a user of the library would.
 *
 * Forms of the same layer, so one binary times each: by default the second
 * residual add and RMSNorm in one pass (`wgc_op_rms_norm_residual`, f16)
 * and SwiGLU as one elementwise expression; WGC_BLOCKS_UNFUSED=1 runs them
 * as separate operators (add, then norm; SiLU, then multiply). Attention is
 * `wgc_op_attention` (no score tensor), except bf16 prefill, which runs
 * QK^T, mask add, softmax and PV through a (H, T, S) score tensor (the
 * operator's bf16 prefill has no tensor-core route);
 * WGC_BLOCKS_ATTENTION=chain or =fused picks one form everywhere.
 *
 * The attention part alone is its own pair of cases at 512 and 2048 tokens
 * (llama_attention_<T>_{fused,chain}): the layer's views of q and the
 * caches, causal, both forms in one run whatever the variable says. */
#include "blocks.h"

typedef struct {
    WgcDtype dt;
    int64_t T, past, S, D, H, Dh, F;
    HT x, g1, g2, wq, wk, wv, wo, wg, wu, wd, kc, vc, mask;
    HT h, q, attn, x2, h2, gate, up, act, out;
    HT scores, probs32, probs;
    HT f32a, f32b; /* (T, D) f32 scratch of the bf16 path */
    WgcExpr *swiglu;   /* silu(gate) * up, built once per layer */
} Layer;

/* Which form runs: read once. */
static int unfused(void) {
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("WGC_BLOCKS_UNFUSED");
        v = e && *e && strcmp(e, "0") != 0;
    }
    return v;
}

/* Whether attention is the fused operator for this dtype and number of
 * new tokens: by default everywhere but bf16 prefill (which runs the
 * operator's portable f32 kernel, 17x slower than the chain at 512 tokens
 * on an H100; bf16 decode has its own kernel); WGC_BLOCKS_ATTENTION=fused
 * or =chain picks one form everywhere. */
static int fused_attention(WgcDtype dt, int64_t T) {
    static int v = -2;
    if (v == -2) {
        const char *e = getenv("WGC_BLOCKS_ATTENTION");
        v = !e || !*e ? -1 : strcmp(e, "chain") != 0;
    }
    return v < 0 ? !(dt == WGC_DTYPE_BF16 && T > 1) : v;
}

static const float ROPE_BASE = 10000.0f;
static const float EPS = 1e-5f;

/* RMSNorm of x (T, D) into y: in place where the dtype has it, else in f32. */
static WgcStatus rms_norm(Layer *L, const HT *x, const HT *g, const HT *y) {
    if (L->dt != WGC_DTYPE_BF16) return wgc_op_rms_norm(g_stream, &x->t, &g->t, 1, EPS, &y->t);
    WgcStatus s = wgc_op_cast(g_stream, &x->t, &L->f32a.t);
    if (s == WGC_OK) s = wgc_op_rms_norm(g_stream, &L->f32a.t, &g->t, 1, EPS, &L->f32b.t);
    if (s == WGC_OK) s = wgc_op_cast(g_stream, &L->f32b.t, &y->t);
    return s;
}

/* RoPE in place on `t` (T, H, Dh) at positions past.. */
static WgcStatus rope(Layer *L, const WgcTensor *t) {
    WgcRopeDesc d = {0};
    d.struct_size = sizeof d;
    d.layout = WGC_ROPE_LAYOUT_HALF_SPLIT;
    d.seq_axis = 0;
    d.base = ROPE_BASE;
    d.position_offset = (uint32_t)L->past;
    if (L->dt != WGC_DTYPE_BF16) return wgc_op_rope(g_stream, t, &d, t);
    int64_t shape[3] = {L->T, L->H, L->Dh}, strides[3] = {L->D, L->Dh, 1};
    WgcTensor a = view_of(&L->f32a, 3, shape, strides, 0), b = view_of(&L->f32b, 3, shape, strides, 0);
    WgcStatus s = wgc_op_cast(g_stream, t, &a);
    if (s == WGC_OK) s = wgc_op_rope(g_stream, &a, &d, &b);
    if (s == WGC_OK) s = wgc_op_cast(g_stream, &b, t);
    return s;
}

/* y (T, N) = x (T, K) w^T, w stored (N, K). */
static WgcStatus linear(const WgcTensor *x, const HT *w, const WgcTensor *y) {
    return wgc_op_gemm(g_stream, 1.0f, x, 0, &w->t, 1, 0.0f, y);
}

/* Causal attention of one layer, per head: o = softmax(q k^T / sqrt(Dh) +
 * mask) v, with q (H, T, Dh), k and v (H, S, Dh), o (H, T, Dh), any
 * strides; `mask` (T, S) f32 or NULL (decode: every key is visible).
 * Scores and softmax in f32, probabilities rounded to the dtype for PV.
 * This is the one function a fused attention operator replaces. */
static WgcStatus attention(Layer *L, const WgcTensor *q, const WgcTensor *k, const WgcTensor *v, const WgcTensor *mask,
                           const WgcTensor *o) {
    float scale = 1.0f / sqrtf((float)L->Dh);
    WgcStatus s = wgc_op_gemm(g_stream, scale, q, 0, k, 1, 0.0f, &L->scores.t);
    if (s == WGC_OK && mask) s = wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, &L->scores.t, mask, &L->scores.t);
    if (s == WGC_OK) s = wgc_op_softmax(g_stream, &L->scores.t, -1, &L->probs32.t);
    if (s == WGC_OK) s = wgc_op_cast(g_stream, &L->probs32.t, &L->probs.t);
    if (s == WGC_OK) s = wgc_op_matmul(g_stream, &L->probs.t, v, o);
    return s;
}

/* The fused form of `attention`: causal from the bottom right (each new
 * token sees the cache and itself), no score tensor. */
static WgcStatus attention_fused(Layer *L, const WgcTensor *q, const WgcTensor *k, const WgcTensor *v,
                                 const WgcTensor *o) {
    WgcAttentionDesc d = {0};
    d.struct_size = sizeof d;
    d.causal = L->T > 1 ? WGC_ATTENTION_CAUSAL_BOTTOM_RIGHT : WGC_ATTENTION_CAUSAL_NONE;
    return wgc_op_attention(g_stream, q, k, v, NULL, NULL, &d, o, NULL);
}

/* out = silu(gate) * up in one kernel. */
static WgcStatus swiglu(Layer *L, const HT *gate, const HT *up, const HT *out) {
    if (!L->swiglu) {
        uint32_t g, u, sg, y;
        WgcStatus s = wgc_expr_create(&L->swiglu);
        if (s == WGC_OK) s = wgc_expr_input(L->swiglu, L->dt, &g);
        if (s == WGC_OK) s = wgc_expr_input(L->swiglu, L->dt, &u);
        if (s == WGC_OK) s = wgc_expr_unary(L->swiglu, WGC_UNARY_OP_SILU, g, &sg);
        if (s == WGC_OK) s = wgc_expr_binary(L->swiglu, WGC_BINARY_OP_MUL, sg, u, &y);
        if (s == WGC_OK) s = wgc_expr_output(L->swiglu, y);
        if (s != WGC_OK) return s;
    }
    WgcTensor in[2] = {gate->t, up->t};
    return wgc_op_expr(g_stream, L->swiglu, in, 2, &out->t, 1, NULL, 0);
}

static WgcStatus run_layer(void *p) {
    Layer *L = p;
    int64_t T = L->T, S = L->S, D = L->D, H = L->H, Dh = L->Dh;
    WgcStatus s = rms_norm(L, &L->x, &L->g1, &L->h);
    /* New keys and values go straight into the caches' rows past.. */
    int64_t rows[2] = {T, D}, row_strides[2] = {D, 1};
    WgcTensor k_new = view_of(&L->kc, 2, rows, row_strides, L->past * D);
    WgcTensor v_new = view_of(&L->vc, 2, rows, row_strides, L->past * D);
    if (s == WGC_OK) s = linear(&L->h.t, &L->wq, &L->q.t);
    if (s == WGC_OK) s = linear(&L->h.t, &L->wk, &k_new);
    if (s == WGC_OK) s = linear(&L->h.t, &L->wv, &v_new);
    int64_t tok[3] = {T, H, Dh}, tok_strides[3] = {D, Dh, 1};
    WgcTensor q_tok = view_of(&L->q, 3, tok, tok_strides, 0), k_tok = view_of(&L->kc, 3, tok, tok_strides, L->past * D);
    if (s == WGC_OK) s = rope(L, &q_tok);
    if (s == WGC_OK) s = rope(L, &k_tok);
    /* Heads first: (H, T, Dh) over (T, H, Dh) storage, no copies. */
    int64_t qh[3] = {H, T, Dh}, kh[3] = {H, S, Dh}, head_strides[3] = {Dh, D, 1};
    WgcTensor q = view_of(&L->q, 3, qh, head_strides, 0), o = view_of(&L->attn, 3, qh, head_strides, 0);
    WgcTensor k = view_of(&L->kc, 3, kh, head_strides, 0), v = view_of(&L->vc, 3, kh, head_strides, 0);
    int fused = !unfused();
    if (s == WGC_OK)
        s = fused_attention(L->dt, T) ? attention_fused(L, &q, &k, &v, &o)
                              : attention(L, &q, &k, &v, T > 1 ? &L->mask.t : NULL, &o);
    if (fused && L->dt == WGC_DTYPE_F16) {
        /* h is free once q, k and v are made: the projection goes there. */
        if (s == WGC_OK) s = linear(&L->attn.t, &L->wo, &L->h.t);
        if (s == WGC_OK) s = wgc_op_rms_norm_residual(g_stream, &L->h.t, &L->x.t, &L->g2.t, 1, EPS, &L->h2.t, &L->x2.t);
    } else {
        if (s == WGC_OK) s = linear(&L->attn.t, &L->wo, &L->x2.t);
        if (s == WGC_OK) s = wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, &L->x2.t, &L->x.t, &L->x2.t);
        if (s == WGC_OK) s = rms_norm(L, &L->x2, &L->g2, &L->h2);
    }
    if (s == WGC_OK) s = linear(&L->h2.t, &L->wg, &L->gate.t);
    if (s == WGC_OK) s = linear(&L->h2.t, &L->wu, &L->up.t);
    if (fused) {
        /* An expression's output shares no buffer with its inputs. */
        if (s == WGC_OK) s = swiglu(L, &L->gate, &L->up, &L->act);
    } else {
        if (s == WGC_OK) s = wgc_op_unary(g_stream, WGC_UNARY_OP_SILU, &L->gate.t, &L->gate.t);
        if (s == WGC_OK) s = wgc_op_binary(g_stream, WGC_BINARY_OP_MUL, &L->gate.t, &L->up.t, &L->act.t);
    }
    if (s == WGC_OK) s = linear(&L->act.t, &L->wd, &L->out.t);
    if (s == WGC_OK) s = wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, &L->out.t, &L->x2.t, &L->out.t);
    return s;
}

/* ---- the reference, in double ---- */

/* y (n) = w (n, k) x (k). */
static void ref_linear(const float *w, const double *x, int64_t n, int64_t k, double *y) {
    for (int64_t i = 0; i < n; i++) {
        const float *r = w + i * k;
        double acc = 0;
        for (int64_t j = 0; j < k; j++) acc += r[j] * x[j];
        y[i] = acc;
    }
}

static void ref_rms_norm(const double *x, const float *g, int64_t n, double *y) {
    double ss = 0;
    for (int64_t i = 0; i < n; i++) ss += x[i] * x[i];
    double r = 1.0 / sqrt(ss / n + EPS);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * r * g[i];
}

static void ref_rope(double *x, int64_t H, int64_t Dh, int64_t pos) {
    for (int64_t h = 0; h < H; h++)
        for (int64_t i = 0; i < Dh / 2; i++) {
            double theta = pow(ROPE_BASE, -2.0 * i / Dh), c = cos(pos * theta), sn = sin(pos * theta);
            double *a = x + h * Dh + i, *b = a + Dh / 2, xa = *a, xb = *b;
            *a = xa * c - xb * sn;
            *b = xa * sn + xb * c;
        }
}

/* Check row t: its new key and value (in the caches the GPU wrote), then
 * the layer's output from its attention over the caches' rows 0..past+t. */
static int check_row(Layer *L, int64_t t, const float *kc, const float *vc, const float *out, double tol) {
    int64_t D = L->D, H = L->H, Dh = L->Dh, F = L->F, pos = L->past + t;
    double *x = malloc(D * sizeof *x), *h = malloc(D * sizeof *h), *q = malloc(D * sizeof *q);
    double *kv = malloc(D * sizeof *kv), *o = malloc(D * sizeof *o), *x2 = malloc(D * sizeof *x2);
    double *g = malloc(F * sizeof *g), *u = malloc(F * sizeof *u), *y = malloc(D * sizeof *y);
    double *p = malloc((pos + 1) * sizeof *p);
    int bad = 0;
    char what[64];
    for (int64_t i = 0; i < D; i++) x[i] = L->x.host[t * D + i];
    ref_rms_norm(x, L->g1.host, D, h);
    ref_linear(L->wk.host, h, D, D, kv);
    ref_rope(kv, H, Dh, pos);
    snprintf(what, sizeof what, "key %lld", (long long)pos);
    bad += check_close(what, kc + pos * D, kv, D, tol, tol);
    ref_linear(L->wv.host, h, D, D, kv);
    snprintf(what, sizeof what, "value %lld", (long long)pos);
    bad += check_close(what, vc + pos * D, kv, D, tol, tol);
    ref_linear(L->wq.host, h, D, D, q);
    ref_rope(q, H, Dh, pos);
    for (int64_t hd = 0; hd < H; hd++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= pos; j++) {
            double acc = 0;
            for (int64_t i = 0; i < Dh; i++) acc += q[hd * Dh + i] * kc[j * D + hd * Dh + i];
            p[j] = acc / sqrt((double)Dh);
            mx = p[j] > mx ? p[j] : mx;
        }
        for (int64_t j = 0; j <= pos; j++) sum += (p[j] = exp(p[j] - mx));
        for (int64_t i = 0; i < Dh; i++) {
            double acc = 0;
            for (int64_t j = 0; j <= pos; j++) acc += p[j] * vc[j * D + hd * Dh + i];
            o[hd * Dh + i] = acc / sum;
        }
    }
    ref_linear(L->wo.host, o, D, D, x2);
    for (int64_t i = 0; i < D; i++) x2[i] += x[i];
    ref_rms_norm(x2, L->g2.host, D, h);
    ref_linear(L->wg.host, h, F, D, g);
    ref_linear(L->wu.host, h, F, D, u);
    for (int64_t i = 0; i < F; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
    ref_linear(L->wd.host, g, D, F, y);
    for (int64_t i = 0; i < D; i++) y[i] += x2[i];
    snprintf(what, sizeof what, "output row %lld", (long long)t);
    bad += check_close(what, out + t * D, y, D, tol, tol);
    free(x), free(h), free(q), free(kv), free(o), free(x2), free(g), free(u), free(y), free(p);
    return bad;
}

static void layer_case(const char *name, WgcDtype dt, int64_t T, int64_t past, const char *label) {
    int64_t D = SZ(4096, 64), H = SZ(32, 4), F = SZ(11008, 176), Dh = D / H, S = past + T;
    char full[64];
    snprintf(full, sizeof full, "%s_%s", name, dtype_name(dt));
    Case c = {full, T > 1 ? "block/llama-prefill" : "block/llama-decode", dtype_name(dt), "", "block", 0, 0};
    snprintf(c.size, sizeof c.size, "%s T=%lld S=%lld D=%lld H=%lld F=%lld", label, (long long)T, (long long)S,
             (long long)D, (long long)H, (long long)F);
    c.amount = 2.0 * T * (4.0 * D * D + 3.0 * D * F) + 4.0 * H * T * S * Dh;
    if (!case_begin(&c)) return;
    Layer L = {.dt = dt, .T = T, .past = past, .S = S, .D = D, .H = H, .Dh = Dh, .F = F};
    WgcDtype norm_dt = dt == WGC_DTYPE_BF16 ? WGC_DTYPE_F32 : dt;
    int64_t td[2] = {T, D}, dd[2] = {D, D}, fd[2] = {F, D}, df[2] = {D, F}, d1[1] = {D}, sd[2] = {S, D};
    int64_t tf[2] = {T, F}, hts[3] = {H, T, S}, ts[2] = {T, S};
    double wd = sqrt(3.0 / D), wf = sqrt(3.0 / F);
    L.x = ht_scaled(dt, 2, td, 1.0, 0.0);
    L.g1 = ht_scaled(norm_dt, 1, d1, 0.1, 1.0);
    L.g2 = ht_scaled(norm_dt, 1, d1, 0.1, 1.0);
    L.wq = ht_scaled(dt, 2, dd, wd, 0), L.wk = ht_scaled(dt, 2, dd, wd, 0), L.wv = ht_scaled(dt, 2, dd, wd, 0);
    L.wo = ht_scaled(dt, 2, dd, wd, 0);
    L.wg = ht_scaled(dt, 2, fd, wd, 0), L.wu = ht_scaled(dt, 2, fd, wd, 0), L.wd = ht_scaled(dt, 2, df, wf, 0);
    /* The cache: earlier tokens' keys and values at random, the new rows
     * written by the layer. */
    L.kc = ht_scaled(dt, 2, sd, 1.0, 0), L.vc = ht_scaled(dt, 2, sd, 1.0, 0);
    if (T > 1 && !fused_attention(dt, T)) {
        float *m = malloc(T * S * sizeof *m);
        for (int64_t i = 0; i < T; i++)
            for (int64_t j = 0; j < S; j++) m[i * S + j] = j <= past + i ? 0.0f : -INFINITY;
        L.mask = ht_values(WGC_DTYPE_F32, 2, ts, m);
        free(m);
    }
    L.h = ht_empty(dt, 2, td), L.q = ht_empty(dt, 2, td), L.attn = ht_empty(dt, 2, td);
    L.x2 = ht_empty(dt, 2, td), L.h2 = ht_empty(dt, 2, td), L.out = ht_empty(dt, 2, td);
    L.gate = ht_empty(dt, 2, tf), L.up = ht_empty(dt, 2, tf), L.act = ht_empty(dt, 2, tf);
    if (!fused_attention(dt, T)) { /* the score tensors only the chain needs */
        L.scores = ht_empty(WGC_DTYPE_F32, 3, hts), L.probs32 = ht_empty(WGC_DTYPE_F32, 3, hts);
        L.probs = ht_empty(dt, 3, hts);
    }
    if (dt == WGC_DTYPE_BF16) L.f32a = ht_empty(WGC_DTYPE_F32, 2, td), L.f32b = ht_empty(WGC_DTYPE_F32, 2, td);

    int ok = case_first_run(&c, run_layer, &L);
    if (ok) {
        float *kc = ht_read(&L.kc), *vc = ht_read(&L.vc), *out = ht_read(&L.out);
        /* Every row at small sizes; the first, a middle and the last at full size. */
        double tol = dt == WGC_DTYPE_BF16 ? 0.08 : 0.03;
        int bad = 0;
        size_t picks[8];
        size_t n = sample_rows((size_t)T, g_small ? 8 : 3, picks);
        for (size_t i = 0; i < n; i++) bad += check_row(&L, (int64_t)picks[i], kc, vc, out, tol);
        free(kc), free(vc), free(out);
        block_report(&c, run_layer, &L, bad == 0);
        if (bad == 0 && T == 1) block_replay(&c, run_layer, &L, &L.out); /* decode: one step per replay */
    }
    HT *all[] = {&L.x, &L.g1, &L.g2, &L.wq, &L.wk, &L.wv, &L.wo, &L.wg, &L.wu, &L.wd, &L.kc, &L.vc, &L.mask, &L.h,
                 &L.q, &L.attn, &L.x2, &L.h2, &L.gate, &L.up, &L.act, &L.out, &L.scores, &L.probs32, &L.probs, &L.f32a,
                 &L.f32b};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i]->buf) ht_free(all[i]);
    wgc_expr_release(L.swiglu);
}

/* ---- the attention part alone ---- */

typedef struct {
    Layer L;
    int chain;
} AttOnly;

/* The layer's attention step on its heads-first views of q and the caches. */
static WgcStatus run_attention_only(void *p) {
    AttOnly *a = p;
    Layer *L = &a->L;
    int64_t qh[3] = {L->H, L->T, L->Dh}, kh[3] = {L->H, L->S, L->Dh}, head_strides[3] = {L->Dh, L->D, 1};
    WgcTensor q = view_of(&L->q, 3, qh, head_strides, 0), o = view_of(&L->attn, 3, qh, head_strides, 0);
    WgcTensor k = view_of(&L->kc, 3, kh, head_strides, 0), v = view_of(&L->vc, 3, kh, head_strides, 0);
    return a->chain ? attention(L, &q, &k, &v, &L->mask.t, &o) : attention_fused(L, &q, &k, &v, &o);
}

/* Sampled rows of the attention output against float64. */
static int check_attention_rows(Layer *L, const float *o, double tol) {
    int64_t D = L->D, H = L->H, Dh = L->Dh;
    size_t picks[8];
    size_t n = sample_rows((size_t)L->T, g_small ? 8 : 3, picks);
    double *p = malloc(L->S * sizeof *p), *ref = malloc(D * sizeof *ref);
    int bad = 0;
    for (size_t r = 0; r < n; r++) {
        int64_t t = (int64_t)picks[r], pos = L->past + t;
        for (int64_t hd = 0; hd < H; hd++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j <= pos; j++) {
                double acc = 0;
                for (int64_t i = 0; i < Dh; i++)
                    acc += (double)L->q.host[t * D + hd * Dh + i] * L->kc.host[j * D + hd * Dh + i];
                p[j] = acc / sqrt((double)Dh);
                mx = p[j] > mx ? p[j] : mx;
            }
            for (int64_t j = 0; j <= pos; j++) sum += (p[j] = exp(p[j] - mx));
            for (int64_t i = 0; i < Dh; i++) {
                double acc = 0;
                for (int64_t j = 0; j <= pos; j++) acc += p[j] * L->vc.host[j * D + hd * Dh + i];
                ref[hd * Dh + i] = acc / sum;
            }
        }
        char what[64];
        snprintf(what, sizeof what, "attention row %lld", (long long)t);
        bad += check_close(what, o + t * D, ref, D, tol, tol);
    }
    free(p), free(ref);
    return bad;
}

static void attention_case(WgcDtype dt, int64_t tokens, int64_t T, int chain) {
    int64_t D = SZ(4096, 64), H = SZ(32, 4), Dh = D / H, S = T;
    char full[64];
    snprintf(full, sizeof full, "llama_attention_%lld_%s_%s", (long long)tokens, chain ? "chain" : "fused",
             dtype_name(dt));
    Case c = {full, "block/llama-attention", dtype_name(dt), "", "block", 0, 0};
    snprintf(c.size, sizeof c.size, "causal T=%lld H=%lld Dh=%lld, %s", (long long)T, (long long)H, (long long)Dh,
             chain ? "QK^T + mask + softmax + PV" : "wgc_op_attention");
    c.amount = 2.0 * H * T * S * Dh; /* the causal half of 4 H T S Dh */
    if (!case_begin(&c)) return;
    AttOnly a = {.chain = chain};
    Layer *L = &a.L;
    *L = (Layer){.dt = dt, .T = T, .past = 0, .S = S, .D = D, .H = H, .Dh = Dh};
    int64_t td[2] = {T, D}, hts[3] = {H, T, S}, ts[2] = {T, S};
    L->q = ht_scaled(dt, 2, td, 1.0, 0), L->kc = ht_scaled(dt, 2, td, 1.0, 0), L->vc = ht_scaled(dt, 2, td, 1.0, 0);
    L->attn = ht_empty(dt, 2, td);
    if (chain) {
        float *m = malloc(T * S * sizeof *m);
        for (int64_t i = 0; i < T; i++)
            for (int64_t j = 0; j < S; j++) m[i * S + j] = j <= i ? 0.0f : -INFINITY;
        L->mask = ht_values(WGC_DTYPE_F32, 2, ts, m);
        free(m);
        L->scores = ht_empty(WGC_DTYPE_F32, 3, hts), L->probs32 = ht_empty(WGC_DTYPE_F32, 3, hts);
        L->probs = ht_empty(dt, 3, hts);
    }
    int ok = case_first_run(&c, run_attention_only, &a);
    if (ok) {
        float *o = ht_read(&L->attn);
        int bad = check_attention_rows(L, o, dt == WGC_DTYPE_BF16 ? 0.03 : 0.01);
        free(o);
        block_report(&c, run_attention_only, &a, bad == 0);
    }
    HT *all[] = {&L->q, &L->kc, &L->vc, &L->attn, &L->mask, &L->scores, &L->probs32, &L->probs};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i]->buf) ht_free(all[i]);
}

void blocks_llama(void) {
    WgcDtype dts[2] = {WGC_DTYPE_F16, WGC_DTYPE_BF16};
    for (int i = 0; i < 2; i++)
        for (int chain = 0; chain < 2; chain++) {
            attention_case(dts[i], 512, SZ(512, 13), chain);
            attention_case(dts[i], 2048, SZ(2048, 29), chain);
        }
    for (int i = 0; i < 2; i++) {
        layer_case("llama_prefill_512", dts[i], SZ(512, 13), 0, "prefill 512");
        layer_case("llama_prefill_2048", dts[i], SZ(2048, 29), 0, "prefill 2048");
        layer_case("llama_decode_1k", dts[i], 1, SZ(1024, 37), "decode, KV cache 1k");
        layer_case("llama_decode_8k", dts[i], 1, SZ(8192, 70), "decode, KV cache 8k");
    }
}
