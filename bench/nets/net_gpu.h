/* A network on the library: buffers for every value and weight, in NCHW or
 * channels-last (NHWC) memory, and one forward pass recorded on a stream. */
#ifndef WGC_NETS_NET_GPU_H
#define WGC_NETS_NET_GPU_H

#include "net.h"

typedef struct {
    WgcBuffer *buf;
    WgcTensor t;
} GpuTensor;

typedef struct {
    GpuTensor w, mean, var, gamma, beta, folded_w, folded_b;
} GpuLayer;

typedef struct {
    const Net *net;
    WgcDevice *dev;
    WgcStream *stream;
    int64_t batch;
    int nhwc;
    int folded; /* the batch norms are folded (after the first forward) */
    GpuTensor *values;
    GpuLayer *layers;
    GpuTensor logits; /* (batch, classes), the linear's product before its bias */
    WgcExpr *add_relu; /* relu(a + b), a residual's add and activation in one kernel */
    int *call_layer;   /* the layer of each library call of one forward */
    /* Residual fusion (wgc_op_conv2d_bn_act_residual): for an add, the
     * convolution whose output it adds (run there with the add's other
     * operand as its residual, into the add's output), else -1; for that
     * convolution, deferred[i] = 1 (its own place records nothing). */
    int *fused_conv;
    char *deferred;
    int calls;
} GpuNet;

/* fuse: a convolution that only feeds an add runs with the add as its residual. */
WgcStatus gpu_net_create(GpuNet *g, const Net *net, WgcDevice *dev, WgcStream *stream, int64_t batch, int nhwc,
                         int fuse);
void gpu_net_free(GpuNet *g);
WgcStatus gpu_net_upload_input(GpuNet *g, const float *input); /* NCHW floats */
WgcStatus gpu_net_forward(GpuNet *g);
float *gpu_net_read_output(GpuNet *g); /* (batch, classes) floats, caller frees */

#endif
