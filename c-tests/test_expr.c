/* Elementwise expressions (wgc_expr_*, wgc_op_expr): fused results compared
 * bit for bit with the chain of separate operators (but for what the
 * header allows: an f32 product feeding an add may be contracted into one
 * fma, and a NaN's payload is unspecified) and against double
 * references, over f32, f16, bf16, i32 and u32; odd sizes, vec4 sizes,
 * transposed, offset, reversed and broadcast views; several outputs;
 * parameters changing between launches with the compiled kernel reused;
 * NaN and infinities; and every kind of bad expression or launch, with the
 * output left untouched. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_views.h"

static T make_out(TestEnv *env, WgcDtype d, int rank, const int64_t *shape, int layout) {
    return make(env, d, rank, shape, layout, 0, 0, NULL);
}

static double tol(WgcDtype d) {
    return d == WGC_DTYPE_F32 ? 2e-6 : d == WGC_DTYPE_F16 ? 4e-3 : 2e-2;
}

/* The chain y = relu(a*b + c).sqrt() * 0.5 + sigmoid(c). */
static WgcExpr *chain_expr(WgcDtype d) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    /* A second reference, dropped again: the expression stays usable. */
    wgc_expr_retain(e);
    wgc_expr_release(e);
    wgc_expr_retain(NULL);
    wgc_expr_release(NULL);
    uint32_t a = N(wgc_expr_input(e, d, &id_));
    uint32_t b = N(wgc_expr_input(e, d, &id_));
    uint32_t c = N(wgc_expr_input(e, d, &id_));
    uint32_t ab = N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, a, b, &id_));
    uint32_t s = N(wgc_expr_binary(e, WGC_BINARY_OP_ADD, ab, c, &id_));
    uint32_t r = N(wgc_expr_unary(e, WGC_UNARY_OP_RELU, s, &id_));
    uint32_t q = N(wgc_expr_unary(e, WGC_UNARY_OP_SQRT, r, &id_));
    uint32_t half = N(wgc_expr_scalar(e, d, 0.5, &id_));
    uint32_t h = N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, q, half, &id_));
    uint32_t sg = N(wgc_expr_unary(e, WGC_UNARY_OP_SIGMOID, c, &id_));
    uint32_t y = N(wgc_expr_binary(e, WGC_BINARY_OP_ADD, h, sg, &id_));
    CHECK(wgc_expr_output(e, y));
    return e;
}

/* The same chain as separate operators, through contiguous temporaries. */
static void chain_separate(TestEnv *env, WgcDtype d, const WgcTensor *a, const WgcTensor *b, const WgcTensor *c,
                           const WgcTensor *out) {
    int64_t shape[8];
    for (uint32_t i = 0; i < out->rank; i++) shape[i] = out->shape[i];
    size_t n = count((int)out->rank, shape);
    WgcBuffer *tb[3];
    WgcTensor t[3];
    for (int i = 0; i < 3; i++) {
        CHECK(wgc_buffer_create(env->device, (n * esize(d) + 15) & ~(size_t)15, WGC_BUFFER_USAGE_STORAGE, &tb[i]));
        t[i] = tensor_of(tb[i], d, out->rank, shape);
    }
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_MUL, a, b, &t[0]));
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_ADD, &t[0], c, &t[1]));
    CHECK(wgc_op_unary(env->stream, WGC_UNARY_OP_RELU, &t[1], &t[0]));
    CHECK(wgc_op_unary(env->stream, WGC_UNARY_OP_SQRT, &t[0], &t[1]));
    CHECK(wgc_op_binary_scalar(env->stream, WGC_BINARY_OP_MUL, &t[1], 0.5, &t[0]));
    CHECK(wgc_op_unary(env->stream, WGC_UNARY_OP_SIGMOID, c, &t[2]));
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_ADD, &t[0], &t[2], out));
    for (int i = 0; i < 3; i++) wgc_buffer_release(tb[i]);
}

