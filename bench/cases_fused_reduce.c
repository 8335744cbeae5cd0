/* Reductions with an elementwise prologue (wgc_op_expr_reduce) against the
 * same work as separate operators: sum(x*y) over the last dim of
 * 8192x4096 (f32 and f16), mean((x-m)^2) over the last dim with m a
 * (8192, 1) column (f32 and f16), and max(|x|) over all of 2^26 f32.
 * "amount" is the essential bytes: each input read once, the output
 * written once. Each fused case also prints its first call (expression
 * built, kernels compiled, run, waited for) as <name>_first_call, in
 * wall-clock ms. */
#include <math.h>

#include "cases.h"

/* Weak, as harness.h declares the operators: against a library without
 * them the fused cases are listed as unsupported. */
#if defined(__GNUC__) && !defined(_WIN32)
#pragma weak wgc_op_expr_reduce
#pragma weak wgc_expr_create
#pragma weak wgc_expr_release
#pragma weak wgc_expr_input
#pragma weak wgc_expr_unary
#pragma weak wgc_expr_binary
#pragma weak wgc_expr_output
#endif

enum { K_DOT, K_SQDEV, K_MAXABS };

typedef struct {
    int kind, fused;
    WgcExpr *expr;
    HT x, y, out, tmp, tmp2;
} Fr;

static WgcExpr *build(int kind, WgcDtype dt) {
    WgcExpr *e = NULL;
    uint32_t a, b, t, v;
    if (OP(wgc_expr_create, &e) != WGC_OK) return NULL;
    WgcStatus s = wgc_expr_input(e, dt, &a);
    if (kind == K_DOT) {
        if (s == WGC_OK) s = wgc_expr_input(e, dt, &b);
        if (s == WGC_OK) s = wgc_expr_binary(e, WGC_BINARY_OP_MUL, a, b, &v);
    } else if (kind == K_SQDEV) {
        if (s == WGC_OK) s = wgc_expr_input(e, dt, &b);
        if (s == WGC_OK) s = wgc_expr_binary(e, WGC_BINARY_OP_SUB, a, b, &t);
        if (s == WGC_OK) s = wgc_expr_binary(e, WGC_BINARY_OP_MUL, t, t, &v);
    } else if (s == WGC_OK) {
        s = wgc_expr_unary(e, WGC_UNARY_OP_ABS, a, &v);
    }
    if (s == WGC_OK) s = wgc_expr_output(e, v);
    if (s != WGC_OK) {
        wgc_expr_release(e);
        return NULL;
    }
    return e;
}

static WgcStatus run_fr(void *p) {
    Fr *f = p;
    WgcStatus s;
    int32_t last = -1;
    uint32_t op = f->kind == K_DOT ? WGC_REDUCE_OP_SUM : f->kind == K_SQDEV ? WGC_REDUCE_OP_MEAN : WGC_REDUCE_OP_MAX;
    uint32_t naxes = f->kind == K_MAXABS ? 0 : 1;
    if (f->fused) {
        WgcTensor in[2] = {f->x.t, f->y.t};
        uint32_t nin = f->kind == K_MAXABS ? 1 : 2;
        return OP(wgc_op_expr_reduce, g_stream, f->expr, op, &last, naxes, 0, in, nin, NULL, 0, NULL, &f->out.t);
    }
    if (f->kind == K_DOT) {
        if ((s = wgc_op_binary(g_stream, WGC_BINARY_OP_MUL, &f->x.t, &f->y.t, &f->tmp.t))) return s;
    } else if (f->kind == K_SQDEV) {
        if ((s = wgc_op_binary(g_stream, WGC_BINARY_OP_SUB, &f->x.t, &f->y.t, &f->tmp2.t))) return s;
        if ((s = wgc_op_binary(g_stream, WGC_BINARY_OP_MUL, &f->tmp2.t, &f->tmp2.t, &f->tmp.t))) return s;
    } else if ((s = wgc_op_unary(g_stream, WGC_UNARY_OP_ABS, &f->x.t, &f->tmp.t))) {
        return s;
    }
    return wgc_op_reduce(g_stream, op, &f->tmp.t, &last, naxes, 0, &f->out.t);
}

