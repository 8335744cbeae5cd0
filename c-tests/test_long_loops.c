/* Every operator family at sizes where one invocation of a kernel that
 * loops over its whole share of the work would run more than 65,535 loop
 * iterations: a software driver (lavapipe, where CI runs) stops an
 * invocation's loops there, counted over all its loops, and the results
 * come out silently wrong. Shapes make the loops long but the data modest
 * (one long row, a window the size of the input, a few outputs). Also GEMM
 * accuracy for a long same-sign sum (K = 600,000), and f16 tensors through
 * the chunked kernels.
 *
 * Tolerances (f32, |got - ref| <= atol + rel * |ref|): softmax 1e-12 +
 * 1e-5 rel; log-softmax 2e-6 + 1e-6 rel; layer/RMS norm 2e-5 + 1e-5 rel;
 * max pooling exact; average pooling and global average pooling 1e-6 *
 * mean(|x|) over the window; depthwise convolution 1e-6 * sum |x w|; GEMM
 * 1e-6 * K * max|a| * max|b| (the header's bound for typical data); f16
 * results 2e-3 relative (1e-3 for a mean or max). */
#include "test_util.h"

static TestEnv env;

static WgcBuffer *zeros(size_t bytes) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(env.device, bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static float *read_f32(WgcBuffer *b, size_t n) {
    float *h = malloc(n * 4 + 4);
    CHECK(wgc_buffer_read(b, 0, h, n * 4));
    return h;
}

/* Softmax and log-softmax of one contiguous row of odd length (the strided
 * kernel: 2 passes of len / 256 iterations each). */
static void test_softmax_row(void) {
    const int64_t len = 8500001;
    float *x = malloc((size_t)len * 4);
    fill_uniform_f32(x, (size_t)len, -3, 3);
    WgcBuffer *bx = upload(env.device, x, (size_t)len * 4), *by = zeros((size_t)len * 4);
    int64_t shape[2] = {1, len};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 2, shape), ty = tensor_of(by, WGC_DTYPE_F32, 2, shape);
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < len; j++) m = fmax(m, x[j]);
    for (int64_t j = 0; j < len; j++) s += exp((double)x[j] - m);
    double *ref = malloc((size_t)len * sizeof(double));
    for (int lg = 0; lg < 2; lg++) {
        CHECK(lg ? wgc_op_log_softmax(env.stream, &tx, 1, &ty) : wgc_op_softmax(env.stream, &tx, 1, &ty));
        float *got = read_f32(by, (size_t)len);
        for (int64_t j = 0; j < len; j++) ref[j] = lg ? (double)x[j] - m - log(s) : exp((double)x[j] - m) / s;
        if (lg) compare_f32("log_softmax of an 8.5M row", got, ref, (size_t)len, 2e-6, 1e-6);
        else compare_f32("softmax of an 8.5M row", got, ref, (size_t)len, 1e-12, 1e-5);
        free(got);
    }
    free(x), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(by);
}

/* Layer norm (with weight and bias) and RMS norm (with weight) of one
 * contiguous row of odd length (the strided kernel: 3 passes). */
static void test_norm_row(void) {
    const int64_t len = 3000001;
    float *x = malloc((size_t)len * 4), *w = malloc((size_t)len * 4), *b = malloc((size_t)len * 4);
    fill_uniform_f32(x, (size_t)len, -2, 3);
    fill_uniform_f32(w, (size_t)len, 0.5, 1.5);
    fill_uniform_f32(b, (size_t)len, -1, 1);
    WgcBuffer *bx = upload(env.device, x, (size_t)len * 4), *bw = upload(env.device, w, (size_t)len * 4),
              *bb = upload(env.device, b, (size_t)len * 4), *by = zeros((size_t)len * 4);
    int64_t shape[2] = {1, len};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 2, shape), ty = tensor_of(by, WGC_DTYPE_F32, 2, shape);
    WgcTensor tw = tensor_of(bw, WGC_DTYPE_F32, 1, shape + 1), tb = tensor_of(bb, WGC_DTYPE_F32, 1, shape + 1);
    double *ref = malloc((size_t)len * sizeof(double));
    for (int rms = 0; rms < 2; rms++) {
        if (rms) CHECK(wgc_op_rms_norm(env.stream, &tx, &tw, 1, 1e-5f, &ty));
        else CHECK(wgc_op_layer_norm(env.stream, &tx, &tw, &tb, 1, 1e-5f, &ty));
        float *got = read_f32(by, (size_t)len);
        double mean = 0, var = 0;
        for (int64_t j = 0; j < len; j++) mean += x[j];
        mean = rms ? 0 : mean / (double)len;
        for (int64_t j = 0; j < len; j++) var += ((double)x[j] - mean) * ((double)x[j] - mean);
        double rstd = 1 / sqrt(var / (double)len + 1e-5);
        for (int64_t j = 0; j < len; j++) ref[j] = ((double)x[j] - mean) * rstd * w[j] + (rms ? 0 : b[j]);
        compare_f32(rms ? "rms_norm of a 3M row" : "layer_norm of a 3M row", got, ref, (size_t)len, 2e-5, 1e-5);
        free(got);
    }
    free(x), free(w), free(b), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