static double q(WgcDtype d, double v) { return d == WGC_DTYPE_F32 ? (double)(float)v : quant(d, v); }
/* The chain from its sum s = a*b + c (as rounded to d). */
static double chain_from_sum(WgcDtype d, double s, double c) {
    double r = isnan(s) ? s : s > 0 ? s : 0;
    double h = q(d, q(d, sqrt(r)) * 0.5);
    return q(d, h + q(d, 1.0 / (1.0 + exp(-c))));
}
static double chain_ref(WgcDtype d, double a, double b, double c) { return chain_from_sum(d, q(d, q(d, a * b) + c), c); }
/* Where the f32 sum a*b + c is contracted into one fma (WGSL allows it;
 * the header says so), the fused chain may instead give the chain of the
 * fma's sum: true if y is that, within f32's tolerance, and the fma
 * changes the sum (elsewhere the fused result must be the separate one). */
static int contracted_chain(double y, float a, float b, float c) {
    volatile float product = a * b; /* rounded, whatever the C compiler contracts */
    float fused = fmaf(a, b, c), separate = product + c;
    if (fused == separate || (isnan(fused) && isnan(separate))) return 0;
    double want = chain_from_sum(WGC_DTYPE_F32, fused, c);
    if (isnan(want) || isnan(y)) return isnan(want) && isnan(y);
    return fabs(y - want) <= tol(WGC_DTYPE_F32) * (1 + fabs(want));
}

/* Special values, mixed into the chain's inputs. */
static const double SPECIALS[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, 3.0, -2.5};
static double specials(size_t i) {
    if (i % 3 == 0) return SPECIALS[(i / 3) % (sizeof SPECIALS / sizeof SPECIALS[0])];
    return rng_uniform(-4, 4);
}

static void test_chain(TestEnv *env, WgcDtype d, int rank, const int64_t *shape, int layout, int with_specials) {
    WgcExpr *e = chain_expr(d);
    double (*gen)(size_t) = with_specials ? specials : NULL;
    T a = make(env, d, rank, shape, layout, -3, 3, gen);
    T b = make(env, d, rank, shape, layout == TRANSPOSED ? CONTIG : layout, -3, 3, gen);
    T c = make(env, d, rank, shape, CONTIG, -3, 3, gen);
    T y = make_out(env, d, rank, shape, layout);
    T z = make_out(env, d, rank, shape, CONTIG);
    WgcTensor ins[3] = {a.t, b.t, c.t};
    CHECK(wgc_op_expr(env->stream, e, ins, 3, &y.t, 1, NULL, 0));
    chain_separate(env, d, &a.t, &b.t, &c.t, &z.t);
    uint32_t *yb = malloc(a.n * 4), *zb = malloc(a.n * 4);
    EXPECT(readback(&y, yb));
    readback(&z, zb);
    int bad = 0;
    double *ref = malloc(a.n * sizeof(double));
    for (size_t i = 0; i < a.n; i++) {
        int both_nan = isnan(y.val[i]) && isnan(z.val[i]);
        int contracted =
            d == WGC_DTYPE_F32 && contracted_chain(y.val[i], (float)a.val[i], (float)b.val[i], (float)c.val[i]);
        ref[i] = contracted ? chain_from_sum(d, fmaf((float)a.val[i], (float)b.val[i], (float)c.val[i]), c.val[i])
                            : chain_ref(d, a.val[i], b.val[i], c.val[i]);
        if (yb[i] != zb[i] && !both_nan && !contracted && bad++ < 5)
            fprintf(stderr, "chain dtype %d layout %d: element %zu: fused 0x%x, separate 0x%x\n", d, layout, i, yb[i],
                    zb[i]);
    }
    if (bad) g_failures++;
    char what[64];
    snprintf(what, sizeof what, "chain dtype %d layout %d n %zu", d, layout, a.n);
    compare_f64(what, y.val, ref, a.n, tol(d), tol(d));
    free(ref);
    free(yb);
    free(zb);
    release(&a), release(&b), release(&c), release(&y), release(&z);
    wgc_expr_release(e);
}

static uint64_t cached_kernels(TestEnv *env) {
    WgcMemoryStats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    CHECK(wgc_device_memory_stats(env->device, &s));
    return s.cached_kernels;
}

