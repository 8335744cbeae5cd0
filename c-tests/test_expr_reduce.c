/* Reductions of an expression's value (wgc_op_expr_reduce) against double
 * references: sum(x*y), mean((x-m)^2) with m broadcast and an epilogue
 * sqrt(v + eps), max(|x|), min, prod, argmax and argmin, over inner, outer,
 * middle, several and all axes, with and without keepdim; every kernel
 * the reduce planner picks (row launch, split vec4, columns, strided);
 * broadcast, transposed, offset and reversed views; f32, f16, i32, u32 and
 * bf16 values (and bf16 inputs); NaN and infinities; empty reductions; parameters changing
 * with the compiled kernels reused; and every kind of bad call, with the
 * output left untouched. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_views.h"

/* Set logical element i to v (host copy and buffer). */
static void set_value(T *a, size_t i, double v) {
    unsigned char tmp[4] = {0};
    size_t at = (size_t)phys_at(&a->t, i);
    size_t word = at * esize(a->t.dtype) & ~(size_t)3;
    CHECK(wgc_buffer_read(a->buf, word, tmp, 4));
    put(tmp, a->t.dtype, (at * esize(a->t.dtype) - word) / esize(a->t.dtype), v);
    CHECK(wgc_buffer_write(a->buf, word, tmp, 4));
    a->val[i] = quant(a->t.dtype, v);
}

/* ---- the reference ---- */

/* The prologue in double, from the inputs' values at one element. */
typedef double (*ProRef)(const double *v, const double *params, WgcDtype d);
typedef double (*EpiRef)(double v, const double *params, WgcDtype d);

typedef struct Call {
    const char *what;
    WgcExpr *pro, *epi;
    ProRef pro_ref;
    EpiRef epi_ref;
    WgcDtype vd; /* the prologue's value dtype */
    uint32_t op;
    const int32_t *axes;
    uint32_t naxes, keepdim;
    T *in;
    uint32_t nin;
    const double *params;
    uint32_t nparams, epi_param0;
    int out_layout;
} Call;

static int is_arg(uint32_t op) { return op == WGC_REDUCE_OP_ARGMAX || op == WGC_REDUCE_OP_ARGMIN; }

/* Reduce in double; returns the number of outputs, writes the reference
 * values and an absolute tolerance per output. */
