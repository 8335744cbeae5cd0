/* bf16 tensors: conversions checked bit for bit (NaN, +-inf, the largest
 * finite value, rounding ties, subnormals, -0, integers past 2^24), the
 * elementwise operators with broadcasting, strided views and odd offsets
 * (so that neighbouring elements share a 32-bit word), in place, the
 * reductions and GEMM against double-precision references on odd shapes,
 * and WGC_ERROR_UNSUPPORTED from the operators that take no bf16.
 *
 * References round once from the double: for +, -, *, / of bf16 values the
 * f32 result rounded to bf16 is that same value (f32 carries more than
 * twice bf16's precision), so those are compared bit for bit. */
#include "test_util.h"

#define SENTINEL 0xBEEFu

static uint16_t bf16_of_double(double v) {
    if (isnan(v)) return 0x7fc0;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (a >= (2.0 - ldexp(1.0, -8)) * ldexp(1.0, 127)) return sign | 0x7f80;
    int e = -126;
    if (a != 0) {
        frexp(a, &e);
        e = e - 1 < -126 ? -126 : e - 1;
    }
    double m = nearbyint(a / ldexp(1.0, e - 7)); /* ties to even */
    if (m >= 256) {
        m = 128;
        e++;
    }
    uint16_t bits = m < 128 ? (uint16_t)m : (uint16_t)(((e + 127) << 7) | ((int)m - 128));
    return sign | bits;
}

static double bf16_value(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float f32_of_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int is_nan_bf16(uint16_t b) {
    return (b & 0x7fff) > 0x7f80;
}

/* A buffer of n bf16 elements, all SENTINEL. */
static WgcBuffer *sentinel_buffer(WgcDevice *dev, size_t n) {
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) h[i] = SENTINEL;
    WgcBuffer *b = upload(dev, h, n * 2);
    free(h);
    return b;
}

static WgcTensor view(WgcBuffer *b, WgcDtype d, uint32_t rank, const int64_t *shape, const int64_t *strides,
                      int64_t offset) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = d;
    t.rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        t.shape[i] = shape[i];
        t.strides[i] = strides[i];
    }
    t.offset = offset;
    return t;
}

static void read_back(TestEnv *env, WgcBuffer *b, void *out, size_t bytes) {
    CHECK(wgc_stream_synchronize(env->stream));
    CHECK(wgc_buffer_read(b, 0, out, bytes));
}

/* The n elements of `got` (outside every view written) must still be
 * SENTINEL: writes of halves left their neighbours alone. */
static void expect_untouched(const uint16_t *got, size_t n, const char *what) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad += got[i] != SENTINEL;
    if (bad) {
        fprintf(stderr, "%s: %d elements outside the view changed\n", what, bad);
        g_failures++;
    }
}

/* f32 -> bf16 edge cases through the dense kernel (offset 0) and the
 * per-element one (offset 1: halves shared with neighbours). */
static void test_from_f32(TestEnv *env) {
    const uint32_t edges[] = {
        0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, /* +-0, +-1 */
        0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f80ffffu, /* ties to even down and up, just above, just below */
        0x7f7f7fffu, 0x7f7f8000u, 0x7f7fffffu, 0xff7fffffu, /* below the overflow tie, the tie, f32 max -> inf */
        0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, /* inf, NaN with sign and payload */
        0x7f800001u, 0x7fbfffffu, /* signalling NaNs */
        0x00000001u, 0x00008000u, 0x00018000u, 0x0000ffffu, /* f32 subnormals: to 0, ties, up */
        0x00010000u, 0x807f0000u, 0x00800000u, 0x80ffffffu, /* bf16 subnormals, smallest normal, rounding into 2^-125 */
        0x3dcccccdu, 0x47800000u, 0x4f000000u, 0x33800000u, 0xc1200000u, 0x7effffffu, 0x00ff8000u,
    };
    size_t n = sizeof edges / sizeof edges[0];
    float src[64];
    for (size_t i = 0; i < n; i++) src[i] = f32_of_bits(edges[i]);
    WgcBuffer *x = upload(env->device, src, n * 4);
    for (int64_t off = 0; off <= 1; off++) {
        WgcBuffer *y = sentinel_buffer(env->device, n + 2);
        int64_t shape[1] = {(int64_t)n}, one[1] = {1};
        WgcTensor xt = tensor_of(x, WGC_DTYPE_F32, 1, shape);
        WgcTensor yt = view(y, WGC_DTYPE_BF16, 1, shape, one, off);
        CHECK(wgc_op_cast(env->stream, &xt, &yt));
        uint16_t got[66];
        read_back(env, y, got, (n + 2) * 2);
        for (size_t i = 0; i < n; i++) {
            uint32_t u = edges[i];
            uint16_t want = (u & 0x7fffffffu) > 0x7f800000u ? 0x7fc0 : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
            if (got[off + i] != want) {
                fprintf(stderr, "f32 0x%08x -> bf16 (offset %d): got 0x%04x, expected 0x%04x\n", u, (int)off,
                        got[off + i], want);
                g_failures++;
            }
        }
        uint16_t rest[2] = {off ? got[0] : got[n], got[n + 1]};
        expect_untouched(rest, 2, "f32 -> bf16");
        wgc_buffer_release(y);
    }
    wgc_buffer_release(x);
}

/* Every bf16 bit pattern to f32 (exact) and back (the same bits, NaN
 * quieted to 0x7fc0), densely and through a reversed view. */
static void test_all_patterns(TestEnv *env) {
    size_t n = 65536;
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) h[i] = (uint16_t)i;
    WgcBuffer *x = upload(env->device, h, n * 2);
    WgcBuffer *f = NULL, *back = NULL;
    CHECK(wgc_buffer_create(env->device, n * 4, WGC_BUFFER_USAGE_STORAGE, &f));
    CHECK(wgc_buffer_create(env->device, n * 2, WGC_BUFFER_USAGE_STORAGE, &back));
    int64_t shape[1] = {(int64_t)n}, rev[1] = {-1};
    uint32_t *fv = malloc(n * 4);
    uint16_t *bv = malloc(n * 2);
    for (int reversed = 0; reversed <= 1; reversed++) {
        WgcTensor xt = tensor_of(x, WGC_DTYPE_BF16, 1, shape);
        if (reversed) xt = view(x, WGC_DTYPE_BF16, 1, shape, rev, (int64_t)n - 1);
        WgcTensor ft = tensor_of(f, WGC_DTYPE_F32, 1, shape);
        WgcTensor bt = tensor_of(back, WGC_DTYPE_BF16, 1, shape);
        CHECK(wgc_op_cast(env->stream, &xt, &ft));
        CHECK(wgc_op_cast(env->stream, &ft, &bt));
        read_back(env, f, fv, n * 4);
        CHECK(wgc_buffer_read(back, 0, bv, n * 2));
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            uint16_t b = reversed ? (uint16_t)(n - 1 - i) : (uint16_t)i;
            int nan = is_nan_bf16(b);
            uint32_t want = (uint32_t)b << 16;
            int ok = nan ? isnan(f32_of_bits(fv[i])) && bv[i] == 0x7fc0 : fv[i] == want && bv[i] == b;
            if (!ok && bad++ < 5)
                fprintf(stderr, "bf16 0x%04x -> f32 0x%08x -> bf16 0x%04x (reversed %d)\n", b, fv[i], bv[i],
                        reversed);
        }
        if (bad) g_failures++;
    }
    /* bf16 -> f16 -> bf16 for every pattern, where the adapter has f16. */
    WgcBuffer *h16 = NULL;
    CHECK(wgc_buffer_create(env->device, n * 2, WGC_BUFFER_USAGE_STORAGE, &h16));
    WgcTensor xt = tensor_of(x, WGC_DTYPE_BF16, 1, shape);
    WgcTensor ht = tensor_of(h16, WGC_DTYPE_F16, 1, shape);
    WgcStatus s = wgc_op_cast(env->stream, &xt, &ht);
    if (s == WGC_OK) {
        uint16_t *hv = malloc(n * 2);
        read_back(env, h16, hv, n * 2);
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            float v = (float)bf16_value((uint16_t)i);
            uint16_t want = f32_to_f16(v);
            int ok = is_nan_bf16((uint16_t)i) ? (hv[i] & 0x7fff) > 0x7c00 : hv[i] == want;
            if (!ok && bad++ < 5) fprintf(stderr, "bf16 0x%04zx -> f16 0x%04x, expected 0x%04x\n", i, hv[i], want);
        }
        if (bad) g_failures++;
        /* Every f16 to bf16 (exact in f32, rounded once). */
        CHECK(wgc_buffer_write(h16, 0, h, n * 2));
        CHECK(wgc_op_cast(env->stream, &ht, &xt));
        read_back(env, x, hv, n * 2);
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            double v = f16_to_f32((uint16_t)i);
            int nan = ((uint16_t)i & 0x7fff) > 0x7c00;
            uint16_t want = bf16_of_double(v);
            if ((nan ? hv[i] != 0x7fc0 : hv[i] != want) && bad++ < 5)
                fprintf(stderr, "f16 0x%04zx -> bf16 0x%04x, expected 0x%04x\n", i, hv[i], want);
        }
        if (bad) g_failures++;
        free(hv);
    } else {
        EXPECT(s == WGC_ERROR_UNSUPPORTED);
    }
    wgc_buffer_release(h16);
    free(fv);
    free(bv);
    free(h);
    wgc_buffer_release(x);
    wgc_buffer_release(f);
    wgc_buffer_release(back);
}

