/* CNN layers (ResNet-50, MobileNet shapes): direct, 1x1, strided and
 * depthwise convolution; max, average and global average pooling. */
#include <math.h>

#include "cases.h"

typedef struct {
    WgcConv2dParams p;
    HT x, w, out;
} Conv;

static WgcStatus run_conv(void *p) {
    Conv *c = p;
    return OP(wgc_op_conv2d, g_stream, &c->p, &c->x.t, &c->w.t, NULL, &c->out.t);
}

/* NCHW, square images and kernels, no bias; `groups` == C is depthwise.
 * f16: every operand f16 (f32 accumulation), checked with the output's
 * rounding on top of the f32 bound. */
/* A 4-dim (N, C, H, W) tensor stored channels-last: shape given as
 * (N, H, W, C) in `t`, seen through permuted strides. */
static void as_channels_last(HT *t) {
    int64_t n = t->t.shape[0], h = t->t.shape[1], w = t->t.shape[2], c = t->t.shape[3];
    int64_t shape[4] = {n, c, h, w}, strides[4] = {h * w * c, 1, w * c, c};
    memcpy(t->t.shape, shape, sizeof shape);
    memcpy(t->t.strides, strides, sizeof strides);
}

/* Element (a, b, y, x) of an (A, B, Y, X) array, channels-last or not. */
static int64_t at4(int cl, int64_t B, int64_t Y, int64_t X, int64_t a, int64_t b, int64_t y, int64_t x) {
    return cl ? ((a * Y + y) * X + x) * B + b : ((a * B + b) * Y + y) * X + x;
}

/* cl: input, weight and output channels-last (PyTorch's channels_last
 * memory format). */
static void conv_case_l(const char *name, const char *cls, const char *size, WgcDtype dt, int64_t N, int64_t C,
                        int64_t H, int64_t O, int64_t K, int64_t stride, int64_t pad, int64_t groups, int cl) {
    int64_t OH = (H + 2 * pad - K) / stride + 1, Cg = C / groups, Og = O / groups;
    int64_t is[4] = {N, C, H, H}, ws[4] = {O, Cg, K, K}, os[4] = {N, O, OH, OH};
    int f16 = dt == WGC_DTYPE_F16;
    Case c = {name, cls, f16 ? "f16" : "f32", "", groups > 1 ? "bytes" : f16 ? "fp16" : "fp32", 0, 0};
    if (size) snprintf(c.size, sizeof c.size, "%s", size);
    else snprintf(c.size, sizeof c.size, "N=%lld C=%lld %lldx%lld O=%lld k%lld s%lld%s", (long long)N, (long long)C,
                  (long long)H, (long long)H, (long long)O, (long long)K, (long long)stride, groups > 1 ? " depthwise" : "");
    double es = (double)dtype_size(dt);
    c.in_bytes = es * (double)(N * C * H * H + O * Cg * K * K);
    c.amount = groups > 1 ? c.in_bytes + es * (double)(N * O * OH * OH) : 2.0 * N * O * OH * OH * Cg * K * K;
    if (!case_begin(&c)) return;
    Conv cv;
    memset(&cv, 0, sizeof cv);
    cv.p.struct_size = sizeof cv.p;
    cv.p.stride_h = cv.p.stride_w = (uint32_t)stride;
    cv.p.pad_h = cv.p.pad_w = (uint32_t)pad;
    cv.p.dilation_h = cv.p.dilation_w = 1;
    cv.p.groups = (uint32_t)groups;
    if (cl) {
        int64_t isl[4] = {N, H, H, C}, wsl[4] = {O, K, K, Cg}, osl[4] = {N, OH, OH, O};
        cv.x = ht_random(dt, 4, isl);
        cv.w = ht_random(dt, 4, wsl);
        cv.out = ht_empty(dt, 4, osl);
        as_channels_last(&cv.x), as_channels_last(&cv.w), as_channels_last(&cv.out);
    } else {
        cv.x = ht_random(dt, 4, is);
        cv.w = ht_random(dt, 4, ws);
        cv.out = ht_empty(dt, 4, os);
    }
    if (case_first_run(&c, run_conv, &cv)) {
        float *got = ht_read(&cv.out);
        int bad = 0;
        for (int s = 0; s < 64; s++) {
            int64_t n = s % N, oc = (s * 37) % O, oy = (s * 13) % OH, ox = (s * 29 + 5) % OH, g = oc / Og;
            double ref = 0;
            for (int64_t ic = 0; ic < Cg; ic++)
                for (int64_t ky = 0; ky < K; ky++)
                    for (int64_t kx = 0; kx < K; kx++) {
                        int64_t iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                        ref += (double)cv.x.host[at4(cl, C, H, H, n, g * Cg + ic, iy, ix)] *
                               cv.w.host[at4(cl, Cg, K, K, oc, ic, ky, kx)];
                    }
            bad += !close_to(got[at4(cl, O, OH, OH, n, oc, oy, ox)], ref, 1e-5 * (1 + sqrt((double)(Cg * K * K))),
                             f16_slack(dt));
        }
        if (bad) fprintf(stderr, "%s: %d of 64 sampled outputs wrong\n", name, bad);
        free(got);
        case_time(&c, run_conv, &cv, !bad, 10);
    }
    ht_free(&cv.x);
    ht_free(&cv.w);
    ht_free(&cv.out);
}