static size_t reference(const Call *c, int *rank_out, int64_t *out_shape, double **ref_out, double **tol_out) {
    int rank = 0;
    for (uint32_t k = 0; k < c->nin; k++)
        if ((int)c->in[k].t.rank > rank) rank = (int)c->in[k].t.rank;
    int64_t shape[8];
    for (int i = 0; i < rank; i++) shape[i] = 1;
    for (uint32_t k = 0; k < c->nin; k++) {
        int pad = rank - (int)c->in[k].t.rank;
        for (int i = 0; i < (int)c->in[k].t.rank; i++)
            if (c->in[k].t.shape[i] != 1) shape[pad + i] = c->in[k].t.shape[i];
    }
    int red[8] = {0};
    for (int i = 0; i < rank; i++) red[i] = c->naxes == 0;
    for (uint32_t a = 0; a < c->naxes; a++) red[c->axes[a] < 0 ? c->axes[a] + rank : c->axes[a]] = 1;
    int orank = 0;
    size_t rows = 1, kred = 1;
    for (int i = 0; i < rank; i++) {
        if (red[i]) kred *= (size_t)shape[i];
        else rows *= (size_t)shape[i];
        if (!red[i]) out_shape[orank++] = shape[i];
        else if (c->keepdim) out_shape[orank++] = 1;
    }
    *rank_out = orank;
    double *ref = calloc(rows + 1, sizeof(double)), *tol = calloc(rows + 1, sizeof(double));
    size_t total = count(rank, shape);
    double *acc = calloc(rows + 1, sizeof(double)), *mag = calloc(rows + 1, sizeof(double));
    /* Values below the smallest normal may be flushed to zero (f16 on
     * NVIDIA is): their magnitudes join the tolerance of sums. */
    double *flush = calloc(rows + 1, sizeof(double));
    double min_normal = c->vd == WGC_DTYPE_F16 ? 6.103515625e-05 : 1.1754943508222875e-38;
    double *best = calloc(rows + 1, sizeof(double));
    size_t *seen = calloc(rows + 1, sizeof(size_t)), *idx = calloc(rows + 1, sizeof(size_t));
    for (size_t r = 0; r < rows; r++) acc[r] = c->op == WGC_REDUCE_OP_PROD ? 1 : 0;
    /* Row-major over the broadcast shape: each output's elements in order. */
    for (size_t i = 0; i < total; i++) {
        int64_t coord[8];
        size_t rem = i;
        for (int d = rank - 1; d >= 0; d--) {
            coord[d] = (int64_t)(rem % (size_t)shape[d]);
            rem /= (size_t)shape[d];
        }
        double v[16];
        for (uint32_t k = 0; k < c->nin; k++) {
            const WgcTensor *t = &c->in[k].t;
            int pad = rank - (int)t->rank;
            size_t li = 0;
            for (int d = 0; d < (int)t->rank; d++) li = li * (size_t)t->shape[d] + (t->shape[d] == 1 ? 0 : (size_t)coord[pad + d]);
            v[k] = c->in[k].val[li];
        }
        double x = quant(c->vd, c->pro_ref(v, c->params, c->vd));
        size_t row = 0, k = 0;
        for (int d = 0; d < rank; d++) {
            if (red[d]) k = k * (size_t)shape[d] + (size_t)coord[d];
            else row = row * (size_t)shape[d] + (size_t)coord[d];
        }
        mag[row] += fabs(x);
        if (fabs(x) < min_normal) flush[row] += fabs(x);
        switch (c->op) {
        case WGC_REDUCE_OP_SUM:
        case WGC_REDUCE_OP_MEAN: acc[row] += x; break;
        case WGC_REDUCE_OP_PROD: acc[row] *= x; break;
        case WGC_REDUCE_OP_MAX:
        case WGC_REDUCE_OP_MIN:
            if (seen[row] == 0 || isnan(x) || (!isnan(acc[row]) && (c->op == WGC_REDUCE_OP_MAX ? x > acc[row] : x < acc[row])))
                acc[row] = x;
            break;
        default: /* arg ops: the first NaN, else the first extreme */
            if (seen[row] == 0 || (!isnan(best[row]) && (isnan(x) || (c->op == WGC_REDUCE_OP_ARGMAX ? x > best[row] : x < best[row])))) {
                best[row] = x;
                idx[row] = k;
            }
            break;
        }
        seen[row]++;
    }
    WgcDtype od = is_arg(c->op) ? WGC_DTYPE_I32 : c->vd;
    int fl = od == WGC_DTYPE_F32 || od == WGC_DTYPE_F16 || od == WGC_DTYPE_BF16;
    double rel = od == WGC_DTYPE_F16 ? 1e-3 : od == WGC_DTYPE_BF16 ? 4e-3 : 2e-6;
    for (size_t r = 0; r < rows; r++) {
        double y = acc[r];
        if (c->op == WGC_REDUCE_OP_MEAN) y = kred ? acc[r] / (double)kred : NAN;
        if (is_arg(c->op)) y = (double)idx[r];
        double t = 0;
        if (fl && (c->op == WGC_REDUCE_OP_SUM || c->op == WGC_REDUCE_OP_MEAN))
            t = 4e-6 * (c->op == WGC_REDUCE_OP_MEAN && kred ? mag[r] / (double)kred : mag[r]) + rel * fabs(y);
        else if (fl) t = rel * fabs(y) * (c->op == WGC_REDUCE_OP_PROD ? (double)kred : 1.0);
        if (fl && c->op == WGC_REDUCE_OP_SUM) t += flush[r];
        if (fl && c->op == WGC_REDUCE_OP_MEAN && kred) t += flush[r] / (double)kred;
        if (fl && (c->op == WGC_REDUCE_OP_MAX || c->op == WGC_REDUCE_OP_MIN) && fabs(y) < min_normal) t += min_normal;
        if (!is_arg(c->op)) y = quant(od, y);
        if (c->epi_ref) {
            double e = quant(od, c->epi_ref(y, c->params + c->epi_param0, od));
            /* The epilogue's slope near y carries the reduction's error. */
            double h = t > 0 ? t : 0;
            if (h > 0) t = fabs(c->epi_ref(y + h, c->params + c->epi_param0, od) - e) + rel * fabs(e) + 1e-7;
            else if (fl) t = rel * fabs(e);
            y = e;
        }
        if (od == WGC_DTYPE_I32 && !is_arg(c->op) && c->vd == WGC_DTYPE_I32) y = (double)(int32_t)(int64_t)y;
        if (od == WGC_DTYPE_U32) y = (double)(uint32_t)(uint64_t)fmod(y, 4294967296.0);
        ref[r] = y;
        tol[r] = t;
    }
    free(acc), free(mag), free(flush), free(best), free(seen), free(idx);
    *ref_out = ref;
    *tol_out = tol;
    return rows;
}

/* Launch c into a fresh out, check against the reference (and that the
 * padding around out is intact). Returns the number of wrong outputs. */
