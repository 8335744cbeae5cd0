/* Shared helpers for the C tests: checked calls, a device per test program,
 * a deterministic random generator, and comparison against double-precision
 * references. Header-only so each test is one .c file. */
#ifndef WGC_TEST_UTIL_H
#define WGC_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgcompute.h"

static int g_failures = 0;

/* Abort the test program when a call that must succeed fails. */
#define CHECK(call)                                                                        \
    do {                                                                                   \
        WgcStatus s_ = (call);                                                             \
        if (s_ != WGC_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,            \
                    wgc_status_string(s_), wgc_last_error_message());                      \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* A call that must fail with a given status and leave a message. */
#define EXPECT_STATUS(call, expected)                                                      \
    do {                                                                                   \
        WgcStatus s_ = (call);                                                             \
        if (s_ != (expected)) {                                                            \
            fprintf(stderr, "%s:%d: %s -> %s, expected %s (%s)\n", __FILE__, __LINE__,     \
                    #call, wgc_status_string(s_), wgc_status_string(expected),             \
                    wgc_last_error_message());                                             \
            g_failures++;                                                                  \
        } else if ((expected) != WGC_OK && wgc_last_error_message()[0] == '\0') {          \
            fprintf(stderr, "%s:%d: %s failed without a message\n", __FILE__, __LINE__,    \
                    #call);                                                                \
            g_failures++;                                                                  \
        }                                                                                  \
    } while (0)

#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);            \
            g_failures++;                                                                  \
        }                                                                                  \
    } while (0)

/* Print the totals line and return the exit code. */
static inline int test_finish(const char *name) {
    printf("%s: %d failure(s)\n", name, g_failures);
    return g_failures == 0 ? 0 : 1;
}

typedef struct TestEnv {
    WgcInstance *instance;
    WgcDevice *device;
    WgcStream *stream;
    WgcAdapterInfo info;
} TestEnv;

static inline TestEnv test_env(void) {
    TestEnv env;
    memset(&env, 0, sizeof env);
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &env.instance));
    CHECK(wgc_device_create(env.instance, NULL, &env.device));
    env.info.struct_size = sizeof env.info;
    CHECK(wgc_device_info(env.device, &env.info));
    CHECK(wgc_stream_create(env.device, &env.stream));
    return env;
}

static inline void test_env_release(TestEnv *env) {
    wgc_stream_release(env->stream);
    wgc_device_release(env->device);
    wgc_instance_release(env->instance);
}

/* A TestEnv whose device was created while the environment variable `name`
 * was `value`: a device reads its settings once, when it is created. The
 * variable is then restored, so devices created later do not see it. */
static inline TestEnv test_env_setting(const char *name, const char *value) {
    const char *was = getenv(name);
    char *saved = was ? strdup(was) : NULL;
    if (was && !saved) abort();
    setenv(name, value, 1);
    TestEnv env = test_env();
    if (saved) setenv(name, saved, 1);
    else unsetenv(name);
    free(saved);
    return env;
}

/* xorshift64*: the same numbers on every platform. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static inline uint64_t rng_next(void) {
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 2685821657736338717ull;
}
/* Uniform in [lo, hi). */
static inline double rng_uniform(double lo, double hi) {
    return lo + (hi - lo) * (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}
static inline void fill_uniform_f32(float *x, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) x[i] = (float)rng_uniform(lo, hi);
}

/* IEEE half <-> float, for f16 tests. */
static inline uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffffu;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;
    return (uint16_t)half;
}
static inline float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else {
            exp = 127 - 15 + 1;
            while (!(mant & 0x400u)) { mant <<= 1; exp--; }
            mant &= 0x3ffu;
            x = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* Compare n results with a double reference: |got - ref| <= atol + rtol*|ref|
 * (NaN matches NaN, infinities match exactly). Reports the first few
 * mismatches; returns the number of mismatches. */
static inline int compare_f64(const char *what, const double *got, const double *ref, size_t n, double atol,
                              double rtol) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        int ok = (isnan(r) && isnan(g)) || (isinf(r) && g == r) || fabs(g - r) <= atol + rtol * fabs(r);
        if (!ok) {
            if (bad < 5) fprintf(stderr, "%s: element %zu: got %.9g, expected %.9g\n", what, i, g, r);
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr, "%s: %d of %zu elements wrong\n", what, bad, n);
        g_failures++;
    }
    return bad;
}

/* The same for f32 results. */
static inline int compare_f32(const char *what, const float *got, const double *ref, size_t n, double atol,
                              double rtol) {
    double *g = (double *)malloc((n ? n : 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) g[i] = got[i];
    int bad = compare_f64(what, g, ref, n, atol, rtol);
    free(g);
    return bad;
}

/* Compile `entry` of WGSL `src`; the test stops if it does not compile. */
static inline WgcKernel *compile(WgcDevice *dev, const char *src, const char *entry) {
    WgcKernelDesc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.source = src;
    d.entry_point = entry;
    WgcKernel *k = NULL;
    CHECK(wgc_kernel_create(dev, &d, &k));
    return k;
}

/* Create a buffer holding `bytes` of host data. */
static inline WgcBuffer *upload(WgcDevice *dev, const void *data, size_t bytes) {
    WgcBuffer *b = NULL;
    size_t padded = (bytes + 3) & ~(size_t)3;
    CHECK(wgc_buffer_create(dev, padded ? padded : 4, WGC_BUFFER_USAGE_STORAGE, &b));
    if (bytes) {
        if (padded == bytes) {
            CHECK(wgc_buffer_write(b, 0, data, bytes));
        } else {
            void *tmp = calloc(1, padded);
            memcpy(tmp, data, bytes);
            CHECK(wgc_buffer_write(b, 0, tmp, padded));
            free(tmp);
        }
    }
    return b;
}

/* A contiguous tensor view. */
static inline WgcTensor tensor_of(WgcBuffer *b, WgcDtype dtype, uint32_t rank, const int64_t *shape) {
    WgcTensor t;
    CHECK(wgc_tensor_contiguous(b, dtype, rank, shape, &t));
    return t;
}

#endif