/* Max or average pooling of a (1, C, H, W) input with a kh x kw window,
 * stride s and padding p on both dims, against a direct reference. */
static void pool_case(const char *what, int max, int64_t c, int64_t h, int64_t w, uint32_t kh, uint32_t kw, uint32_t s,
                      uint32_t p, int include_pad) {
    size_t n = (size_t)(c * h * w);
    float *x = malloc(n * 4);
    fill_uniform_f32(x, n, max ? -1 : 0, 1);
    if (max) x[n - 1] = 2; /* the last element read wins */
    int64_t oh = (h + 2 * p - kh) / s + 1, ow = (w + 2 * p - kw) / s + 1, no = (size_t)(c * oh * ow);
    WgcBuffer *bx = upload(env.device, x, n * 4), *by = zeros((size_t)no * 4);
    int64_t is[4] = {1, c, h, w}, os[4] = {1, c, oh, ow};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 4, is), ty = tensor_of(by, WGC_DTYPE_F32, 4, os);
    WgcPool2dParams pp;
    memset(&pp, 0, sizeof pp);
    pp.struct_size = sizeof pp;
    pp.kernel_h = kh, pp.kernel_w = kw, pp.stride_h = s, pp.stride_w = s, pp.pad_h = p, pp.pad_w = p;
    pp.count_include_pad = (uint32_t)include_pad;
    CHECK(max ? wgc_op_max_pool2d(env.stream, &pp, &tx, &ty) : wgc_op_avg_pool2d(env.stream, &pp, &tx, &ty));
    float *got = read_f32(by, (size_t)no);
    double *ref = malloc((size_t)no * sizeof(double)), *tol = malloc((size_t)no * sizeof(double));
    int bad = 0;
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double best = -INFINITY, sum = 0, abs_sum = 0;
                int64_t count = 0;
                for (int64_t a = i * s - p; a < i * s - p + kh; a++)
                    for (int64_t b = j * s - p; b < j * s - p + kw; b++) {
                        if (a < 0 || a >= h || b < 0 || b >= w) continue;
                        double v = x[(ch * h + a) * w + b];
                        best = fmax(best, v), sum += v, abs_sum += fabs(v), count++;
                    }
                int64_t o = (ch * oh + i) * ow + j;
                double div = include_pad ? (double)kh * kw : (double)count;
                ref[o] = max ? best : sum / div;
                tol[o] = max ? 0 : 1e-6 * abs_sum / (double)count;
            }
    for (int64_t o = 0; o < no; o++) {
        if (!(fabs(got[o] - ref[o]) <= tol[o]) && bad++ < 3)
            fprintf(stderr, "%s: out[%lld] = %.9g, expected %.9g\n", what, (long long)o, got[o], ref[o]);
    }
    if (bad) g_failures++;
    free(x), free(got), free(ref), free(tol);
    wgc_buffer_release(bx), wgc_buffer_release(by);
}

static void test_pooling(void) {
    /* 260 x 261 loop iterations for one invocation per output. */
    pool_case("max pool 260x260", 1, 2, 260, 260, 260, 260, 1, 0, 0);
    pool_case("avg pool 260x260", 0, 2, 260, 260, 260, 260, 1, 0, 0);
    pool_case("avg pool 259x259 pad 1, padding not counted", 0, 1, 260, 258, 259, 259, 1, 1, 0);
    pool_case("avg pool 259x259 pad 1, padding counted", 0, 1, 258, 258, 259, 259, 1, 1, 1);
    /* Windows of over 262,144 elements: chunks and a pass that folds them. */
    pool_case("max pool 513x513, stride 3", 1, 1, 516, 516, 513, 513, 3, 0, 0);
    pool_case("avg pool 513x513, stride 3", 0, 1, 516, 516, 513, 513, 3, 0, 0);
}

