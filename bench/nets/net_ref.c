/* The forward pass in double on the CPU, as PyTorch defines the layers:
 * convolution (zero padding), batch norm with running statistics (not
 * folded), the activation; max pooling pads with -inf. */
#include <math.h>
#include <stdlib.h>

#include "net.h"

static double act(uint32_t a, double v) {
    switch (a) {
    case WGC_ACTIVATION_RELU: return v > 0 ? v : 0;
    case WGC_ACTIVATION_RELU6: return v < 0 ? 0 : v > 6 ? 6 : v;
    case WGC_ACTIVATION_HARDSWISH: return v * (v + 3 < 0 ? 0 : v + 3 > 6 ? 6 : v + 3) / 6;
    default: return v;
    }
}

static void conv(const Layer *l, ValueShape is, ValueShape os, const double *x, double *y) {
    int64_t cg = l->cin / l->groups, og = l->cout / l->groups, k = l->k;
    for (int64_t o = 0; o < l->cout; o++) {
        int64_t c0 = o / og * cg;
        double s = l->gamma[o] / sqrt((double)l->var[o] + BN_EPS);
        for (int64_t oy = 0; oy < os.h; oy++)
            for (int64_t ox = 0; ox < os.w; ox++) {
                double acc = 0;
                for (int64_t c = 0; c < cg; c++)
                    for (int64_t ky = 0; ky < k; ky++) {
                        int64_t iy = oy * l->stride - l->pad + ky;
                        if (iy < 0 || iy >= is.h) continue;
                        const float *wr = l->w + ((o * cg + c) * k + ky) * k;
                        const double *xr = x + ((c0 + c) * is.h + iy) * is.w;
                        for (int64_t kx = 0; kx < k; kx++) {
                            int64_t ix = ox * l->stride - l->pad + kx;
                            if (ix >= 0 && ix < is.w) acc += wr[kx] * xr[ix];
                        }
                    }
                y[(o * os.h + oy) * os.w + ox] = act(l->act, (acc - l->mean[o]) * s + l->beta[o]);
            }
    }
}

static void maxpool(const Layer *l, ValueShape is, ValueShape os, const double *x, double *y) {
    for (int64_t c = 0; c < is.c; c++)
        for (int64_t oy = 0; oy < os.h; oy++)
            for (int64_t ox = 0; ox < os.w; ox++) {
                double m = -INFINITY;
                for (int64_t ky = 0; ky < l->k; ky++)
                    for (int64_t kx = 0; kx < l->k; kx++) {
                        int64_t iy = oy * l->stride - l->pad + ky, ix = ox * l->stride - l->pad + kx;
                        if (iy >= 0 && iy < is.h && ix >= 0 && ix < is.w) {
                            double v = x[(c * is.h + iy) * is.w + ix];
                            m = v > m ? v : m;
                        }
                    }
                y[(c * os.h + oy) * os.w + ox] = m;
            }
}

double *net_reference(const Net *net, const float *input, int64_t batch) {
    double **v = calloc((size_t)net->nvalues, sizeof *v);
    size_t *size = calloc((size_t)net->nvalues, sizeof *size);
    for (int i = 0; i < net->nvalues; i++) {
        ValueShape s = net->values[i];
        size[i] = (size_t)(s.c * s.h * s.w);
        v[i] = malloc(size[i] * (size_t)batch * sizeof **v);
    }
    for (size_t i = 0; i < size[0] * (size_t)batch; i++) v[0][i] = input[i];
    for (int i = 0; i < net->count; i++) {
        const Layer *l = &net->layers[i];
        ValueShape is = net->values[l->in], os = net->values[l->out];
        for (int64_t b = 0; b < batch; b++) {
            const double *x = v[l->in] + b * size[l->in];
            double *y = v[l->out] + b * size[l->out];
            if (l->kind == LAYER_CONV) conv(l, is, os, x, y);
            if (l->kind == LAYER_MAXPOOL) maxpool(l, is, os, x, y);
            if (l->kind == LAYER_ADD) {
                const double *x2 = v[l->in2] + b * size[l->in2];
                for (size_t j = 0; j < size[l->out]; j++) y[j] = act(l->act, x[j] + x2[j]);
            }
            if (l->kind == LAYER_GAP)
                for (int64_t c = 0; c < is.c; c++) {
                    double s = 0;
                    for (int64_t p = 0; p < is.h * is.w; p++) s += x[c * is.h * is.w + p];
                    y[c] = s / (double)(is.h * is.w);
                }
            if (l->kind == LAYER_LINEAR)
                for (int64_t o = 0; o < l->cout; o++) {
                    double s = l->beta[o];
                    for (int64_t c = 0; c < l->cin; c++) s += (double)l->w[o * l->cin + c] * x[c];
                    y[o] = s;
                }
        }
    }
    double *out = v[net->nvalues - 1];
    for (int i = 0; i < net->nvalues - 1; i++) free(v[i]);
    free(v), free(size);
    return out;
}