/* y0 = a * scale + bias (bias a row, broadcast), y1 = a > bias (u32),
 * y2 = f32(y0 as i32) + col (col a column): three outputs, a parameter
 * that changes between launches, and rows that change; one compile. */
static void test_broadcast_params_outputs(TestEnv *env, int layout, int cols) {
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t a = N(wgc_expr_input(e, WGC_DTYPE_F32, &id_));
    uint32_t bias = N(wgc_expr_input(e, WGC_DTYPE_F32, &id_));
    uint32_t col = N(wgc_expr_input(e, WGC_DTYPE_F32, &id_));
    uint32_t scale = N(wgc_expr_param(e, WGC_DTYPE_F32, &id_));
    uint32_t y0 = N(wgc_expr_fma(e, a, scale, bias, &id_));
    uint32_t y1 = N(wgc_expr_binary(e, WGC_BINARY_OP_GT, a, bias, &id_));
    uint32_t yi = N(wgc_expr_cast(e, y0, WGC_DTYPE_I32, &id_));
    uint32_t yf = N(wgc_expr_cast(e, yi, WGC_DTYPE_F32, &id_));
    uint32_t y2 = N(wgc_expr_binary(e, WGC_BINARY_OP_ADD, yf, col, &id_));
    CHECK(wgc_expr_output(e, y0));
    CHECK(wgc_expr_output(e, y1));
    CHECK(wgc_expr_output(e, y2));
    uint64_t before = 0;
    const int rows_list[3] = {5, 17, 9};
    for (int round = 0; round < 3; round++) {
        int64_t rows = rows_list[round];
        int64_t shape[2] = {rows, cols}, row_shape[1] = {cols}, col_shape[2] = {rows, 1};
        T ta = make(env, WGC_DTYPE_F32, 2, shape, layout, -10, 10, NULL);
        T tb = make(env, WGC_DTYPE_F32, 1, row_shape, CONTIG, -10, 10, NULL);
        T tc = make(env, WGC_DTYPE_F32, 2, col_shape, CONTIG, -10, 10, NULL);
        T o0 = make_out(env, WGC_DTYPE_F32, 2, shape, layout);
        T o1 = make_out(env, WGC_DTYPE_U32, 2, shape, CONTIG);
        T o2 = make_out(env, WGC_DTYPE_F32, 2, shape, REVERSED);
        double p = round == 1 ? -0.75 : 1.5 + round;
        WgcTensor ins[3] = {ta.t, tb.t, tc.t}, outs[3] = {o0.t, o1.t, o2.t};
        CHECK(wgc_op_expr(env->stream, e, ins, 3, outs, 3, &p, 1));
        if (round == 0) before = cached_kernels(env);
        EXPECT(readback(&o0, NULL));
        EXPECT(readback(&o1, NULL));
        EXPECT(readback(&o2, NULL));
        size_t n = ta.n;
        double *r0 = malloc(n * 8), *r1 = malloc(n * 8), *r2 = malloc(n * 8);
        for (size_t i = 0; i < n; i++) {
            size_t r = i / (size_t)cols, c = i % (size_t)cols;
            r0[i] = (float)fma((float)ta.val[i], (float)p, tb.val[c]);
            r1[i] = ta.val[i] > tb.val[c];
            /* From the GPU's y0: an unfused fma (WGSL allows either) may
             * land an ulp away, across an integer. */
            r2[i] = (float)(trunc(o0.val[i]) + tc.val[r]);
        }
        compare_f64("broadcast y0", o0.val, r0, n, 4e-6, 2e-7);
        compare_f64("broadcast y1", o1.val, r1, n, 0, 0);
        compare_f64("broadcast y2", o2.val, r2, n, 0, 0);
        free(r0), free(r1), free(r2);
        release(&ta), release(&tb), release(&tc), release(&o0), release(&o1), release(&o2);
    }
    /* New rows and parameter values: the first launch's kernel serves. */
    uint64_t compiled = cached_kernels(env) - before;
    if (compiled != 0) {
        fprintf(stderr, "broadcast (layout %d, %d cols): %llu more kernels compiled for new sizes and parameters\n",
                layout, cols, (unsigned long long)compiled);
        g_failures++;
    }
    wgc_expr_release(e);
}

