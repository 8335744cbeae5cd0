/* The activations (WgcActivation) in double precision, as the tests'
 * references compute them: NaN stays NaN; where the formula meets an
 * infinity it gives what IEEE arithmetic gives (hardswish, GELU and SiLU
 * of -inf: NaN). */
#ifndef WGC_TEST_ACTIVATION_H
#define WGC_TEST_ACTIVATION_H

#include <math.h>
#include <stdint.h>

#include "wgcompute.h"

static inline double activate(uint32_t act, double v) {
    if (isnan(v)) return v;
    switch (act) {
    case WGC_ACTIVATION_RELU: return v > 0 ? v : 0;
    case WGC_ACTIVATION_RELU6: return v < 0 ? 0 : v > 6 ? 6 : v;
    case WGC_ACTIVATION_HARDSWISH: return v >= 3 ? v : v * (v + 3 < 0 ? 0 : v + 3) / 6;
    case WGC_ACTIVATION_GELU: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    case WGC_ACTIVATION_GELU_TANH: return 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case WGC_ACTIVATION_SILU: return v / (1 + exp(-v));
    case WGC_ACTIVATION_TANH: return tanh(v);
    default: return v;
    }
}

#endif
