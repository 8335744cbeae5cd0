/* Convolutional blocks from today's operators, NCHW, batch 32 at 56x56,
 * f32 and f16: a ResNet-50 bottleneck (1x1 256 -> 64, 3x3 64 -> 64,
 * 1x1 64 -> 256, batch norm (inference form) after each convolution, ReLU,
 * the residual, ReLU) and a MobileNetV2 inverted residual (1x1 32 -> 192,
 * depthwise 3x3, 1x1 192 -> 32, batch norm after each, ReLU6 after the
 * first two, the residual). The reference recomputes every output channel
 * at sampled pixels (all of them at the small size) in double. Each block
 * runs twice: op by op, and fused (wgc_op_conv2d_bn_act with the batch
 * norm folded once, the last convolution with the residual and activation
 * through wgc_op_conv2d_bn_act_residual). */
#include "blocks.h"

static const float BN_EPS = 1e-5f;

/* A convolution (no bias) followed by batch norm, and its buffers. */
typedef struct {
    int64_t cin, cout, k, groups;
    HT w, mean, var, gamma, beta; /* w (cout, cin/groups, k, k) */
    HT conv, out;                 /* (N, cout, H, W) */
    HT fw, fb;                    /* the folded weight and bias (fused blocks) */
} ConvBn;

static void conv_bn_init(ConvBn *c, WgcDtype dt, int64_t n, int64_t hw, int64_t cin, int64_t cout, int64_t k,
                         int64_t groups) {
    c->cin = cin, c->cout = cout, c->k = k, c->groups = groups;
    int64_t ws[4] = {cout, cin / groups, k, k}, ch[1] = {cout}, act[4] = {n, cout, hw, hw};
    c->w = ht_scaled(dt, 4, ws, sqrt(3.0 / (cin / groups * k * k)), 0);
    c->mean = ht_scaled(dt, 1, ch, 0.1, 0);
    c->var = ht_scaled(dt, 1, ch, 0.25, 1.0);
    c->gamma = ht_scaled(dt, 1, ch, 0.2, 1.0);
    c->beta = ht_scaled(dt, 1, ch, 0.1, 0);
    c->conv = ht_empty(dt, 4, act);
    c->out = ht_empty(dt, 4, act);
    c->fw = ht_empty(dt, 4, ws);
    c->fb = ht_empty(dt, 1, ch);
}

static void conv_bn_free(ConvBn *c) {
    HT *all[] = {&c->w, &c->mean, &c->var, &c->gamma, &c->beta, &c->conv, &c->out, &c->fw, &c->fb};
    for (size_t i = 0; i < 9; i++) ht_free(all[i]);
}

static WgcStatus conv_bn(const ConvBn *c, const WgcTensor *in) {
    WgcConv2dParams p = {0};
    p.struct_size = sizeof p;
    p.pad_h = p.pad_w = (uint32_t)(c->k / 2);
    p.groups = (uint32_t)c->groups;
    WgcStatus s = wgc_op_conv2d(g_stream, &p, in, &c->w.t, NULL, &c->conv.t);
    if (s == WGC_OK)
        s = wgc_op_batch_norm(g_stream, &c->conv.t, &c->mean.t, &c->var.t, &c->gamma.t, &c->beta.t, BN_EPS,
                              &c->out.t);
    return s;
}

/* conv + batch norm + act (+ residual) in one call, into out; the batch
 * norm folded on the first call. */
static WgcStatus conv_bn_act(const ConvBn *c, const WgcTensor *in, uint32_t act, const WgcTensor *residual,
                             const WgcTensor *out, int folded) {
    WgcConv2dBnActParams p = {0};
    p.struct_size = sizeof p;
    p.pad_h = p.pad_w = (uint32_t)(c->k / 2);
    p.groups = (uint32_t)c->groups;
    p.eps = BN_EPS;
    p.activation = act;
    p.folded = (uint32_t)folded;
    const WgcTensor *bn[4] = {&c->mean.t, &c->var.t, &c->gamma.t, &c->beta.t};
    if (!residual)
        return wgc_op_conv2d_bn_act(g_stream, &p, in, &c->w.t, NULL, bn[0], bn[1], bn[2], bn[3], &c->fw.t, &c->fb.t,
                                    out);
    return wgc_op_conv2d_bn_act_residual(g_stream, &p, in, &c->w.t, NULL, bn[0], bn[1], bn[2], bn[3], &c->fw.t,
                                         &c->fb.t, residual, out);
}

/* Output channel o of conv + batch norm at one pixel, from `in(ci, dy, dx)`
 * (the input at the pixel offset by dy, dx; 0 outside). */
