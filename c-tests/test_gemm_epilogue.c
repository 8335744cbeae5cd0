/* wgc_op_gemm_epilogue against a double-precision reference: every
 * activation, column scale and bias, a residual before or after the
 * activation, f32 and f16 (and bf16 operands into f32), transposes,
 * strided and offset views, batches, sizes across the 64 x 64 tile edges,
 * the routes that fuse the epilogue in their kernel, in the split-K pass
 * or in one extra pass (checked through the explain line), NaN and inf;
 * then misuse, which must fail with nothing recorded.
 *
 * Tolerances: f32 1e-5 * (1 + sqrt(K)) absolute plus 1e-5 relative (the
 * product's, wgc_op_gemm's; the activations add at most 3e-7); f16 and
 * bf16 outputs also half an ulp of their own rounding (2e-3, 8e-3). */
#include "gemm_check.h"
#include "test_activation.h"

enum { ACTS = 8 };

/* One case: C = epilogue(alpha * op(A) op(B)). */
typedef struct {
    const char *name;
    WgcDtype in, out;
    int64_t batch, m, n, k;
    int ta, tb;
    uint32_t act;
    int bias, scale, residual, after;
    float alpha;
    int strided;  /* padded rows and offsets on every view */
    const char *fusion; /* a word the explain line must hold, or NULL */
    int plant;    /* 1: NaN in a row of A, 2: +inf in a row of A */
} Case;

/* A view (batch, rows, cols), padded and offset where `strided`. */
static View mat_view(int64_t batch, int64_t rows, int64_t cols, int strided) {
    View v = batch > 1 ? V(3, batch, rows, cols) : V(2, rows, cols);
    if (strided) {
        uint32_t r = v.rank;
        v.strides[r - 2] = cols + 3;
        if (r == 3) v.strides[0] = (cols + 3) * rows + 5;
        v.offset = 7;
    }
    return v;
}

static WgcBuffer *upload_as(WgcDtype dt, float *x, int64_t n) {
    if (dt == WGC_DTYPE_F32) return upload(env.device, x, n * 4);
    uint16_t *h = malloc(n * 2 + 2);
    for (int64_t i = 0; i < n; i++) {
        if (dt == WGC_DTYPE_F16) {
            h[i] = f32_to_f16(x[i]);
            x[i] = f16_to_f32(h[i]);
        } else {
            uint32_t bits;
            memcpy(&bits, &x[i], 4);
            h[i] = (uint16_t)(bits >> 16); /* truncation: the value is then exact */
            bits &= 0xffff0000u;
            memcpy(&x[i], &bits, 4);
        }
    }
    WgcBuffer *b = upload(env.device, h, n * 2);
    free(h);
    return b;
}

static void explain_has(const WgcGemmEpilogueParams *p, WgcTensor *a, WgcTensor *b, WgcTensor *bias, WgcTensor *scale,
                        WgcTensor *res, WgcTensor *c, const char *word, const char *name) {
    char line[1024];
    size_t len = 0;
    CHECK(wgc_op_gemm_epilogue_explain(env.stream, p, a, b, bias, scale, res, c, line, sizeof line, &len));
    /* The tensor-core routes (GPU machines) are reported, not held to the
     * route this test expects on lavapipe. */
    if (strstr(line, "route coop")) {
        printf("%s: %s\n", name, line);
        return;
    }
    if (!strstr(line, word)) {
        fprintf(stderr, "%s: explain lacks \"%s\": %s\n", name, word, line);
        g_failures++;
    }
}