/* i32 and u32 to bf16 round once (ties past 2^24 included); bf16 to
 * integers truncates toward zero, saturating, NaN giving 0. */
static void test_integers(TestEnv *env) {
    const int32_t iv[] = {0, 1, -1, 255, 256, 257, -257, 16777217, 0x01018000, 0x01028000, 0x01018001,
                          0x7fffffff, (int32_t)0x80000000u, -0x01018000, 123456789, -98765, 0x00ff8000, 511};
    const uint32_t uv[] = {0u, 1u, 0xffffffffu, 0x80000000u, 0x80800000u, 0x81800000u, 0x7f800000u, 384u, 0xff7fffffu};
    size_t ni = sizeof iv / sizeof iv[0], nu = sizeof uv / sizeof uv[0];
    WgcBuffer *bi = upload(env->device, iv, ni * 4), *bu = upload(env->device, uv, nu * 4);
    WgcBuffer *y = sentinel_buffer(env->device, 32);
    int64_t one[1] = {1};
    uint16_t got[32];
    for (int k = 0; k < 2; k++) {
        size_t n = k ? nu : ni;
        int64_t shape[1] = {(int64_t)n};
        WgcTensor xt = tensor_of(k ? bu : bi, k ? WGC_DTYPE_U32 : WGC_DTYPE_I32, 1, shape);
        WgcTensor yt = view(y, WGC_DTYPE_BF16, 1, shape, one, 3);
        CHECK(wgc_op_cast(env->stream, &xt, &yt));
        read_back(env, y, got, 64);
        for (size_t i = 0; i < n; i++) {
            double v = k ? (double)uv[i] : (double)iv[i];
            uint16_t want = bf16_of_double(v);
            if (got[3 + i] != want) {
                fprintf(stderr, "%s %.17g -> bf16 0x%04x, expected 0x%04x\n", k ? "u32" : "i32", v, got[3 + i], want);
                g_failures++;
            }
        }
    }
    /* bf16 to integers. */
    const uint16_t bv[] = {0x0000, 0x8000, 0x3fc0, 0xbfc0, 0x4f00, 0xcf00, 0x4f80, 0xcf80, 0x7f80,
                           0xff80, 0x7fc0, 0xffc1, 0x0001, 0x4b80, 0x447a, 0xc47a, 0x3f7f};
    size_t nb = sizeof bv / sizeof bv[0];
    WgcBuffer *bb = upload(env->device, bv, nb * 2);
    int64_t shape[1] = {(int64_t)nb};
    WgcTensor bt = tensor_of(bb, WGC_DTYPE_BF16, 1, shape);
    int32_t gi[32];
    uint32_t gu[32];
    WgcTensor it = tensor_of(bi, WGC_DTYPE_I32, 1, shape), ut = tensor_of(bu, WGC_DTYPE_U32, 1, shape);
    wgc_buffer_release(bi);
    wgc_buffer_release(bu);
    CHECK(wgc_buffer_create(env->device, nb * 4, WGC_BUFFER_USAGE_STORAGE, &bi));
    CHECK(wgc_buffer_create(env->device, nb * 4, WGC_BUFFER_USAGE_STORAGE, &bu));
    it.buffer = bi;
    ut.buffer = bu;
    CHECK(wgc_op_cast(env->stream, &bt, &it));
    CHECK(wgc_op_cast(env->stream, &bt, &ut));
    read_back(env, bi, gi, nb * 4);
    CHECK(wgc_buffer_read(bu, 0, gu, nb * 4));
    for (size_t i = 0; i < nb; i++) {
        double v = bf16_value(bv[i]);
        double t = isnan(v) ? 0 : trunc(v);
        int32_t wi = (int32_t)(t < -2147483648.0 ? -2147483648.0 : t > 2147483520.0 ? 2147483520.0 : t);
        uint32_t wu = (uint32_t)(t < 0 ? 0 : t > 4294967040.0 ? 4294967040.0 : t);
        if (gi[i] != wi || gu[i] != wu) {
            fprintf(stderr, "bf16 0x%04x -> i32 %d u32 %u, expected %d %u\n", bv[i], gi[i], gu[i], wi, wu);
            g_failures++;
        }
    }
    wgc_buffer_release(bb);
    wgc_buffer_release(bi);
    wgc_buffer_release(bu);
    wgc_buffer_release(y);
}

/* bf16 copies keep every bit (NaN payloads too), into strided views whose
 * neighbours in the same words stay as they were. */
static void test_copy(TestEnv *env) {
    const uint16_t src[] = {0x7f81, 0xffff, 0x0001, 0x8000, 0x3f80, 0x7f80, 0x1234, 0xfedc, 0x7fc0};
    size_t n = sizeof src / sizeof src[0];
    WgcBuffer *x = upload(env->device, src, n * 2);
    WgcBuffer *y = sentinel_buffer(env->device, 2 * n + 2);
    int64_t shape[1] = {(int64_t)n}, two[1] = {2}, one[1] = {1};
    WgcTensor xt = view(x, WGC_DTYPE_BF16, 1, shape, one, 0);
    WgcTensor yt = view(y, WGC_DTYPE_BF16, 1, shape, two, 1);
    CHECK(wgc_op_copy(env->stream, &xt, &yt));
    uint16_t got[32];
    read_back(env, y, got, (2 * n + 2) * 2);
    uint16_t others[32];
    size_t k = 0;
    for (size_t i = 0; i < 2 * n + 2; i++) {
        if (i % 2 == 1 && i / 2 < n) {
            if (got[i] != src[i / 2]) {
                fprintf(stderr, "copy element %zu: 0x%04x, expected 0x%04x\n", i / 2, got[i], src[i / 2]);
                g_failures++;
            }
        } else {
            others[k++] = got[i];
        }
    }
    expect_untouched(others, k, "strided bf16 copy");
    wgc_buffer_release(x);
    wgc_buffer_release(y);
}

