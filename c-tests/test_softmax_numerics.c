/* Softmax and log-softmax at the edges, through every kernel (short rows
 * several to a workgroup, rows cached in registers, long contiguous rows,
 * strided rows, rows cut into chunks):
 *  - a NaN anywhere in a row makes the whole row NaN, whatever its position
 *    (first, last, a whole leading vec4), and leaves other rows alone; +inf
 *    in a row, or a row of only -inf, gives NaN; -inf among finite values 0;
 *  - log-softmax keeps its precision for large logits (rows around -1e4
 *    and 1e3), as (x - max) - log(sum) does.
 * Tolerances (f32): softmax 1e-6 + 1e-5*|ref|; log-softmax 2e-6 + 1e-6*|ref|. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

static TestEnv env;

/* Softmax (lg 0) or log-softmax (lg 1) of rows x [rows][len] (row-major on the
 * host). transposed: the buffer stores the [rows, len] view column-major, so
 * the softmax axis has stride `rows`. Returns the number of wrong elements. */
static int check_rows(const char *what, const float *x, int64_t rows, int64_t len, int transposed, int lg) {
    size_t n = (size_t)(rows * len);
    float *phys = malloc(n * 4);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < len; j++) phys[transposed ? j * rows + r : r * len + j] = x[r * len + j];
    WgcBuffer *bx = upload(env.device, phys, n * 4), *by = NULL;
    CHECK(wgc_buffer_create(env.device, n * 4, WGC_BUFFER_USAGE_STORAGE, &by));
    int64_t shape[2] = {rows, len};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 2, shape), ty = tensor_of(by, WGC_DTYPE_F32, 2, shape);
    if (transposed) {
        tx.strides[0] = 1;
        tx.strides[1] = rows;
    }
    CHECK(lg ? wgc_op_log_softmax(env.stream, &tx, 1, &ty) : wgc_op_softmax(env.stream, &tx, 1, &ty));
    float *got = malloc(n * 4);
    CHECK(wgc_buffer_read(by, 0, got, n * 4));
    double *ref = malloc(n * sizeof(double));
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * len;
        double m = -INFINITY, s = 0;
        int nan = 0;
        for (int64_t j = 0; j < len; j++) {
            nan |= isnan(row[j]);
            m = fmax(m, row[j]);
        }
        for (int64_t j = 0; j < len; j++) s += exp((double)row[j] - m);
        for (int64_t j = 0; j < len; j++) {
            double v = (double)row[j] - m;
            ref[r * len + j] = nan ? NAN : lg ? v - log(s) : exp(v) / s;
        }
    }
    int bad = lg ? compare_f32(what, got, ref, n, 2e-6, 1e-6) : compare_f32(what, got, ref, n, 1e-6, 1e-5);
    free(phys), free(got), free(ref);
    wgc_buffer_release(bx), wgc_buffer_release(by);
    return bad;
}

/* Three rows: NaN first in row 0, none in row 1, NaN last in row 2; and
 * (len >= 4) a fourth row whose first four elements are all NaN. */
static void nan_rows(const char *kernel, int64_t len, int transposed) {
    int64_t rows = len >= 4 ? 4 : 3;
    float *x = malloc((size_t)(rows * len) * 4);
    fill_uniform_f32(x, (size_t)(rows * len), -3, 3);
    x[0] = NAN;
    x[3 * len - 1] = NAN;
    if (rows == 4)
        for (int j = 0; j < 4; j++) x[3 * len + j] = NAN;
    for (int lg = 0; lg < 2; lg++) {
        char what[96];
        snprintf(what, sizeof what, "%s NaN rows, %s kernel, len %lld", lg ? "log_softmax" : "softmax", kernel,
                 (long long)len);
        check_rows(what, x, rows, len, transposed, lg);
    }
    free(x);
}

/* Infinities: +inf in row 0 (inf - inf: the row is NaN, as in PyTorch),
 * only -inf in row 1 (NaN), -inf among finite values in row 2 (exp gives 0
 * there). */