static void run_case(const Case *t) {
    int64_t B = t->batch, M = t->m, N = t->n, K = t->k;
    View av = t->ta ? mat_view(B, K, M, t->strided) : mat_view(B, M, K, t->strided);
    View bv = t->tb ? mat_view(B, N, K, t->strided) : mat_view(B, K, N, t->strided);
    View cv = mat_view(B, M, N, t->strided);
    View rv = mat_view(B, M, N, t->strided);
    if (t->strided) rv.strides[rv.rank - 2] = N + 1, rv.offset = 2;
    View vec = V(1, N);
    if (t->strided) vec.strides[0] = 2, vec.offset = 3;
    int64_t na = view_span(&av), nb = view_span(&bv), nc = view_span(&cv), nr = view_span(&rv), nv = view_span(&vec);
    float *ha = malloc(na * 4 + 4), *hb = malloc(nb * 4 + 4), *hr = malloc(nr * 4 + 4);
    float *hbias = malloc(nv * 4 + 4), *hscale = malloc(nv * 4 + 4), *hc = malloc(nc * 4 + 4);
    fill_uniform_f32(ha, na, -1, 1);
    fill_uniform_f32(hb, nb, -1, 1);
    fill_uniform_f32(hr, nr, -2, 2);
    fill_uniform_f32(hbias, nv, -1, 1);
    fill_uniform_f32(hscale, nv, 0.5, 2);
    for (int64_t i = 0; i < nc; i++) hc[i] = NAN; /* never read */
    int64_t planted_row = M / 2;
    if (t->plant) {
        for (int64_t k = 0; k < K; k++) {
            int64_t i = av.offset + (t->ta ? k * av.strides[av.rank - 2] + planted_row * av.strides[av.rank - 1]
                                           : planted_row * av.strides[av.rank - 2] + k * av.strides[av.rank - 1]);
            if (t->plant == 1 && k == K / 2) ha[i] = NAN;
            if (t->plant == 2) ha[i] = k == 0 ? INFINITY : 0.0f;
        }
        if (t->plant == 2) /* b's row 0 positive: the row of C is +inf */
            for (int64_t n = 0; n < N; n++) {
                int64_t i = bv.offset + (t->tb ? n * bv.strides[bv.rank - 2] : n * bv.strides[bv.rank - 1]);
                hb[i] = 0.25f + 0.5f * (float)(n % 3);
            }
    }
    WgcDtype in = t->in, out = t->out;
    WgcBuffer *ba = upload_as(in, ha, na), *bb = upload_as(in, hb, nb), *bc = upload_as(out, hc, nc);
    WgcBuffer *br = upload_as(out, hr, nr), *bbias = upload_as(out, hbias, nv), *bscale = upload_as(out, hscale, nv);
    WgcTensor ta = gpu_view(ba, in, &av), tb = gpu_view(bb, in, &bv), tc = gpu_view(bc, out, &cv);
    WgcTensor tr = gpu_view(br, out, &rv), tbias = gpu_view(bbias, out, &vec), tscale = gpu_view(bscale, out, &vec);
    WgcGemmEpilogueParams p = {sizeof p, t->alpha, (uint32_t)t->ta, (uint32_t)t->tb, t->act, (uint32_t)t->after};
    WgcTensor *pbias = t->bias ? &tbias : NULL, *pscale = t->scale ? &tscale : NULL, *pres = t->residual ? &tr : NULL;
    if (t->fusion) explain_has(&p, &ta, &tb, pbias, pscale, pres, &tc, t->fusion, t->name);
    CHECK(wgc_op_gemm_epilogue(env.stream, &p, &ta, &tb, pbias, pscale, pres, &tc));

    size_t total = (size_t)(B * M * N);
    double *ref = malloc(total * 8 + 8), *got = malloc(total * 8 + 8);
    float *raw = malloc(nc * 4 + 8);
    if (out == WGC_DTYPE_F16) {
        uint16_t *h = malloc(nc * 2 + 8);
        CHECK(wgc_buffer_read(bc, 0, h, ((nc * 2) + 3) & ~3));
        for (int64_t i = 0; i < nc; i++) raw[i] = f16_to_f32(h[i]);
        free(h);
    } else {
        CHECK(wgc_buffer_read(bc, 0, raw, nc * 4));
    }
    uint32_t br_ = cv.rank - 2;
    size_t o = 0;
    for (int64_t bi = 0; bi < B; bi++) {
        int64_t bidx[1] = {bi};
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++, o++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) {
                    double x = t->ta ? mat_at(ha, &av, bidx, br_, k, m) : mat_at(ha, &av, bidx, br_, m, k);
                    double y = t->tb ? mat_at(hb, &bv, bidx, br_, n, k) : mat_at(hb, &bv, bidx, br_, k, n);
                    s += x * y;
                }
                double v = t->alpha * s;
                if (t->scale) v *= hscale[vec.offset + n * vec.strides[0]];
                if (t->bias) v += hbias[vec.offset + n * vec.strides[0]];
                double r = t->residual ? mat_at(hr, &rv, bidx, br_, m, n) : 0.0;
                if (!t->after) v += r;
                v = activate(t->act, v);
                if (t->after) v += r;
                ref[o] = v;
                got[o] = mat_at(raw, &cv, bidx, br_, m, n);
            }
    }
    double tol = 1e-5 * (1 + sqrt((double)K)) * (t->scale ? 2 : 1);
    double rtol = out == WGC_DTYPE_F16 ? 2e-3 : (in == WGC_DTYPE_BF16 ? 1e-5 : 1e-5);
    if (out == WGC_DTYPE_F16) tol += 2e-3;
    compare_f64(t->name, got, ref, total, tol, rtol);
    free(ha), free(hb), free(hr), free(hbias), free(hscale), free(hc), free(ref), free(got), free(raw);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
    wgc_buffer_release(br), wgc_buffer_release(bbias), wgc_buffer_release(bscale);
}

