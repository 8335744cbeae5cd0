/* wgc_op_conv2d_explain: the route it names is the one wgc_op_conv2d takes
 * (the kernels the profiler sees for the same call), it records nothing,
 * the buffer convention (length query, exact fit, short buffer), and bad
 * input gives the status wgc_op_conv2d gives. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

static TestEnv env;

typedef struct Conv {
    WgcBuffer *bi, *bw, *bb, *bo;
    WgcTensor in, w, b, out;
    WgcConv2dParams p;
} Conv;

static Conv make(WgcDtype dt, int64_t n, int64_t c, int64_t h, int64_t o, int64_t k, uint32_t pad, uint32_t groups) {
    Conv v;
    memset(&v, 0, sizeof v);
    int64_t oh = h + 2 * pad - k + 1;
    size_t es = dt == WGC_DTYPE_F16 ? 2 : 4;
    size_t ni = (size_t)(n * c * h * h), nw = (size_t)(o * (c / groups) * k * k), no = (size_t)(n * o * oh * oh);
    CHECK(wgc_buffer_create(env.device, ni * es + 16, WGC_BUFFER_USAGE_STORAGE, &v.bi));
    CHECK(wgc_buffer_create(env.device, nw * es + 16, WGC_BUFFER_USAGE_STORAGE, &v.bw));
    CHECK(wgc_buffer_create(env.device, (size_t)o * es + 16, WGC_BUFFER_USAGE_STORAGE, &v.bb));
    CHECK(wgc_buffer_create(env.device, no * es + 16, WGC_BUFFER_USAGE_STORAGE, &v.bo));
    v.in = tensor_of(v.bi, dt, 4, (int64_t[]){n, c, h, h});
    v.w = tensor_of(v.bw, dt, 4, (int64_t[]){o, c / groups, k, k});
    v.b = tensor_of(v.bb, dt, 1, (int64_t[]){o});
    v.out = tensor_of(v.bo, dt, 4, (int64_t[]){n, o, oh, oh});
    v.p = (WgcConv2dParams){sizeof(WgcConv2dParams), 1, 1, pad, pad, 1, 1, groups};
    return v;
}

static void drop(Conv *v) {
    wgc_buffer_release(v->bi), wgc_buffer_release(v->bw), wgc_buffer_release(v->bb), wgc_buffer_release(v->bo);
}

/* The explanation of `v`, in a buffer the caller frees. */
static char *explain(Conv *v) {
    size_t len = 12345;
    CHECK(wgc_op_conv2d_explain(env.stream, &v->p, &v->in, &v->w, &v->b, &v->out, NULL, 0, &len));
    char *text = malloc(len + 1);
    size_t again = 0;
    CHECK(wgc_op_conv2d_explain(env.stream, &v->p, &v->in, &v->w, &v->b, &v->out, text, len + 1, &again));
    EXPECT(again == len && strlen(text) == len);
    return text;
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* Run the convolution under the profiler: does some kernel's name start
 * with `kernel` (NULL: were no commands recorded at all; "!prefix": some
 * were, none of them starting with prefix)? */
static int ran(Conv *v, const char *kernel) {
    CHECK(wgc_stream_profile_clear(env.stream));
    CHECK(wgc_stream_set_profiling(env.stream, 1));
    CHECK(wgc_op_conv2d(env.stream, &v->p, &v->in, &v->w, &v->b, &v->out));
    CHECK(wgc_stream_set_profiling(env.stream, 0));
    WgcProfileRecord *r = NULL;
    size_t n = 0;
    CHECK(wgc_stream_profile_records(env.stream, &r, &n));
    int found = kernel == NULL ? n == 0 : 0;
    if (kernel && kernel[0] == '!') {
        found = n > 0;
        for (size_t i = 0; i < n; i++) found &= !starts_with(r[i].kernel, kernel + 1);
    } else {
        for (size_t i = 0; kernel && i < n; i++) found |= starts_with(r[i].kernel, kernel);
    }
    if (!found) {
        fprintf(stderr, "no kernel %s among %zu commands:\n", kernel ? kernel : "(none)", n);
        for (size_t i = 0; i < n; i++) fprintf(stderr, "  %s\n", r[i].kernel);
    }
    CHECK(wgc_profile_records_free(r));
    return found;
}

/* Each route the explanation names runs the kernels of that route. */
static void test_routes(void) {
    struct {
        WgcDtype dt;
        int64_t n, c, h, o, k;
        uint32_t pad, groups;
        const char *route, *kernel;
    } cases[] = {
        {WGC_DTYPE_F32, 2, 5, 9, 7, 3, 1, 1, "route implicit_gemm (", "conv.wgsl:conv_gemm"},
        {WGC_DTYPE_F32, 1, 6, 8, 6, 3, 1, 6, "route depthwise (", "conv_depthwise.wgsl:dw_strips"},
        /* Two output channels per group: the direct kernel. */
        {WGC_DTYPE_F32, 1, 6, 8, 12, 3, 1, 6, "route direct (", "conv_direct.wgsl:conv_direct"},
        {WGC_DTYPE_F32, 1, 8, 16, 4, 1, 0, 1, "route gemm_1x1 ", "!conv"},
        /* 225 pixels per image: under the 256 the GEMM route needs. */
        {WGC_DTYPE_F32, 1, 8, 15, 4, 1, 0, 1, "route implicit_gemm (", "conv.wgsl:conv_gemm"},
        {WGC_DTYPE_F32, 0, 4, 6, 4, 3, 0, 1, "route empty ", NULL},
        {WGC_DTYPE_F16, 1, 6, 8, 6, 3, 1, 6, "route depthwise (", "conv_depthwise.wgsl:dw_strips<f16>"},
        {WGC_DTYPE_F16, 1, 6, 8, 12, 3, 1, 6, "route direct (", "conv_direct.wgsl:conv_direct<f16>"},
        {WGC_DTYPE_F16, 2, 5, 9, 7, 3, 1, 1, NULL, NULL}, /* by adapter, below */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].dt == WGC_DTYPE_F16 && !env.info.has_f16) continue;
        Conv v = make(cases[i].dt, cases[i].n, cases[i].c, cases[i].h, cases[i].o, cases[i].k, cases[i].pad,
                      cases[i].groups);
        char *text = explain(&v);
        const char *route = cases[i].route, *kernel = cases[i].kernel;
        /* f16 with 5 channels (under the KHR gather's 8): the stem route,
         * im2col columns and the GEMM. */
        if (!route) route = "route im2col_stem (", kernel = "conv_im2col.wgsl:conv_im2col8";
        if (!starts_with(text, route)) {
            fprintf(stderr, "case %zu: expected %s..., got: %s\n", i, route, text);
            g_failures++;
        }
        EXPECT(strstr(text, " because ") != NULL);
        EXPECT(strstr(text, "; activation: ") != NULL);
        EXPECT(ran(&v, kernel));
        free(text);
        drop(&v);
    }
    /* One 64x64 tile and K 1152 (under a third of any split fill): K in
     * runs into f32 slabs, which the second pass sums with the bias and
     * the activation. */
    Conv split = make(WGC_DTYPE_F32, 1, 128, 6, 20, 3, 1, 1);
    char *split_text = explain(&split);
    EXPECT(starts_with(split_text, "route implicit_gemm (RM 1, RN 1, K in 2 run(s) of 576 into f32 slabs summed"));
    EXPECT(strstr(split_text, "; activation: in the route's epilogue") != NULL);
    EXPECT(ran(&split, "gemm_split_sum.wgsl"));
    free(split_text);
    drop(&split);
    /* Why the GEMM declined is given. */
    Conv v = make(WGC_DTYPE_F32, 1, 8, 15, 4, 1, 0, 1);
    char *text = explain(&v);
    EXPECT(strstr(text, "declined: gemm_1x1: 225 pixels per image, under 256") != NULL);
    free(text);
    drop(&v);
    /* Channels-last packed pixels: with WGC_CONV_1X1_NHWC=1 (CTest's
     * test_conv_explain_gemm_1x1_nhwc), one GEMM over both images, whatever
     * their size; the tiled kernel here, so no GEMM epilogue. By default
     * only for f16 on the KHR GEMM (128 or more input and output channels). */
    v = make(WGC_DTYPE_F32, 2, 8, 5, 4, 1, 0, 1);
    int64_t xs[4] = {5 * 5 * 8, 1, 5 * 8, 8}, ys[4] = {5 * 5 * 4, 1, 5 * 4, 4};
    memcpy(v.in.strides, xs, sizeof xs);
    memcpy(v.out.strides, ys, sizeof ys);
    text = explain(&v);
    const char *on = getenv("WGC_CONV_1X1_NHWC");
    if (on && !strcmp(on, "1")) {
        EXPECT(starts_with(text, "route gemm_1x1_nhwc (one GEMM over all images, out^T = W x^T"));
        EXPECT(strstr(text, "; activation: a pass of its own") != NULL);
        EXPECT(ran(&v, "!conv"));
    } else {
        EXPECT(strstr(text, "declined: gemm_1x1: the input's or output's pixels are not one unit-stride dim; "
                            "gemm_1x1_nhwc: by default f16 with at least 128 input and 128 output channels on "
                            "the KHR GEMM only (f32 with 8 and 4; WGC_CONV_1X1_NHWC=1 turns it on)") != NULL);
    }
    EXPECT(strstr(text, "; residual: added in place by a pass of its own") != NULL);
    free(text);
    drop(&v);
}