static void inf_rows(const char *kernel, int64_t len, int transposed) {
    int64_t rows = 3;
    float *x = malloc((size_t)(rows * len) * 4);
    fill_uniform_f32(x, (size_t)(rows * len), -3, 3);
    x[len / 2] = INFINITY;
    for (int64_t j = 0; j < len; j++) x[len + j] = -INFINITY;
    x[2 * len] = -INFINITY;
    x[3 * len - 1] = -INFINITY;
    for (int lg = 0; lg < 2; lg++) {
        char what[96];
        snprintf(what, sizeof what, "%s infinities, %s kernel, len %lld", lg ? "log_softmax" : "softmax", kernel,
                 (long long)len);
        check_rows(what, x, rows, len, transposed, lg);
    }
    free(x);
}

/* Logits around `center`, spread over [-3, 3): log-softmax must be as
 * precise as for logits around 0. */
static void large_logits(const char *kernel, int64_t len, int transposed, double center) {
    int64_t rows = 3;
    float *x = malloc((size_t)(rows * len) * 4);
    for (int64_t i = 0; i < rows * len; i++) x[i] = (float)(center + rng_uniform(-3, 3));
    char what[96];
    snprintf(what, sizeof what, "log_softmax around %g, %s kernel, len %lld", center, kernel, (long long)len);
    check_rows(what, x, rows, len, transposed, 1);
    free(x);
}

/* Many short rows of random logits: rows spread over several workgroups
 * of the short-row kernel, teams of every size, partial last workgroups. */
static void many_rows(int64_t len, int transposed) {
    int64_t rows = 1000;
    float *x = malloc((size_t)(rows * len) * 4);
    fill_uniform_f32(x, (size_t)(rows * len), -10, 10);
    for (int lg = 0; lg < 2; lg++) {
        char what[96];
        snprintf(what, sizeof what, "%s of %lld rows, len %lld, transposed %d", lg ? "log_softmax" : "softmax",
                 (long long)rows, (long long)len, transposed);
        check_rows(what, x, rows, len, transposed, lg);
    }
    free(x);
}

int main(void) {
    env = test_env();
    /* Kernel choice by layout and length: rows of up to 256 take the
     * short-row kernel (vec4 loads when contiguous with a length that is a
     * multiple of 4, else scalar); longer contiguous rows of a multiple of 4
     * up to 16384 are cached, longer ones vec4; other lengths and transposed
     * rows strided; strided rows over 262144, and rows of 32768 or more when
     * there are few of them, are cut into chunks. */
    static const int64_t short_lens[] = {1, 3, 4, 7, 31, 32, 33, 255, 256};
    for (size_t i = 0; i < sizeof short_lens / sizeof *short_lens; i++) {
        many_rows(short_lens[i], 0);
        many_rows(short_lens[i], 1);
    }
    nan_rows("short rows vec4", 32, 0);
    nan_rows("short rows scalar", 7, 0);
    nan_rows("short rows scalar", 255, 0);
    nan_rows("short rows (transposed)", 33, 1);
    nan_rows("cached", 260, 0);
    nan_rows("vec4", 20000, 0);
    nan_rows("strided", 263, 0);
    nan_rows("strided (transposed)", 263, 1);
    nan_rows("chunked", 300001, 1);
    nan_rows("few long rows, chunked", 50257, 0);
    nan_rows("few long rows, chunked (transposed)", 40001, 1);
    inf_rows("short rows vec4", 32, 0);
    inf_rows("short rows scalar", 7, 0);
    inf_rows("short rows (transposed)", 33, 1);
    inf_rows("cached", 260, 0);
    inf_rows("vec4", 20000, 0);
    inf_rows("strided", 263, 0);
    inf_rows("chunked", 300001, 1);
    inf_rows("few long rows, chunked", 50257, 0);
    static const double centers[2] = {-1e4, 1e3};
    for (int c = 0; c < 2; c++) {
        large_logits("short rows vec4", 256, 0, centers[c]);
        large_logits("short rows scalar", 7, 0, centers[c]);
        large_logits("cached", 260, 0, centers[c]);
        large_logits("vec4", 20000, 0, centers[c]);
        large_logits("strided", 263, 0, centers[c]);
        large_logits("chunked", 300001, 1, centers[c]);
        large_logits("few long rows, chunked", 128256, 0, centers[c]);
    }
    test_env_release(&env);
    return test_finish("test_softmax_numerics");
}
