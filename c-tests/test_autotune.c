/* The autotuner: with it on, every tuned operator gives the right answer on
 * odd shapes whichever candidate it picks (each candidate is forced in turn
 * through the tuning file), a shape class is timed once and its choice
 * reused, saved, reloaded, and ignored when the file belongs to another
 * adapter or is corrupt; calls that read their output are never timed.
 * Run with WGC_GEMV_AXPY / WGC_REDUCE_ROW_LOADS / WGC_SOFTMAX_SPLIT_GROUPS
 * set (CTest test_autotune_fixed), nothing may be timed: those fix the
 * choices. */
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static char g_dir[] = "/tmp/wgc_tune_XXXXXX";
static char g_path[256];

/* The shape classes run_all makes, and each choice's candidates. */
#define CLASSES 5
static const char *const REDUCE_LOADS[] = {"l8", "l2", "l4", "l16"};
static const char *const GEMV_MODES[] = {"wide", "staged", "plain"};
static const char *const SOFTMAX_GROUPS[] = {"g1024", "g0", "g256", "g4096"};

static WgcStatus try_open(WgcInstance *inst, uint32_t mode, const char *path, WgcDevice **dev) {
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.adapter_index = -1;
    o.autotune = mode;
    o.tuning_cache_path = path;
    return wgc_device_create(inst, &o, dev);
}

static WgcDevice *open_device(WgcInstance *inst, uint32_t mode, const char *path) {
    WgcDevice *dev = NULL;
    CHECK(try_open(inst, mode, path, &dev));
    return dev;
}

static WgcTuningStats stats_of(WgcDevice *dev) {
    WgcTuningStats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    CHECK(wgc_device_tuning_stats(dev, &s));
    return s;
}

static WgcBuffer *zeros(WgcDevice *dev, size_t bytes) {
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, bytes, WGC_BUFFER_USAGE_STORAGE, &b));
    return b;
}

static float *read_f32(WgcBuffer *b, size_t n) {
    float *x = (float *)malloc(n * sizeof(float));
    CHECK(wgc_buffer_read(b, 0, x, n * sizeof(float)));
    return x;
}

/* Sum or max over the last axis of rows x k. */
static void check_reduce(WgcDevice *dev, WgcStream *s, WgcReduceOp op, int64_t rows, int64_t k) {
    size_t n = (size_t)(rows * k);
    float *x = (float *)malloc(n * sizeof(float));
    fill_uniform_f32(x, n, -1, 1);
    WgcBuffer *bx = upload(dev, x, n * 4), *bo = zeros(dev, (size_t)rows * 4);
    int64_t shape[2] = {rows, k};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 2, shape), to = tensor_of(bo, WGC_DTYPE_F32, 1, shape);
    int32_t axis = 1;
    CHECK(wgc_op_reduce(s, op, &tx, &axis, 1, 0, &to));
    double *ref = (double *)malloc((size_t)rows * sizeof(double));
    for (int64_t r = 0; r < rows; r++) {
        double acc = op == WGC_REDUCE_OP_SUM ? 0 : -INFINITY;
        for (int64_t i = 0; i < k; i++) {
            double v = x[r * k + i];
            acc = op == WGC_REDUCE_OP_SUM ? acc + v : (v > acc ? v : acc);
        }
        ref[r] = acc;
    }
    float *got = read_f32(bo, (size_t)rows);
    compare_f32("reduce", got, ref, (size_t)rows, 1e-4, 1e-5);
    free(got), free(ref), free(x);
    wgc_buffer_release(bx), wgc_buffer_release(bo);
}

/* c = alpha a b + beta c0 with a (m, k) and b (k, n) row-major. */
static void check_gemm(WgcDevice *dev, WgcStream *s, int64_t m, int64_t k, int64_t n, float beta) {
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
    float *a = (float *)malloc(na * 4), *b = (float *)malloc(nb * 4), *c0 = (float *)malloc(nc * 4);
    fill_uniform_f32(a, na, -1, 1), fill_uniform_f32(b, nb, -1, 1), fill_uniform_f32(c0, nc, -1, 1);
    WgcBuffer *ba = upload(dev, a, na * 4), *bb = upload(dev, b, nb * 4), *bc = upload(dev, c0, nc * 4);
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    WgcTensor ta = tensor_of(ba, WGC_DTYPE_F32, 2, sa), tb = tensor_of(bb, WGC_DTYPE_F32, 2, sb);
    WgcTensor tc = tensor_of(bc, WGC_DTYPE_F32, 2, sc);
    const float alpha = 0.5f;
    CHECK(wgc_op_gemm(s, alpha, &ta, 0, &tb, 0, beta, &tc));
    double *ref = (double *)malloc(nc * sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t p = 0; p < k; p++) acc += (double)a[i * k + p] * b[p * n + j];
            ref[i * n + j] = alpha * acc + (beta != 0 ? beta * (double)c0[i * n + j] : 0);
        }
    float *got = read_f32(bc, nc);
    compare_f32("gemm", got, ref, nc, 1e-4, 1e-4);
    free(got), free(ref), free(a), free(b), free(c0);
    wgc_buffer_release(ba), wgc_buffer_release(bb), wgc_buffer_release(bc);
}

