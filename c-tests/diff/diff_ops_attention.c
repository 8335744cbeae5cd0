/* wgc_op_attention against a float64 evaluation of its documentation:
 * random batch, heads (grouped), sequence lengths and head dims, any views,
 * causal masks of both alignments, windows, valid lengths, additive masks
 * broadcast from random shapes, f32 and f16, NaN and infinities. Keys a
 * row does not see weigh 0; where such a key's v is not finite the header
 * leaves NaN open (0 * inf), so those outputs accept NaN too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

void run_attention(Case *c) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    Rng *r = &c->rng;
    int64_t b = rng_int(r, 1, 3), hkv = rng_int(r, 1, 3), g = rng_int(r, 1, 3), sq = rng_int(r, 1, 12);
    int64_t skv = rng_int(r, 1, 90), dh = rng_chance(r, 0.2) ? rng_int(r, 100, 256) : rng_int(r, 1, 40);
    int64_t hq = hkv * g;
    int64_t qs[4] = {b, hq, sq, dh}, ks[4] = {b, hkv, skv, dh}, full[4] = {b, hq, sq, skv};
    uint32_t causal = (uint32_t)rng_int(r, 0, 2);
    uint32_t window = rng_chance(r, 0.2) ? (uint32_t)rng_int(r, 1, 20) : 0;
    uint32_t kv_len = rng_chance(r, 0.2) ? (uint32_t)rng_int(r, 1, (int)skv + 5) : 0;
    int flags = rng_chance(r, 0.2) ? ALLOW_SPECIAL | ALLOW_INF | ALLOW_NAN : 0;
    ValueSpec vs = draw_values(c, d, -2, 2, flags);
    /* Scores stay moderate: a score's rounding moves exp by as much. */
    if (vs.huge > 4) vs.huge = 4;
    DTensor *q = case_tensor(c, "q", d, 4, qs, VIEW_ZERO_STRIDES, &vs, NULL);
    DTensor *k = case_tensor(c, "k", d, 4, ks, VIEW_ZERO_STRIDES, &vs, NULL);
    DTensor *v = case_tensor(c, "v", d, 4, ks, VIEW_ZERO_STRIDES, &vs, NULL);
    DTensor *m = NULL;
    if (rng_chance(r, 0.4)) {
        int64_t ms[WGC_MAX_RANK];
        int mr = draw_broadcast_shape(r, 4, full, ms);
        ValueSpec mv = draw_values(c, d, -3, 3, ALLOW_SPECIAL | ALLOW_INF);
        if (mv.huge > 4) mv.huge = 4;
        m = case_tensor(c, "mask", d, mr, ms, VIEW_ZERO_STRIDES, &mv, NULL);
    }
    DTensor *o = case_tensor(c, "out", d, 4, qs, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s B=%lld Hq=%lld Hkv=%lld Sq=%lld Skv=%lld D=%lld causal=%u window=%u kv_len=%u mask=%s",
               dtype_name(d), (long long)b, (long long)hq, (long long)hkv, (long long)sq, (long long)skv,
               (long long)dh, causal, window, kv_len, m ? "additive" : "none");
    case_upload(c);
    WgcAttentionDesc desc = {0};
    desc.struct_size = sizeof desc;
    desc.causal = causal;
    desc.window = window;
    desc.kv_len = kv_len;
    WgcStatus st = wgc_op_attention(c->stream, &q->t, &k->t, &v->t, m ? &m->t : NULL, NULL, &desc, &o->t, NULL);
    if (!case_expect_ok(c, st, "wgc_op_attention")) return;
    case_download(c);

    Expect *e = expect_alloc(o->n);
    DTensor fullt = *o; /* the mask's broadcast target: (B, Hq, Sq, Skv) */
    fullt.t.rank = 4;
    for (int i = 0; i < 4; i++) fullt.t.shape[i] = full[i];
    double scale = 1.0 / sqrt((double)dh);
    int64_t len = kv_len && (int64_t)kv_len < skv ? kv_len : skv;
    double *s = malloc(sizeof(double) * (size_t)skv);
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t h = 0; h < hq; h++)
            for (int64_t i = 0; i < sq; i++) {
                int64_t hk = h / g, pos = i + (causal == 2 ? 0 : len - sq);
                double mx = -INFINITY, sabs = 0;
                for (int64_t j = 0; j < len; j++) {
                    int ok = !(causal && j > pos) && !(window && j <= pos - (int64_t)window);
                    double dot = 0;
                    double dabs = 0;
                    for (int64_t x = 0; x < dh; x++) {
                        double t = q->val[((bi * hq + h) * sq + i) * dh + x] * k->val[((bi * hkv + hk) * skv + j) * dh + x];
                        dot += t;
                        dabs += fabs(t);
                    }
                    if (ok && isfinite(dabs) && dabs * scale > sabs) sabs = dabs * scale;
                    double add = 0;
                    if (m) add = m->val[broadcast_index((size_t)(((bi * hq + h) * sq + i) * skv + j), &fullt, m)];
                    s[j] = ok ? dot * scale + add : -INFINITY;
                    if (s[j] > mx) mx = s[j];
                }
                double l = 0;
                for (int64_t j = 0; j < len; j++) {
                    s[j] = s[j] == -INFINITY ? 0 : exp(s[j] - mx);
                    l += s[j];
                }
                for (int64_t x = 0; x < dh; x++) {
                    double acc = 0, mag = 0;
                    int open_nan = 0;
                    for (int64_t j = 0; j < len; j++) {
                        double vv = v->val[((bi * hkv + hk) * skv + j) * dh + x];
                        /* Weights that round to 0 in f32 too. */
                        if (s[j] < 1e-30) open_nan |= !isfinite(vv);
                        if (s[j] == 0) continue;
                        acc += s[j] * vv;
                        mag += s[j] * fabs(vv);
                    }
                    Expect *ei = &e[(size_t)(((bi * hq + h) * sq + i) * dh + x)];
                    ei->ref = l == 0 ? 0 : acc / l;
                    /* The header's bound: each score's f32 sum is off by up to
                     * about D * 2^-23 * scale * sum |q k|, which moves its weight. */
                    double rel = 2e-5 + 1.2e-7 * (double)dh * sabs;
                    ei->tol = rel * (l == 0 || !isfinite(mag) ? 0 : mag / l) + 1e-6 + tol_ftz(d) +
                              (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(ei->ref) : 0);
                    if (open_nan) ei->kind = EXPECT_NAN_OR_CLOSE;
                }
            }
    free(s);
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}