/* Global average pooling of 2100 x 2100 planes (68,907 loads for each of
 * 64 invocations per plane), values in [0, 2). */
static void test_global_avg_pool(void) {
    const int64_t c = 2, hw = 2100 * 2100;
    float *x = malloc((size_t)(c * hw) * 4);
    fill_uniform_f32(x, (size_t)(c * hw), 0, 2);
    WgcBuffer *bx = upload(env.device, x, (size_t)(c * hw) * 4), *by = zeros(16);
    int64_t is[4] = {1, c, 2100, 2100}, os[4] = {1, c, 1, 1};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 4, is), ty = tensor_of(by, WGC_DTYPE_F32, 4, os);
    CHECK(wgc_op_global_avg_pool2d(env.stream, &tx, &ty));
    float *got = read_f32(by, (size_t)c);
    double ref[2];
    for (int64_t ch = 0; ch < c; ch++) {
        double s = 0;
        for (int64_t i = 0; i < hw; i++) s += x[ch * hw + i];
        ref[ch] = s / (double)hw;
    }
    compare_f32("global_avg_pool2d of 2100x2100 planes", got, ref, (size_t)c, 0, 1e-6);
    free(x), free(got);
    wgc_buffer_release(bx), wgc_buffer_release(by);
}

/* Depthwise convolution of (1, C, h, w) with a (C, 1, k, k) kernel, bias,
 * stride s, padding p. */
static void depthwise_case(const char *what, int64_t c, int64_t h, int64_t w, int64_t k, uint32_t s, uint32_t p) {
    size_t nx = (size_t)(c * h * w), nw = (size_t)(c * k * k);
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), bias[4] = {0.5f, -0.25f, 1, 2};
    fill_uniform_f32(x, nx, -1, 1);
    fill_uniform_f32(wt, nw, -1, 1);
    int64_t oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1, no = c * oh * ow;
    WgcBuffer *bx = upload(env.device, x, nx * 4), *bw = upload(env.device, wt, nw * 4),
              *bb = upload(env.device, bias, sizeof bias), *by = zeros((size_t)no * 4);
    int64_t is[4] = {1, c, h, w}, ws[4] = {c, 1, k, k}, os[4] = {1, c, oh, ow};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 4, is), tw = tensor_of(bw, WGC_DTYPE_F32, 4, ws),
              tb = tensor_of(bb, WGC_DTYPE_F32, 1, &c), ty = tensor_of(by, WGC_DTYPE_F32, 4, os);
    WgcConv2dParams cp;
    memset(&cp, 0, sizeof cp);
    cp.struct_size = sizeof cp;
    cp.stride_h = s, cp.stride_w = s, cp.pad_h = p, cp.pad_w = p, cp.groups = (uint32_t)c;
    CHECK(wgc_op_conv2d(env.stream, &cp, &tx, &tw, &tb, &ty));
    float *got = read_f32(by, (size_t)no);
    int bad = 0;
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double sum = bias[ch], abs_sum = fabs(bias[ch]);
                for (int64_t a = 0; a < k; a++)
                    for (int64_t b = 0; b < k; b++) {
                        int64_t ih = i * s - p + a, iw = j * s - p + b;
                        if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                        double t = (double)x[(ch * h + ih) * w + iw] * wt[(ch * k + a) * k + b];
                        sum += t, abs_sum += fabs(t);
                    }
                int64_t o = (ch * oh + i) * ow + j;
                if (!(fabs(got[o] - sum) <= 1e-6 * abs_sum) && bad++ < 3)
                    fprintf(stderr, "%s: out[%lld] = %.9g, expected %.9g\n", what, (long long)o, got[o], sum);
            }
    if (bad) g_failures++;
    free(x), free(wt), free(got);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

