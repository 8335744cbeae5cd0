#define _POSIX_C_SOURCE 199309L
/* Whole networks on the library: ResNet-50 and MobileNetV2 forward
 * (inference, random weights in the real shapes), checked, timed and
 * profiled layer by layer.
 *
 *   wgc_nets --net resnet50|mobilenetv2 [--batch 1,32] [--dtype f32,f16]
 *            [--layout nchw,nhwc] [--size 224] [--iters 20] [--ref]
 *            [--check FILE] [--profile] [--max-gb 60] [--fuse 1] [--sync 0]
 *
 * --ref compares the first forward with a double-precision CPU forward
 * (net_ref.c; use small sizes); --check writes the weights, input and
 * output of the first configuration for bench/torch_nets.py. Each
 * configuration prints one JSON line; --profile adds the per-layer table
 * (lines starting with '#'). --fuse 0 runs each residual add as its own
 * pass instead of in the convolution that feeds it
 * (wgc_op_conv2d_bn_act_residual). --sync 1 waits for each forward before
 * recording the next (by default the host records ahead of the GPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench_util.h"
#include "net_gpu.h"

typedef struct {
    const char *net, *check;
    int64_t batches[8], size;
    int nbatch, ndtype, nlayout, iters, ref, profile, fuse, sync;
    WgcDtype dtypes[2];
    int layouts[2];
    double max_gb;
} Options;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s --net resnet50|mobilenetv2 [--batch 1,32] [--dtype f32,f16] [--layout nchw,nhwc]\n"
            "          [--size 224] [--iters 20] [--ref] [--check FILE] [--profile] [--max-gb 60] [--fuse 1] [--sync 0]\n",
            argv0);
    exit(2);
}

static void parse(int argc, char **argv, Options *o) {
    memset(o, 0, sizeof *o);
    o->net = "resnet50", o->size = 224, o->iters = 20, o->max_gb = 60, o->fuse = 1;
    o->batches[0] = 1, o->nbatch = 1;
    o->dtypes[0] = WGC_DTYPE_F32, o->ndtype = 1;
    o->nlayout = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ref")) o->ref = 1;
        else if (!strcmp(a, "--profile")) o->profile = 1;
        else if (!v) usage(argv[0]);
        else if (!strcmp(a, "--net")) o->net = v, i++;
        else if (!strcmp(a, "--check")) o->check = v, i++;
        else if (!strcmp(a, "--size")) o->size = atoll(v), i++;
        else if (!strcmp(a, "--fuse")) o->fuse = atoi(v), i++;
        else if (!strcmp(a, "--sync")) o->sync = atoi(v), i++;
        else if (!strcmp(a, "--iters")) o->iters = atoi(v), i++;
        else if (!strcmp(a, "--max-gb")) o->max_gb = atof(v), i++;
        else if (!strcmp(a, "--batch")) {
            o->nbatch = 0;
            for (const char *p = v; *p && o->nbatch < 8; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
                o->batches[o->nbatch++] = atoll(p);
            i++;
        } else if (!strcmp(a, "--dtype")) {
            o->ndtype = 0;
            if (strstr(v, "f32")) o->dtypes[o->ndtype++] = WGC_DTYPE_F32;
            if (strstr(v, "f16")) o->dtypes[o->ndtype++] = WGC_DTYPE_F16;
            i++;
        } else if (!strcmp(a, "--layout")) {
            o->nlayout = 0;
            if (strstr(v, "nchw")) o->layouts[o->nlayout++] = 0;
            if (strstr(v, "nhwc")) o->layouts[o->nlayout++] = 1;
            i++;
        } else usage(argv[0]);
    }
    if (strcmp(o->net, "resnet50") && strcmp(o->net, "mobilenetv2")) usage(argv[0]);
    if (!o->nbatch || !o->ndtype || !o->nlayout || o->size < 16) usage(argv[0]);
}

static double net_bytes(const Net *net, int64_t batch) {
    double b = 0, es = net->dtype == WGC_DTYPE_F16 ? 2 : 4;
    for (int v = 0; v < net->nvalues; v++) b += (double)net->values[v].c * net->values[v].h * net->values[v].w;
    return b * batch * es;
}

/* The library's output against the double forward: every logit within
 * tol * max|ref| (the network's many layers make a per-element relative
 * bound meaningless for logits near 0). */
