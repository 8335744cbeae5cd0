/* Depthwise convolution (groups == channels == output channels) against a
 * double-precision reference: f32 and f16, channels-first and
 * channels-last operands (the latter in whole 16-byte words of channels,
 * with padded pixel strides, and not: odd channel counts, an offset view),
 * 3x3, 5x5, 3x5 and 7x7 windows (each of the route's kernels), strides 1 and 2, padding, dilation, with
 * and without bias, every activation through wgc_op_conv2d_bn_act (the
 * depthwise route applies it in its store), NaN and infinite inputs; and
 * the route the explanation names for each layout.
 *
 * Tolerance: f32 sums of at most 49 products: 4e-6 * sum|x w| + 1e-6 *
 * |ref|; f16 (exact products, f32 sums, one rounding of the output):
 * 4e-6 * sum|x w| + 2^-10 * |ref|; both times 1.5 (hardswish's slope).
 * Non-finite references exactly (NaN as NaN). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"
#include "test_activation.h"
#include "test_vals.h"

static TestEnv env;

enum { BIAS = 1, NHWC = 2, NONFINITE = 4, PAD_PIXELS = 8, OFFSET = 16, VIA_CONV = 32 };

typedef struct {
    WgcDtype dt;
    int64_t N, C, H, W, KH, KW, stride, pad, dil;
    uint32_t act;
    int flags;
    const char *route; /* in the explanation of route depthwise, or NULL */
} Case;