static void test_depthwise(void) {
    depthwise_case("depthwise 257x257 kernel", 2, 257, 257, 257, 1, 0);
    depthwise_case("depthwise 257x257 kernel, pad 1", 2, 257, 259, 257, 1, 1);
    /* Over 262,144 taps: chunks and a pass that adds them. */
    depthwise_case("depthwise 513x513 kernel, stride 2, pad 1", 3, 514, 515, 513, 2, 1);
}

/* a (1 x K) times b (K x 1), values in [0, 1): a long same-sign sum. */
static void gemm_dot(const char *what, int64_t k) {
    float *a = malloc((size_t)k * 4), *b = malloc((size_t)k * 4);
    fill_uniform_f32(a, (size_t)k, 0, 1);
    fill_uniform_f32(b, (size_t)k, 0, 1);
    WgcBuffer *ba = upload(env.device, a, (size_t)k * 4), *bb = upload(env.device, b, (size_t)k * 4), *bc = zeros(16);
    int64_t sa[2] = {1, k}, sb[2] = {k, 1}, sc[2] = {1, 1};
    WgcTensor ta = tensor_of(ba, WGC_DTYPE_F32, 2, sa), tb = tensor_of(bb, WGC_DTYPE_F32, 2, sb),
              tc = tensor_of(bc, WGC_DTYPE_F32, 2, sc);
    CHECK(wgc_op_gemm(env.stream, 1, &ta, 0, &tb, 0, 0, &tc));
    float *got = read_f32(bc, 1);
    double ref = 0, max_a = 0, max_b = 0;
    for (int64_t i = 0; i < k; i++) {
        ref += (double)a[i] * b[i];
        max_a = fmax(max_a, a[i]), max_b = fmax(max_b, b[i]);
    }
    compare_f32(what, got, &ref, 1, 1e-6 * (double)k * max_a * max_b, 0);
    free(a), free(b), free(got);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
}

/* A 1x1 convolution runs as a GEMM with a per-row bias; 16400 input
 * channels split its K. */
static void test_conv1x1_split(void) {
    const int64_t c = 16400, o = 3, hw = 256;
    float *x = malloc((size_t)(c * hw) * 4), *w = malloc((size_t)(o * c) * 4), bias[3] = {1, -2, 0.5f};
    fill_uniform_f32(x, (size_t)(c * hw), -1, 1);
    fill_uniform_f32(w, (size_t)(o * c), -1, 1);
    WgcBuffer *bx = upload(env.device, x, (size_t)(c * hw) * 4), *bw = upload(env.device, w, (size_t)(o * c) * 4),
              *bb = upload(env.device, bias, sizeof bias), *by = zeros((size_t)(o * hw) * 4);
    int64_t is[4] = {1, c, 16, 16}, ws[4] = {o, c, 1, 1}, os[4] = {1, o, 16, 16};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 4, is), tw = tensor_of(bw, WGC_DTYPE_F32, 4, ws),
              tb = tensor_of(bb, WGC_DTYPE_F32, 1, &o), ty = tensor_of(by, WGC_DTYPE_F32, 4, os);
    WgcConv2dParams cp;
    memset(&cp, 0, sizeof cp);
    cp.struct_size = sizeof cp;
    CHECK(wgc_op_conv2d(env.stream, &cp, &tx, &tw, &tb, &ty));
    float *got = read_f32(by, (size_t)(o * hw));
    double ref[3 * 256];
    for (int64_t oc = 0; oc < o; oc++)
        for (int64_t p = 0; p < hw; p++) {
            double s = bias[oc];
            for (int64_t ci = 0; ci < c; ci++) s += (double)w[oc * c + ci] * x[ci * hw + p];
            ref[oc * hw + p] = s;
        }
    compare_f32("1x1 conv over 16400 channels", got, ref, (size_t)(o * hw), 1e-5 * (1 + sqrt((double)c)), 1e-5);
    free(x), free(w), free(got);
    wgc_buffer_release(bx), wgc_buffer_release(bw), wgc_buffer_release(bb), wgc_buffer_release(by);
}

/* f16 tensors through the chunked kernels (statistics and sums in f32):
 * references on the f16-rounded inputs; results carry the f16 rounding. */
static WgcBuffer *upload_f16(const float *x, size_t n, float *rounded) {
    uint16_t *h = malloc(n * 2 + 2);
    for (size_t i = 0; i < n; i++) {
        h[i] = f32_to_f16(x[i]);
        rounded[i] = f16_to_f32(h[i]);
    }
    WgcBuffer *b = upload(env.device, h, n * 2);
    free(h);
    return b;
}

