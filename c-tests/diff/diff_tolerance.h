/* Tolerances of the differential test, in one place. Each is the bound the
 * header (include/wgcompute.h) states for that function; where the header
 * states none, the comment says what is assumed and why. A result passes if
 * it lies within tol of the exact (double) value after rounding to its
 * dtype, so correctly rounded results always pass. */
#ifndef WGC_DIFF_TOLERANCE_H
#define WGC_DIFF_TOLERANCE_H

#include <math.h>

#include "diff.h"

/* The header says nothing about subnormals and WGSL lets an implementation
 * flush them: every float comparison allows an error of the smallest normal. */
static inline double tol_ftz(WgcDtype d) { return dtype_is_float(d) ? dtype_min_normal(d) : 0; }

/* Where the header says "about", "~" or "around" a bound, the test allows
 * twice the number stated. */
#define TOL_ABOUT 2.0

/* f32 add, sub, mul and one-rounding results (leaky_relu, fma's parts):
 * unspecified, WGSL rounds them correctly; 1 ulp. */
#define TOL_F32_ROUNDED 1.1920928955078125e-7
/* f32 division: WGSL's 2.5 ulps. */
#define TOL_F32_DIV 3.0e-7
/* wgc_op_binary: "f16 tolerances: about 2 half ulps (2e-3 relative)". */
#define TOL_F16_ELEMENTWISE 2e-3
/* WgcUnaryOp: exp, log, sqrt, rsqrt, sigmoid, silu ~1e-6 relative; sin, cos
 * (|x| < 100), tanh, gelu ~1e-6 absolute; f16 2e-3 absolute + 2e-3 relative. */
#define TOL_F32_UNARY (TOL_ABOUT * 1e-6)
#define TOL_F16_UNARY 2e-3
/* The rounding of an f16 result computed in f32 ("f16: rounding of the
 * result"): half an ulp is 2^-11 relative. */
#define TOL_F16_RESULT 4.8828125e-4

/* pow: "relative error about 1e-6 for moderate results", computed as
 * exp2(y log2|x|) in f32. For results that are not moderate the header
 * states nothing; assumed: log2 about as accurate as log (~1e-6 relative),
 * its error scaled by the exponent t = log2|result| and carried through
 * exp2 (d result / result = ln 2 * dt). */
static inline double tol_pow_f32(double ref) {
    double a = fabs(ref);
    if (a == 0 || isinf(a)) return 0;
    return a * TOL_ABOUT * 1e-6 * (1 + 0.6931471805599453 * fabs(log2(a)));
}

/* wgc_op_reduce: sums "relative error around 1e-6 for well-conditioned
 * sums", the error growing like log(n). Relative to sum |x| (which equals
 * |sum| when the sum is well-conditioned). */
#define TOL_F32_SUM (TOL_ABOUT * 1e-6)
/* wgc_op_var: "relative error ~1e-5 in f32". */
#define TOL_F32_VAR (TOL_ABOUT * 1e-5)
/* wgc_op_softmax: "relative error ~1e-6 (f32)". */
#define TOL_F32_SOFTMAX (TOL_ABOUT * 1e-6)
/* wgc_op_layer_norm / rms_norm: "~1e-5 relative (f32)"; batch_norm ~1e-6. */
#define TOL_F32_NORM (TOL_ABOUT * 1e-5)
#define TOL_F32_BATCH_NORM (TOL_ABOUT * 1e-6)
/* wgc_op_gemm: "within about 1e-6 * K * max|a||b| of exact". */
#define TOL_F32_GEMM (TOL_ABOUT * 1e-6)
/* wgc_op_conv2d: "within about 1e-5 * (1 + sqrt(C/groups*KH*KW))" for unit-scale data. */
#define TOL_F32_CONV (TOL_ABOUT * 1e-5)
/* avg_pool2d, global_avg_pool2d: "within 1e-6 relative of the exact mean". */
#define TOL_F32_POOL 1e-6

#endif
