/* The f16 rounding of generated expression kernels (rf16 in
 * shaders/expr_f16.wgsl): f32 values cast to f16 and back to f32 inside one
 * expression, so the f32 output is the rounding itself, bit for bit
 * against a round-to-nearest-even reference: ties to even, the smallest
 * normal and the subnormals (and their ties), 65504, 65519.99 and 65520
 * (infinity), infinities, -0 and NaN (NaN-ness: the payload is not part of
 * the contract); the same values stored as f16 outputs; and f16 products
 * (exact in f32) that land on subnormals, ties and overflow. Each through
 * 4-element units (a dense view) and one element at a time (offset). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Values every rounding must get right, as f32 bits. */
static const uint32_t EDGES[] = {
    0x00000000u, 0x80000000u, /* +-0 */
    0x3f800000u, 0xbf800000u, /* +-1 */
    0x3f801000u, 0x3f803000u, /* 1 + 2^-11 (tie, to 1), 1 + 3*2^-11 (tie, up to even) */
    0x3f801001u, 0x3f802fffu, /* just past and just before a tie */
    0xbf801000u, 0xbf803000u, /* the same ties, negative */
    0x477fe000u, 0xc77fe000u, /* +-65504 */
    0x477fefffu, 0xc77fefffu, /* +-65519.996: to 65504 */
    0x477ff000u, 0xc77ff000u, /* +-65520: to infinity */
    0x477ff001u, 0x47800000u, /* past 65520, 65536 */
    0x49742400u, 0x7f7fffffu, /* 1e6, the largest f32 */
    0x7f800000u, 0xff800000u, /* +-infinity */
    0x38800000u, 0xb8800000u, /* +-2^-14, the smallest normal f16 */
    0x387fffffu, 0x387fe000u, /* just below it (to it); the largest subnormal */
    0x387ff000u, 0x387fd000u, /* ties between subnormals: to 2^-14, to the even below */
    0x33800000u, 0xb3800000u, /* +-2^-24, the smallest subnormal */
    0x33000000u, 0xb3000000u, /* +-2^-25: a tie, to +-0 */
    0x33000001u, 0x33400000u, /* just past it (to 2^-24); 3*2^-25 (a tie, to 2^-23) */
    0x33a00000u, 0x33e00000u, /* 1.25 and 1.75 * 2^-24 */
    0x32800000u, 0x00000001u, /* 2^-26 and the smallest f32 subnormal: to 0 */
    0x80000001u, 0x35000000u, /* -2^-149: to -0; 2^-21 */
    0x7fc00000u, 0xffc00000u, /* NaN */
    0x7f800001u, 0x7fbfffffu, /* NaN with other payloads */
};
#define N_EDGES (sizeof EDGES / sizeof EDGES[0])

/* x rounded to f16 and widened back (round to nearest even). */
static float round_ref(float x) { return f16_to_f32(f32_to_f16(x)); }

/* got against want, bit for bit (NaN: NaN-ness only); returns 1 if equal. */
static int same(uint32_t got, uint32_t want) {
    if (isnan(from_bits(want))) return isnan(from_bits(got));
    return got == want;
}
static int same16(uint16_t got, uint16_t want) {
    if ((want & 0x7fffu) > 0x7c00u) return (got & 0x7fffu) > 0x7c00u;
    return got == want;
}

/* n test values: the edges, then f32 values of random bits spread over
 * f16's range (exponents 2^-28 .. 2^17), then random f16 ties. */
static float *values(size_t n) {
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        if (i < N_EDGES) {
            x[i] = from_bits(EDGES[i]);
            continue;
        }
        uint32_t r = (uint32_t)(rng_next() >> 32);
        uint32_t exp = 99u + (r >> 8) % 46u; /* 2^-28 .. 2^17 */
        uint32_t bits = (r & 0x80000000u) | (exp << 23) | (uint32_t)(rng_next() >> 41);
        if (i % 5 == 0) bits = (bits & 0xffffe000u) | 0x1000u; /* a normal-range tie */
        x[i] = from_bits(bits);
    }
    return x;
}

