/* Elementwise operators, compared with double-precision references.
 * Tolerances (|got - ref| <= atol + rtol |ref|):
 *   exact for i32/u32 and comparisons;
 *   f32 add/sub/mul/div/max/min/fma: 1e-6 + 1e-6 rel; pow: 1e-6 + 1e-5 rel;
 *   f32 transcendental unary ops: 1e-5 + 1e-5 rel (GELU erf: A-S 7.1.26, 1.5e-7);
 *   f16 everything: 2e-3 + 2e-3 rel (a few half ulps).
 * Random: bit-exact against a C Philox4x32-10 for uniform in [0, 1); normal
 * within 1e-5 of a double Box-Muller on the same bits; moments within 5 sigma. */
#include "test_arrays.h"

#define PI 3.14159265358979323846

/* Logical index into x (rank rx, shape sx) of output index oi of shape so (rank ro), broadcasting. */
static size_t bcast_index(size_t oi, int ro, const int64_t *so, int rx, const int64_t *sx) {
    size_t idx = 0, mul = 1;
    for (int d = ro - 1; d >= 0; d--) {
        size_t c = oi % (size_t)so[d];
        oi /= (size_t)so[d];
        int dx = d - (ro - rx);
        if (dx >= 0) {
            if (sx[dx] != 1) idx += c * mul;
            mul *= (size_t)sx[dx];
        }
    }
    return idx;
}


static const char *dname(WgcDtype d) {
    return d == WGC_DTYPE_F32 ? "f32" : d == WGC_DTYPE_F16 ? "f16" : d == WGC_DTYPE_I32 ? "i32" : "u32";
}

static TestEnv env;

static double tol_atol(WgcDtype d, double f32) { return d == WGC_DTYPE_F16 ? 2e-3 : d == WGC_DTYPE_F32 ? f32 : 0; }
static double tol_rtol(WgcDtype d, double f32) { return d == WGC_DTYPE_F16 ? 2e-3 : d == WGC_DTYPE_F32 ? f32 : 0; }
static int is_float(WgcDtype d) { return d == WGC_DTYPE_F32 || d == WGC_DTYPE_F16; }
static int is_cmp(WgcBinaryOp op) { return op >= WGC_BINARY_OP_EQ; }

/* Reference for one binary op in the dtype's arithmetic. */
static double binary_ref(WgcBinaryOp op, WgcDtype d, double x, double y) {
    switch (op) {
    case WGC_BINARY_OP_EQ: return x == y;
    case WGC_BINARY_OP_NE: return x != y;
    case WGC_BINARY_OP_LT: return x < y;
    case WGC_BINARY_OP_LE: return x <= y;
    case WGC_BINARY_OP_GT: return x > y;
    case WGC_BINARY_OP_GE: return x >= y;
    case WGC_BINARY_OP_MAXIMUM: return x > y ? x : y;
    case WGC_BINARY_OP_MINIMUM: return x < y ? x : y;
    default: break;
    }
    if (is_float(d)) {
        switch (op) {
        case WGC_BINARY_OP_ADD: return x + y;
        case WGC_BINARY_OP_SUB: return x - y;
        case WGC_BINARY_OP_MUL: return x * y;
        case WGC_BINARY_OP_DIV: return x / y;
        default: return pow(x, y);
        }
    }
    if (d == WGC_DTYPE_I32) {
        int32_t a = (int32_t)x, b = (int32_t)y;
        switch (op) {
        case WGC_BINARY_OP_ADD: return (int32_t)((uint32_t)a + (uint32_t)b);
        case WGC_BINARY_OP_SUB: return (int32_t)((uint32_t)a - (uint32_t)b);
        case WGC_BINARY_OP_MUL: return (int32_t)((uint32_t)a * (uint32_t)b);
        default: return b == 0 ? 0 : (a == INT32_MIN && b == -1) ? INT32_MIN : a / b;
        }
    }
    uint32_t a = (uint32_t)x, b = (uint32_t)y;
    switch (op) {
    case WGC_BINARY_OP_ADD: return (uint32_t)(a + b);
    case WGC_BINARY_OP_SUB: return (uint32_t)(a - b);
    case WGC_BINARY_OP_MUL: return (uint32_t)(a * b);
    default: return b == 0 ? 0 : a / b;
    }
}

