/* Fused elementwise expressions (wgc_op_expr) against the same work as
 * separate operators: the six-op chain relu(a*b + c).sqrt() * 0.5 +
 * sigmoid(c) over 2^26 f32, SwiGLU silu(g) * u over 8192x11008 f16, and
 * rms_norm(h + r) returning both over 8192x4096 f16
 * (wgc_op_rms_norm_residual, or the add and the norm). "amount" is the essential bytes: each input read once,
 * each output written once. Each fused case also prints its first call
 * (expression built, kernel compiled, run, waited for) as
 * <name>_first_call, in wall-clock ms. */
#include <math.h>

#include "cases.h"

/* Weak, as harness.h declares the operators: against a library without
 * expressions the fused cases are listed as unsupported. */
#if defined(__GNUC__) && !defined(_WIN32)
#pragma weak wgc_op_expr
#pragma weak wgc_op_rms_norm_residual
#pragma weak wgc_expr_create
#pragma weak wgc_expr_release
#pragma weak wgc_expr_input
#pragma weak wgc_expr_scalar
#pragma weak wgc_expr_unary
#pragma weak wgc_expr_binary
#pragma weak wgc_expr_output
#endif

enum { K_CHAIN, K_SWIGLU, K_RESIDUAL_NORM };

typedef struct {
    int kind, fused;
    WgcExpr *expr;
    HT in[3], out[2], tmp[3];
} Fu;

static WgcExpr *build(int kind, WgcDtype dt) {
    WgcExpr *e = NULL;
    uint32_t a, b, c, t0, t1, t2, t3, h, y;
    if (OP(wgc_expr_create, &e) != WGC_OK) return NULL;
    if (kind == K_CHAIN) {
        wgc_expr_input(e, dt, &a), wgc_expr_input(e, dt, &b), wgc_expr_input(e, dt, &c);
        wgc_expr_binary(e, WGC_BINARY_OP_MUL, a, b, &t0);
        wgc_expr_binary(e, WGC_BINARY_OP_ADD, t0, c, &t1);
        wgc_expr_unary(e, WGC_UNARY_OP_RELU, t1, &t2);
        wgc_expr_unary(e, WGC_UNARY_OP_SQRT, t2, &t3);
        wgc_expr_scalar(e, dt, 0.5, &h);
        wgc_expr_binary(e, WGC_BINARY_OP_MUL, t3, h, &t0);
        wgc_expr_unary(e, WGC_UNARY_OP_SIGMOID, c, &t1);
        wgc_expr_binary(e, WGC_BINARY_OP_ADD, t0, t1, &y);
    } else if (kind == K_SWIGLU) {
        wgc_expr_input(e, dt, &a), wgc_expr_input(e, dt, &b);
        wgc_expr_unary(e, WGC_UNARY_OP_SILU, a, &t0);
        wgc_expr_binary(e, WGC_BINARY_OP_MUL, t0, b, &y);
    } else {
        wgc_expr_input(e, dt, &a), wgc_expr_input(e, dt, &b);
        wgc_expr_binary(e, WGC_BINARY_OP_ADD, a, b, &y);
    }
    if (wgc_expr_output(e, y) != WGC_OK) {
        wgc_expr_release(e);
        return NULL;
    }
    return e;
}

static WgcStatus run_fu(void *p) {
    Fu *f = p;
    WgcStatus s;
    if (f->kind == K_CHAIN) {
        if (f->fused) {
            WgcTensor in[3] = {f->in[0].t, f->in[1].t, f->in[2].t};
            return OP(wgc_op_expr, g_stream, f->expr, in, 3, &f->out[0].t, 1, NULL, 0);
        }
        WgcTensor *t0 = &f->tmp[0].t, *t1 = &f->tmp[1].t, *t2 = &f->tmp[2].t;
        if ((s = wgc_op_binary(g_stream, WGC_BINARY_OP_MUL, &f->in[0].t, &f->in[1].t, t0))) return s;
        if ((s = wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, t0, &f->in[2].t, t1))) return s;
        if ((s = wgc_op_unary(g_stream, WGC_UNARY_OP_RELU, t1, t0))) return s;
        if ((s = wgc_op_unary(g_stream, WGC_UNARY_OP_SQRT, t0, t1))) return s;
        if ((s = wgc_op_binary_scalar(g_stream, WGC_BINARY_OP_MUL, t1, 0.5, t0))) return s;
        if ((s = wgc_op_unary(g_stream, WGC_UNARY_OP_SIGMOID, &f->in[2].t, t2))) return s;
        return wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, t0, t2, &f->out[0].t);
    }
    if (f->kind == K_SWIGLU) {
        if (f->fused) {
            WgcTensor in[2] = {f->in[0].t, f->in[1].t};
            return OP(wgc_op_expr, g_stream, f->expr, in, 2, &f->out[0].t, 1, NULL, 0);
        }
        if ((s = wgc_op_unary(g_stream, WGC_UNARY_OP_SILU, &f->in[0].t, &f->tmp[0].t))) return s;
        return wgc_op_binary(g_stream, WGC_BINARY_OP_MUL, &f->tmp[0].t, &f->in[1].t, &f->out[0].t);
    }
    /* s = h + r (out[1]), y = rms_norm(s) (out[0]): one fused operator, or
     * the add and then the norm. */
    if (f->fused)
        return OP(wgc_op_rms_norm_residual, g_stream, &f->in[0].t, &f->in[1].t, &f->in[2].t, 1, 1e-6f, &f->out[0].t,
                  &f->out[1].t);
    if ((s = wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, &f->in[0].t, &f->in[1].t, &f->out[1].t))) return s;
    return wgc_op_rms_norm(g_stream, &f->out[1].t, &f->in[2].t, 1, 1e-6f, &f->out[0].t);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Sampled outputs against double references of the stored inputs. */
