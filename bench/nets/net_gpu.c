/* Running a Net on the library: each conv layer is one
 * wgc_op_conv2d_bn_act (the batch norm folded on the first forward), an
 * add is wgc_op_binary, or one expression kernel relu(a + b), pooling wgc_op_max_pool2d /
 * wgc_op_global_avg_pool2d, the linear wgc_op_matmul then the bias. */
#include <stdlib.h>
#include <string.h>

#include "../bench_util.h"
#include "net_gpu.h"

#define TRY(call)                                                                                                   \
    do {                                                                                                            \
        WgcStatus s_ = (call);                                                                                      \
        if (s_ != WGC_OK) return s_;                                                                                \
    } while (0)

static size_t elem_size(WgcDtype dt) { return dt == WGC_DTYPE_F16 ? 2 : 4; }

/* A dense buffer viewed as `shape` with `strides`. */
static WgcStatus make(GpuTensor *g, WgcDevice *dev, WgcDtype dt, uint32_t rank, const int64_t *shape,
                      const int64_t *strides) {
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= (size_t)shape[i];
    TRY(wgc_buffer_create(dev, n ? n * elem_size(dt) : 4, WGC_BUFFER_USAGE_STORAGE, &g->buf));
    memset(&g->t, 0, sizeof g->t);
    g->t.buffer = g->buf, g->t.dtype = dt, g->t.rank = rank;
    for (uint32_t i = 0; i < rank; i++) g->t.shape[i] = shape[i], g->t.strides[i] = strides[i];
    return WGC_OK;
}

static WgcStatus make_dense(GpuTensor *g, WgcDevice *dev, WgcDtype dt, uint32_t rank, const int64_t *shape) {
    int64_t strides[8], s = 1;
    for (int i = (int)rank - 1; i >= 0; i--) strides[i] = s, s *= shape[i];
    return make(g, dev, dt, rank, shape, strides);
}

/* (N, C, H, W) in NCHW or NHWC memory. */
static WgcStatus make_image(GpuTensor *g, WgcDevice *dev, WgcDtype dt, int64_t n, int64_t c, int64_t h, int64_t w,
                            int nhwc) {
    int64_t shape[4] = {n, c, h, w};
    int64_t nchw_s[4] = {c * h * w, h * w, w, 1}, nhwc_s[4] = {h * w * c, 1, w * c, c};
    return make(g, dev, dt, 4, shape, nhwc ? nhwc_s : nchw_s);
}

static WgcStatus upload(GpuTensor *g, const float *v, size_t n) {
    if (g->t.dtype == WGC_DTYPE_F16) {
        uint16_t *h = malloc(n * 2 + 2);
        for (size_t i = 0; i < n; i++) h[i] = to_half(v[i]);
        WgcStatus s = wgc_buffer_write(g->buf, 0, h, n * 2);
        free(h);
        return s;
    }
    return wgc_buffer_write(g->buf, 0, v, n * 4);
}

static void release(GpuTensor *g) {
    if (g->buf) wgc_buffer_release(g->buf);
    g->buf = NULL;
}

static WgcStatus create_layer(GpuNet *g, const Layer *l, GpuLayer *gl) {
    WgcDtype dt = g->net->dtype;
    int64_t ch[1] = {l->cout};
    if (l->kind == LAYER_LINEAR) {
        int64_t ws[2] = {l->cout, l->cin};
        TRY(make_dense(&gl->w, g->dev, dt, 2, ws));
        TRY(make_dense(&gl->beta, g->dev, dt, 1, ch));
        TRY(upload(&gl->w, l->w, (size_t)(l->cout * l->cin)));
        return upload(&gl->beta, l->beta, (size_t)l->cout);
    }
    if (l->kind != LAYER_CONV) return WGC_OK;
    int64_t cg = l->cin / l->groups, k = l->k;
    int64_t ws[4] = {l->cout, cg, k, k};
    TRY(make_dense(&gl->w, g->dev, dt, 4, ws));
    TRY(upload(&gl->w, l->w, (size_t)(l->cout * cg * k * k)));
    GpuTensor *vecs[4] = {&gl->mean, &gl->var, &gl->gamma, &gl->beta};
    float *host[4] = {l->mean, l->var, l->gamma, l->beta};
    for (int i = 0; i < 4; i++) {
        TRY(make_dense(vecs[i], g->dev, dt, 1, ch));
        TRY(upload(vecs[i], host[i], (size_t)l->cout));
    }
    /* The folded weight as (O, KH, KW, C/groups) memory in f16 (the
     * tensor-core gather reads it in place; in (O, C/groups, KH, KW) it
     * would be packed at every call), and for channels-last f32. */
    int64_t oihw[4] = {cg * k * k, k * k, k, 1}, ohwi[4] = {k * k * cg, 1, k * cg, cg};
    TRY(make(&gl->folded_w, g->dev, dt, 4, ws, g->nhwc || dt == WGC_DTYPE_F16 ? ohwi : oihw));
    return make_dense(&gl->folded_b, g->dev, dt, 1, ch);
}