static int run_call(TestEnv *env, const Call *c) {
    int orank;
    int64_t oshape[8];
    double *ref, *tol;
    size_t rows = reference(c, &orank, oshape, &ref, &tol);
    WgcDtype od = is_arg(c->op) ? WGC_DTYPE_I32 : c->vd;
    T out = make(env, od, orank, oshape, c->out_layout, 0, 0, NULL);
    WgcTensor ins[12];
    for (uint32_t k = 0; k < c->nin; k++) ins[k] = c->in[k].t;
    WgcStatus s = wgc_op_expr_reduce(env->stream, c->pro, c->op, c->axes, c->naxes, c->keepdim, ins, c->nin,
                                     c->params, c->nparams, c->epi, &out.t);
    int bad = 0;
    if (s != WGC_OK) {
        fprintf(stderr, "%s: %s: %s\n", c->what, wgc_status_string(s), wgc_last_error_message());
        g_failures++;
        bad = 1;
    } else {
        if (!readback(&out, NULL)) {
            fprintf(stderr, "%s: wrote outside out's view\n", c->what);
            g_failures++;
        }
        int wrong = 0;
        for (size_t r = 0; r < rows; r++) {
            double g = out.val[r], e = ref[r];
            int ok = (isnan(e) && isnan(g)) || (isinf(e) && g == e) || fabs(g - e) <= tol[r];
            if (!ok && wrong++ < 4)
                fprintf(stderr, "%s: output %zu: got %.9g, expected %.9g (tolerance %.3g)\n", c->what, r, g, e, tol[r]);
        }
        if (wrong) {
            fprintf(stderr, "%s: %d of %zu outputs wrong\n", c->what, wrong, rows);
            g_failures++;
        }
        bad = wrong;
    }
    release(&out);
    free(ref), free(tol);
    return bad;
}

/* ---- expressions and their references ---- */

static double ref_mul(const double *v, const double *p, WgcDtype d) { (void)p; (void)d; return v[0] * v[1]; }
static double ref_sqdev(const double *v, const double *p, WgcDtype d) {
    (void)p;
    double dv = quant(d, v[0] - v[1]);
    return dv * dv;
}
static double ref_abs(const double *v, const double *p, WgcDtype d) { (void)p; (void)d; return fabs(v[0]); }
static double ref_scaled(const double *v, const double *p, WgcDtype d) { (void)d; return 1.0 + quant(d, v[0] * p[0]); }
static double ref_sqrt_eps(double v, const double *p, WgcDtype d) { return sqrt(quant(d, v + p[0])); }
static double ref_cast_mul(const double *v, const double *p, WgcDtype d) { (void)p; (void)d; return v[0] * v[1]; }

/* x * y over inputs of dtype d. */
static WgcExpr *mul_expr(WgcDtype d) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t x = N(wgc_expr_input(e, d, &id_)), y = N(wgc_expr_input(e, d, &id_));
    CHECK(wgc_expr_output(e, N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, x, y, &id_))));
    return e;
}
/* (x - m)^2 */
static WgcExpr *sqdev_expr(WgcDtype d) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t x = N(wgc_expr_input(e, d, &id_)), m = N(wgc_expr_input(e, d, &id_));
    uint32_t dv = N(wgc_expr_binary(e, WGC_BINARY_OP_SUB, x, m, &id_));
    CHECK(wgc_expr_output(e, N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, dv, dv, &id_))));
    return e;
}
/* |x| */
static WgcExpr *abs_expr(WgcDtype d) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t x = N(wgc_expr_input(e, d, &id_));
    CHECK(wgc_expr_output(e, N(wgc_expr_unary(e, WGC_UNARY_OP_ABS, x, &id_))));
    return e;
}
/* sqrt(v + eps), eps a parameter */
static WgcExpr *sqrt_eps_expr(WgcDtype d) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t v = N(wgc_expr_input(e, d, &id_)), eps = N(wgc_expr_param(e, d, &id_));
    uint32_t s = N(wgc_expr_binary(e, WGC_BINARY_OP_ADD, v, eps, &id_));
    CHECK(wgc_expr_output(e, N(wgc_expr_unary(e, WGC_UNARY_OP_SQRT, s, &id_))));
    return e;
}