typedef double (*InputAt)(const void *ctx, int64_t ci, int64_t dy, int64_t dx);

static double ref_conv_bn(const ConvBn *c, int64_t o, InputAt in, const void *ctx) {
    int64_t per = c->cin / c->groups, first = o / (c->cout / c->groups) * per, r = c->k / 2;
    double acc = 0;
    for (int64_t i = 0; i < per; i++)
        for (int64_t ky = 0; ky < c->k; ky++)
            for (int64_t kx = 0; kx < c->k; kx++)
                acc += c->w.host[((o * per + i) * c->k + ky) * c->k + kx] * in(ctx, first + i, ky - r, kx - r);
    return (acc - c->mean.host[o]) / sqrt(c->var.host[o] + BN_EPS) * c->gamma.host[o] + c->beta.host[o];
}

typedef struct {
    const HT *x;
    int64_t n, y, x0, hw, c;
} Pixel;

static double input_at(const void *p, int64_t ci, int64_t dy, int64_t dx) {
    const Pixel *px = p;
    int64_t yy = px->y + dy, xx = px->x0 + dx;
    if (yy < 0 || xx < 0 || yy >= px->hw || xx >= px->hw) return 0;
    return px->x->host[((px->n * px->c + ci) * px->hw + yy) * px->hw + xx];
}

/* The first stage's activations around a pixel, computed on demand. */
typedef struct {
    const ConvBn *first;
    Pixel px;
    double lo, hi; /* the activation's clamp: ReLU (0, inf) or ReLU6 (0, 6) */
    double cache[9][256];
    int have[9];
} Stage1;

static double stage1_at(const void *p, int64_t ci, int64_t dy, int64_t dx) {
    Stage1 *s = (Stage1 *)p;
    int64_t yy = s->px.y + dy, xx = s->px.x0 + dx;
    if (yy < 0 || xx < 0 || yy >= s->px.hw || xx >= s->px.hw) return 0;
    int slot = (int)((dy + 1) * 3 + dx + 1);
    if (!s->have[slot]) {
        Pixel at = s->px;
        at.y = yy, at.x0 = xx;
        for (int64_t o = 0; o < s->first->cout; o++) {
            double v = ref_conv_bn(s->first, o, input_at, &at);
            s->cache[slot][o] = v < s->lo ? s->lo : v > s->hi ? s->hi : v;
        }
        s->have[slot] = 1;
    }
    return s->cache[slot][ci];
}

typedef struct {
    double *v;
} Column;
static double column_at(const void *p, int64_t ci, int64_t dy, int64_t dx) {
    (void)dy, (void)dx;
    return ((const Column *)p)->v[ci];
}

/* ---- the two blocks ---- */

typedef struct {
    int mobile; /* 0: ResNet bottleneck, 1: MobileNetV2 inverted residual */
    int fused;  /* through wgc_op_conv2d_bn_act(_residual) */
    int folded; /* the fused block's batch norms are folded */
    WgcDtype dt;
    int64_t n, hw, c, mid;
    HT x, out;
    ConvBn a, b, c3;
} Block;

static WgcStatus run_block(void *p) {
    Block *B = p;
    WgcStatus s = conv_bn(&B->a, &B->x.t);
    if (s == WGC_OK)
        s = B->mobile ? wgc_op_clamp(g_stream, &B->a.out.t, 0, 6, &B->a.out.t)
                      : wgc_op_unary(g_stream, WGC_UNARY_OP_RELU, &B->a.out.t, &B->a.out.t);
    if (s == WGC_OK) s = conv_bn(&B->b, &B->a.out.t);
    if (s == WGC_OK)
        s = B->mobile ? wgc_op_clamp(g_stream, &B->b.out.t, 0, 6, &B->b.out.t)
                      : wgc_op_unary(g_stream, WGC_UNARY_OP_RELU, &B->b.out.t, &B->b.out.t);
    if (s == WGC_OK) s = conv_bn(&B->c3, &B->b.out.t);
    if (s == WGC_OK) s = wgc_op_binary(g_stream, WGC_BINARY_OP_ADD, &B->c3.out.t, &B->x.t, &B->out.t);
    if (s == WGC_OK && !B->mobile) s = wgc_op_unary(g_stream, WGC_UNARY_OP_RELU, &B->out.t, &B->out.t);
    return s;
}