/* Readers of value v among the layers. */
static int readers(const Net *net, int v) {
    int n = 0;
    for (int i = 0; i < net->count; i++) {
        const Layer *l = &net->layers[i];
        n += l->in == v || (l->kind == LAYER_ADD && l->in2 == v);
    }
    return n;
}

/* True if the library adds a residual laid out as convolution l's output
 * in the convolution's epilogue, before the activation
 * (wgc_op_conv2d_explain says where it would add one). */
static int residual_in_epilogue(GpuNet *g, const Layer *l, GpuLayer *gl) {
    WgcConv2dParams p = {0};
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)l->stride;
    p.pad_h = p.pad_w = (uint32_t)l->pad;
    p.dilation_h = p.dilation_w = 1;
    p.groups = (uint32_t)l->groups;
    char text[8192];
    size_t len;
    if (wgc_op_conv2d_explain(g->stream, &p, &g->values[l->in].t, &gl->w.t, NULL, &g->values[l->out].t, text,
                              sizeof text, &len) != WGC_OK)
        return 0;
    return strstr(text, "; residual: in the route's epilogue") != NULL;
}

/* Each add whose operand is a convolution's output read by nothing else,
 * where the library's call costs no more than the add's own pass: an add
 * without activation (the call adds it in place), or one whose
 * convolution's epilogue adds it with the ReLU (elsewhere the call adds in
 * place and applies the ReLU in a second pass, one more than relu(a + b)
 * into the add's own output). Of the add's two convolutions (a ResNet
 * block's last one and its downsample), the earlier one whose epilogue
 * adds it (the block's 1x1 GEMM rather than the strided downsample: 193
 * against 209 us for ResNet-50's layer2.0 at batch 32 in f16 on an H100),
 * else, for an add without activation, the nearest. */
static void plan_fusion(GpuNet *g) {
    const Net *net = g->net;
    for (int j = 0; j < net->count; j++) {
        g->fused_conv[j] = -1;
        const Layer *a = &net->layers[j];
        if (a->kind != LAYER_ADD || a->in == a->in2) continue;
        int nearest = -1, chosen = -1;
        for (int i = j - 1; i >= 0; i--) {
            const Layer *c = &net->layers[i];
            if (c->kind != LAYER_CONV || (c->out != a->in && c->out != a->in2)) continue;
            if (readers(net, c->out) != 1 || c->act != WGC_ACTIVATION_NONE) continue;
            if (nearest < 0) nearest = i;
            if (residual_in_epilogue(g, c, &g->layers[i])) chosen = i;
        }
        if (chosen < 0 && a->act == WGC_ACTIVATION_NONE) chosen = nearest;
        if (chosen >= 0) g->fused_conv[j] = chosen, g->deferred[chosen] = 1;
    }
}