/* Explaining records nothing: the output keeps its contents. */
static void test_records_nothing(void) {
    Conv v = make(WGC_DTYPE_F32, 1, 3, 6, 2, 3, 0, 1);
    float sentinel[32];
    for (int i = 0; i < 32; i++) sentinel[i] = 42.0f + (float)i;
    CHECK(wgc_buffer_write(v.bo, 0, sentinel, sizeof sentinel));
    char *text = explain(&v);
    free(text);
    CHECK(wgc_stream_synchronize(env.stream));
    float got[32];
    CHECK(wgc_buffer_read(v.bo, 0, got, sizeof got));
    EXPECT(memcmp(got, sentinel, sizeof got) == 0);
    drop(&v);
}

/* The buffer convention: length always set; too short is TOO_LARGE with
 * the buffer untouched; NULLs. */
static void test_buffer(void) {
    Conv v = make(WGC_DTYPE_F32, 1, 3, 6, 2, 3, 0, 1);
    size_t len = 0;
    CHECK(wgc_op_conv2d_explain(env.stream, &v.p, &v.in, &v.w, &v.b, &v.out, NULL, 0, &len));
    EXPECT(len > 20);
    char small[8];
    memset(small, 'x', sizeof small);
    size_t need = 0;
    EXPECT_STATUS(wgc_op_conv2d_explain(env.stream, &v.p, &v.in, &v.w, &v.b, &v.out, small, sizeof small, &need),
                  WGC_ERROR_TOO_LARGE);
    EXPECT(need == len);
    for (size_t i = 0; i < sizeof small; i++) EXPECT(small[i] == 'x');
    /* Exactly the length without room for the NUL: too short as well. */
    char *exact = malloc(len + 1);
    EXPECT_STATUS(wgc_op_conv2d_explain(env.stream, &v.p, &v.in, &v.w, &v.b, &v.out, exact, len, &need),
                  WGC_ERROR_TOO_LARGE);
    CHECK(wgc_op_conv2d_explain(env.stream, &v.p, &v.in, &v.w, &v.b, &v.out, exact, len + 1, &need));
    EXPECT(exact[len] == '\0' && strlen(exact) == len && starts_with(exact, "route "));
    free(exact);
    EXPECT_STATUS(wgc_op_conv2d_explain(env.stream, &v.p, &v.in, &v.w, &v.b, &v.out, NULL, 16, &need),
                  WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_conv2d_explain(env.stream, &v.p, &v.in, &v.w, &v.b, &v.out, small, sizeof small, NULL),
                  WGC_ERROR_NULL_POINTER);
    drop(&v);
}