static void input_range(WgcBinaryOp op, WgcDtype d, int which, double *lo, double *hi, int *integral) {
    *integral = !is_float(d) || is_cmp(op) || op == WGC_BINARY_OP_MAXIMUM || op == WGC_BINARY_OP_MINIMUM;
    if (d == WGC_DTYPE_U32) { *lo = 0; *hi = is_cmp(op) || op == WGC_BINARY_OP_DIV ? 4 : 1000; return; }
    if (d == WGC_DTYPE_I32) { *lo = op == WGC_BINARY_OP_DIV ? -3 : -1000; *hi = -*lo; return; }
    if (is_cmp(op)) { *lo = -3; *hi = 3; return; }
    if (op == WGC_BINARY_OP_POW) { *lo = which == 0 ? 0.1 : -2; *hi = which == 0 ? 3 : 2; return; }
    if (op == WGC_BINARY_OP_DIV && which == 1) { *lo = 0.5; *hi = 2; return; }
    *lo = -4; *hi = 4;
}

typedef struct Case { int ra; int64_t sa[4]; int la; int rb; int64_t sb[4]; int lb; int ro; int64_t so[4]; int lo; } Case;
static const Case BIN_CASES[] = {
    {1, {5003}, CONTIG, 1, {5003}, CONTIG, 1, {5003}, CONTIG},             /* vec4 + tail */
    {3, {3, 1, 5}, CONTIG, 2, {4, 1}, CONTIG, 3, {3, 4, 5}, CONTIG},         /* broadcast */
    {2, {6, 7}, TRANSPOSED, 1, {7}, OFFSET3, 2, {6, 7}, OFFSET3},            /* strided views */
    {1, {1}, CONTIG, 2, {9, 11}, REVERSED, 2, {9, 11}, OFFSET4},             /* scalar tensor, negative stride */
    {2, {1, 7}, CONTIG, 1, {1}, CONTIG, 2, {1, 7}, CONTIG},                  /* size 1, 7 */
    {2, {6, 8}, CONTIG, 1, {8}, CONTIG, 2, {6, 8}, OFFSET4},                 /* row broadcast in vec4 units */
    {2, {5, 8}, REVERSED, 1, {8}, OFFSET4, 2, {5, 8}, CONTIG},               /* same, negative row stride */
    /* One operand dense along R, the other along C (tiled through workgroup
     * memory, either one staged): several 32 x 32 tiles with partial edges. */
    {2, {45, 70}, CONTIG, 2, {45, 70}, TRANSPOSED, 2, {45, 70}, CONTIG},
    {3, {3, 33, 40}, TRANSPOSED, 3, {3, 33, 40}, OFFSET3, 3, {3, 33, 40}, OFFSET4},
    {3, {2, 37, 65}, TRANSPOSED, 2, {1, 65}, CONTIG, 3, {2, 37, 65}, CONTIG}, /* staged a, b broadcast over R */
};

static void test_binary(WgcDtype d, WgcBinaryOp op) {
    for (size_t c = 0; c < sizeof BIN_CASES / sizeof BIN_CASES[0]; c++) {
        const Case *k = &BIN_CASES[c];
        /* Every op runs the dense case (its vec4 and per-element forms);
         * every layout runs for one arithmetic op, division and a comparison
         * (the indexing is shared, and each variant costs a shader compile
         * on the software driver). */
        int all_layouts = op == WGC_BINARY_OP_ADD || op == WGC_BINARY_OP_DIV || op == WGC_BINARY_OP_LT;
        if (c > 0 && !all_layouts) continue;
        double lo, hi;
        int integral;
        input_range(op, d, 0, &lo, &hi, &integral);
        Arr a = make_arr(&env, d, k->ra, k->sa, k->la, lo, hi, integral);
        input_range(op, d, 1, &lo, &hi, &integral);
        Arr b = make_arr(&env, d, k->rb, k->sb, k->lb, lo, hi, integral);
        WgcDtype od = is_cmp(op) ? WGC_DTYPE_U32 : d;
        Arr o = make_arr(&env, od, k->ro, k->so, k->lo, 0, 0, 1);
        CHECK(wgc_op_binary(env.stream, op, &a.t, &b.t, &o.t));
        read_arr(&o);
        double *ref = malloc(o.n * sizeof(double));
        for (size_t i = 0; i < o.n; i++) {
            double x = a.val[bcast_index(i, k->ro, k->so, k->ra, k->sa)];
            double y = b.val[bcast_index(i, k->ro, k->so, k->rb, k->sb)];
            ref[i] = binary_ref(op, d, x, y);
        }
        char what[96];
        snprintf(what, sizeof what, "binary op %d %s case %zu", (int)op, dname(d), c);
        double rt = op == WGC_BINARY_OP_POW ? 1e-5 : 1e-6;
        compare_f64(what, o.val, ref, o.n, is_cmp(op) ? 0 : tol_atol(d, 1e-6), is_cmp(op) ? 0 : tol_rtol(d, rt));
        free(ref);
        free_arr(&a);
        free_arr(&b);
        free_arr(&o);
    }
}

