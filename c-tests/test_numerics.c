/* Edge inputs (NaN, +-inf, -0, huge, tiny) of the elementwise, movement and
 * random operators, checked against the header's Numerics section: the NaN
 * and infinity policy, pow's C99 cases, scalars rounded once, integer to
 * float rounding, arange's wrapping, random_uniform's range checks, and the
 * accuracy of exp near its overflow and of sin/cos for large arguments.
 * Every float op runs on f32 and f16, through the vec4 kernels (4-aligned
 * offsets) and the per-element ones (offset 1).
 *
 * References are double precision (C99 libm), rounded once to the dtype.
 * Tolerances (|got - ref| <= atol + rtol |ref|) are the header's; a
 * reference below the dtype's smallest normal also accepts 0 (subnormals
 * may be flushed). */
#include "op_names.h"
#include "test_util.h"

static TestEnv env;

static const char *dname(WgcDtype d) { return d == WGC_DTYPE_F32 ? "f32" : "f16"; }
static size_t dsize(WgcDtype d) { return d == WGC_DTYPE_F16 ? 2 : 4; }

/* v rounded once to binary16 (ties to even), as a double. */
static double round_f16(double v) {
    if (isnan(v) || isinf(v) || v == 0) return v;
    double a = fabs(v);
    if (a >= 65520) return copysign(INFINITY, v);
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): a in [2^(e-1), 2^e) */
    int q = (e - 1 < -14 ? -14 : e - 1) - 10;
    double m = nearbyint(ldexp(a, -q)); /* the default mode: ties to even */
    return copysign(ldexp(m, q), v);
}
static double round_to(WgcDtype d, double v) { return d == WGC_DTYPE_F16 ? round_f16(v) : (double)(float)v; }
static double smallest_normal(WgcDtype d) { return d == WGC_DTYPE_F16 ? 6.103515625e-05 : 1.1754943508222875e-38; }

/* A 1-D tensor of n values at element offset `off` of its own buffer. */
typedef struct {
    WgcBuffer *buf;
    WgcTensor t;
} Vec;

static Vec vec_of(WgcDtype d, const double *v, size_t n, size_t off) {
    size_t words = ((off + n) * dsize(d) + 3) / 4;
    uint32_t *host = calloc(words + 1, 4);
    for (size_t i = 0; i < n; i++) {
        if (d == WGC_DTYPE_F32) ((float *)host)[off + i] = (float)v[i];
        else if (d == WGC_DTYPE_F16) ((uint16_t *)host)[off + i] = f32_to_f16((float)round_f16(v[i]));
        else if (d == WGC_DTYPE_I32) ((int32_t *)host)[off + i] = (int32_t)v[i];
        else host[off + i] = (uint32_t)v[i];
    }
    Vec r;
    r.buf = upload(env.device, host, (words + 1) * 4);
    int64_t shape[1] = {(int64_t)n};
    r.t = tensor_of(r.buf, d, 1, shape);
    r.t.offset = (int64_t)off;
    free(host);
    return r;
}
static Vec vec_zeros(WgcDtype d, size_t n, size_t off) {
    double *z = calloc(n + 1, sizeof(double));
    Vec r = vec_of(d, z, n, off);
    free(z);
    return r;
}
static double *vec_read(const Vec *v) {
    size_t n = (size_t)v->t.shape[0], off = (size_t)v->t.offset, bytes = (((off + n) * dsize(v->t.dtype)) + 3) & ~(size_t)3;
    void *host = malloc(bytes + 4);
    CHECK(wgc_buffer_read(v->buf, 0, host, bytes));
    double *r = malloc((n + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        switch (v->t.dtype) {
        case WGC_DTYPE_F32: r[i] = ((float *)host)[off + i]; break;
        case WGC_DTYPE_F16: r[i] = f16_to_f32(((uint16_t *)host)[off + i]); break;
        case WGC_DTYPE_I32: r[i] = ((int32_t *)host)[off + i]; break;
        default: r[i] = ((uint32_t *)host)[off + i]; break;
        }
    }
    free(host);
    return r;
}
static void vec_free(Vec *v) { wgc_buffer_release(v->buf); }

/* Compare with the header's rules; `label[i]` names the inputs of element i. */
static void check(const char *what, WgcDtype d, const double *got, const double *ref, size_t n, double atol, double rtol,
                  const char *(*label)(size_t, char *, size_t)) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        int ok;
        if (isnan(r)) ok = isnan(g);
        else if (isinf(r)) ok = g == r;
        else if (isnan(g) || isinf(g)) ok = 0;
        else if (fabs(r) < smallest_normal(d)) ok = fabs(g) < smallest_normal(d) || fabs(g - r) <= atol; /* subnormal */
        else ok = fabs(g - r) <= atol + rtol * fabs(r);
        if (!ok) {
            char buf[96];
            if (bad < 6) fprintf(stderr, "%s %s: %s: got %.9g, expected %.9g\n", what, dname(d), label(i, buf, sizeof buf), g, r);
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr, "%s %s: %d of %zu wrong\n", what, dname(d), bad, n);
        g_failures++;
    }
}

