/* What the benchmark programs share: a checked call, f16 conversion of
 * inputs in [-1, 1), and the comparison for sorting timings. */
#ifndef WGC_BENCH_UTIL_H
#define WGC_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgcompute.h"

#define CHECK(call)                                                                     \
    do {                                                                                \
        WgcStatus s_ = (call);                                                          \
        if (s_ != WGC_OK) {                                                             \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,         \
                    wgc_status_string(s_), wgc_last_error_message());                   \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* Round to the nearest f16 (ties to even); normal range and zero only, which
 * is all the benchmarks' inputs in [-1, 1) need. */
static inline uint16_t to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t e = (int32_t)((x >> 23) & 0xff) - 112;
    if (e <= 0) return (uint16_t)sign;
    uint32_t h = sign | ((uint32_t)e << 10) | ((x & 0x7fffffu) >> 13);
    uint32_t rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)h;
}

static inline float from_half(uint16_t h) {
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff, x = (uint32_t)(h & 0x8000u) << 16;
    if (e) x |= ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* bfloat16: the f32's top half, rounded to nearest even (finite inputs). */
static inline uint16_t to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline float from_bf16(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