static void test_binary_scalar(WgcDtype d, WgcBinaryOp op, double s) {
    int64_t shape[2] = {13, 9};
    double lo, hi;
    int integral;
    input_range(op, d, 0, &lo, &hi, &integral);
    Arr a = make_arr(&env, d, 2, shape, TRANSPOSED, lo, hi, integral);
    Arr o = make_arr(&env, is_cmp(op) ? WGC_DTYPE_U32 : d, 2, shape, CONTIG, 0, 0, 1);
    CHECK(wgc_op_binary_scalar(env.stream, op, &a.t, s, &o.t));
    read_arr(&o);
    double *ref = malloc(o.n * sizeof(double));
    for (size_t i = 0; i < o.n; i++) ref[i] = binary_ref(op, d, a.val[i], quant(d, s));
    char what[96];
    snprintf(what, sizeof what, "binary_scalar op %d %s", (int)op, dname(d));
    compare_f64(what, o.val, ref, o.n, is_cmp(op) ? 0 : tol_atol(d, 1e-6), is_cmp(op) ? 0 : tol_rtol(d, 1e-5));
    free(ref);
    free_arr(&a);
    free_arr(&o);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double unary_ref(WgcUnaryOp op, double x) {
    switch (op) {
    case WGC_UNARY_OP_NEG: return -x;
    case WGC_UNARY_OP_ABS: return fabs(x);
    case WGC_UNARY_OP_EXP: return exp(x);
    case WGC_UNARY_OP_LOG: return log(x);
    case WGC_UNARY_OP_SQRT: return sqrt(x);
    case WGC_UNARY_OP_RSQRT: return 1.0 / sqrt(x);
    case WGC_UNARY_OP_SIN: return sin(x);
    case WGC_UNARY_OP_COS: return cos(x);
    case WGC_UNARY_OP_TANH: return tanh(x);
    case WGC_UNARY_OP_SIGMOID: return sigmoid(x);
    case WGC_UNARY_OP_RELU: return x > 0 ? x : 0;
    case WGC_UNARY_OP_GELU_ERF: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case WGC_UNARY_OP_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / PI) * (x + 0.044715 * x * x * x)));
    case WGC_UNARY_OP_SILU: return x * sigmoid(x);
    case WGC_UNARY_OP_RELU6: return x < 0 ? 0 : x > 6 ? 6 : x;
    case WGC_UNARY_OP_HARDSWISH: return x * (x + 3 < 0 ? 0 : x + 3 > 6 ? 6 : x + 3) / 6;
    default:
        fprintf(stderr, "no reference for unary op %d\n", (int)op);
        g_failures++;
        return NAN;
    }
}

static void test_unary(WgcDtype d, WgcUnaryOp op) {
    int positive = op == WGC_UNARY_OP_LOG || op == WGC_UNARY_OP_SQRT || op == WGC_UNARY_OP_RSQRT;
    double lo = positive ? 0.1 : -6, hi = positive ? 10 : 6;
    if (d == WGC_DTYPE_I32) { lo = -1000; hi = 1000; }
    int64_t s1[1] = {1001}, s2[2] = {13, 7};
    /* Dense (vec4 + tail) for every op; transposed and strided layouts for two. */
    int cases = op == WGC_UNARY_OP_NEG || op == WGC_UNARY_OP_TANH ? 3 : 1;
    for (int c = 0; c < cases; c++) {
        Arr a = c == 0 ? make_arr(&env, d, 1, s1, OFFSET4, lo, hi, !is_float(d))
                       : make_arr(&env, d, 2, s2, c == 1 ? TRANSPOSED : OFFSET3, lo, hi, !is_float(d));
        Arr o = c == 0 ? make_arr(&env, d, 1, s1, CONTIG, 0, 0, 1) : make_arr(&env, d, 2, s2, REVERSED, 0, 0, 1);
        CHECK(wgc_op_unary(env.stream, op, &a.t, &o.t));
        read_arr(&o);
        double *ref = malloc(o.n * sizeof(double));
        for (size_t i = 0; i < o.n; i++) ref[i] = unary_ref(op, a.val[i]);
        char what[96];
        snprintf(what, sizeof what, "unary op %d %s case %d", (int)op, dname(d), c);
        compare_f64(what, o.val, ref, o.n, tol_atol(d, 1e-5), tol_rtol(d, 1e-5));
        free(ref);
        free_arr(&a);
        free_arr(&o);
    }
}