WgcStatus gpu_net_create(GpuNet *g, const Net *net, WgcDevice *dev, WgcStream *stream, int64_t batch, int nhwc,
                         int fuse) {
    memset(g, 0, sizeof *g);
    g->net = net, g->dev = dev, g->stream = stream, g->batch = batch, g->nhwc = nhwc;
    g->values = calloc((size_t)net->nvalues, sizeof *g->values);
    g->layers = calloc((size_t)net->count, sizeof *g->layers);
    g->call_layer = calloc((size_t)net->count * 3, sizeof *g->call_layer);
    g->fused_conv = calloc((size_t)net->count, sizeof *g->fused_conv);
    g->deferred = calloc((size_t)net->count, sizeof *g->deferred);
    for (int j = 0; j < net->count; j++) g->fused_conv[j] = -1;
    for (int v = 0; v < net->nvalues; v++) {
        ValueShape s = net->values[v];
        TRY(make_image(&g->values[v], dev, net->dtype, batch, s.c, s.h, s.w, nhwc));
    }
    int64_t ls[2] = {batch, net->layers[net->count - 1].cout};
    TRY(make_dense(&g->logits, dev, net->dtype, 2, ls));
    for (int i = 0; i < net->count; i++) TRY(create_layer(g, &net->layers[i], &g->layers[i]));
    if (fuse) plan_fusion(g);
    uint32_t a, b, sum, y;
    TRY(wgc_expr_create(&g->add_relu));
    TRY(wgc_expr_input(g->add_relu, net->dtype, &a));
    TRY(wgc_expr_input(g->add_relu, net->dtype, &b));
    TRY(wgc_expr_binary(g->add_relu, WGC_BINARY_OP_ADD, a, b, &sum));
    TRY(wgc_expr_unary(g->add_relu, WGC_UNARY_OP_RELU, sum, &y));
    return wgc_expr_output(g->add_relu, y);
}

void gpu_net_free(GpuNet *g) {
    for (int v = 0; v < g->net->nvalues; v++) release(&g->values[v]);
    for (int i = 0; i < g->net->count; i++) {
        GpuLayer *l = &g->layers[i];
        GpuTensor *all[7] = {&l->w, &l->mean, &l->var, &l->gamma, &l->beta, &l->folded_w, &l->folded_b};
        for (int j = 0; j < 7; j++) release(all[j]);
    }
    release(&g->logits);
    if (g->add_relu) wgc_expr_release(g->add_relu);
    free(g->values), free(g->layers), free(g->call_layer), free(g->fused_conv), free(g->deferred);
}

WgcStatus gpu_net_upload_input(GpuNet *g, const float *input) {
    ValueShape s = g->net->values[0];
    size_t n = (size_t)(g->batch * s.c * s.h * s.w);
    if (!g->nhwc) return upload(&g->values[0], input, n);
    float *t = malloc(n * sizeof *t);
    for (int64_t b = 0; b < g->batch; b++)
        for (int64_t c = 0; c < s.c; c++)
            for (int64_t p = 0; p < s.h * s.w; p++)
                t[(b * s.h * s.w + p) * s.c + c] = input[(b * s.c + c) * s.h * s.w + p];
    WgcStatus st = upload(&g->values[0], t, n);
    free(t);
    return st;
}

/* The convolution l, into out with residual (act after it) where given. */
static WgcStatus conv_into(GpuNet *g, const Layer *l, GpuLayer *gl, const WgcTensor *residual, uint32_t act,
                           const WgcTensor *out) {
    WgcConv2dBnActParams p = {0};
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)l->stride;
    p.pad_h = p.pad_w = (uint32_t)l->pad;
    p.groups = (uint32_t)l->groups;
    p.eps = BN_EPS;
    p.activation = act;
    p.folded = (uint32_t)g->folded;
    return wgc_op_conv2d_bn_act_residual(g->stream, &p, &g->values[l->in].t, &gl->w.t, NULL, &gl->mean.t,
                                         &gl->var.t, &gl->gamma.t, &gl->beta.t, &gl->folded_w.t, &gl->folded_b.t,
                                         residual, out);
}

