/* wgc_op_gemm_explain: the route line for products that take different
 * kernels (tiled, matrix-vector, gemm_rows, empty), the length protocol
 * (length query, exact fit, short buffer), nothing recorded (C unchanged),
 * and misuse: every bad argument gets the status wgc_op_gemm gives it. */
#include "test_util.h"

#define MAXN 4096

typedef struct {
    WgcBuffer *a, *b, *c;
} Bufs;

static Bufs bufs(WgcDevice *dev) {
    static float zeros[MAXN * 16];
    Bufs x;
    x.a = upload(dev, zeros, sizeof zeros);
    x.b = upload(dev, zeros, sizeof zeros);
    x.c = upload(dev, zeros, sizeof zeros);
    return x;
}

static WgcTensor mat(WgcBuffer *b, WgcDtype dtype, int64_t rows, int64_t cols) {
    int64_t shape[2] = {rows, cols};
    return tensor_of(b, dtype, 2, shape);
}

/* The line for an m x n x k f32 product; checks the length protocol. */
static void explain(WgcStream *s, Bufs x, int64_t m, int64_t n, int64_t k, char *line, size_t cap) {
    WgcTensor a = mat(x.a, WGC_DTYPE_F32, m, k), b = mat(x.b, WGC_DTYPE_F32, k, n), c = mat(x.c, WGC_DTYPE_F32, m, n);
    size_t len = 0, len2 = 0;
    CHECK(wgc_op_gemm_explain(s, 1.0f, &a, 0, &b, 0, 0.0f, &c, NULL, 0, &len));
    EXPECT(len > 0 && len + 1 <= cap);
    memset(line, 'x', cap);
    CHECK(wgc_op_gemm_explain(s, 1.0f, &a, 0, &b, 0, 0.0f, &c, line, len + 1, &len2));
    EXPECT(len2 == len && strlen(line) == len);
    printf("%lldx%lldx%lld: %s\n", (long long)m, (long long)n, (long long)k, line);
}

static void routes(WgcStream *s, Bufs x) {
    char line[1024];
    explain(s, x, 64, 48, 32, line, sizeof line);
    EXPECT(!strncmp(line, "route tiled ", 12) && strstr(line, " because ") && strstr(line, "m=64 n=48 k=32 batch=1"));
    explain(s, x, 1, 4096, 16, line, sizeof line);
    EXPECT(!strncmp(line, "route gemv axpy", 15));
    explain(s, x, 16, 1024, 64, line, sizeof line);
    EXPECT(!strncmp(line, "route rows rt=16", 16));
    explain(s, x, 0, 8, 8, line, sizeof line);
    EXPECT(!strncmp(line, "route none because C is empty", 29));
    /* Transposed operands: the flags are honoured as in wgc_op_gemm. */
    WgcTensor a = mat(x.a, WGC_DTYPE_F32, 1024, 16), b = mat(x.b, WGC_DTYPE_F32, 1024, 64);
    WgcTensor c = mat(x.c, WGC_DTYPE_F32, 16, 64);
    size_t len = 0;
    CHECK(wgc_op_gemm_explain(s, 1.0f, &a, 1, &b, 0, 0.0f, &c, line, sizeof line, &len));
    EXPECT(strstr(line, "m=16 n=64 k=1024") != NULL);
}

/* A short buffer: TOO_LARGE, the length needed, and the buffer untouched. */
static void short_buffer(WgcStream *s, Bufs x) {
    WgcTensor a = mat(x.a, WGC_DTYPE_F32, 64, 32), b = mat(x.b, WGC_DTYPE_F32, 32, 48), c = mat(x.c, WGC_DTYPE_F32, 64, 48);
    char small[8];
    memset(small, 'x', sizeof small);
    size_t len = 0;
    EXPECT_STATUS(wgc_op_gemm_explain(s, 1.0f, &a, 0, &b, 0, 0.0f, &c, small, sizeof small, &len), WGC_ERROR_TOO_LARGE);
    EXPECT(len > sizeof small);
    EXPECT(small[0] == 'x' && small[7] == 'x');
    /* Exactly one byte short (no room for the NUL). */
    char *exact = (char *)malloc(len + 1);
    size_t len2 = 0;
    EXPECT_STATUS(wgc_op_gemm_explain(s, 1.0f, &a, 0, &b, 0, 0.0f, &c, exact, len, &len2), WGC_ERROR_TOO_LARGE);
    EXPECT(len2 == len);
    free(exact);
}

/* Explaining records nothing: C keeps its values. */
static void records_nothing(WgcDevice *dev, WgcStream *s) {
    float ones[64 * 64], back[64 * 64];
    for (int i = 0; i < 64 * 64; i++) ones[i] = 1.0f;
    WgcBuffer *ba = upload(dev, ones, sizeof ones), *bc = upload(dev, ones, sizeof ones);
    WgcTensor a = mat(ba, WGC_DTYPE_F32, 64, 64), c = mat(bc, WGC_DTYPE_F32, 64, 64);
    char line[512];
    size_t len = 0;
    CHECK(wgc_op_gemm_explain(s, 2.0f, &a, 0, &a, 0, 3.0f, &c, line, sizeof line, &len));
    CHECK(wgc_stream_synchronize(s));
    CHECK(wgc_buffer_read(bc, 0, back, sizeof back));
    int same = 1;
    for (int i = 0; i < 64 * 64; i++) same &= back[i] == 1.0f;
    EXPECT(same);
    wgc_buffer_release(ba), wgc_buffer_release(bc);
}