/* tanh, sigmoid, silu, gelu must saturate without NaN for huge inputs. */
static void test_saturation(WgcDtype d) {
    double xs[8] = {-60000, -1e4, -100, -20, 20, 100, 1e4, 60000};
    int64_t shape[1] = {8};
    WgcUnaryOp ops[4] = {WGC_UNARY_OP_TANH, WGC_UNARY_OP_SIGMOID, WGC_UNARY_OP_GELU_TANH, WGC_UNARY_OP_GELU_ERF};
    for (int k = 0; k < 4; k++) {
        Arr a = make_arr(&env, d, 1, shape, CONTIG, 0, 0, 1);
        void *host = calloc(8, 4);
        for (int i = 0; i < 8; i++) { store_elem(host, d, (size_t)i, xs[i]); a.val[i] = quant(d, xs[i]); }
        CHECK(wgc_buffer_write(a.buf, 0, host, 8 * dsize(d)));
        free(host);
        Arr o = make_arr(&env, d, 1, shape, CONTIG, 0, 0, 1);
        CHECK(wgc_op_unary(env.stream, ops[k], &a.t, &o.t));
        read_arr(&o);
        double ref[8];
        for (int i = 0; i < 8; i++) ref[i] = quant(d, unary_ref(ops[k], a.val[i]));
        char what[64];
        snprintf(what, sizeof what, "saturation op %d %s", (int)ops[k], dname(d));
        compare_f64(what, o.val, ref, 8, 1e-6, 1e-6);
        free_arr(&a);
        free_arr(&o);
    }
}

static void test_leaky_clamp(WgcDtype d) {
    int64_t shape[2] = {5, 11};
    double lo = d == WGC_DTYPE_U32 ? 0 : -5, hi = d == WGC_DTYPE_U32 ? 1000 : 5;
    Arr a = make_arr(&env, d, 2, shape, TRANSPOSED, lo, hi, !is_float(d));
    Arr o = make_arr(&env, d, 2, shape, CONTIG, 0, 0, 1);
    double *ref = malloc(o.n * sizeof(double));
    if (is_float(d)) {
        CHECK(wgc_op_leaky_relu(env.stream, &a.t, 0.1f, &o.t));
        read_arr(&o);
        for (size_t i = 0; i < o.n; i++) ref[i] = a.val[i] >= 0 ? a.val[i] : a.val[i] * (double)0.1f;
        compare_f64("leaky_relu", o.val, ref, o.n, tol_atol(d, 1e-6), tol_rtol(d, 1e-6));
    }
    double clo = d == WGC_DTYPE_U32 ? 300.7 : -1.5, chi = d == WGC_DTYPE_U32 ? 700.2 : 2.5;
    CHECK(wgc_op_clamp(env.stream, &a.t, clo, chi, &o.t));
    read_arr(&o);
    double ql = quant(d, clo), qh = quant(d, chi);
    for (size_t i = 0; i < o.n; i++) ref[i] = a.val[i] < ql ? ql : a.val[i] > qh ? qh : a.val[i];
    char what[64];
    snprintf(what, sizeof what, "clamp %s", dname(d));
    compare_f64(what, o.val, ref, o.n, 0, 0);
    free(ref);
    free_arr(&a);
    free_arr(&o);
}

static void test_fma_where(WgcDtype d) {
    int64_t sa[3] = {3, 1, 5}, sb[2] = {4, 1}, sc[1] = {5}, so[3] = {3, 4, 5};
    double lo = d == WGC_DTYPE_U32 ? 0 : -4, hi = d == WGC_DTYPE_U32 ? 100 : 4;
    for (int c = 0; c < 2; c++) {
        int64_t flat[1] = {1003};
        int big = c == 1;
        Arr a = big ? make_arr(&env, d, 1, flat, CONTIG, lo, hi, !is_float(d)) : make_arr(&env, d, 3, sa, CONTIG, lo, hi, !is_float(d));
        Arr b = big ? make_arr(&env, d, 1, flat, CONTIG, lo, hi, !is_float(d)) : make_arr(&env, d, 2, sb, TRANSPOSED, lo, hi, !is_float(d));
        Arr cc = big ? make_arr(&env, d, 1, flat, CONTIG, lo, hi, !is_float(d)) : make_arr(&env, d, 1, sc, REVERSED, lo, hi, !is_float(d));
        Arr o = big ? make_arr(&env, d, 1, flat, CONTIG, 0, 0, 1) : make_arr(&env, d, 3, so, CONTIG, 0, 0, 1);
        int ro = big ? 1 : 3;
        const int64_t *pso = big ? flat : so;
        CHECK(wgc_op_fma(env.stream, &a.t, &b.t, &cc.t, &o.t));
        read_arr(&o);
        double *ref = malloc(o.n * sizeof(double));
        for (size_t i = 0; i < o.n; i++) {
            double x = a.val[bcast_index(i, ro, pso, (int)a.t.rank, a.t.shape)];
            double y = b.val[bcast_index(i, ro, pso, (int)b.t.rank, b.t.shape)];
            double z = cc.val[bcast_index(i, ro, pso, (int)cc.t.rank, cc.t.shape)];
            ref[i] = x * y + z;
        }
        char what[64];
        snprintf(what, sizeof what, "fma %s case %d", dname(d), c);
        compare_f64(what, o.val, ref, o.n, tol_atol(d, 1e-5), tol_rtol(d, 1e-6));
        /* where: the mask takes a's place, u32 0/1. */
        Arr m = big ? make_arr(&env, WGC_DTYPE_U32, 1, flat, OFFSET3, 0, 2, 1) : make_arr(&env, WGC_DTYPE_U32, 3, sa, CONTIG, 0, 2, 1);
        CHECK(wgc_op_where(env.stream, &m.t, &b.t, &cc.t, &o.t));
        read_arr(&o);
        for (size_t i = 0; i < o.n; i++) {
            double mk = m.val[bcast_index(i, ro, pso, (int)m.t.rank, m.t.shape)];
            double y = b.val[bcast_index(i, ro, pso, (int)b.t.rank, b.t.shape)];
            double z = cc.val[bcast_index(i, ro, pso, (int)cc.t.rank, cc.t.shape)];
            ref[i] = mk != 0 ? y : z;
        }
        snprintf(what, sizeof what, "where %s case %d", dname(d), c);
        compare_f64(what, o.val, ref, o.n, 0, 0);
        free(ref);
        free_arr(&m);
        free_arr(&a);
        free_arr(&b);
        free_arr(&cc);
        free_arr(&o);
    }
}