/* Outputs whose rows are even and start at even elements take whole words
 * from any input view: a transposed bf16 copy and a transposed f32 cast
 * into (8, 6) at offset 2, bits checked, neighbours untouched. */
static void test_pairs(TestEnv *env) {
    enum { R = 6, C = 8 };
    uint16_t src[R * C];
    float srcf[R * C];
    for (int i = 0; i < R * C; i++) {
        src[i] = (uint16_t)(0x3f00 + 37 * i);
        srcf[i] = (float)rng_uniform(-3, 3);
    }
    src[5] = 0x7f81; /* a NaN payload, kept by copies */
    WgcBuffer *xb = upload(env->device, src, sizeof src), *fb = upload(env->device, srcf, sizeof srcf);
    int64_t ts[2] = {C, R}, tst[2] = {1, C}, os[2] = {C, R}, ost[2] = {R, 1};
    WgcTensor xt = view(xb, WGC_DTYPE_BF16, 2, ts, tst, 0), ft = view(fb, WGC_DTYPE_F32, 2, ts, tst, 0);
    for (int k = 0; k < 2; k++) {
        WgcBuffer *ob = sentinel_buffer(env->device, R * C + 4);
        WgcTensor ot = view(ob, WGC_DTYPE_BF16, 2, os, ost, 2);
        if (k == 0)
            CHECK(wgc_op_copy(env->stream, &xt, &ot));
        else
            CHECK(wgc_op_cast(env->stream, &ft, &ot));
        uint16_t got[R * C + 4];
        read_back(env, ob, got, sizeof got);
        int bad = 0;
        for (int i = 0; i < C; i++)
            for (int j = 0; j < R; j++) {
                uint16_t want = k == 0 ? src[j * C + i] : bf16_of_double(srcf[j * C + i]);
                bad += got[2 + i * R + j] != want;
            }
        if (bad) {
            fprintf(stderr, "%s into word pairs: %d wrong\n", k ? "cast" : "copy", bad);
            g_failures++;
        }
        uint16_t rest[4] = {got[0], got[1], got[R * C + 2], got[R * C + 3]};
        expect_untouched(rest, 4, "pair output");
        wgc_buffer_release(ob);
    }
    wgc_buffer_release(xb);
    wgc_buffer_release(fb);
}

static double binary_ref(uint32_t op, double a, double b) {
    switch (op) {
    case WGC_BINARY_OP_ADD: return a + b;
    case WGC_BINARY_OP_SUB: return a - b;
    case WGC_BINARY_OP_MUL: return a * b;
    case WGC_BINARY_OP_DIV: return a / b;
    case WGC_BINARY_OP_MAXIMUM: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    default: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    }
}

static uint16_t *random_bf16(size_t n, double lo, double hi) {
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) h[i] = bf16_of_double(rng_uniform(lo, hi));
    return h;
}

/* out[5, 6, 7] (a transposed view at an odd offset in a sentinel buffer) =
 * a[5, 1, 7] OP b[6, 1] (b strided). */
static void test_binary(TestEnv *env) {
    enum { P = 5, Q = 6, R = 7 };
    uint16_t *a = random_bf16(3 + P * R, -4, 4);
    uint16_t *b = random_bf16(3 * Q, 0.25, 3);
    a[3] = 0x7fc0; /* NaN */
    b[0] = 0x7f80; /* inf */
    WgcBuffer *ab = upload(env->device, a, (3 + P * R) * 2), *bb = upload(env->device, b, 3 * Q * 2);
    size_t total = 1 + P * Q * R + 1;
    WgcBuffer *ob = sentinel_buffer(env->device, total);
    int64_t as[3] = {P, 1, R}, ast[3] = {R, 0, 1}, bs[2] = {Q, 1}, bst[2] = {3, 0};
    int64_t os[3] = {P, Q, R}, ost[3] = {1, P * R, P}; /* element (p, q, r) at p + (q * R + r) * P */
    WgcTensor at = view(ab, WGC_DTYPE_BF16, 3, as, ast, 3);
    WgcTensor bt = view(bb, WGC_DTYPE_BF16, 2, bs, bst, 0);
    WgcTensor ot = view(ob, WGC_DTYPE_BF16, 3, os, ost, 1);
    uint16_t *got = malloc(total * 2);
    const uint32_t ops[] = {WGC_BINARY_OP_ADD, WGC_BINARY_OP_SUB, WGC_BINARY_OP_MUL, WGC_BINARY_OP_DIV,
                            WGC_BINARY_OP_MAXIMUM, WGC_BINARY_OP_MINIMUM};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        CHECK(wgc_op_binary(env->stream, ops[k], &at, &bt, &ot));
        read_back(env, ob, got, total * 2);
        int bad = 0;
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int r = 0; r < R; r++) {
                    double x = bf16_value(a[3 + p * R + r]), y = bf16_value(b[3 * q]);
                    uint16_t want = bf16_of_double(binary_ref(ops[k], x, y));
                    uint16_t g = got[1 + p + (q * R + r) * P];
                    int ok = isnan(bf16_value(want)) ? is_nan_bf16(g) : g == want;
                    if (!ok && bad++ < 3)
                        fprintf(stderr, "binary op %u at (%d,%d,%d): 0x%04x, expected 0x%04x\n", ops[k], p, q, r, g,
                                want);
                }
        if (bad) g_failures++;
        uint16_t edges[2] = {got[0], got[total - 1]};
        expect_untouched(edges, 2, "binary output");
    }
    /* Comparisons write u32; a scalar operand is rounded to bf16 first. */
    WgcBuffer *cb = NULL;
    CHECK(wgc_buffer_create(env->device, P * Q * R * 4, WGC_BUFFER_USAGE_STORAGE, &cb));
    WgcTensor ct = tensor_of(cb, WGC_DTYPE_U32, 3, os);
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_LT, &at, &bt, &ct));
    uint32_t *flags = malloc(P * Q * R * 4);
    read_back(env, cb, flags, P * Q * R * 4);
    int bad = 0;
    for (int p = 0; p < P; p++)
        for (int q = 0; q < Q; q++)
            for (int r = 0; r < R; r++) {
                double x = bf16_value(a[3 + p * R + r]), y = bf16_value(b[3 * q]);
                bad += flags[(p * Q + q) * R + r] != (uint32_t)(x < y);
            }
    if (bad) {
        fprintf(stderr, "bf16 LT: %d wrong\n", bad);
        g_failures++;
    }
    /* In place, at an odd offset: a = a * 1.0078125 (rounded, ties among
     * them); the scalar 1 + 2^-8 would round to bf16 1.0 first. */
    int64_t flat[1] = {P * R}, one[1] = {1};
    WgcTensor af = view(ab, WGC_DTYPE_BF16, 1, flat, one, 3);
    CHECK(wgc_op_binary_scalar(env->stream, WGC_BINARY_OP_MUL, &af, 1.0078125, &af));
    uint16_t *after = malloc((3 + P * R) * 2);
    read_back(env, ab, after, (3 + P * R) * 2);
    bad = 0;
    for (int i = 0; i < 3 + P * R; i++) {
        uint16_t want = i < 3 ? a[i] : bf16_of_double(bf16_value(a[i]) * 1.0078125);
        int ok = is_nan_bf16(want) ? is_nan_bf16(after[i]) : after[i] == want;
        bad += !ok;
    }
    if (bad) {
        fprintf(stderr, "bf16 in-place mul: %d wrong\n", bad);
        g_failures++;
    }
    free(after);
    free(flags);
    wgc_buffer_release(cb);
    free(got);
    free(a);
    free(b);
    wgc_buffer_release(ab);
    wgc_buffer_release(bb);
    wgc_buffer_release(ob);
}

