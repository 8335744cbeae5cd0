/* ResNet-50's f32 3x3 stride-1 layers (64, 128, 256 and 512 channels at
 * 56, 28, 14 and 7) at batch 32 and 256, NCHW, and channels-last at batch
 * 32: the shapes the Winograd route takes by its rule. Run under
 * WGC_CONV_WINOGRAD=0 and =1 to time the implicit GEMM against it; the
 * amount is the direct convolution's FLOPs (2 N O OH OW C 9), so both
 * report effective TFLOP/s, as cuDNN's Winograd does. */
#include <math.h>

#include "cases.h"

typedef struct {
    WgcConv2dParams p;
    HT x, w, out;
} Conv3;

static WgcStatus run_conv3(void *p) {
    Conv3 *c = p;
    return OP(wgc_op_conv2d, g_stream, &c->p, &c->x.t, &c->w.t, NULL, &c->out.t);
}

/* (N, C, H, W) stored (N, H, W, C): `t` was created with that shape. */
static void to_channels_last(HT *t) {
    int64_t n = t->t.shape[0], h = t->t.shape[1], w = t->t.shape[2], c = t->t.shape[3];
    int64_t shape[4] = {n, c, h, w}, strides[4] = {h * w * c, 1, w * c, c};
    memcpy(t->t.shape, shape, sizeof shape);
    memcpy(t->t.strides, strides, sizeof strides);
}

static int64_t idx4(int cl, int64_t B, int64_t Y, int64_t X, int64_t a, int64_t b, int64_t y, int64_t x) {
    return cl ? ((a * Y + y) * X + x) * B + b : ((a * B + b) * Y + y) * X + x;
}

/* C -> C channels, H x H, padding 1, no bias; cl: input, weight and output
 * channels-last. 64 outputs checked against a double reference first. */
static void conv3_case(const char *name, const char *cls, int64_t N, int64_t C, int64_t H, int cl) {
    Case c = {name, cls, "f32", "", "fp32", 0, 0};
    snprintf(c.size, sizeof c.size, "N=%lld C=%lld %lldx%lld O=%lld k3 s1%s", (long long)N, (long long)C, (long long)H,
             (long long)H, (long long)C, cl ? " channels-last" : "");
    c.in_bytes = 4.0 * (double)(N * C * H * H + C * C * 9);
    c.amount = 2.0 * (double)(N * C * H * H) * (double)(C * 9);
    if (!case_begin(&c)) return;
    Conv3 cv;
    memset(&cv, 0, sizeof cv);
    cv.p.struct_size = sizeof cv.p;
    cv.p.stride_h = cv.p.stride_w = 1;
    cv.p.pad_h = cv.p.pad_w = 1;
    cv.p.dilation_h = cv.p.dilation_w = 1;
    cv.p.groups = 1;
    if (cl) {
        int64_t xs[4] = {N, H, H, C}, ws[4] = {C, 3, 3, C};
        cv.x = ht_random(WGC_DTYPE_F32, 4, xs), cv.w = ht_random(WGC_DTYPE_F32, 4, ws);
        cv.out = ht_empty(WGC_DTYPE_F32, 4, xs);
        to_channels_last(&cv.x), to_channels_last(&cv.w), to_channels_last(&cv.out);
    } else {
        int64_t xs[4] = {N, C, H, H}, ws[4] = {C, C, 3, 3};
        cv.x = ht_random(WGC_DTYPE_F32, 4, xs), cv.w = ht_random(WGC_DTYPE_F32, 4, ws);
        cv.out = ht_empty(WGC_DTYPE_F32, 4, xs);
    }
    if (case_first_run(&c, run_conv3, &cv)) {
        float *got = ht_read(&cv.out);
        int bad = 0;
        for (int s = 0; s < 64; s++) {
            /* Edges and corners among the samples (s % 8 == 0: row 0, col H-1). */
            int64_t n = (s * 7) % N, o = (s * 37) % C, oy = s % 8 ? (s * 13) % H : 0;
            int64_t ox = s % 8 ? (s * 29 + 5) % H : H - 1;
            double ref = 0;
            for (int64_t ic = 0; ic < C; ic++)
                for (int64_t ky = 0; ky < 3; ky++)
                    for (int64_t kx = 0; kx < 3; kx++) {
                        int64_t iy = oy - 1 + ky, ix = ox - 1 + kx;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                        ref += (double)cv.x.host[idx4(cl, C, H, H, n, ic, iy, ix)] *
                               cv.w.host[idx4(cl, C, 3, 3, o, ic, ky, kx)];
                    }
            bad += !close_to(got[idx4(cl, C, H, H, n, o, oy, ox)], ref, 1e-5 * (1 + sqrt(9.0 * (double)C)), 1e-5);
        }
        if (bad) fprintf(stderr, "%s: %d of 64 sampled outputs wrong\n", name, bad);
        free(got);
        case_time(&c, run_conv3, &cv, !bad, 10);
    }
    ht_free(&cv.x);
    ht_free(&cv.w);
    ht_free(&cv.out);
}

void cases_conv_winograd(void) {
    static const struct {
        const char *name, *name256, *nhwc;
        int64_t c, h;
    } layers[] = {
        {"conv_f32_3x3_64_56_n32", "conv_f32_3x3_64_56_n256", "conv_f32_nhwc_3x3_64_56_n32", 64, 56},
        {"conv_f32_3x3_128_28_n32", "conv_f32_3x3_128_28_n256", "conv_f32_nhwc_3x3_128_28_n32", 128, 28},
        {"conv_f32_3x3_256_14_n32", "conv_f32_3x3_256_14_n256", "conv_f32_nhwc_3x3_256_14_n32", 256, 14},
        {"conv_f32_3x3_512_7_n32", "conv_f32_3x3_512_7_n256", "conv_f32_nhwc_3x3_512_7_n32", 512, 7},
    };
    for (int i = 0; i < 4; i++) {
        int64_t c = SZ(layers[i].c, 40), h = SZ(layers[i].h, 9);
        conv3_case(layers[i].name, "conv/3x3-f32", SZ(32, 2), c, h, 0);
        conv3_case(layers[i].name256, "conv/3x3-f32", SZ(256, 3), c, h, 0);
        conv3_case(layers[i].nhwc, "conv/3x3-f32-nhwc", SZ(32, 2), c, h, 1);
    }
}