static int check_fu(const Fu *f) {
    float *y = ht_read(&f->out[0]);
    float *s = f->kind == K_RESIDUAL_NORM ? ht_read(&f->out[1]) : NULL;
    WgcDtype dt = f->out[0].t.dtype;
    double slack = f16_slack(dt) * 2;
    size_t n = f->out[0].n, bad = 0;
    const float *a = f->in[0].host, *b = f->in[1].host;
    if (f->kind == K_RESIDUAL_NORM) {
        size_t C = (size_t)f->out[0].t.shape[1], R = n / C, rows[16];
        size_t k = sample_rows(R, 16, rows);
        for (size_t i = 0; i < k; i++) {
            size_t r = rows[i];
            double ss = 0;
            for (size_t c = 0; c < C; c++) {
                double v = s[r * C + c];
                bad += !close_to(v, (double)a[r * C + c] + b[r * C + c], slack, slack);
                ss += v * v;
            }
            double rstd = 1.0 / sqrt(ss / (double)C + 1e-6);
            for (size_t c = 0; c < C; c++)
                bad += !close_to(y[r * C + c], s[r * C + c] * rstd * f->in[2].host[c], slack, slack);
        }
    } else {
        for (size_t i = 0; i < n; i += n > (1u << 20) ? 4099 : 1) {
            double ref;
            if (f->kind == K_CHAIN) {
                double c = f->in[2].host[i], t = (double)a[i] * b[i] + c;
                ref = sqrt(t > 0 ? t : 0) * 0.5 + sigmoid(c);
            } else {
                ref = a[i] * sigmoid(a[i]) * b[i];
            }
            bad += !close_to(y[i], ref, 1e-5 + slack, 1e-5 + slack);
        }
    }
    if (bad) fprintf(stderr, "%zu elements wrong\n", bad);
    free(y);
    free(s);
    return bad != 0;
}

static void fusion_case(const char *name, int kind, int fused, WgcDtype dt, int64_t R, int64_t C) {
    static const char *cls[3] = {"fusion/chain", "fusion/swiglu", "fusion/residual_norm"};
    Case c = {name, cls[kind], dtype_name(dt), "", "bytes", 0, 0};
    int64_t s[2] = {R, C}, w[1] = {C};
    if (R == 1) fmt_shape(c.size, sizeof c.size, 1, &C);
    else fmt_shape(c.size, sizeof c.size, 2, s);
    int n_in = kind == K_CHAIN ? 3 : 2, n_out = kind == K_RESIDUAL_NORM ? 2 : 1;
    double elems = (double)(R * C), es = (double)dtype_size(dt);
    c.in_bytes = elems * es * n_in;
    c.amount = c.in_bytes + elems * es * n_out + (kind == K_RESIDUAL_NORM ? (double)C * es : 0);
    if (!case_begin(&c)) return;
    Fu f;
    memset(&f, 0, sizeof f);
    f.kind = kind, f.fused = fused;
    for (int i = 0; i < n_in; i++) f.in[i] = ht_random(dt, 2, s);
    if (kind == K_RESIDUAL_NORM) f.in[2] = ht_random(dt, 1, w);
    for (int i = 0; i < n_out; i++) f.out[i] = ht_empty(dt, 2, s);
    if (!fused && kind != K_RESIDUAL_NORM)
        for (int i = 0; i < (kind == K_CHAIN ? 3 : 1); i++) f.tmp[i] = ht_empty(dt, 2, s);
    double t0 = now_ms();
    if (fused && kind != K_RESIDUAL_NORM) f.expr = build(kind, dt);
    if (case_first_run(&c, run_fu, &f)) {
        double first = now_ms() - t0;
        if (fused && kind != K_RESIDUAL_NORM) {
            char first_name[96];
            snprintf(first_name, sizeof first_name, "%s_first_call", name);
            Case fc = c;
            fc.limit = "latency";
            case_emit(&fc, first_name, first, 1);
        }
        int bad = check_fu(&f);
        case_time(&c, run_fu, &f, !bad, 10);
    }
    if (f.expr) wgc_expr_release(f.expr);
    for (int i = 0; i < 3; i++) {
        if (f.in[i].buf) ht_free(&f.in[i]);
        if (f.tmp[i].buf) ht_free(&f.tmp[i]);
    }
    for (int i = 0; i < 2; i++)
        if (f.out[i].buf) ht_free(&f.out[i]);
}

void cases_fusion(void) {
    const WgcDtype F32 = WGC_DTYPE_F32, F16 = WGC_DTYPE_F16;
    fusion_case("fused_chain6_f32", K_CHAIN, 1, F32, 1, SZ(1 << 26, 100003));
    fusion_case("separate_chain6_f32", K_CHAIN, 0, F32, 1, SZ(1 << 26, 100003));
    fusion_case("fused_swiglu_f16", K_SWIGLU, 1, F16, SZ(8192, 37), SZ(11008, 1001));
    fusion_case("separate_swiglu_f16", K_SWIGLU, 0, F16, SZ(8192, 37), SZ(11008, 1001));
    fusion_case("fused_residual_rms_norm_f16", K_RESIDUAL_NORM, 1, F16, SZ(8192, 37), SZ(4096, 1024));
    fusion_case("separate_add_rms_norm_f16", K_RESIDUAL_NORM, 0, F16, SZ(8192, 37), SZ(4096, 1024));
}