/* Edge values: specials, signed zeros, small integers, halves, the
 * extremes of the dtype's normal range, and values around exp's overflow. */
#define NE 20
static double edges[NE];
static void set_edges(WgcDtype d) {
    int h = d == WGC_DTYPE_F16;
    double e[NE] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1, -1, 0.5, -0.5, 2, -2, 3, -3, 2.5,
                    h ? 60000 : 1e30, h ? -60000 : -1e30, h ? 1e-4 : 1e-30, h ? -1e-4 : -1e-30, 88.5, -7.25};
    for (int i = 0; i < NE; i++) edges[i] = round_to(d, e[i]);
}
static const char *pair_label(size_t i, char *buf, size_t len) {
    snprintf(buf, len, "x = %g, y = %g", edges[i / NE], edges[i % NE]);
    return buf;
}
static const char *one_label(size_t i, char *buf, size_t len) {
    snprintf(buf, len, "x = %g", edges[i]);
    return buf;
}
static const char *index_label(size_t i, char *buf, size_t len) {
    snprintf(buf, len, "element %zu", i);
    return buf;
}

/* pow's f32 bound: rtol 1e-6 (1 + |y log2|x||); f16: its rounding. */
static int pow_ok(WgcDtype d, double x, double y, double got, double ref) {
    if (isnan(ref)) return isnan(got);
    if (isinf(ref)) return got == ref;
    if (fabs(ref) < smallest_normal(d) && fabs(got) < smallest_normal(d)) return 1;
    double growth = fabs(y * log2(fabs(x)));
    double rtol = d == WGC_DTYPE_F16 ? 2e-3 : 1e-6 * (1 + (isfinite(growth) ? growth : 0));
    if (ref == 0 && got == 0 && signbit(ref) != signbit(got)) return 0; /* e.g. pow(-0, 3) = -0 */
    return fabs(got - ref) <= rtol * fabs(ref);
}
static void check_pow(const char *what, WgcDtype d, const double *x, const double *y, const double *got, const double *ref,
                      size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!pow_ok(d, x[i], y[i], got[i], ref[i])) {
            fprintf(stderr, "%s %s: x = %g, y = %g: got %.9g, expected %.9g\n", what, dname(d), x[i], y[i], got[i], ref[i]);
            g_failures++;
        }
}

/* The header's policy in double precision. */
static double binary_ref(WgcBinaryOp op, double x, double y) {
    int nan = isnan(x) || isnan(y);
    switch (op) {
    case WGC_BINARY_OP_ADD: return x + y;
    case WGC_BINARY_OP_SUB: return x - y;
    case WGC_BINARY_OP_MUL: return x * y;
    case WGC_BINARY_OP_DIV: return x / y;
    case WGC_BINARY_OP_POW: return pow(x, y); /* C99 Annex F */
    case WGC_BINARY_OP_MAXIMUM: return nan ? NAN : x > y ? x : y;
    case WGC_BINARY_OP_MINIMUM: return nan ? NAN : x < y ? x : y;
    case WGC_BINARY_OP_EQ: return x == y;
    case WGC_BINARY_OP_NE: return x != y;
    case WGC_BINARY_OP_LT: return x < y;
    case WGC_BINARY_OP_LE: return x <= y;
    case WGC_BINARY_OP_GT: return x > y;
    case WGC_BINARY_OP_GE: return x >= y;
    default: /* an op the header gained: it needs a reference here */
        fprintf(stderr, "no reference for binary op %s\n", binary_op_name(op));
        g_failures++;
        return NAN;
    }
}

