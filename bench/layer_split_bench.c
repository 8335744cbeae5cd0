/* A LLaMA-style stack of layers split by layers across devices (pipeline:
 * the weights stay, the activations move), against one device holding every
 * layer. Each layer is a pre-norm SwiGLU block, h += W_down (silu(W_gate n)
 * * (W_up n)) with n = rms_norm(h) (attention left out: it adds per-device
 * work, not crossings). Weights come from the library's Philox generator
 * with one seed per layer, so every device holding a layer holds the same
 * values, and the split result is checked against the one-device result
 * before anything is timed.
 *
 *   layer_split_bench [--devices P] [--same-adapter] [--small]
 *                     [--layers L] [--dim D] [--hidden H] [--tokens T] [--f32]
 *
 * A step runs every layer on T tokens' activations (T = 1: decode) and
 * moves the activations to the next device after each device's layers and
 * back to the first at the end (as a decode loop feeds its next token
 * back), so a step crosses devices P times. Reported: tokens per second for
 * one device and for P, and the cost of one crossing:
 * (split step - one-device step) / P. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define MAX_DEV 8

typedef struct Layer {
    WgcBuffer *norm, *gate, *up, *down;
    WgcTensor tnorm, tgate, tup, tdown;
} Layer;

/* One device's working set: its layers and activation buffers. */
typedef struct Part {
    WgcDevice *dev;
    WgcStream *stream;
    int first, count;
    Layer *layers;
    WgcBuffer *h, *n, *g, *u;
    WgcTensor th, tn, tg, tu;
} Part;

static int g_dim = 4096, g_hidden = 14336, g_layers = 16, g_tokens = 1, g_small = 0;
static WgcDtype g_dtype = WGC_DTYPE_F16;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static size_t esize(void) { return g_dtype == WGC_DTYPE_F32 ? 4 : 2; }

/* A new r x c tensor (r = 0: a vector of c). */
static WgcTensor tensor2(WgcDevice *dev, WgcBuffer **b, int64_t r, int64_t c) {
    uint64_t bytes = ((uint64_t)((r ? r : 1) * c) * esize() + 3) / 4 * 4;
    CHECK(wgc_buffer_create(dev, bytes, WGC_BUFFER_USAGE_STORAGE, b));
    int64_t shape[2] = {r, c};
    WgcTensor t;
    CHECK(wgc_tensor_contiguous(*b, g_dtype, r ? 2 : 1, r ? shape : &shape[1], &t));
    return t;
}

/* Layer `index`'s weights on `p`'s device, from its own seed. */
static void make_layer(Part *p, Layer *l, int index) {
    double scale_in = 1.0 / sqrt((double)g_dim), scale_out = 1.0 / sqrt((double)g_hidden);
    l->tnorm = tensor2(p->dev, &l->norm, 0, g_dim);
    l->tgate = tensor2(p->dev, &l->gate, g_dim, g_hidden);
    l->tup = tensor2(p->dev, &l->up, g_dim, g_hidden);
    l->tdown = tensor2(p->dev, &l->down, g_hidden, g_dim);
    uint64_t seed = 1000 + (uint64_t)index;
    CHECK(wgc_op_random_uniform(p->stream, &l->tnorm, seed, 0, 0.5, 1.5));
    CHECK(wgc_op_random_uniform(p->stream, &l->tgate, seed, 1u << 20, -scale_in, scale_in));
    CHECK(wgc_op_random_uniform(p->stream, &l->tup, seed, 2u << 28, -scale_in, scale_in));
    CHECK(wgc_op_random_uniform(p->stream, &l->tdown, seed, 3u << 28, -scale_out, scale_out));
}

static void make_part(Part *p, WgcDevice *dev, int first, int count) {
    memset(p, 0, sizeof *p);
    p->dev = dev;
    CHECK(wgc_stream_create(dev, &p->stream));
    p->first = first, p->count = count;
    p->layers = calloc((size_t)count, sizeof(Layer));
    for (int i = 0; i < count; i++) make_layer(p, &p->layers[i], first + i);
    p->th = tensor2(dev, &p->h, g_tokens, g_dim);
    p->tn = tensor2(dev, &p->n, g_tokens, g_dim);
    p->tg = tensor2(dev, &p->g, g_tokens, g_hidden);
    p->tu = tensor2(dev, &p->u, g_tokens, g_hidden);
    CHECK(wgc_stream_synchronize(p->stream));
}