/* vec4 units with a row broadcast and a splat column: silu(g) * u + b[row]
 * in f16/bf16/f32 over dense rows, bit for bit with separate operators
 * (f32: or the fma of the separate silu, u and b, where the product and
 * the add are contracted). */
static void test_swiglu_vec4(TestEnv *env, WgcDtype d) {
    int64_t shape[2] = {6, 40}, col_shape[2] = {6, 1};
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t g = N(wgc_expr_input(e, d, &id_));
    uint32_t u = N(wgc_expr_input(e, d, &id_));
    uint32_t b = N(wgc_expr_input(e, d, &id_));
    uint32_t s = N(wgc_expr_unary(e, WGC_UNARY_OP_SILU, g, &id_));
    uint32_t m = N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, s, u, &id_));
    uint32_t y = N(wgc_expr_binary(e, WGC_BINARY_OP_ADD, m, b, &id_));
    CHECK(wgc_expr_output(e, y));
    T tg = make(env, d, 2, shape, CONTIG, -6, 6, NULL);
    T tu = make(env, d, 2, shape, CONTIG, -2, 2, NULL);
    T tb = make(env, d, 2, col_shape, CONTIG, -1, 1, NULL);
    T ty = make_out(env, d, 2, shape, CONTIG);
    T tz = make_out(env, d, 2, shape, CONTIG);
    WgcTensor ins[3] = {tg.t, tu.t, tb.t};
    CHECK(wgc_op_expr(env->stream, e, ins, 3, &ty.t, 1, NULL, 0));
    /* Separate: silu into ts, ts * u into tmp, tmp + b into z. */
    T ts = make_out(env, d, 2, shape, CONTIG);
    T tmp = make_out(env, d, 2, shape, CONTIG);
    CHECK(wgc_op_unary(env->stream, WGC_UNARY_OP_SILU, &tg.t, &ts.t));
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_MUL, &ts.t, &tu.t, &tmp.t));
    CHECK(wgc_op_binary(env->stream, WGC_BINARY_OP_ADD, &tmp.t, &tb.t, &tz.t));
    uint32_t *yb = malloc(tg.n * 4), *zb = malloc(tg.n * 4);
    EXPECT(readback(&ty, yb));
    readback(&tz, zb);
    readback(&ts, NULL);
    double *ref = malloc(tg.n * 8);
    int bad = 0;
    for (size_t i = 0; i < tg.n; i++) {
        double x = tg.val[i];
        ref[i] = q(d, q(d, q(d, x / (1 + exp(-x))) * tu.val[i]) + tb.val[i / 40]);
        int contracted = d == WGC_DTYPE_F32 && ty.val[i] == (double)fmaf((float)ts.val[i], (float)tu.val[i], (float)tb.val[i / 40]);
        if (yb[i] != zb[i] && !contracted && bad++ < 5)
            fprintf(stderr, "swiglu dtype %d: element %zu: fused 0x%x, separate 0x%x\n", d, i, yb[i], zb[i]);
    }
    if (bad) g_failures++;
    compare_f64("swiglu", ty.val, ref, tg.n, tol(d), tol(d));
    free(ref), free(yb), free(zb);
    release(&tg), release(&tu), release(&tb), release(&ty), release(&tz), release(&ts), release(&tmp);
    wgc_expr_release(e);
}

/* Integers: (a / b) with zeros and INT32_MIN / -1, abs, neg, relu, and u32
 * round trips, exactly. */