static WgcStatus run_fused(void *p) {
    Block *B = p;
    uint32_t act = B->mobile ? WGC_ACTIVATION_RELU6 : WGC_ACTIVATION_RELU;
    WgcStatus s = conv_bn_act(&B->a, &B->x.t, act, NULL, &B->a.out.t, B->folded);
    if (s == WGC_OK) s = conv_bn_act(&B->b, &B->a.out.t, act, NULL, &B->b.out.t, B->folded);
    uint32_t last = B->mobile ? WGC_ACTIVATION_NONE : WGC_ACTIVATION_RELU;
    if (s == WGC_OK) s = conv_bn_act(&B->c3, &B->b.out.t, last, &B->x.t, &B->out.t, B->folded);
    if (s == WGC_OK) B->folded = 1;
    return s;
}

static int check_block(Block *B) {
    float *out = ht_read(&B->out);
    size_t pixels = (size_t)(B->n * B->hw * B->hw), picks[512];
    size_t count = sample_rows(pixels, g_small ? 512 : 24, picks);
    double tol = B->dt == WGC_DTYPE_F16 ? 2e-2 : 1e-3;
    double *ref = malloc(B->c * count * sizeof *ref);
    float *got = malloc(B->c * count * sizeof *got);
    double mid[256];
    for (size_t i = 0; i < count; i++) {
        int64_t n = (int64_t)picks[i] / (B->hw * B->hw), rest = (int64_t)picks[i] % (B->hw * B->hw);
        Stage1 *s1 = calloc(1, sizeof *s1);
        s1->first = &B->a;
        s1->px = (Pixel){&B->x, n, rest / B->hw, rest % B->hw, B->hw, B->c};
        s1->lo = 0, s1->hi = B->mobile ? 6 : INFINITY;
        for (int64_t o = 0; o < B->mid; o++) {
            double v = ref_conv_bn(&B->b, o, stage1_at, s1);
            mid[o] = v < 0 ? 0 : B->mobile && v > 6 ? 6 : v;
        }
        Column col = {mid};
        for (int64_t o = 0; o < B->c; o++) {
            double v = ref_conv_bn(&B->c3, o, column_at, &col) + input_at(&s1->px, o, 0, 0);
            ref[i * B->c + o] = B->mobile || v > 0 ? v : 0;
            got[i * B->c + o] = out[((n * B->c + o) * B->hw * B->hw) + rest];
        }
        free(s1);
    }
    int bad = check_close(B->mobile ? "inverted residual" : "bottleneck", got, ref, B->c * count, tol, tol);
    free(out), free(ref), free(got);
    return bad;
}

static void block_case(int mobile, int fused, WgcDtype dt) {
    int64_t n = SZ(32, 2), hw = SZ(56, 9), c = mobile ? 32 : 256, mid = mobile ? 192 : 64;
    char name[64];
    snprintf(name, sizeof name, "%s%s_%s", mobile ? "mobilenetv2_block" : "resnet50_bottleneck",
             fused ? "_fused" : "", dtype_name(dt));
    Case cs = {name, mobile ? "block/mobilenetv2" : "block/resnet50", dtype_name(dt), "", "block", 0, 0};
    snprintf(cs.size, sizeof cs.size, "N=%lld %lldx%lld %lld->%lld->%lld", (long long)n, (long long)hw,
             (long long)hw, (long long)c, (long long)mid, (long long)c);
    double pix = (double)n * hw * hw;
    cs.amount = mobile ? 2 * pix * (c * mid + mid * 9.0 + mid * c) : 2 * pix * (c * mid + mid * mid * 9.0 + mid * c);
    if (!case_begin(&cs)) return;
    Block B = {.mobile = mobile, .fused = fused, .dt = dt, .n = n, .hw = hw, .c = c, .mid = mid};
    int64_t xs[4] = {n, c, hw, hw};
    B.x = ht_scaled(dt, 4, xs, 1.0, 0);
    B.out = ht_empty(dt, 4, xs);
    conv_bn_init(&B.a, dt, n, hw, c, mid, 1, 1);
    conv_bn_init(&B.b, dt, n, hw, mid, mid, 3, mobile ? mid : 1);
    conv_bn_init(&B.c3, dt, n, hw, mid, c, 1, 1);
    WgcStatus (*run)(void *) = fused ? run_fused : run_block;
    if (case_first_run(&cs, run, &B)) block_report(&cs, run, &B, check_block(&B) == 0);
    ht_free(&B.x), ht_free(&B.out);
    conv_bn_free(&B.a), conv_bn_free(&B.b), conv_bn_free(&B.c3);
}

void blocks_cnn(void) {
    WgcDtype dts[2] = {WGC_DTYPE_F32, WGC_DTYPE_F16};
    for (int i = 0; i < 2; i++) {
        for (int fused = 0; fused < 2; fused++) {
            block_case(0, fused, dts[i]);
            block_case(1, fused, dts[i]);
        }
    }
}
