/* Batch norm in inference form (running statistics, weight and bias) on the
 * activations of ResNet-50 and MobileNetV2 blocks, NCHW and channels-last,
 * f32 and f16: a memory-bound op (read x, write y), reported in GB/s. Every
 * element is checked against a double-precision reference before timing. */
#include <math.h>

#include "cases.h"

typedef struct {
    HT x, mean, var, w, b, out;
} BatchNorm;

static WgcStatus run_batch_norm(void *p) {
    BatchNorm *q = p;
    return wgc_op_batch_norm(g_stream, &q->x.t, &q->mean.t, &q->var.t, &q->w.t, &q->b.t, 1e-5f, &q->out.t);
}

/* (N, C, H, H); cl: input and output channels-last (stored (N, H, H, C)). */
static void batch_norm_case(const char *name, WgcDtype dt, int64_t N, int64_t C, int64_t H, int cl) {
    int f16 = dt == WGC_DTYPE_F16;
    Case c = {name, cl ? "norm/batch-nhwc" : "norm/batch", f16 ? "f16" : "f32", "", "bytes", 0, 0};
    snprintf(c.size, sizeof c.size, "N=%lld C=%lld %lldx%lld%s", (long long)N, (long long)C, (long long)H, (long long)H,
             cl ? " channels-last" : "");
    int64_t count = N * C * H * H;
    c.in_bytes = (double)count * (double)dtype_size(dt);
    c.amount = 2.0 * c.in_bytes;
    if (!case_begin(&c)) return;
    BatchNorm q;
    int64_t shape[4] = {N, C, H, H}, stored[4] = {N, H, H, C}, cs[1] = {C};
    q.x = ht_random(dt, 4, cl ? stored : shape);
    q.out = ht_empty(dt, 4, cl ? stored : shape);
    if (cl) {
        int64_t strides[4] = {H * H * C, 1, H * C, C};
        for (HT *t = &q.x; t; t = t == &q.x ? &q.out : NULL) {
            memcpy(t->t.shape, shape, sizeof shape);
            memcpy(t->t.strides, strides, sizeof strides);
        }
    }
    q.mean = ht_random(dt, 1, cs);
    q.w = ht_random(dt, 1, cs);
    q.b = ht_random(dt, 1, cs);
    /* variances in [0.25, 1.25]: positive, from random values in [-1, 1) */
    float *v = malloc((size_t)C * sizeof(float));
    for (int64_t k = 0; k < C; k++) v[k] = 0.75f + 0.5f * q.mean.host[(k * 7 + 3) % C];
    q.var = ht_values(dt, 1, cs, v);
    free(v);
    if (case_first_run(&c, run_batch_norm, &q)) {
        float *got = ht_read(&q.out);
        int64_t bad = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < C; k++) {
                double s = q.w.host[k] / sqrt((double)q.var.host[k] + (double)1e-5f);
                for (int64_t i = 0; i < H * H; i++) {
                    int64_t at = cl ? (n * H * H + i) * C + k : (n * C + k) * H * H + i;
                    double ref = ((double)q.x.host[at] - q.mean.host[k]) * s + q.b.host[k];
                    bad += !close_to(got[at], ref, f16 ? 1e-3 : 2e-6, f16 ? f16_slack(dt) : 1e-5);
                }
            }
        if (bad) fprintf(stderr, "%s: %lld of %lld outputs wrong\n", name, (long long)bad, (long long)count);
        free(got);
        case_time(&c, run_batch_norm, &q, !bad, 20);
    }
    ht_free(&q.x), ht_free(&q.mean), ht_free(&q.var), ht_free(&q.w), ht_free(&q.b), ht_free(&q.out);
}

void cases_norm_batch(void) {
    /* ResNet-50 stage 1 (64 and 256 channels) and MobileNetV2's expanded
     * 192 channels, batch 32 at 56x56; small: odd sizes across tile edges. */
    static const struct {
        const char *tag;
        int64_t c, c_small;
    } shapes[] = {{"64", 64, 12}, {"256", 256, 20}, {"192", 192, 7}};
    for (int cl = 0; cl < 2; cl++)
        for (int f16 = 0; f16 < 2; f16++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                char name[64];
                snprintf(name, sizeof name, "batch_norm%s%s_%s_56", f16 ? "_f16" : "", cl ? "_nhwc" : "", shapes[s].tag);
                batch_norm_case(name, f16 ? WGC_DTYPE_F16 : WGC_DTYPE_F32, SZ(32, 2),
                                SZ(shapes[s].c, shapes[s].c_small), SZ(56, 9), cl);
            }
}