static void conv_case_t(const char *name, const char *cls, const char *size, WgcDtype dt, int64_t N, int64_t C,
                        int64_t H, int64_t O, int64_t K, int64_t stride, int64_t pad, int64_t groups) {
    conv_case_l(name, cls, size, dt, N, C, H, O, K, stride, pad, groups, 0);
}

static void conv_case(const char *name, const char *cls, const char *size, int64_t N, int64_t C, int64_t H, int64_t O,
                      int64_t K, int64_t stride, int64_t pad, int64_t groups) {
    conv_case_t(name, cls, size, WGC_DTYPE_F32, N, C, H, O, K, stride, pad, groups);
}

enum { P_MAX, P_AVG, P_GLOBAL };

typedef struct {
    int kind;
    WgcPool2dParams p;
    HT x, out;
} Pool;

static WgcStatus run_pool(void *p) {
    Pool *q = p;
    if (q->kind == P_MAX) return OP(wgc_op_max_pool2d, g_stream, &q->p, &q->x.t, &q->out.t);
    if (q->kind == P_AVG) return OP(wgc_op_avg_pool2d, g_stream, &q->p, &q->x.t, &q->out.t);
    return OP(wgc_op_global_avg_pool2d, g_stream, &q->x.t, &q->out.t);
}

/* Square windows; global pooling takes the whole plane (K = H). Average
 * pooling counts padding in the divisor (PyTorch's default). cl: input and
 * output channels-last (stored (N, H, W, C)). */
