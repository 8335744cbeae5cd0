/* Row operators: softmax, log-softmax, layer norm and RMS norm over short
 * (32, 256), mid (1000-4096) and vocabulary-long rows, f32 and f16. */
#include <math.h>

#include "cases.h"

enum { K_SOFTMAX, K_LOG_SOFTMAX, K_LAYER_NORM, K_RMS_NORM };

typedef struct {
    int kind;
    HT x, w, b, out;
} Rows;

static WgcStatus run_rows(void *p) {
    Rows *r = p;
    switch (r->kind) {
    case K_SOFTMAX: return OP(wgc_op_softmax, g_stream, &r->x.t, -1, &r->out.t);
    case K_LOG_SOFTMAX: return OP(wgc_op_log_softmax, g_stream, &r->x.t, -1, &r->out.t);
    case K_LAYER_NORM: return OP(wgc_op_layer_norm, g_stream, &r->x.t, &r->w.t, &r->b.t, 1, 1e-5f, &r->out.t);
    default: return OP(wgc_op_rms_norm, g_stream, &r->x.t, &r->w.t, 1, 1e-6f, &r->out.t);
    }
}

/* Compares one row against a double-precision reference. */
static int check_row(const Rows *r, const float *x, const float *got, size_t C) {
    double mx = -INFINITY, s = 0, mean = 0, var = 0, ms = 0;
    for (size_t j = 0; j < C; j++) {
        mx = fmax(mx, x[j]);
        mean += x[j];
        ms += (double)x[j] * x[j];
    }
    mean /= (double)C;
    ms /= (double)C;
    for (size_t j = 0; j < C; j++) {
        s += exp(x[j] - mx);
        var += (x[j] - mean) * (x[j] - mean);
    }
    var /= (double)C;
    double slack = f16_slack(r->x.t.dtype);
    int bad = 0;
    for (size_t j = 0; j < C; j++) {
        double ref, atol;
        if (r->kind == K_SOFTMAX) ref = exp(x[j] - mx) / s, atol = 1e-9 + 1e-5 * ref;
        else if (r->kind == K_LOG_SOFTMAX) ref = (x[j] - mx) - log(s), atol = 1e-5;
        else if (r->kind == K_LAYER_NORM) ref = (x[j] - mean) / sqrt(var + 1e-5) * r->w.host[j] + r->b.host[j], atol = 1e-4;
        else ref = x[j] / sqrt(ms + 1e-6) * r->w.host[j], atol = 1e-4;
        /* f16: outputs below the normal range (6.1e-5) read back as 0 */
        bad += !close_to(got[j], ref, atol + slack * 0.07, slack);
    }
    return bad;
}

static void rows_case(const char *name, const char *cls, int kind, WgcDtype dt, int64_t R, int64_t C) {
    Case c = {name, cls, dt == WGC_DTYPE_F16 ? "f16" : "f32", "", "bytes", 0, 0};
    int64_t shape[2] = {R, C}, wshape[1] = {C};
    fmt_shape(c.size, sizeof c.size, 2, shape);
    c.in_bytes = (double)(R * C) * dtype_size(dt);
    c.amount = 2 * c.in_bytes;
    if (!case_begin(&c)) return;
    Rows r = {kind, ht_random(dt, 2, shape), {0}, {0}, ht_empty(dt, 2, shape)};
    if (kind >= K_LAYER_NORM) {
        r.w = ht_random(dt, 1, wshape);
        r.b = ht_random(dt, 1, wshape);
    }
    if (case_first_run(&c, run_rows, &r)) {
        float *got = ht_read(&r.out);
        size_t rows[64], k = sample_rows((size_t)R, 64, rows);
        int bad = 0;
        for (size_t i = 0; i < k; i++) bad += check_row(&r, r.x.host + rows[i] * C, got + rows[i] * C, (size_t)C);
        if (bad) fprintf(stderr, "%s: %d entries wrong\n", name, bad);
        free(got);
        case_time(&c, run_rows, &r, !bad, 10);
    }
    ht_free(&r.x);
    ht_free(&r.out);
    if (r.w.buf) ht_free(&r.w);
    if (r.b.buf) ht_free(&r.b);
}

void cases_rows(void) {
    const WgcDtype F32 = WGC_DTYPE_F32, F16 = WGC_DTYPE_F16;
    rows_case("softmax_f32", "softmax/rows", K_SOFTMAX, F32, SZ(65536, 9), SZ(4096, 4096));
    rows_case("softmax_rows32_f32", "softmax/short-rows", K_SOFTMAX, F32, SZ(1 << 21, 1001), 32);
    rows_case("softmax_rows32_f16", "softmax/short-rows", K_SOFTMAX, F16, SZ(1 << 21, 1001), 32);
    rows_case("softmax_attn2048_f16", "softmax/rows", K_SOFTMAX, F16, SZ(65536, 33), SZ(2048, 2048));
    rows_case("softmax_vocab50k_f32", "softmax/long-rows", K_SOFTMAX, F32, SZ(256, 3), SZ(50257, 50257));
    rows_case("softmax_vocab128k_f32", "softmax/long-rows", K_SOFTMAX, F32, SZ(32, 2), SZ(128256, 128256));
    rows_case("log_softmax_vocab32k_f32", "softmax/log", K_LOG_SOFTMAX, F32, SZ(512, 5), SZ(32000, 32000));
    rows_case("log_softmax_rows1000_f32", "softmax/log", K_LOG_SOFTMAX, F32, SZ(4096, 37), SZ(1000, 1000));
    rows_case("layer_norm_f32", "norm/long-rows", K_LAYER_NORM, F32, SZ(65536, 9), SZ(4096, 4096));
    rows_case("layer_norm_rows4096_f16", "norm/long-rows", K_LAYER_NORM, F16, SZ(16384, 9), SZ(4096, 4096));
    rows_case("layer_norm_rows256_f32", "norm/short-rows", K_LAYER_NORM, F32, SZ(1 << 20, 1001), 256);
    rows_case("layer_norm_rows256_f16", "norm/short-rows", K_LAYER_NORM, F16, SZ(1 << 20, 1001), 256);
    rows_case("rms_norm_rows4096_f32", "norm/long-rows", K_RMS_NORM, F32, SZ(16384, 9), SZ(4096, 4096));
    rows_case("rms_norm_rows4096_f16", "norm/long-rows", K_RMS_NORM, F16, SZ(16384, 9), SZ(4096, 4096));
    rows_case("rms_norm_rows256_f32", "norm/short-rows", K_RMS_NORM, F32, SZ(1 << 20, 1001), 256);
    rows_case("rms_norm_rows256_f16", "norm/short-rows", K_RMS_NORM, F16, SZ(1 << 20, 1001), 256);
}