/* Each bad call: the same status from both entry points. */
#define SAME_STATUS(expected, s, alpha, a, ta, b, tb, beta, c)                                              \
    do {                                                                                                   \
        char line_[256];                                                                                   \
        size_t len_ = 0;                                                                                   \
        EXPECT_STATUS(wgc_op_gemm(s, alpha, a, ta, b, tb, beta, c), expected);                             \
        EXPECT_STATUS(wgc_op_gemm_explain(s, alpha, a, ta, b, tb, beta, c, line_, sizeof line_, &len_), expected); \
    } while (0)

static void misuse(WgcDevice *dev, WgcStream *s, Bufs x) {
    WgcTensor a = mat(x.a, WGC_DTYPE_F32, 8, 4), b = mat(x.b, WGC_DTYPE_F32, 4, 6), c = mat(x.c, WGC_DTYPE_F32, 8, 6);
    char line[256];
    size_t len = 0;
    /* The explanation's own arguments. */
    EXPECT_STATUS(wgc_op_gemm_explain(s, 1, &a, 0, &b, 0, 0, &c, line, sizeof line, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_op_gemm_explain(s, 1, &a, 0, &b, 0, 0, &c, NULL, 16, &len), WGC_ERROR_NULL_POINTER);
    /* wgc_op_gemm's. */
    SAME_STATUS(WGC_ERROR_NULL_POINTER, NULL, 1, &a, 0, &b, 0, 0, &c);
    SAME_STATUS(WGC_ERROR_NULL_POINTER, s, 1, NULL, 0, &b, 0, 0, &c);
    SAME_STATUS(WGC_ERROR_NULL_POINTER, s, 1, &a, 0, NULL, 0, 0, &c);
    SAME_STATUS(WGC_ERROR_NULL_POINTER, s, 1, &a, 0, &b, 0, 0, NULL);
    WgcTensor b_bad = mat(x.b, WGC_DTYPE_F32, 5, 6);
    SAME_STATUS(WGC_ERROR_SHAPE_MISMATCH, s, 1, &a, 0, &b_bad, 0, 0, &c);
    WgcTensor c_bad = mat(x.c, WGC_DTYPE_F32, 8, 7);
    SAME_STATUS(WGC_ERROR_SHAPE_MISMATCH, s, 1, &a, 0, &b, 0, 0, &c_bad);
    SAME_STATUS(WGC_ERROR_SHAPE_MISMATCH, s, 1, &a, 1, &b, 0, 0, &c);
    int64_t vec = 4;
    WgcTensor a1 = tensor_of(x.a, WGC_DTYPE_F32, 1, &vec);
    SAME_STATUS(WGC_ERROR_SHAPE_MISMATCH, s, 1, &a1, 0, &b, 0, 0, &c);
    WgcTensor b_i32 = mat(x.b, WGC_DTYPE_I32, 4, 6);
    SAME_STATUS(WGC_ERROR_DTYPE_MISMATCH, s, 1, &a, 0, &b_i32, 0, 0, &c);
    WgcTensor c_on_a = mat(x.a, WGC_DTYPE_F32, 8, 6);
    SAME_STATUS(WGC_ERROR_INVALID_ARGUMENT, s, 1, &a, 0, &b, 0, 0, &c_on_a);
    WgcTensor far = c;
    far.offset = 16 * MAXN;
    SAME_STATUS(WGC_ERROR_OUT_OF_RANGE, s, 1, &a, 0, &b, 0, 0, &far);
    /* A tensor of another device. */
    WgcDevice *dev2 = NULL;
    WgcInstance *inst = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev2));
    static float zeros[64];
    WgcBuffer *other = upload(dev2, zeros, sizeof zeros);
    WgcTensor b_other = mat(other, WGC_DTYPE_F32, 4, 6);
    SAME_STATUS(WGC_ERROR_DEVICE_MISMATCH, s, 1, &a, 0, &b_other, 0, 0, &c);
    wgc_buffer_release(other);
    wgc_device_release(dev2);
    wgc_instance_release(inst);
    (void)dev;
}

int main(void) {
    TestEnv env = test_env();
    Bufs x = bufs(env.device);
    routes(env.stream, x);
    short_buffer(env.stream, x);
    records_nothing(env.device, env.stream);
    misuse(env.device, env.stream, x);
    wgc_buffer_release(x.a), wgc_buffer_release(x.b), wgc_buffer_release(x.c);
    test_env_release(&env);
    return test_finish("test_gemm_explain");
}