/* Every float binary op on every pair of edge values, tensor and scalar forms. */
static void test_binary_edges(WgcDtype d) {
    set_edges(d);
    double xs[NE * NE], ys[NE * NE], ref[NE * NE];
    for (int i = 0; i < NE * NE; i++) xs[i] = edges[i / NE], ys[i] = edges[i % NE];
    for (int op = WGC_BINARY_OP_ADD; op < WGC_NUM_BINARY_OPS; op++) {
        int cmp = op >= WGC_BINARY_OP_EQ;
        WgcDtype od = cmp ? WGC_DTYPE_U32 : d;
        for (int i = 0; i < NE * NE; i++) ref[i] = cmp ? binary_ref(op, xs[i], ys[i]) : round_to(d, binary_ref(op, xs[i], ys[i]));
        double rtol = 0;
        if (op == WGC_BINARY_OP_DIV) rtol = d == WGC_DTYPE_F16 ? 2e-3 : 1e-6;
        for (size_t off = 0; off < 2; off++) {
            Vec a = vec_of(d, xs, NE * NE, off), b = vec_of(d, ys, NE * NE, off), o = vec_zeros(od, NE * NE, off);
            CHECK(wgc_op_binary(env.stream, op, &a.t, &b.t, &o.t));
            double *got = vec_read(&o);
            char what[64];
            snprintf(what, sizeof what, "%s (offset %zu)", binary_op_name(op), off);
            if (op == WGC_BINARY_OP_POW) check_pow(what, d, xs, ys, got, ref, NE * NE);
            else check(what, d, got, ref, NE * NE, 0, rtol, pair_label);
            free(got);
            vec_free(&a);
            vec_free(&b);
            vec_free(&o);
        }
        /* a OP scalar, with edge values as the scalar (both layouts). */
        static const int scalars[8] = {0, 1, 3, 6, 9, 13, 15, 18};
        for (int js = 0; js < 8; js++) {
            int j = scalars[js];
            double col[NE], sref[NE], sy[NE];
            for (int i = 0; i < NE; i++) {
                col[i] = edges[i];
                sy[i] = edges[j];
                sref[i] = cmp ? binary_ref(op, edges[i], edges[j]) : round_to(d, binary_ref(op, edges[i], edges[j]));
            }
            for (size_t off = 0; off < 2; off++) {
                Vec a = vec_of(d, col, NE, off * 4), o = vec_zeros(od, NE, off);
                CHECK(wgc_op_binary_scalar(env.stream, op, &a.t, edges[j], &o.t));
                double *got = vec_read(&o);
                char what[64];
                snprintf(what, sizeof what, "%s scalar %g", binary_op_name(op), edges[j]);
                if (op == WGC_BINARY_OP_POW) check_pow(what, d, col, sy, got, sref, NE);
                else check(what, d, got, sref, NE, 0, rtol, one_label);
                free(got);
                vec_free(&a);
                vec_free(&o);
            }
        }
    }
}