static void check(Case t) {
    WgcDtype dt = t.dt;
    int f16 = dt == WGC_DTYPE_F16;
    int64_t N = t.N, C = t.C, H = t.H, W = t.W, KH = t.KH, KW = t.KW, s = t.stride, pd = t.pad, dl = t.dil;
    int64_t OH = (H + 2 * pd - dl * (KH - 1) - 1) / s + 1, OW = (W + 2 * pd - dl * (KW - 1) - 1) / s + 1;
    /* Pixel stride: C, or C plus a word of padding channels. */
    int64_t cs = (t.flags & PAD_PIXELS) ? C + 8 : C, off = (t.flags & OFFSET) ? 3 : 0;
    int64_t xst[4], yst[4];
    if (t.flags & NHWC) {
        xst[0] = H * W * cs, xst[1] = 1, xst[2] = W * cs, xst[3] = cs;
        yst[0] = OH * OW * cs, yst[1] = 1, yst[2] = OW * cs, yst[3] = cs;
    } else {
        xst[0] = C * H * W, xst[1] = H * W, xst[2] = W, xst[3] = 1;
        yst[0] = C * OH * OW, yst[1] = OH * OW, yst[2] = OW, yst[3] = 1;
    }
    size_t nx = (size_t)(N * xst[0] + off), ny = (size_t)(N * yst[0] + off), nw = (size_t)(C * KH * KW);
    double *x = random_vals(dt, nx, -1, 1), *w = random_vals(dt, nw, -1, 1), *b = random_vals(dt, (size_t)C, -1, 1);
    if (t.flags & NONFINITE) {
        x[off] = NAN;
        x[off + (int64_t)nx / 2] = INFINITY;
        x[nx - 1] = -INFINITY;
    }
    WgcBuffer *bx = upload_vals(env.device, dt, x, nx), *bw = upload_vals(env.device, dt, w, nw);
    WgcBuffer *bb = upload_vals(env.device, dt, b, (size_t)C), *by = NULL;
    CHECK(wgc_buffer_create(env.device, ny * 4 + 16, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor tx = tensor_of(bx, dt, 4, (int64_t[]){N, C, H, W}), tw = tensor_of(bw, dt, 4, (int64_t[]){C, 1, KH, KW});
    WgcTensor tb = tensor_of(bb, dt, 1, (int64_t[]){C}), ty = tensor_of(by, dt, 4, (int64_t[]){N, C, OH, OW});
    for (int d = 0; d < 4; d++) tx.strides[d] = xst[d], ty.strides[d] = yst[d];
    tx.offset = ty.offset = (uint64_t)off;
    int has_bias = t.flags & BIAS;
    char what[200];
    snprintf(what, sizeof what, "%s N%lld C%lld %lldx%lld k%lldx%lld s%lld p%lld d%lld act %u flags %d",
             f16 ? "f16" : "f32", (long long)N, (long long)C, (long long)H, (long long)W, (long long)KH, (long long)KW,
             (long long)s, (long long)pd, (long long)dl, t.act, t.flags);
    WgcConv2dParams cp = {sizeof(WgcConv2dParams), (uint32_t)s, (uint32_t)s, (uint32_t)pd, (uint32_t)pd,
                          (uint32_t)dl, (uint32_t)dl, (uint32_t)C};
    if (t.route) {
        char text[1024];
        size_t len = 0;
        CHECK(wgc_op_conv2d_explain(env.stream, &cp, &tx, &tw, has_bias ? &tb : NULL, &ty, text, sizeof text, &len));
        if (strncmp(text, "route depthwise (", 17) != 0 || !strstr(text, t.route)) {
            fprintf(stderr, "%s: expected route depthwise (...%s..., got %s\n", what, t.route, text);
            g_failures++;
        }
    }
    if (t.flags & VIA_CONV) {
        CHECK(wgc_op_conv2d(env.stream, &cp, &tx, &tw, has_bias ? &tb : NULL, &ty));
    } else {
        /* Folded: the weight and bias as given, then the activation. */
        WgcConv2dBnActParams p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.stride_h = p.stride_w = (uint32_t)s;
        p.pad_h = p.pad_w = (uint32_t)pd;
        p.dilation_h = p.dilation_w = (uint32_t)dl;
        p.groups = (uint32_t)C;
        p.eps = 1e-5f;
        p.activation = t.act;
        p.folded = 1;
        CHECK(wgc_op_conv2d_bn_act(env.stream, &p, &tx, NULL, NULL, NULL, NULL, NULL, NULL, &tw,
                                   has_bias ? &tb : NULL, &ty));
    }
    double *y = read_vals(by, dt, ny);
    int bad = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    double acc = 0, mag = 0;
                    for (int64_t a = 0; a < KH; a++)
                        for (int64_t bb2 = 0; bb2 < KW; bb2++) {
                            int64_t iy = oy * s - pd + a * dl, ix = ox * s - pd + bb2 * dl;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                            double p = x[off + n * xst[0] + c * xst[1] + iy * xst[2] + ix * xst[3]] * w[(c * KH + a) * KW + bb2];
                            acc += p;
                            mag += fabs(p);
                        }
                    double pre = acc + (has_bias ? b[c] : 0.0);
                    double ref = activate(t.act, pre);
                    double tol = 1.5 * (4e-6 * (mag + fabs(pre)) + (f16 ? fabs(ref) / 1024 : 1e-6 * fabs(ref))) + 1e-30;
                    double got = y[off + n * yst[0] + c * yst[1] + oy * yst[2] + ox * yst[3]];
                    int ok = isnan(ref) ? isnan(got) : isinf(ref) ? got == ref : fabs(got - ref) <= tol;
                    if (!ok && bad++ < 3)
                        fprintf(stderr, "%s: out[%lld, %lld, %lld, %lld] = %.9g, expected %.9g (tol %.3g)\n", what,
                                (long long)n, (long long)c, (long long)oy, (long long)ox, got, ref, tol);
                }
    if (bad) {
        fprintf(stderr, "%s: %d wrong\n", what, bad);
        g_failures++;
    }
    free(x), free(w), free(b), free(y);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

int main(void) {
    env = test_env();
    const uint32_t NO = WGC_ACTIVATION_NONE, R = WGC_ACTIVATION_RELU, R6 = WGC_ACTIVATION_RELU6,
                   HS = WGC_ACTIVATION_HARDSWISH;
    const char *WORDS = "(channels-last, an invocation per", *TILES = "output tiles of",
               *STRIPS = "along a row of a plane";
    for (int dti = 0; dti < 2; dti++) {
        WgcDtype dt = dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
        if (dti && !env.info.has_f16) break;
        /* Channels-first: strips of 4 outputs along rows (3x3, 5x5,
         * strides 1 and 2, 7x7 planes, odd channels); tiles for the other
         * windows (3x5 dilated, 7x7, an offset view). */
        check((Case){dt, 2, 5, 37, 35, 3, 3, 1, 1, 1, R6, BIAS | NONFINITE, STRIPS});
        check((Case){dt, 3, 7, 7, 7, 3, 3, 1, 1, 1, NO, VIA_CONV, STRIPS});
        check((Case){dt, 2, 6, 29, 30, 3, 3, 2, 1, 1, HS, BIAS, STRIPS});
        check((Case){dt, 1, 3, 20, 19, 5, 5, 2, 2, 1, R, 0, STRIPS});
        check((Case){dt, 1, 4, 18, 17, 3, 5, 1, 2, 2, NO, BIAS | VIA_CONV, TILES});
        check((Case){dt, 2, 5, 37, 35, 3, 3, 1, 1, 2, R6, BIAS | NONFINITE, TILES});
        check((Case){dt, 1, 3, 12, 12, 7, 7, 1, 3, 1, R6, BIAS | OFFSET, TILES});
        /* Channels-last in words: 24 channels (3 f16 words, 6 f32), 40
         * (5 f16 words), odd pixel counts, padded pixels; f32 3x3 and 5x5
         * take 4 outputs along a row per invocation. */
        check((Case){dt, 2, 24, 9, 11, 3, 3, 1, 1, 1, R6, BIAS | NHWC | NONFINITE, WORDS});
        check((Case){dt, 3, 40, 10, 9, 3, 3, 2, 1, 1, HS, NHWC, WORDS});
        check((Case){dt, 1, 16, 13, 13, 5, 5, 2, 2, 1, R, BIAS | NHWC | PAD_PIXELS, WORDS});
        check((Case){dt, 2, 32, 8, 8, 3, 5, 1, 2, 2, NO, BIAS | NHWC | VIA_CONV, WORDS});
        check((Case){dt, 1, 48, 7, 7, 7, 7, 1, 3, 1, R6, NHWC, WORDS});
        /* One word of channels over a million pixels: 4096 workgroups of
         * 256 pixels, so each computes several pixel groups in turn. */
        check((Case){dt, 64, dti ? 8 : 4, 128, 128, 3, 3, 1, 2, 2, R, BIAS | NHWC, WORDS});
        /* Channels-last but not in words: odd channels, an offset view. */
        check((Case){dt, 2, 5, 9, 9, 3, 3, 1, 1, 1, R6, BIAS | NHWC, STRIPS});
        check((Case){dt, 1, 16, 8, 9, 3, 3, 2, 1, 1, NO, BIAS | NHWC | OFFSET, STRIPS});
        check((Case){dt, 1, 5, 10, 11, 3, 3, 1, 2, 2, HS, BIAS | NHWC, TILES});
    }
    return test_finish("test_conv_depthwise");
}
