/* Building a network: values, layers and their random weights (He-uniform
 * convolutions; batch norm statistics and affine drawn near identity). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_util.h"
#include "net.h"

static double uniform(Net *net) { /* splitmix64, [-1, 1) */
    uint64_t z = (net->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2 - 1;
}

float net_round(const Net *net, double v) {
    return net->dtype == WGC_DTYPE_F16 ? from_half(to_half((float)v)) : (float)v;
}

static float *draw(Net *net, int64_t n, double center, double scale) {
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = net_round(net, center + scale * uniform(net));
    return v;
}

void net_init(Net *net, WgcDtype dtype, uint64_t seed) {
    memset(net, 0, sizeof *net);
    net->dtype = dtype;
    net->rng = seed;
}

void net_free(Net *net) {
    for (int i = 0; i < net->count; i++) {
        Layer *l = &net->layers[i];
        free(l->w), free(l->mean), free(l->var), free(l->gamma), free(l->beta);
    }
    free(net->layers), free(net->values);
    memset(net, 0, sizeof *net);
}

static int add_value(Net *net, int64_t c, int64_t h, int64_t w) {
    if (net->nvalues == net->vcap) {
        net->vcap = net->vcap ? 2 * net->vcap : 64;
        net->values = realloc(net->values, (size_t)net->vcap * sizeof *net->values);
    }
    net->values[net->nvalues] = (ValueShape){c, h, w};
    return net->nvalues++;
}

static Layer *add_layer(Net *net, LayerKind kind, const char *name, int in) {
    if (net->count == net->cap) {
        net->cap = net->cap ? 2 * net->cap : 64;
        net->layers = realloc(net->layers, (size_t)net->cap * sizeof *net->layers);
    }
    Layer *l = &net->layers[net->count++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    snprintf(l->name, sizeof l->name, "%s", name);
    l->in = l->in2 = in;
    l->cin = net->values[in].c;
    return l;
}

int net_input(Net *net, int64_t c, int64_t h, int64_t w) { return add_value(net, c, h, w); }

int net_conv(Net *net, const char *name, int in, int64_t cout, int64_t k, int64_t stride, int64_t groups,
             uint32_t act, double gamma_scale) {
    ValueShape s = net->values[in];
    Layer *l = add_layer(net, LAYER_CONV, name, in);
    l->cout = cout, l->k = k, l->stride = stride, l->pad = k / 2, l->groups = groups, l->act = act;
    int64_t fan_in = s.c / groups * k * k;
    l->w = draw(net, cout * fan_in, 0, sqrt(6.0 / fan_in));
    l->mean = draw(net, cout, 0, 0.1);
    l->var = draw(net, cout, 1, 0.25);
    l->gamma = draw(net, cout, gamma_scale, 0.25 * gamma_scale);
    l->beta = draw(net, cout, 0, 0.1);
    int64_t oh = (s.h + 2 * l->pad - k) / stride + 1, ow = (s.w + 2 * l->pad - k) / stride + 1;
    return l->out = add_value(net, cout, oh, ow);
}

int net_add(Net *net, const char *name, int a, int b, int relu) {
    Layer *l = add_layer(net, LAYER_ADD, name, a);
    l->in2 = b;
    l->cout = l->cin;
    l->act = relu ? WGC_ACTIVATION_RELU : WGC_ACTIVATION_NONE;
    ValueShape s = net->values[a];
    return l->out = add_value(net, s.c, s.h, s.w);
}

int net_maxpool(Net *net, const char *name, int in, int64_t k, int64_t stride, int64_t pad) {
    ValueShape s = net->values[in];
    Layer *l = add_layer(net, LAYER_MAXPOOL, name, in);
    l->cout = l->cin, l->k = k, l->stride = stride, l->pad = pad;
    return l->out = add_value(net, s.c, (s.h + 2 * pad - k) / stride + 1, (s.w + 2 * pad - k) / stride + 1);
}

int net_gap(Net *net, const char *name, int in) {
    Layer *l = add_layer(net, LAYER_GAP, name, in);
    l->cout = l->cin;
    return l->out = add_value(net, l->cin, 1, 1);
}

int net_linear(Net *net, const char *name, int in, int64_t cout) {
    Layer *l = add_layer(net, LAYER_LINEAR, name, in);
    l->cout = cout;
    l->w = draw(net, cout * l->cin, 0, sqrt(3.0 / l->cin));
    l->beta = draw(net, cout, 0, 0.1);
    return l->out = add_value(net, cout, 1, 1);
}

double net_flops(const Net *net, int64_t batch) {
    double f = 0;
    for (int i = 0; i < net->count; i++) {
        const Layer *l = &net->layers[i];
        ValueShape o = net->values[l->out];
        if (l->kind == LAYER_CONV) f += 2.0 * batch * o.c * o.h * o.w * (l->cin / l->groups) * l->k * l->k;
        if (l->kind == LAYER_LINEAR) f += 2.0 * batch * l->cin * l->cout;
    }
    return f;
}