static int check_ref(const Net *net, const float *input, const float *got, int64_t batch) {
    double *ref = net_reference(net, input, batch);
    size_t n = (size_t)(batch * net->values[net->nvalues - 1].c);
    double scale = 0, worst = 0;
    int nan = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(ref[i]));
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i])) nan++;
        worst = fmax(worst, fabs(got[i] - ref[i]));
    }
    double tol = net->dtype == WGC_DTYPE_F16 ? 3e-2 : 1e-3;
    int ok = !nan && worst <= tol * scale && scale > 0;
    fprintf(stderr, "  reference: %zu logits, max|ref| %.4g, largest difference %.3g (%.2e of max; limit %.0e)%s\n", n,
            scale, worst, scale > 0 ? worst / scale : 0, tol, nan ? ", non-finite outputs" : "");
    free(ref);
    return ok;
}

static void print_profile(GpuNet *g) {
    CHECK(wgc_stream_synchronize(g->stream));
    CHECK(wgc_stream_profile_clear(g->stream));
    CHECK(wgc_stream_set_profiling(g->stream, 1));
    CHECK(gpu_net_forward(g));
    CHECK(wgc_stream_synchronize(g->stream));
    CHECK(wgc_stream_set_profiling(g->stream, 0));
    WgcProfileRecord *r = NULL;
    size_t n = 0, len = 0;
    CHECK(wgc_stream_profile_records(g->stream, &r, &n));
    const Net *net = g->net;
    double *ns = calloc((size_t)net->count, sizeof *ns), total = 0;
    char **kernels = calloc((size_t)net->count, sizeof *kernels);
    for (size_t i = 0; i < n; i++) {
        if (r[i].call >= (uint64_t)g->calls) continue;
        int l = g->call_layer[r[i].call];
        ns[l] += (double)r[i].gpu_ns, total += (double)r[i].gpu_ns;
        const char *k = r[i].kernel;
        size_t old = kernels[l] ? strlen(kernels[l]) : 0;
        if (kernels[l] && strstr(kernels[l], k)) continue;
        kernels[l] = realloc(kernels[l], old + strlen(k) + 4);
        sprintf(kernels[l] + old, "%s%s", old ? " + " : "", k);
    }
    printf("# per-layer profile: %s batch %lld %s %s, %zu GPU commands, %.3f ms GPU in total\n",
           net->layers[0].name[0] ? "" : "", (long long)g->batch, net->dtype == WGC_DTYPE_F16 ? "f16" : "f32",
           g->nhwc ? "nhwc" : "nchw", n, total / 1e6);
    printf("# %-3s %-22s %-6s %-16s %9s %8s  %s\n", "#", "layer", "kind", "out (C,H,W)", "us", "TFLOP/s", "kernels");
    static const char *kinds[] = {"conv", "add", "maxp", "gap", "linear"};
    for (int i = 0; i < net->count; i++) {
        const Layer *l = &net->layers[i];
        ValueShape o = net->values[l->out];
        double flops = 0;
        if (l->kind == LAYER_CONV) flops = 2.0 * g->batch * o.c * o.h * o.w * (l->cin / l->groups) * l->k * l->k;
        if (l->kind == LAYER_LINEAR) flops = 2.0 * g->batch * l->cin * l->cout;
        char shape[32];
        snprintf(shape, sizeof shape, "%lld,%lld,%lld", (long long)o.c, (long long)o.h, (long long)o.w);
        printf("# %-3d %-22s %-6s %-16s %9.1f %8.2f  %s\n", i, l->name, kinds[l->kind], shape, ns[i] / 1e3,
               ns[i] > 0 ? flops / ns[i] / 1e3 : 0, kernels[i] ? kernels[i] : "");
        free(kernels[i]);
    }
    CHECK(wgc_profile_table(r, n, WGC_PROFILE_GROUP_BY_KERNEL, 25, NULL, 0, &len));
    char *text = malloc(len + 1);
    CHECK(wgc_profile_table(r, n, WGC_PROFILE_GROUP_BY_KERNEL, 25, text, len + 1, &len));
    printf("# by kernel:\n");
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) printf("#   %s\n", line);
    fflush(stdout);
    free(text), free(ns), free(kernels);
    CHECK(wgc_profile_records_free(r));
    CHECK(wgc_stream_profile_clear(g->stream));
}

