/* wgc_op_random_uniform and wgc_op_random_normal against a C Philox4x32-10:
 * the integer stream is bit-exact by contract, the floats within the
 * header's bounds, element i being the i-th in row-major logical order of
 * any output view. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diff_ops.h"
#include "diff_tolerance.h"

#define PI 3.14159265358979323846

static void philox(uint64_t seed, uint64_t counter, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

static uint64_t draw_counter(Case *c) {
    static const uint64_t edges[] = {0, 0xFFFFFFFEull, 0xFFFFFFFFFFFFFFF0ull};
    return rng_chance(&c->rng, 0.5) ? edges[rng_int(&c->rng, 0, 2)] : rng_u64(&c->rng) >> rng_int(&c->rng, 0, 63);
}

static void run_random(Case *c, int normal) {
    WgcDtype d = draw_dtype(c, DTYPES_FLOAT, 2);
    int64_t s[WGC_MAX_RANK];
    int r = draw_shape(&c->rng, 0, 8, rng_chance(&c->rng, 0.1) ? 70000 : 3000, 0.05, s);
    uint64_t seed = rng_u64(&c->rng), offset = draw_counter(c);
    double a = rng_range(&c->rng, -100, 100), b;
    if (normal) b = rng_chance(&c->rng, 0.1) ? 0 : pow(10, rng_range(&c->rng, -3, 2)); /* std */
    else b = rng_chance(&c->rng, 0.1) ? a : a + pow(10, rng_range(&c->rng, -3, 3)); /* hi */
    int bad_param = rng_chance(&c->rng, 0.05);
    if (bad_param) b = normal && rng_chance(&c->rng, 0.5) ? -1 : INFINITY;
    DTensor *o = case_tensor(c, "out", d, r, s, VIEW_ANY, NULL, NULL);
    case_param(c, "dtype=%s seed=%llu offset=%llu %s=%.17g %s=%.17g", dtype_name(d), (unsigned long long)seed,
               (unsigned long long)offset, normal ? "mean" : "lo", a, normal ? "std" : "hi", b);
    case_upload(c);
    WgcStatus st = normal ? wgc_op_random_normal(c->stream, &o->t, seed, offset, a, b)
                          : wgc_op_random_uniform(c->stream, &o->t, seed, offset, a, b);
    const char *call = normal ? "wgc_op_random_normal" : "wgc_op_random_uniform";
    if (bad_param) { /* non-finite parameters, negative std: documented invalid */
        case_expect_status(c, st, WGC_ERROR_INVALID_ARGUMENT, call);
        return;
    }
    if (!case_expect_ok(c, st, call)) return;
    case_download(c);
    Expect *e = expect_alloc(o->n);
    for (size_t i = 0; i < o->n; i++) {
        uint32_t w[4];
        philox(seed, offset + i / 4, w);
        if (normal) {
            size_t pair = (i % 4) / 2 * 2;
            double u1 = ((w[pair] >> 8) + 1) / 16777216.0, u2 = (w[pair + 1] >> 8) / 16777216.0;
            double rad = sqrt(-2 * log(u1)), th = 2 * PI * u2;
            e[i].ref = a + b * rad * (i % 2 == 0 ? cos(th) : sin(th));
            /* log, sin, cos "about 1e-6 relative", then f32 roundings */
            e[i].tol = TOL_F32_UNARY * b * (rad + 1) + TOL_F32_ROUNDED * (fabs(a) + fabs(e[i].ref));
        } else {
            double u = (w[i % 4] >> 8) / 16777216.0;
            e[i].ref = a + (b - a) * u; /* lo, hi - lo, the product and the sum each rounded to f32 */
            e[i].tol = TOL_F32_ROUNDED * (fabs(a) + fabs(b - a) + fabs(e[i].ref));
        }
        e[i].tol += tol_ftz(d) + (d == WGC_DTYPE_F16 ? TOL_F16_RESULT * fabs(e[i].ref) : 0);
    }
    case_check(c, o, e, NULL);
    free(e);
    case_check_untouched(c);
}

void run_random_uniform(Case *c) { run_random(c, 0); }
void run_random_normal(Case *c) { run_random(c, 1); }