/* sum / mean / max / min / argmax of x*y over several axes sets and views. */
static void test_axes_and_views(TestEnv *env, WgcDtype d) {
    WgcExpr *e = mul_expr(d);
    int64_t shape[3] = {6, 37, 20};
    static const int32_t inner[1] = {-1}, outer[1] = {0}, middle[1] = {1}, outer_inner[2] = {0, 2};
    struct {
        const int32_t *axes;
        uint32_t n;
    } sets[5] = {{inner, 1}, {outer, 1}, {middle, 1}, {outer_inner, 2}, {NULL, 0}};
    int layouts[4] = {CONTIG, TRANSPOSED, OFFSET3, REVERSED};
    uint32_t ops[5] = {WGC_REDUCE_OP_SUM, WGC_REDUCE_OP_MEAN, WGC_REDUCE_OP_MAX, WGC_REDUCE_OP_MIN, WGC_REDUCE_OP_ARGMAX};
    /* Every op on contiguous views; sum and argmax (whose indices follow the
     * view's logical order) on the others; fewer for f16 (each new
     * structure compiles its kernels, which takes a while on lavapipe). */
    int f16 = d == WGC_DTYPE_F16;
    for (int l = 0; l < 4; l += f16 ? 3 : 1) {
        T in[2] = {make(env, d, 3, shape, layouts[l], -2, 2, NULL), make(env, d, 3, shape, CONTIG, -2, 2, NULL)};
        for (int a = 0; a < 5; a++)
            for (int o = 0; o < 5; o++) {
                if (is_arg(ops[o]) && sets[a].n > 1) continue;
                if (l > 0 && o != 0 && o != 4) continue;
                if (f16 && (o == 3 || (l > 0 && o != 0))) continue;
                char what[160];
                snprintf(what, sizeof what, "%s(x*y) dtype %d layout %d axes set %d", o == 0 ? "sum" : o == 1 ? "mean" : o == 2 ? "max" : o == 3 ? "min" : "argmax", (int)d, layouts[l], a);
                Call c = {what, e, NULL, ref_mul, NULL, d, ops[o], sets[a].axes, sets[a].n, (uint32_t)((a + o) % 2), in, 2, NULL, 0, 0, (a == 0 && o == 0) ? TRANSPOSED : CONTIG};
                run_call(env, &c);
            }
        release(&in[0]), release(&in[1]);
    }
    wgc_expr_release(e);
}

/* Each of the planner's kernels: one launch per row (short rows, many
 * rows), long rows split in chunks (vec4 and scalar units), columns, and
 * several strided reduced dims; broadcast inputs (a row, a column, a
 * scalar-shaped tensor). */
static void test_kernels_and_broadcast(TestEnv *env, WgcDtype d) {
    WgcExpr *e = mul_expr(d);
    int64_t long_rows[2] = {3, 9001}, long4[2] = {2, 12000}, many[2] = {2100, 12}, cols[2] = {300, 70};
    int64_t row_b[2] = {1, 70}, col_b[2] = {300, 1}, scal[1] = {1};
    struct {
        int64_t *xs;
        int xr;
        int64_t *ys;
        int yr;
        int32_t axis;
    } cases[6] = {{long_rows, 2, long_rows, 2, -1}, {long4, 2, long4, 2, 1}, {many, 2, many, 2, 1},
                  {cols, 2, cols, 2, 0},         {cols, 2, row_b, 2, 0},   {cols, 2, col_b, 2, 1}};
    for (int k = 0; k < 6; k++) {
        T in[2] = {make(env, d, cases[k].xr, cases[k].xs, CONTIG, -1, 1, NULL), make(env, d, cases[k].yr, cases[k].ys, CONTIG, -1, 1, NULL)};
        char what[96];
        snprintf(what, sizeof what, "sum(x*y) kernel case %d dtype %d", k, (int)d);
        Call c = {what, e, NULL, ref_mul, NULL, d, WGC_REDUCE_OP_SUM, &cases[k].axis, 1, 0, in, 2, NULL, 0, 0, CONTIG};
        run_call(env, &c);
        snprintf(what, sizeof what, "max(x*y) kernel case %d dtype %d", k, (int)d);
        c.op = WGC_REDUCE_OP_MAX;
        run_call(env, &c);
        release(&in[0]), release(&in[1]);
    }
    /* A scalar-shaped input broadcast over a 3-D one, reduced over all. */
    int64_t s3[3] = {5, 9, 7};
    T in[2] = {make(env, d, 3, s3, REVERSED, -1, 1, NULL), make(env, d, 1, scal, CONTIG, 0.5, 2, NULL)};
    Call c = {"sum(x*s) all, s broadcast", e, NULL, ref_mul, NULL, d, WGC_REDUCE_OP_SUM, NULL, 0, 1, in, 2, NULL, 0, 0, CONTIG};
    run_call(env, &c);
    release(&in[0]), release(&in[1]);
    wgc_expr_release(e);
}

/* mean((x - m)^2) over the last dim with m (rows, 1), and with the
 * epilogue sqrt(v + eps): the standard deviation in one launch. */