/* One configuration; returns 0 when its check passed (or none was asked). */
static int run_config(const Options *o, const Net *net, WgcDevice *dev, WgcStream *stream, int64_t batch, int nhwc,
                      int first) {
    const char *dt = net->dtype == WGC_DTYPE_F16 ? "f16" : "f32", *layout = nhwc ? "nhwc" : "nchw";
    double gb = net_bytes(net, batch) / 1e9;
    if (gb > o->max_gb) {
        printf("{\"net\": \"%s\", \"batch\": %lld, \"dtype\": \"%s\", \"layout\": \"%s\", \"skipped\": "
               "\"activations %.1f GB > --max-gb\"}\n",
               o->net, (long long)batch, dt, layout, gb);
        return 0;
    }
    GpuNet g;
    WgcStatus s = gpu_net_create(&g, net, dev, stream, batch, nhwc, o->fuse);
    if (s != WGC_OK) {
        printf("{\"net\": \"%s\", \"batch\": %lld, \"dtype\": \"%s\", \"layout\": \"%s\", \"skipped\": \"%s: %s\"}\n",
               o->net, (long long)batch, dt, layout, wgc_status_string(s), wgc_last_error_message());
        gpu_net_free(&g);
        return 1;
    }
    ValueShape in = net->values[0];
    size_t n_in = (size_t)(batch * in.c * in.h * in.w);
    float *input = malloc(n_in * sizeof *input);
    uint64_t z = 12345;
    for (size_t i = 0; i < n_in; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        input[i] = net_round(net, (double)(z >> 40) / 8388608.0 - 1);
    }
    CHECK(gpu_net_upload_input(&g, input));
    CHECK(gpu_net_forward(&g));
    float *out = gpu_net_read_output(&g);
    int ok = 1;
    const char *check = "none";
    if (o->ref) {
        ok = check_ref(net, input, out, batch);
        check = ok ? "ok" : "WRONG";
    }
    if (o->check && first) {
        if (net_dump(net, o->net, o->check, input, batch, out) != 0) {
            fprintf(stderr, "cannot write %s\n", o->check);
            ok = 0;
        }
        if (!o->ref) check = "dumped";
    }
    double ms = -1;
    if (o->iters > 0 && ok) {
        double t0 = now_s();
        while (now_s() - t0 < 0.5) { /* warm up: clocks, caches, the pool */
            CHECK(gpu_net_forward(&g));
            CHECK(wgc_stream_synchronize(stream));
        }
        t0 = now_s();
        for (int i = 0; i < o->iters; i++) {
            CHECK(gpu_net_forward(&g));
            if (o->sync) CHECK(wgc_stream_synchronize(stream));
        }
        CHECK(wgc_stream_synchronize(stream));
        ms = (now_s() - t0) * 1e3 / o->iters;
    }
    double gflop = net_flops(net, batch) / 1e9;
    printf("{\"net\": \"%s\", \"batch\": %lld, \"size\": %lld, \"dtype\": \"%s\", \"layout\": \"%s\", \"ms\": %.4f, "
           "\"img_per_s\": %.1f, \"tflops\": %.2f, \"gflop\": %.3f, \"check\": \"%s\"}\n",
           o->net, (long long)batch, (long long)in.h, dt, layout, ms, ms > 0 ? batch * 1e3 / ms : 0,
           ms > 0 ? gflop / ms : 0, gflop, check);
    fflush(stdout);
    if (o->profile && ok) print_profile(&g);
    free(input), free(out);
    gpu_net_free(&g);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    Options o;
    parse(argc, argv, &o);
    WgcInstance *instance = NULL;
    WgcDevice *dev = NULL;
    WgcStream *stream = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &instance));
    WgcDeviceOptions opts = {0};
    opts.struct_size = sizeof opts;
    opts.adapter_index = -1;
    CHECK(wgc_device_create(instance, &opts, &dev));
    WgcAdapterInfo info = {0};
    info.struct_size = sizeof info;
    CHECK(wgc_device_info(dev, &info));
    fprintf(stderr, "adapter: %s; f16=%u timestamps=%u coop=%u\n", info.name, info.has_f16, info.has_timestamps,
            info.has_cooperative_matrix);
    CHECK(wgc_stream_create(dev, &stream));
    int failures = 0, first = 1;
    for (int d = 0; d < o.ndtype; d++) {
        Net net;
        net_init(&net, o.dtypes[d], 0x5eed);
        if (!strcmp(o.net, "resnet50")) build_resnet50(&net, o.size);
        else build_mobilenetv2(&net, o.size);
        for (int l = 0; l < o.nlayout; l++)
            for (int b = 0; b < o.nbatch; b++, first = 0)
                failures += run_config(&o, &net, dev, stream, o.batches[b], o.layouts[l], first);
        net_free(&net);
    }
    wgc_stream_release(stream);
    wgc_device_release(dev);
    wgc_instance_release(instance);
    if (failures) fprintf(stderr, "%d configuration(s) failed\n", failures);
    return failures ? 1 : 0;
}
