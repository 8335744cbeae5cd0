/* Reductions: over all elements, the first, middle and last axes, several
 * axes, argmax and variance, short and long rows, f32 and f16. */
#include <math.h>

#include "cases.h"

enum { K_SUM, K_MEAN, K_MAX, K_ARGMAX, K_VAR };

typedef struct {
    int kind;
    HT in, out;
    int32_t axes[4];
    uint32_t naxes;
} Red;

static WgcStatus run_red(void *p) {
    Red *r = p;
    static const uint32_t ops[] = {WGC_REDUCE_OP_SUM, WGC_REDUCE_OP_MEAN, WGC_REDUCE_OP_MAX, WGC_REDUCE_OP_ARGMAX};
    if (r->kind == K_VAR) return OP(wgc_op_var, g_stream, &r->in.t, r->axes, r->naxes, 0, 0, &r->out.t);
    return OP(wgc_op_reduce, g_stream, ops[r->kind], &r->in.t, r->naxes ? r->axes : NULL, r->naxes, 0, &r->out.t);
}

/* Every output of the reduction, in double: sum, mean, max, argmax (first
 * index along the single axis) or the population variance. */
static double *reference(const Red *r, uint32_t rank, const int64_t *shape, size_t nout) {
    unsigned mask = 0;
    for (uint32_t i = 0; i < r->naxes; i++) mask |= 1u << r->axes[i];
    if (!r->naxes) mask = (1u << rank) - 1;
    double *acc = calloc(nout, sizeof(double)), *best = malloc(nout * sizeof(double)), *mean = NULL;
    size_t *cnt = calloc(nout, sizeof(size_t));
    for (size_t o = 0; o < nout; o++) best[o] = -INFINITY;
    for (int pass = 0; pass < (r->kind == K_VAR ? 2 : 1); pass++) {
        int64_t coord[8] = {0};
        for (size_t i = 0; i < r->in.n; i++) {
            size_t o = 0, along = 0;
            for (uint32_t d = 0; d < rank; d++) {
                if (mask >> d & 1) along = along * (size_t)shape[d] + (size_t)coord[d];
                else o = o * (size_t)shape[d] + (size_t)coord[d];
            }
            double x = r->in.host[i];
            if (pass == 1) acc[o] += (x - mean[o]) * (x - mean[o]);
            else if (r->kind == K_MAX || r->kind == K_ARGMAX) {
                if (x > best[o]) { best[o] = x; acc[o] = r->kind == K_MAX ? x : (double)along; }
            } else {
                acc[o] += x;
                cnt[o]++;
            }
            for (int d = (int)rank - 1; d >= 0 && ++coord[d] == shape[d]; d--) coord[d] = 0;
        }
        if (r->kind == K_MEAN || r->kind == K_VAR)
            for (size_t o = 0; o < nout; o++) acc[o] /= (double)cnt[o];
        if (r->kind == K_VAR && pass == 0) {
            mean = acc;
            acc = calloc(nout, sizeof(double));
        }
    }
    free(mean);
    free(best);
    free(cnt);
    return acc;
}

static void reduce_case(const char *name, const char *cls, WgcDtype dt, int kind, uint32_t rank, const int64_t *shape,
                        const int32_t *axes, uint32_t naxes) {
    Case c = {name, cls, dtype_name(dt), "", "bytes", 0, 0};
    fmt_shape(c.size, sizeof c.size, rank, shape);
    for (uint32_t i = 0; i < naxes; i++) {
        size_t len = strlen(c.size);
        snprintf(c.size + len, sizeof c.size - len, i ? ",%d" : " axes %d", (int)axes[i]);
    }
    size_t n = 1, nout = 1;
    int64_t oshape[8];
    uint32_t orank = 0;
    for (uint32_t d = 0; d < rank; d++) {
        int reduced = !naxes;
        for (uint32_t i = 0; i < naxes; i++) reduced |= axes[i] == (int32_t)d;
        n *= (size_t)shape[d];
        if (!reduced) { oshape[orank++] = shape[d]; nout *= (size_t)shape[d]; }
    }
    WgcDtype odt = kind == K_ARGMAX ? WGC_DTYPE_I32 : dt;
    c.in_bytes = (double)n * dtype_size(dt);
    c.amount = c.in_bytes + (double)nout * dtype_size(odt);
    if (!case_begin(&c)) return;
    Red r = {kind, ht_random(dt, rank, shape), ht_empty(odt, orank, oshape), {0}, naxes};
    memcpy(r.axes, axes, naxes * sizeof(int32_t));
    if (!case_first_run(&c, run_red, &r)) goto done;
    float *got = ht_read(&r.out);
    double *ref = reference(&r, rank, shape, nout);
    double reduced_n = (double)n / (double)nout;
    int bad = 0;
    for (size_t o = 0; o < nout; o++) {
        double tol = kind == K_ARGMAX || kind == K_MAX ? 0
                     : kind == K_VAR                   ? 1e-5 * fabs(ref[o]) + 1e-7
                                                       : 2e-6 * reduced_n / (kind == K_MEAN ? reduced_n : 1);
        tol += f16_slack(dt) * fabs(ref[o]);
        bad += !(fabs(got[o] - ref[o]) <= tol);
    }
    if (bad) fprintf(stderr, "%s: %d of %zu outputs wrong\n", name, bad, nout);
    free(got);
    free(ref);
    case_time(&c, run_red, &r, !bad, 10);
done:
    ht_free(&r.in);
    ht_free(&r.out);
}