/* Division edge cases: x / 0 = 0 and INT32_MIN / -1 = INT32_MIN. */
static void test_int_division_edges(void) {
    int32_t av[4] = {INT32_MIN, 7, -7, 5}, bv[4] = {-1, 0, 2, 0};
    int64_t shape[1] = {4};
    WgcBuffer *ab = upload(env.device, av, sizeof av), *bb = upload(env.device, bv, sizeof bv);
    WgcBuffer *ob = upload(env.device, av, sizeof av);
    WgcTensor a = tensor_of(ab, WGC_DTYPE_I32, 1, shape), b = tensor_of(bb, WGC_DTYPE_I32, 1, shape),
              o = tensor_of(ob, WGC_DTYPE_I32, 1, shape);
    CHECK(wgc_op_binary(env.stream, WGC_BINARY_OP_DIV, &a, &b, &o));
    int32_t got[4];
    CHECK(wgc_buffer_read(ob, 0, got, sizeof got));
    EXPECT(got[0] == INT32_MIN && got[1] == 0 && got[2] == -3 && got[3] == 0);
    wgc_buffer_release(ab);
    wgc_buffer_release(bb);
    wgc_buffer_release(ob);
}

/* pow with negative bases and zero. */
static void test_pow_edges(void) {
    float av[6] = {-2, -2, -2, 0, 0, 3}, bv[6] = {3, 2, 0.5f, 2, -1, 0};
    int64_t shape[1] = {6};
    WgcBuffer *ab = upload(env.device, av, sizeof av), *bb = upload(env.device, bv, sizeof bv);
    WgcBuffer *ob = upload(env.device, av, sizeof av);
    WgcTensor a = tensor_of(ab, WGC_DTYPE_F32, 1, shape), b = tensor_of(bb, WGC_DTYPE_F32, 1, shape),
              o = tensor_of(ob, WGC_DTYPE_F32, 1, shape);
    CHECK(wgc_op_binary(env.stream, WGC_BINARY_OP_POW, &a, &b, &o));
    float got[6];
    CHECK(wgc_buffer_read(ob, 0, got, sizeof got));
    EXPECT(fabsf(got[0] + 8) < 1e-5f && fabsf(got[1] - 4) < 1e-5f && isnan(got[2]) && got[3] == 0 && isinf(got[4]) &&
           got[5] == 1);
    wgc_buffer_release(ab);
    wgc_buffer_release(bb);
    wgc_buffer_release(ob);
}