/* Softmax over the last axis of rows x len. */
static void check_softmax(WgcDevice *dev, WgcStream *s, int64_t rows, int64_t len) {
    size_t n = (size_t)(rows * len);
    float *x = (float *)malloc(n * 4);
    fill_uniform_f32(x, n, -8, 8);
    WgcBuffer *bx = upload(dev, x, n * 4), *by = zeros(dev, n * 4);
    int64_t shape[2] = {rows, len};
    WgcTensor tx = tensor_of(bx, WGC_DTYPE_F32, 2, shape), ty = tensor_of(by, WGC_DTYPE_F32, 2, shape);
    CHECK(wgc_op_softmax(s, &tx, 1, &ty));
    double *ref = (double *)malloc(n * sizeof(double));
    for (int64_t r = 0; r < rows; r++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t i = 0; i < len; i++) mx = x[r * len + i] > mx ? x[r * len + i] : mx;
        for (int64_t i = 0; i < len; i++) sum += exp(x[r * len + i] - mx);
        for (int64_t i = 0; i < len; i++) ref[r * len + i] = exp(x[r * len + i] - mx) / sum;
    }
    float *got = read_f32(by, n);
    compare_f32("softmax", got, ref, n, 1e-9, 1e-4);
    free(got), free(ref), free(x);
    wgc_buffer_release(bx), wgc_buffer_release(by);
}

/* One call of each of the CLASSES tuned shape classes, results checked. */
static void run_all(WgcDevice *dev) {
    WgcStream *s = NULL;
    CHECK(wgc_stream_create(dev, &s));
    check_reduce(dev, s, WGC_REDUCE_OP_SUM, 37, 1001);
    check_reduce(dev, s, WGC_REDUCE_OP_MAX, 300, 77);
    check_gemm(dev, s, 5, 333, 1028, 0.0f);  /* plain or staged skinny kernels */
    check_gemm(dev, s, 3, 40, 8196, 0.0f);   /* staged skinny kernel or the plain one */
    check_softmax(dev, s, 3, 40001);         /* long rows cut into chunks or not */
    wgc_stream_release(s);
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = (char *)calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) exit(1);
    fputs(text, f);
    fclose(f);
}

static int count_lines(const char *text) {
    int n = 0;
    for (const char *p = text; *p; p++) n += *p == '\n';
    return n;
}

/* The saved file with every entry's candidate replaced by the `i`-th of its
 * choice (modulo their count). */
static char *force_candidates(const char *saved, int i) {
    char *out = (char *)calloc(1, 1 << 16);
    const char *line = saved;
    for (int n = 0; *line; n++) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[512] = {0};
        memcpy(buf, line, len < sizeof buf - 1 ? len : sizeof buf - 1);
        if (n >= 2) {
            char choice[128], cls[256], cand[64];
            if (sscanf(buf, "%127s %255s %63s", choice, cls, cand) != 3) exit(1);
            const char *pick = "?";
            if (!strcmp(choice, "reduce_rows.loads")) pick = REDUCE_LOADS[i % 4];
            if (!strcmp(choice, "gemv.axpy")) pick = GEMV_MODES[i % 3];
            if (!strcmp(choice, "softmax.split_groups")) pick = SOFTMAX_GROUPS[i % 4];
            EXPECT(strcmp(pick, "?") != 0);
            snprintf(buf, sizeof buf, "%s %s %s", choice, cls, pick);
        }
        strcat(out, buf);
        strcat(out, "\n");
        line = end ? end + 1 : line + len;
    }
    return out;
}

/* The environment fixes every choice: nothing is timed or stored. */
static void fixed_choices(WgcInstance *inst) {
    WgcDevice *dev = open_device(inst, WGC_AUTOTUNE_ON, NULL);
    run_all(dev);
    WgcTuningStats t = stats_of(dev);
    EXPECT(t.timed == 0 && t.entries == 0 && t.reused == 0);
    wgc_device_release(dev);
}