/* Sampled outputs against double references of the stored inputs. */
static int check_fr(const Fr *f) {
    float *y = ht_read(&f->out);
    WgcDtype dt = f->out.t.dtype;
    size_t bad = 0;
    if (f->kind == K_MAXABS) {
        double m = 0;
        for (size_t i = 0; i < f->x.n; i++) m = fmax(m, fabs(f->x.host[i]));
        bad += y[0] != (float)m;
    } else {
        size_t C = (size_t)f->x.t.shape[1], R = f->x.n / C, rows[16];
        size_t k = sample_rows(R, 16, rows);
        for (size_t i = 0; i < k; i++) {
            size_t r = rows[i];
            double acc = 0, mag = 0;
            for (size_t c = 0; c < C; c++) {
                double a = f->x.host[r * C + c], v;
                if (f->kind == K_DOT) {
                    v = a * f->y.host[r * C + c];
                } else {
                    double d = a - f->y.host[r];
                    v = d * d;
                }
                if (dt == WGC_DTYPE_F16) v = (double)(float)v; /* products rounded per op: within slack */
                acc += v;
                mag += fabs(v);
            }
            double ref = f->kind == K_DOT ? acc : acc / (double)C;
            double scale = f->kind == K_DOT ? mag : mag / (double)C;
            bad += !close_to(y[r], ref, 1e-5 * scale + f16_slack(dt) * scale, f16_slack(dt) * 2);
        }
    }
    if (bad) fprintf(stderr, "%zu outputs wrong\n", bad);
    free(y);
    return bad != 0;
}

static void fused_reduce_case(const char *name, int kind, int fused, WgcDtype dt, int64_t R, int64_t C) {
    static const char *cls[3] = {"fusion/reduce_dot", "fusion/reduce_sqdev", "fusion/reduce_maxabs"};
    Case c = {name, cls[kind], dtype_name(dt), "", "bytes", 0, 0};
    int64_t s[2] = {R, C}, col[2] = {R, 1}, rows[1] = {R}, one[1] = {1}, n[1] = {R * C};
    double es = (double)dtype_size(dt), elems = (double)(R * C);
    Fr f;
    memset(&f, 0, sizeof f);
    f.kind = kind, f.fused = fused;
    if (kind == K_MAXABS) {
        fmt_shape(c.size, sizeof c.size, 1, n);
        c.in_bytes = elems * es;
        c.amount = c.in_bytes + es;
    } else {
        fmt_shape(c.size, sizeof c.size, 2, s);
        c.in_bytes = elems * es * (kind == K_DOT ? 2 : 1) + (kind == K_SQDEV ? (double)R * es : 0);
        c.amount = c.in_bytes + (double)R * es;
    }
    if (!case_begin(&c)) return;
    if (kind == K_MAXABS) {
        f.x = ht_random(dt, 1, n);
        f.out = ht_empty(dt, 0, one);
        if (!fused) f.tmp = ht_empty(dt, 1, n);
    } else {
        f.x = ht_random(dt, 2, s);
        f.y = kind == K_DOT ? ht_random(dt, 2, s) : ht_random(dt, 2, col);
        f.out = ht_empty(dt, 1, rows);
        if (!fused) f.tmp = ht_empty(dt, 2, s);
        if (!fused && kind == K_SQDEV) f.tmp2 = ht_empty(dt, 2, s);
    }
    double t0 = now_ms();
    if (fused) f.expr = build(kind, dt);
    if (case_first_run(&c, run_fr, &f)) {
        double first = now_ms() - t0;
        if (fused) {
            char first_name[96];
            snprintf(first_name, sizeof first_name, "%s_first_call", name);
            Case fc = c;
            fc.limit = "latency";
            case_emit(&fc, first_name, first, 1);
        }
        int bad = check_fr(&f);
        case_time(&c, run_fr, &f, !bad, 10);
    }
    if (f.expr) wgc_expr_release(f.expr);
    HT *all[5] = {&f.x, &f.y, &f.out, &f.tmp, &f.tmp2};
    for (int i = 0; i < 5; i++)
        if (all[i]->buf) ht_free(all[i]);
}

void cases_fused_reduce(void) {
    const WgcDtype F32 = WGC_DTYPE_F32, F16 = WGC_DTYPE_F16;
    int64_t R = SZ(8192, 37), C = SZ(4096, 1001);
    fused_reduce_case("fused_sum_xy_last_f32", K_DOT, 1, F32, R, C);
    fused_reduce_case("separate_sum_xy_last_f32", K_DOT, 0, F32, R, C);
    fused_reduce_case("fused_sum_xy_last_f16", K_DOT, 1, F16, R, C);
    fused_reduce_case("separate_sum_xy_last_f16", K_DOT, 0, F16, R, C);
    fused_reduce_case("fused_mean_sqdev_last_f32", K_SQDEV, 1, F32, R, C);
    fused_reduce_case("separate_mean_sqdev_last_f32", K_SQDEV, 0, F32, R, C);
    fused_reduce_case("fused_mean_sqdev_last_f16", K_SQDEV, 1, F16, R, C);
    fused_reduce_case("separate_mean_sqdev_last_f16", K_SQDEV, 0, F16, R, C);
    fused_reduce_case("fused_max_abs_all_f32", K_MAXABS, 1, F32, 1, SZ(1 << 26, 100003));
    fused_reduce_case("separate_max_abs_all_f32", K_MAXABS, 0, F32, 1, SZ(1 << 26, 100003));
}
