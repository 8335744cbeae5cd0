/* Batch norm in inference form (running statistics, weight and bias) on the
 * activations of ResNet-50 and MobileNetV2 blocks, NCHW and channels-last,
 * f32 and f16, batch 32 and 256: a memory-bound op (read x, write y),
 * reported in GB/s. Every element is checked against a double-precision
 * reference before timing. Beside each, "copy_<case>": the library's copy
 * (wgc_op_copy) of the same bytes, same dtype, timed in the same run, the
 * ceiling the batch norm is measured against at that size (at batch 32 a
 * launch's ramp and tail are a visible part of the time; bn_copy_table.py
 * prints the fractions). Then ResNet-50 convolutions with their batch norm
 * folded in. */
#include <math.h>

#include "cases.h"

typedef struct {
    HT x, mean, var, w, b, out;
} BatchNorm;

static WgcStatus run_batch_norm(void *p) {
    BatchNorm *q = p;
    return wgc_op_batch_norm(g_stream, &q->x.t, &q->mean.t, &q->var.t, &q->w.t, &q->b.t, 1e-5f, &q->out.t);
}

/* The same bytes as one dense run: x's buffer copied into out's. */
typedef struct {
    WgcTensor from, to;
} FlatCopy;

static WgcStatus run_flat_copy(void *p) {
    FlatCopy *q = p;
    return OP(wgc_op_copy, g_stream, &q->from, &q->to);
}

static WgcTensor flat_view(const HT *h, int64_t count) {
    WgcTensor t = h->t;
    t.rank = 1, t.offset = 0, t.shape[0] = count, t.strides[0] = 1;
    return t;
}

/* Times the copy case `c` of x's bytes into out (checked: out equals x,
 * a sample for large tensors). */
