/* The check file bench/torch_nets.py reads: a text line per tensor
 * ("name dims..."), then its float32 values (little-endian); first the
 * architecture line, then every layer's weights in order, the input and
 * the library's output. */
#include <stdio.h>

#include "net.h"

static void put(FILE *f, const char *name, const float *v, int rank, const int64_t *shape) {
    size_t n = 1;
    fprintf(f, "%s", name);
    for (int i = 0; i < rank; i++) fprintf(f, " %lld", (long long)shape[i]), n *= (size_t)shape[i];
    fprintf(f, "\n");
    fwrite(v, sizeof *v, n, f);
}

int net_dump(const Net *net, const char *arch, const char *path, const float *input, int64_t batch,
             const float *output) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    ValueShape in = net->values[0];
    fprintf(f, "wgc_nets %s %s %lld %lld %lld %lld\n", arch, net->dtype == WGC_DTYPE_F16 ? "f16" : "f32",
            (long long)batch, (long long)in.c, (long long)in.h, (long long)in.w);
    char name[64];
    for (int i = 0; i < net->count; i++) {
        const Layer *l = &net->layers[i];
        int64_t ch[1] = {l->cout};
        if (l->kind == LAYER_CONV) {
            int64_t ws[4] = {l->cout, l->cin / l->groups, l->k, l->k};
            const char *part[4] = {"running_mean", "running_var", "bn_weight", "bn_bias"};
            const float *vec[4] = {l->mean, l->var, l->gamma, l->beta};
            snprintf(name, sizeof name, "%s.weight", l->name);
            put(f, name, l->w, 4, ws);
            for (int j = 0; j < 4; j++) {
                snprintf(name, sizeof name, "%s.%s", l->name, part[j]);
                put(f, name, vec[j], 1, ch);
            }
        } else if (l->kind == LAYER_LINEAR) {
            int64_t ws[2] = {l->cout, l->cin};
            snprintf(name, sizeof name, "%s.weight", l->name);
            put(f, name, l->w, 2, ws);
            snprintf(name, sizeof name, "%s.bias", l->name);
            put(f, name, l->beta, 1, ch);
        }
    }
    int64_t is[4] = {batch, in.c, in.h, in.w}, os[2] = {batch, net->values[net->nvalues - 1].c};
    put(f, "input", input, 4, is);
    put(f, "output", output, 2, os);
    return fclose(f);
}