static void pool_case_cl(const char *name, const char *cls, int kind, WgcDtype dt, int64_t N, int64_t C, int64_t H,
                         int64_t K, int64_t stride, int64_t pad, int cl) {
    if (kind == P_GLOBAL) K = H, stride = 1, pad = 0;
    int64_t OH = (H + 2 * pad - K) / stride + 1;
    int64_t is[4] = {N, C, H, H}, os[4] = {N, C, OH, OH};
    int64_t is_cl[4] = {N, H, H, C}, os_cl[4] = {N, OH, OH, C};
    Case c = {name, cls, dt == WGC_DTYPE_F16 ? "f16" : "f32", "", "bytes", 0, 0};
    snprintf(c.size, sizeof c.size, "N=%lld C=%lld %lldx%lld k%lld s%lld p%lld%s", (long long)N, (long long)C,
             (long long)H, (long long)H, (long long)K, (long long)stride, (long long)pad, cl ? " channels-last" : "");
    c.in_bytes = (double)(N * C * H * H) * dtype_size(dt);
    c.amount = c.in_bytes + (double)(N * C * OH * OH) * dtype_size(dt);
    if (!case_begin(&c)) return;
    Pool q;
    memset(&q, 0, sizeof q);
    q.kind = kind;
    q.p.struct_size = sizeof q.p;
    q.p.kernel_h = q.p.kernel_w = (uint32_t)K;
    q.p.stride_h = q.p.stride_w = (uint32_t)stride;
    q.p.pad_h = q.p.pad_w = (uint32_t)pad;
    q.p.count_include_pad = 1;
    q.x = ht_random(dt, 4, cl ? is_cl : is);
    q.out = ht_empty(dt, 4, cl ? os_cl : os);
    if (cl) {
        int64_t xs[4] = {H * H * C, 1, H * C, C}, ys[4] = {OH * OH * C, 1, OH * C, C};
        memcpy(q.x.t.shape, is, sizeof is), memcpy(q.x.t.strides, xs, sizeof xs);
        memcpy(q.out.t.shape, os, sizeof os), memcpy(q.out.t.strides, ys, sizeof ys);
    }
    if (case_first_run(&c, run_pool, &q)) {
        float *got = ht_read(&q.out);
        int bad = 0;
        for (int s = 0; s < 64; s++) {
            int64_t plane = (s * 7919) % (N * C), oy = (s * 13) % OH, ox = (s * 29 + 5) % OH;
            double acc = kind == P_MAX ? -INFINITY : 0;
            for (int64_t ky = 0; ky < K; ky++)
                for (int64_t kx = 0; kx < K; kx++) {
                    int64_t iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                    if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                    int64_t xi = cl ? ((plane / C * H + iy) * H + ix) * C + plane % C : (plane * H + iy) * H + ix;
                    double v = q.x.host[xi];
                    acc = kind == P_MAX ? fmax(acc, v) : acc + v;
                }
            if (kind != P_MAX) acc /= (double)(K * K);
            int64_t yi = cl ? ((plane / C * OH + oy) * OH + ox) * C + plane % C : (plane * OH + oy) * OH + ox;
            bad += !close_to(got[yi], acc, kind == P_MAX ? 0 : 1e-6, f16_slack(dt));
        }
        if (bad) fprintf(stderr, "%s: %d of 64 sampled outputs wrong\n", name, bad);
        free(got);
        case_time(&c, run_pool, &q, !bad, 10);
    }
    ht_free(&q.x);
    ht_free(&q.out);
}

static void pool_case(const char *name, const char *cls, int kind, WgcDtype dt, int64_t N, int64_t C, int64_t H,
                      int64_t K, int64_t stride, int64_t pad) {
    pool_case_cl(name, cls, kind, dt, N, C, H, K, stride, pad, 0);
}