/* Unary ops, where, fill and arange into odd views. */
static void test_unary_fill(TestEnv *env) {
    enum { N = 37 };
    uint16_t *a = random_bf16(N, -3, 3);
    a[0] = 0xff80; /* -inf */
    a[1] = 0x8000; /* -0 */
    WgcBuffer *ab = upload(env->device, a, N * 2);
    WgcBuffer *ob = sentinel_buffer(env->device, N + 2);
    int64_t shape[1] = {N}, one[1] = {1};
    WgcTensor at = tensor_of(ab, WGC_DTYPE_BF16, 1, shape);
    WgcTensor ot = view(ob, WGC_DTYPE_BF16, 1, shape, one, 1);
    uint16_t got[N + 2];
    const uint32_t ops[] = {WGC_UNARY_OP_NEG, WGC_UNARY_OP_ABS, WGC_UNARY_OP_EXP, WGC_UNARY_OP_TANH, WGC_UNARY_OP_RELU};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        CHECK(wgc_op_unary(env->stream, ops[k], &at, &ot));
        read_back(env, ob, got, sizeof got);
        for (int i = 0; i < N; i++) {
            double x = bf16_value(a[i]), r;
            switch (ops[k]) {
            case WGC_UNARY_OP_NEG: r = -x; break;
            case WGC_UNARY_OP_ABS: r = fabs(x); break;
            case WGC_UNARY_OP_EXP: r = exp(x); break;
            case WGC_UNARY_OP_TANH: r = tanh(x); break;
            default: r = x > 0 ? x : 0; break;
            }
            double g = bf16_value(got[1 + i]);
            /* exact ops bit for bit (but relu's sign of zero); exp and tanh within one bf16 ulp */
            int exact = ops[k] != WGC_UNARY_OP_EXP && ops[k] != WGC_UNARY_OP_TANH;
            int ok = exact ? (got[1 + i] == bf16_of_double(r) || (r == 0 && g == 0))
                           : (g == r || fabs(g - r) <= ldexp(fabs(r), -8) + 1e-38);
            if (!ok) {
                fprintf(stderr, "unary op %u of %g: %g (0x%04x), expected %g\n", ops[k], x, g, got[1 + i], r);
                g_failures++;
            }
        }
        expect_untouched((uint16_t[]){got[0], got[N + 1]}, 2, "unary output");
    }
    CHECK(wgc_op_fill(env->stream, &ot, 0.1));
    read_back(env, ob, got, sizeof got);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += got[1 + i] != 0x3dcd;
    CHECK(wgc_op_arange(env->stream, &ot, 0.5, 0.25));
    read_back(env, ob, got, sizeof got);
    for (int i = 0; i < N; i++) bad += got[1 + i] != bf16_of_double(0.5 + 0.25 * i);
    if (bad) {
        fprintf(stderr, "bf16 fill/arange: %d wrong\n", bad);
        g_failures++;
    }
    expect_untouched((uint16_t[]){got[0], got[N + 1]}, 2, "fill output");
    /* where(mask, a, 2) with 2 broadcast from a one-element tensor. */
    uint32_t mask[N];
    for (int i = 0; i < N; i++) mask[i] = (uint32_t)(i % 3 == 0);
    uint16_t two = 0x4000;
    WgcBuffer *mb = upload(env->device, mask, sizeof mask), *tb = upload(env->device, &two, 2);
    int64_t s1[1] = {1};
    WgcTensor mt = tensor_of(mb, WGC_DTYPE_U32, 1, shape), tt = tensor_of(tb, WGC_DTYPE_BF16, 1, s1);
    CHECK(wgc_op_where(env->stream, &mt, &at, &tt, &ot));
    read_back(env, ob, got, sizeof got);
    bad = 0;
    for (int i = 0; i < N; i++) bad += got[1 + i] != (mask[i] ? a[i] : 0x4000);
    if (bad) {
        fprintf(stderr, "bf16 where: %d wrong\n", bad);
        g_failures++;
    }
    wgc_buffer_release(mb);
    wgc_buffer_release(tb);
    free(a);
    wgc_buffer_release(ab);
    wgc_buffer_release(ob);
}

/* Layouts the bf16 kernels take (four elements, two whole words, per
 * unit): dense with a tail of 3, a row broadcast over a matrix, in place,
 * a scalar operand, where, unary ops and fills. */
static void test_dense_kernels(TestEnv *env) {
    enum { N = 39, R = 6, C = 12 };
    uint16_t *a = random_bf16(N, -3, 3), *b = random_bf16(N, 0.5, 2);
    a[5] = 0x7fc0;
    a[6] = 0x7f7f; /* the largest bf16: a sum past it rounds to inf */
    b[6] = 0x7f7f;
    WgcBuffer *ab = upload(env->device, a, N * 2), *bb = upload(env->device, b, N * 2);
    WgcBuffer *ob = sentinel_buffer(env->device, N + 5);
    int64_t n1[1] = {N};
    WgcTensor at = tensor_of(ab, WGC_DTYPE_BF16, 1, n1), bt = tensor_of(bb, WGC_DTYPE_BF16, 1, n1);
    WgcTensor ot = tensor_of(ob, WGC_DTYPE_BF16, 1, n1);
    uint16_t got[N + 5];
    int bad = 0;
    const uint32_t ops[] = {WGC_BINARY_OP_ADD, WGC_BINARY_OP_MUL, WGC_BINARY_OP_DIV};
    for (int k = 0; k < 3; k++) {
        CHECK(wgc_op_binary(env->stream, ops[k], &at, &bt, &ot));
        read_back(env, ob, got, sizeof got);
        for (int i = 0; i < N; i++) {
            uint16_t want = bf16_of_double(binary_ref(ops[k], bf16_value(a[i]), bf16_value(b[i])));
            bad += got[i] != want;
        }
        expect_untouched(got + N, 5, "dense bf16 output");
    }
    /* In place: a -= b; then a *= 0.5 (a scalar). */
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_SUB, &at, &bt, &at));
    CHECK(wgc_op_binary_scalar(env->stream, WGC_BINARY_OP_MUL, &at, 0.5, &at));
    read_back(env, ab, got, N * 2);
    for (int i = 0; i < N; i++) {
        double d = bf16_value(bf16_of_double(bf16_value(a[i]) - bf16_value(b[i])));
        uint16_t want = bf16_of_double(d * 0.5);
        bad += is_nan_bf16(want) ? !is_nan_bf16(got[i]) : got[i] != want;
        a[i] = got[i];
    }
    /* exp and fill, where(mask, a, b). */
    CHECK(wgc_op_unary(env->stream, WGC_UNARY_OP_EXP, &at, &ot));
    read_back(env, ob, got, sizeof got);
    for (int i = 0; i < N; i++) {
        double r = exp(bf16_value(a[i])), g = bf16_value(got[i]);
        bad += isnan(r) ? !isnan(g) : !(g == r || fabs(g - r) <= ldexp(fabs(r), -8));
    }
    CHECK(wgc_op_fill(env->stream, &ot, -2.5));
    read_back(env, ob, got, sizeof got);
    for (int i = 0; i < N; i++) bad += got[i] != 0xc020;
    CHECK(wgc_op_arange(env->stream, &ot, -3.0, 0.3));
    read_back(env, ob, got, sizeof got);
    /* start + i * step in f32 (fused or not), rounded to bf16: within one bf16 step */
    for (int i = 0; i < N; i++) {
        double r = -3.0 + i * (double)0.3f;
        if (!(fabs(bf16_value(got[i]) - r) <= ldexp(fabs(r), -8) + 1e-6)) {
            fprintf(stderr, "arange %d: %.9g (0x%04x), expected %.9g\n", i, bf16_value(got[i]), got[i], r);
            bad++;
        }
    }
    uint32_t mask[N];
    for (int i = 0; i < N; i++) mask[i] = (uint32_t)(i % 4 == 1);
    WgcBuffer *mb = upload(env->device, mask, sizeof mask);
    WgcTensor mt = tensor_of(mb, WGC_DTYPE_U32, 1, n1);
    CHECK(wgc_op_where(env->stream, &mt, &at, &bt, &ot));
    read_back(env, ob, got, sizeof got);
    for (int i = 0; i < N; i++) bad += got[i] != (mask[i] ? a[i] : b[i]);
    expect_untouched(got + N, 5, "dense bf16 output");
    /* out (R, C) = x (R, C) at offset 4 + bias (C). */
    uint16_t *x = random_bf16(4 + R * C, -1, 1);
    WgcBuffer *xb = upload(env->device, x, (4 + R * C) * 2), *yb = sentinel_buffer(env->device, R * C);
    int64_t s2[2] = {R, C}, st2[2] = {C, 1}, sc[1] = {C};
    WgcTensor xt = view(xb, WGC_DTYPE_BF16, 2, s2, st2, 4), yt = tensor_of(yb, WGC_DTYPE_BF16, 2, s2);
    WgcTensor bias = tensor_of(bb, WGC_DTYPE_BF16, 1, sc);
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_ADD, &xt, &bias, &yt));
    uint16_t *y = malloc(R * C * 2);
    read_back(env, yb, y, R * C * 2);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            uint16_t want = bf16_of_double(bf16_value(x[4 + r * C + c]) + bf16_value(b[c]));
            bad += is_nan_bf16(want) ? !is_nan_bf16(y[r * C + c]) : y[r * C + c] != want;
        }
    if (bad) {
        fprintf(stderr, "bf16 kernels: %d elements wrong\n", bad);
        g_failures++;
    }
    free(x);
    free(y);
    free(a);
    free(b);
    wgc_buffer_release(xb);
    wgc_buffer_release(yb);
    wgc_buffer_release(mb);
    wgc_buffer_release(ab);
    wgc_buffer_release(bb);
    wgc_buffer_release(ob);
}

