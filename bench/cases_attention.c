/* Scaled dot-product attention (wgc_op_attention): prefill f16, causal and
 * not, D 64 and 128, S 512-8192 (B8 H32, B2 at 8192; D 256 at S 512 and
 * 2048), against the unfused
 * path of three operators (QK^T by wgc_op_matmul, causal mask add, softmax,
 * PV by wgc_op_matmul) at S 512 (B8) and 2048 (B1: its scores must fit one
 * binding), compared by FLOP rate; decode (Sq 1 against KV caches
 * of 1k-32k, GQA 32/8 and MHA 32/32, batch 1 and 8) reported as KV bytes
 * read. Each case checks sampled rows against a double-precision reference
 * before timing. bench/torch_attention.py is the PyTorch twin. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cases.h"

#if defined(__GNUC__) && !defined(_WIN32)
#pragma weak wgc_op_attention
#endif

typedef struct {
    HT q, k, v, o;
    WgcAttentionDesc d;
    /* unfused: scores, masked scores, probabilities, the causal mask */
    HT s, sm, p, mask;
    WgcTensor kt, q3, v3, o3;
    int unfused, causal;
} Att;

static WgcStatus run_fused(void *p) {
    Att *a = p;
    return OP(wgc_op_attention, g_stream, &a->q.t, &a->k.t, &a->v.t, NULL, NULL, &a->d, &a->o.t, NULL);
}

static WgcStatus run_unfused(void *p) {
    Att *a = p;
    WgcStatus st = OP(wgc_op_matmul, g_stream, &a->q3, &a->kt, &a->s.t);
    if (st != WGC_OK) return st;
    const WgcTensor *scores = &a->s.t;
    if (a->causal) {
        st = OP(wgc_op_binary, g_stream, WGC_BINARY_OP_ADD, &a->s.t, &a->mask.t, &a->sm.t);
        if (st != WGC_OK) return st;
        scores = &a->sm.t;
    }
    st = OP(wgc_op_softmax, g_stream, scores, -1, &a->p.t);
    if (st != WGC_OK) return st;
    return OP(wgc_op_matmul, g_stream, &a->p.t, &a->v3, &a->o3);
}

/* Sampled rows of out against float64 (q pre-scaled by 1/sqrt(D)). */
static int check_rows(const Att *a, int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Skv, int64_t D) {
    float *got = ht_read(&a->o);
    size_t picks[24], k = sample_rows((size_t)(B * Hq * Sq), 24, picks);
    double *w = malloc(sizeof(double) * (size_t)Skv);
    int bad = 0;
    double slack = f16_slack(a->q.t.dtype);
    for (size_t r = 0; r < k; r++) {
        int64_t row = (int64_t)picks[r], i = row % Sq, h = (row / Sq) % Hq, b = row / (Sq * Hq);
        int64_t hk = h / (Hq / Hkv), pos = i + Skv - Sq;
        const float *q = a->q.host + row * D;
        double mx = -INFINITY, l = 0;
        for (int64_t j = 0; j < Skv; j++) {
            double s = 0;
            const float *kr = a->k.host + ((b * Hkv + hk) * Skv + j) * D;
            for (int64_t e = 0; e < D; e++) s += (double)q[e] * kr[e];
            w[j] = a->causal && j > pos ? -INFINITY : s / sqrt((double)D);
            mx = fmax(mx, w[j]);
        }
        for (int64_t j = 0; j < Skv; j++) l += w[j] = exp(w[j] - mx);
        for (int64_t e = 0; e < D; e++) {
            double acc = 0;
            for (int64_t j = 0; j < Skv; j++) acc += w[j] * a->v.host[((b * Hkv + hk) * Skv + j) * D + e];
            bad += !close_to(got[row * D + e], acc / l, 2e-3 + slack, 2e-3 + slack);
        }
    }
    free(w);
    free(got);
    return bad;
}