/* Each bad call gives the status wgc_op_conv2d gives, and writes nothing. */
static void test_misuse(void) {
    Conv v = make(WGC_DTYPE_F32, 1, 4, 6, 2, 3, 0, 1);
    WgcConv2dParams p = v.p, g3 = v.p, bad = v.p;
    g3.groups = 3;
    bad.struct_size = 0;
    WgcTensor in = v.in, w = v.w, b = v.b, out = v.out;
    WgcTensor wrong_out = tensor_of(v.bo, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 5, 4});
    WgcTensor wrong_bias = tensor_of(v.bb, WGC_DTYPE_F32, 1, (int64_t[]){3});
    WgcTensor rank3 = tensor_of(v.bi, WGC_DTYPE_F32, 3, (int64_t[]){4, 6, 6});
    WgcTensor small_in = tensor_of(v.bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 4, 2, 2});
    WgcTensor f16_w = tensor_of(v.bw, WGC_DTYPE_F16, 4, (int64_t[]){2, 4, 3, 3});
    WgcTensor past = out;
    past.offset = 1 << 20;
    WgcTensor over_input = tensor_of(v.bi, WGC_DTYPE_F32, 4, (int64_t[]){1, 2, 4, 4});
    struct {
        const WgcConv2dParams *p;
        const WgcTensor *in, *w, *b, *out;
    } calls[] = {
        {&p, &in, &w, &b, &wrong_out}, {&p, &in, &w, &wrong_bias, &out}, {&p, &rank3, &w, &b, &out},
        {&g3, &in, &w, &b, &out},      {&p, &small_in, &w, &b, &out},    {&p, &in, &f16_w, &b, &out},
        {&p, &in, &w, &b, &past},      {&p, &in, &w, &b, &over_input},   {&bad, &in, &w, &b, &out},
        {NULL, &in, &w, &b, &out},     {&p, NULL, &w, &b, &out},         {&p, &in, &w, &b, NULL},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        WgcStatus want = wgc_op_conv2d(env.stream, calls[i].p, calls[i].in, calls[i].w, calls[i].b, calls[i].out);
        EXPECT(want != WGC_OK);
        char text[256];
        memset(text, 'x', sizeof text);
        size_t len = 777;
        EXPECT_STATUS(wgc_op_conv2d_explain(env.stream, calls[i].p, calls[i].in, calls[i].w, calls[i].b,
                                            calls[i].out, text, sizeof text, &len),
                      want);
        EXPECT(len == 777 && text[0] == 'x');
    }
    size_t len = 0;
    EXPECT_STATUS(wgc_op_conv2d_explain(NULL, &p, &in, &w, &b, &out, NULL, 0, &len), WGC_ERROR_NULL_POINTER);
    drop(&v);
}

/* WGC_CONV_SCRATCH_BYTES under two slabs: no split for filling, and the
 * two runs a K of 17,100 needs go one slab a pass. */
static void test_split_passes(void) {
    TestEnv base = env;
    env = test_env_setting("WGC_CONV_SCRATCH_BYTES", "4");
    Conv v = make(WGC_DTYPE_F32, 1, 128, 6, 20, 3, 1, 1);
    char *text = explain(&v);
    EXPECT(starts_with(text, "route implicit_gemm (RM 1, RN 1, K in 1 run(s) of 1152, 3x3"));
    free(text);
    drop(&v);
    v = make(WGC_DTYPE_F32, 1, 1900, 3, 5, 3, 1, 1);
    text = explain(&v);
    EXPECT(strstr(text, "K in 2 run(s) of 8560 into f32 slabs, 1 at a time summed") != NULL);
    EXPECT(ran(&v, "gemm_split_sum.wgsl"));
    free(text);
    drop(&v);
    test_env_release(&env);
    env = base;
}

int main(void) {
    env = test_env();
    test_split_passes();
    test_routes();
    test_records_nothing();
    test_buffer();
    test_misuse();
    test_env_release(&env);
    return test_finish("test_conv_explain");
}
