/* A convolutional network as a list of layers over numbered values (the
 * input, each layer's output), with its weights on the host: built once by
 * resnet50.c or mobilenetv2.c, then run on the library (net_gpu.c),
 * recomputed in double on the CPU (net_ref.c) and written out for the
 * PyTorch side (net_dump.c). Shapes exclude the batch; any input size. */
#ifndef WGC_NETS_NET_H
#define WGC_NETS_NET_H

#include <stddef.h>
#include <stdint.h>

#include "wgcompute.h"

typedef enum { LAYER_CONV, LAYER_ADD, LAYER_MAXPOOL, LAYER_GAP, LAYER_LINEAR } LayerKind;

typedef struct {
    int64_t c, h, w;
} ValueShape;

/* Weights on the host, already rounded to the network's dtype. A conv
 * layer is a convolution (no bias) + batch norm (running statistics) +
 * activation; a linear layer uses w (cout, cin) and beta as its bias. */
typedef struct {
    LayerKind kind;
    char name[48];
    int in, in2, out; /* value ids; in2: the add's second operand */
    int64_t cin, cout, k, stride, pad, groups;
    uint32_t act; /* WgcActivation (conv), or WGC_ACTIVATION_RELU after an add */
    float *w, *mean, *var, *gamma, *beta;
} Layer;

typedef struct {
    Layer *layers;
    int count, cap;
    ValueShape *values;
    int nvalues, vcap;
    uint64_t rng;
    WgcDtype dtype; /* weights are rounded to it */
} Net;

#define BN_EPS 1e-5f

/* net_build.c */
void net_init(Net *net, WgcDtype dtype, uint64_t seed);
void net_free(Net *net);
int net_input(Net *net, int64_t c, int64_t h, int64_t w);
/* gamma_scale: the batch norm's weights are drawn around it (smaller at the
 * end of a residual branch keeps the sum of many branches in range). */
int net_conv(Net *net, const char *name, int in, int64_t cout, int64_t k, int64_t stride, int64_t groups,
             uint32_t act, double gamma_scale);
int net_add(Net *net, const char *name, int a, int b, int relu);
int net_maxpool(Net *net, const char *name, int in, int64_t k, int64_t stride, int64_t pad);
int net_gap(Net *net, const char *name, int in);
int net_linear(Net *net, const char *name, int in, int64_t cout);
float net_round(const Net *net, double v);
double net_flops(const Net *net, int64_t batch); /* multiply-adds x 2 of the convolutions and the linear */

/* the two networks */
void build_resnet50(Net *net, int64_t size);
void build_mobilenetv2(Net *net, int64_t size);

/* net_ref.c: the whole forward in double, NCHW; returns the output (batch x classes), caller frees. */
double *net_reference(const Net *net, const float *input, int64_t batch);

/* net_dump.c: the network's weights, input and the library's output, for bench/torch_nets.py. */
int net_dump(const Net *net, const char *arch, const char *path, const float *input, int64_t batch,
             const float *output);

#endif