/* Reductions of a transposed bf16 view [7, 33, 5] (stored [5, 33, 7]). */
static void test_reductions(TestEnv *env) {
    enum { A = 7, B = 33, C = 5 };
    size_t n = A * B * C;
    uint16_t *x = random_bf16(n + 1, -2, 2);
    WgcBuffer *xb = upload(env->device, x, (n + 1) * 2);
    int64_t shape[3] = {A, B, C}, strides[3] = {1, A, A * B};
    WgcTensor xt = view(xb, WGC_DTYPE_BF16, 3, shape, strides, 1);
#define X(i, j, k) bf16_value(x[1 + (i) + (j) * A + (k) * A * B])
    WgcBuffer *ob = sentinel_buffer(env->device, A * C + 2), *ib = NULL;
    CHECK(wgc_buffer_create(env->device, A * C * 4, WGC_BUFFER_USAGE_STORAGE, &ib));
    int64_t os[2] = {A, C}, ost[2] = {C, 1};
    WgcTensor ot = view(ob, WGC_DTYPE_BF16, 2, os, ost, 1), it = tensor_of(ib, WGC_DTYPE_I32, 2, os);
    int32_t axis = 1;
    uint16_t got[A * C + 2];
    const uint32_t ops[] = {WGC_REDUCE_OP_SUM, WGC_REDUCE_OP_MEAN, WGC_REDUCE_OP_MAX, WGC_REDUCE_OP_MIN};
    for (size_t k = 0; k < 5; k++) {
        if (k < 4)
            CHECK(wgc_op_reduce(env->stream, ops[k], &xt, &axis, 1, 0, &ot));
        else
            CHECK(wgc_op_var(env->stream, &xt, &axis, 1, 0, 1, &ot));
        read_back(env, ob, got, sizeof got);
        for (int i = 0; i < A; i++)
            for (int c = 0; c < C; c++) {
                double s = 0, s_abs = 0, mx = -INFINITY, mn = INFINITY, sq = 0;
                for (int j = 0; j < B; j++) {
                    double v = X(i, j, c);
                    s += v;
                    s_abs += fabs(v);
                    mx = v > mx ? v : mx;
                    mn = v < mn ? v : mn;
                }
                for (int j = 0; j < B; j++) sq += (X(i, j, c) - s / B) * (X(i, j, c) - s / B);
                double ref = k == 0 ? s : k == 1 ? s / B : k == 2 ? mx : k == 3 ? mn : sq / (B - 1);
                double atol = k == 0 ? 2e-6 * s_abs : k == 1 ? 2e-6 * s_abs / B : k == 4 ? 1e-5 * ref : 0;
                double g = bf16_value(got[1 + i * C + c]);
                /* the f32 result within atol, then rounded once to bf16 */
                if (!(fabs(g - ref) <= atol + ldexp(fabs(ref), -8))) {
                    fprintf(stderr, "reduce %zu at (%d, %d): %.9g, expected %.9g\n", k, i, c, g, ref);
                    g_failures++;
                }
            }
        expect_untouched((uint16_t[]){got[0], got[A * C + 1]}, 2, "reduce output");
    }
    CHECK(wgc_op_reduce(env->stream, WGC_REDUCE_OP_ARGMAX, &xt, &axis, 1, 0, &it));
    int32_t idx[A * C];
    read_back(env, ib, idx, sizeof idx);
    for (int i = 0; i < A; i++)
        for (int c = 0; c < C; c++) {
            int best = 0;
            for (int j = 1; j < B; j++) best = X(i, j, c) > X(i, best, c) ? j : best;
            if (idx[i * C + c] != best) {
                fprintf(stderr, "argmax at (%d, %d): %d, expected %d\n", i, c, idx[i * C + c], best);
                g_failures++;
            }
        }
#undef X
    free(x);
    wgc_buffer_release(xb);
    wgc_buffer_release(ob);
    wgc_buffer_release(ib);
}

/* Reductions of contiguous bf16 rows (R, K): the row kernel (short rows)
 * and the vec4 split kernel (long rows, few of them), odd lengths too. */
