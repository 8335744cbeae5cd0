/* wgc_op_gemm and wgc_op_matmul against a double product, with batch
 * broadcasting, transposed operands, 1-D operands (matmul), any views, and
 * NaN/inf in the operands (IEEE products: inf * 0 is NaN). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

static int64_t draw_dim(Case *c) {
    double u = rng_unit(&c->rng);
    return u < 0.1 ? 1 : u < 0.15 ? 0 : u < 0.85 ? rng_int(&c->rng, 2, 37) : rng_int(&c->rng, 38, 150);
}

/* Logical index of element (row, col) of matrix operand t for c's batch
 * coordinates (broadcast from the right; size-1 dims repeat). */
static size_t mat_index(const DTensor *t, const int64_t *cb, int cb_rank, int64_t row, int64_t col) {
    int r = (int)t->t.rank, tb = r - 2;
    size_t li = 0;
    for (int k = 0; k < tb; k++) {
        int64_t dim = t->t.shape[k], coord = dim == 1 ? 0 : cb[cb_rank - tb + k];
        li = li * (size_t)dim + (size_t)coord;
    }
    return (li * (size_t)t->t.shape[r - 2] + (size_t)row) * (size_t)t->t.shape[r - 1] + (size_t)col;
}

static double max_finite(const DTensor *t) {
    double m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (isfinite(t->val[i]) && fabs(t->val[i]) > m) m = fabs(t->val[i]);
    return m;
}

/* Values for a product: magnitudes kept so that K * max|a| * max|b| fits f32
 * (the header's bound says nothing beyond). */
static ValueSpec product_values(Case *c, WgcDtype d) {
    ValueSpec v = default_values(c, d, ALLOW_ALL);
    if (v.huge > 1e15) v.huge = 1e15;
    return v;
}

typedef struct Gemm {
    DTensor *a, *b, *c_in, *out;
    int ta, tb;
    int64_t m, n, k;
    int batch_rank;
    int64_t batch[WGC_MAX_RANK];
    float alpha, beta;
    WgcDtype out_dtype;
} Gemm;

static void expect_product(Case *c, const Gemm *g, int a_vec, int b_vec) {
    double ma = max_finite(g->a), mb = max_finite(g->b);
    Expect *e = expect_alloc(g->out->n);
    int64_t cb[WGC_MAX_RANK];
    size_t mn = (size_t)(g->m * g->n);
    for (size_t i = 0; i < g->out->n; i++) {
        size_t bi = i / (mn ? mn : 1), rest = i % (mn ? mn : 1);
        int64_t row = (int64_t)rest / g->n, col = (int64_t)rest % g->n;
        unravel(bi, g->batch_rank, g->batch, cb);
        double sum = 0;
        for (int64_t k = 0; k < g->k; k++) {
            double x = a_vec ? g->a->val[k] : g->a->val[g->ta ? mat_index(g->a, cb, g->batch_rank, k, row) : mat_index(g->a, cb, g->batch_rank, row, k)];
            double y = b_vec ? g->b->val[k] : g->b->val[g->tb ? mat_index(g->b, cb, g->batch_rank, col, k) : mat_index(g->b, cb, g->batch_rank, k, col)];
            sum += x * y;
        }
        /* The two terms are f32 numbers before they are added (beta * c
         * may overflow to inf on its own). */
        double cv = g->beta != 0 ? (double)(float)((double)g->beta * g->c_in->val[i]) : 0;
        e[i].ref = (double)(float)((double)g->alpha * sum) + cv;
        /* The epilogue may fuse beta * c into the addition: where beta * c
         * overflows only when rounded on its own, the fused result (e.g.
         * inf rather than inf - inf) is as valid as the unfused one. */
        if (g->beta != 0 && isnan(e[i].ref)) {
            double fused = (double)(float)((double)g->alpha * sum) + (double)g->beta * g->c_in->val[i];
            if (!isnan(fused)) e[i].has_alt = 1, e[i].alt = (double)(float)fused;
        }
        e[i].tol = TOL_F32_GEMM * (double)g->k * ma * mb * fabs(g->alpha) + TOL_F32_ROUNDED * (fabs(cv) + fabs(e[i].ref));
        if (!isfinite(e[i].tol)) e[i].tol = 0;
        e[i].tol += tol_ftz(g->out_dtype) + (g->out_dtype == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(e[i].ref) : 0);
    }
    case_check(c, g->out, e, NULL);
    free(e);
}

/* Batch shapes of a and b that broadcast to `batch` (rank br). */
static void draw_batches(Case *c, int *br, int64_t *batch, int *ra, int64_t *sa, int *rb, int64_t *sb) {
    *br = rng_chance(&c->rng, 0.5) ? 0 : rng_int(&c->rng, 1, 3);
    for (int k = 0; k < *br; k++) batch[k] = rng_chance(&c->rng, 0.2) ? 1 : rng_int(&c->rng, 1, 4);
    *ra = draw_broadcast_shape(&c->rng, *br, batch, sa);
    *rb = draw_broadcast_shape(&c->rng, *br, batch, sb);
    /* The batch of the result is what the two broadcast to. */
    *br = *ra > *rb ? *ra : *rb;
    for (int k = 0; k < *br; k++) {
        int ka = k - (*br - *ra), kb = k - (*br - *rb);
        int64_t da = ka >= 0 ? sa[ka] : 1, db = kb >= 0 ? sb[kb] : 1;
        batch[k] = da == 1 ? db : da;
    }
}