static uint32_t id_;
static uint32_t node(WgcStatus s) {
    if (s != WGC_OK) {
        fprintf(stderr, "building failed: %s: %s\n", wgc_status_string(s), wgc_last_error_message());
        exit(1);
    }
    return id_;
}

static WgcTensor view(WgcBuffer *b, WgcDtype d, int64_t n, int64_t offset) {
    WgcTensor t = tensor_of(b, d, 1, &n);
    t.offset = offset;
    return t;
}

/* y32 = f32(f16(x)) and y16 = f16(x) from f32 x, over n elements at
 * `offset` (4 and 0: 4-element units; 1: one element at a time). */
static void test_casts(TestEnv *env, const char *mode, size_t n, int64_t offset) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t x = node(wgc_expr_input(e, WGC_DTYPE_F32, &id_));
    uint32_t h = node(wgc_expr_cast(e, x, WGC_DTYPE_F16, &id_));
    uint32_t y = node(wgc_expr_cast(e, h, WGC_DTYPE_F32, &id_));
    CHECK(wgc_expr_output(e, y));
    CHECK(wgc_expr_output(e, h));
    float *xv = values(n);
    size_t pad = (size_t)offset;
    float *host = calloc(n + pad, sizeof(float));
    memcpy(host + pad, xv, n * sizeof(float));
    WgcBuffer *bx = upload(env->device, host, (n + pad) * 4);
    WgcBuffer *by = NULL, *bh = NULL;
    CHECK(wgc_buffer_create(env->device, (n + pad) * 4, WGC_BUFFER_USAGE_STORAGE, &by));
    CHECK(wgc_buffer_create(env->device, ((n + pad) * 2 + 3) & ~(size_t)3, WGC_BUFFER_USAGE_STORAGE, &bh));
    WgcTensor ins[1] = {view(bx, WGC_DTYPE_F32, (int64_t)n, offset)};
    WgcTensor outs[2] = {view(by, WGC_DTYPE_F32, (int64_t)n, offset), view(bh, WGC_DTYPE_F16, (int64_t)n, offset)};
    CHECK(wgc_op_expr(env->stream, e, ins, 1, outs, 2, NULL, 0));
    uint32_t *y32 = malloc((n + pad) * 4);
    uint16_t *y16 = malloc((n + pad) * 2 + 4);
    CHECK(wgc_buffer_read(by, 0, y32, (n + pad) * 4));
    CHECK(wgc_buffer_read(bh, 0, y16, ((n + pad) * 2 + 3) & ~(size_t)3));
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t want = to_bits(round_ref(xv[i]));
        uint16_t want16 = f32_to_f16(xv[i]);
        int ok = same(y32[pad + i], want) && same16(y16[pad + i], want16);
        if (!ok && bad++ < 8)
            fprintf(stderr, "%s, offset %lld: f32 0x%08x (%g): f32(f16(x)) 0x%08x, f16(x) 0x%04x; want 0x%08x, 0x%04x\n",
                    mode, (long long)offset, to_bits(xv[i]), xv[i], y32[pad + i], y16[pad + i], want, want16);
    }
    if (bad) {
        fprintf(stderr, "%s, offset %lld: %d of %zu values rounded wrong\n", mode, (long long)offset, bad, n);
        g_failures++;
    }
    free(xv), free(host), free(y32), free(y16);
    wgc_buffer_release(bx), wgc_buffer_release(by), wgc_buffer_release(bh);
    wgc_expr_release(e);
}

/* f32(a * b) for f16 a and b: the f16 product, exact in f32 before its
 * rounding, over pairs whose products fall on subnormals, ties and
 * overflow. */