static const char *ACT_NAMES[ACTS] = {"none", "relu", "relu6", "hardswish", "gelu", "gelu_tanh", "silu", "tanh"};

static void every_activation(void) {
    char names[ACTS][2][64];
    for (uint32_t act = 0; act < ACTS; act++)
        for (int f16 = 0; f16 < 2; f16++) {
            snprintf(names[act][f16], 64, "%s %s bias", ACT_NAMES[act], f16 ? "f16" : "f32");
            WgcDtype dt = f16 ? WGC_DTYPE_F16 : WGC_DTYPE_F32;
            /* x (M, K) against w (N, K): F.linear. Values up to ~3 reach every
             * activation's interesting range (relu6's 6 through the scale). */
            Case c = {names[act][f16], dt, dt, 1, 67, 70, 33, 0, 1, act, 1, 1, 0, 0, 1.5f, 0, "one pass", 0};
            run_case(&c);
        }
}

static void residuals_views_routes(void) {
    const WgcDtype F32 = WGC_DTYPE_F32, F16 = WGC_DTYPE_F16;
    const Case cases[] = {
        {"residual before relu", F32, F32, 1, 65, 66, 20, 0, 0, WGC_ACTIVATION_RELU, 1, 0, 1, 0, 1, 0, "one pass", 0},
        {"residual after gelu", F32, F32, 1, 65, 66, 20, 0, 0, WGC_ACTIVATION_GELU, 1, 0, 1, 1, 1, 0, "one pass", 0},
        {"residual after silu f16", F16, F16, 1, 70, 64, 40, 0, 1, WGC_ACTIVATION_SILU, 1, 1, 1, 1, 1, 0, "one pass", 0},
        {"vec4 stores (gemm_c4)", F32, F32, 1, 64, 128, 48, 0, 0, WGC_ACTIVATION_GELU, 1, 1, 1, 0, 1, 0, "one pass", 0},
        {"transposed a", F32, F32, 1, 33, 70, 65, 1, 0, WGC_ACTIVATION_TANH, 1, 1, 1, 0, 0.5f, 0, "one pass", 0},
        {"strided and offset views", F32, F32, 1, 67, 65, 19, 0, 1, WGC_ACTIVATION_RELU6, 1, 1, 1, 1, 2, 1, "one pass",
         0},
        {"strided f16", F16, F16, 1, 66, 67, 30, 1, 1, WGC_ACTIVATION_HARDSWISH, 1, 1, 1, 0, 1, 1, "one pass", 0},
        {"batched", F32, F32, 3, 21, 67, 18, 0, 1, WGC_ACTIVATION_SILU, 1, 1, 1, 1, 1, 0, NULL, 0},
        {"batched strided f16", F16, F16, 2, 65, 9, 17, 0, 0, WGC_ACTIVATION_GELU_TANH, 1, 0, 1, 0, 1, 1, NULL, 0},
        {"f16 operands into f32", F16, F32, 1, 66, 70, 35, 0, 1, WGC_ACTIVATION_GELU, 1, 1, 1, 0, 1, 0, "one pass", 0},
        {"bf16 operands into f32", WGC_DTYPE_BF16, F32, 1, 40, 66, 24, 0, 1, WGC_ACTIVATION_SILU, 1, 1, 1, 1, 1, 0,
         NULL, 0},
        {"no epilogue tensors", F32, F32, 1, 30, 30, 30, 0, 0, WGC_ACTIVATION_NONE, 0, 0, 0, 0, 1, 0, NULL, 0},
        /* K from 512 (short of two runs of 512, so one): on GPUs with
         * cooperative matrices the f16 ones take the VK_KHR_cooperative_matrix
         * kernel's epilogue variant (the WGSL one with WGC_GEMM_SPIRV=0),
         * dense f16 C two halves at a time; strided operands, which 16-byte
         * loads cannot read, the tiled kernel and one pass. */
        {"K 520 f16", F16, F16, 1, 130, 140, 520, 0, 1, WGC_ACTIVATION_GELU, 1, 1, 1, 1, 1, 0, NULL, 0},
        {"K 520 f16 strided", F16, F16, 1, 131, 129, 520, 0, 1, WGC_ACTIVATION_SILU, 1, 0, 1, 0, 1, 1, NULL, 0},
        {"K 520 f16 into f32", F16, F32, 2, 66, 130, 520, 1, 0, WGC_ACTIVATION_RELU6, 1, 1, 1, 1, 2, 0, NULL, 0},
        {"K 520 f16 NaN row", F16, F16, 1, 130, 136, 520, 0, 1, WGC_ACTIVATION_TANH, 1, 1, 1, 0, 1, 0, NULL, 1},
        /* Few rows: the matrix-vector and gemm_rows kernels store into f32
         * scratch and the epilogue is one pass. */
        {"4 rows (gemv)", F32, F32, 1, 4, 70, 50, 0, 1, WGC_ACTIVATION_GELU, 1, 1, 1, 0, 1, 0, "one pass", 0},
        {"one row", F16, F16, 1, 1, 66, 40, 0, 1, WGC_ACTIVATION_RELU, 1, 1, 1, 1, 1, 0, "one pass", 0},
        {"20 rows (gemm_rows)", F32, F32, 1, 20, 256, 64, 0, 1, WGC_ACTIVATION_SILU, 1, 1, 1, 1, 1, 0, "one pass", 0},
        /* Long K over few tiles: split-K, the epilogue in the sum pass. */
        {"split K", F32, F32, 1, 40, 50, 4100, 0, 1, WGC_ACTIVATION_GELU, 1, 1, 1, 0, 1, 0, "split-K pass", 0},
        {"split K f16", F16, F16, 1, 40, 50, 4100, 0, 0, WGC_ACTIVATION_RELU, 1, 0, 1, 1, 1, 0, "split-K pass", 0},
        /* NaN and inf: a NaN in A makes its row of C NaN through every
         * activation; +inf stays +inf through relu, gelu and silu. */
        {"NaN row relu", F32, F32, 1, 20, 66, 30, 0, 1, WGC_ACTIVATION_RELU, 1, 0, 0, 0, 1, 0, NULL, 1},
        {"NaN row gelu f16", F16, F16, 1, 66, 66, 30, 0, 1, WGC_ACTIVATION_GELU, 1, 1, 1, 0, 1, 0, NULL, 1},
        {"NaN row relu6 split", F32, F32, 1, 40, 50, 4100, 0, 1, WGC_ACTIVATION_RELU6, 1, 0, 0, 0, 1, 0, NULL, 1},
        {"inf row relu", F32, F32, 1, 66, 66, 30, 0, 1, WGC_ACTIVATION_RELU, 1, 1, 0, 0, 1, 0, NULL, 2},
        {"inf row gelu", F32, F32, 1, 3, 66, 30, 0, 1, WGC_ACTIVATION_GELU, 1, 0, 0, 0, 1, 0, NULL, 2},
        {"inf row silu f16", F16, F16, 1, 66, 66, 30, 0, 1, WGC_ACTIVATION_SILU, 0, 0, 1, 1, 1, 0, NULL, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

/* Misuse: a status and a message, nothing recorded (c keeps its bytes). */
static void misuse(void) {
    const int64_t M = 8, N = 12, K = 6;
    float zeros[256] = {0};
    float sentinel[256];
    for (int i = 0; i < 256; i++) sentinel[i] = 42.0f;
    WgcBuffer *ba = upload(env.device, zeros, M * K * 4), *bb = upload(env.device, zeros, K * N * 4);
    WgcBuffer *bc = upload(env.device, sentinel, M * N * 4), *bv = upload(env.device, zeros, 64 * 4);
    WgcBuffer *bh = upload(env.device, zeros, 64 * 2), *bres = upload(env.device, zeros, M * N * 4);
    WgcTensor a = tensor_of(ba, WGC_DTYPE_F32, 2, SHAPE(M, K)), b = tensor_of(bb, WGC_DTYPE_F32, 2, SHAPE(K, N));
    WgcTensor c = tensor_of(bc, WGC_DTYPE_F32, 2, SHAPE(M, N)), bias = tensor_of(bv, WGC_DTYPE_F32, 1, SHAPE(N));
    WgcTensor res = tensor_of(bres, WGC_DTYPE_F32, 2, SHAPE(M, N));
    WgcTensor bias_wrong = tensor_of(bv, WGC_DTYPE_F32, 1, SHAPE(N + 1));
    WgcTensor bias_f16 = tensor_of(bh, WGC_DTYPE_F16, 1, SHAPE(N));
    WgcTensor res_wrong = tensor_of(bres, WGC_DTYPE_F32, 2, SHAPE(M, N - 1));
    WgcTensor res_over_c = c; /* the residual is C itself */
    WgcTensor c_f16 = tensor_of(bh, WGC_DTYPE_F16, 2, SHAPE(4, 8));
    WgcTensor c_bf16 = tensor_of(bh, WGC_DTYPE_BF16, 2, SHAPE(M, 4));
    WgcTensor a_bf16 = tensor_of(bh, WGC_DTYPE_BF16, 2, SHAPE(M, 2)), b_bf16 = tensor_of(bh, WGC_DTYPE_BF16, 2, SHAPE(2, 4));
    WgcTensor c_int = tensor_of(bc, WGC_DTYPE_I32, 2, SHAPE(M, N));
    WgcGemmEpilogueParams p = {sizeof p, 1.0f, 0, 0, WGC_ACTIVATION_RELU, 0};
    WgcGemmEpilogueParams bad_act = p, bad_pos = p, small = p, tiny = p, inside = p;
    bad_act.activation = 8;
    bad_pos.residual_position = 2;
    tiny.struct_size = 2;
    inside.struct_size = 6;
    small.struct_size = 4; /* only struct_size: alpha 1, no activation */
    const WgcStatus NUL = WGC_ERROR_NULL_POINTER, INV = WGC_ERROR_INVALID_ARGUMENT;
    EXPECT_STATUS(wgc_op_gemm_epilogue(NULL, &p, &a, &b, &bias, NULL, NULL, &c), NUL);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, NULL, &a, &b, &bias, NULL, NULL, &c), NUL);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, NULL, &b, &bias, NULL, NULL, &c), NUL);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, NULL, &bias, NULL, NULL, &c), NUL);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, &bias, NULL, NULL, NULL), NUL);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &bad_act, &a, &b, &bias, NULL, NULL, &c), INV);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &bad_pos, &a, &b, NULL, NULL, &res, &c), INV);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &tiny, &a, &b, NULL, NULL, NULL, &c), INV);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &inside, &a, &b, NULL, NULL, NULL, &c), INV);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, &bias_wrong, NULL, NULL, &c), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, NULL, &bias_wrong, NULL, &c), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, NULL, NULL, &res_wrong, &c), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &a, NULL, NULL, NULL, &c), WGC_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, &bias_f16, NULL, NULL, &c), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, NULL, NULL, NULL, &c_f16), WGC_ERROR_DTYPE_MISMATCH);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, NULL, NULL, NULL, &c_int), WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a_bf16, &b_bf16, NULL, NULL, NULL, &c_bf16),
                  WGC_ERROR_UNSUPPORTED);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, NULL, NULL, &res_over_c, &c), INV);
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &p, &a, &b, &bias, NULL, &res, &res), INV);
    char line[8];
    size_t len = 0;
    EXPECT_STATUS(wgc_op_gemm_epilogue_explain(env.stream, &p, &a, &b, &bias, NULL, NULL, &c, line, sizeof line, NULL),
                  NUL);
    EXPECT_STATUS(wgc_op_gemm_epilogue_explain(env.stream, &p, &a, &b, &bias, NULL, NULL, &c, line, sizeof line, &len),
                  WGC_ERROR_TOO_LARGE);
    EXPECT_STATUS(wgc_op_gemm_epilogue_explain(env.stream, &bad_act, &a, &b, NULL, NULL, NULL, &c, NULL, 0, &len), INV);
    EXPECT_STATUS(wgc_op_gemm_epilogue_explain(env.stream, &p, &a, &b, NULL, NULL, NULL, &c, NULL, 0, &len), WGC_OK);
    EXPECT(len > 20);
    /* Nothing above recorded: c still holds its sentinel. */
    float got[M * N];
    CHECK(wgc_buffer_read(bc, 0, got, sizeof got));
    int intact = 1;
    for (int i = 0; i < M * N; i++) intact &= got[i] == 42.0f;
    EXPECT(intact);
    /* struct_size 4: the defaults (alpha 1, no activation): c = a b = 0. */
    EXPECT_STATUS(wgc_op_gemm_epilogue(env.stream, &small, &a, &b, NULL, NULL, NULL, &c), WGC_OK);
    CHECK(wgc_buffer_read(bc, 0, got, sizeof got));
    int zero = 1;
    for (int i = 0; i < M * N; i++) zero &= got[i] == 0.0f;
    EXPECT(zero);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc), wgc_buffer_release(bv);
    wgc_buffer_release(bh), wgc_buffer_release(bres);
}

int main(void) {
    env = test_env();
    every_activation();
    residuals_views_routes();
    misuse();
    test_env_release(&env);
    return test_finish("test_gemm_epilogue");
}