void run_gemm(Case *c) {
    Gemm g = {0};
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    g.out_dtype = d == WGC_DTYPE_F16 && rng_chance(&c->rng, 0.5) ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
    g.m = draw_dim(c), g.n = draw_dim(c), g.k = draw_dim(c);
    g.ta = rng_chance(&c->rng, 0.3), g.tb = rng_chance(&c->rng, 0.3);
    int ra, rb;
    int64_t sa[WGC_MAX_RANK], sb[WGC_MAX_RANK], sc[WGC_MAX_RANK];
    draw_batches(c, &g.batch_rank, g.batch, &ra, sa, &rb, sb);
    sa[ra] = g.ta ? g.k : g.m, sa[ra + 1] = g.ta ? g.m : g.k;
    sb[rb] = g.tb ? g.n : g.k, sb[rb + 1] = g.tb ? g.k : g.n;
    for (int k = 0; k < g.batch_rank; k++) sc[k] = g.batch[k];
    sc[g.batch_rank] = g.m, sc[g.batch_rank + 1] = g.n;
    static const float alphas[] = {1.0f, -0.5f, 2.25f, 1e-3f};
    static const float betas[] = {0.0f, 0.0f, 1.0f, -1.5f};
    g.alpha = alphas[rng_int(&c->rng, 0, 3)], g.beta = betas[rng_int(&c->rng, 0, 3)];
    ValueSpec v = product_values(c, d);
    g.a = case_tensor(c, "a", d, ra + 2, sa, VIEW_ZERO_STRIDES, &v, NULL);
    g.b = case_tensor(c, "b", d, rb + 2, sb, VIEW_ZERO_STRIDES, &v, NULL);
    /* c's old contents: ignored (NaN included) when beta is 0 */
    ValueSpec vc = g.beta == 0 ? draw_values(c, g.out_dtype, NAN, NAN, 0) : default_values(c, g.out_dtype, ALLOW_SPECIAL | ALLOW_NAN);
    g.c_in = case_tensor(c, "c", g.out_dtype, g.batch_rank + 2, sc, VIEW_ANY, &vc, NULL);
    g.out = case_in_place(c, "c (result)", g.c_in);
    case_param(c, "dtype=%s->%s M=%lld N=%lld K=%lld transpose_a=%d transpose_b=%d alpha=%g beta=%g values=%s",
               dtype_name(d), dtype_name(g.out_dtype), (long long)g.m, (long long)g.n, (long long)g.k, g.ta, g.tb,
               g.alpha, g.beta, value_kind_name(v.kind));
    case_upload(c);
    WgcStatus st = wgc_op_gemm(c->stream, g.alpha, &g.a->t, (uint32_t)g.ta, &g.b->t, (uint32_t)g.tb, g.beta, &g.out->t);
    if (!case_expect_ok(c, st, "wgc_op_gemm")) return;
    case_download(c);
    expect_product(c, &g, 0, 0);
    case_check_untouched(c);
}

void run_matmul(Case *c) {
    Gemm g = {0};
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    g.out_dtype = d == WGC_DTYPE_F16 && rng_chance(&c->rng, 0.5) ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
    g.m = draw_dim(c), g.n = draw_dim(c), g.k = draw_dim(c);
    g.alpha = 1;
    int a_vec = rng_chance(&c->rng, 0.2), b_vec = rng_chance(&c->rng, 0.2);
    int ra, rb, ro = 0;
    int64_t sa[WGC_MAX_RANK], sb[WGC_MAX_RANK], so[WGC_MAX_RANK];
    draw_batches(c, &g.batch_rank, g.batch, &ra, sa, &rb, sb);
    if (a_vec) ra = 0, g.m = 1;
    if (b_vec) rb = 0, g.n = 1;
    if (a_vec && b_vec) g.batch_rank = 0;
    if (a_vec && !b_vec) { /* vector-matrix: batch from b alone */
        g.batch_rank = rb;
        for (int k = 0; k < rb; k++) g.batch[k] = sb[k];
    }
    if (b_vec && !a_vec) {
        g.batch_rank = ra;
        for (int k = 0; k < ra; k++) g.batch[k] = sa[k];
    }
    if (a_vec) sa[0] = g.k;
    else sa[ra] = g.m, sa[ra + 1] = g.k;
    if (b_vec) sb[0] = g.k;
    else sb[rb] = g.k, sb[rb + 1] = g.n;
    for (int k = 0; k < g.batch_rank; k++) so[ro++] = g.batch[k];
    if (!a_vec) so[ro++] = g.m;
    if (!b_vec) so[ro++] = g.n;
    ValueSpec v = product_values(c, d);
    g.a = case_tensor(c, "a", d, a_vec ? 1 : ra + 2, sa, VIEW_ZERO_STRIDES, &v, NULL);
    g.b = case_tensor(c, "b", d, b_vec ? 1 : rb + 2, sb, VIEW_ZERO_STRIDES, &v, NULL);
    g.out = case_tensor(c, "out", g.out_dtype, ro, so, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s->%s M=%lld N=%lld K=%lld a=%s b=%s values=%s", dtype_name(d), dtype_name(g.out_dtype),
               (long long)g.m, (long long)g.n, (long long)g.k, a_vec ? "1-D" : "matrix", b_vec ? "1-D" : "matrix",
               value_kind_name(v.kind));
    case_upload(c);
    if (!case_expect_ok(c, wgc_op_matmul(c->stream, &g.a->t, &g.b->t, &g.out->t), "wgc_op_matmul")) return;
    case_download(c);
    expect_product(c, &g, a_vec, b_vec);
    case_check_untouched(c);
}