static double int_gen(size_t i) {
    static const double v[] = {-2147483648.0, -1, 0, 1, 7, -7, 2147483647.0, 100, -100, 3};
    return v[(i * 7 + i / 10) % 10];
}
static void test_integers(TestEnv *env) {
    int64_t shape[1] = {103};
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t a = N(wgc_expr_input(e, WGC_DTYPE_I32, &id_));
    uint32_t b = N(wgc_expr_input(e, WGC_DTYPE_I32, &id_));
    uint32_t dv = N(wgc_expr_binary(e, WGC_BINARY_OP_DIV, a, b, &id_));
    uint32_t ab = N(wgc_expr_unary(e, WGC_UNARY_OP_ABS, dv, &id_));
    uint32_t ng = N(wgc_expr_unary(e, WGC_UNARY_OP_NEG, b, &id_));
    uint32_t rl = N(wgc_expr_unary(e, WGC_UNARY_OP_RELU, ng, &id_));
    uint32_t s = N(wgc_expr_binary(e, WGC_BINARY_OP_ADD, ab, rl, &id_));
    uint32_t u = N(wgc_expr_cast(e, s, WGC_DTYPE_U32, &id_));
    uint32_t k = N(wgc_expr_scalar(e, WGC_DTYPE_U32, 3, &id_));
    uint32_t m = N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, u, k, &id_));
    CHECK(wgc_expr_output(e, m));
    T ta = make(env, WGC_DTYPE_I32, 1, shape, CONTIG, 0, 0, int_gen);
    T tb = make(env, WGC_DTYPE_I32, 1, shape, REVERSED, 0, 0, int_gen);
    T ty = make_out(env, WGC_DTYPE_U32, 1, shape, OFFSET3);
    WgcTensor ins[2] = {ta.t, tb.t};
    CHECK(wgc_op_expr(env->stream, e, ins, 2, &ty.t, 1, NULL, 0));
    EXPECT(readback(&ty, NULL));
    double *ref = malloc(ta.n * 8);
    for (size_t i = 0; i < ta.n; i++) {
        int64_t x = (int64_t)ta.val[i], y = (int64_t)tb.val[i];
        int32_t q32 = y == 0 ? 0 : (x == INT32_MIN && y == -1) ? INT32_MIN : (int32_t)(x / y);
        uint32_t absq = (uint32_t)(q32 < 0 ? -(int64_t)q32 : q32); /* abs(INT32_MIN) wraps */
        int32_t neg = (int32_t)(uint32_t)(0u - (uint32_t)(int32_t)y);
        uint32_t sum = absq + (uint32_t)(neg > 0 ? neg : 0);
        ref[i] = (double)(uint32_t)(sum * 3u);
    }
    compare_f64("integers", ty.val, ref, ta.n, 0, 0);
    free(ref);
    release(&ta), release(&tb), release(&ty);
    wgc_expr_release(e);
}

/* Casts between floats and integers with NaN and out-of-range values, bit
 * for bit with wgc_op_cast but for NaN payloads (a NaN must stay NaN; its
 * payload is unspecified). */
static void test_casts(TestEnv *env, WgcDtype from, WgcDtype to) {
    int64_t shape[1] = {37};
    WgcExpr *e = NULL;
    CHECK(wgc_expr_create(&e));
    uint32_t a = N(wgc_expr_input(e, from, &id_));
    uint32_t y = N(wgc_expr_cast(e, a, to, &id_));
    CHECK(wgc_expr_output(e, y));
    T ta = make(env, from, 1, shape, CONTIG, -1e3, 1e3, from == WGC_DTYPE_I32 || from == WGC_DTYPE_U32 ? int_gen : specials);
    T ty = make_out(env, to, 1, shape, CONTIG);
    T tz = make_out(env, to, 1, shape, CONTIG);
    CHECK(wgc_op_expr(env->stream, e, &ta.t, 1, &ty.t, 1, NULL, 0));
    CHECK(wgc_op_cast(env->stream, &ta.t, &tz.t));
    uint32_t yb[37], zb[37];
    readback(&ty, yb);
    readback(&tz, zb);
    for (size_t i = 0; i < ta.n; i++) {
        if (yb[i] != zb[i] && !(isnan(ty.val[i]) && isnan(tz.val[i]))) {
            fprintf(stderr, "cast %d -> %d: element %zu (%g): fused 0x%x, wgc_op_cast 0x%x\n", from, to, i, ta.val[i],
                    yb[i], zb[i]);
            g_failures++;
            break;
        }
    }
    release(&ta), release(&ty), release(&tz);
    wgc_expr_release(e);
}