static WgcStatus conv(GpuNet *g, const Layer *l, GpuLayer *gl) {
    WgcConv2dBnActParams p = {0};
    p.struct_size = sizeof p;
    p.stride_h = p.stride_w = (uint32_t)l->stride;
    p.pad_h = p.pad_w = (uint32_t)l->pad;
    p.groups = (uint32_t)l->groups;
    p.eps = BN_EPS;
    p.activation = l->act;
    p.folded = (uint32_t)g->folded;
    return wgc_op_conv2d_bn_act(g->stream, &p, &g->values[l->in].t, &gl->w.t, NULL, &gl->mean.t, &gl->var.t,
                                &gl->gamma.t, &gl->beta.t, &gl->folded_w.t, &gl->folded_b.t, &g->values[l->out].t);
}

/* (N, C, 1, 1) as the matrix (N, C). */
static WgcTensor as_matrix(const WgcTensor *t) {
    WgcTensor m = *t;
    m.rank = 2;
    return m;
}

static WgcStatus layer(GpuNet *g, int i) {
    const Layer *l = &g->net->layers[i];
    GpuLayer *gl = &g->layers[i];
    const WgcTensor *in = &g->values[l->in].t, *out = &g->values[l->out].t;
    if (l->kind == LAYER_CONV && g->deferred[i]) return WGC_OK; /* run by its add */
    if (l->kind == LAYER_ADD && g->fused_conv[i] >= 0) {
        int c = g->fused_conv[i];
        const Layer *cl = &g->net->layers[c];
        int other = cl->out == l->in ? l->in2 : l->in;
        g->call_layer[g->calls++] = c;
        return conv_into(g, cl, &g->layers[c], &g->values[other].t, l->act, out);
    }
    g->call_layer[g->calls++] = i;
    switch (l->kind) {
    case LAYER_CONV: return conv(g, l, gl);
    case LAYER_ADD: {
        if (l->act == WGC_ACTIVATION_NONE) return wgc_op_binary(g->stream, WGC_BINARY_OP_ADD, in, &g->values[l->in2].t, out);
        WgcTensor ins[2] = {*in, g->values[l->in2].t};
        return wgc_op_expr(g->stream, g->add_relu, ins, 2, out, 1, NULL, 0);
    }
    case LAYER_MAXPOOL: {
        WgcPool2dParams p = {0};
        p.struct_size = sizeof p;
        p.kernel_h = p.kernel_w = (uint32_t)l->k;
        p.stride_h = p.stride_w = (uint32_t)l->stride;
        p.pad_h = p.pad_w = (uint32_t)l->pad;
        return wgc_op_max_pool2d(g->stream, &p, in, out);
    }
    case LAYER_GAP: return wgc_op_global_avg_pool2d(g->stream, in, out);
    case LAYER_LINEAR: {
        WgcTensor x = as_matrix(in), wt = gl->w.t, y = as_matrix(out);
        wt.shape[0] = l->cin, wt.shape[1] = l->cout; /* W^T as a view */
        wt.strides[0] = 1, wt.strides[1] = l->cin;
        TRY(wgc_op_matmul(g->stream, &x, &wt, &g->logits.t));
        g->call_layer[g->calls++] = i;
        return wgc_op_binary(g->stream, WGC_BINARY_OP_ADD, &g->logits.t, &gl->beta.t, &y);
    }
    }
    return WGC_ERROR_INVALID_ARGUMENT;
}

WgcStatus gpu_net_forward(GpuNet *g) {
    g->calls = 0;
    for (int i = 0; i < g->net->count; i++) TRY(layer(g, i));
    g->folded = 1;
    return WGC_OK;
}

float *gpu_net_read_output(GpuNet *g) {
    const GpuTensor *o = &g->values[g->net->nvalues - 1];
    size_t n = (size_t)(g->batch * g->net->values[g->net->nvalues - 1].c);
    float *v = malloc(n * sizeof *v);
    if (g->net->dtype == WGC_DTYPE_F16) {
        uint16_t *h = malloc(n * 2);
        CHECK(wgc_buffer_read(o->buf, 0, h, n * 2));
        for (size_t i = 0; i < n; i++) v[i] = from_half(h[i]);
        free(h);
    } else {
        CHECK(wgc_buffer_read(o->buf, 0, v, n * 4));
    }
    return v;
}