static void test_row_reductions(TestEnv *env) {
    const int shapes[3][2] = {{9, 130}, {2, 5001}, {3, 4100}};
    for (int t = 0; t < 3; t++) {
        int R = shapes[t][0], K = shapes[t][1];
        uint16_t *x = random_bf16((size_t)R * K, -2, 2);
        WgcBuffer *xb = upload(env->device, x, (size_t)R * K * 2), *ob = sentinel_buffer(env->device, R + 1), *ib = NULL;
        CHECK(wgc_buffer_create(env->device, (size_t)R * 4, WGC_BUFFER_USAGE_STORAGE, &ib));
        int64_t xs[2] = {R, K}, os[1] = {R}, one[1] = {1};
        WgcTensor xt = tensor_of(xb, WGC_DTYPE_BF16, 2, xs), ot = view(ob, WGC_DTYPE_BF16, 1, os, one, 1);
        WgcTensor it = tensor_of(ib, WGC_DTYPE_I32, 1, os);
        int32_t axis = 1;
        uint16_t got[16];
        int32_t idx[16];
        for (int k = 0; k < 3; k++) {
            uint32_t op = k == 0 ? WGC_REDUCE_OP_SUM : k == 1 ? WGC_REDUCE_OP_MEAN : WGC_REDUCE_OP_MAX;
            CHECK(wgc_op_reduce(env->stream, op, &xt, &axis, 1, 0, &ot));
            read_back(env, ob, got, (size_t)(R + 1) * 2);
            for (int r = 0; r < R; r++) {
                double s = 0, s_abs = 0, mx = -INFINITY;
                for (int j = 0; j < K; j++) {
                    double v = bf16_value(x[(size_t)r * K + j]);
                    s += v, s_abs += fabs(v), mx = v > mx ? v : mx;
                }
                double ref = k == 0 ? s : k == 1 ? s / K : mx, atol = k == 2 ? 0 : 2e-6 * s_abs / (k == 1 ? K : 1);
                double g = bf16_value(got[1 + r]);
                if (!(fabs(g - ref) <= atol + ldexp(fabs(ref), -8))) {
                    fprintf(stderr, "row reduce %d of (%d, %d) row %d: %.9g, expected %.9g\n", k, R, K, r, g, ref);
                    g_failures++;
                }
            }
            EXPECT(got[0] == SENTINEL);
        }
        CHECK(wgc_op_reduce(env->stream, WGC_REDUCE_OP_ARGMAX, &xt, &axis, 1, 0, &it));
        read_back(env, ib, idx, (size_t)R * 4);
        for (int r = 0; r < R; r++) {
            int best = 0;
            for (int j = 1; j < K; j++) best = bf16_value(x[(size_t)r * K + j]) > bf16_value(x[(size_t)r * K + best]) ? j : best;
            if (idx[r] != best) {
                fprintf(stderr, "row argmax of (%d, %d) row %d: %d, expected %d\n", R, K, r, idx[r], best);
                g_failures++;
            }
        }
        free(x);
        wgc_buffer_release(xb);
        wgc_buffer_release(ob);
        wgc_buffer_release(ib);
    }
}

/* C = alpha A op(B) + beta C with bf16 A (M, K) and B stored (N, K) and
 * used transposed, or stored (K, N); bf16 and f32 outputs; shapes for the
 * tiled kernel and the skinny ones (vector loads of B where K or N is a
 * multiple of 4). */
static void test_gemm(TestEnv *env) {
    /* One and two rows against N a multiple of 8 (16-byte loads of a
     * weight stored (K, N); the second with K cut into runs). The last: 20
     * rows times a wide weight, which the matrix-vector kernels keep
     * (stored (N, K)) rather than the tiled GEMM. Two rows with K 1096 (a
     * multiple of 8: 16-byte loads along K of a weight stored (N, K), where
     * some threads read a second unit per pass and others do not). */
    const int shapes[8][3] = {{45, 53, 40}, {1, 64, 29}, {3, 53, 40}, {2, 20, 36},
                              {1, 300, 264}, {2, 4100, 48}, {20, 64, 8200}, {2, 1096, 40}};
    for (int t = 0; t < 16; t++) {
        int M = shapes[t / 2][0], K = shapes[t / 2][1], N = shapes[t / 2][2], bt_ = t % 2;
        uint16_t *a = random_bf16((size_t)M * K, -1, 1), *b = random_bf16((size_t)N * K, -1, 1);
        uint16_t *c0 = random_bf16((size_t)M * N, -1, 1);
        WgcBuffer *ab = upload(env->device, a, (size_t)M * K * 2), *bb = upload(env->device, b, (size_t)N * K * 2);
        WgcBuffer *cb = upload(env->device, c0, (size_t)M * N * 2), *fb = NULL;
        CHECK(wgc_buffer_create(env->device, (size_t)M * N * 4, WGC_BUFFER_USAGE_STORAGE, &fb));
        int64_t as[2] = {M, K}, bs[2] = {bt_ ? N : K, bt_ ? K : N}, cs[2] = {M, N};
        WgcTensor at = tensor_of(ab, WGC_DTYPE_BF16, 2, as), bt = tensor_of(bb, WGC_DTYPE_BF16, 2, bs);
        WgcTensor ct = tensor_of(cb, WGC_DTYPE_BF16, 2, cs), ft = tensor_of(fb, WGC_DTYPE_F32, 2, cs);
        CHECK(wgc_op_gemm(env->stream, 1.0f, &at, 0, &bt, (uint32_t)bt_, 0.0f, &ft));
        CHECK(wgc_op_gemm(env->stream, 0.5f, &at, 0, &bt, (uint32_t)bt_, 2.0f, &ct));
        float *f = malloc((size_t)M * N * 4);
        uint16_t *c = malloc((size_t)M * N * 2);
        read_back(env, fb, f, (size_t)M * N * 4);
        CHECK(wgc_buffer_read(cb, 0, c, (size_t)M * N * 2));
        double atol = 1e-6 * K;
        int bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += bf16_value(a[i * K + k]) * bf16_value(b[bt_ ? j * K + k : k * N + j]);
                double r2 = 0.5 * s + 2.0 * bf16_value(c0[i * N + j]);
                double g2 = bf16_value(c[i * N + j]);
                bad += !(fabs(f[i * N + j] - s) <= atol);
                bad += !(fabs(g2 - r2) <= 2 * atol + ldexp(fabs(r2), -8));
            }
        if (bad) {
            fprintf(stderr, "bf16 gemm M=%d K=%d N=%d transpose_b=%d: %d wrong\n", M, K, N, bt_, bad);
            g_failures++;
        }
        /* Mixed dtypes are refused. */
        WgcTensor f16a = at;
        f16a.dtype = WGC_DTYPE_F16;
        EXPECT_STATUS(wgc_op_gemm(env->stream, 1.0f, &f16a, 0, &bt, (uint32_t)bt_, 0.0f, &ft), WGC_ERROR_DTYPE_MISMATCH);
        free(a);
        free(b);
        free(c0);
        free(c);
        free(f);
        wgc_buffer_release(ab);
        wgc_buffer_release(bb);
        wgc_buffer_release(cb);
        wgc_buffer_release(fb);
    }
}

/* One and two rows times a bf16 weight stored (K, N) as a view with padded
 * rows and an offset, all multiples of 8 (the matrix-vector kernels' 16-byte
 * loads), or an offset of 4 (narrower loads), into f32: PyTorch's NaN
 * policy (a NaN in A makes its row NaN; an inf in W, times positive A, its
 * column inf) and the other entries against a double reference. */