void cases_reduce(void) {
    {
        int64_t s[1] = {SZ(1 << 28, 100003)};
        reduce_case("sum_f32", "reduce/all", WGC_DTYPE_F32, K_SUM, 1, s, NULL, 0);
    }
    {
        int64_t s[2] = {SZ(8192, 67), SZ(8192, 129)};
        int32_t ax[1] = {0};
        reduce_case("sum_axis0_f32", "reduce/column", WGC_DTYPE_F32, K_SUM, 2, s, ax, 1);
    }
    {
        int64_t s[2] = {SZ(10007, 301), SZ(3001, 37)};
        int32_t ax[1] = {0};
        reduce_case("sum_axis0_odd_f32", "reduce/column", WGC_DTYPE_F32, K_SUM, 2, s, ax, 1);
    }
    {
        int64_t s[2] = {SZ(4096, 33), SZ(4096, 257)};
        int32_t ax[1] = {0};
        reduce_case("sum_axis0_f16", "reduce/column", WGC_DTYPE_F16, K_SUM, 2, s, ax, 1);
    }
    {
        /* 17 f32 slabs of a 512 x 512 output summed (what a product split into 17 runs of K adds). */
        int64_t s[2] = {SZ(17, 3), SZ(512 * 512, 4099)};
        int32_t ax[1] = {0};
        reduce_case("sum_axis0_slabs_f32", "reduce/column", WGC_DTYPE_F32, K_SUM, 2, s, ax, 1);
    }
    {
        int64_t s[3] = {SZ(32, 3), SZ(4096, 70), SZ(512, 33)};
        int32_t ax[1] = {1};
        reduce_case("sum_axis1_f32", "reduce/middle", WGC_DTYPE_F32, K_SUM, 3, s, ax, 1);
    }
    {
        int64_t s[3] = {SZ(256, 5), SZ(1024, 31), SZ(256, 19)};
        int32_t ax[2] = {0, 2};
        reduce_case("mean_axes02_f32", "reduce/several-axes", WGC_DTYPE_F32, K_MEAN, 3, s, ax, 2);
    }
    {
        int64_t s[4] = {SZ(64, 3), SZ(256, 7), SZ(56, 9), SZ(56, 11)};
        int32_t ax[3] = {0, 2, 3};
        reduce_case("var_axes023_f32", "reduce/several-axes", WGC_DTYPE_F32, K_VAR, 4, s, ax, 3);
    }
    {
        int64_t s[2] = {SZ(4096, 37), SZ(1000, 1000)};
        int32_t ax[1] = {1};
        reduce_case("argmax_rows1000_f32", "reduce/argmax-short", WGC_DTYPE_F32, K_ARGMAX, 2, s, ax, 1);
    }
    {
        int64_t s[2] = {SZ(32, 3), SZ(128256, 70001)};
        int32_t ax[1] = {1};
        reduce_case("argmax_vocab_f32", "reduce/argmax-long", WGC_DTYPE_F32, K_ARGMAX, 2, s, ax, 1);
    }
    {
        int64_t s[2] = {SZ(16384, 19), SZ(4096, 4096)};
        int32_t ax[1] = {1};
        reduce_case("var_rows4096_f32", "reduce/var-row", WGC_DTYPE_F32, K_VAR, 2, s, ax, 1);
    }
    {
        int64_t s[2] = {SZ(16384, 19), SZ(4096, 4096)};
        int32_t ax[1] = {1};
        reduce_case("sum_rows4096_f16", "reduce/row", WGC_DTYPE_F16, K_SUM, 2, s, ax, 1);
        reduce_case("sum_rows4096_bf16", "reduce/row", WGC_DTYPE_BF16, K_SUM, 2, s, ax, 1);
    }
    {
        int64_t s[2] = {SZ(30000, 41), SZ(1001, 1001)};
        int32_t ax[1] = {1};
        reduce_case("max_rows1001_f32", "reduce/row", WGC_DTYPE_F32, K_MAX, 2, s, ax, 1);
    }
    {
        int64_t s[2] = {SZ(1 << 21, 1001), 32};
        int32_t ax[1] = {1};
        reduce_case("mean_rows32_f32", "reduce/short-rows", WGC_DTYPE_F32, K_MEAN, 2, s, ax, 1);
    }
}