/* out is the very same view as an input: contiguous, strided, second operand. */
static void test_in_place(void) {
    int64_t s1[1] = {1003}, s2[2] = {6, 7};
    for (int c = 0; c < 3; c++) {
        Arr a = c == 0 ? make_arr(&env, WGC_DTYPE_F32, 1, s1, CONTIG, -4, 4, 0) : make_arr(&env, WGC_DTYPE_F32, 2, s2, TRANSPOSED, -4, 4, 0);
        Arr b = c == 0 ? make_arr(&env, WGC_DTYPE_F32, 1, s1, CONTIG, -4, 4, 0) : make_arr(&env, WGC_DTYPE_F32, 2, s2, OFFSET3, -4, 4, 0);
        double *ref = malloc(a.n * sizeof(double));
        for (size_t i = 0; i < a.n; i++) ref[i] = c == 2 ? a.val[i] - b.val[i] : exp(a.val[i] * b.val[i]);
        if (c == 2) {
            CHECK(wgc_op_binary(env.stream, WGC_BINARY_OP_SUB, &a.t, &b.t, &b.t)); /* b = a - b */
            read_arr(&b);
            compare_f64("in-place second operand", b.val, ref, b.n, 1e-6, 1e-6);
        } else {
            CHECK(wgc_op_binary(env.stream, WGC_BINARY_OP_MUL, &a.t, &b.t, &a.t));
            CHECK(wgc_op_unary(env.stream, WGC_UNARY_OP_EXP, &a.t, &a.t));
            read_arr(&a);
            compare_f64("in-place mul then exp", a.val, ref, a.n, 1e-5, 1e-5);
        }
        free(ref);
        free_arr(&a);
        free_arr(&b);
    }
    /* Disjoint halves of one buffer: in = first half, out = second half. */
    float host[16];
    for (int i = 0; i < 16; i++) host[i] = (float)i;
    WgcBuffer *buf = upload(env.device, host, sizeof host);
    int64_t shape[1] = {8};
    WgcTensor lo = tensor_of(buf, WGC_DTYPE_F32, 1, shape), hi = lo;
    hi.offset = 8;
    CHECK(wgc_op_binary_scalar(env.stream, WGC_BINARY_OP_ADD, &lo, 100, &hi));
    CHECK(wgc_buffer_read(buf, 0, host, sizeof host));
    for (int i = 0; i < 8; i++) EXPECT(host[8 + i] == (float)i + 100 && host[i] == (float)i);
    wgc_buffer_release(buf);
}

static void test_empty(void) {
    int64_t s[2] = {0, 5};
    Arr a = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, 0, 1, 0);
    Arr o = make_arr(&env, WGC_DTYPE_F32, 2, s, CONTIG, 0, 1, 0);
    EXPECT_STATUS(wgc_op_binary(env.stream, WGC_BINARY_OP_ADD, &a.t, &a.t, &o.t), WGC_OK);
    EXPECT_STATUS(wgc_op_unary(env.stream, WGC_UNARY_OP_EXP, &a.t, &o.t), WGC_OK);
    EXPECT_STATUS(wgc_op_random_uniform(env.stream, &o.t, 1, 0, 0, 1), WGC_OK);
    free_arr(&a);
    free_arr(&o);
}