void cases_conv(void) {
    const int s = g_small;
    /* The original cases (names and sizes kept), batch 32. */
    conv_case("conv_3x3_64_56", "conv/3x3", s ? "N=2" : "N=32", SZ(32, 2), SZ(64, 5), SZ(56, 9), SZ(64, 6), 3, 1, 1, 1);
    conv_case("conv_1x1_256_512_s2", "conv/1x1", s ? "N=2" : "N=32", SZ(32, 2), SZ(256, 13), SZ(56, 9), SZ(512, 7), 1, 2,
              0, 1);
    conv_case("conv_7x7_3_64_s2", "conv/stem", s ? "N=2" : "N=32", SZ(32, 2), 3, SZ(224, 19), SZ(64, 5), 7, 2, 3, 1);
    conv_case("conv_3x3_128_28_n64", "conv/3x3", NULL, SZ(64, 2), SZ(128, 9), SZ(28, 7), SZ(128, 10), 3, 1, 1, 1);
    conv_case("conv_3x3_256_14_n64", "conv/3x3", NULL, SZ(64, 2), SZ(256, 17), SZ(14, 5), SZ(256, 3), 3, 1, 1, 1);
    conv_case("conv_1x1_256_64_56", "conv/1x1", NULL, SZ(32, 2), SZ(256, 11), SZ(56, 6), SZ(64, 5), 1, 1, 0, 1);
    conv_case("conv_dw3x3_256_28_n64", "conv/depthwise", NULL, SZ(64, 2), SZ(256, 7), SZ(28, 9), SZ(256, 7), 3, 1, 1,
              SZ(256, 7));
    conv_case("conv_dw3x3_s2_144_56_n64", "conv/depthwise", NULL, SZ(64, 2), SZ(144, 5), SZ(56, 11), SZ(144, 5), 3, 2, 1,
              SZ(144, 5));
    /* f16 (tensor cores where the adapter has them). */
    const WgcDtype h = WGC_DTYPE_F16;
    conv_case_t("conv_f16_3x3_64_56", "conv/3x3", NULL, h, SZ(32, 2), SZ(64, 5), SZ(56, 9), SZ(64, 6), 3, 1, 1, 1);
    conv_case_t("conv_f16_3x3_128_28_n64", "conv/3x3", NULL, h, SZ(64, 2), SZ(128, 9), SZ(28, 7), SZ(128, 10), 3, 1, 1, 1);
    conv_case_t("conv_f16_3x3_256_14_n64", "conv/3x3", NULL, h, SZ(64, 2), SZ(256, 17), SZ(14, 5), SZ(256, 3), 3, 1, 1, 1);
    conv_case_t("conv_f16_1x1_256_64_56", "conv/1x1", NULL, h, SZ(32, 2), SZ(256, 11), SZ(56, 6), SZ(64, 5), 1, 1, 0, 1);
    conv_case_t("conv_f16_7x7_3_64_s2", "conv/stem", NULL, h, SZ(32, 2), 3, SZ(224, 19), SZ(64, 5), 7, 2, 3, 1);
    conv_case_t("conv_f16_dw3x3_256_28_n64", "conv/depthwise", NULL, h, SZ(64, 2), SZ(256, 7), SZ(28, 9), SZ(256, 7), 3,
                1, 1, SZ(256, 7));
    conv_case_t("conv_f16_3x3_512_7_n64", "conv/3x3", NULL, h, SZ(64, 2), SZ(512, 16), SZ(7, 5), SZ(512, 8), 3, 1, 1, 1);
    /* f16 channels-last (input, weight and output): ResNet-50's 3x3 layers,
     * one of them the stride-2 first layer of a stage. */
    conv_case_l("conv_f16_nhwc_3x3_64_56", "conv/3x3-nhwc", NULL, h, SZ(32, 2), SZ(64, 8), SZ(56, 9), SZ(64, 8), 3, 1, 1,
                1, 1);
    conv_case_l("conv_f16_nhwc_3x3_128_28_n64", "conv/3x3-nhwc", NULL, h, SZ(64, 2), SZ(128, 16), SZ(28, 7),
                SZ(128, 8), 3, 1, 1, 1, 1);
    conv_case_l("conv_f16_nhwc_3x3_256_14_n64", "conv/3x3-nhwc", NULL, h, SZ(64, 2), SZ(256, 16), SZ(14, 5),
                SZ(256, 24), 3, 1, 1, 1, 1);
    conv_case_l("conv_f16_nhwc_3x3_512_7_n64", "conv/3x3-nhwc", NULL, h, SZ(64, 2), SZ(512, 8), SZ(7, 5), SZ(512, 8),
                3, 1, 1, 1, 1);
    conv_case_l("conv_f16_nhwc_3x3_s2_128_56_n64", "conv/3x3-nhwc", NULL, h, SZ(64, 2), SZ(128, 8), SZ(56, 9),
                SZ(128, 8), 3, 2, 1, 1, 1);
    /* First layers (3 channels): ResNet-50's conv1 and MobileNetV2's
     * features.0, channels-last and NCHW, batch 32 and 256. */
    conv_case_l("conv_f16_nhwc_7x7_3_64_s2", "conv/stem", NULL, h, SZ(32, 2), 3, SZ(224, 19), SZ(64, 5), 7, 2, 3, 1, 1);
    conv_case_l("conv_f16_7x7_3_64_s2_n256", "conv/stem", NULL, h, SZ(256, 3), 3, SZ(224, 19), SZ(64, 5), 7, 2, 3, 1, 0);
    conv_case_l("conv_f16_nhwc_7x7_3_64_s2_n256", "conv/stem", NULL, h, SZ(256, 3), 3, SZ(224, 19), SZ(64, 5), 7, 2, 3,
                1, 1);
    conv_case_l("conv_f16_3x3_3_32_s2_n256", "conv/stem", NULL, h, SZ(256, 3), 3, SZ(224, 19), SZ(32, 5), 3, 2, 1, 1, 0);
    conv_case_l("conv_f16_nhwc_3x3_3_32_s2_n256", "conv/stem", NULL, h, SZ(256, 3), 3, SZ(224, 19), SZ(32, 5), 3, 2, 1,
                1, 1);
    pool_case("max_pool_3x3_s2_64_112", "pool/max", P_MAX, WGC_DTYPE_F32, SZ(32, 2), SZ(64, 3), SZ(112, 13), 3, 2, 1);
    pool_case("max_pool_2x2_256_56_f16", "pool/max", P_MAX, WGC_DTYPE_F16, SZ(32, 2), SZ(256, 3), SZ(56, 10), 2, 2, 0);
    pool_case("avg_pool_3x3_s1_192_28", "pool/avg", P_AVG, WGC_DTYPE_F32, SZ(64, 2), SZ(192, 3), SZ(28, 9), 3, 1, 1);
    pool_case("global_avg_pool_2048_7_n256", "pool/global", P_GLOBAL, WGC_DTYPE_F32, SZ(256, 3), SZ(2048, 5), 7, 0, 0, 0);
    /* The same channels-last (input and output), f32 and f16. */
    for (int h = 0; h < 2; h++) {
        WgcDtype dt = h ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        pool_case_cl(h ? "max_pool_nhwc_3x3_s2_64_112_f16" : "max_pool_nhwc_3x3_s2_64_112", "pool/max-nhwc", P_MAX, dt,
                     SZ(32, 2), SZ(64, 3), SZ(112, 13), 3, 2, 1, 1);
        pool_case_cl(h ? "avg_pool_nhwc_3x3_s1_192_28_f16" : "avg_pool_nhwc_3x3_s1_192_28", "pool/avg-nhwc", P_AVG, dt,
                     SZ(64, 2), SZ(192, 3), SZ(28, 9), 3, 1, 1, 1);
        pool_case_cl(h ? "global_avg_pool_nhwc_2048_7_n256_f16" : "global_avg_pool_nhwc_2048_7_n256", "pool/global-nhwc",
                     P_GLOBAL, dt, SZ(256, 3), SZ(2048, 5), 7, 0, 0, 0, 1);
    }
    /* ResNet-50's stem pool at batch 256, channels-last (the four-channel
     * kernels; 8 channels in the small run so that it takes them too). */
    for (int h = 0; h < 2; h++)
        pool_case_cl(h ? "max_pool_nhwc_3x3_s2_64_112_n256_f16" : "max_pool_nhwc_3x3_s2_64_112_n256", "pool/max-nhwc",
                     P_MAX, h ? WGC_DTYPE_F16 : WGC_DTYPE_F32, SZ(256, 2), SZ(64, 8), SZ(112, 13), 3, 2, 1, 1);
}