static void test_products(TestEnv *env, const char *mode, size_t n, int64_t offset) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t a = node(wgc_expr_input(e, WGC_DTYPE_F16, &id_));
    uint32_t b = node(wgc_expr_input(e, WGC_DTYPE_F16, &id_));
    uint32_t p = node(wgc_expr_binary(e, WGC_BINARY_OP_MUL, a, b, &id_));
    uint32_t y = node(wgc_expr_cast(e, p, WGC_DTYPE_F32, &id_));
    CHECK(wgc_expr_output(e, y));
    size_t pad = (size_t)offset, words = ((n + pad) * 2 + 3) & ~(size_t)3;
    uint16_t *ha = calloc(words / 2, 2), *hb = calloc(words / 2, 2);
    for (size_t i = 0; i < n; i++) {
        /* a in (-2, -1] or [1, 2) (every third with one fraction bit:
         * ties); b a normal f16 of exponent -14 .. 15 or (every seventh) a
         * subnormal: products from 2^-24 to past 65520. */
        uint16_t ma = (uint16_t)(rng_next() >> 54), mb = (uint16_t)(rng_next() >> 54);
        int e2 = (int)(rng_next() >> 59) % 30 - 14; /* b's exponent, -14 .. 15 */
        ha[pad + i] = (uint16_t)(0x3c00u | ma);
        hb[pad + i] = (uint16_t)(((uint32_t)(e2 + 15) << 10) | mb);
        if (i % 3 == 0) ha[pad + i] = (uint16_t)(ha[pad + i] & 0x3c00u) | (uint16_t)(1u << (rng_next() >> 61));
        if (i % 7 == 0) hb[pad + i] = (uint16_t)(rng_next() >> 54); /* a subnormal b */
        if (i % 2 == 1) ha[pad + i] |= 0x8000u;
    }
    WgcBuffer *ba = upload(env->device, ha, words), *bb = upload(env->device, hb, words), *by = NULL;
    CHECK(wgc_buffer_create(env->device, (n + pad) * 4, WGC_BUFFER_USAGE_STORAGE, &by));
    WgcTensor ins[2] = {view(ba, WGC_DTYPE_F16, (int64_t)n, offset), view(bb, WGC_DTYPE_F16, (int64_t)n, offset)};
    WgcTensor out = view(by, WGC_DTYPE_F32, (int64_t)n, offset);
    CHECK(wgc_op_expr(env->stream, e, ins, 2, &out, 1, NULL, 0));
    uint32_t *got = malloc((n + pad) * 4);
    CHECK(wgc_buffer_read(by, 0, got, (n + pad) * 4));
    int bad = 0, subnormal = 0, inf = 0;
    for (size_t i = 0; i < n; i++) {
        float prod = f16_to_f32(ha[pad + i]) * f16_to_f32(hb[pad + i]); /* exact: 22 bits */
        float want = round_ref(prod);
        if (want != 0 && fabsf(want) < 6.103515625e-05f) subnormal++;
        if (isinf(want)) inf++;
        if (!same(got[pad + i], to_bits(want)) && bad++ < 8)
            fprintf(stderr, "%s, offset %lld: f16 0x%04x * 0x%04x = %g: got 0x%08x, want 0x%08x\n", mode,
                    (long long)offset, ha[pad + i], hb[pad + i], prod, got[pad + i], to_bits(want));
    }
    if (bad) {
        fprintf(stderr, "%s, offset %lld: %d of %zu products rounded wrong\n", mode, (long long)offset, bad, n);
        g_failures++;
    }
    if (subnormal == 0 || inf == 0) {
        fprintf(stderr, "products: %d subnormal and %d infinite results; the values miss a case\n", subnormal, inf);
        g_failures++;
    }
    free(ha), free(hb), free(got);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(by);
    wgc_expr_release(e);
}

int main(void) {
    TestEnv env = test_env();
    if (env.info.has_f16) {
        size_t n = 4096;
        test_casts(&env, "casts", n, 0);
        test_casts(&env, "casts", n - 1, 1);
        test_products(&env, "products", n, 4);
        test_products(&env, "products", n - 3, 1);
    } else {
        fprintf(stderr, "the adapter has no shader f16: nothing to round\n");
    }
    test_env_release(&env);
    return test_finish("test_expr_f16_round");
}
