/* Batch norm (inference) on its fast routes (src/ops/norm/batch_fast.rs)
 * against a double-precision reference computed as PyTorch does,
 * (x - mean) / sqrt(var + eps) * w + b: dense NCHW of any plane size (1, 3,
 * 4, 9, 7x7, 63x63), element counts that are not whole 16-byte units,
 * channels-last rows of many units (past 256), odd channel counts (3, 5,
 * 67), offsets that are or are not whole units, launches large enough for
 * several units per invocation, and non-finite values: NaN/Inf in x, a NaN and
 * an infinite mean, an infinite variance, var + eps < 0 (NaN) and = 0 (Inf),
 * a zero weight against an infinite x (also through the general kernel,
 * input and output in different layouts). f32 and f16.
 *
 * Tolerances (those of test_norm.c and test_batch_norm_layouts.c): for f32,
 * atol 2e-5 and rel 1e-5; for f16 (inputs and outputs rounded to f16) atol
 * 1e-2, rel 2e-3. NaN must be NaN, +-Inf the same infinity. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

static TestEnv env;

enum { PLAIN = 0, SPECIAL_STATS = 1, ZERO_VAR = 2 };

typedef struct {
    int64_t n, c, h, w;
    int nhwc;  /* the input's layout; the output's too unless `mixed` */
    int mixed; /* the output in the other layout: the general kernel */
    size_t in_off, out_off; /* elements */
    int has_w, has_b;
    int stats; /* PLAIN, SPECIAL_STATS or ZERO_VAR (eps 0 and a zero variance) */
} Case;

static size_t esize(WgcDtype dt) { return dt == WGC_DTYPE_F16 ? 2 : 4; }

static double rounded(WgcDtype dt, double r) {
    return dt == WGC_DTYPE_F16 ? f16_to_f32(f32_to_f16((float)r)) : (float)r;
}

static WgcBuffer *upload_vals(WgcDtype dt, const double *v, size_t n) {
    void *host = calloc(n + 8, 4);
    for (size_t i = 0; i < n; i++) {
        if (dt == WGC_DTYPE_F16) ((uint16_t *)host)[i] = f32_to_f16((float)v[i]);
        else ((float *)host)[i] = (float)v[i];
    }
    WgcBuffer *b = upload(env.device, host, (n ? n : 1) * esize(dt));
    free(host);
    return b;
}

static double *read_vals(WgcBuffer *b, WgcDtype dt, size_t n) {
    void *host = calloc(n + 8, 4);
    double *v = calloc(n + 1, sizeof(double));
    CHECK(wgc_buffer_read(b, 0, host, n * esize(dt)));
    for (size_t i = 0; i < n; i++)
        v[i] = dt == WGC_DTYPE_F16 ? f16_to_f32(((uint16_t *)host)[i]) : ((float *)host)[i];
    free(host);
    return v;
}