static void free_part(Part *p) {
    for (int i = 0; i < p->count; i++) {
        Layer *l = &p->layers[i];
        wgc_buffer_release(l->norm), wgc_buffer_release(l->gate), wgc_buffer_release(l->up),
            wgc_buffer_release(l->down);
    }
    free(p->layers);
    wgc_buffer_release(p->h), wgc_buffer_release(p->n), wgc_buffer_release(p->g), wgc_buffer_release(p->u);
    wgc_stream_release(p->stream);
}

/* This part's layers on its activations, recorded on its stream. */
static void run_part(Part *p) {
    for (int i = 0; i < p->count; i++) {
        Layer *l = &p->layers[i];
        CHECK(wgc_op_rms_norm(p->stream, &p->th, &l->tnorm, 1, 1e-5f, &p->tn));
        CHECK(wgc_op_matmul(p->stream, &p->tn, &l->tgate, &p->tg));
        CHECK(wgc_op_matmul(p->stream, &p->tn, &l->tup, &p->tu));
        CHECK(wgc_op_unary(p->stream, WGC_UNARY_OP_SILU, &p->tg, &p->tg));
        CHECK(wgc_op_binary(p->stream, WGC_BINARY_OP_MUL, &p->tg, &p->tu, &p->tg));
        CHECK(wgc_op_matmul(p->stream, &p->tg, &l->tdown, &p->tn));
        CHECK(wgc_op_binary(p->stream, WGC_BINARY_OP_ADD, &p->th, &p->tn, &p->th));
    }
}

/* One step over the parts: each part's layers, then the activations to the
 * next part (the last back to the first). Returns after the last copy has
 * been handed over; synchronize part 0 for the result. */
static void step(Part *parts, int np) {
    for (int i = 0; i < np; i++) {
        run_part(&parts[i]);
        if (np > 1) {
            Part *next = &parts[(i + 1) % np];
            CHECK(wgc_tensor_copy_to_device(parts[i].stream, &parts[i].th, next->stream, &next->th));
        }
    }
}

static void set_input(Part *p) {
    CHECK(wgc_op_random_uniform(p->stream, &p->th, 7, 0, -1.0, 1.0));
}

static double *read_h(Part *p) {
    size_t n = (size_t)g_tokens * (size_t)g_dim;
    double *out = malloc(n * sizeof(double));
    void *raw = malloc(n * esize() + 4);
    CHECK(wgc_stream_synchronize(p->stream));
    CHECK(wgc_buffer_read(p->h, 0, raw, n * esize()));
    for (size_t i = 0; i < n; i++)
        out[i] = g_dtype == WGC_DTYPE_F32 ? ((float *)raw)[i] : from_half(((uint16_t *)raw)[i]);
    free(raw);
    return out;
}