static void test_gemm_rows_wide_loads(TestEnv *env) {
    enum { K = 72, N = 40, LD = N + 8 };
    for (int off = 4; off <= 8; off += 4) {
        for (int M = 1; M <= 2; M++) {
            uint16_t *a = random_bf16((size_t)M * K, 0.25, 1), *w = random_bf16((size_t)off + K * LD, -1, 1);
            a[(M - 1) * K + 3] = bf16_of_double(NAN);  /* the last row is NaN */
            w[off + 5 * LD + 10] = bf16_of_double(INFINITY); /* column 10 is inf */
            WgcBuffer *ab = upload(env->device, a, (size_t)M * K * 2);
            WgcBuffer *wb = upload(env->device, w, ((size_t)off + K * LD) * 2), *fb = NULL;
            CHECK(wgc_buffer_create(env->device, (size_t)M * N * 4, WGC_BUFFER_USAGE_STORAGE, &fb));
            int64_t as[2] = {M, K}, ws[2] = {K, N}, cs[2] = {M, N};
            WgcTensor at = tensor_of(ab, WGC_DTYPE_BF16, 2, as), wt = tensor_of(wb, WGC_DTYPE_BF16, 2, ws);
            WgcTensor ft = tensor_of(fb, WGC_DTYPE_F32, 2, cs);
            wt.strides[0] = LD, wt.offset = off;
            CHECK(wgc_op_gemm(env->stream, 1.0f, &at, 0, &wt, 0, 0.0f, &ft));
            float *f = malloc((size_t)M * N * 4);
            read_back(env, fb, f, (size_t)M * N * 4);
            int bad = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double s = 0;
                    for (int k = 0; k < K; k++) s += bf16_value(a[i * K + k]) * bf16_value(w[off + k * LD + j]);
                    if (i == M - 1) bad += !isnan(f[i * N + j]);
                    else if (j == 10) bad += !(isinf(f[i * N + j]) && f[i * N + j] > 0);
                    else bad += !(fabs(f[i * N + j] - s) <= 1e-6 * K);
                }
            if (bad) {
                fprintf(stderr, "bf16 gemm rows, weight (K, N) view, M=%d offset %d: %d wrong\n", M, off, bad);
                g_failures++;
            }
            free(a);
            free(w);
            free(f);
            wgc_buffer_release(ab);
            wgc_buffer_release(wb);
            wgc_buffer_release(fb);
        }
    }
}

/* Products that bf16 tensor cores take where the device has them (16-byte
 * loads: the dense dims and strides multiples of 8), checked the same way
 * everywhere: partial tiles in M, N and K, A or B transposed, a K long
 * enough to be cut into runs, whole tiles (stored straight from the
 * fragments), skinny products of 3-32 rows against both weight layouts,
 * batches with their own or one shared B, and the epilogue (alpha, beta)
 * into an f32 C; the first shape also carries a NaN in A and an inf in B
 * (PyTorch's policy: NaN rows and columns, inf where the products are
 * finite otherwise). Each shape: {M, K, N, transpose_a, transpose_b, batch,
 * B shared by the batch}. */
static void test_gemm_tensor_core_shapes(TestEnv *env) {
    const int shapes[][7] = {
        {130, 72, 136, 0, 0, 1, 0}, {130, 72, 136, 0, 1, 1, 0}, {130, 72, 136, 1, 0, 1, 0},
        {136, 40, 130, 1, 1, 1, 0}, {256, 256, 256, 0, 1, 1, 0}, {64, 2048, 64, 0, 0, 1, 0},
        {8, 264, 1032, 0, 1, 1, 0}, {24, 264, 1032, 0, 0, 1, 0}, {5, 512, 264, 0, 1, 3, 0},
        {17, 128, 136, 0, 0, 2, 0}, {40, 96, 200, 0, 1, 2, 1},
    };
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int M = shapes[t][0], K = shapes[t][1], N = shapes[t][2], ta = shapes[t][3], tb = shapes[t][4];
        int nb = shapes[t][5], shared = shapes[t][6], nbb = shared ? 1 : nb;
        size_t an = (size_t)nb * M * K, bn = (size_t)nbb * K * N, cn = (size_t)nb * M * N;
        uint16_t *a = random_bf16(an, -1, 1), *b = random_bf16(bn, -1, 1);
        if (t == 0) {
            a[(size_t)1 * K + 3] = 0x7FC0; /* NaN at A[1][3] */
            b[(size_t)5 * N + 7] = 0x7F80; /* +inf at B[5][7] */
        }
        float *c0 = malloc(cn * 4), *f = malloc(cn * 4), *g = malloc(cn * 4);
        for (size_t i = 0; i < cn; i++) c0[i] = (float)bf16_value(a[(i + 7) % an]);
        for (size_t i = 0; i < cn; i++) c0[i] = isfinite(c0[i]) ? c0[i] : 0.0f;
        WgcBuffer *ab = upload(env->device, a, an * 2), *bb = upload(env->device, b, bn * 2);
        WgcBuffer *fb = upload(env->device, c0, cn * 4), *gb = upload(env->device, c0, cn * 4);
        int64_t as[3] = {nb, ta ? K : M, ta ? M : K}, bs[3] = {nbb, tb ? N : K, tb ? K : N}, cs[3] = {nb, M, N};
        WgcTensor at = nb > 1 ? tensor_of(ab, WGC_DTYPE_BF16, 3, as) : tensor_of(ab, WGC_DTYPE_BF16, 2, as + 1);
        WgcTensor bt = shared || nb == 1 ? tensor_of(bb, WGC_DTYPE_BF16, 2, bs + 1) : tensor_of(bb, WGC_DTYPE_BF16, 3, bs);
        WgcTensor ft = nb > 1 ? tensor_of(fb, WGC_DTYPE_F32, 3, cs) : tensor_of(fb, WGC_DTYPE_F32, 2, cs + 1);
        WgcTensor gt = nb > 1 ? tensor_of(gb, WGC_DTYPE_F32, 3, cs) : tensor_of(gb, WGC_DTYPE_F32, 2, cs + 1);
        CHECK(wgc_op_gemm(env->stream, 1.0f, &at, (uint32_t)ta, &bt, (uint32_t)tb, 0.0f, &ft));
        CHECK(wgc_op_gemm(env->stream, 0.5f, &at, (uint32_t)ta, &bt, (uint32_t)tb, -2.0f, &gt));
        read_back(env, fb, f, cn * 4);
        read_back(env, gb, g, cn * 4);
        double atol = 1e-6 * K;
        int bad = 0;
        for (int z = 0; z < nb; z++) {
            const uint16_t *az = a + (size_t)z * M * K, *bz = b + (shared ? 0 : (size_t)z * K * N);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double s = 0;
                    for (int k = 0; k < K; k++) {
                        double x = bf16_value(az[ta ? (size_t)k * M + i : (size_t)i * K + k]);
                        s += x * bf16_value(bz[tb ? (size_t)j * K + k : (size_t)k * N + j]);
                    }
                    size_t o = ((size_t)z * M + i) * N + j;
                    double r2 = 0.5 * s - 2.0 * c0[o];
                    if (!isfinite(s)) {
                        /* NaN stays NaN; inf keeps its sign. */
                        bad += isnan(s) ? !isnan(f[o]) || !isnan(g[o]) : f[o] != s || g[o] != r2;
                        continue;
                    }
                    bad += !(fabs(f[o] - s) <= atol);
                    bad += !(fabs(g[o] - r2) <= 2 * atol);
                }
        }
        if (bad) {
            fprintf(stderr, "bf16 gemm M=%d K=%d N=%d ta=%d tb=%d batch=%d shared=%d: %d wrong\n", M, K, N, ta, tb, nb,
                    shared, bad);
            g_failures++;
        }
        free(a);
        free(b);
        free(c0);
        free(f);
        free(g);
        wgc_buffer_release(ab);
        wgc_buffer_release(bb);
        wgc_buffer_release(fb);
        wgc_buffer_release(gb);
    }
}

/* The same kernels on views: A and B slices of wider matrices (row strides
 * K + 16 and N + 24, offsets of 8 elements: still whole 16-byte words), C a
 * slice of a wider f32 matrix whose other columns must stay as they were. */