static double unary_ref(WgcUnaryOp op, double x) {
    switch (op) {
    case WGC_UNARY_OP_NEG: return -x;
    case WGC_UNARY_OP_ABS: return fabs(x);
    case WGC_UNARY_OP_EXP: return exp(x);
    case WGC_UNARY_OP_LOG: return log(x);
    case WGC_UNARY_OP_SQRT: return sqrt(x);
    case WGC_UNARY_OP_RSQRT: return 1 / sqrt(x);
    case WGC_UNARY_OP_SIN: return sin(x);
    case WGC_UNARY_OP_COS: return cos(x);
    case WGC_UNARY_OP_TANH: return tanh(x);
    case WGC_UNARY_OP_SIGMOID: return 1 / (1 + exp(-x));
    case WGC_UNARY_OP_RELU: return isnan(x) ? x : x > 0 ? x : 0;
    case WGC_UNARY_OP_GELU_ERF: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case WGC_UNARY_OP_GELU_TANH: return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case WGC_UNARY_OP_SILU: return x / (1 + exp(-x));
    case WGC_UNARY_OP_RELU6: return isnan(x) ? x : x < 0 ? 0 : x > 6 ? 6 : x;
    case WGC_UNARY_OP_HARDSWISH: return isnan(x) || x >= 3 ? x : x * (x + 3 < 0 ? 0 : x + 3) / 6; /* -inf: NaN */
    default: /* an op the header gained: it needs a reference here */
        fprintf(stderr, "no reference for unary op %s\n", unary_op_name(op));
        g_failures++;
        return NAN;
    }
}

static void test_unary_edges(WgcDtype d) {
    set_edges(d);
    for (int op = WGC_UNARY_OP_NEG; op < WGC_NUM_UNARY_OPS; op++) {
        double ref[NE];
        for (int i = 0; i < NE; i++) ref[i] = round_to(d, unary_ref(op, edges[i]));
        /* Beyond |x| = 4e5 sin and cos are the adapter's: only NaN/inf are checked there. */
        if (op == WGC_UNARY_OP_SIN || op == WGC_UNARY_OP_COS)
            for (int i = 0; i < NE; i++)
                if (fabs(edges[i]) > 4e5 && isfinite(edges[i])) ref[i] = NAN;
        double atol = d == WGC_DTYPE_F16 ? 2e-3 : 1e-6, rtol = d == WGC_DTYPE_F16 ? 2e-3 : 1e-6;
        if (op <= WGC_UNARY_OP_ABS || op == WGC_UNARY_OP_RELU) atol = rtol = 0;
        for (size_t off = 0; off < 2; off++) {
            Vec a = vec_of(d, edges, NE, off), o = vec_zeros(d, NE, off);
            CHECK(wgc_op_unary(env.stream, op, &a.t, &o.t));
            double *got = vec_read(&o);
            if (op == WGC_UNARY_OP_SIN || op == WGC_UNARY_OP_COS)
                for (int i = 0; i < NE; i++)
                    if (fabs(edges[i]) > 4e5 && isfinite(edges[i]) && fabs(got[i]) <= 1) got[i] = NAN;
            char what[64];
            snprintf(what, sizeof what, "%s (offset %zu)", unary_op_name(op), off);
            check(what, d, got, ref, NE, atol, rtol, one_label);
            /* -0 keeps its sign where IEEE says so. */
            if (op == WGC_UNARY_OP_NEG || op == WGC_UNARY_OP_SIN || op == WGC_UNARY_OP_TANH || op == WGC_UNARY_OP_SQRT)
                for (int i = 0; i < NE; i++)
                    if (edges[i] == 0 && signbit(got[i]) != signbit(ref[i])) {
                        fprintf(stderr, "%s %s of %g: got %g\n", unary_op_name(op), dname(d), edges[i], got[i]);
                        g_failures++;
                    }
            free(got);
            vec_free(&a);
            vec_free(&o);
        }
    }
    /* leaky_relu and clamp keep NaN, and bound infinities. */
    double lref[NE], cref[NE];
    for (int i = 0; i < NE; i++) {
        double x = edges[i];
        lref[i] = x >= 0 ? x : round_to(d, x * (double)0.125f);
        cref[i] = isnan(x) ? x : x < -1.5 ? -1.5 : x > 2.5 ? 2.5 : x;
    }
    for (size_t off = 0; off < 2; off++) {
        Vec a = vec_of(d, edges, NE, off), o = vec_zeros(d, NE, off);
        CHECK(wgc_op_leaky_relu(env.stream, &a.t, 0.125f, &o.t));
        double *got = vec_read(&o);
        check("leaky_relu", d, got, lref, NE, 0, 0, one_label);
        free(got);
        CHECK(wgc_op_clamp(env.stream, &a.t, -1.5, 2.5, &o.t));
        got = vec_read(&o);
        check("clamp", d, got, cref, NE, 0, 0, one_label);
        free(got);
        vec_free(&a);
        vec_free(&o);
    }
}