static void att_case(const char *name, const char *cls, int unfused, int causal, int64_t B, int64_t Hq, int64_t Hkv,
                     int64_t Sq, int64_t Skv, int64_t D) {
    WgcDtype dt = WGC_DTYPE_F16;
    Case c = {name, cls, "f16", "", Sq == 1 ? "bytes" : "fp16", 0, 0};
    int64_t qs[4] = {B, Hq, Sq, D}, ks[4] = {B, Hkv, Skv, D};
    fmt_shape(c.size, sizeof c.size, 4, qs);
    snprintf(c.size + strlen(c.size), sizeof c.size - strlen(c.size), " kv %lldx%lld%s", (long long)Hkv,
             (long long)Skv, causal ? " causal" : "");
    double kv_bytes = 2.0 * (double)(B * Hkv * Skv * D) * 2;
    double flops = 4.0 * (double)(B * Hq * Sq * Skv * D) * (causal && Sq > 1 ? 0.5 : 1);
    c.amount = Sq == 1 ? kv_bytes : flops;
    c.in_bytes = kv_bytes + (double)(B * Hq * Sq * D) * 2;
    if (!case_begin(&c)) return;
    Att a;
    memset(&a, 0, sizeof a);
    a.unfused = unfused;
    a.causal = causal;
    a.q = ht_random(dt, 4, qs);
    a.k = ht_random(dt, 4, ks);
    a.v = ht_random(dt, 4, ks);
    a.o = ht_empty(dt, 4, qs);
    a.d.struct_size = sizeof a.d;
    a.d.causal = causal ? WGC_ATTENTION_CAUSAL_BOTTOM_RIGHT : WGC_ATTENTION_CAUSAL_NONE;
    if (unfused) {
        /* (B*H, S, D) views; K^T as a transposed view; the scores scaled by
         * pre-scaling q would change the inputs, so the scale is left out
         * of the unfused path's work and of its check (q is scaled on the
         * host side of the reference instead). */
        int64_t bh = B * Hq, s3[3] = {bh, Sq, Skv};
        a.q3 = a.q.t, a.v3 = a.v.t, a.o3 = a.o.t, a.kt = a.k.t;
        WgcTensor *views[4] = {&a.q3, &a.v3, &a.o3, &a.kt};
        for (int i = 0; i < 4; i++) {
            WgcTensor *t = views[i];
            int64_t rows = t->shape[2], d = t->shape[3];
            t->rank = 3;
            t->shape[0] = bh, t->shape[1] = rows, t->shape[2] = d;
            t->strides[0] = rows * d, t->strides[1] = d, t->strides[2] = 1;
        }
        a.kt.shape[1] = D, a.kt.shape[2] = Skv, a.kt.strides[1] = 1, a.kt.strides[2] = D;
        a.s = ht_empty(dt, 3, s3);
        a.p = ht_empty(dt, 3, s3);
        if (causal) {
            int64_t ms[2] = {Sq, Skv};
            float *mv = malloc(sizeof(float) * (size_t)(Sq * Skv));
            for (int64_t i = 0; i < Sq; i++)
                for (int64_t j = 0; j < Skv; j++) mv[i * Skv + j] = j > i + Skv - Sq ? -30000.0f : 0; /* to_half takes finite values */
            a.mask = ht_values(dt, 2, ms, mv);
            free(mv);
            a.sm = ht_empty(dt, 3, s3);
        }
        /* The unfused path computes softmax(q k^T) without the scale:
         * give it q / sqrt(D) so both compute the same function. */
        float *qv = malloc(sizeof(float) * a.q.n);
        for (size_t i = 0; i < a.q.n; i++) qv[i] = a.q.host[i] / sqrtf((float)D);
        ht_free(&a.q);
        a.q = ht_values(dt, 4, qs, qv);
        free(qv);
        a.q3.buffer = a.q.buf;
        a.d.scale = 1.0f;
        /* the reference divides by sqrt(D) again: undo it through the host copy */
        for (size_t i = 0; i < a.q.n; i++) a.q.host[i] *= sqrtf((float)D);
    }
    RunFn fn = unfused ? run_unfused : run_fused;
    if (case_first_run(&c, fn, &a)) {
        int bad = check_rows(&a, B, Hq, Hkv, Sq, Skv, D);
        if (bad) fprintf(stderr, "%s: %d entries wrong\n", name, bad);
        case_time(&c, fn, &a, !bad, 10);
    }
    ht_free(&a.q), ht_free(&a.k), ht_free(&a.v), ht_free(&a.o);
    if (a.s.buf) ht_free(&a.s);
    if (a.p.buf) ht_free(&a.p);
    if (a.sm.buf) ht_free(&a.sm);
    if (a.mask.buf) ht_free(&a.mask);
}

void cases_attention(void) {
    static const int64_t S[3] = {512, 2048, 8192};
    char name[96];
    for (int unfused = 0; unfused < 2; unfused++)
        for (int causal = 0; causal < 2; causal++)
            for (int dk = 0; dk < 2; dk++)
                for (int si = 0; si < 3; si++) {
                    int64_t D = dk ? 128 : 64, s = S[si], B = s == 8192 ? 2 : 8;
                    /* The unfused scores must fit one binding (2 GiB on the
                     * GPU machine): B1 at 2048 (256 MiB), none at 8192. */
                    if (unfused && s == 8192) continue;
                    if (unfused && s == 2048) B = 1;
                    snprintf(name, sizeof name, "attn_%sprefill_s%lld_d%lld%s_f16", unfused ? "unfused_" : "",
                             (long long)s, (long long)D, causal ? "_causal" : "");
                    att_case(name, unfused ? "attention/unfused" : "attention/prefill", unfused, causal,
                             SZ(B, 1), SZ(32, 2), SZ(32, 2), SZ(s, 37), SZ(s, 37), D);
                }
    /* D 256 (the 64-row tensor-core entries), B8 H32, S 512 and 2048. */
    for (int causal = 0; causal < 2; causal++)
        for (int si = 0; si < 2; si++) {
            int64_t s = S[si];
            snprintf(name, sizeof name, "attn_prefill_s%lld_d256%s_f16", (long long)s, causal ? "_causal" : "");
            att_case(name, "attention/prefill", 0, causal, SZ(8, 1), SZ(32, 2), SZ(32, 2), SZ(s, 37), SZ(s, 37), 256);
        }
    static const int64_t KV[6] = {1024, 2048, 4096, 8192, 16384, 32768};
    for (int gqa = 0; gqa < 2; gqa++)
        for (int bi = 0; bi < 2; bi++)
            for (int ki = 0; ki < 6; ki++) {
                int64_t B = bi ? 8 : 1, hkv = gqa ? 8 : 32;
                snprintf(name, sizeof name, "attn_decode_kv%lldk_%s_b%lld_f16", (long long)(KV[ki] / 1024),
                         gqa ? "gqa" : "mha", (long long)B);
                att_case(name, "attention/decode", 0, 1, SZ(B, B), SZ(32, 8), SZ(hkv, gqa ? 2 : 8), 1,
                         SZ(KV[ki], 300 + ki), 128);
            }
}