static void test_gemm_tensor_core_views(TestEnv *env) {
    const int M = 40, K = 64, N = 136, lda = K + 16, ldb = N + 24, ldc = N + 8, off = 8;
    size_t an = (size_t)off + (size_t)M * lda, bn = (size_t)off + (size_t)K * ldb, cn = (size_t)M * ldc;
    uint16_t *a = random_bf16(an, -1, 1), *b = random_bf16(bn, -1, 1);
    float *c = malloc(cn * 4);
    for (size_t i = 0; i < cn; i++) c[i] = 7.0f;
    WgcBuffer *ab = upload(env->device, a, an * 2), *bb = upload(env->device, b, bn * 2);
    WgcBuffer *cb = upload(env->device, c, cn * 4);
    WgcTensor at = {ab, WGC_DTYPE_BF16, 2, {M, K}, {lda, 1}, off};
    WgcTensor bt = {bb, WGC_DTYPE_BF16, 2, {K, N}, {ldb, 1}, off};
    WgcTensor ct = {cb, WGC_DTYPE_F32, 2, {M, N}, {ldc, 1}, 0};
    CHECK(wgc_op_gemm(env->stream, 1.0f, &at, 0, &bt, 0, 0.0f, &ct));
    read_back(env, cb, c, cn * 4);
    int bad = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += bf16_value(a[off + (size_t)i * lda + k]) * bf16_value(b[off + (size_t)k * ldb + j]);
            bad += !(fabs(c[(size_t)i * ldc + j] - s) <= 1e-6 * K);
        }
        for (int j = N; j < ldc; j++) bad += c[(size_t)i * ldc + j] != 7.0f;
    }
    if (bad) {
        fprintf(stderr, "bf16 gemm on strided views: %d wrong\n", bad);
        g_failures++;
    }
    free(a);
    free(b);
    free(c);
    wgc_buffer_release(ab);
    wgc_buffer_release(bb);
    wgc_buffer_release(cb);
}

static void expect_unsupported(WgcStatus s, const char *what) {
    if (s != WGC_ERROR_UNSUPPORTED || !strstr(wgc_last_error_message(), "bf16")) {
        fprintf(stderr, "%s on bf16: %s (%s), expected WGC_ERROR_UNSUPPORTED naming bf16\n", what,
                wgc_status_string(s), wgc_last_error_message());
        g_failures++;
    }
}

/* Operators without bf16 kernels refuse bf16 rather than misread it. */
static void test_unsupported(TestEnv *env) {
    WgcBuffer *b = sentinel_buffer(env->device, 64), *ib = NULL;
    CHECK(wgc_buffer_create(env->device, 64, WGC_BUFFER_USAGE_STORAGE, &ib));
    int64_t s2[2] = {4, 8}, s1[1] = {4}, s4[4] = {1, 2, 4, 4};
    WgcTensor x = tensor_of(b, WGC_DTYPE_BF16, 2, s2), idx = tensor_of(ib, WGC_DTYPE_I32, 1, s1);
    WgcTensor x4 = tensor_of(b, WGC_DTYPE_BF16, 4, s4);
    WgcBuffer *ob = sentinel_buffer(env->device, 64);
    WgcTensor o = tensor_of(ob, WGC_DTYPE_BF16, 2, s2), o4 = tensor_of(ob, WGC_DTYPE_BF16, 4, s4);
    int64_t s_sel[2] = {4, 4};
    WgcTensor osel = tensor_of(ob, WGC_DTYPE_BF16, 2, s_sel);
    expect_unsupported(wgc_op_softmax(env->stream, &x, 1, &o), "softmax");
    expect_unsupported(wgc_op_cumsum(env->stream, &x, 1, &o), "cumsum");
    expect_unsupported(wgc_op_index_select(env->stream, &x, 1, &idx, &osel), "index_select");
    expect_unsupported(wgc_op_concat(env->stream, &x, 1, 0, &o), "concat");
    expect_unsupported(wgc_op_layer_norm(env->stream, &x, NULL, NULL, 1, 1e-5f, &o), "layer_norm");
    expect_unsupported(wgc_op_random_uniform(env->stream, &o, 1, 0, 0.0, 1.0), "random_uniform");
    expect_unsupported(wgc_op_topk(env->stream, &x, 2, 1, &osel, &idx), "topk");
    WgcPool2dParams pp;
    memset(&pp, 0, sizeof pp);
    pp.struct_size = sizeof pp;
    pp.kernel_h = pp.kernel_w = 1;
    expect_unsupported(wgc_op_max_pool2d(env->stream, &pp, &x4, &o4), "max_pool2d");
    expect_unsupported(wgc_op_avg_pool2d(env->stream, &pp, &x4, &o4), "avg_pool2d");
    int64_t s_g[4] = {1, 2, 1, 1};
    WgcTensor og = tensor_of(ob, WGC_DTYPE_BF16, 4, s_g);
    expect_unsupported(wgc_op_global_avg_pool2d(env->stream, &x4, &og), "global_avg_pool2d");
    expect_unsupported(wgc_op_log_softmax(env->stream, &x, 1, &o), "log_softmax");
    expect_unsupported(wgc_op_rms_norm(env->stream, &x, NULL, 1, 1e-5f, &o), "rms_norm");
    expect_unsupported(wgc_op_random_normal(env->stream, &o, 1, 0, 0.0, 1.0), "random_normal");
    expect_unsupported(wgc_op_gather(env->stream, &x, 1, &x, &o), "gather (bf16 index)") ;
    int64_t s_e[2] = {4, 8};
    WgcTensor oe = tensor_of(ob, WGC_DTYPE_BF16, 2, s_e);
    expect_unsupported(wgc_op_embedding(env->stream, &x, &idx, &oe), "embedding");
    WgcConv2dParams cp;
    memset(&cp, 0, sizeof cp);
    cp.struct_size = sizeof cp;
    int64_t s_w[4] = {2, 2, 1, 1};
    WgcTensor w = tensor_of(b, WGC_DTYPE_BF16, 4, s_w);
    expect_unsupported(wgc_op_conv2d(env->stream, &cp, &x4, &w, NULL, &o4), "conv2d");
    WgcConv2dBnActParams bp;
    memset(&bp, 0, sizeof bp);
    bp.struct_size = sizeof bp;
    bp.folded = 1;
    expect_unsupported(wgc_op_conv2d_bn_act(env->stream, &bp, &x4, NULL, NULL, NULL, NULL, NULL, NULL, &w, NULL, &o4),
                       "conv2d_bn_act");
    WgcRopeDesc rd;
    memset(&rd, 0, sizeof rd);
    rd.struct_size = sizeof rd;
    rd.rotary_dims = 8;
    rd.base = 10000.0f;
    expect_unsupported(wgc_op_rope(env->stream, &x, &rd, &o), "rope");
    uint16_t after[64];
    read_back(env, ob, after, sizeof after);
    expect_untouched(after, 64, "outputs of refused operators");
    wgc_buffer_release(b);
    wgc_buffer_release(ib);
    wgc_buffer_release(ob);
}

int main(void) {
    TestEnv env = test_env();
    test_from_f32(&env);
    test_all_patterns(&env);
    test_integers(&env);
    test_copy(&env);
    test_pairs(&env);
    test_binary(&env);
    test_unary_fill(&env);
    test_dense_kernels(&env);
    test_reductions(&env);
    test_row_reductions(&env);
    test_gemm(&env);
    test_gemm_rows_wide_loads(&env);
    test_gemm_tensor_core_shapes(&env);
    test_gemm_tensor_core_views(&env);
    test_unsupported(&env);
    test_env_release(&env);
    return test_finish("test_bf16");
}