static void test_variance_epilogue(TestEnv *env, WgcDtype d) {
    WgcExpr *e = sqdev_expr(d), *epi = sqrt_eps_expr(d);
    int64_t shape[2] = {37, 515}, mshape[2] = {37, 1};
    T in[2] = {make(env, d, 2, shape, CONTIG, 1, 3, NULL), make(env, d, 2, mshape, CONTIG, 1.5, 2.5, NULL)};
    int32_t axis = 1;
    double eps[1] = {1e-3};
    Call c = {"mean((x-m)^2)", e, NULL, ref_sqdev, NULL, d, WGC_REDUCE_OP_MEAN, &axis, 1, 1, in, 2, NULL, 0, 0, CONTIG};
    run_call(env, &c);
    c.what = "sqrt(mean((x-m)^2) + eps)";
    c.epi = epi;
    c.epi_ref = ref_sqrt_eps;
    c.params = eps;
    c.nparams = 1;
    run_call(env, &c);
    /* A new eps reuses the compiled kernels. */
    WgcMemoryStats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    CHECK(wgc_device_memory_stats(env->device, &st));
    uint64_t before = st.cached_kernels;
    eps[0] = 0.25;
    c.what = "sqrt(mean((x-m)^2) + 0.25)";
    run_call(env, &c);
    CHECK(wgc_device_memory_stats(env->device, &st));
    if (st.cached_kernels != before) {
        fprintf(stderr, "a new parameter value compiled %llu kernels\n", (unsigned long long)(st.cached_kernels - before));
        g_failures++;
    }
    /* The same epilogue serves as prologue: sqrt(|x| + eps) summed... of one input. */
    release(&in[0]), release(&in[1]);
    wgc_expr_release(e), wgc_expr_release(epi);
}

/* max(|x|) over all of an odd-sized vector, then with a NaN and with an
 * infinity in it; min and argmin with NaN. */
static void test_max_abs_nan_inf(TestEnv *env, WgcDtype d) {
    WgcExpr *e = abs_expr(d);
    int64_t n[1] = {50001};
    T in = make(env, d, 1, n, OFFSET3, -100, 100, NULL);
    Call c = {"max(|x|) all", e, NULL, ref_abs, NULL, d, WGC_REDUCE_OP_MAX, NULL, 0, 0, &in, 1, NULL, 0, 0, CONTIG};
    run_call(env, &c);
    set_value(&in, 4321, INFINITY);
    c.what = "max(|x|) with -inf";
    set_value(&in, 4321, -INFINITY);
    run_call(env, &c);
    set_value(&in, 17, NAN);
    c.what = "max(|x|) with NaN";
    run_call(env, &c);
    c.what = "sum(|x|) with NaN and inf";
    c.op = WGC_REDUCE_OP_SUM;
    run_call(env, &c);
    c.what = "argmin(|x|) with NaN";
    c.op = WGC_REDUCE_OP_ARGMIN;
    run_call(env, &c);
    release(&in);
    wgc_expr_release(e);
}

/* prod(1 + x * p) over rows, p a parameter. */
static void test_prod_param(TestEnv *env) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t x = N(wgc_expr_input(e, WGC_DTYPE_F32, &id_)), p = N(wgc_expr_param(e, WGC_DTYPE_F32, &id_));
    uint32_t one = N(wgc_expr_scalar(e, WGC_DTYPE_F32, 1.0, &id_));
    uint32_t xp = N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, x, p, &id_));
    CHECK(wgc_expr_output(e, N(wgc_expr_binary(e, WGC_BINARY_OP_ADD, one, xp, &id_))));
    int64_t shape[2] = {9, 130};
    T in = make(env, WGC_DTYPE_F32, 2, shape, TRANSPOSED, -1, 1, NULL);
    double pv[1] = {0.05};
    int32_t axis = 1;
    Call c = {"prod(1 + x*p)", e, NULL, ref_scaled, NULL, WGC_DTYPE_F32, WGC_REDUCE_OP_PROD, &axis, 1, 0, &in, 1, pv, 1, 0, CONTIG};
    run_call(env, &c);
    release(&in);
    wgc_expr_release(e);
}

/* Integer values: sum of i32 products (wrapping), max and argmax of u32. */
static void test_integers(TestEnv *env) {
    WgcExpr *ei = mul_expr(WGC_DTYPE_I32), *eu = mul_expr(WGC_DTYPE_U32);
    int64_t shape[2] = {13, 301};
    int32_t axis = -1;
    T in[2] = {make(env, WGC_DTYPE_I32, 2, shape, CONTIG, -1000, 1000, NULL), make(env, WGC_DTYPE_I32, 2, shape, REVERSED, -1000, 1000, NULL)};
    Call c = {"sum(x*y) i32", ei, NULL, ref_mul, NULL, WGC_DTYPE_I32, WGC_REDUCE_OP_SUM, &axis, 1, 0, in, 2, NULL, 0, 0, CONTIG};
    run_call(env, &c);
    c.what = "min(x*y) i32";
    c.op = WGC_REDUCE_OP_MIN;
    run_call(env, &c);
    T u[2] = {make(env, WGC_DTYPE_U32, 2, shape, CONTIG, 0, 60000, NULL), make(env, WGC_DTYPE_U32, 2, shape, CONTIG, 0, 60000, NULL)};
    Call cu = {"max(x*y) u32", eu, NULL, ref_mul, NULL, WGC_DTYPE_U32, WGC_REDUCE_OP_MAX, &axis, 1, 1, u, 2, NULL, 0, 0, CONTIG};
    run_call(env, &cu);
    cu.what = "argmax(x*y) u32";
    cu.op = WGC_REDUCE_OP_ARGMAX;
    run_call(env, &cu);
    release(&in[0]), release(&in[1]), release(&u[0]), release(&u[1]);
    wgc_expr_release(ei), wgc_expr_release(eu);
}