/* f16 scalars are rounded once from the double: 1 + 2^-11 + 2^-30 lies
 * just above the midpoint between 1 and 1 + 2^-10, so it rounds up. */
static void test_f16_scalars(void) {
    const double s = 1 + ldexp(1, -11) + ldexp(1, -30), want = 1 + ldexp(1, -10);
    double zeros[5] = {0, 0, 0, 0, 0};
    Vec a = vec_of(WGC_DTYPE_F16, zeros, 5, 0), o = vec_zeros(WGC_DTYPE_F16, 5, 0);
    CHECK(wgc_op_fill(env.stream, &o.t, s));
    double *got = vec_read(&o);
    EXPECT(got[0] == want && got[4] == want);
    free(got);
    CHECK(wgc_op_binary_scalar(env.stream, WGC_BINARY_OP_ADD, &a.t, s, &o.t));
    got = vec_read(&o);
    EXPECT(got[0] == want && got[4] == want);
    free(got);
    CHECK(wgc_op_clamp(env.stream, &a.t, s, 2, &o.t));
    got = vec_read(&o);
    EXPECT(got[0] == want && got[4] == want);
    free(got);
    CHECK(wgc_op_clamp(env.stream, &a.t, -1, -s, &o.t));
    got = vec_read(&o);
    EXPECT(got[0] == -want && got[4] == -want);
    free(got);
    /* Beyond the range: 65519 rounds to 65504, 65520 to inf; NaN stays NaN. */
    CHECK(wgc_op_fill(env.stream, &o.t, 65519.0));
    got = vec_read(&o);
    EXPECT(got[2] == 65504);
    free(got);
    CHECK(wgc_op_fill(env.stream, &o.t, -65520.0));
    got = vec_read(&o);
    EXPECT(isinf(got[2]) && got[2] < 0);
    free(got);
    CHECK(wgc_op_fill(env.stream, &o.t, NAN));
    got = vec_read(&o);
    EXPECT(isnan(got[0]) && isnan(got[4]));
    free(got);
    vec_free(&a);
    vec_free(&o);
    /* f32: one rounding too, inf beyond the range. */
    Vec f = vec_zeros(WGC_DTYPE_F32, 5, 0);
    CHECK(wgc_op_fill(env.stream, &f.t, 1e39));
    got = vec_read(&f);
    EXPECT(isinf(got[1]) && got[1] > 0);
    free(got);
    vec_free(&f);
}