static void check(WgcDtype dt, Case k) {
    int64_t shape[4] = {k.n, k.c, k.h, k.w}, st[4], ost[4];
    for (int side = 0; side < 2; side++) {
        int64_t *s = side ? ost : st;
        if (k.nhwc != (side && k.mixed)) s[0] = k.h * k.w * k.c, s[1] = 1, s[2] = k.w * k.c, s[3] = k.c;
        else s[0] = k.c * k.h * k.w, s[1] = k.h * k.w, s[2] = k.w, s[3] = 1;
    }
    size_t n = (size_t)(k.n * k.c * k.h * k.w);
    float eps = k.stats == ZERO_VAR ? 0.0f : 1e-5f;
    /* x in storage order (the view's strides are dense in that order) */
    double *x = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) x[i] = rounded(dt, rng_uniform(-2, 2));
    if (n > 3) x[1] = NAN, x[n / 2] = INFINITY, x[n - 2] = -INFINITY, x[n - 1] = INFINITY;
    double *mean = malloc((size_t)k.c * sizeof(double)), *var = malloc((size_t)k.c * sizeof(double));
    double *w = malloc((size_t)k.c * sizeof(double)), *b = malloc((size_t)k.c * sizeof(double));
    for (int64_t c = 0; c < k.c; c++) {
        mean[c] = rounded(dt, rng_uniform(-1, 1)), var[c] = rounded(dt, rng_uniform(0.1, 2));
        w[c] = rounded(dt, rng_uniform(0.5, 1.5)), b[c] = rounded(dt, rng_uniform(-1, 1));
    }
    if (k.stats == SPECIAL_STATS && k.c >= 5) {
        mean[0] = NAN, var[1] = -1, mean[2] = INFINITY, var[3] = INFINITY, w[4] = 0;
    }
    if (k.stats == ZERO_VAR) var[0] = 0;
    double *phys = calloc(n + k.in_off + 1, sizeof(double));
    memcpy(phys + k.in_off, x, n * sizeof(double));
    WgcBuffer *bx = upload_vals(dt, phys, n + k.in_off), *by = NULL;
    CHECK(wgc_buffer_create(env.device, (n + k.out_off + 8) * esize(dt), WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor tx = tensor_of(bx, dt, 4, shape), ty = tensor_of(by, dt, 4, shape), tm, tv, tw, tb;
    tx.offset = k.in_off, ty.offset = k.out_off;
    for (int d = 0; d < 4; d++) tx.strides[d] = st[d], ty.strides[d] = ost[d];
    int64_t cs[1] = {k.c};
    WgcBuffer *bm = upload_vals(dt, mean, (size_t)k.c), *bv = upload_vals(dt, var, (size_t)k.c);
    WgcBuffer *bw = upload_vals(dt, w, (size_t)k.c), *bb = upload_vals(dt, b, (size_t)k.c);
    tm = tensor_of(bm, dt, 1, cs), tv = tensor_of(bv, dt, 1, cs), tw = tensor_of(bw, dt, 1, cs);
    tb = tensor_of(bb, dt, 1, cs);
    CHECK(wgc_op_batch_norm(env.stream, &tx, &tm, &tv, k.has_w ? &tw : NULL, k.has_b ? &tb : NULL, eps, &ty));
    double *all = read_vals(by, dt, n + k.out_off);
    /* ref and got in the output's storage order */
    double *ref = malloc(n * sizeof(double));
    for (int64_t a = 0; a < k.n; a++)
        for (int64_t c = 0; c < k.c; c++)
            for (int64_t y = 0; y < k.h; y++)
                for (int64_t z = 0; z < k.w; z++) {
                    size_t i = (size_t)(a * st[0] + c * st[1] + y * st[2] + z * st[3]);
                    size_t o = (size_t)(a * ost[0] + c * ost[1] + y * ost[2] + z * ost[3]);
                    double v = (x[i] - mean[c]) / sqrt(var[c] + (double)eps);
                    if (k.has_w) v *= w[c];
                    if (k.has_b) v += b[c];
                    ref[o] = v;
                }
    char what[160];
    snprintf(what, sizeof what, "batch_norm %s (%lld,%lld,%lld,%lld)%s offsets %zu->%zu w%d b%d stats %d",
             dt == WGC_DTYPE_F16 ? "f16" : "f32", (long long)k.n, (long long)k.c, (long long)k.h, (long long)k.w,
             k.nhwc ? (k.mixed ? " nhwc->nchw" : " nhwc") : (k.mixed ? " nchw->nhwc" : ""), k.in_off, k.out_off, k.has_w, k.has_b, k.stats);
    int f16 = dt == WGC_DTYPE_F16;
    compare_f64(what, all + k.out_off, ref, n, f16 ? 1e-2 : 2e-5, f16 ? 2e-3 : 1e-5);
    /* nothing written before the view */
    for (size_t i = 0; i < k.out_off; i++)
        if (all[i] != 0) {
            fprintf(stderr, "%s: element %zu before the output written\n", what, i);
            g_failures++;
            break;
        }
    free(x), free(mean), free(var), free(w), free(b), free(phys), free(all), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(by), wgc_buffer_release(bm), wgc_buffer_release(bv);
    wgc_buffer_release(bw), wgc_buffer_release(bb);
}

int main(void) {
    env = test_env();
    const Case cases[] = {
        /* NCHW, dense: planes of 7x7 (units straddle planes; 294 elements:
         * a partial last unit in f32 and f16), odd channel counts */
        {2, 3, 7, 7, 0, 0, 0, 0, 1, 1, PLAIN},
        {2, 5, 7, 7, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {3, 67, 7, 7, 0, 0, 0, 0, 1, 0, SPECIAL_STATS},
        /* planes shorter than a unit (3 elements: element by element), and
         * as long as one in f32 (4: flat), with crossings in f16 */
        {2, 5, 3, 1, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {3, 5, 4, 1, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {3, 5, 9, 1, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        /* planes of 1 (also the rows layout): whole units, and C 5 */
        {4, 8, 1, 1, 0, 0, 0, 0, 1, 1, PLAIN},
        {3, 5, 1, 1, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        /* several workgroups, whole and partial */
        {2, 16, 36, 36, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {2, 16, 36, 36, 0, 0, 0, 0, 0, 0, PLAIN},
        /* eps 0 with a zero variance: +-Inf */
        {2, 6, 5, 5, 0, 0, 0, 0, 1, 1, ZERO_VAR},
        /* offsets: whole units (8 and 16 elements), whole vec4s only (4),
         * neither (2, 6) */
        {2, 8, 8, 8, 0, 0, 8, 16, 1, 1, PLAIN},
        {2, 8, 8, 8, 0, 0, 4, 4, 1, 1, SPECIAL_STATS},
        {2, 8, 8, 8, 0, 0, 8, 4, 1, 1, PLAIN},
        {2, 8, 8, 8, 0, 0, 2, 6, 1, 1, PLAIN},
        /* NHWC rows of whole units (C 8, 24, 64; 1032: more than 256 units a
         * row in f32), odd C (3, 5, 67) and C 12 (whole in f32, not f16), and
         * offsets of whole units (8, 16) or not (4 in f16) */
        {2, 8, 3, 5, 1, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {2, 24, 5, 5, 1, 0, 0, 0, 1, 0, SPECIAL_STATS},
        {3, 64, 9, 9, 1, 0, 0, 0, 0, 1, SPECIAL_STATS},
        {2, 1032, 3, 3, 1, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {2, 12, 3, 3, 1, 0, 0, 0, 1, 1, PLAIN},
        {2, 3, 7, 7, 1, 0, 0, 0, 1, 1, PLAIN},
        {2, 5, 7, 7, 1, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {2, 67, 7, 7, 1, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {2, 16, 3, 3, 1, 0, 8, 16, 1, 1, PLAIN},
        {2, 16, 3, 3, 1, 0, 4, 8, 1, 1, PLAIN},
        {2, 6, 3, 3, 1, 0, 0, 0, 1, 1, ZERO_VAR},
        /* large enough for 2 or 4 units per invocation (f32 NCHW), 8 rows
         * per invocation (f32 NHWC, 1024 channels) */
        {8, 67, 63, 63, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        /* and planes of 7x7: an invocation's units a workgroup apart lie
         * planes apart (f32 4 units, f16 2) */
        {640, 67, 7, 7, 0, 0, 0, 0, 1, 1, SPECIAL_STATS},
        {4, 1024, 32, 32, 1, 0, 0, 0, 1, 1, SPECIAL_STATS},
        /* NHWC, C 67 (not whole units): several units per invocation */
        {8, 67, 63, 63, 1, 0, 0, 0, 1, 1, SPECIAL_STATS},
        /* the general kernel (layouts differ) with the same non-finite values */
        {2, 5, 3, 3, 0, 1, 0, 0, 1, 1, SPECIAL_STATS},
        {2, 6, 3, 3, 1, 1, 0, 0, 1, 0, ZERO_VAR},
    };
    for (int dti = 0; dti < 2; dti++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(dti ? WGC_DTYPE_F16 : WGC_DTYPE_F32, cases[i]);
    return test_finish("test_batch_norm_units");
}