/* sum(f32(x_bf16) * f32(y_f16)): inputs of other dtypes cast to f32. */
static void test_cast_inputs(TestEnv *env) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t x = N(wgc_expr_input(e, WGC_DTYPE_BF16, &id_)), y = N(wgc_expr_input(e, WGC_DTYPE_F16, &id_));
    uint32_t xf = N(wgc_expr_cast(e, x, WGC_DTYPE_F32, &id_)), yf = N(wgc_expr_cast(e, y, WGC_DTYPE_F32, &id_));
    CHECK(wgc_expr_output(e, N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, xf, yf, &id_))));
    int64_t shape[2] = {11, 260};
    T in[2] = {make(env, WGC_DTYPE_BF16, 2, shape, CONTIG, -1, 1, NULL), make(env, WGC_DTYPE_F16, 2, shape, OFFSET3, -1, 1, NULL)};
    int32_t axis = 1;
    Call c = {"sum(f32(x_bf16) * f32(y_f16))", e, NULL, ref_cast_mul, NULL, WGC_DTYPE_F32, WGC_REDUCE_OP_SUM, &axis, 1, 0, in, 2, NULL, 0, 0, CONTIG};
    run_call(env, &c);
    release(&in[0]), release(&in[1]);
    wgc_expr_release(e);
}

/* bf16 values: bf16(x * y) summed in f32, rounded once to bf16, then the
 * epilogue sqrt(v + eps) in bf16; max and argmax of them. */
static void test_bf16_values(TestEnv *env) {
    WgcExpr *e = NULL, *epi = sqrt_eps_expr(WGC_DTYPE_BF16);
    CHECK(wgc_expr_create(&e));
    uint32_t x = N(wgc_expr_input(e, WGC_DTYPE_F32, &id_)), y = N(wgc_expr_input(e, WGC_DTYPE_F32, &id_));
    uint32_t p = N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, x, y, &id_));
    CHECK(wgc_expr_output(e, N(wgc_expr_cast(e, p, WGC_DTYPE_BF16, &id_))));
    int64_t shape[2] = {9, 301}, yshape[1] = {301};
    T in[2] = {make(env, WGC_DTYPE_F32, 2, shape, TRANSPOSED, 0, 2, NULL), make(env, WGC_DTYPE_F32, 1, yshape, CONTIG, 0, 2, NULL)};
    int32_t axis = 1;
    double eps[1] = {0.5};
    Call c = {"sqrt(sum(bf16(x*y)) + eps) bf16", e, epi, ref_mul, ref_sqrt_eps, WGC_DTYPE_BF16, WGC_REDUCE_OP_SUM, &axis, 1, 0, in, 2, eps, 1, 0, CONTIG};
    run_call(env, &c);
    Call m = {"max(bf16(x*y)) bf16", e, NULL, ref_mul, NULL, WGC_DTYPE_BF16, WGC_REDUCE_OP_MAX, &axis, 1, 1, in, 2, NULL, 0, 0, CONTIG};
    run_call(env, &m);
    m.what = "argmax(bf16(x*y))";
    m.op = WGC_REDUCE_OP_ARGMAX;
    run_call(env, &m);
    release(&in[0]), release(&in[1]);
    wgc_expr_release(e), wgc_expr_release(epi);
}

/* Empty reduced sets: sum 0, mean NaN, max refused; empty outputs launch nothing. */
static void test_empty(TestEnv *env) {
    WgcExpr *e = mul_expr(WGC_DTYPE_F32);
    int64_t shape[2] = {5, 0};
    T in[2] = {make(env, WGC_DTYPE_F32, 2, shape, CONTIG, 0, 1, NULL), make(env, WGC_DTYPE_F32, 2, shape, CONTIG, 0, 1, NULL)};
    int32_t axis = 1;
    Call c = {"sum over an empty axis", e, NULL, ref_mul, NULL, WGC_DTYPE_F32, WGC_REDUCE_OP_SUM, &axis, 1, 0, in, 2, NULL, 0, 0, CONTIG};
    run_call(env, &c);
    c.what = "mean over an empty axis";
    c.op = WGC_REDUCE_OP_MEAN;
    run_call(env, &c);
    int64_t oshape[1] = {5};
    T out = make(env, WGC_DTYPE_F32, 1, oshape, CONTIG, 0, 0, NULL);
    WgcTensor ins[2] = {in[0].t, in[1].t};
    EXPECT_STATUS(wgc_op_expr_reduce(env->stream, e, WGC_REDUCE_OP_MAX, &axis, 1, 0, ins, 2, NULL, 0, NULL, &out.t),
                  WGC_ERROR_INVALID_ARGUMENT);
    /* Reducing the other axis gives an empty output: nothing to do. */
    int32_t axis0 = 0;
    int64_t eshape[1] = {0};
    T eout = make(env, WGC_DTYPE_F32, 1, eshape, CONTIG, 0, 0, NULL);
    CHECK(wgc_op_expr_reduce(env->stream, e, WGC_REDUCE_OP_SUM, &axis0, 1, 0, ins, 2, NULL, 0, NULL, &eout.t));
    release(&in[0]), release(&in[1]), release(&out), release(&eout);
    wgc_expr_release(e);
}