static float *read_f16(WgcBuffer *b, size_t n) {
    uint16_t *h = malloc(n * 2 + 4);
    CHECK(wgc_buffer_read(b, 0, h, (n * 2 + 3) & ~(size_t)3));
    float *f = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++) f[i] = f16_to_f32(h[i]);
    free(h);
    return f;
}

static void test_f16_chunks(void) {
    if (!env.info.has_f16) {
        printf("no f16 on this adapter: f16 cases skipped\n");
        return;
    }
    const int64_t len = 300001; /* two chunks of a strided row */
    float *x = malloc((size_t)len * 4);
    fill_uniform_f32(x, (size_t)len, 0, 2);
    WgcBuffer *bx = upload_f16(x, (size_t)len, x), *by = zeros((size_t)len * 2 + 4);
    int64_t shape[2] = {1, len};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F16, 2, shape), ty = tensor_of(by, WGC_DTYPE_F16, 2, shape);
    double *ref = malloc((size_t)len * sizeof(double)), mean = 0, var = 0, m = -INFINITY, s = 0;
    for (int64_t j = 0; j < len; j++) mean += x[j], m = fmax(m, x[j]);
    mean /= (double)len;
    for (int64_t j = 0; j < len; j++) var += (x[j] - mean) * (x[j] - mean), s += exp(x[j] - m);
    CHECK(wgc_op_log_softmax(env.stream, &tx, 1, &ty));
    float *got = read_f16(by, (size_t)len);
    for (int64_t j = 0; j < len; j++) ref[j] = x[j] - m - log(s);
    compare_f32("f16 log_softmax of a 300001 row", got, ref, (size_t)len, 1e-2, 2e-3);
    free(got);
    CHECK(wgc_op_layer_norm(env.stream, &tx, NULL, NULL, 1, 1e-5f, &ty));
    got = read_f16(by, (size_t)len);
    for (int64_t j = 0; j < len; j++) ref[j] = (x[j] - mean) / sqrt(var / (double)len + 1e-5);
    compare_f32("f16 layer_norm of a 300001 row", got, ref, (size_t)len, 1e-2, 2e-3);
    free(got);
    /* 547 x 548 = 299,756 elements: one chunked window, and one plane. */
    int64_t is[4] = {1, 1, 547, 548}, os[4] = {1, 1, 1, 1};
    WgcTensor tp = tensor_of(bx, WGC_DTYPE_F16, 4, is), to = tensor_of(by, WGC_DTYPE_F16, 4, os);
    WgcPool2dParams pp;
    memset(&pp, 0, sizeof pp);
    pp.struct_size = sizeof pp;
    pp.kernel_h = 547, pp.kernel_w = 548;
    double sum = 0, best = -INFINITY;
    for (int64_t j = 0; j < 547 * 548; j++) sum += x[j], best = fmax(best, x[j]);
    for (int kind = 0; kind < 3; kind++) {
        if (kind == 0) CHECK(wgc_op_max_pool2d(env.stream, &pp, &tp, &to));
        if (kind == 1) CHECK(wgc_op_avg_pool2d(env.stream, &pp, &tp, &to));
        if (kind == 2) CHECK(wgc_op_global_avg_pool2d(env.stream, &tp, &to));
        got = read_f16(by, 1);
        double r = kind == 0 ? best : sum / (547.0 * 548.0);
        compare_f32(kind == 0 ? "f16 max pool 547x548" : kind == 1 ? "f16 avg pool 547x548" : "f16 global avg pool",
                    got, &r, 1, 0, 1e-3);
        free(got);
    }
    free(x), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(by);
}

int main(void) {
    env = test_env();
    test_softmax_row();
    test_norm_row();
    test_pooling();
    test_global_avg_pool();
    test_depthwise();
    /* K / 16 = 68,750 tile steps for one workgroup. */
    gemm_dot("gemm 1 x 1100000 x 1", 1100000);
    /* Within reach of one workgroup's loop, but a single f32 sum of 600,000
     * same-sign products drifts by ~1e-4 relative. */
    gemm_dot("gemm 1 x 600000 x 1", 600000);
    test_conv1x1_split();
    test_f16_chunks();
    test_env_release(&env);
    return test_finish("test_long_loops");
}