static void time_flat_copy(const Case *c, BatchNorm *q, int64_t count) {
    FlatCopy f = {flat_view(&q->x, count), flat_view(&q->out, count)};
    if (!case_first_run(c, run_flat_copy, &f)) return;
    float *got = ht_read(&q->out);
    int64_t step = count > (1 << 24) ? 4099 : 1, bad = 0;
    for (int64_t i = 0; i < count; i += step) bad += got[i] != q->x.host[i];
    bad += got[count - 1] != q->x.host[count - 1];
    if (bad) fprintf(stderr, "%s: %lld elements differ from the source\n", c->name, (long long)bad);
    free(got);
    case_time(c, run_flat_copy, &f, !bad, 20);
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
    char copy_name[96];
    snprintf(copy_name, sizeof copy_name, "copy_%s", name);
    Case cc = c;
    cc.name = copy_name;
    snprintf(cc.size, sizeof cc.size, "%lld elements (the bytes of %s)", (long long)count, name);
    int want = case_begin(&c), want_copy = case_begin(&cc);
    if (!want && !want_copy) return;
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
    if (want && case_first_run(&c, run_batch_norm, &q)) {
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
    if (want_copy) time_flat_copy(&cc, &q, count);
    ht_free(&q.x), ht_free(&q.mean), ht_free(&q.var), ht_free(&q.w), ht_free(&q.b), ht_free(&q.out);
}

typedef struct {
    WgcConv2dParams p;
    HT x, w, out;
    HT wf, bf; /* folded weight and bias */
} ConvFolded;

static WgcStatus run_conv_folded(void *p) {
    ConvFolded *q = p;
    return wgc_op_conv2d(g_stream, &q->p, &q->x.t, &q->wf.t, &q->bf.t, &q->out.t);
}

/* A convolution with an inference batch norm folded in once
 * (wgc_conv2d_fold_batch_norm, not timed): the network's cost of conv + BN.
 * Stride 1, padding K/2. Sampled outputs checked against convolution then
 * batch norm in double. */
static void conv_folded_case(const char *name, WgcDtype dt, int64_t N, int64_t C, int64_t H, int64_t O, int64_t K) {
    int f16 = dt == WGC_DTYPE_F16;
    Case c = {name, "conv/bn-folded", f16 ? "f16" : "f32", "", f16 ? "fp16" : "fp32", 0, 0};
    snprintf(c.size, sizeof c.size, "N=%lld C=%lld %lldx%lld O=%lld k%lld", (long long)N, (long long)C, (long long)H,
             (long long)H, (long long)O, (long long)K);
    c.in_bytes = (double)dtype_size(dt) * (double)(N * C * H * H + O * C * K * K);
    c.amount = 2.0 * (double)(N * O * H * H) * (double)(C * K * K);
    if (!case_begin(&c)) return;
    ConvFolded q;
    memset(&q, 0, sizeof q);
    q.p.struct_size = sizeof q.p;
    q.p.pad_h = q.p.pad_w = (uint32_t)(K / 2);
    int64_t xs[4] = {N, C, H, H}, ws[4] = {O, C, K, K}, os[4] = {N, O, H, H}, vs[1] = {O};
    q.x = ht_random(dt, 4, xs);
    q.w = ht_random(dt, 4, ws);
    q.out = ht_empty(dt, 4, os);
    q.wf = ht_empty(dt, 4, ws);
    q.bf = ht_empty(dt, 1, vs);
    HT mean = ht_random(dt, 1, vs), g = ht_random(dt, 1, vs), beta = ht_random(dt, 1, vs);
    float *v = malloc((size_t)O * sizeof(float));
    for (int64_t k = 0; k < O; k++) v[k] = 0.75f + 0.5f * mean.host[(k * 7 + 3) % O];
    HT var = ht_values(dt, 1, vs, v);
    free(v);
    WgcStatus st = wgc_conv2d_fold_batch_norm(g_stream, &q.w.t, NULL, &mean.t, &var.t, &g.t, &beta.t, 1e-5f, &q.wf.t,
                                              &q.bf.t);
    if (st == WGC_OK && case_first_run(&c, run_conv_folded, &q)) {
        float *got = ht_read(&q.out);
        double kk = (double)(C * K * K), tol = 1e-5 * (1 + sqrt(kk));
        int bad = 0;
        for (int s = 0; s < 64; s++) {
            int64_t n = s % N, o = (s * 37) % O, oy = (s * 13) % H, ox = (s * 29 + 5) % H;
            double acc = 0, mag = 0, sc = g.host[o] / sqrt((double)var.host[o] + (double)1e-5f);
            for (int64_t ic = 0; ic < C; ic++)
                for (int64_t ky = 0; ky < K; ky++)
                    for (int64_t kx = 0; kx < K; kx++) {
                        int64_t iy = oy - K / 2 + ky, ix = ox - K / 2 + kx;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                        double p = (double)q.x.host[((n * C + ic) * H + iy) * H + ix] *
                                   q.w.host[((o * C + ic) * K + ky) * K + kx];
                        acc += p, mag += fabs(p * sc);
                    }
            double ref = (acc - mean.host[o]) * sc + beta.host[o];
            double atol = tol * fabs(sc) + (f16 ? mag / 1024 : 0);
            bad += !close_to(got[((n * O + o) * H + oy) * H + ox], ref, atol, f16 ? 1.0 / 512 : 1e-5);
        }
        if (bad) fprintf(stderr, "%s: %d of 64 sampled outputs wrong\n", name, bad);
        free(got);
        case_time(&c, run_conv_folded, &q, !bad, 10);
    } else if (st != WGC_OK) {
        fprintf(stderr, "%s: fold: %s: %s\n", name, wgc_status_string(st), wgc_last_error_message());
    }
    ht_free(&q.x), ht_free(&q.w), ht_free(&q.out), ht_free(&q.wf), ht_free(&q.bf);
    ht_free(&mean), ht_free(&g), ht_free(&beta), ht_free(&var);
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
    /* Batch 256, where a launch's ramp and tail no longer count: 0.1-0.8 GB
     * a tensor (x, y and nothing else on the GPU). */
    for (int cl = 0; cl < 2; cl++)
        for (int f16 = 0; f16 < 2; f16++)
            for (size_t s = 0; s < 2; s++) {
                char name[64];
                snprintf(name, sizeof name, "batch_norm%s%s_%s_56_n256", f16 ? "_f16" : "", cl ? "_nhwc" : "",
                         shapes[s].tag);
                batch_norm_case(name, f16 ? WGC_DTYPE_F16 : WGC_DTYPE_F32, SZ(256, 3),
                                SZ(shapes[s].c, shapes[s].c_small), SZ(56, 7), cl);
            }
    /* ResNet-50's 1x1 256 -> 64 and 3x3 64 -> 64 at 56x56 with their batch
     * norms folded: against PyTorch's conv then batch_norm. */
    for (int f16 = 0; f16 < 2; f16++) {
        WgcDtype dt = f16 ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        conv_folded_case(f16 ? "conv_bn_folded_f16_1x1_256_64_56" : "conv_bn_folded_1x1_256_64_56", dt, SZ(32, 2),
                         SZ(256, 11), SZ(56, 6), SZ(64, 5), 1);
        conv_folded_case(f16 ? "conv_bn_folded_f16_3x3_64_56" : "conv_bn_folded_3x3_64_56", dt, SZ(32, 2), SZ(64, 5),
                         SZ(56, 9), SZ(64, 6), 3);
    }
}