static void test_misuse(TestEnv *env) {
    WgcExpr *e = mul_expr(WGC_DTYPE_F32), *epi = sqrt_eps_expr(WGC_DTYPE_F32);
    int64_t shape[2] = {4, 6}, oshape[1] = {4}, bad_shape[2] = {4, 5};
    T x = make(env, WGC_DTYPE_F32, 2, shape, CONTIG, -1, 1, NULL), y = make(env, WGC_DTYPE_F32, 2, shape, CONTIG, -1, 1, NULL);
    T h = make(env, WGC_DTYPE_F16, 2, shape, CONTIG, -1, 1, NULL), xb = make(env, WGC_DTYPE_F32, 2, bad_shape, CONTIG, -1, 1, NULL);
    T out = make(env, WGC_DTYPE_F32, 1, oshape, CONTIG, 0, 0, NULL), outh = make(env, WGC_DTYPE_F16, 1, oshape, CONTIG, 0, 0, NULL);
    T out2 = make(env, WGC_DTYPE_F32, 2, shape, CONTIG, 0, 0, NULL);
    WgcTensor ins[2] = {x.t, y.t};
    int32_t axis = 1;
    double eps = 1e-3;
    WgcStream *s = env->stream;
#define R(expr_, op_, axes_, nax_, ins_, nin_, ps_, nps_, epi_, out_) \
    wgc_op_expr_reduce(s, expr_, op_, axes_, nax_, 0, ins_, nin_, ps_, nps_, epi_, out_)
    /* NULLs. */
    EXPECT_STATUS(wgc_op_expr_reduce(NULL, e, 0, &axis, 1, 0, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(R(NULL, 0, &axis, 1, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(R(e, 0, NULL, 1, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(R(e, 0, &axis, 1, NULL, 2, NULL, 0, NULL, &out.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, NULL, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 1, epi, &out.t), WGC_ERROR_NULL_POINTER);
    /* Unknown op; counts; dtypes; shapes. */
    EXPECT_STATUS(R(e, WGC_NUM_REDUCE_OPS, &axis, 1, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 1, NULL, 0, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, &eps, 1, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, epi, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor mixed[2] = {x.t, h.t};
    EXPECT_STATUS(R(e, 0, &axis, 1, mixed, 2, NULL, 0, NULL, &out.t), WGC_ERROR_DTYPE_MISMATCH);
    WgcTensor nob[2] = {x.t, xb.t};
    EXPECT_STATUS(R(e, 0, &axis, 1, nob, 2, NULL, 0, NULL, &out.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, NULL, &outh.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(R(e, WGC_REDUCE_OP_ARGMAX, &axis, 1, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, NULL, &out2.t), WGC_ERROR_SHAPE_MISMATCH);
    /* Axes out of range, repeated, too many. */
    int32_t far = 2, twice[2] = {1, -1}, many[9] = {0};
    EXPECT_STATUS(R(e, 0, &far, 1, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(R(e, 0, twice, 2, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(R(e, 0, many, 9, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    /* out overlapping an input, sharing memory, outside its buffer. */
    WgcTensor alias = x.t;
    alias.rank = 1;
    alias.shape[0] = 4;
    alias.strides[0] = 1;
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, NULL, &alias), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor zero = out.t;
    zero.strides[0] = 0;
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, NULL, &zero), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor past = out.t;
    past.offset = 1000;
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, NULL, &past), WGC_ERROR_OUT_OF_RANGE);
    /* Expressions without exactly one output; epilogues of the wrong form. */
    WgcExpr *none = NULL, *two = NULL, *epi2 = NULL, *epih = NULL, *bf = NULL, *big = NULL;
    CHECK(wgc_expr_create(&none));
    N(wgc_expr_input(none, WGC_DTYPE_F32, &id_));
    N(wgc_expr_input(none, WGC_DTYPE_F32, &id_));
    EXPECT_STATUS(R(none, 0, &axis, 1, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    two = mul_expr(WGC_DTYPE_F32);
    CHECK(wgc_expr_output(two, 0));
    EXPECT_STATUS(R(two, 0, &axis, 1, ins, 2, NULL, 0, NULL, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    epi2 = mul_expr(WGC_DTYPE_F32);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, NULL, 0, epi2, &out.t), WGC_ERROR_INVALID_ARGUMENT);
    epih = sqrt_eps_expr(WGC_DTYPE_F16);
    EXPECT_STATUS(R(e, 0, &axis, 1, ins, 2, &eps, 1, epih, &out.t), WGC_ERROR_DTYPE_MISMATCH);
    /* A bf16 value reduces into bf16 only. */
    CHECK(wgc_expr_create(&bf));
    uint32_t b0 = N(wgc_expr_input(bf, WGC_DTYPE_F32, &id_));
    CHECK(wgc_expr_output(bf, N(wgc_expr_cast(bf, b0, WGC_DTYPE_BF16, &id_))));
    T outb = make(env, WGC_DTYPE_BF16, 1, oshape, CONTIG, 0, 0, NULL);
    EXPECT_STATUS(R(bf, 0, &axis, 1, ins, 1, NULL, 0, NULL, &out.t), WGC_ERROR_DTYPE_MISMATCH);
    /* MEAN of integers. */
    WgcExpr *ei = mul_expr(WGC_DTYPE_I32);
    T xi = make(env, WGC_DTYPE_I32, 2, shape, CONTIG, 0, 9, NULL), yi = make(env, WGC_DTYPE_I32, 2, shape, CONTIG, 0, 9, NULL);
    T outi = make(env, WGC_DTYPE_I32, 1, oshape, CONTIG, 0, 0, NULL);
    WgcTensor insi[2] = {xi.t, yi.t};
    EXPECT_STATUS(R(ei, WGC_REDUCE_OP_MEAN, &axis, 1, insi, 2, NULL, 0, NULL, &outi.t), WGC_ERROR_UNSUPPORTED);
    /* Constants of both past WGC_EXPR_MAX_SCALARS. */
    CHECK(wgc_expr_create(&big));
    uint32_t acc = N(wgc_expr_input(big, WGC_DTYPE_F32, &id_));
    for (uint32_t k = 0; k < WGC_EXPR_MAX_SCALARS; k++)
        acc = N(wgc_expr_binary(big, WGC_BINARY_OP_ADD, acc, N(wgc_expr_scalar(big, WGC_DTYPE_F32, k, &id_)), &id_));
    CHECK(wgc_expr_output(big, acc));
    EXPECT_STATUS(R(big, 0, &axis, 1, ins, 1, &eps, 1, epi, &out.t), WGC_ERROR_LIMIT_EXCEEDED);
    /* Nothing was written; a good call still works. */
    EXPECT(readback(&out, NULL));
    for (size_t k = 0; k < out.n; k++)
        if (out.val[k] != 0.0) {
            fprintf(stderr, "a failed launch wrote output element %zu\n", k);
            g_failures++;
            break;
        }
    CHECK(R(e, 0, &axis, 1, ins, 2, &eps, 1, epi, &out.t));
    readback(&out, NULL);
    double ref[4];
    for (int r = 0; r < 4; r++) {
        double sum = 0;
        for (int k = 0; k < 6; k++) sum += x.val[r * 6 + k] * y.val[r * 6 + k];
        ref[r] = sqrt((float)sum + (float)1e-3);
    }
    /* sqrt of a negative sum is NaN on both sides. */
    compare_f64("after misuse", out.val, ref, 4, 1e-5, 1e-5);
#undef R
    release(&x), release(&y), release(&h), release(&xb), release(&out), release(&outh), release(&out2);
    release(&outb), release(&xi), release(&yi), release(&outi);
    wgc_expr_release(e), wgc_expr_release(epi), wgc_expr_release(none), wgc_expr_release(two);
    wgc_expr_release(epi2), wgc_expr_release(epih), wgc_expr_release(bf), wgc_expr_release(big), wgc_expr_release(ei);
}

int main(void) {
    TestEnv env = test_env();
    test_axes_and_views(&env, WGC_DTYPE_F32);
    test_kernels_and_broadcast(&env, WGC_DTYPE_F32);
    test_variance_epilogue(&env, WGC_DTYPE_F32);
    test_max_abs_nan_inf(&env, WGC_DTYPE_F32);
    if (env.info.has_f16) {
        test_axes_and_views(&env, WGC_DTYPE_F16);
        test_kernels_and_broadcast(&env, WGC_DTYPE_F16);
        test_variance_epilogue(&env, WGC_DTYPE_F16);
        test_max_abs_nan_inf(&env, WGC_DTYPE_F16);
        test_cast_inputs(&env);
    }
    test_prod_param(&env);
    test_integers(&env);
    test_bf16_values(&env);
    test_empty(&env);
    test_misuse(&env);
    test_env_release(&env);
    return test_finish("test_expr_reduce");
}