/* Bad expressions and launches: exact statuses, and nothing written. */
static void test_misuse(TestEnv *env) {
    WgcExpr *e = NULL;
    uint32_t id = 0;
    EXPECT_STATUS(wgc_expr_create(NULL), WGC_ERROR_NULL_POINTER);
    CHECK(wgc_expr_create(&e));
    EXPECT_STATUS(wgc_expr_input(NULL, WGC_DTYPE_F32, &id), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_expr_input(e, WGC_DTYPE_F32, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_expr_input(e, 99, &id), WGC_ERROR_INVALID_ARGUMENT);
    uint32_t a = N(wgc_expr_input(e, WGC_DTYPE_F32, &id_));
    uint32_t h = N(wgc_expr_input(e, WGC_DTYPE_F16, &id_));
    uint32_t i = N(wgc_expr_input(e, WGC_DTYPE_I32, &id_));
    /* A node not built yet: the only way to write a cycle. */
    EXPECT_STATUS(wgc_expr_unary(e, WGC_UNARY_OP_NEG, 3, &id), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_expr_binary(e, WGC_BINARY_OP_ADD, a, 1000, &id), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_expr_binary(e, WGC_BINARY_OP_ADD, a, h, &id), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_expr_binary(e, 77, a, a, &id), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_expr_unary(e, 77, a, &id), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_expr_unary(e, WGC_UNARY_OP_EXP, i, &id), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_expr_binary(e, WGC_BINARY_OP_POW, i, i, &id), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_expr_where(e, a, a, a, &id), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_expr_fma(e, a, a, h, &id), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_expr_cast(e, a, 42, &id), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_expr_output(e, 9), WGC_ERROR_INVALID_ARGUMENT);

    int64_t shape[2] = {4, 5}, bad_shape[2] = {4, 3};
    T ta = make(env, WGC_DTYPE_F32, 2, shape, CONTIG, -1, 1, NULL);
    T th = make(env, WGC_DTYPE_F16, 2, shape, CONTIG, -1, 1, NULL);
    T ti = make(env, WGC_DTYPE_I32, 2, shape, CONTIG, -5, 5, NULL);
    T ty = make_out(env, WGC_DTYPE_F32, 2, shape, CONTIG);
    T tbad = make(env, WGC_DTYPE_F32, 2, bad_shape, CONTIG, -1, 1, NULL);
    WgcTensor ins[3] = {ta.t, th.t, ti.t};
    /* No outputs yet. */
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, &ty.t, 1, NULL, 0), WGC_ERROR_INVALID_ARGUMENT);
    uint32_t p = N(wgc_expr_param(e, WGC_DTYPE_F32, &id_));
    uint32_t y = N(wgc_expr_binary(e, WGC_BINARY_OP_MUL, a, p, &id_));
    CHECK(wgc_expr_output(e, y));
    double pv = 2.0;
    EXPECT_STATUS(wgc_op_expr(NULL, e, ins, 3, &ty.t, 1, &pv, 1), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_expr(env->stream, NULL, ins, 3, &ty.t, 1, &pv, 1), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_expr(env->stream, e, NULL, 3, &ty.t, 1, &pv, 1), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, &ty.t, 1, NULL, 1), WGC_ERROR_NULL_POINTER);
    /* Missing parameter, wrong counts. */
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, &ty.t, 1, NULL, 0), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 2, &ty.t, 1, &pv, 1), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, NULL, 0, &pv, 1), WGC_ERROR_INVALID_ARGUMENT);
    /* Input dtypes and shapes. */
    WgcTensor swapped[3] = {th.t, ta.t, ti.t};
    EXPECT_STATUS(wgc_op_expr(env->stream, e, swapped, 3, &ty.t, 1, &pv, 1), WGC_ERROR_DTYPE_MISMATCH);
    WgcTensor badin[3] = {tbad.t, th.t, ti.t};
    EXPECT_STATUS(wgc_op_expr(env->stream, e, badin, 3, &ty.t, 1, &pv, 1), WGC_ERROR_SHAPE_MISMATCH);
    /* Output dtype, overlap with an input, a self-overlapping output. */
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, &th.t, 1, &pv, 1), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, &ta.t, 1, &pv, 1), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor zero_stride = ty.t;
    zero_stride.strides[0] = 0;
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, &zero_stride, 1, &pv, 1), WGC_ERROR_INVALID_ARGUMENT);
    WgcTensor past = ty.t;
    past.offset = 1000;
    EXPECT_STATUS(wgc_op_expr(env->stream, e, ins, 3, &past, 1, &pv, 1), WGC_ERROR_OUT_OF_RANGE);
    EXPECT(readback(&ty, NULL));
    for (size_t k = 0; k < ty.n; k++) {
        if (ty.val[k] != 0.0) { /* make_out wrote zeros */
            fprintf(stderr, "a failed launch wrote output element %zu\n", k);
            g_failures++;
            break;
        }
    }
    /* The same expression still launches. */
    CHECK(wgc_op_expr(env->stream, e, ins, 3, &ty.t, 1, &pv, 1));
    readback(&ty, NULL);
    double ref[20];
    for (int k = 0; k < 20; k++) ref[k] = (float)(ta.val[k] * 2.0);
    compare_f64("after misuse", ty.val, ref, 20, 0, 0);
    release(&ta), release(&th), release(&ti), release(&ty), release(&tbad);
    wgc_expr_release(e);

    /* Limits. */
    CHECK(wgc_expr_create(&e));
    for (uint32_t k = 0; k < WGC_EXPR_MAX_INPUTS; k++) N(wgc_expr_input(e, WGC_DTYPE_F32, &id_));
    EXPECT_STATUS(wgc_expr_input(e, WGC_DTYPE_F32, &id), WGC_ERROR_LIMIT_EXCEEDED);
    for (uint32_t k = 0; k < WGC_EXPR_MAX_SCALARS; k++) N(wgc_expr_scalar(e, WGC_DTYPE_F32, k, &id_));
    EXPECT_STATUS(wgc_expr_param(e, WGC_DTYPE_F32, &id), WGC_ERROR_LIMIT_EXCEEDED);
    for (uint32_t k = 0; k < WGC_EXPR_MAX_OUTPUTS; k++) CHECK(wgc_expr_output(e, 0));
    EXPECT_STATUS(wgc_expr_output(e, 0), WGC_ERROR_LIMIT_EXCEEDED);
    uint32_t last = 0;
    WgcStatus s = WGC_OK;
    for (uint32_t k = 0; k < WGC_EXPR_MAX_NODES + 2 && s == WGC_OK; k++)
        s = wgc_expr_unary(e, WGC_UNARY_OP_NEG, last, &last);
    EXPECT_STATUS(s, WGC_ERROR_LIMIT_EXCEEDED);
    wgc_expr_release(e);
    wgc_expr_release(NULL);
}