int main(void) {
    WgcInstance *inst = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    if (getenv("WGC_GEMV_AXPY") && getenv("WGC_REDUCE_ROW_LOADS") && getenv("WGC_SOFTMAX_SPLIT_GROUPS")) {
        fixed_choices(inst);
        wgc_instance_release(inst);
        return test_finish("test_autotune (choices fixed by the environment)");
    }
    if (!mkdtemp(g_dir)) return 1;
    snprintf(g_path, sizeof g_path, "%s/tuning.txt", g_dir);

    /* Tuning on: each class timed once, then reused. */
    WgcDevice *dev = open_device(inst, WGC_AUTOTUNE_ON, g_path);
    WgcTuningStats t = stats_of(dev);
    EXPECT(t.mode == WGC_AUTOTUNE_ON && t.loaded == 0 && t.entries == 0);
    run_all(dev);
    t = stats_of(dev);
    EXPECT(t.timed == CLASSES && t.entries == CLASSES && t.reused == 0);
    run_all(dev);
    t = stats_of(dev);
    EXPECT(t.timed == CLASSES && t.entries == CLASSES && t.reused == CLASSES);

    /* A GEMM that reads its output (beta != 0) in a new class: not timed,
     * and C is accumulated once. */
    WgcStream *s = NULL;
    CHECK(wgc_stream_create(dev, &s));
    check_gemm(dev, s, 6, 700, 516, 1.0f);
    wgc_stream_release(s);
    t = stats_of(dev);
    EXPECT(t.timed == CLASSES && t.entries == CLASSES);

    uint32_t saved = 7;
    CHECK(wgc_device_save_tuning(dev, &saved));
    EXPECT(saved == 1);
    wgc_device_release(dev);
    char *text = read_text(g_path);
    EXPECT(text && !strncmp(text, "wgcompute tuning 1\nkey ", 23));
    EXPECT(text && count_lines(text) == 2 + CLASSES);
    if (!text) return test_finish("test_autotune");

    /* A new device loads the choices and times nothing. */
    dev = open_device(inst, WGC_AUTOTUNE_ON, g_path);
    t = stats_of(dev);
    EXPECT(t.loaded == CLASSES && t.entries == CLASSES);
    run_all(dev);
    t = stats_of(dev);
    EXPECT(t.timed == 0 && t.reused == CLASSES);
    wgc_device_release(dev);

    /* Every candidate the tuner may pick, forced through the file. */
    for (int i = 0; i < 4; i++) {
        char *forced = force_candidates(text, i);
        write_text(g_path, forced);
        dev = open_device(inst, WGC_AUTOTUNE_CACHED, g_path);
        run_all(dev);
        t = stats_of(dev);
        EXPECT(t.mode == WGC_AUTOTUNE_CACHED && t.loaded == CLASSES && t.timed == 0 && t.reused == CLASSES);
        wgc_device_release(dev);
        free(forced);
    }

    /* Another adapter's or driver's file, and corrupt files, are ignored. */
    const char *key_end = strchr(text + 23, '\n');
    char *other = (char *)calloc(1, strlen(text) + 8);
    memcpy(other, text, (size_t)(key_end - text));
    strcat(other, "9");
    strcat(other, key_end);
    char *corrupt = (char *)calloc(1, strlen(text) + 32);
    strcpy(corrupt, text);
    strcat(corrupt, "gemv.axpy only-two\n");
    const char *bad[] = {other, corrupt, "wgcompute tuning 1\n", "\x7f" "ELF garbage"};
    for (int i = 0; i < 4; i++) {
        write_text(g_path, bad[i]);
        dev = open_device(inst, WGC_AUTOTUNE_ON, g_path);
        t = stats_of(dev);
        EXPECT(t.loaded == 0 && t.entries == 0);
        wgc_device_release(dev);
    }
    free(other), free(corrupt);

    /* Off: no file read or written; the default follows WGC_AUTOTUNE. */
    char off_path[300];
    snprintf(off_path, sizeof off_path, "%s/off.txt", g_dir);
    dev = open_device(inst, WGC_AUTOTUNE_OFF, off_path);
    run_all(dev);
    t = stats_of(dev);
    EXPECT(t.mode == WGC_AUTOTUNE_OFF && t.timed == 0 && t.entries == 0);
    saved = 7;
    CHECK(wgc_device_save_tuning(dev, &saved));
    EXPECT(saved == 0);
    wgc_device_release(dev);
    EXPECT(access(off_path, F_OK) != 0);
    if (!getenv("WGC_AUTOTUNE")) {
        dev = open_device(inst, WGC_AUTOTUNE_DEFAULT, NULL);
        EXPECT(stats_of(dev).mode == WGC_AUTOTUNE_OFF);
        wgc_device_release(dev);
    }

    /* Refused: an unknown mode, paths that are not regular files, bad stats structs. */
    WgcDevice *untouched = (WgcDevice *)&g_failures;
    EXPECT_STATUS(try_open(inst, 9, NULL, &untouched), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(try_open(inst, WGC_AUTOTUNE_ON, g_dir, &untouched), WGC_ERROR_INVALID_ARGUMENT);
    char link_path[300];
    snprintf(link_path, sizeof link_path, "%s/link", g_dir);
    EXPECT(symlink(g_path, link_path) == 0);
    EXPECT_STATUS(try_open(inst, WGC_AUTOTUNE_ON, link_path, &untouched), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(untouched == (WgcDevice *)&g_failures);
    dev = open_device(inst, WGC_AUTOTUNE_ON, NULL);
    WgcTuningStats small;
    memset(&small, 0, sizeof small);
    EXPECT_STATUS(wgc_device_tuning_stats(dev, &small), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(wgc_device_tuning_stats(dev, NULL), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_device_tuning_stats(NULL, &small), WGC_ERROR_NULL_POINTER);
    EXPECT_STATUS(wgc_device_save_tuning(NULL, &saved), WGC_ERROR_NULL_POINTER);
    wgc_device_release(dev);

    unlink(link_path), unlink(g_path), rmdir(g_dir);
    free(text);
    wgc_instance_release(inst);
    return test_finish("test_autotune");
}