static double time_steps(Part *parts, int np, int iters) {
    double *t = malloc(sizeof(double) * (size_t)iters);
    for (int it = 0; it < iters; it++) {
        set_input(&parts[0]);
        for (int i = 0; i < np; i++) CHECK(wgc_stream_synchronize(parts[i].stream));
        double t0 = now_ms();
        step(parts, np);
        CHECK(wgc_stream_synchronize(parts[0].stream));
        t[it] = now_ms() - t0;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    double m = t[iters / 2];
    free(t);
    return m;
}

int main(int argc, char **argv) {
    int np = 2, same_adapter = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--small")) g_small = 1, same_adapter = 1;
        else if (!strcmp(a, "--same-adapter")) same_adapter = 1;
        else if (!strcmp(a, "--f32")) g_dtype = WGC_DTYPE_F32;
        else if (!strcmp(a, "--devices") && v) np = atoi(v), i++;
        else if (!strcmp(a, "--layers") && v) g_layers = atoi(v), i++;
        else if (!strcmp(a, "--dim") && v) g_dim = atoi(v), i++;
        else if (!strcmp(a, "--hidden") && v) g_hidden = atoi(v), i++;
        else if (!strcmp(a, "--tokens") && v) g_tokens = atoi(v), i++;
        else {
            fprintf(stderr, "usage: %s [--devices P] [--same-adapter] [--small] [--layers L] [--dim D] "
                            "[--hidden H] [--tokens T] [--f32]\n", argv[0]);
            return 2;
        }
    }
    if (g_small) g_dim = 72, g_hidden = 100, g_layers = 6, g_tokens = 3, g_dtype = WGC_DTYPE_F32;
    if (np < 2 || np > MAX_DEV || g_layers < np) {
        fprintf(stderr, "--devices takes 2 to %d, and no more than --layers\n", MAX_DEV);
        return 2;
    }
    WgcInstance *inst;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    WgcDevice *devs[MAX_DEV];
    uint32_t count = 0;
    CHECK(wgc_instance_adapter_count(inst, &count));
    int opened = 0;
    for (uint32_t a = 0; opened < np && (same_adapter || a < count); a++) {
        WgcDeviceOptions o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.adapter_index = same_adapter ? -1 : (int32_t)a;
        WgcAdapterInfo info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (!same_adapter) {
            CHECK(wgc_instance_adapter_info(inst, a, &info));
            if (info.device_type == WGC_DEVICE_TYPE_CPU) continue;
        }
        CHECK(wgc_device_create(inst, &o, &devs[opened]));
        CHECK(wgc_device_info(devs[opened], &info));
        printf("device %d: %s\n", opened, info.name);
        opened++;
    }
    if (opened < np) {
        fprintf(stderr, "found %d GPU adapters, %d asked for\n", opened, np);
        return 1;
    }
    printf("%d layers, dim %d, hidden %d, %d token(s) per step, %s\n", g_layers, g_dim, g_hidden, g_tokens,
           g_dtype == WGC_DTYPE_F32 ? "f32" : "f16");

    /* Every layer on device 0. */
    Part one;
    make_part(&one, devs[0], 0, g_layers);
    set_input(&one);
    step(&one, 1);
    double *ref = read_h(&one);

    /* Layers split as evenly as they go. */
    Part parts[MAX_DEV];
    for (int i = 0, first = 0; i < np; i++) {
        int n = g_layers / np + (i < g_layers % np);
        make_part(&parts[i], devs[i], first, n);
        first += n;
    }
    set_input(&parts[0]);
    step(parts, np);
    double *got = read_h(&parts[0]);
    double worst = 0, scale = 0;
    size_t n = (size_t)g_tokens * (size_t)g_dim;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - ref[i]);
        worst = d > worst ? d : worst;
        scale = fabs(ref[i]) > scale ? fabs(ref[i]) : scale;
    }
    /* Same kernels on the same values: the split result is the same bits
     * unless devices pick other kernels (other adapters): allow rounding. */
    double tol = (g_dtype == WGC_DTYPE_F32 ? 1e-4 : 2e-2) * (scale > 1 ? scale : 1);
    printf("split vs one device: max |diff| %.3g (max |h| %.3g)\n", worst, scale);
    if (!(worst <= tol)) {
        fprintf(stderr, "the split model differs from the one-device model\n");
        return 1;
    }
    free(ref), free(got);

    int iters = g_small ? 3 : 20;
    time_steps(&one, 1, 3);
    time_steps(parts, np, 3);
    double t1 = time_steps(&one, 1, iters), tp = time_steps(parts, np, iters);
    printf("one device: %.3f ms per step, %.1f tokens/s\n", t1, g_tokens / t1 * 1e3);
    printf("%d devices: %.3f ms per step, %.1f tokens/s; %d crossings per step, %.1f us each over one device\n", np,
           tp, g_tokens / tp * 1e3, np, (tp - t1) / np * 1e3);

    free_part(&one);
    for (int i = 0; i < np; i++) free_part(&parts[i]);
    for (int i = 0; i < np; i++) wgc_device_release(devs[i]);
    wgc_instance_release(inst);
    printf("layer_split_bench: check passed\n");
    return 0;
}