/* Integer to float conversions round to nearest even. */
static void test_int_to_float(void) {
    double iv[8] = {16777217, 16777219, -16777217, 2147483647, -2147483648.0, 2049, 2051, 65519};
    double i2f32[8] = {16777216, 16777220, -16777216, 2147483648.0, -2147483648.0, 2049, 2051, 65519};
    double i2f16[8] = {INFINITY, INFINITY, -INFINITY, INFINITY, -INFINITY, 2048, 2052, 65504};
    double uv[4] = {4294967295.0, 16777217, 65520, 70000};
    double u2f32[4] = {4294967296.0, 16777216, 65520, 70000};
    double u2f16[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
    for (size_t off = 0; off < 2; off++) {
        Vec i = vec_of(WGC_DTYPE_I32, iv, 8, off), u = vec_of(WGC_DTYPE_U32, uv, 4, off);
        Vec f = vec_zeros(WGC_DTYPE_F32, 8, off), h = vec_zeros(WGC_DTYPE_F16, 8, off);
        CHECK(wgc_op_cast(env.stream, &i.t, &f.t));
        double *got = vec_read(&f);
        check("cast i32 -> f32", WGC_DTYPE_F32, got, i2f32, 8, 0, 0, index_label);
        free(got);
        CHECK(wgc_op_cast(env.stream, &i.t, &h.t));
        got = vec_read(&h);
        check("cast i32 -> f16", WGC_DTYPE_F16, got, i2f16, 8, 0, 0, index_label);
        free(got);
        f.t.shape[0] = h.t.shape[0] = 4;
        CHECK(wgc_op_cast(env.stream, &u.t, &f.t));
        got = vec_read(&f);
        check("cast u32 -> f32", WGC_DTYPE_F32, got, u2f32, 4, 0, 0, index_label);
        free(got);
        CHECK(wgc_op_cast(env.stream, &u.t, &h.t));
        got = vec_read(&h);
        check("cast u32 -> f16", WGC_DTYPE_F16, got, u2f16, 4, 0, 0, index_label);
        free(got);
        vec_free(&i);
        vec_free(&u);
        vec_free(&f);
        vec_free(&h);
    }
}

/* Integer arange truncates start and step and wraps them modulo 2^32. */
static void test_arange_wraps(void) {
    const double starts[4] = {3e9, -3e9, 1099511627781.0 /* 2^40 + 5 */, -1};
    for (int k = 0; k < 4; k++) {
        for (int u = 0; u < 2; u++) {
            WgcDtype d = u ? WGC_DTYPE_U32 : WGC_DTYPE_I32;
            Vec o = vec_zeros(d, 7, 1);
            CHECK(wgc_op_arange(env.stream, &o.t, starts[k], -2.5));
            double *got = vec_read(&o);
            uint32_t base = (uint32_t)(int64_t)fmod(starts[k], 4294967296.0);
            for (int i = 0; i < 7; i++) {
                uint32_t w = base - 2u * (uint32_t)i;
                double want = u ? (double)w : (double)(int32_t)w;
                if (got[i] != want) {
                    fprintf(stderr, "arange %s start %.17g: [%d] = %.17g, expected %.17g\n", u ? "u32" : "i32", starts[k], i,
                            got[i], want);
                    g_failures++;
                    break;
                }
            }
            free(got);
            vec_free(&o);
        }
    }
}

/* random_uniform refuses what PyTorch's uniform_ refuses; lo == hi is fine. */
static void test_uniform_bounds(void) {
    Vec f = vec_zeros(WGC_DTYPE_F32, 9, 0), h = vec_zeros(WGC_DTYPE_F16, 9, 0);
    EXPECT_STATUS(wgc_op_random_uniform(env.stream, &f.t, 1, 0, 2, 1), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(env.stream, &f.t, 1, 0, -3e38, 3e38), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(env.stream, &f.t, 1, 0, 0, 1e39), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(env.stream, &h.t, 1, 0, 0, 1e5), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(env.stream, &h.t, 1, 0, -4e4, 4e4), WGC_ERROR_INVALID_ARGUMENT);
    double *got = vec_read(&f);
    EXPECT(got[0] == 0 && got[8] == 0); /* failed calls wrote nothing */
    free(got);
    CHECK(wgc_op_random_uniform(env.stream, &f.t, 1, 0, -2.5, -2.5));
    got = vec_read(&f);
    int same = 1;
    for (int i = 0; i < 9; i++) same &= got[i] == -2.5;
    EXPECT(same);
    free(got);
    CHECK(wgc_op_random_uniform(env.stream, &h.t, 1, 0, -3e4, 3e4));
    got = vec_read(&h);
    int inside = 1;
    for (int i = 0; i < 9; i++) inside &= got[i] >= -3e4 && got[i] <= 3e4;
    EXPECT(inside);
    free(got);
    vec_free(&f);
    vec_free(&h);
}

/* exp (and sigmoid, through it) keep ~1e-6 relative accuracy next to
 * exp's overflow and underflow, where exp2(x * log2(e)) loses |x| ulp. */
static void test_exp_extremes(void) {
    enum { N = 4096 };
    static double x[N], ref[N];
    for (int i = 0; i < N; i++) x[i] = (double)(float)(i < N / 2 ? 80 + 8.72 * i / (N / 2) : -87.3 + 7.3 * (i - N / 2) / (N / 2));
    for (int i = 0; i < N; i++) ref[i] = (double)(float)exp(x[i]);
    Vec a = vec_of(WGC_DTYPE_F32, x, N, 0), o = vec_zeros(WGC_DTYPE_F32, N, 0);
    CHECK(wgc_op_unary(env.stream, WGC_UNARY_OP_EXP, &a.t, &o.t));
    double *got = vec_read(&o);
    compare_f64("exp near |x| = 88", got, ref, N, 0, 1e-6);
    free(got);
    for (int i = 0; i < N; i++) ref[i] = (double)(float)(1 / (1 + exp(x[i])));
    CHECK(wgc_op_binary_scalar(env.stream, WGC_BINARY_OP_MUL, &a.t, -1, &a.t));
    CHECK(wgc_op_unary(env.stream, WGC_UNARY_OP_SIGMOID, &a.t, &o.t));
    got = vec_read(&o);
    check("sigmoid near x = -88", WGC_DTYPE_F32, got, ref, N / 2, 0, 1e-6, index_label);
    free(got);
    vec_free(&a);
    vec_free(&o);
}

/* log is relatively accurate near 1 (where log(x) is near 0), and so is
 * pow with large exponents, whose error grows with y * log2(x) only. */
static void test_log_pow_near_one(void) {
    enum { N = 4096 };
    static double x[N], y[N], ref[N];
    for (int i = 0; i < N; i++) {
        x[i] = (double)(float)rng_uniform(0.6, 1.4);
        y[i] = (double)(float)rng_uniform(-1e5, 1e5);
        ref[i] = log(x[i]);
    }
    Vec a = vec_of(WGC_DTYPE_F32, x, N, 0), b = vec_of(WGC_DTYPE_F32, y, N, 0), o = vec_zeros(WGC_DTYPE_F32, N, 0);
    CHECK(wgc_op_unary(env.stream, WGC_UNARY_OP_LOG, &a.t, &o.t));
    double *got = vec_read(&o);
    compare_f64("log near 1", got, ref, N, 0, 1e-6);
    free(got);
    /* Keep results finite: x within 4e-4 of 1, so |y log x| <= 40. */
    for (int i = 0; i < N; i++) {
        x[i] = (double)(float)(1 + (x[i] - 1) / 1000);
        ref[i] = (double)(float)pow(x[i], y[i]);
    }
    vec_free(&a);
    a = vec_of(WGC_DTYPE_F32, x, N, 0);
    CHECK(wgc_op_binary(env.stream, WGC_BINARY_OP_POW, &a.t, &b.t, &o.t));
    got = vec_read(&o);
    check_pow("pow near 1, |y| <= 1e5", WGC_DTYPE_F32, x, y, got, ref, N);
    free(got);
    vec_free(&a);
    vec_free(&b);
    vec_free(&o);
}

/* sin and cos within 1e-6 for |x| <= 4e5, including near multiples of pi. */
static void test_trig_large(void) {
    enum { N = 8192 };
    static double x[N], ref[N];
    for (int i = 0; i < N; i++) {
        double v = i % 2 ? rng_uniform(-4e5, 4e5) : floor(rng_uniform(-1.2e5, 1.2e5)) * 3.14159265358979323846;
        x[i] = (double)(float)v;
    }
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < N; i++) ref[i] = c ? cos(x[i]) : sin(x[i]);
        Vec a = vec_of(WGC_DTYPE_F32, x, N, 1), o = vec_zeros(WGC_DTYPE_F32, N, 0);
        CHECK(wgc_op_unary(env.stream, c ? WGC_UNARY_OP_COS : WGC_UNARY_OP_SIN, &a.t, &o.t));
        double *got = vec_read(&o);
        compare_f64(c ? "cos of |x| <= 4e5" : "sin of |x| <= 4e5", got, ref, N, 1e-6, 0);
        free(got);
        vec_free(&a);
        vec_free(&o);
    }
}

int main(void) {
    env = test_env();
    WgcDtype dts[2] = {WGC_DTYPE_F32, WGC_DTYPE_F16};
    for (int i = 0; i < 2; i++) {
        test_binary_edges(dts[i]);
        test_unary_edges(dts[i]);
    }
    test_f16_scalars();
    test_int_to_float();
    test_arange_wraps();
    test_uniform_bounds();
    test_exp_extremes();
    test_log_pow_near_one();
    test_trig_large();
    test_env_release(&env);
    return test_finish("test_numerics");
}
