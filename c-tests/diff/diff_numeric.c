/* Numbers as each dtype stores them, computed from doubles so that the
 * reference rounds once (f16 included: never through f32). */
#include <float.h>
#include <math.h>

#include "diff.h"

int dtype_is_float(WgcDtype d) { return d == WGC_DTYPE_F32 || d == WGC_DTYPE_F16; }

const char *dtype_name(WgcDtype d) {
    switch (d) {
    case WGC_DTYPE_F32: return "f32";
    case WGC_DTYPE_F16: return "f16";
    case WGC_DTYPE_I32: return "i32";
    default: return "u32";
    }
}

size_t dtype_size(WgcDtype d) { return d == WGC_DTYPE_F16 ? 2 : 4; }

/* IEEE binary16, round to nearest even from the double. */
uint16_t f16_bits_of(double v) {
    if (isnan(v)) return 0x7E00;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (a >= 65520.0) return (uint16_t)(sign | 0x7C00); /* 65504 + half an ulp rounds (to even) up */
    int e;
    frexp(a, &e);
    int exp = e - 1 < -14 ? -14 : e - 1;  /* subnormals share the quantum of 2^-14 */
    double q = ldexp(1.0, exp - 10);
    double r = nearbyint(a / q) * q;      /* a / q is exact; nearbyint rounds to even */
    if (r == 0) return sign;
    if (r < ldexp(1.0, -14)) return (uint16_t)(sign | (uint16_t)(r / ldexp(1.0, -24)));
    frexp(r, &e);
    int biased = e - 1 + 15;
    uint16_t mant = (uint16_t)(r / ldexp(1.0, e - 1 - 10) - 1024.0);
    return (uint16_t)(sign | (biased << 10) | mant);
}

double f16_value(uint16_t h) {
    int exp = (h >> 10) & 0x1f;
    int mant = h & 0x3ff;
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (exp == 31) return mant ? NAN : s * INFINITY;
    if (exp == 0) return s * ldexp(mant, -24);
    return s * ldexp(1024 + mant, exp - 25);
}

double dtype_round(WgcDtype d, double v) {
    switch (d) {
    case WGC_DTYPE_F32: return (double)(float)v;
    case WGC_DTYPE_F16: return f16_value(f16_bits_of(v));
    default: return v;
    }
}

double dtype_max(WgcDtype d) { return d == WGC_DTYPE_F16 ? 65504.0 : FLT_MAX; }

double dtype_min_normal(WgcDtype d) { return d == WGC_DTYPE_F16 ? ldexp(1.0, -14) : FLT_MIN; }

double scalar_to_dtype(WgcDtype d, double v) {
    if (dtype_is_float(d)) return dtype_round(d, v);
    if (isnan(v)) return 0;
    double t = trunc(v) + 0.0; /* integers have no -0 */
    if (d == WGC_DTYPE_I32) return t < -2147483648.0 ? -2147483648.0 : t > 2147483647.0 ? 2147483647.0 : t;
    return t < 0 ? 0 : t > 4294967295.0 ? 4294967295.0 : t;
}

double wrap_i32(int64_t v) { return (double)(int32_t)(uint32_t)(uint64_t)v; }

double wrap_u32(int64_t v) { return (double)(uint32_t)(uint64_t)v; }