int main(void) {
    TestEnv env = test_env();
    int64_t odd[1] = {1027}, aligned[1] = {1024}, mat[2] = {33, 31}, rows[3] = {3, 5, 8};
    WgcDtype floats[3] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_BF16};
    for (int k = 0; k < 3; k++) {
        WgcDtype d = floats[k];
        if (d == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        if (d == WGC_DTYPE_F32) test_chain(&env, d, 1, odd, OFFSET3, 0);
        test_chain(&env, d, 1, aligned, CONTIG, 1);
        test_chain(&env, d, 2, mat, TRANSPOSED, 1);
        test_chain(&env, d, 3, rows, REVERSED, 1);
        test_swiglu_vec4(&env, d);
    }
    test_broadcast_params_outputs(&env, CONTIG, 8);
    test_broadcast_params_outputs(&env, OFFSET3, 7);
    test_broadcast_params_outputs(&env, TRANSPOSED, 6);
    test_integers(&env);
    WgcDtype all[5] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_BF16, WGC_DTYPE_I32, WGC_DTYPE_U32};
    for (int f = 0; f < 5; f++)
        for (int t = 0; t < 5; t++) {
            if ((all[f] == WGC_DTYPE_F16 || all[t] == WGC_DTYPE_F16) && !env.info.has_f16) continue;
            test_casts(&env, all[f], all[t]);
        }
    test_misuse(&env);
    test_env_release(&env);
    return test_finish("test_expr");
}