static void test_errors(void) {
    int64_t s3[1] = {3}, s4[1] = {4}, s34[2] = {3, 4};
    Arr a3 = make_arr(&env, WGC_DTYPE_F32, 1, s3, CONTIG, 0, 1, 0);
    Arr a4 = make_arr(&env, WGC_DTYPE_F32, 1, s4, CONTIG, 0, 1, 0);
    Arr i4 = make_arr(&env, WGC_DTYPE_I32, 1, s4, CONTIG, 0, 10, 1);
    Arr u4 = make_arr(&env, WGC_DTYPE_U32, 1, s4, CONTIG, 0, 10, 1);
    Arr o34 = make_arr(&env, WGC_DTYPE_F32, 2, s34, CONTIG, 0, 1, 0);
    Arr o4 = make_arr(&env, WGC_DTYPE_F32, 1, s4, CONTIG, 5, 6, 0);
    WgcStream *st = env.stream;
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, &a3.t, &a4.t, &o4.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, &a4.t, &a4.t, &o34.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, &a4.t, &i4.t, &o4.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_LT, &a4.t, &a4.t, &o4.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, &a4.t, &a4.t, &u4.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_POW, &i4.t, &i4.t, &i4.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_binary_scalar(st, WGC_BINARY_OP_POW, &u4.t, 2, &u4.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_binary(st, (WgcBinaryOp)99, &a4.t, &a4.t, &o4.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_unary(st, (WgcUnaryOp)99, &a4.t, &o4.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_unary(st, WGC_UNARY_OP_EXP, &i4.t, &i4.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_unary(st, WGC_UNARY_OP_NEG, &u4.t, &u4.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_unary(st, WGC_UNARY_OP_EXP, &a4.t, &i4.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_unary(st, WGC_UNARY_OP_EXP, &a3.t, &o4.t), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_leaky_relu(st, &i4.t, 0.1f, &i4.t), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_clamp(st, &a4.t, NAN, 1, &o4.t), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_fma(st, &a4.t, &i4.t, &a4.t, &o4.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_where(st, &a4.t, &a4.t, &a4.t, &o4.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_where(st, &u4.t, &a4.t, &i4.t, &o4.t), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_binary(NULL, WGC_BINARY_OP_ADD, &a4.t, &a4.t, &o4.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, NULL, &a4.t, &o4.t), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_unary(st, WGC_UNARY_OP_EXP, &a4.t, NULL), WGC_ERROR_NULL_POINTER);
    /* A view past its buffer. */
    WgcTensor past = a4.t;
    past.offset = 2;
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, &a4.t, &a4.t, &past), WGC_ERROR_OUT_OF_RANGE);
    /* Output overlapping an input without being the same view. */
    float host[9] = {0};
    WgcBuffer *buf = upload(env.device, host, sizeof host);
    WgcTensor x = tensor_of(buf, WGC_DTYPE_F32, 1, s4), y = x;
    y.offset = 1;
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, &x, &a4.t, &y), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_unary(st, WGC_UNARY_OP_NEG, &y, &x), WGC_ERROR_INVALID_ARGUMENT);
    /* Output whose elements share memory (stride 0). */
    WgcTensor z = x;
    z.strides[0] = 0;
    EXPECT_STATUS(wgc_op_binary(st, WGC_BINARY_OP_ADD, &a4.t, &a4.t, &z), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(st, &z, 1, 0, 0, 1), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(st, &i4.t, 1, 0, 0, 1), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_random_normal(st, &a4.t, 1, 0, 0, -1), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(st, &a4.t, 1, 0, 0, INFINITY), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_op_random_uniform(st, NULL, 1, 0, 0, 1), WGC_ERROR_NULL_POINTER);
    /* Failed calls wrote nothing. */
    read_arr(&o4);
    int untouched = 1;
    for (int i = 0; i < 4; i++) untouched &= o4.val[i] >= 5 && o4.val[i] < 6;
    EXPECT(untouched);
    wgc_buffer_release(buf);
    free_arr(&a3);
    free_arr(&a4);
    free_arr(&i4);
    free_arr(&u4);
    free_arr(&o34);
    free_arr(&o4);
}

/* Philox4x32-10, the reference for the GPU generator. */
static void philox_ref(const uint32_t ctr[4], uint64_t seed, uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}
static void philox_at(uint64_t seed, uint64_t counter, uint32_t out[4]) {
    uint32_t ctr[4] = {(uint32_t)counter, (uint32_t)(counter >> 32), 0, 0};
    philox_ref(ctr, seed, out);
}

static float *random_f32(int normal, size_t n, uint64_t seed, uint64_t offset, double a, double b, WgcBuffer **keep) {
    int64_t shape[1] = {(int64_t)n};
    WgcBuffer *buf = NULL;
    CHECK(wgc_buffer_create(env.device, n * 4, WGC_BUFFER_USAGE_STORAGE, &buf));
    WgcTensor t = tensor_of(buf, WGC_DTYPE_F32, 1, shape);
    if (normal) CHECK(wgc_op_random_normal(env.stream, &t, seed, offset, a, b));
    else CHECK(wgc_op_random_uniform(env.stream, &t, seed, offset, a, b));
    float *host = malloc(n * 4);
    CHECK(wgc_buffer_read(buf, 0, host, n * 4));
    if (keep) *keep = buf;
    else wgc_buffer_release(buf);
    return host;
}

static void moments(const float *x, size_t n, double *mean, double *var) {
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++) s2 += (x[i] - *mean) * (x[i] - *mean);
    *var = s2 / (double)(n - 1);
}

static void test_random(void) {
    /* The reference itself against the Random123 known answer. */
    uint32_t zero[4] = {0, 0, 0, 0}, kat[4];
    philox_ref(zero, 0, kat);
    EXPECT(kat[0] == 0x6627e8d5u && kat[1] == 0xe169c58du && kat[2] == 0xbc57ac4cu && kat[3] == 0x9b00dbd8u);

    const size_t n = 100003;
    const uint64_t seed = 0x0123456789abcdefull, offset = 0xfffffffeull; /* crosses a 32-bit carry */
    float *u = random_f32(0, n, seed, offset, 0, 1, NULL);
    int bad = 0;
    for (size_t i = 0; i < n; i += 97) {
        uint32_t w[4];
        philox_at(seed, offset + i / 4, w);
        float ref = (float)(w[i % 4] >> 8) * (1.0f / 16777216.0f);
        if (memcmp(&ref, &u[i], 4) != 0 && bad++ < 5) fprintf(stderr, "uniform %zu: %.9g vs %.9g\n", i, u[i], ref);
    }
    EXPECT(bad == 0);
    double m, v;
    moments(u, n, &m, &v);
    EXPECT(fabs(m - 0.5) < 5 * sqrt(1.0 / 12 / n));
    EXPECT(fabs(v - 1.0 / 12) < 0.05 / 12);
    float *u2 = random_f32(0, n, seed, offset, 0, 1, NULL);
    EXPECT(memcmp(u, u2, n * 4) == 0);
    float *u3 = random_f32(0, n, seed + 1, offset, 0, 1, NULL);
    size_t same = 0;
    for (size_t i = 0; i < n; i++) same += u[i] == u3[i];
    EXPECT(same < n / 1000);
    /* Scaled range. */
    float *ur = random_f32(0, 5001, 7, 0, -3, 5, NULL);
    int inside = 1;
    for (size_t i = 0; i < 5001; i++) inside &= ur[i] >= -3 && ur[i] <= 5;
    EXPECT(inside);

    float *z = random_f32(1, n, seed, 12, 2, 3, NULL);
    bad = 0;
    for (size_t i = 0; i < n; i += 101) {
        uint32_t w[4];
        philox_at(seed, 12 + i / 4, w);
        size_t pair = (i % 4) / 2 * 2;
        double u1 = ((w[pair] >> 8) + 1) / 16777216.0, uu2 = (w[pair + 1] >> 8) / 16777216.0;
        double r = sqrt(-2 * log(u1)), th = 2 * PI * uu2;
        double ref = 2 + 3 * r * (i % 2 == 0 ? cos(th) : sin(th));
        if (fabs(ref - z[i]) > 1e-4 * (1 + fabs(ref)) && bad++ < 5) fprintf(stderr, "normal %zu: %.9g vs %.9g\n", i, z[i], ref);
    }
    EXPECT(bad == 0);
    moments(z, n, &m, &v);
    EXPECT(fabs(m - 2) < 5 * 3 / sqrt((double)n));
    EXPECT(fabs(v - 9) < 9 * 0.05);
    /* A strided output gets the same logical sequence. */
    int64_t shape[2] = {21, 13};
    size_t cnt = 21 * 13;
    float *flat = random_f32(1, cnt, 99, 5, 0, 1, NULL);
    Arr t = make_arr(&env, WGC_DTYPE_F32, 2, shape, TRANSPOSED, 0, 0, 1);
    CHECK(wgc_op_random_normal(env.stream, &t.t, 99, 5, 0, 1));
    read_arr(&t);
    bad = 0;
    for (size_t i = 0; i < cnt; i++) bad += (float)t.val[i] != flat[i];
    EXPECT(bad == 0);
    free_arr(&t);
    /* f16 outputs. */
    int64_t hs[1] = {20001};
    Arr h = make_arr(&env, WGC_DTYPE_F16, 1, hs, CONTIG, 0, 0, 1);
    CHECK(wgc_op_random_uniform(env.stream, &h.t, 5, 0, -1, 1));
    read_arr(&h);
    double hm = 0;
    int hin = 1;
    for (size_t i = 0; i < h.n; i++) { hm += h.val[i]; hin &= h.val[i] >= -1 && h.val[i] <= 1; }
    EXPECT(hin && fabs(hm / h.n) < 5 * sqrt(1.0 / 3 / h.n));
    free_arr(&h);
    free(u); free(u2); free(u3); free(ur); free(z); free(flat);
}

/* `test_elementwise random`: the random generators only (run again by
 * CTest with the 64-bit-product kernels turned off). */
int main(int argc, char **argv) {
    env = test_env();
    if (argc > 1 && strcmp(argv[1], "random") == 0) {
        test_random();
        test_env_release(&env);
        return test_finish("test_elementwise random");
    }
    WgcDtype dtypes[4] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};
    for (int di = 0; di < 4; di++) {
        WgcDtype d = dtypes[di];
        for (int op = WGC_BINARY_OP_ADD; op < WGC_NUM_BINARY_OPS; op++) {
            if (op == WGC_BINARY_OP_POW && !is_float(d)) continue;
            test_binary(d, (WgcBinaryOp)op);
        }
        test_binary_scalar(d, WGC_BINARY_OP_ADD, 2.5);
        test_binary_scalar(d, WGC_BINARY_OP_MUL, 3);
        test_binary_scalar(d, WGC_BINARY_OP_DIV, is_float(d) ? 0.75 : 3);
        test_binary_scalar(d, WGC_BINARY_OP_GT, 1);
        test_binary_scalar(d, WGC_BINARY_OP_MINIMUM, 2);
        if (is_float(d)) test_binary_scalar(d, WGC_BINARY_OP_POW, 2.5);
        if (d != WGC_DTYPE_U32) {
            for (int op = WGC_UNARY_OP_NEG; op < WGC_NUM_UNARY_OPS; op++) {
                int int_ok = op == WGC_UNARY_OP_NEG || op == WGC_UNARY_OP_ABS || op == WGC_UNARY_OP_RELU;
                if (d == WGC_DTYPE_I32 && !int_ok) continue;
                test_unary(d, (WgcUnaryOp)op);
            }
        }
        if (is_float(d)) test_saturation(d);
        test_leaky_clamp(d);
        test_fma_where(d);
    }
    test_int_division_edges();
    test_pow_edges();
    test_in_place();
    test_empty();
    test_errors();
    test_random();
    test_env_release(&env);
    return test_finish("test_elementwise");
}
