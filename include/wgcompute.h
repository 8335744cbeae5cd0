/*
 * wgcompute: GPU compute for C and C++ over wgpu.
 *
 * Conventions (they hold for every function below):
 *  - Fallible functions return WgcStatus; WGC_OK is 0. On failure
 *    wgc_last_error_message() describes the error for the calling thread.
 *  - Out-parameters are written only on success.
 *  - Handles are reference counted: *_retain adds a reference, *_release
 *    drops one; releasing NULL does nothing. Objects created from a device
 *    keep it alive. Passing a handle of one device with a handle of another
 *    fails with WGC_ERROR_DEVICE_MISMATCH.
 *  - Structs that begin with struct_size: set it to sizeof(the struct) so the
 *    library can grow them without breaking older callers. Fields past
 *    struct_size keep their defaults (or, in output structs, are not
 *    written); a struct_size under 4 or one that ends inside a field fails
 *    with WGC_ERROR_INVALID_ARGUMENT.
 *  - Booleans are uint32_t (0 or 1). Enums are 32-bit with fixed values.
 *  - Devices, buffers, kernels and events may be used from any thread at
 *    once. A stream is meant for one thread at a time (concurrent calls on one
 *    stream are serialized).
 *  - Nothing blocks unless its documentation says so: launches are recorded
 *    on streams and submitted in batches.
 *
 * Numerics (every operator; a function's documentation may add to this):
 *  - Floats are IEEE 754 binary32 and binary16, rounded to nearest even.
 *    f16 tensors are computed (and accumulated) in f32 and each result is
 *    rounded once to f16; results beyond the f16 range become +-inf.
 *    Subnormal numbers (magnitude below 2^-126 in f32, 2^-14 in f16) are the
 *    adapter's: it may flush them to zero, as inputs or as results.
 *  - bf16 (WGC_DTYPE_BF16: f32's exponent range, 8 significant bits) is
 *    computed and accumulated in f32, each result rounded once to bf16 as
 *    PyTorch's c10::BFloat16 rounds an f32 (round_to_nearest_even, on the
 *    bits): to nearest even, any NaN to the quiet NaN 0x7fc0, results past
 *    the largest bf16 (about 3.39e38) to +-inf; subnormal bf16 results are
 *    kept (the rounding is integer arithmetic), though the f32 arithmetic
 *    before it is the adapter's. bf16 -> f32 is exact (NaN payloads, -0 and
 *    subnormals kept); f16 -> bf16 rounds once (f16 is exact in f32);
 *    i32/u32 -> bf16 round once from the integer (not through f32);
 *    scalars round once from the double. Tolerances for bf16 results: those
 *    of f32 plus 2^-8 relative (the final rounding); add, sub, mul and the
 *    exact operations below are correctly rounded (f32 carries more than
 *    twice bf16's precision, so rounding the f32 result again is exact).
 *    Operators that document no bf16 return WGC_ERROR_UNSUPPORTED for it.
 *  - NaN propagates, as in PyTorch: a NaN operand gives NaN from arithmetic,
 *    every unary function, RELU, leaky_relu, clamp, MAXIMUM, MINIMUM, fma,
 *    pow (but for the C99 cases below), SUM, MEAN, PROD, MAX, MIN, var, std,
 *    softmax and the norms (over the NaN's row), pooling windows, GEMM and
 *    convolution. ARGMAX and ARGMIN return the index of the first NaN. EQ,
 *    LT, LE, GT, GE with a NaN operand are 0 and NE is 1. Float to integer
 *    casts turn NaN into 0. The sign and payload of a NaN are unspecified.
 *  - Infinities follow IEEE 754: x / 0 is +-inf for x != 0; inf - inf,
 *    0 * inf, 0 / 0 are NaN; overflow gives +-inf; exp(-inf) = 0,
 *    log(0) = -inf, tanh(+-inf) = +-1, sigmoid(-inf) = 0, sin and cos of
 *    +-inf are NaN, and GELU, SILU and HARDSWISH of -inf are NaN (-inf * 0,
 *    as in PyTorch). A sum holding both +inf and -inf is NaN; MAX, MIN and ARG*
 *    order +-inf like other numbers. Signed zeros follow IEEE 754 in
 *    arithmetic, but which of -0 and +0 MAXIMUM, MINIMUM, RELU, clamp, MAX
 *    and MIN return when both compete is unspecified.
 *  - pow follows C99 and NumPy: pow(x, +-0) = 1 and pow(1, y) = 1 for every
 *    x and y, NaN included; pow(-1, +-inf) = 1; pow(+-0, y < 0) = +-inf and
 *    pow(+-0, y > 0) = +-0 (the sign kept for odd integers y); pow(x, +-inf)
 *    is inf or 0 by whether |x| > 1; pow(x < 0, y not an integer) = NaN
 *    (x finite); a negative x with an odd integer y gives a negative result.
 *  - Scalars passed as double (fill, binary_scalar, clamp bounds) are
 *    rounded once to the tensor's dtype: to nearest even for f32 and f16
 *    (directly from the double; +-inf beyond the range), toward zero with
 *    saturation for i32 and u32 (NaN gives 0). Integer arange instead
 *    truncates start and step and wraps them modulo 2^32, like the integer
 *    arithmetic that follows. Integer to float conversions round to nearest
 *    even (exact up to 2^24 in f32, 2048 in f16). Integer arithmetic wraps
 *    modulo 2^32.
 *  - Other edges: random_uniform with lo > hi, or with a bound or hi - lo
 *    beyond the dtype's range, fails with WGC_ERROR_INVALID_ARGUMENT (as
 *    PyTorch's uniform_); sin and cos reduce their argument modulo 2 pi
 *    exactly for |x| <= 4e5 and leave larger |x| (where one ulp of x
 *    exceeds 0.03) to the adapter; average pooling sums its window in f32,
 *    so a window whose sum exceeds the f32 range gives +-inf.
 *  - Accumulation is in f32 for float inputs (i32/u32 wrap for integers).
 *    Float sums in reductions are compensated: each invocation carries the
 *    rounding error of its running sum and partial sums are merged with
 *    error-free additions, so SUM and MEAN are within 2e-6 * sum|x| of
 *    exact at any length. Variance is two-pass: the mean first, then sums
 *    of (x - mean) and (x - mean)^2, so a large mean costs no accuracy.
 *  - Tolerances, as |got - exact| <= atol + rtol * |exact| with `exact` the
 *    real-number result for the (already rounded) inputs, f32; f16 results
 *    add their rounding (2^-11 relative) and f16 inputs are exact in f32:
 *     * exact (correctly rounded or bit-exact): add, sub, mul, neg, abs,
 *       relu, leaky_relu, maximum, minimum, clamp, comparisons, where,
 *       copy, permute, transpose, cast, fill, integer ops, reduce MAX, MIN,
 *       ARGMAX, ARGMIN, max_pool2d; fma rounds once where the adapter fuses;
 *     * div, sqrt, rsqrt, exp, log, sigmoid, silu: rtol 1e-6 (exp reduces
 *       its argument exactly, so its error does not grow with |x|; log is
 *       computed by a series near 1, so it stays relative there); sigmoid
 *       and silu into f16 use the adapter's exp as it is: rtol 1e-5 before
 *       the f16 rounding;
 *     * pow: rtol 1e-6 * (1 + |y * log2|x||);
 *     * sin, cos: atol 1e-6 for |x| <= 4e5;
 *     * tanh, GELU (both forms): atol 1e-6, rtol 1e-6;
 *     * SUM, MEAN: atol 2e-6 * sum|x| (MEAN: divided by n); PROD: rtol
 *       1e-6 * n; var, std: rtol 1e-5 (where the adapter flushes
 *       subnormals, squared deviations below 2^-126 count as 0: var may
 *       lose up to 2^-125 * (n + 1) / (n - ddof) more, so the std of data
 *       whose deviations are all below about 1e-19 may be 0);
 *     * softmax: rtol 1e-5; log_softmax: atol 1e-5;
 *     * layer_norm, rms_norm: rtol 1e-5; batch_norm: rtol 1e-6;
 *     * gemm, matmul: atol 1e-6 * K * max|a| * max|b|; the epilogue
 *       alpha * AB + beta * C may be fused, so where beta * C overflows
 *       only when rounded on its own the result is the fused one (e.g.
 *       +inf where rounding both terms first would give inf - inf = NaN);
 *     * conv2d: atol max(1e-6 * K, 1e-5 * (1 + sqrt(K))) * max|x| * max|w|
 *       with K = C/groups * KH * KW (GEMM's bound for K products of one
 *       sign; independent data typically stays within the second term);
 *     * avg_pool2d, global_avg_pool2d: rtol 1e-6 of the mean.
 *    The transcendental functions call the adapter's exp, log, sin and cos
 *    on reduced arguments; the bounds above are measured on Mesa's lavapipe
 *    (WGSL itself promises less for those built-ins, e.g. 2^-11 absolute
 *    for sin and cos).
 */

#ifndef WGCOMPUTE_H
#define WGCOMPUTE_H

/* Generated by cbindgen from the wgcompute sources: do not edit. Regenerate with `WGC_REGENERATE_HEADER=1 cargo test --test header`. */

#include <stdint.h>
#include <stddef.h>

/**
 * Bound as `var<storage>` in kernels and used by operators.
 */
#define WGC_BUFFER_USAGE_STORAGE 1

/**
 * Bound as `var<uniform>` in kernels.
 */
#define WGC_BUFFER_USAGE_UNIFORM 2

/**
 * Holds workgroup counts for `wgc_stream_launch` with an indirect buffer.
 */
#define WGC_BUFFER_USAGE_INDIRECT 4

/**
 * All of the above.
 */
#define WGC_BUFFER_USAGE_ALL 7

/**
 * Most nodes one expression may have (inputs, scalars, parameters and
 * operations together).
 */
#define WGC_EXPR_MAX_NODES 256

/**
 * Most input tensors one expression may read.
 */
#define WGC_EXPR_MAX_INPUTS 12

/**
 * Most output tensors one expression may write.
 */
#define WGC_EXPR_MAX_OUTPUTS 4

/**
 * Most scalar constants and parameters one expression may hold together.
 */
#define WGC_EXPR_MAX_SCALARS 32

/**
 * Most private memory one invocation of a kernel may use, in bytes: the
 * `var<private>` globals its entry point uses, plus its function variables
 * and those of the deepest chain of functions it calls, plus arrays indexed
 * by value with a computed index (which compilers copy into a variable).
 * Drivers compile large private arrays very slowly or crash on them.
 */
#define WGC_MAX_PRIVATE_MEMORY_BYTES 16384

/**
 * Most nesting a kernel's source may have: per statement, its operators,
 * `.`, `[` and `(` (each character counts), plus the enclosing `{` blocks
 * and `else` branches. Deeper sources (e.g. an expression chaining over
 * 16,000 `+`) fail with `WGC_ERROR_SHADER_COMPILATION`; split such
 * expressions into `let` statements.
 */
#define WGC_MAX_KERNEL_NESTING 16384

/**
 * Most bytes a kernel's source may have (4 MiB). Larger sources fail
 * with `WGC_ERROR_LIMIT_EXCEEDED` before they are parsed.
 */
#define WGC_MAX_KERNEL_SOURCE_BYTES 4194304

/**
 * Most tokens a kernel's source may have: identifiers, keywords and
 * numbers count one each, every other character that is not space one
 * more, comments nothing. The compiler's time grows faster than the source
 * past these bounds (100,000 `let` statements in one function took minutes),
 * so sources beyond `WGC_MAX_KERNEL_TOKENS`,
 * `WGC_MAX_KERNEL_DECLARATION_TOKENS` in one module-scope declaration (a
 * function with its body, a `const` with its value) or
 * `WGC_MAX_KERNEL_DECLARATIONS` module-scope declarations (functions,
 * constants, variables, structs, aliases) fail with
 * `WGC_ERROR_LIMIT_EXCEEDED` in milliseconds, naming the line. Within them,
 * creation time grows about linearly with the source (a few seconds on a
 * software driver for a source at the limits, four declarations of the
 * most tokens); real kernels are far below them.
 */
#define WGC_MAX_KERNEL_TOKENS 131072

/**
 * Most tokens one module-scope declaration may have (see
 * `WGC_MAX_KERNEL_TOKENS`); a chain of 15,000 additions fits. Split longer
 * functions into smaller ones.
 */
#define WGC_MAX_KERNEL_DECLARATION_TOKENS 32768

/**
 * Most module-scope declarations a kernel's source may have (see
 * `WGC_MAX_KERNEL_TOKENS`).
 */
#define WGC_MAX_KERNEL_DECLARATIONS 4096

/**
 * Most expressions an entry point may become once drivers inline its calls:
 * its own and those of every function it reaches, each function counted
 * with the callees' inlined expressions again at every call. Drivers
 * inline every call, so a chain of functions each calling the one before
 * costs them time quadratic in its length (4,000 took minutes) and calling
 * twice grows exponentially; such kernels fail with
 * `WGC_ERROR_LIMIT_EXCEEDED` once parsed, before the driver sees them.
 */
#define WGC_MAX_KERNEL_INLINED_EXPRESSIONS 1048576

/**
 * The number of `WgcReduceOp` values (0 .. WGC_NUM_REDUCE_OPS - 1).
 */
#define WGC_NUM_REDUCE_OPS 7

/**
 * Major version of the library this header describes.
 */
#define WGC_VERSION_MAJOR 0

/**
 * Minor version.
 */
#define WGC_VERSION_MINOR 1

/**
 * Patch version.
 */
#define WGC_VERSION_PATCH 0

/**
 * Version of the binary interface: structs, enums and signatures. Pass it to
 * `wgc_instance_create`; a library built for another ABI refuses it.
 */
#define WGC_ABI_VERSION 1

/**
 * Most dimensions a tensor view may have.
 */
#define WGC_MAX_RANK 8

/**
 * Most devices one communicator takes.
 */
#define WGC_MAX_COMM_DEVICES 64

/**
 * The number of `WgcActivation` values (0 .. WGC_NUM_ACTIVATIONS - 1).
 */
#define WGC_NUM_ACTIVATIONS 8

/**
 * The number of `WgcBinaryOp` values (0 .. WGC_NUM_BINARY_OPS - 1): a
 * loop over every binary op stops here.
 */
#define WGC_NUM_BINARY_OPS 13

/**
 * The number of `WgcUnaryOp` values (0 .. WGC_NUM_UNARY_OPS - 1).
 */
#define WGC_NUM_UNARY_OPS 16



/**
 * The result of every fallible call. Values are fixed and never renumbered.
 * On failure, `wgc_last_error_message()` describes what went wrong.
 *
 */
enum WgcStatus
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Success.
   */
  WGC_OK = 0,
  /**
   * An argument has a value the function does not accept.
   */
  WGC_ERROR_INVALID_ARGUMENT = 1,
  /**
   * A required pointer or handle is NULL.
   */
  WGC_ERROR_NULL_POINTER = 2,
  /**
   * An offset, size, index or view reaches outside its object.
   */
  WGC_ERROR_OUT_OF_RANGE = 3,
  /**
   * An offset or size is not a multiple of what the GPU requires.
   */
  WGC_ERROR_ALIGNMENT = 4,
  /**
   * A request exceeds what this adapter allows (e.g. buffer size).
   */
  WGC_ERROR_TOO_LARGE = 5,
  /**
   * The GPU ran out of memory.
   */
  WGC_ERROR_OUT_OF_MEMORY = 6,
  /**
   * WGSL failed to parse or validate; the message has line and column.
   */
  WGC_ERROR_SHADER_COMPILATION = 7,
  /**
   * Bound buffers do not match what the kernel declares.
   */
  WGC_ERROR_BINDING_MISMATCH = 8,
  /**
   * Objects of different devices were used together.
   */
  WGC_ERROR_DEVICE_MISMATCH = 9,
  /**
   * The device was lost or destroyed.
   */
  WGC_ERROR_DEVICE_LOST = 10,
  /**
   * A named thing (adapter, entry point) does not exist.
   */
  WGC_ERROR_NOT_FOUND = 11,
  /**
   * The operation, dtype or feature is not supported here.
   */
  WGC_ERROR_UNSUPPORTED = 12,
  /**
   * Tensor shapes do not agree.
   */
  WGC_ERROR_SHAPE_MISMATCH = 13,
  /**
   * Tensor dtypes do not agree.
   */
  WGC_ERROR_DTYPE_MISMATCH = 14,
  /**
   * A dispatch or kernel exceeds one of the adapter's limits.
   */
  WGC_ERROR_LIMIT_EXCEEDED = 15,
  /**
   * The header the caller was compiled with does not match this library.
   */
  WGC_ERROR_ABI_MISMATCH = 16,
  /**
   * The GPU layer rejected an operation (message has details).
   */
  WGC_ERROR_VALIDATION = 17,
  /**
   * A wait timed out.
   */
  WGC_ERROR_TIMEOUT = 18,
  /**
   * A bug in wgcompute (including a caught panic).
   */
  WGC_ERROR_INTERNAL = 19,
  /**
   * The call is not allowed in the object's present state: e.g. a host
   * read of a buffer that a stream's capture uses, a blocking wait on a
   * capturing stream, a second `wgc_stream_begin_capture`.
   */
  WGC_ERROR_INVALID_OPERATION = 20,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcStatus WgcStatus;
#else
typedef uint32_t WgcStatus;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Graphics API an adapter runs on.
 */
enum WgcBackend
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  WGC_BACKEND_OTHER = 0,
  WGC_BACKEND_VULKAN = 1,
  WGC_BACKEND_METAL = 2,
  WGC_BACKEND_DX12 = 3,
  WGC_BACKEND_GL = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcBackend WgcBackend;
#else
typedef uint32_t WgcBackend;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Kind of adapter.
 */
enum WgcDeviceType
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  WGC_DEVICE_TYPE_OTHER = 0,
  WGC_DEVICE_TYPE_INTEGRATED_GPU = 1,
  WGC_DEVICE_TYPE_DISCRETE_GPU = 2,
  WGC_DEVICE_TYPE_VIRTUAL_GPU = 3,
  /**
   * A software driver (e.g. lavapipe).
   */
  WGC_DEVICE_TYPE_CPU = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcDeviceType WgcDeviceType;
#else
typedef uint32_t WgcDeviceType;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How a copy between two devices (and a collective's transfers) moves the
 * bytes through host memory.
 */
enum WgcPeerRoute
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Chunks are read back into mapped staging buffers of the source
   * device, copied by the host into mapped staging buffers of the
   * destination, and uploaded from there.
   */
  WGC_PEER_ROUTE_STAGED = 0,
  /**
   * One host allocation is imported into both devices
   * (VK_EXT_external_memory_host): the source copies chunks into it and
   * the destination copies them out, with no host copy.
   */
  WGC_PEER_ROUTE_IMPORTED = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcPeerRoute WgcPeerRoute;
#else
typedef uint32_t WgcPeerRoute;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How to choose an adapter when `adapter_index` is negative.
 */
enum WgcPowerPreference
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * `WGC_ADAPTER` if set (an index or part of the adapter's name), else the
   * fastest kind of adapter present (discrete, integrated, virtual, software).
   */
  WGC_POWER_PREFERENCE_DEFAULT = 0,
  WGC_POWER_PREFERENCE_HIGH_PERFORMANCE = 1,
  WGC_POWER_PREFERENCE_LOW_POWER = 2,
  /**
   * Only a software driver (e.g. lavapipe).
   */
  WGC_POWER_PREFERENCE_SOFTWARE = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcPowerPreference WgcPowerPreference;
#else
typedef uint32_t WgcPowerPreference;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What the autotuner does on a device (`WgcDeviceOptions.autotune`).
 *
 * Some operators have several kernel variants for a shape (loads per
 * invocation, a split into more workgroups, a staged or plain kernel)
 * and pick one by heuristics measured on one GPU. With the tuner on, the
 * first call of each *shape class* (sizes rounded to powers of two,
 * dtype, layout) times the candidate variants on the call's own operands
 * on the device (its stream's pending work is finished first, then each
 * candidate runs twice to warm up and five times timed, by GPU timestamps
 * where the adapter has them, else by host time around a wait) and keeps
 * the fastest for that class; the call then records it as usual. That
 * first call therefore blocks until the timing runs have finished and
 * costs tens of kernel runs; later calls of the class cost nothing extra.
 *
 * Tuned now: last-axis reductions of contiguous rows (invocations per
 * row), skinny matrix products (plain, staged or wide kernels, or the
 * tiled GEMM), and softmax over long rows (how far rows are cut into
 * chunks). A choice that an environment variable fixes
 * (`WGC_REDUCE_ROW_LOADS`, `WGC_GEMV_AXPY`, `WGC_SOFTMAX_SPLIT_GROUPS`,
 * read when the device is created; docs/TUNING.md) is never tuned. Calls whose output is also read (a GEMM with `beta != 0`)
 * or shares a buffer with an input are never timed: running them
 * repeatedly would change the result; they use the stored choice if any,
 * else the heuristic. Every candidate computes the same result up to the
 * summation order of floating-point sums.
 *
 * **Warming it**: run the workload once with `WGC_AUTOTUNE_ON` (or
 * `WGC_AUTOTUNE=1`) and a `tuning_cache_path`; the choices are written when
 * the device is released (or by `wgc_device_save_tuning`). Later processes
 * on the same adapter, driver and library version load them at device
 * creation, with `WGC_AUTOTUNE_CACHED` to time nothing new, or
 * `WGC_AUTOTUNE_ON` to tune classes the file lacks.
 */
enum WgcAutotune
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * As the environment variable `WGC_AUTOTUNE` says: `1` or `on`: On;
   * `cached`: Cached; unset, `0` or `off`: Off; any other value makes
   * `wgc_device_create` fail with `WGC_ERROR_INVALID_ARGUMENT`.
   */
  WGC_AUTOTUNE_DEFAULT = 0,
  /**
   * Heuristics only; no tuning cache file is read or written.
   */
  WGC_AUTOTUNE_OFF = 1,
  /**
   * Time each new shape class once, keep and reuse the fastest variant.
   */
  WGC_AUTOTUNE_ON = 2,
  /**
   * Use the choices loaded from `tuning_cache_path`; time nothing
   * (heuristics for classes the file lacks). No first-call cost.
   */
  WGC_AUTOTUNE_CACHED = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcAutotune WgcAutotune;
#else
typedef uint32_t WgcAutotune;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Element types.
 */
enum WgcDtype
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  WGC_DTYPE_F32 = 0,
  WGC_DTYPE_F16 = 1,
  WGC_DTYPE_I32 = 2,
  WGC_DTYPE_U32 = 3,
  /**
   * bfloat16 (8 exponent bits, 7 fraction bits), stored as the raw 16
   * bits (the top half of the f32 with the same value), 2 bytes per
   * element. Every adapter supports it (no shader-f16 needed). Taken by
   * the elementwise operators (binary, binary_scalar, unary, leaky_relu,
   * clamp, fma, where) and data movement through them (wgc_op_cast,
   * copy, permute, transpose, fill, arange), the reductions
   * (wgc_op_reduce, wgc_op_var, wgc_op_std) and wgc_op_gemm /
   * wgc_op_matmul; every other operator returns WGC_ERROR_UNSUPPORTED
   * (with a message naming bf16) for bf16 tensors. Computed in f32,
   * rounded once to bf16 as the header's Numerics section describes.
   * Kernels hold bf16 as 16-bit halves of u32 words: an element written
   * alone (a strided or unaligned output) sets its half with atomic
   * operations, leaving its neighbour intact.
   */
  WGC_DTYPE_BF16 = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcDtype WgcDtype;
#else
typedef uint32_t WgcDtype;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Binary elementwise operations.
 */
enum WgcBinaryOp
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  WGC_BINARY_OP_ADD = 0,
  WGC_BINARY_OP_SUB = 1,
  WGC_BINARY_OP_MUL = 2,
  /**
   * Floats: IEEE division. Integers: truncation toward zero; x / 0 = 0;
   * INT32_MIN / -1 = INT32_MIN.
   */
  WGC_BINARY_OP_DIV = 3,
  /**
   * f32, f16 and bf16 only. Computed as exp2(y * log2|x|) in f32, log2 near 1
   * by a series, so the relative error is within 1e-6 * (1 + |y log2|x||);
   * negative x with an odd integral y gives a negative result, negative
   * finite x with a non-integral y gives NaN; the special cases (zeros,
   * infinities, NaN) are C99's, as the header's Numerics section lists.
   */
  WGC_BINARY_OP_POW = 4,
  /**
   * NaN if either operand is NaN (PyTorch's maximum and minimum).
   */
  WGC_BINARY_OP_MAXIMUM = 5,
  WGC_BINARY_OP_MINIMUM = 6,
  /**
   * Comparisons write a U32 tensor of 0 or 1. A NaN operand makes EQ,
   * LT, LE, GT and GE 0 and NE 1 (IEEE 754).
   */
  WGC_BINARY_OP_EQ = 7,
  WGC_BINARY_OP_NE = 8,
  WGC_BINARY_OP_LT = 9,
  WGC_BINARY_OP_LE = 10,
  WGC_BINARY_OP_GT = 11,
  WGC_BINARY_OP_GE = 12,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcBinaryOp WgcBinaryOp;
#else
typedef uint32_t WgcBinaryOp;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Unary elementwise operations. All take f32, f16 and bf16 (f16 and bf16
 * are computed in f32 and rounded once); NEG, ABS and RELU also take i32 (ABS(INT32_MIN) wraps).
 * NaN gives NaN for every op (RELU included). Accuracy in f32: exp, log,
 * sqrt, rsqrt, sigmoid, silu within 1e-6 relative (exp reduces its
 * argument exactly, log is computed by a series near 1); sin, cos within
 * 1e-6 absolute for |x| <= 4e5 (the argument is reduced modulo 2 pi in
 * extended precision; beyond, the adapter's sin and cos); sin, cos of
 * +-inf are NaN; tanh within 1e-6 absolute + relative (exactly +-1 beyond
 * |x| = 15); GELU_ERF uses the Abramowitz-Stegun 7.1.26 erf (|erf error| <=
 * 1.5e-7), within 1e-6 absolute + relative overall. f16: the f16 rounding
 * of those (2e-3 absolute + relative covers it).
 */
enum WgcUnaryOp
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  WGC_UNARY_OP_NEG = 0,
  WGC_UNARY_OP_ABS = 1,
  WGC_UNARY_OP_EXP = 2,
  WGC_UNARY_OP_LOG = 3,
  WGC_UNARY_OP_SQRT = 4,
  WGC_UNARY_OP_RSQRT = 5,
  WGC_UNARY_OP_SIN = 6,
  WGC_UNARY_OP_COS = 7,
  WGC_UNARY_OP_TANH = 8,
  WGC_UNARY_OP_SIGMOID = 9,
  WGC_UNARY_OP_RELU = 10,
  /**
   * x * Phi(x) with the exact (erf) normal CDF.
   */
  WGC_UNARY_OP_GELU_ERF = 11,
  /**
   * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
   */
  WGC_UNARY_OP_GELU_TANH = 12,
  /**
   * x * sigmoid(x).
   */
  WGC_UNARY_OP_SILU = 13,
  /**
   * min(max(x, 0), 6) (PyTorch's `relu6`): exact; NaN gives NaN.
   */
  WGC_UNARY_OP_RELU6 = 14,
  /**
   * x * min(max(x + 3, 0), 6) / 6 (PyTorch's `hardswish`): x itself for
   * x >= 3 (no overflow near the f32 limit), else x * max(x + 3, 0) / 6
   * in f32 (relative 3e-7: three roundings); as in PyTorch, -inf gives
   * NaN (-inf * 0); NaN gives NaN.
   */
  WGC_UNARY_OP_HARDSWISH = 15,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcUnaryOp WgcUnaryOp;
#else
typedef uint32_t WgcUnaryOp;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Reduction operators of `wgc_op_reduce`.
 */
enum WgcReduceOp
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  WGC_REDUCE_OP_SUM = 0,
  WGC_REDUCE_OP_MEAN = 1,
  WGC_REDUCE_OP_MAX = 2,
  WGC_REDUCE_OP_MIN = 3,
  WGC_REDUCE_OP_PROD = 4,
  WGC_REDUCE_OP_ARGMAX = 5,
  WGC_REDUCE_OP_ARGMIN = 6,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcReduceOp WgcReduceOp;
#else
typedef uint32_t WgcReduceOp;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Which elements of the last dim rope rotates together. Values are fixed.
 */
enum WgcRopeLayout
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Pairs (x[2i], x[2i+1]) (GPT-J, llama.cpp's default, Meta's Llama
   * reference code).
   */
  WGC_ROPE_LAYOUT_INTERLEAVED = 0,
  /**
   * Pairs (x[i], x[i + r/2]) with r the rotated dims ("rotate_half":
   * GPT-NeoX, Hugging Face Llama).
   */
  WGC_ROPE_LAYOUT_HALF_SPLIT = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcRopeLayout WgcRopeLayout;
#else
typedef uint32_t WgcRopeLayout;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Whether a `WgcProfileRecord`'s GPU time was measured.
 */
enum WgcProfileTime
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * `gpu_ns` holds the time between GPU timestamps written just before
   * and just after the command.
   */
  WGC_PROFILE_TIME_MEASURED = 0,
  /**
   * The adapter has no timestamp queries inside passes or encoders
   * (`WgcAdapterInfo.has_timestamps` is 0): `gpu_ns` is 0, not a time.
   */
  WGC_PROFILE_TIME_NO_TIMESTAMPS = 1,
  /**
   * The command never ran (its batch was rejected as a whole, or the
   * records were cleared before its timestamps were read): `gpu_ns` is 0.
   */
  WGC_PROFILE_TIME_NOT_RUN = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcProfileTime WgcProfileTime;
#else
typedef uint32_t WgcProfileTime;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Rows of `wgc_profile_table`: one per operator name, or one per kernel variant.
 */
enum WgcProfileGroup
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  WGC_PROFILE_GROUP_BY_OPERATOR = 0,
  WGC_PROFILE_GROUP_BY_KERNEL = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcProfileGroup WgcProfileGroup;
#else
typedef uint32_t WgcProfileGroup;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Which causal mask applies. Values are fixed.
 */
enum WgcAttentionCausal
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * No causal mask.
   */
  WGC_ATTENTION_CAUSAL_NONE = 0,
  /**
   * Query i (of Sq) sees keys j <= i + L - Sq, L the valid keys:
   * aligned to the bottom-right (FlashAttention, PyTorch's
   * `causal_lower_right`), what decode and chunked prefill need.
   */
  WGC_ATTENTION_CAUSAL_BOTTOM_RIGHT = 1,
  /**
   * Query i sees keys j <= i: aligned to the top-left, as PyTorch's
   * `is_causal=True`. The same as BottomRight when Sq == L.
   */
  WGC_ATTENTION_CAUSAL_TOP_LEFT = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcAttentionCausal WgcAttentionCausal;
#else
typedef uint32_t WgcAttentionCausal;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How a reducing collective combines the ranks' elements.
 */
enum WgcCollectiveOp
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Sum (in f32 for f16 and bf16, rounded once per received segment).
   */
  WGC_COLLECTIVE_OP_SUM = 0,
  /**
   * Maximum; NaN propagates (as WGC_BINARY_OP_MAXIMUM).
   */
  WGC_COLLECTIVE_OP_MAX = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcCollectiveOp WgcCollectiveOp;
#else
typedef uint32_t WgcCollectiveOp;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * The activation of a fused convolution (`wgc_op_conv2d_bn_act`) or GEMM
 * epilogue (`wgc_op_gemm_epilogue`): `WgcActivation` in C.
 */
enum WgcActivation
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * The convolution's output as it is.
   */
  WGC_ACTIVATION_NONE = 0,
  /**
   * max(x, 0), as `WGC_UNARY_OP_RELU`.
   */
  WGC_ACTIVATION_RELU = 1,
  /**
   * min(max(x, 0), 6), as `WGC_UNARY_OP_RELU6`.
   */
  WGC_ACTIVATION_RELU6 = 2,
  /**
   * x * min(max(x + 3, 0), 6) / 6, as `WGC_UNARY_OP_HARDSWISH`.
   */
  WGC_ACTIVATION_HARDSWISH = 3,
  /**
   * x * Phi(x) with the erf form of the normal CDF (PyTorch's default
   * `gelu`), as `WGC_UNARY_OP_GELU_ERF`.
   */
  WGC_ACTIVATION_GELU = 4,
  /**
   * The tanh approximation of GELU (PyTorch's `approximate="tanh"`), as
   * `WGC_UNARY_OP_GELU_TANH`.
   */
  WGC_ACTIVATION_GELU_TANH = 5,
  /**
   * x * sigmoid(x), as `WGC_UNARY_OP_SILU`.
   */
  WGC_ACTIVATION_SILU = 6,
  /**
   * tanh(x), as `WGC_UNARY_OP_TANH`.
   */
  WGC_ACTIVATION_TANH = 7,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcActivation WgcActivation;
#else
typedef uint32_t WgcActivation;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Where `wgc_op_gemm_epilogue` adds the residual (`WgcResidualPosition`).
 */
enum WgcResidualPosition
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * `act(y + residual)` (a ResNet block's `relu(conv + bn + identity)`).
   */
  WGC_RESIDUAL_POSITION_BEFORE_ACTIVATION = 0,
  /**
   * `act(y) + residual` (a transformer's residual stream).
   */
  WGC_RESIDUAL_POSITION_AFTER_ACTIVATION = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum WgcResidualPosition WgcResidualPosition;
#else
typedef uint32_t WgcResidualPosition;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * A region of GPU memory. Safe to use from many threads; the library orders
 * host reads and writes after all work recorded before them (see
 * `wgc_buffer_write`).
 */
typedef struct WgcBuffer WgcBuffer;

/**
 * An ordered set of distinct devices of this process, for collectives.
 * Rank i is the i-th device given at creation; every collective takes one
 * stream and one tensor per rank, in rank order, each of that rank's
 * device. A communicator holds a reference to each device.
 *
 * Rules for every collective:
 * - Ordering: rank i's part reads its inputs after all work recorded on
 *   `streams[i]` before the call and writes its outputs before all work
 *   recorded there after it. Nothing is ordered with other streams.
 * - Blocking: the call returns once every transfer has been read back and
 *   handed to its destination's queue (see `wgc_buffer_copy_to_device`);
 *   the last reductions and uploads may still run (wait with
 *   `wgc_stream_synchronize` or an event, or just record more work).
 * - Threads: a communicator may be used from any thread, but one
 *   collective at a time per set of streams; the call uses its own threads
 *   (one per rank) internally. The streams are flushed by the call.
 * - Failure: arguments are all checked before anything is recorded. A
 *   device lost (or destroyed) during the call gives
 *   `WGC_ERROR_DEVICE_LOST` (a transfer that does not arrive within the
 *   GPU timeout, 60 s when none is set: `WGC_ERROR_TIMEOUT`), never a
 *   hang; the outputs of every rank are then unspecified.
 * - Tensors to reduce must be contiguous views (`WGC_ERROR_INVALID_ARGUMENT`
 *   otherwise); the inputs of all-gather and broadcast may be any view.
 *   Dtypes: f32, f16, bf16, i32, u32 (f16 where every device has shader
 *   f16, `WGC_ERROR_UNSUPPORTED` otherwise).
 */
typedef struct WgcComm WgcComm;

/**
 * A GPU device opened on one adapter. Safe to use from many threads at once.
 */
typedef struct WgcDevice WgcDevice;

/**
 * A point recorded in a stream. Safe to wait on from any thread.
 */
typedef struct WgcEvent WgcEvent;

/**
 * An elementwise expression: a DAG of nodes, each an input tensor, a
 * scalar constant, a launch parameter or an elementwise operation of
 * earlier nodes, and the list of nodes written to output tensors. Build it
 * with `wgc_expr_input`, `wgc_expr_scalar`, `wgc_expr_param`,
 * `wgc_expr_unary`, `wgc_expr_binary`, `wgc_expr_where`, `wgc_expr_fma`,
 * `wgc_expr_cast` and `wgc_expr_output`, each returning the new node's id
 * (0, 1, 2, ... in the order built); launch it with `wgc_op_expr`.
 *
 * Nodes may only use nodes built before them, so expressions are acyclic;
 * an id not built yet is `WGC_ERROR_INVALID_ARGUMENT`. Each node has a
 * dtype, checked as it is built with the separate operators' rules and no
 * implicit promotion: binary ops, fma and where's values take operands of
 * one dtype (`WGC_ERROR_DTYPE_MISMATCH`; cast first), comparisons give
 * U32 0/1, where's mask is U32, POW and the unary ops other than NEG, ABS
 * and RELU need floats, those three also take I32
 * (`WGC_ERROR_UNSUPPORTED`). A failed build call leaves the expression
 * as it was. Limits (`WGC_ERROR_LIMIT_EXCEEDED`): `WGC_EXPR_MAX_NODES`
 * nodes, `WGC_EXPR_MAX_INPUTS` inputs, `WGC_EXPR_MAX_OUTPUTS` outputs,
 * `WGC_EXPR_MAX_SCALARS` constants and parameters.
 *
 * Numerics: every node computes as the separate operator would
 * (`wgc_op_binary`, `wgc_op_unary`, `wgc_op_fma`, `wgc_op_where`,
 * `wgc_op_cast`), f16 and bf16 nodes computed in f32 and rounded to
 * their dtype after each op, so a fused expression gives the bits of the
 * chain of separate operators (same NaN and infinity rules, same
 * tolerances) with two exceptions. An F32 MUL whose result feeds an ADD
 * or SUB may be contracted with it into one fused multiply-add (WGSL lets
 * the driver do so): the product is then neither rounded nor overflows
 * on its own, so that node may differ from the separate operators' by up
 * to half an ulp of the product plus one ulp of the result (or be finite
 * where an overflowing product made them infinite or NaN), and later
 * nodes carry the difference. (f16 and bf16 products are rounded before
 * the add, so they are never contracted.) And a NaN stays NaN, but its
 * payload bits are unspecified, as PyTorch leaves them: they may differ
 * from the separate operators' NaN. To keep intermediates in f32, cast
 * the inputs to F32 and the result back.
 *
 * Reference-counted; `wgc_expr_release` drops a reference. Building is
 * not meant to race with itself, but every call locks the expression, so
 * concurrent use from several threads (building and launching) is safe.
 */
typedef struct WgcExpr WgcExpr;

/**
 * A captured sequence of GPU work, replayable onto any stream of its device.
 *
 * **Capture.** `wgc_stream_begin_capture(s)` turns a stream into a
 * recorder: launches of users' kernels (`wgc_stream_launch`), built-in
 * operators, copies and fills recorded on `s` are checked as usual (a bad
 * call fails with its usual status and is not captured) but not run; they
 * are kept, fully resolved (pipelines, bind groups, the launch parameters'
 * bytes, workgroup counts, the library's choice of kernel variant), until
 * `wgc_stream_end_capture(s, &graph)` returns them as a graph. A replay,
 * `wgc_graph_replay(graph, stream, ...)`, adds the captured commands to a
 * stream as if they were recorded there again, with no argument checks,
 * kernel lookup or planning repeated (only the bind groups a binding table
 * changes are made, once per table). The autotuner does not time
 * candidates during a capture: it uses a stored choice or the heuristic's.
 *
 * **What cannot be captured.** Calls that need the GPU's results on the
 * host, or that wait, fail with `WGC_ERROR_INVALID_OPERATION` while
 * capturing and leave the capture as it was (usable; nothing is recorded
 * for the call): `wgc_stream_synchronize` and `wgc_stream_record_event` on
 * the capturing stream, and `wgc_buffer_read` and `wgc_buffer_write` of a
 * buffer the capture uses (on any thread). A capture holds at most
 * 1 MiB of launch parameters (each launch's rounded up to the adapter's
 * `min_uniform_buffer_offset_alignment`, e.g. 4096 launches at 256 bytes):
 * past that, `WGC_ERROR_LIMIT_EXCEEDED`. `wgc_stream_flush` submits
 * nothing while capturing (`WGC_OK`). Host reads and writes of buffers the
 * capture does not use, and `wgc_device_synchronize` (which waits for
 * submitted work only), stay allowed. A second begin on a capturing
 * stream, an end without a begin, and a replay onto a capturing stream fail
 * with `WGC_ERROR_INVALID_OPERATION`. Releasing a capturing stream drops
 * its capture.
 *
 * **Ownership.** A graph holds references to everything it uses: the
 * buffers it captured (releasing them after the capture is fine; their
 * memory stays with the graph and is not reused), the scratch space that
 * operators allocated while recording (kept for the graph's lifetime, used
 * by no other work), the pipelines of the kernels it launched, and its
 * device. Work a replay recorded keeps what it uses alive until it has run,
 * even if the graph is released first. `*out_graph` of
 * `wgc_stream_end_capture` holds one reference.
 *
 * **New inputs.** A replay reads and writes the captured buffers, so
 * writing new data into them (`wgc_buffer_write`, or work recorded before
 * the replay) is one way. A binding table is the other: each captured
 * buffer (and scratch) is a *slot*, numbered in order of first use;
 * `wgc_graph_buffer_slot` finds a buffer's slot, and a replay's
 * `WgcGraphRebind` entries put other buffers in place of slots for that
 * replay only. A replacement must belong to the graph's device, be at
 * least as large as the captured buffer (the captured views, offsets and
 * sizes are kept) and have uniform (indirect) usage where the slot was
 * bound as a uniform buffer (gave a launch's indirect counts, which each
 * replay reads and checks on the GPU again); a table that would bind one buffer both writable and in
 * another way in one launch, or copy a buffer onto itself, is refused
 * (`WGC_ERROR_BINDING_MISMATCH`, `WGC_ERROR_INVALID_ARGUMENT`). The bind
 * groups made for a table are cached with the graph (the 16 most recently
 * used tables and streams), so alternating between a few tables costs
 * nothing after their first replay.
 *
 * **New scalars.** Each launch a capture records has an index, in capture
 * order (`wgc_stream_capture_launch_count` before a launch gives its index;
 * built-in operators may record several launches, a fill one per storage
 * binding it needs).
 * A replay's `WgcGraphScalar` entries overwrite bytes of a launch's
 * parameters (the `params` of its `WgcLaunch`) for that replay only: e.g. a
 * decoding position or a RoPE offset in a user kernel's uniform. Only
 * launches of the caller's own kernels (`wgc_stream_launch` with `params`)
 * can be patched: built-in operators' parameters are the library's own
 * layout, which its kernels trust for their indexing, and a launch whose
 * uniform was bound as a buffer has none (write into that buffer instead);
 * patching those fails with `WGC_ERROR_INVALID_ARGUMENT` (their arguments
 * change through replay values, below). A patch is not
 * checked against the kernel: it must keep the caller's kernel in bounds
 * as its own `params` would.
 *
 * **New operator arguments.** Built-in operators' scalar arguments that
 * do not choose the kernel are *replay values*: each call below declares
 * them while capturing, in this order, and each gets an index in capture
 * order (`wgc_stream_capture_value_count` before the call gives the first
 * one's; a call that fails takes its indices too, and its values then
 * change nothing). A replay's `WgcGraphValue` entries give them new values, for that
 * replay only, converted as the operator converts its argument and written
 * into every launch the call recorded that takes it:
 *
 * | call | values (in order) | a replay may give |
 * | --- | --- | --- |
 * | `wgc_op_binary_scalar` | `scalar` | any double (converted to the dtype as the call does) |
 * | `wgc_op_leaky_relu` | `slope` | any double (used as f32) |
 * | `wgc_op_rope` | `position_offset` | integers 0 .. 2^32 - the positions along `seq_axis` |
 * | `wgc_op_attention` | `kv_len` | integers 0 .. Skv (0: every key, as `WgcAttentionDesc.kv_len`) |
 *
 * Integer values out of range, or not whole, fail with
 * `WGC_ERROR_OUT_OF_RANGE`; a NaN or infinite count with
 * `WGC_ERROR_INVALID_ARGUMENT`. Arguments that choose the kernel stay as
 * captured: shapes, views, dtypes, GEMM's alpha and beta (alpha 1 and
 * beta 0 select kernels without those terms), clamp's bounds. A value the
 * capture could not place safely (the operator's kernel did not take it
 * as a parameter) is refused at replay with `WGC_ERROR_INVALID_ARGUMENT`
 * and the reason; `wgc_graph_value_info` tells in advance.
 *
 * **Threads.** A graph is immutable after capture and may be replayed from
 * any thread, onto any stream of its device (used by one thread at a time,
 * as every stream), several at once. Each replay takes its parameters in
 * the replaying stream's own uniform memory, and all of one replay's
 * commands are submitted together, so concurrent replays with different
 * scalars do not mix. Concurrent replays still share the captured buffers
 * and scratch (one queue runs them one after another): replays that must
 * not share outputs need their own through a binding table.
 *
 * **Invalidation.** Nothing the caller does later invalidates a graph:
 * it holds what it uses. A destroyed or lost device makes replays fail with
 * `WGC_ERROR_DEVICE_LOST`.
 */
typedef struct WgcGraph WgcGraph;

/**
 * The entry point to the library: a snapshot of the adapters (GPUs and
 * software drivers) found when it was created.
 */
typedef struct WgcInstance WgcInstance;

/**
 * A compiled compute pipeline for one entry point of a WGSL module.
 * Immutable; safe to use from many threads.
 */
typedef struct WgcKernel WgcKernel;

/**
 * An ordered recording of GPU work, submitted in batches. Work recorded on
 * one stream runs in order. A stream is meant to be used by one thread at a
 * time; calls from several threads at once are serialized, not undefined.
 */
typedef struct WgcStream WgcStream;

/**
 * Options for `wgc_device_create`. Zero-initialise, then set `struct_size`
 * to `sizeof(WgcDeviceOptions)`; fields a smaller (older) struct lacks take
 * their defaults.
 */
typedef struct WgcDeviceOptions {
  uint32_t struct_size;
  /**
   * Index into the instance's adapters; negative: choose by `preference`.
   */
  int32_t adapter_index;
  /**
   * A `WgcPowerPreference` (read as an integer so that an unknown value
   * is reported, not undefined behaviour).
   */
  uint32_t preference;
  /**
   * If not NULL and the adapter supports it, the driver's pipeline cache
   * is loaded from this file and saved to it when the device is released
   * (or by `wgc_device_save_pipeline_cache`). Copied; need not outlive the call.
   *
   * The path must name a regular file or nothing yet (it is then created).
   * Anything else (a symbolic link, a directory, a device such as
   * /dev/null, a FIFO, a socket) is refused: `wgc_device_create` and
   * `wgc_device_save_pipeline_cache` return `WGC_ERROR_INVALID_ARGUMENT`
   * and the path is neither followed, read, replaced nor blocked on. A
   * save writes a new file named `.NAME.PID.N.tmp` in the same directory
   * and renames it over the path, so readers see the old or the new
   * contents, never a partial file; if writing or renaming fails, that
   * file is removed and the status is `WGC_ERROR_INVALID_ARGUMENT`. The
   * save when the device is released is skipped silently if refused. A
   * file whose contents do not match the adapter and driver is ignored.
   */
  const char *pipeline_cache_path;
  /**
   * Most bytes kept in the buffer pool for reuse (0: 1 GiB). When a freed
   * buffer would exceed it, the pooled memory freed longest ago goes back
   * to the driver first. Each stream also keeps up to this many bytes of
   * operators' scratch for its next calls.
   */
  uint64_t pool_limit_bytes;
  /**
   * Longest, in milliseconds, that a call blocks waiting for the GPU (0:
   * no limit): `wgc_buffer_read`, `wgc_stream_synchronize`,
   * `wgc_device_synchronize`, `wgc_event_wait` and `wgc_event_elapsed_ms`
   * return `WGC_ERROR_TIMEOUT` when the GPU has not finished the work they
   * wait for by then (the read's output is left untouched). The device is
   * not lost: the work keeps running, later calls may be made as usual,
   * and a later wait succeeds once the work has finished. A kernel that
   * never finishes keeps the GPU busy: on GPUs the driver may then reset
   * it (the device is lost, `WGC_ERROR_DEVICE_LOST`); a software driver
   * keeps running it until the process exits. Calls that only submit work
   * do not wait for the GPU, except where the driver itself makes a
   * submission wait for running work it depends on (lavapipe does).
   */
  uint64_t gpu_timeout_ms;
  /**
   * If not NULL and the tuner is not off, the tuner's choices are loaded
   * from this file at creation and saved to it when the device is
   * released if any were added (or by `wgc_device_save_tuning`). Copied.
   * A small text file of its own rather than a suffix of
   * `pipeline_cache_path`: it works on adapters without a pipeline
   * cache, and either can be kept or deleted alone. The same rules as
   * for `pipeline_cache_path` apply (regular files only, else
   * `WGC_ERROR_INVALID_ARGUMENT`; atomic replacement; the save at release
   * skipped silently if refused). The file records the adapter's name,
   * vendor and device ids, driver, driver info, backend and the library
   * version: a file made for any other, or one that is corrupt or larger
   * than 1 MiB, is ignored as a whole (the tuner starts empty and the
   * next save replaces it).
   */
  const char *tuning_cache_path;
  /**
   * A `WgcAutotune` (read as an integer so that an unknown value is
   * reported); 0: `WGC_AUTOTUNE_DEFAULT`.
   */
  uint32_t autotune;
} WgcDeviceOptions;

/**
 * The limits that matter for compute work.
 */
typedef struct WgcLimits {
  uint64_t max_buffer_size;
  uint64_t max_storage_buffer_binding_size;
  uint64_t max_uniform_buffer_binding_size;
  uint32_t max_compute_workgroup_size_x;
  uint32_t max_compute_workgroup_size_y;
  uint32_t max_compute_workgroup_size_z;
  uint32_t max_compute_invocations_per_workgroup;
  uint32_t max_compute_workgroups_per_dimension;
  uint32_t max_compute_workgroup_storage_size;
  uint32_t max_storage_buffers_per_shader_stage;
  uint32_t min_storage_buffer_offset_alignment;
  uint32_t min_uniform_buffer_offset_alignment;
  uint32_t max_immediate_size;
} WgcLimits;

/**
 * What an adapter is and can do. The caller sets `struct_size` to
 * `sizeof(WgcAdapterInfo)` before passing it; the library writes no more
 * than that many bytes.
 */
typedef struct WgcAdapterInfo {
  uint32_t struct_size;
  WgcBackend backend;
  WgcDeviceType device_type;
  /**
   * PCI vendor and device ids (0 where unknown).
   */
  uint32_t vendor_id;
  uint32_t device_id;
  /**
   * NUL-terminated, truncated to fit.
   */
  char name[256];
  char driver[256];
  char driver_info[256];
  struct WgcLimits limits;
  /**
   * 1 if f16 arithmetic in kernels (`enable f16;`) is available.
   */
  uint32_t has_f16;
  /**
   * 1 if subgroup operations are available; sizes range over min..max.
   */
  uint32_t has_subgroups;
  uint32_t subgroup_min_size;
  uint32_t subgroup_max_size;
  /**
   * 1 if events carry GPU timestamps.
   */
  uint32_t has_timestamps;
  /**
   * 1 if 16x16x16 f16 cooperative matrices (tensor cores) are available.
   */
  uint32_t has_cooperative_matrix;
  /**
   * 1 if the driver pipeline cache can be saved to disk.
   */
  uint32_t has_pipeline_cache;
  uint32_t has_immediates;
} WgcAdapterInfo;

/**
 * Memory accounting of one device, in bytes (allocation sizes, which are
 * rounded up from the requested sizes).
 */
typedef struct WgcMemoryStats {
  uint32_t struct_size;
  /**
   * Bytes in buffers that are alive now, including released buffers and
   * operators' scratch that recorded or running work still uses, and
   * the scratch streams keep for their next calls (`wgc_device_trim_pool`
   * lets go of it).
   */
  uint64_t live_bytes;
  /**
   * Highest `live_bytes` so far.
   */
  uint64_t peak_bytes;
  /**
   * Bytes of freed buffers kept for reuse.
   */
  uint64_t pooled_bytes;
  /**
   * Allocations made from the driver, and requests served from the pool.
   */
  uint64_t driver_allocations;
  uint64_t pool_hits;
  /**
   * Compiled kernels the device keeps: the library's own, and callers'
   * kernels while a handle to them is alive (a released kernel leaves).
   */
  uint64_t cached_kernels;
  /**
   * Cached bind groups (at most 8192): entries leave with the buffer
   * memory, stream or kernel they refer to.
   */
  uint64_t cached_bind_groups;
} WgcMemoryStats;

/**
 * The autotuner's counters on one device (see `WgcAutotune`).
 */
typedef struct WgcTuningStats {
  uint32_t struct_size;
  /**
   * The tuner's mode after `WGC_AUTOTUNE_DEFAULT` was resolved:
   * `WGC_AUTOTUNE_OFF`, `WGC_AUTOTUNE_ON` or `WGC_AUTOTUNE_CACHED`.
   */
  uint32_t mode;
  /**
   * Choices stored (loaded and measured), one per tunable choice and shape class.
   */
  uint64_t entries;
  /**
   * Choices loaded from `tuning_cache_path` when the device was created.
   */
  uint64_t loaded;
  /**
   * Shape classes whose candidates were timed (each class once).
   */
  uint64_t timed;
  /**
   * Operator calls that used a stored choice without timing.
   */
  uint64_t reused;
} WgcTuningStats;

/**
 * A view of a buffer as a tensor: element `[i0, ..., i(rank-1)]` lives at
 * element index `offset + sum(ik * strides[k])` of `buffer`. Strides and
 * offset count elements, not bytes; strides may be 0 (broadcast) or
 * negative. Only the first `rank` entries of `shape` and `strides` are read.
 * Fill one with `wgc_tensor_contiguous`, then change what you need
 * (transpose by swapping shape and stride entries, slice by moving `offset`).
 * A view that reaches outside its buffer, or whose element count overflows
 * 64 bits, is rejected with `WGC_ERROR_OUT_OF_RANGE`.
 *
 * Operators bind the part of a buffer a view touches, so views of buffers
 * larger than the adapter's `max_storage_buffer_binding_size` work as long
 * as the elements one view spans fit in one binding
 * (`WGC_ERROR_LIMIT_EXCEEDED` otherwise) and number at most 2^31
 * (`WGC_ERROR_TOO_LARGE`). Zero strides let a view's dims grow far past
 * its buffer; operators whose kernels count such dims in 32 bits (matmul's
 * K, conv2d's channels, kernel and padded input, pooling windows and
 * planes) refuse counts past 2^31-1 with `WGC_ERROR_TOO_LARGE`.
 */
typedef struct WgcTensor {
  const struct WgcBuffer *buffer;
  /**
   * A `WgcDtype` (an integer so that an unknown value is reported).
   */
  uint32_t dtype;
  uint32_t rank;
  int64_t shape[8];
  int64_t strides[8];
  int64_t offset;
} WgcTensor;

/**
 * Describes a kernel. Zero-initialise and set `struct_size` to
 * `sizeof(WgcKernelDesc)`.
 */
typedef struct WgcKernelDesc {
  uint32_t struct_size;
  /**
   * NUL-terminated WGSL source. Bindings must be in `@group(0)`; storage
   * buffers are `var<storage, read>` or `var<storage, read_write>`; at most
   * one `var<uniform>`, which `WgcLaunch.params` can fill.
   */
  const char *source;
  /**
   * NUL-terminated name of a `@compute` function in `source`.
   */
  const char *entry_point;
  /**
   * 1: compile without the runtime bounds checks that otherwise clamp
   * every array index, and without zero-initialising workgroup memory.
   * Faster, but an out-of-bounds access is then undefined behaviour on the
   * GPU: only for kernels whose indexing the caller has proven in bounds.
   */
  uint32_t skip_bounds_checks;
} WgcKernelDesc;

/**
 * Settings of `wgc_op_attention`. Zero-initialise (no causal mask, scale
 * 1/sqrt(D), no window, every key), set `struct_size` to
 * `sizeof(WgcAttentionDesc)`, then what differs.
 */
typedef struct WgcAttentionDesc {
  uint32_t struct_size;
  /**
   * A `WgcAttentionCausal` value.
   */
  uint32_t causal;
  /**
   * Multiplies q.k; 0: 1/sqrt(D). Finite.
   */
  float scale;
  /**
   * Sliding window: 0 for none; else the query at position i sees only
   * keys j > i - window (with a causal mask: the `window` keys ending at
   * its own position). Positions as for the causal mask.
   */
  uint32_t window;
  /**
   * Valid keys: 0 for all Skv; else only keys below `kv_len` (at most
   * Skv) take part, as if k and v were cut to that length: a KV cache
   * allocated for Skv tokens and filled with `kv_len` needs no copy.
   */
  uint32_t kv_len;
} WgcAttentionDesc;

/**
 * Settings of `wgc_op_rope`. Zero-initialise, set `struct_size` to
 * `sizeof(WgcRopeDesc)`, then at least `base` and `seq_axis`.
 */
typedef struct WgcRopeDesc {
  uint32_t struct_size;
  /**
   * A `WgcRopeLayout` value: which elements are rotated together.
   */
  uint32_t layout;
  /**
   * The dim along which the position grows by one per entry (e.g. 1 for
   * [batch, seq, heads, head_dim], -2 for [batch, heads, seq, head_dim]);
   * any dim but the last; negative counts from the end.
   */
  int32_t seq_axis;
  /**
   * How many leading elements of the last dim are rotated (even, at most
   * the last dim and at most 512); the rest are copied unchanged
   * (partial rotary embedding). 0: the whole last dim.
   */
  uint32_t rotary_dims;
  /**
   * theta_i = base^(-2i / rotary_dims), e.g. 10000. Finite and > 0.
   */
  float base;
  /**
   * The position of entry 0 along `seq_axis` (tokens already in the
   * cache when decoding).
   */
  uint32_t position_offset;
} WgcRopeDesc;

/**
 * One buffer range bound to a kernel binding.
 */
typedef struct WgcBinding {
  /**
   * The `@binding(N)` number.
   */
  uint32_t binding;
  const struct WgcBuffer *buffer;
  /**
   * Byte offset: a multiple of the adapter's
   * `min_storage_buffer_offset_alignment` (uniform: `min_uniform_...`).
   */
  uint64_t offset;
  /**
   * Bytes bound; 0 means to the end of the buffer.
   */
  uint64_t size;
} WgcBinding;

/**
 * One kernel launch. Zero-initialise and set `struct_size`.
 */
typedef struct WgcLaunch {
  uint32_t struct_size;
  const struct WgcBinding *bindings;
  uint32_t binding_count;
  /**
   * Bytes for the kernel's `var<uniform>` (copied at the call; may be NULL
   * if the kernel has none or a buffer is bound to it).
   */
  const void *params;
  uint64_t params_size;
  /**
   * Workgroup counts, each at most `max_compute_workgroups_per_dimension`.
   */
  uint32_t workgroups[3];
  /**
   * If not NULL, the counts are read on the GPU from three u32 at
   * `indirect_offset` in this buffer (created with INDIRECT usage) and
   * `workgroups` is ignored.
   */
  const struct WgcBuffer *indirect_buffer;
  uint64_t indirect_offset;
} WgcLaunch;

/**
 * A buffer in place of a graph's slot for one replay.
 */
typedef struct WgcGraphRebind {
  /**
   * The slot (from `wgc_graph_buffer_slot`).
   */
  uint32_t slot;
  const struct WgcBuffer *buffer;
} WgcGraphRebind;

/**
 * New bytes over part of one captured launch's parameters, for one replay.
 */
typedef struct WgcGraphScalar {
  /**
   * The launch's index in capture order.
   */
  uint32_t launch;
  /**
   * Byte offset inside the launch's parameters.
   */
  uint32_t offset;
  /**
   * `size` bytes to write there (copied at the call).
   */
  const void *data;
  uint32_t size;
} WgcGraphScalar;

/**
 * A new value for one of a graph's replay values (a built-in operator's
 * scalar argument, see `WgcGraph`), for one replay.
 */
typedef struct WgcGraphValue {
  /**
   * The value's index in capture order.
   */
  uint32_t index;
  uint32_t _reserved;
  double value;
} WgcGraphValue;

/**
 * What one replay changes. Zero-initialise and set `struct_size`.
 */
typedef struct WgcGraphReplay {
  uint32_t struct_size;
  const struct WgcGraphRebind *rebinds;
  uint32_t rebind_count;
  const struct WgcGraphScalar *scalars;
  uint32_t scalar_count;
  /**
   * New values of built-in operators' arguments (callers built with an
   * older header, whose struct ends before these fields, give none).
   */
  const struct WgcGraphValue *values;
  uint32_t value_count;
} WgcGraphReplay;

/**
 * Parameters of `wgc_op_conv2d`. Set `struct_size = sizeof(WgcConv2dParams)`.
 * Zero strides, dilations and groups mean 1, so a zeroed struct (with its
 * size set) is a plain stride-1 unpadded convolution.
 */
typedef struct WgcConv2dParams {
  uint32_t struct_size;
  uint32_t stride_h;
  uint32_t stride_w;
  /**
   * Zero padding added on both sides.
   */
  uint32_t pad_h;
  uint32_t pad_w;
  uint32_t dilation_h;
  uint32_t dilation_w;
  /**
   * Input and output channels are split into this many groups; `groups`
   * equal to the input channels is a depthwise convolution.
   */
  uint32_t groups;
} WgcConv2dParams;

/**
 * Parameters of `wgc_op_max_pool2d` and `wgc_op_avg_pool2d`. Set
 * `struct_size = sizeof(WgcPool2dParams)`.
 */
typedef struct WgcPool2dParams {
  uint32_t struct_size;
  /**
   * Window size; both must be positive.
   */
  uint32_t kernel_h;
  uint32_t kernel_w;
  /**
   * 0 means the window size (PyTorch's default).
   */
  uint32_t stride_h;
  uint32_t stride_w;
  /**
   * Padding on both sides, at most half the window. It acts as -inf for
   * max pooling and as zeros for average pooling.
   */
  uint32_t pad_h;
  uint32_t pad_w;
  /**
   * Non-zero: averages divide by the full window, padding included;
   * zero: by the number of input elements in the window.
   */
  uint32_t count_include_pad;
} WgcPool2dParams;

/**
 * Parameters of `wgc_op_conv2d_bn_act`. Set
 * `struct_size = sizeof(WgcConv2dBnActParams)`. The convolution's fields
 * are those of `WgcConv2dParams` (zero strides, dilations and groups mean
 * 1).
 */
typedef struct WgcConv2dBnActParams {
  uint32_t struct_size;
  uint32_t stride_h;
  uint32_t stride_w;
  uint32_t pad_h;
  uint32_t pad_w;
  uint32_t dilation_h;
  uint32_t dilation_w;
  uint32_t groups;
  /**
   * The batch norm's epsilon (finite, >= 0; PyTorch's default is 1e-5).
   */
  float eps;
  /**
   * A `WgcActivation` value.
   */
  uint32_t activation;
  /**
   * Zero: fold the batch norm into `folded_weight` and `folded_bias`
   * first. Non-zero: they hold the fold already (from an earlier call
   * with the same weights and statistics); the convolution's weight and
   * bias and the batch norm's tensors are not read and may be NULL.
   */
  uint32_t folded;
} WgcConv2dBnActParams;

/**
 * Parameters of `wgc_op_gemm_epilogue`. Set
 * `struct_size = sizeof(WgcGemmEpilogueParams)`; fields past a smaller
 * `struct_size` keep their defaults (alpha 1, the rest 0).
 */
typedef struct WgcGemmEpilogueParams {
  uint32_t struct_size;
  /**
   * Multiplies the product before the epilogue.
   */
  float alpha;
  /**
   * Non-zero: use a's (or b's) last two dims swapped, as `wgc_op_gemm`.
   */
  uint32_t transpose_a;
  uint32_t transpose_b;
  /**
   * A `WgcActivation` value.
   */
  uint32_t activation;
  /**
   * A `WgcResidualPosition` value (read only with a residual).
   */
  uint32_t residual_position;
} WgcGemmEpilogueParams;

/**
 * One GPU command a profiled stream recorded: a kernel launch or a buffer
 * copy. Strings are NUL-terminated UTF-8, owned by the array the record
 * belongs to (valid until `wgc_profile_records_free`), never NULL.
 */
typedef struct WgcProfileRecord {
  /**
   * The operator call the command belongs to: the C function's name
   * without `wgc_op_` (`matmul`, `rms_norm`, `softmax`), with the op for
   * elementwise families (`binary.mul`, `unary.silu`); `launch:<entry>`
   * for a kernel of yours (`wgc_stream_launch`), `copy_buffer`,
   * `fill_buffer`; `(library)` for work the library recorded outside any
   * call.
   */
  const char *op;
  /**
   * The kernel variant: `<shader file>:<entry><dtypes>{overrides}` for a
   * library kernel (`softmax.wgsl:rows<f16>{WG=256}`), the entry point for
   * a SPIR-V or user kernel, `copy_buffer` for a copy.
   */
  const char *kernel;
  /**
   * The call's operands, `f16[512,4096], f16[4096,4096] -> f16[512,4096]`
   * (inputs, then outputs; `-> f32[64]` for a fill); empty where the call
   * has no tensors. Optional operands (norm weights, a convolution's bias)
   * are not listed.
   */
  const char *shapes;
  /**
   * Index of the call on this stream since profiling started or was
   * cleared; the commands of one call (a split GEMM and its reduction,
   * say) share it. `UINT64_MAX` for `(library)` work.
   */
  uint64_t call;
  /**
   * Floating-point operations of the whole call where known (products:
   * 2 M N K; convolutions: 2 per multiply-add; elementwise: one per
   * output element, fma two), else 0. Repeated on each command of a call.
   */
  uint64_t flops;
  /**
   * Bytes of the call's operands, each counted once (a broadcast dim
   * once): what the call must at least read and write. Repeated on each
   * command of a call; 0 where the call has no tensors.
   */
  uint64_t bytes;
  /**
   * Host time the call took to validate and record (not to run).
   */
  uint64_t host_ns;
  /**
   * GPU time of this command in nanoseconds where `time_status` is
   * `WGC_PROFILE_TIME_MEASURED`, else 0.
   */
  uint64_t gpu_ns;
  /**
   * A `WgcProfileTime`.
   */
  uint32_t time_status;
  /**
   * Workgroup counts of a direct launch; 0 for copies and indirect launches.
   */
  uint32_t groups[3];
} WgcProfileRecord;















#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Create a buffer of `size` bytes whose contents read as zero. `usage` is a
 * combination of `WGC_BUFFER_USAGE_*` (0 means STORAGE); copies, reads and
 * writes are always allowed. Freed buffers are pooled and reused.
 *
 * Never submits GPU work and never blocks on the GPU: a new driver
 * allocation starts zeroed; a reused one is cleared on the GPU by the
 * device's next queue submission (a stream's flush or synchronize, a host
 * read or write, `wgc_device_synchronize`), before any work recorded or
 * written after this call, on any stream, can touch it. Where every byte
 * will be overwritten anyway (an operator's output), use
 * `wgc_buffer_create_uninit`, which skips the clear.
 *
 * Returns `WGC_ERROR_INVALID_ARGUMENT` for size 0 or unknown usage bits,
 * `WGC_ERROR_TOO_LARGE` above the adapter's `max_buffer_size`,
 * `WGC_ERROR_OUT_OF_MEMORY` when the GPU has no room,
 * `WGC_ERROR_DEVICE_LOST` on a lost or destroyed device.
 */
WgcStatus wgc_buffer_create(const struct WgcDevice *device,
                            uint64_t size,
                            uint32_t usage,
                            struct WgcBuffer **out_buffer);

/**
 * Create a buffer of `size` bytes whose contents are unspecified: the
 * stale bytes of a pooled allocation, or zeros. For buffers that will be
 * written completely before they are read (operators' outputs, the target
 * of `wgc_buffer_write`), where `wgc_buffer_create`'s clear is wasted work.
 * The contents are never another device's or process's data, and they are
 * stable: reading twice gives the same bytes until something writes them.
 *
 * Taking an allocation from the pool costs no GPU work, no queue
 * submission and no driver call (a few microseconds at most); only a pool
 * miss asks the driver for memory. The memory is reused only once all
 * work that used it before has finished on the GPU, so nothing recorded
 * earlier can write into the new buffer.
 *
 * Arguments, usage and statuses as `wgc_buffer_create`. Thread-safe; does
 * not block.
 */
WgcStatus wgc_buffer_create_uninit(const struct WgcDevice *device,
                                   uint64_t size,
                                   uint32_t usage,
                                   struct WgcBuffer **out_buffer);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_buffer_retain(struct WgcBuffer *buffer);

/**
 * Drop a reference. NULL is ignored. Work already recorded that uses the
 * buffer still completes correctly: its memory returns to the pool (and
 * can be handed out again) only once that work has run on the GPU.
 */
void wgc_buffer_release(struct WgcBuffer *buffer);

/**
 * The size in bytes the buffer was created with.
 */
WgcStatus wgc_buffer_size(const struct WgcBuffer *buffer, uint64_t *out_size);

/**
 * Copy `size` bytes from host memory into the buffer at `offset`. The write
 * is ordered after all work recorded so far on every stream of the device
 * (those streams are flushed) and before any work recorded after it. It
 * returns once `data` has been copied; it does not wait for the GPU.
 * `offset` and `size` must be multiples of 4 (`WGC_ERROR_ALIGNMENT`);
 * the range must lie inside the buffer (`WGC_ERROR_OUT_OF_RANGE`).
 */
WgcStatus wgc_buffer_write(const struct WgcBuffer *buffer,
                           uint64_t offset,
                           const void *data,
                           uint64_t size);

/**
 * Copy `size` bytes at `offset` of the buffer into host memory. Blocks
 * until all work recorded before the call, on every stream of the device,
 * has finished, at most `WgcDeviceOptions.gpu_timeout_ms`: then
 * `WGC_ERROR_TIMEOUT` and `data` is left untouched. Any offset and size
 * inside the buffer are allowed (`WGC_ERROR_OUT_OF_RANGE` otherwise).
 */
WgcStatus wgc_buffer_read(const struct WgcBuffer *buffer,
                          uint64_t offset,
                          void *data,
                          uint64_t size);

/**
 * Open a device. `options` may be NULL for the defaults. Returns
 * `WGC_ERROR_NOT_FOUND` if no adapter matches (none at all, a bad index, no
 * software driver when asked for one, or no name matching `WGC_ADAPTER`),
 * `WGC_ERROR_INVALID_ARGUMENT` if `WGC_ADAPTER` is consulted and is not UTF-8.
 * The device enables the adapter's full limits and the optional features
 * wgcompute uses where the adapter offers them (f16, subgroups, timestamps,
 * pipeline cache, cooperative matrices, 64-bit integers, SPIR-V passthrough
 * on Vulkan; VK_NV_cooperative_matrix2 and VK_KHR_shader_bfloat16 where
 * offered, see `wgc_op_gemm`); a missing one never fails the call. The
 * device reads the library's environment variables (README,
 * docs/TUNING.md) now and keeps them for its life. `*out_device` holds
 * one reference. Blocks while the driver opens the device.
 */
WgcStatus wgc_device_create(const struct WgcInstance *instance,
                            const struct WgcDeviceOptions *options,
                            struct WgcDevice **out_device);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_device_retain(struct WgcDevice *device);

/**
 * Drop a reference. NULL is ignored. Buffers, kernels, streams and events
 * keep their device alive; it closes when the last of them is released
 * (saving the pipeline cache if one was configured).
 */
void wgc_device_release(struct WgcDevice *device);

/**
 * Describe the device's adapter, with the limits and features enabled on
 * the device. Set `info->struct_size` first.
 */
WgcStatus wgc_device_info(const struct WgcDevice *device, struct WgcAdapterInfo *info);

/**
 * Submit the recorded work of every stream of the device and block until
 * the GPU has finished all of it (at most `WgcDeviceOptions.gpu_timeout_ms`,
 * then `WGC_ERROR_TIMEOUT`). Returns the first error a stream's batch hit
 * that no `wgc_stream_flush` or `wgc_stream_synchronize` has reported yet,
 * or one the GPU layer reported outside any call.
 */
WgcStatus wgc_device_synchronize(const struct WgcDevice *device);

/**
 * Memory statistics. Set `stats->struct_size` first.
 */
WgcStatus wgc_device_memory_stats(const struct WgcDevice *device, struct WgcMemoryStats *stats);

/**
 * Return pooled memory to the driver until at most `keep_bytes` stay pooled.
 * First the scratch each stream keeps for its next operator calls (up to
 * `pool_limit_bytes` a stream, handed out again in stream order) goes back
 * to the pool, except what recorded or running work still uses.
 */
WgcStatus wgc_device_trim_pool(const struct WgcDevice *device, uint64_t keep_bytes);

/**
 * Save the driver's pipeline cache to the path given in the options now.
 * `*out_saved` (may be NULL) is 1 if a file was written, 0 if the device has
 * no pipeline cache (no path given, or the adapter does not support one).
 * `WGC_ERROR_INVALID_ARGUMENT` if the path is no longer a regular file (or
 * absent) or the file cannot be written; see
 * `WgcDeviceOptions.pipeline_cache_path`.
 */
WgcStatus wgc_device_save_pipeline_cache(const struct WgcDevice *device, uint32_t *out_saved);

/**
 * The autotuner's counters (see `WgcAutotune`). Set `stats->struct_size`
 * first. Does not block.
 */
WgcStatus wgc_device_tuning_stats(const struct WgcDevice *device, struct WgcTuningStats *stats);

/**
 * Save the tuner's choices (every stored one) to `tuning_cache_path` now.
 * `*out_saved` (may be NULL) is 1 if the file was written, 0 if the device
 * has no tuning cache (no path given, or the tuner is off).
 * `WGC_ERROR_INVALID_ARGUMENT` if the path is no longer a regular file (or
 * absent) or the file cannot be written; see
 * `WgcDeviceOptions.tuning_cache_path`. Blocks while the file is written.
 */
WgcStatus wgc_device_save_tuning(const struct WgcDevice *device, uint32_t *out_saved);

/**
 * Destroy the device's GPU resources now, as if the device were lost. The
 * handle stays valid (release it as usual), but every later call on it or
 * its children fails with `WGC_ERROR_DEVICE_LOST`, a second
 * `wgc_device_destroy` included.
 */
WgcStatus wgc_device_destroy(const struct WgcDevice *device);

/**
 * Record an event at the current point of the stream, with a GPU timestamp
 * where the adapter has them (`WgcAdapterInfo.has_timestamps`). Does not
 * block. `*out_event` holds one reference.
 */
WgcStatus wgc_stream_record_event(const struct WgcStream *stream, struct WgcEvent **out_event);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_event_retain(struct WgcEvent *event);

/**
 * Drop a reference. NULL is ignored.
 */
void wgc_event_release(struct WgcEvent *event);

/**
 * Block until the GPU has passed the event; flushes its stream if the
 * event has not been submitted yet. Waits at most
 * `WgcDeviceOptions.gpu_timeout_ms` (then `WGC_ERROR_TIMEOUT`).
 */
WgcStatus wgc_event_wait(const struct WgcEvent *event);

/**
 * `*out_done` = 1 if the GPU has passed the event, else 0. Does not block
 * and does not flush.
 */
WgcStatus wgc_event_query(const struct WgcEvent *event, uint32_t *out_done);

/**
 * GPU time in milliseconds from `start` to `end` (both recorded on streams
 * of one device), measured with GPU timestamps. Blocks until both have
 * passed (at most `WgcDeviceOptions.gpu_timeout_ms`, then
 * `WGC_ERROR_TIMEOUT`). `WGC_ERROR_UNSUPPORTED` if the adapter has no
 * timestamps. Any number of threads may ask about the same events at once.
 */
WgcStatus wgc_event_elapsed_ms(const struct WgcEvent *start,
                               const struct WgcEvent *end,
                               double *out_ms);

/**
 * Create an empty expression into `*out_expr` (released with
 * `wgc_expr_release`). `WGC_ERROR_NULL_POINTER` if `out_expr` is NULL.
 */
WgcStatus wgc_expr_create(struct WgcExpr **out_expr);

/**
 * Take another reference to `expr`. NULL does nothing.
 */
void wgc_expr_retain(struct WgcExpr *expr);

/**
 * Drop a reference to `expr`. NULL does nothing. Launched work does not
 * need the expression: it may be released right after `wgc_op_expr`.
 */
void wgc_expr_release(struct WgcExpr *expr);

/**
 * Add input tensor number k (k = the number of inputs added before; the
 * k-th tensor of `wgc_op_expr`'s `inputs`) of `dtype` (a `WgcDtype`).
 * Unknown dtype: `WGC_ERROR_INVALID_ARGUMENT`.
 */
WgcStatus wgc_expr_input(struct WgcExpr *expr, uint32_t dtype, uint32_t *out_node);

/**
 * Add a constant of `dtype`: `value` converted as `wgc_op_binary_scalar`
 * converts its scalar (floats rounded once to nearest even, integers
 * truncated and saturated, NaN -> 0). The value is not part of the
 * compiled kernel: expressions that differ only in constants share it.
 */
WgcStatus wgc_expr_scalar(struct WgcExpr *expr, uint32_t dtype, double value, uint32_t *out_node);

/**
 * Add launch parameter number k (k = the number of parameters added
 * before) of `dtype`: its value is `params[k]` of each `wgc_op_expr`,
 * converted as `wgc_expr_scalar` converts. Changing it between launches
 * reuses the compiled kernel.
 */
WgcStatus wgc_expr_param(struct WgcExpr *expr, uint32_t dtype, uint32_t *out_node);

/**
 * Add `op(a)`, `op` a `WgcUnaryOp` (unknown: `WGC_ERROR_INVALID_ARGUMENT`).
 */
WgcStatus wgc_expr_unary(struct WgcExpr *expr, uint32_t op, uint32_t a, uint32_t *out_node);

/**
 * Add `a op b`, `op` a `WgcBinaryOp` (unknown: `WGC_ERROR_INVALID_ARGUMENT`).
 */
WgcStatus wgc_expr_binary(struct WgcExpr *expr,
                          uint32_t op,
                          uint32_t a,
                          uint32_t b,
                          uint32_t *out_node);

/**
 * Add `mask != 0 ? a : b` (mask U32, a and b of one dtype).
 */
WgcStatus wgc_expr_where(struct WgcExpr *expr,
                         uint32_t mask,
                         uint32_t a,
                         uint32_t b,
                         uint32_t *out_node);

/**
 * Add `a * b + c` (one rounding for floats, as `wgc_op_fma`).
 */
WgcStatus wgc_expr_fma(struct WgcExpr *expr,
                       uint32_t a,
                       uint32_t b,
                       uint32_t c,
                       uint32_t *out_node);

/**
 * Add `a` converted to `dtype`, as `wgc_op_cast` converts.
 */
WgcStatus wgc_expr_cast(struct WgcExpr *expr, uint32_t a, uint32_t dtype, uint32_t *out_node);

/**
 * Write node `node` to output tensor number j (j = the number of outputs
 * added before), whose dtype must be the node's. A node may be written to
 * several outputs.
 */
WgcStatus wgc_expr_output(struct WgcExpr *expr, uint32_t node);

/**
 * Launch `expr`: every output is computed elementwise over the outputs'
 * shape (every output has the same shape; each input broadcasts to it
 * with NumPy's rules, `WGC_ERROR_SHAPE_MISMATCH` otherwise) in one
 * kernel. `inputs[k]` is input k (dtype as declared,
 * `WGC_ERROR_DTYPE_MISMATCH` otherwise), `outputs[j]` output j (the
 * dtype of its node), `params[k]` parameter k. Counts that differ from
 * the expression's, or an expression without outputs:
 * `WGC_ERROR_INVALID_ARGUMENT`. Views may be strided, offset, reversed
 * or broadcast (inputs); an output whose elements share memory, or that
 * shares a buffer with an input or another output, is
 * `WGC_ERROR_INVALID_ARGUMENT` (no in-place: write to a buffer of its own).
 * f16 needs shader-f16 support (`WGC_ERROR_UNSUPPORTED`); more tensors
 * than the adapter binds in one kernel: `WGC_ERROR_LIMIT_EXCEEDED`.
 * Everything is checked before anything is recorded. Empty outputs
 * succeed and launch nothing.
 *
 * Compilation: the first launch of a structure compiles its kernel and
 * blocks while the driver compiles it (milliseconds); later launches of
 * any expression with the same live structure (ops, dtypes, which inputs
 * are read, outputs) and the same layout class (rank after merging
 * contiguous dims, whether every view allows 4-element units) reuse it
 * whatever their sizes, constants and parameters. Other launches do not
 * block: the work is recorded on the stream. Nodes no output depends on
 * are not computed, and inputs no output depends on are checked but not read.
 *
 * # Safety
 * `inputs`, `outputs` and `params` must point to `n_inputs`, `n_outputs`
 * and `n_params` elements (NULL allowed for a count of 0).
 */
WgcStatus wgc_op_expr(const struct WgcStream *stream,
                      const struct WgcExpr *expr,
                      const struct WgcTensor *inputs,
                      uint32_t n_inputs,
                      const struct WgcTensor *outputs,
                      uint32_t n_outputs,
                      const double *params,
                      uint32_t n_params);

/**
 * Reduce the value of an expression over axes, in one operator, without
 * an intermediate tensor: `out = epilogue(reduce_op(expr(inputs), axes))`,
 * e.g. `sum(x * y)`, `mean((x - m)^2)` with `m` a keepdim mean,
 * `max(|x|)`, or `sqrt(mean((x - m)^2) + eps)` with the epilogue
 * `sqrt(v + eps)`.
 *
 * `expr` must have exactly one output (`WGC_ERROR_INVALID_ARGUMENT`
 * otherwise): its node's value, computed elementwise over the broadcast
 * shape of `inputs` (NumPy's rules; shapes that do not broadcast:
 * `WGC_ERROR_SHAPE_MISMATCH`), is what is reduced. `inputs[k]` is the
 * expression's input k, of the declared dtype (`WGC_ERROR_DTYPE_MISMATCH`
 * otherwise); views may be strided, offset, reversed or broadcast.
 * `reduce_op` (a `WgcReduceOp`), `axes`, `axis_count` and `keepdim` are
 * as for `wgc_op_reduce` applied to a tensor of that broadcast shape
 * holding the expression's values (so the axes count in its rank), with
 * the same dtypes (SUM, MAX, MIN and PROD of f32, f16, bf16, i32 and u32
 * values; MEAN of floats only; ARGMAX and ARGMIN of any, writing i32),
 * accumulation (floats in f32, compensated sums), NaN rules (NaN
 * propagates through every op; ARGMAX and ARGMIN give the first NaN's
 * index), empty reductions (SUM 0, PROD 1, MEAN NaN, the others
 * `WGC_ERROR_INVALID_ARGUMENT`), statuses and accuracy. A value of dtype
 * bf16 is reduced as `wgc_op_reduce` reduces bf16 tensors: in f32 into
 * scratch, the result rounded once to bf16 (then the epilogue runs as a
 * second kernel over the scratch; ARGMAX and ARGMIN need no second one).
 *
 * `epilogue` (NULL: none) maps each reduced value before it is written:
 * an expression with exactly one input, the reduced value, and one
 * output, both of the reduced value's dtype (the expression's value's
 * dtype, or I32 for ARGMAX and ARGMIN; `WGC_ERROR_INVALID_ARGUMENT` for
 * other counts, `WGC_ERROR_DTYPE_MISMATCH` for other dtypes). `out` has
 * that dtype and the reduced shape. The reduced value is rounded to its
 * dtype before the epilogue reads it, so the result is that of
 * `wgc_op_reduce` into a tensor followed by `wgc_op_expr`. One expression
 * may serve as both.
 *
 * `params` holds the expression's parameters (`wgc_expr_param`) then the
 * epilogue's: `n_params` must be their total (`WGC_ERROR_INVALID_ARGUMENT`
 * otherwise). Constants and parameters of both count together against
 * `WGC_EXPR_MAX_SCALARS` (`WGC_ERROR_LIMIT_EXCEEDED`); so do more
 * tensors than the adapter binds in one kernel (the inputs read, plus 2).
 *
 * `out` must share no buffer with an input and its elements no memory
 * (`WGC_ERROR_INVALID_ARGUMENT`). Variance and standard deviation are not
 * among the ops; write them as `mean((x - m)^2)`. NULL `stream`, `expr`
 * or `out`, or NULL arrays with nonzero counts: `WGC_ERROR_NULL_POINTER`.
 * f16 needs shader-f16 support, bf16 inputs bf16 support
 * (`WGC_ERROR_UNSUPPORTED`). Everything is checked before anything is
 * recorded; empty outputs succeed and launch nothing.
 *
 * Kernels: the reduction kernels of `wgc_op_reduce` (one launch for rows
 * of contiguous values, else a split pass and a finishing pass), with the
 * expression generated into the step that reads each element and the
 * epilogue into the one that writes the result; the reduction planned as
 * for a dense tensor of the broadcast shape, so the column and run
 * kernels are not used. Compilation: the first launch of a structure
 * compiles its kernels (the prologue's and epilogue's live structure and
 * dtypes, the reduce op, and the layout class: rank after merging
 * contiguous dims, which inputs are dense, whether every input allows
 * 4-element units) and blocks while the driver compiles them; later
 * launches reuse them whatever their sizes, constants and parameters.
 * Other launches record work on `stream` and do not block.
 *
 * # Safety
 * `inputs`, `params` and `axes` must point to `n_inputs`, `n_params` and
 * `axis_count` elements (NULL allowed for a count of 0).
 */
WgcStatus wgc_op_expr_reduce(const struct WgcStream *stream,
                             const struct WgcExpr *expr,
                             uint32_t reduce_op,
                             const int32_t *axes,
                             uint32_t axis_count,
                             uint32_t keepdim,
                             const struct WgcTensor *inputs,
                             uint32_t n_inputs,
                             const double *params,
                             uint32_t n_params,
                             const struct WgcExpr *epilogue,
                             const struct WgcTensor *out);

/**
 * Create an instance and enumerate the adapters of the backends that the
 * environment allows (`WGC_BACKEND` = vulkan, metal, dx12 or gl; unset: all).
 *
 * `abi_version` must be `WGC_ABI_VERSION` from the header the caller was
 * compiled with; otherwise this fails with `WGC_ERROR_ABI_MISMATCH`.
 * On success `*out_instance` holds one reference; release it with
 * `wgc_instance_release`. Returns `WGC_ERROR_INVALID_ARGUMENT` for a bad
 * `WGC_BACKEND` (an unknown name, or a value that is not UTF-8).
 * Enumeration may take a moment; later calls are quick.
 */
WgcStatus wgc_instance_create(uint32_t abi_version, struct WgcInstance **out_instance);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_instance_retain(struct WgcInstance *instance);

/**
 * Drop a reference. NULL is ignored. Devices created from the instance stay valid.
 */
void wgc_instance_release(struct WgcInstance *instance);

/**
 * Number of adapters found (0 if none: then `wgc_device_create` fails with
 * `WGC_ERROR_NOT_FOUND`).
 */
WgcStatus wgc_instance_adapter_count(const struct WgcInstance *instance, uint32_t *out_count);

/**
 * Describe adapter `index` (0-based, in the order used by
 * `WgcDeviceOptions.adapter_index`). Set `info->struct_size` first.
 * Returns `WGC_ERROR_OUT_OF_RANGE` for a bad index.
 */
WgcStatus wgc_instance_adapter_info(const struct WgcInstance *instance,
                                    uint32_t index,
                                    struct WgcAdapterInfo *info);

/**
 * Compile a kernel. The same source and entry point on the same device
 * compile once: later calls return the cached pipeline. Returns
 * `WGC_ERROR_SHADER_COMPILATION` with the compiler's diagnostic (line and
 * column) in `wgc_last_error_message()` (also for a source nesting deeper
 * than `WGC_MAX_KERNEL_NESTING`, and for an `override` without a default:
 * kernels get no pipeline constants, so every `override` takes its default),
 * `WGC_ERROR_NOT_FOUND` for a missing entry point,
 * `WGC_ERROR_LIMIT_EXCEEDED` for a workgroup size or workgroup memory
 * beyond the adapter's limits (both as the overrides make them) or private
 * memory beyond `WGC_MAX_PRIVATE_MEMORY_BYTES`, calls that inline past
 * `WGC_MAX_KERNEL_INLINED_EXPRESSIONS`, or a source past
 * `WGC_MAX_KERNEL_SOURCE_BYTES`, `WGC_MAX_KERNEL_TOKENS`,
 * `WGC_MAX_KERNEL_DECLARATION_TOKENS` or `WGC_MAX_KERNEL_DECLARATIONS`
 * (refused before it is parsed), `WGC_ERROR_UNSUPPORTED` for
 * textures or bind groups other than 0. Blocks while the driver compiles.
 */
WgcStatus wgc_kernel_create(const struct WgcDevice *device,
                            const struct WgcKernelDesc *desc,
                            struct WgcKernel **out_kernel);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_kernel_retain(struct WgcKernel *kernel);

/**
 * Drop a reference. NULL is ignored. When the last reference to a
 * kernel goes, the driver is let free its compiled pipeline (after any
 * recorded work that uses it has run), so creating and releasing kernels
 * in a loop keeps memory bounded.
 */
void wgc_kernel_release(struct WgcKernel *kernel);

/**
 * The entry point's `@workgroup_size` (x, y, z) into `out_size[3]`, with
 * `override` values applied.
 */
WgcStatus wgc_kernel_workgroup_size(const struct WgcKernel *kernel, uint32_t *out_size);

/**
 * Number of bindings the entry point uses (storage and uniform).
 */
WgcStatus wgc_kernel_binding_count(const struct WgcKernel *kernel, uint32_t *out_count);

/**
 * Scaled dot-product attention, as PyTorch's
 * `scaled_dot_product_attention`, without materialising the scores:
 * `out = softmax(scale * q k^T + mask) v` per batch entry and query head.
 *
 * Shapes: q (..., Hq, Sq, D), k and v (..., Hkv, Skv, D) with the same
 * leading (batch) dims, out shaped as q. Grouped-query attention: Hq a
 * multiple of Hkv, query head h reads key/value head h / (Hq / Hkv)
 * (PyTorch's `enable_gqa=True`; Hq == Hkv is ordinary attention).
 * D from 1 to 256. Any strides: heads-first (B, H, S, D) or tokens-first
 * (B, S, H, D) storage is passed as a permuted view.
 *
 * Dtypes: q, k, v and out all f32, f16 or bf16 (bf16 goes through f32
 * copies of q, k and v, except in decode, which reads a bf16 K/V cache as
 * it is and copies only q and out); products and sums in f32, out rounded
 * once.
 *
 * Which keys a query sees: key j (of Skv) takes part for query i (of Sq)
 * unless it is at or past the valid length L (`desc->kv_len`, and the
 * batch entry's `kv_lens` value when given), the causal mask excludes it,
 * it is outside the sliding window, or a boolean mask is false there.
 * Causal masks (`desc->causal`): `WGC_ATTENTION_CAUSAL_BOTTOM_RIGHT` puts
 * query i at position i + L - Sq and lets it see keys j <= that position
 * (FlashAttention, PyTorch's `causal_lower_right`: decode and chunked
 * prefill); `WGC_ATTENTION_CAUSAL_TOP_LEFT` puts it at position i
 * (PyTorch's `is_causal=True`). The two agree when Sq == L.
 *
 * `mask` (NULL for none) broadcasts to (..., Hq, Sq, Skv) (NumPy rules,
 * any strides): of q's dtype it is added to the scaled scores (-inf
 * excludes a key); i32 or u32 it is boolean, nonzero where the key takes
 * part (PyTorch's `True`). `kv_lens` (NULL for none): i32 or u32, shaped
 * as the batch dims, each entry's number of valid keys (clamped to
 * Skv; read on the GPU). `lse` (NULL for none): f32 (..., Hq, Sq), gets
 * each row's natural log-sum-exp of its scaled, masked scores.
 *
 * Rows that no key reaches (all masked, all outside the window or the
 * valid length, or a score of -inf everywhere) give 0 and lse -inf: what
 * PyTorch 2.5 and later return from SDPA (its math backend's
 * `_safe_softmax`, and the fused kernels), not the NaN of a plain softmax.
 * NaN and infinities follow IEEE arithmetic as in PyTorch's math backend:
 * a NaN score (from q, k or the mask) makes its row NaN; a +inf score
 * makes its row NaN (exp(inf - inf)); NaN or inf in v reaches every row
 * that sees that key, also with weight 0 (0 * NaN), except keys that no
 * row of the kernel's block of query rows may see (8 rows, 64 or 128 on
 * tensor cores, 4 in decode), which are never read.
 *
 * Accuracy: within (2e-5 + 1.2e-7 * D * a) * sum_j p_j |v_j| + 1e-6 of a
 * float64 evaluation on the same inputs, p the softmax weights and a the
 * largest scale * sum_d |q_d k_d| over the keys the row sees (the f32
 * rounding of a score moves its weight by as much); for f16 and bf16
 * outputs add the output's rounding (2^-11 or 2^-8 relative), and for f16
 * add 2^-11 * sum_j p_j |v_j| (the tensor-core kernel rounds the weights
 * to f16 before they meet v). lse within 1e-5 * (|lse| + 1) for moderate
 * scores.
 *
 * Work: f16 prefill (Sq above 16, D 64, 80, 96, 128, 160, 192 or 256) on
 * adapters with cooperative matrices (tensor cores) runs FlashAttention-2
 * on them: workgroups of 128 query rows of one key/value head (64 where Sq
 * is not a multiple of 16, q's rows are not 16-byte words or D is above
 * 128), tiles of 32 or 64 keys, causal tiles above the diagonal skipped. f16 decode (Sq up to 16,
 * D a multiple of 8 up to 128) runs flash-decoding: the KV cache is cut
 * into chunks over enough workgroups to fill the GPU, each reading its
 * chunk once for all the query heads of a group. Both read K and V rows
 * as 16-byte words, so they take views whose head dim is dense and whose
 * other strides and offset are multiples of 8 elements. Everything else
 * (f32, bf16, other views) takes a portable kernel: keys in tiles of 64 by
 * workgroups of 8 query rows of one key/value head, long key ranges cut
 * into chunks whose partial results a second pass merges. bf16 prefill
 * runs in f32 on widened copies of q, k and v: the tensor-core fragments
 * WGSL offers are f16 (and f32 accumulators), and bf16 values do not all
 * fit f16 (its range ends at 65504 and its normal numbers at 6.1e-5), so
 * no conversion to them is exact.
 *
 * Statuses: `WGC_ERROR_SHAPE_MISMATCH` (shapes, heads not a multiple,
 * mask not broadcastable), `WGC_ERROR_DTYPE_MISMATCH`,
 * `WGC_ERROR_INVALID_ARGUMENT` (rank below 3, D outside 1..256, scale not
 * finite, unknown causal value, `desc->struct_size` below 4, out or lse
 * sharing a buffer with an input or each other, or overlapping itself),
 * `WGC_ERROR_UNSUPPORTED` (integer q, f16 without adapter support),
 * `WGC_ERROR_TOO_LARGE` (more workgroups than a grid dim holds, or the
 * key chunks' partial results, about B * Hq * Sq * chunks * (D + 2) * 4
 * bytes, past one storage binding: split the batch),
 * `WGC_ERROR_OUT_OF_RANGE` (views), `WGC_ERROR_NULL_POINTER` (stream, q,
 * k, v, desc or out NULL), `WGC_ERROR_DEVICE_MISMATCH`. Checked before
 * anything is recorded. Records work on `stream`; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_attention(const struct WgcStream *stream,
                           const struct WgcTensor *q,
                           const struct WgcTensor *k,
                           const struct WgcTensor *v,
                           const struct WgcTensor *mask,
                           const struct WgcTensor *kv_lens,
                           const struct WgcAttentionDesc *desc,
                           const struct WgcTensor *out,
                           const struct WgcTensor *lse);

/**
 * Layer norm over the last `normalized_dims` dims of `in`:
 * `out = (x - mean) / sqrt(var + eps) * weight + bias`, with the biased
 * variance (divide by n), as torch.nn.functional.layer_norm.
 * `weight` and `bias` (each may be NULL: 1 and 0) have exactly the shape of
 * those dims and `in`'s dtype. `out` has `in`'s shape and dtype and its own
 * buffer (sharing a buffer with any input, or elements that share memory:
 * a zero stride or strides that interleave: WGC_ERROR_INVALID_ARGUMENT).
 * f32 and f16 (statistics in f32); others: WGC_ERROR_UNSUPPORTED.
 * `normalized_dims` in [1, rank]; `eps` finite and >= 0.
 * Statistics are two-pass, in f32: the mean, then the sum of squared
 * deviations from it. A NaN in a row makes that row NaN.
 * Rows of up to 256 elements whose normalised dims merge into one strided
 * dim are read once, many rows per workgroup; their mean gets one
 * correction step (the mean deviation from it), so a row of equal values
 * normalises to exactly 0 (`out` = `bias`).
 * Contiguous rows of up to 16384 elements are read once. Rows longer than
 * 262,144 elements (strided) or 1,048,576 (contiguous) are cut into chunks
 * of one workgroup each, whose means and squared deviations are combined
 * exactly (Chan et al.) before a second pass writes; any length works, on
 * software drivers that cap shader loops too. Accuracy: ~1e-5 relative
 * (f32); f16: rounding of the result.
 * Statuses: WGC_ERROR_INVALID_ARGUMENT, WGC_ERROR_SHAPE_MISMATCH,
 * WGC_ERROR_DTYPE_MISMATCH, WGC_ERROR_UNSUPPORTED, WGC_ERROR_OUT_OF_RANGE,
 * WGC_ERROR_NULL_POINTER, WGC_ERROR_DEVICE_MISMATCH; nothing is recorded on
 * failure. Records work on `stream`; does not block.
 */
WgcStatus wgc_op_layer_norm(const struct WgcStream *stream,
                            const struct WgcTensor *input,
                            const struct WgcTensor *weight,
                            const struct WgcTensor *bias,
                            uint32_t normalized_dims,
                            float eps,
                            const struct WgcTensor *out);

/**
 * RMS norm over the last `normalized_dims` dims of `in`:
 * `out = x / sqrt(mean(x^2) + eps) * weight` (`weight` may be NULL: 1).
 * Arguments, dtypes, accuracy and statuses as for `wgc_op_layer_norm`.
 * Records work; does not block.
 */
WgcStatus wgc_op_rms_norm(const struct WgcStream *stream,
                          const struct WgcTensor *input,
                          const struct WgcTensor *weight,
                          uint32_t normalized_dims,
                          float eps,
                          const struct WgcTensor *out);

/**
 * Batch norm, inference form, for `in` of shape (N, C, ...):
 * `out = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]`
 * with c the index along dim 1. `running_mean` and `running_var` are
 * required, `weight` and `bias` may be NULL (1 and 0); all have shape (C)
 * and `in`'s dtype. `out` as for `wgc_op_layer_norm`. f32 and f16.
 * Accuracy: ~1e-6 relative (f32). NaN inputs give NaN; infinite inputs
 * give infinities (NaN where the channel's weight is 0).
 *
 * Layouts: `in` and `out` both NCHW-like (each (n, c) plane of the
 * trailing dims contiguous, any N and C strides) or both channels-last
 * (C at unit stride, N and the trailing dims one evenly strided run of
 * rows, as PyTorch's `channels_last`) run a kernel that reads each
 * element once with no index arithmetic per element, 4 elements a load
 * where the plane (or C), the strides and the offsets are multiples of 4;
 * other views run a general kernel. Every route computes
 * `(x - mean) * (1 / sqrt(var + eps)) * weight + bias` in f32 in that
 * order, so results do not depend on the route.
 *
 * Statuses as for `wgc_op_layer_norm` (rank below 2:
 * WGC_ERROR_INVALID_ARGUMENT). Records work; does not block.
 */
WgcStatus wgc_op_batch_norm(const struct WgcStream *stream,
                            const struct WgcTensor *input,
                            const struct WgcTensor *running_mean,
                            const struct WgcTensor *running_var,
                            const struct WgcTensor *weight,
                            const struct WgcTensor *bias,
                            float eps,
                            const struct WgcTensor *out);

/**
 * `sum_out = in + residual` and `out = rms_norm(sum_out)` over the last
 * `normalized_dims` dims, both written: the residual connection and the
 * norm of a transformer layer. `residual` and `sum_out` have `in`'s shape
 * and dtype (`WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`); the
 * add is rounded to the dtype first (as `wgc_op_binary`), then normalised
 * as `wgc_op_rms_norm` normalises. `out` and `sum_out` each need a buffer
 * of their own (sharing one with any input or with each other:
 * `WGC_ERROR_INVALID_ARGUMENT`). Other arguments, dtypes (f32, f16),
 * accuracy and statuses as for `wgc_op_rms_norm`.
 *
 * Where every view is dense row-major with 4-aligned offsets, rows of at
 * most 16384 elements and a multiple of 4 long (a contiguous weight),
 * one kernel reads `in` and `residual` once and writes both outputs once;
 * other layouts record the add and then the norm (two launches, the same
 * results). Records work on `stream`; does not block.
 */
WgcStatus wgc_op_rms_norm_residual(const struct WgcStream *stream,
                                   const struct WgcTensor *input,
                                   const struct WgcTensor *residual,
                                   const struct WgcTensor *weight,
                                   uint32_t normalized_dims,
                                   float eps,
                                   const struct WgcTensor *out,
                                   const struct WgcTensor *sum_out);

/**
 * `sum_out = in + residual` and `out = layer_norm(sum_out)`, as
 * `wgc_op_rms_norm_residual` with the layer norm (`weight` and `bias` as
 * `wgc_op_layer_norm` takes them).
 */
WgcStatus wgc_op_layer_norm_residual(const struct WgcStream *stream,
                                     const struct WgcTensor *input,
                                     const struct WgcTensor *residual,
                                     const struct WgcTensor *weight,
                                     const struct WgcTensor *bias,
                                     uint32_t normalized_dims,
                                     float eps,
                                     const struct WgcTensor *out,
                                     const struct WgcTensor *sum_out);

/**
 * Reduce `in` over `axes` into `out`.
 *
 * `axes` holds `axis_count` Python-style axes (negative counts from the
 * end); `axis_count` 0 (with `axes` NULL allowed) reduces over all axes.
 * `out` has the input's shape with the reduced dims removed (`keepdim` 0;
 * a full reduction gives rank 0) or set to 1 (`keepdim` 1), exactly. A
 * rank-0 input takes no axes. `out` may share `in`'s buffer but not
 * overlap its view, and its elements must not share memory (a zero stride
 * or strides that interleave: WGC_ERROR_INVALID_ARGUMENT).
 *
 * Dtypes: SUM, MAX, MIN, PROD take f32, f16, bf16 (both accumulated in
 * f32), i32 and u32 (integer sums and products wrap), and write the
 * input's dtype. MEAN takes f32, f16 and bf16 only (integers:
 * WGC_ERROR_UNSUPPORTED). bf16 inputs are read as bf16 by the row and
 * general kernels (not the column and run kernels named below, which
 * f32 and f16 take), and a bf16 result is computed into f32 scratch and
 * rounded once into out. ARGMAX and
 * ARGMIN take every dtype, reduce one axis (`axis_count` 1) or the
 * flattened tensor (`axis_count` 0: row-major flat index), write i32, and
 * return the first index among equal values. NaN propagates: MAX, MIN,
 * SUM, MEAN and PROD of a set holding NaN are NaN, and ARGMAX and ARGMIN
 * return the index of its first NaN (as PyTorch).
 *
 * Empty reduced sets: SUM gives 0, PROD 1, MEAN NaN; MAX, MIN, ARGMAX and
 * ARGMIN fail with WGC_ERROR_INVALID_ARGUMENT.
 *
 * Accuracy (f32): float sums are compensated (each partial sum carries its
 * rounding error, and partials merge error-free), so SUM is within
 * 2e-6 * sum|x| of exact at any length and MEAN within 2e-6 * mean|x|;
 * +inf and -inf together give NaN, overflow gives +-inf. PROD: 1e-6 * n
 * relative. f16 and bf16 inputs are accumulated in f32; the result
 * carries the f16 (bf16: 2^-8 relative) rounding.
 *
 * Statuses: WGC_ERROR_INVALID_ARGUMENT (unknown op, duplicate or out-of-range
 * axis, several axes for ARG*, empty MAX/MIN/ARG*, out overlapping in),
 * WGC_ERROR_SHAPE_MISMATCH (out shape), WGC_ERROR_DTYPE_MISMATCH (out
 * dtype), WGC_ERROR_UNSUPPORTED, WGC_ERROR_OUT_OF_RANGE (view outside its
 * buffer), WGC_ERROR_NULL_POINTER, WGC_ERROR_DEVICE_MISMATCH. On failure
 * nothing is recorded. Records work on `stream`; does not block.
 *
 * Kernels use subgroup operations where the adapter has them; a device
 * created with the environment variable WGC_DISABLE_SUBGROUPS=1 (for
 * testing) takes the workgroup-memory-only kernels for this family
 * (reductions, variance, softmax, layer and RMS norm).
 *
 * Reductions whose innermost kept dim is contiguous in `in` (e.g. over
 * the leading axes) take a column kernel: one invocation per output (or
 * four, with vector loads where the view is 4-aligned), the reduced range
 * split into chunks whose partials a second pass merges, with the same
 * accuracy and NaN rules; it uses no subgroup operations.
 *
 * Reductions over the last axis of contiguous rows, when one launch fills
 * the GPU (rows of up to 4096 elements, or more than 2048 rows), take one
 * launch with several invocations per row and several rows per workgroup,
 * vector loads at any row alignment; variance and standard deviation read
 * each row twice in that launch (the mean, then the deviations), with the
 * same accuracy and NaN rules.
 * Reductions over several axes whose innermost reduced dim is contiguous
 * in `in` while another reduced dim lies outside a kept one (e.g. axes 0,
 * 2, 3 of NCHW, or 0 and 2 of a 3-D tensor; not ARGMAX / ARGMIN) take a
 * run kernel: a team of invocations per output reads its contiguous runs
 * side by side (vector loads where the view is 4-aligned), outputs with
 * few teams split their runs into chunks merged by a second pass; same
 * accuracy and NaN rules, no subgroup operations.
 */
WgcStatus wgc_op_reduce(const struct WgcStream *stream,
                        uint32_t op,
                        const struct WgcTensor *input,
                        const int32_t *axes,
                        uint32_t axis_count,
                        uint32_t keepdim,
                        const struct WgcTensor *out);

/**
 * Variance of `in` over `axes` into `out` (axes, `keepdim` and the out
 * shape as for `wgc_op_reduce`). `unbiased` 1 divides by n - 1 (Bessel),
 * 0 by n; a divisor <= 0 gives NaN, and so does a NaN or infinite
 * element. Two passes over the input: the mean m, then compensated sums
 * S1 of (x - m) and S2 of (x - m)^2, giving (S2 - S1^2 / n) / divisor, in
 * f32; exact whatever m's rounding, so a mean far above the spread costs
 * no accuracy (within 1e-5 relative in f32, measured at mean 1e4 and 1e6
 * with std 1). f32, f16 and bf16 only (others: WGC_ERROR_UNSUPPORTED); out has
 * the input's dtype.
 * Statuses as for `wgc_op_reduce`. Records work; does not block.
 */
WgcStatus wgc_op_var(const struct WgcStream *stream,
                     const struct WgcTensor *input,
                     const int32_t *axes,
                     uint32_t axis_count,
                     uint32_t keepdim,
                     uint32_t unbiased,
                     const struct WgcTensor *out);

/**
 * Standard deviation: the square root of `wgc_op_var`, same arguments,
 * dtypes and statuses. Records work; does not block.
 */
WgcStatus wgc_op_std(const struct WgcStream *stream,
                     const struct WgcTensor *input,
                     const int32_t *axes,
                     uint32_t axis_count,
                     uint32_t keepdim,
                     uint32_t unbiased,
                     const struct WgcTensor *out);

/**
 * Softmax of `in` along `axis` (Python-style) into `out` (same shape and
 * dtype, in a buffer of its own: sharing `in`'s buffer is
 * WGC_ERROR_INVALID_ARGUMENT, so it is never computed in place).
 * Numerically stable: the row maximum is subtracted before exponentiating.
 * A NaN anywhere in a row makes that whole row NaN, as in PyTorch (so does
 * +inf, through inf - inf; a row of only -inf gives NaN).
 * f32 and f16 (computed in f32); other dtypes: WGC_ERROR_UNSUPPORTED.
 * Rows of up to 256 elements, along any axis, are read once, many rows
 * per workgroup. Longer rows contiguous along `axis` are read once when
 * they fit in registers (up to 16384 elements), else twice; other axes
 * use a strided path. Rows
 * longer than 262,144 elements (strided) or 1,048,576 (contiguous) are cut
 * into chunks of one workgroup each and take a second pass, so any length
 * works, on software drivers that cap shader loops too. So are rows of
 * 32,768 elements or more when there are at most 512 of them, to spread
 * them over enough workgroups.
 * Accuracy: relative error within 1e-5 (f32); f16: rounding of the result.
 * Statuses: WGC_ERROR_INVALID_ARGUMENT (axis, shared buffer, elements of
 * `out` that share memory),
 * WGC_ERROR_SHAPE_MISMATCH, WGC_ERROR_DTYPE_MISMATCH, WGC_ERROR_UNSUPPORTED,
 * WGC_ERROR_OUT_OF_RANGE, WGC_ERROR_NULL_POINTER, WGC_ERROR_DEVICE_MISMATCH.
 * Records work; does not block.
 */
WgcStatus wgc_op_softmax(const struct WgcStream *stream,
                         const struct WgcTensor *input,
                         int32_t axis,
                         const struct WgcTensor *out);

/**
 * Log-softmax: `(x - max) - log(sum(exp(x - max)))` along `axis`, in that
 * order, so large logits keep their precision: within 2e-6 + 1e-6 * |result|
 * (f32) for logits around 1e4 as around 0. NaN, arguments, dtypes, long rows
 * and statuses as for `wgc_op_softmax`. Records work; does not block.
 */
WgcStatus wgc_op_log_softmax(const struct WgcStream *stream,
                             const struct WgcTensor *input,
                             int32_t axis,
                             const struct WgcTensor *out);

/**
 * Rotary position embedding along the last dim of `in` (rank >= 2):
 * for every row, with p = `position_offset` + the row's coordinate along
 * `seq_axis` and r = the rotated dims, pair i in [0, r/2), made of
 * elements (a, b) = (2i, 2i+1) for `WGC_ROPE_LAYOUT_INTERLEAVED` or
 * (i, i + r/2) for `WGC_ROPE_LAYOUT_HALF_SPLIT`, becomes
 * `out[a] = x[a] cos(p theta_i) - x[b] sin(p theta_i)`,
 * `out[b] = x[a] sin(p theta_i) + x[b] cos(p theta_i)`, with
 * `theta_i = base^(-2i/r)`; elements r and after are copied. A NaN in a
 * pair gives NaN in both of its outputs; infinities follow IEEE
 * arithmetic (as in PyTorch).
 * f32 or f16 (computed in f32); out has in's shape and dtype. out may be
 * the very same view as in (in place); any other sharing of a buffer
 * between them, or out elements that share memory, is
 * `WGC_ERROR_INVALID_ARGUMENT`. Views of any layout.
 *
 * Accuracy: angles are reduced exactly (theta_i / 2 pi is held as a 64-bit
 * fraction, so p theta_i mod 2 pi is exact for every position below
 * 2^32); the result is within about 2e-6 * (|x[a]| + |x[b]|) of a float64
 * evaluation of the formula for f32, and within f16 rounding for f16.
 * (Implementations that round p * theta_i to f32 first, as Hugging Face
 * does, differ from this by up to p * 6e-8 radians.)
 *
 * Statuses: `WGC_ERROR_INVALID_ARGUMENT` (rank below 2, odd or too many
 * rotated dims, base not finite and positive, unknown layout, aliasing,
 * `desc->struct_size` below 4), `WGC_ERROR_OUT_OF_RANGE` (seq_axis,
 * positions past 2^32, views), `WGC_ERROR_SHAPE_MISMATCH`,
 * `WGC_ERROR_DTYPE_MISMATCH`, `WGC_ERROR_UNSUPPORTED` (integer dtypes, f16
 * without adapter support), `WGC_ERROR_NULL_POINTER`,
 * `WGC_ERROR_DEVICE_MISMATCH`. Checked before anything is recorded.
 * Records work on `stream`; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_rope(const struct WgcStream *stream,
                      const struct WgcTensor *input,
                      const struct WgcRopeDesc *desc,
                      const struct WgcTensor *out);

/**
 * Inclusive prefix sum along `axis` (torch.cumsum with out's dtype equal
 * to in's): `out[.., j, ..] = sum(in[.., 0..=j, ..])`. f32, f16, i32, u32;
 * out has in's shape and dtype. f32 and f16 accumulate in f32; i32 and u32
 * in their own type, wrapping modulo 2^32 (torch would widen to int64).
 * NaN and infinities propagate as in IEEE addition. `axis` in
 * [-rank, rank) (a rank-0 tensor is copied); else `WGC_ERROR_OUT_OF_RANGE`.
 *
 * Any layout and any length: rows along a contiguous axis are scanned by
 * workgroups in tiles of 1024 elements; rows along a strided axis by one
 * invocation per row and chunk; long rows take three passes (chunk sums,
 * their scan, the final scan) with a temporary of 4 bytes per chunk. No
 * invocation runs more than about 60,000 loop iterations, so software
 * drivers that cut long loops short give exact results too.
 *
 * Accuracy (floats): summation order is blocked, not sequential; the
 * error is within about 1e-6 * (number of terms)^0.5 * sum(|in|) of the
 * exact prefix for f32, plus f16 rounding of the result for f16.
 * out must have its own buffer (sharing one with in, or elements that
 * share memory: `WGC_ERROR_INVALID_ARGUMENT`). Statuses also
 * `WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`,
 * `WGC_ERROR_UNSUPPORTED` (f16 without adapter support),
 * `WGC_ERROR_TOO_LARGE` (a temporary the adapter cannot bind),
 * `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_DEVICE_MISMATCH`. Checked before
 * anything is recorded. Records work on `stream`; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_cumsum(const struct WgcStream *stream,
                        const struct WgcTensor *input,
                        int32_t axis,
                        const struct WgcTensor *out);

/**
 * The `k` largest (`largest` = 1) or smallest (`largest` = 0) entries of
 * every row of `in` along its last dim, as torch.topk(sorted=True):
 * `values` gets them best first (descending for largest, ascending for
 * smallest) and `indices` their positions along the last dim. Ties go to
 * the lower index. NaN counts as larger than every number, +inf included
 * (first when largest, last when smallest); -0.0 and +0.0 are equal.
 * Values are copied bit for bit from `in`.
 *
 * `in`: f32, f16, i32 or u32, rank >= 1 (else
 * `WGC_ERROR_INVALID_ARGUMENT`). `values`: in's dtype
 * (`WGC_ERROR_DTYPE_MISMATCH`); `indices`: i32 or u32
 * (`WGC_ERROR_UNSUPPORTED`); both of in's shape with the last dim k
 * (`WGC_ERROR_SHAPE_MISMATCH`). k <= the last dim
 * (`WGC_ERROR_OUT_OF_RANGE`) and k <= 1024 (`WGC_ERROR_UNSUPPORTED`);
 * `largest` 0 or 1 (`WGC_ERROR_INVALID_ARGUMENT`). k = 0 or no rows:
 * nothing is launched. Views of any layout; values and indices must have
 * their own buffers, apart from in and from each other, and no elements
 * that share memory (`WGC_ERROR_INVALID_ARGUMENT`).
 *
 * Rows of up to 2048 entries take one launch; longer rows (any length)
 * take a few, with temporaries of 8 * k bytes per 2048 entries.
 * Statuses also `WGC_ERROR_TOO_LARGE` (temporaries the adapter cannot
 * bind), `WGC_ERROR_OUT_OF_RANGE` (views), `WGC_ERROR_NULL_POINTER`,
 * `WGC_ERROR_DEVICE_MISMATCH`. Exact. Checked before anything is recorded.
 * Records work on `stream`; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_topk(const struct WgcStream *stream,
                      const struct WgcTensor *input,
                      uint32_t k,
                      uint32_t largest,
                      const struct WgcTensor *values,
                      const struct WgcTensor *indices);

/**
 * Join `count` tensors along `axis` into `out` (torch.cat): `inputs` is an
 * array of `count` views (count >= 1) with out's rank and dtype (any of
 * f32, f16, i32, u32) and out's shape except along `axis`, where their
 * lengths sum to out's. Inputs may be empty along `axis` (they add
 * nothing) and may be any views; out must not share a buffer with any of
 * them, nor have elements that share memory (`WGC_ERROR_INVALID_ARGUMENT`).
 * `axis` in [-rank, rank) (else `WGC_ERROR_OUT_OF_RANGE`). One copy per
 * non-empty input is recorded (four elements at a time where the layouts
 * allow); everything is checked first, so a failed call records nothing.
 *
 * Splitting and slicing need no copy: use `wgc_tensor_slice` to make a
 * view of a part of a tensor, and `wgc_op_copy` if it must be contiguous.
 * Statuses: `WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`,
 * `WGC_ERROR_INVALID_ARGUMENT` (count 0, rank 0, aliasing),
 * `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_UNSUPPORTED` (f16 without adapter
 * support), `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_DEVICE_MISMATCH`. Exact.
 * Records work on `stream`; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_concat(const struct WgcStream *stream,
                        const struct WgcTensor *inputs,
                        uint32_t count,
                        int32_t axis,
                        const struct WgcTensor *out);

/**
 * Make `*out_view` the part of `*view` with entries start, start + step,
 * ... (below stop) along `axis`: the same buffer and dtype, no copy, no
 * GPU work. Negative `start` and `stop` count from the end (as in Python,
 * but without clamping): after that 0 <= start <= stop <= shape[axis] must
 * hold (else `WGC_ERROR_OUT_OF_RANGE`), and `step` >= 1
 * (`WGC_ERROR_INVALID_ARGUMENT`). `axis` in [-rank, rank). Split a tensor
 * by slicing it once per part. `out_view` may be `view`. Statuses also
 * `WGC_ERROR_NULL_POINTER` and `WGC_ERROR_INVALID_ARGUMENT` (rank above
 * `WGC_MAX_RANK`, negative dims). Does not check the buffer (operators
 * do); does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_tensor_slice(const struct WgcTensor *view,
                           int32_t axis,
                           int64_t start,
                           int64_t stop,
                           int64_t step,
                           struct WgcTensor *out_view);

/**
 * out = a OP b with broadcasting; `op` is a `WgcBinaryOp` value. a and b have the same dtype (f32, f16,
 * bf16, i32, u32; `WGC_ERROR_DTYPE_MISMATCH` otherwise); out has that dtype, or
 * U32 (0/1) for comparisons. Integer arithmetic wraps. POW on integers:
 * `WGC_ERROR_UNSUPPORTED`. Unknown op: `WGC_ERROR_INVALID_ARGUMENT`.
 *
 * Rules common to every `wgc_op_*` function (elementwise, movement,
 * random): tensors are views on buffers of the stream's device
 * (`WGC_ERROR_DEVICE_MISMATCH`); inputs broadcast with NumPy rules and out's
 * shape must be the broadcast shape (`WGC_ERROR_SHAPE_MISMATCH`). out may
 * be the very same view as an input (in place); out overlapping an input
 * without being the same view (judged by byte range), or out having
 * elements that share memory (a 0 stride), is `WGC_ERROR_INVALID_ARGUMENT`.
 * NULL pointers: `WGC_ERROR_NULL_POINTER`; a view reaching outside its
 * buffer: `WGC_ERROR_OUT_OF_RANGE`; an unsupported dtype, or f16 on an
 * adapter without it: `WGC_ERROR_UNSUPPORTED`. Everything is checked before
 * anything is recorded, so a failed call writes nothing. Empty tensors
 * succeed and launch nothing. Nothing blocks: the work is recorded on the
 * stream. f16 tolerances: about 2 half ulps (2e-3 relative).
 *
 * bf16 (every elementwise operator that takes f16, and cast, copy, fill,
 * arange): computed in f32 and rounded once (header's Numerics section);
 * tolerances those of f32 plus 2^-8 relative. bf16 operands and a bf16
 * output whose views have vec4 units (dense, or dense rows with 4-aligned
 * sizes and offsets) run in kernels that read and write bf16 words
 * directly; other layouts, mixed dtypes and tails of fewer than 4
 * elements are computed through f32 scratch on the GPU (bf16 inputs
 * widened, the f32 kernel, the result rounded into out), which costs about
 * three times the memory traffic. WGC_ERROR_TOO_LARGE or
 * WGC_ERROR_OUT_OF_MEMORY where that scratch does not fit.
 */
WgcStatus wgc_op_binary(const struct WgcStream *stream,
                        uint32_t op,
                        const struct WgcTensor *a,
                        const struct WgcTensor *b,
                        const struct WgcTensor *out);

/**
 * out = a OP scalar, as `wgc_op_binary` with b a scalar converted to a's
 * dtype (floats: rounded once to nearest even, f16 directly from the
 * double, +-inf beyond the range; integers: truncated toward zero and
 * saturated to the type's range, NaN -> 0).
 */
WgcStatus wgc_op_binary_scalar(const struct WgcStream *stream,
                               uint32_t op,
                               const struct WgcTensor *a,
                               double scalar,
                               const struct WgcTensor *out);

/**
 * out = OP(in); in and out have the same dtype and shape (see `WgcUnaryOp`
 * for dtypes and accuracy).
 */
WgcStatus wgc_op_unary(const struct WgcStream *stream,
                       uint32_t op,
                       const struct WgcTensor *input,
                       const struct WgcTensor *out);

/**
 * out = in >= 0 ? in : in * slope. f32, f16 and bf16 (computed in f32 with the
 * f32 slope, then rounded once); NaN stays NaN.
 */
WgcStatus wgc_op_leaky_relu(const struct WgcStream *stream,
                            const struct WgcTensor *input,
                            float slope,
                            const struct WgcTensor *out);

/**
 * out = min(max(in, lo), hi) for every dtype; lo and hi are converted to
 * the dtype as in `wgc_op_binary_scalar`. lo > hi gives hi. A NaN element
 * stays NaN. NaN bounds: `WGC_ERROR_INVALID_ARGUMENT`.
 */
WgcStatus wgc_op_clamp(const struct WgcStream *stream,
                       const struct WgcTensor *input,
                       double lo,
                       double hi,
                       const struct WgcTensor *out);

/**
 * out = a * b + c, all four broadcast, one dtype. Floats use a fused
 * multiply-add (one rounding where the adapter fuses); integers wrap.
 */
WgcStatus wgc_op_fma(const struct WgcStream *stream,
                     const struct WgcTensor *a,
                     const struct WgcTensor *b,
                     const struct WgcTensor *c,
                     const struct WgcTensor *out);

/**
 * out = mask != 0 ? a : b, all four broadcast. mask is U32; a, b and out
 * share one dtype (any).
 */
WgcStatus wgc_op_where(const struct WgcStream *stream,
                       const struct WgcTensor *mask,
                       const struct WgcTensor *a,
                       const struct WgcTensor *b,
                       const struct WgcTensor *out);

/**
 * Fill out (f32 or f16, any view) with uniform numbers in [lo, hi) from
 * Philox4x32-10: logical element i (row-major) is 32-bit word i % 4 of
 * the block for counter `offset + i / 4` (a 128-bit counter with the upper
 * 64 bits 0) under key `seed`; the word w becomes u = (w >> 8) * 2^-24 and
 * then lo + (hi - lo) * u in f32 (which can round up to hi). The integer
 * stream and u are bit-identical on every adapter. To continue a sequence,
 * advance `offset` by ceil(n / 4). lo == hi fills with lo. As PyTorch's
 * uniform_, lo > hi, a bound outside the dtype's finite range, or hi - lo
 * beyond it (3.4e38 for f32, 65504 for f16) is
 * `WGC_ERROR_INVALID_ARGUMENT`, and so are non-finite lo/hi; integer
 * dtypes: `WGC_ERROR_UNSUPPORTED`.
 */
WgcStatus wgc_op_random_uniform(const struct WgcStream *stream,
                                const struct WgcTensor *out,
                                uint64_t seed,
                                uint64_t offset,
                                double lo,
                                double hi);

/**
 * Fill out (f32 or f16, any view) with normal numbers: the Philox block of
 * counter `offset + i / 4` (as in `wgc_op_random_uniform`) gives words
 * w0..w3; u1 = ((w0 >> 8) + 1) 2^-24, u2 = (w1 >> 8) 2^-24, and elements
 * 4k, 4k+1 are mean + std * sqrt(-2 ln u1) * (cos, sin)(2 pi u2); elements
 * 4k+2, 4k+3 likewise from w2, w3. The integers are identical everywhere;
 * the floats depend on the adapter's log/sin/cos (about 1e-6 relative).
 * std < 0 or non-finite parameters: `WGC_ERROR_INVALID_ARGUMENT`.
 */
WgcStatus wgc_op_random_normal(const struct WgcStream *stream,
                               const struct WgcTensor *out,
                               uint64_t seed,
                               uint64_t offset,
                               double mean,
                               double std);

/**
 * Select entries along one axis by index (torch.index_select):
 * `out[.., j, ..] = in[.., index[j], ..]`, where `j` is out's coordinate
 * along `axis`. `index` is a 1-D i32 or u32 tensor (any stride); out has
 * in's shape with dim `axis` replaced by index's length, and in's dtype
 * (f32, f16, i32 or u32). `axis` in [-rank, rank) (negative counts from
 * the end; else `WGC_ERROR_OUT_OF_RANGE`).
 *
 * Out-of-range indices: the indices live on the GPU, so they are not
 * checked when the call is recorded. An index outside [0, in.shape[axis])
 * (negative, or past the end) gives 0 in out (+0.0 for floats), and
 * nothing outside `in` is read. When the check is possible before
 * recording, it is made: a non-empty out with `in.shape[axis] == 0`
 * (every index out of range) fails with `WGC_ERROR_OUT_OF_RANGE`.
 *
 * Views of any layout (strided, offset, negative strides; `in` and `index`
 * may broadcast with 0 strides). out must have its own buffer (sharing one
 * with `in` or `index`: `WGC_ERROR_INVALID_ARGUMENT`), and no two of its
 * elements may share memory (`WGC_ERROR_INVALID_ARGUMENT`).
 * Statuses: `WGC_ERROR_SHAPE_MISMATCH` (out's shape),
 * `WGC_ERROR_DTYPE_MISMATCH` (out's dtype), `WGC_ERROR_UNSUPPORTED`
 * (index not i32/u32, f16 without adapter support),
 * `WGC_ERROR_INVALID_ARGUMENT` (index not 1-D, rank-0 in, aliasing),
 * `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_NULL_POINTER`,
 * `WGC_ERROR_DEVICE_MISMATCH`. Exact (a copy). Empty out: nothing is
 * launched. Everything is checked before anything is recorded. Records
 * work on `stream`; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_index_select(const struct WgcStream *stream,
                              const struct WgcTensor *input,
                              int32_t axis,
                              const struct WgcTensor *index,
                              const struct WgcTensor *out);

/**
 * Gather along one axis (torch.gather): `out[i_0, .., i_{r-1}] =
 * in[i_0, .., index[i_0, .., i_{r-1}], .., i_{r-1}]`, the index replacing
 * coordinate `axis`. `index` (i32 or u32) has in's rank and, along every
 * dim but `axis`, no more entries than in (`WGC_ERROR_SHAPE_MISMATCH`);
 * out has index's shape and in's dtype. Out-of-range indices give 0, and
 * the other rules, dtypes and statuses are those of
 * `wgc_op_index_select`. Records work; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_gather(const struct WgcStream *stream,
                        const struct WgcTensor *input,
                        int32_t axis,
                        const struct WgcTensor *index,
                        const struct WgcTensor *out);

/**
 * Embedding lookup: rows of `table` (shape [V, ...], usually [V, D]) by
 * index. `index` (i32 or u32) has any shape S (rank 0 for one row); out has
 * shape S ++ table.shape[1..] and table's dtype (f32 or f16 typically; i32
 * and u32 work too), with `out[s.., ..] = table[index[s..], ..]`. An index
 * outside [0, V) gives a row of zeros (there is no padding index).
 * Contiguous rows whose length is a multiple of 4 are copied four elements
 * at a time. Other rules and statuses as for `wgc_op_index_select`
 * (rank-0 table: `WGC_ERROR_INVALID_ARGUMENT`; V == 0 with a non-empty
 * out: `WGC_ERROR_OUT_OF_RANGE`). Records work; does not block.
 *
 * # Safety
 * Every pointer is NULL or valid for its type; tensors' buffers are NULL or
 * live handles.
 */
WgcStatus wgc_op_embedding(const struct WgcStream *stream,
                           const struct WgcTensor *table,
                           const struct WgcTensor *index,
                           const struct WgcTensor *out);

/**
 * Copy any view into any view of the same shape and dtype (for example to
 * make a strided view contiguous). `WGC_ERROR_SHAPE_MISMATCH`,
 * `WGC_ERROR_DTYPE_MISMATCH` (use `wgc_op_cast` to convert).
 */
WgcStatus wgc_op_copy(const struct WgcStream *stream,
                      const struct WgcTensor *input,
                      const struct WgcTensor *out);

/**
 * out[i_0, ..., i_{r-1}] = in[...] with out's dim k being in's dim
 * perm[k], materialised. `rank` must equal in's rank and perm must be a
 * permutation of 0..rank-1 (`WGC_ERROR_INVALID_ARGUMENT`); out's shape
 * must be the permuted shape (`WGC_ERROR_SHAPE_MISMATCH`).
 */
WgcStatus wgc_op_permute(const struct WgcStream *stream,
                         const struct WgcTensor *input,
                         const uint32_t *perm,
                         uint32_t rank,
                         const struct WgcTensor *out);

/**
 * out = in with dims dim0 and dim1 swapped, materialised. Negative dims
 * count from the end; out of range: `WGC_ERROR_OUT_OF_RANGE`.
 */
WgcStatus wgc_op_transpose(const struct WgcStream *stream,
                           const struct WgcTensor *input,
                           int32_t dim0,
                           int32_t dim1,
                           const struct WgcTensor *out);

/**
 * Convert in's elements to out's dtype (any of f32, f16, bf16, i32, u32; same
 * shape). Float -> integer truncates toward zero and saturates at the
 * integer range as f32 sees it (NaN -> 0; above the range gives the
 * largest f32 below 2^31, 2147483520, for i32 and the largest below 2^32,
 * 4294967040, for u32; below gives INT32_MIN or 0). i32 <-> u32 reinterpret
 * the bits. Integer -> float and f32 -> f16 round once to nearest even
 * (integers are exact up to 2^24 in f32, 2048 in f16); beyond the f16 range
 * (|x| >= 65520) the result is +-inf. bf16: to and from every dtype, as
 * the header's Numerics section describes (bf16 -> f32 exact; f32, f16
 * and integers -> bf16 rounded once to nearest even, NaN -> 0x7fc0, past
 * the range +-inf; bf16 -> f16 rounded to nearest even; bf16 -> integers
 * as float -> integer above; bf16 -> bf16 copies the bits), dense views in
 * vector units, other views element by element. Common rules: see
 * `wgc_op_binary`.
 */
WgcStatus wgc_op_cast(const struct WgcStream *stream,
                      const struct WgcTensor *input,
                      const struct WgcTensor *out);

/**
 * Set every element of the view `out` (any dtype) to `value`, converted
 * as in `wgc_op_binary_scalar` (floats rounded once; f16 directly from the
 * double).
 */
WgcStatus wgc_op_fill(const struct WgcStream *stream, const struct WgcTensor *out, double value);

/**
 * out[i] = start + i * step for a 1-D out (else `WGC_ERROR_INVALID_ARGUMENT`).
 * f32/f16 compute start + f32(i) * step in f32 (exact while i < 2^24);
 * i32/u32 truncate start and step toward zero, reduce them modulo 2^32
 * (so an i32 start of 3e9 wraps to -1294967296, as the arithmetic that
 * follows does) and use wrapping integer arithmetic (a negative step works
 * for u32). Non-finite start or step: `WGC_ERROR_INVALID_ARGUMENT`.
 */
WgcStatus wgc_op_arange(const struct WgcStream *stream,
                        const struct WgcTensor *out,
                        double start,
                        double step);

/**
 * The name of a status code, e.g. "WGC_ERROR_OUT_OF_RANGE". Never NULL; the
 * string is static.
 */
const char *wgc_status_string(uint32_t status);

/**
 * The detailed message of the last call that failed on the calling thread
 * ("" if none has). Owned by the library; valid until the next failing call
 * on this thread. Shader diagnostics include line and column. Calls made
 * while the thread exits (from pthread key destructors) report statuses
 * and messages as usual.
 */
const char *wgc_last_error_message(void);

/**
 * The library's version as `(MAJOR << 16) | (MINOR << 8) | PATCH`.
 */
uint32_t wgc_version(void);

/**
 * The ABI version the library was built with (compare with `WGC_ABI_VERSION`).
 */
uint32_t wgc_abi_version(void);

/**
 * Create a stream on a device. `*out_stream` holds one reference.
 */
WgcStatus wgc_stream_create(const struct WgcDevice *device, struct WgcStream **out_stream);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_stream_retain(struct WgcStream *stream);

/**
 * Drop a reference. NULL is ignored. Work still recorded is submitted first.
 */
void wgc_stream_release(struct WgcStream *stream);

/**
 * Record a launch of `kernel`. Every binding the entry point uses must be
 * bound once, with a buffer of the stream's device. Checked here, before
 * anything is recorded: `WGC_ERROR_BINDING_MISMATCH` (a binding missing,
 * unknown, repeated, too small (a uniform's range included), of the wrong
 * usage, or a buffer bound writable that the launch also uses in another
 * way: bound read-only, as its uniform buffer or as its indirect buffer,
 * whatever the ranges), `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_ALIGNMENT`,
 * `WGC_ERROR_LIMIT_EXCEEDED` (workgroup counts or a binding above the
 * adapter's limits), `WGC_ERROR_DEVICE_MISMATCH`, `WGC_ERROR_OUT_OF_MEMORY`.
 * Indirect workgroup counts are read on the GPU when the launch runs; if
 * any of them exceeds `max_compute_workgroups_per_dimension` the launch runs
 * no workgroups at all (no status can report it: the counts are not known
 * on the host). Does not block; the launch is submitted with its batch.
 */
WgcStatus wgc_stream_launch(const struct WgcStream *stream,
                            const struct WgcKernel *kernel,
                            const struct WgcLaunch *launch);

/**
 * Record a copy of `size` bytes between buffers of the stream's device.
 * Offsets and size must be multiples of 4; ranges in one buffer must not
 * overlap (`WGC_ERROR_INVALID_ARGUMENT`).
 */
WgcStatus wgc_stream_copy_buffer(const struct WgcStream *stream,
                                 const struct WgcBuffer *src,
                                 uint64_t src_offset,
                                 const struct WgcBuffer *dst,
                                 uint64_t dst_offset,
                                 uint64_t size);

/**
 * Record a fill of `size` bytes at `offset` with the 32-bit `pattern`
 * (e.g. the bits of a float). Offset and size must be multiples of 4
 * (`WGC_ERROR_ALIGNMENT`). Like a write, it works on buffers of any usage,
 * and any size works: fills larger than one storage binding take several
 * launches.
 */
WgcStatus wgc_stream_fill_buffer(const struct WgcStream *stream,
                                 const struct WgcBuffer *buffer,
                                 uint64_t offset,
                                 uint64_t size,
                                 uint32_t pattern);

/**
 * Submit what has been recorded. Does not wait.
 *
 * Everything the GPU layer checks at submit is checked when work is
 * recorded, so a batch is not expected to fail here. If the GPU layer still
 * rejects one (or runs out of memory), the batch's commands are submitted
 * one by one and only those it rejects are dropped: work recorded before
 * and after them still runs. The error (`WGC_ERROR_VALIDATION`,
 * `WGC_ERROR_OUT_OF_MEMORY`, with how many commands were dropped) is
 * reported by this stream's next `wgc_stream_flush` or
 * `wgc_stream_synchronize` (or `wgc_device_synchronize`), whichever comes
 * first, even when another call submitted the batch (a host read or write,
 * or a full batch); those other calls do not fail because of it.
 */
WgcStatus wgc_stream_flush(const struct WgcStream *stream);

/**
 * Submit what has been recorded and block until the GPU has finished it,
 * at most `WgcDeviceOptions.gpu_timeout_ms` (then `WGC_ERROR_TIMEOUT`).
 * Reports batch errors as `wgc_stream_flush` does, after waiting for what
 * was submitted.
 */
WgcStatus wgc_stream_synchronize(const struct WgcStream *stream);

/**
 * Start capturing on `stream` (see `WgcGraph`): work recorded on it before
 * is submitted first; what is recorded from now on is captured, not run.
 * `WGC_ERROR_INVALID_OPERATION` if it is already capturing. Does not block.
 */
WgcStatus wgc_stream_begin_capture(const struct WgcStream *stream);

/**
 * End the capture begun on `stream` and return what it captured (possibly
 * nothing) as a new graph; the stream records normally again.
 * `WGC_ERROR_INVALID_OPERATION` if the stream is not capturing. Does not
 * block.
 */
WgcStatus wgc_stream_end_capture(const struct WgcStream *stream, struct WgcGraph **out_graph);

/**
 * `*out_capturing` = 1 while `stream` is capturing, else 0.
 */
WgcStatus wgc_stream_is_capturing(const struct WgcStream *stream, uint32_t *out_capturing);

/**
 * The number of launches `stream`'s capture holds so far: the index the
 * next launch will have (for `WgcGraphScalar.launch`).
 * `WGC_ERROR_INVALID_OPERATION` if the stream is not capturing.
 */
WgcStatus wgc_stream_capture_launch_count(const struct WgcStream *stream, uint32_t *out_count);

/**
 * The number of replay values `stream`'s capture holds so far: the index
 * the next built-in operator's first replay value will have (for
 * `WgcGraphValue.index`). `WGC_ERROR_INVALID_OPERATION` if the stream is
 * not capturing.
 */
WgcStatus wgc_stream_capture_value_count(const struct WgcStream *stream, uint32_t *out_count);

/**
 * The number of replay values (built-in operators' arguments) `graph` holds.
 */
WgcStatus wgc_graph_value_count(const struct WgcGraph *graph, uint32_t *out_count);

/**
 * Replay value `index` of `graph`: the value captured and the range a
 * replay may give (each out-pointer may be NULL). `WGC_ERROR_OUT_OF_RANGE`
 * past the graph's values; `WGC_ERROR_UNSUPPORTED` (with the reason) if a
 * replay cannot change this one; nothing is written then.
 */
WgcStatus wgc_graph_value_info(const struct WgcGraph *graph,
                               uint32_t index,
                               double *out_captured,
                               double *out_min,
                               double *out_max);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_graph_retain(struct WgcGraph *graph);

/**
 * Drop a reference. NULL is ignored. Replays already recorded still run.
 */
void wgc_graph_release(struct WgcGraph *graph);

/**
 * What a graph holds: GPU dispatches, launches (indices for
 * `WgcGraphScalar`), and slots (buffers and scratch, for
 * `WgcGraphRebind`). Each out-pointer may be NULL.
 */
WgcStatus wgc_graph_counts(const struct WgcGraph *graph,
                           uint32_t *out_dispatches,
                           uint32_t *out_launches,
                           uint32_t *out_slots);

/**
 * The slot of `buffer` in `graph`: what a `WgcGraphRebind` names to put
 * another buffer in its place. `WGC_ERROR_NOT_FOUND` if the graph does not
 * use the buffer.
 */
WgcStatus wgc_graph_buffer_slot(const struct WgcGraph *graph,
                                const struct WgcBuffer *buffer,
                                uint32_t *out_slot);

/**
 * Record `graph`'s commands on `stream`, in order after what the stream
 * recorded before. `replay` may be NULL (as captured) or give a binding
 * table and scalar patches for this replay (see `WgcGraph`). Everything is
 * checked before anything is recorded: `WGC_ERROR_DEVICE_MISMATCH` (stream
 * or a rebound buffer of another device), `WGC_ERROR_OUT_OF_RANGE` (a slot
 * or launch index past the graph's, a patch past a launch's parameters),
 * `WGC_ERROR_INVALID_ARGUMENT` (a slot given twice, a buffer smaller than
 * the captured one, a patch of a launch without parameters, a replay value
 * that cannot change or is NaN where a count is expected), an out-of-range
 * replay value `WGC_ERROR_OUT_OF_RANGE`,
 * `WGC_ERROR_BINDING_MISMATCH`, `WGC_ERROR_INVALID_OPERATION` (the stream
 * is capturing), `WGC_ERROR_NULL_POINTER`. Does not block; the replay is
 * submitted with the stream's batch (all of it in one submission).
 */
WgcStatus wgc_graph_replay(const struct WgcGraph *graph,
                           const struct WgcStream *stream,
                           const struct WgcGraphReplay *replay);

/**
 * Fill `*out` with a row-major (C order) view of `buffer` from element 0.
 * Does not check that the buffer is large enough (operators do).
 * `WGC_ERROR_OUT_OF_RANGE` (and `*out` untouched) for a shape whose
 * element count or strides overflow `int64_t`.
 */
WgcStatus wgc_tensor_contiguous(const struct WgcBuffer *buffer,
                                uint32_t dtype,
                                uint32_t rank,
                                const int64_t *shape,
                                struct WgcTensor *out_tensor);

/**
 * General matrix product: `c = alpha * op(a) op(b) + beta * c`, where
 * `op(x)` swaps the last two dims of `x` when its `transpose_*` flag is
 * non-zero. op(a) is (..., M, K), op(b) is (..., K, N); their batch dims
 * (all but the last two) broadcast as in NumPy, and `c` must have exactly
 * the broadcast batch shape followed by (M, N). All three need at least
 * two dims. `c` is read (when `beta != 0`) and written; with `beta == 0` its
 * old contents are ignored, NaN included. Any strides work; views whose
 * last two dims are row- or column-major (plain or transposed) are fastest.
 *
 * Dtypes: f32 x f32 -> f32; f16 x f16 -> f32 or f16; bf16 x bf16 -> f32
 * or bf16. Products are accumulated in f32 on every path: where no bf16
 * tensor cores take them, bf16 operands are widened to f32 as they load
 * (2 bytes an element read), and a bf16 C is computed into f32 scratch
 * and rounded once into C (2^-8 relative added to the f32 accuracy).
 *
 * Accumulation and accuracy: each workgroup sums at most 16,384 products
 * along K, one f32 fused multiply-add at a time; a longer K is split into
 * such runs, whose sums go to f32 scratch (the output's size per run, up
 * to 256 MiB at once; beyond, the runs go in waves) and a second pass adds
 * them in order, then applies alpha and beta. Products with too few output
 * tiles to fill the GPU cut K into more runs likewise (runs of at least
 * 256, as many as the device's compute units take at once). Any K works,
 * on software drivers that cap shader loops too. Results (f32) are within
 * about (min(K, 16384) + runs) * 2^-24 * sum_k |a_mk * b_kn| of exact in
 * the worst case; in practice within 1e-6 * K * max|a| * max|b|, long
 * same-sign sums included (tested at K = 600,000). f16 results add the
 * f16 rounding of the output. Every kernel below keeps this accumulation
 * and bound.
 *
 * Kernels (the library chooses; the result differs only within the bound):
 * - f16 and bf16 products on tensor cores, on adapters with 16x16x16
 *   cooperative matrices and 32-wide subgroups
 *   (`WgcAdapterInfo.has_cooperative_matrix`; bf16 needs Vulkan's
 *   VK_KHR_shader_bfloat16), wherever each operand has a unit stride
 *   along one of its two dims and the other stride, the offsets, the
 *   batch strides and the unit-stride dim's size are multiples of 8
 *   (16-byte loads). On Vulkan with SPIR-V passthrough the kernels are
 *   SPIR-V on VK_KHR_cooperative_matrix (K of 512 or more) or
 *   VK_NV_cooperative_matrix2 (some skinny products, where the driver
 *   has it); elsewhere WGSL (f16 only). Large f16 and bf16 products the tensor cores cannot
 *   read so (K or N not a multiple of 8, say) are first copied into
 *   aligned scratch, K padded with zeros to a multiple of 8: the padding
 *   adds only 0 * 0 terms, so results, NaN and inf included, are those
 *   over K; the copies cost a pass over A and B and scratch of their size.
 * - f16 and bf16 products of 3 to 32 rows (M) with A dense along K, on the
 *   same Vulkan adapters: a skinny tensor-core kernel that reads the weight
 *   once.
 * - f32 products of 9 to 32 rows (M, or N: the transposed product) with no
 *   batch and a weight dense along one dim (sizes and strides multiples
 *   of 4): a kernel that takes every row at once.
 * - Other skinny products (M or N at most 32, per batch matrix or with a
 *   batch over one shared b folded into M) whose larger operand has a unit
 *   stride along K or its other dim: matrix-vector kernels that read it
 *   once per 8 rows, coalesced, in interleaved f32 partial sums added in
 *   order in groups (the bound above holds).
 * - Everything else: the tiled kernel (f32 FMAs; blocks of 64 or 128).
 *
 * Fastest with M and N multiples of 128 and K of 32 (no partial tiles).
 * docs/TUNING.md lists the environment variables that fix one of these
 * choices or their targets, for comparisons; a device reads them when it
 * is created.
 *
 * Records work on `stream` and returns without blocking. Releasing a
 * tensor's buffer afterwards is safe: the recorded work keeps what it uses.
 *
 * Statuses: `WGC_ERROR_NULL_POINTER` (NULL stream or tensor),
 * `WGC_ERROR_DTYPE_MISMATCH` (a and b differ, or an output other than f32
 * or the inputs' dtype), `WGC_ERROR_UNSUPPORTED` (integer dtypes; f16 on an adapter
 * without f16), `WGC_ERROR_SHAPE_MISMATCH` (rank < 2, inner dims differ,
 * batch dims that do not broadcast, `c` of the wrong shape),
 * `WGC_ERROR_INVALID_ARGUMENT` (`c` overlaps or shares a buffer with an
 * input, or has a zero stride), `WGC_ERROR_OUT_OF_RANGE` (a view outside
 * its buffer), `WGC_ERROR_TOO_LARGE` (more than
 * `max_compute_workgroups_per_dimension` batch matrices, K past 2^31-1
 * through zero strides, or K over 16,384 with an output whose f32 copy
 * exceeds the adapter's storage binding size),
 * `WGC_ERROR_OUT_OF_MEMORY` (scratch for runs of K or for aligned copies
 * that the device cannot allocate), `WGC_ERROR_DEVICE_MISMATCH`. Nothing
 * is recorded on failure.
 */
WgcStatus wgc_op_gemm(const struct WgcStream *stream,
                      float alpha,
                      const struct WgcTensor *a,
                      uint32_t transpose_a,
                      const struct WgcTensor *b,
                      uint32_t transpose_b,
                      float beta,
                      const struct WgcTensor *c);

/**
 * NumPy `matmul`: `out = a @ b`. Like `wgc_op_gemm` with alpha 1, beta 0
 * and no transposes, and also accepting 1-D operands: a 1-D `a` (K) is a
 * row vector and a 1-D `b` (K) a column vector, whose dim is then absent
 * from `out` (matrix-vector gives (..., M), vector-matrix (..., N), vector-
 * vector a 0-D scalar). Dtypes, accuracy, blocking and statuses as for
 * `wgc_op_gemm` (rank 0 operands give `WGC_ERROR_SHAPE_MISMATCH`).
 */
WgcStatus wgc_op_matmul(const struct WgcStream *stream,
                        const struct WgcTensor *a,
                        const struct WgcTensor *b,
                        const struct WgcTensor *out);

/**
 * Describe how `wgc_op_gemm` with the same arguments would run, without
 * recording anything: one line, "route <kernel and its parameters>
 * because <the decision that picked it> (m=.. n=.. k=.. batch=..)", e.g.
 * `route tiled gemm_c4 rm=1 rn=1 ... because f32 operands, ...`. The
 * route is the one planned with the device's settings; where the device's
 * autotuner is on, a stored measurement for the shape class may choose
 * another matrix-vector mode. The text is for people and logs: its wording
 * may change between versions.
 *
 * Writes the line, NUL-terminated, into `text` if it fits in `capacity`
 * bytes, and its length without the NUL into `*out_length` either way
 * (`text` NULL with `capacity` 0 asks for the length: `WGC_OK`); with a
 * nonzero `capacity` that is too small it returns `WGC_ERROR_TOO_LARGE`
 * and writes nothing into `text`.
 *
 * Statuses: every status `wgc_op_gemm` returns for these operands, for
 * the same reasons (checked the same way: NULLs, dtypes, shapes, views,
 * sharing, sizes); `WGC_ERROR_NULL_POINTER` also for a NULL `out_length`,
 * or NULL `text` with a nonzero capacity; `WGC_ERROR_TOO_LARGE` also for
 * a capacity too small. Does not block; any thread.
 *
 * # Safety
 * `text` must be valid for `capacity` bytes.
 */
WgcStatus wgc_op_gemm_explain(const struct WgcStream *stream,
                              float alpha,
                              const struct WgcTensor *a,
                              uint32_t transpose_a,
                              const struct WgcTensor *b,
                              uint32_t transpose_b,
                              float beta,
                              const struct WgcTensor *c,
                              char *text,
                              size_t capacity,
                              size_t *out_length);

/**
 * 2-D cross-correlation (PyTorch's `conv2d`): `input` (N, C, H, W),
 * `weight` (O, C/groups, KH, KW), `bias` (O) or NULL, `out` (N, O, OH, OW)
 * with `OH = (H + 2*pad_h - dilation_h*(KH-1) - 1) / stride_h + 1` (OW
 * alike). All four f32, or all four f16 (adapters with f16 shaders); any
 * strides. Accuracy: f32 within about 1e-5 * (1 + sqrt(C/groups*KH*KW)) of
 * the exact result for unit-scale data; f16 products are exact and summed
 * in f32 to the same bound, and the f16 output is rounded once from that
 * sum (tested: within 1e-5 * (1 + sqrt(K)) + 2^-10 * |exact|). NaN and
 * infinities propagate as in PyTorch: IEEE products and f32 sums, a NaN
 * in an output's window makes it NaN (whether the padding's zeros times an
 * infinite weight give NaN is unspecified).
 *
 * Depthwise convolutions of multiplier 1 (groups == C == O), f32 and
 * f16, run a kernel bound by memory bandwidth: where input and output are
 * channels-last with the channels in whole 16-byte words (C a multiple of
 * 4 in f32, 8 in f16; the other strides and the offsets multiples of that
 * too) each invocation computes 16 bytes of channels of one output pixel
 * (3x3 and 5x5 windows of stride 1 or 2: 4 channels, 16 bytes of f32 or 8
 * of f16, of 4 pixels along a row; C a multiple of 4 suffices there);
 * otherwise such windows take an invocation per 4 outputs along a row of
 * one channel, and other windows a workgroup per tile of output pixels,
 * its input staged in workgroup memory (windows whose tile does not fit,
 * and other depthwise convolutions, take the direct kernel below). `wgc_op_conv2d_bn_act`
 * applies its activation in that kernel's store.
 *
 * f32: 1x1 stride-1 unpadded convolutions run as a GEMM (see
 * `wgc_op_gemm`), other depthwise ones (one input channel per group) a
 * direct kernel, others an implicit GEMM. Depthwise kernels of over 4096 taps take a
 * workgroup per output (beyond 262,144 taps, several, added by a second
 * pass), their products summed in blocks of 32. The implicit GEMM
 * accumulates at most 16,384 terms of C/groups*KH*KW per workgroup; longer
 * sums, and long ones on a small output (`WGC_CONV_SPLIT_FILL`), are split
 * into runs whose f32 sums (scratch of the output's size per run, as many
 * runs at once as the adapter's binding size holds) a second pass adds in
 * order with the bias, so results are deterministic. Any size works, on
 * software drivers that cap shader loops too.
 *
 * Winograd F(2x2, 3x3): f32 3x3 stride-1 undilated ungrouped
 * convolutions (any padding, sizes and strides, bias or none) with at
 * least 32 input and 32 output channels and 1024 output pixels over all
 * images run it by default (`WGC_CONV_WINOGRAD=1` takes every such
 * convolution, `0` none). On an H100 whole ResNet-50 f32 forwards ran
 * 1.15-1.19x faster with it than on the implicit GEMM. The weight
 * transformed into 16 (C, O) matrices
 * (scratch of 16/9 of the weight, per call), each chunk of images' 4x4
 * input patches (stride 2) into 16 (tiles, C) matrices, 16 products by
 * the f32 GEMM (`wgc_op_gemm`'s routes), and the 2x2 output tiles
 * transformed back with the bias (at most 128 MiB of scratch for the
 * transformed input and the products, one image at least). Accuracy: the
 * transforms only add, subtract and halve, so F(2x2, 3x3) keeps the
 * implicit GEMM's bound above (tested on unit-scale data against double
 * references, its largest errors within 4 times the implicit GEMM's plus
 * 1e-6). Intermediate sums run up to about 81 times the direct sum's
 * terms (4 from the input transform, 9/4 from the weight's, 9 from the
 * output's), so where 9C * max|input| * max|weight| comes within that
 * factor of the f32 maximum an output may overflow to an infinity or NaN
 * that the direct sum would not give. NaN: exactly the outputs whose window covers a NaN input are
 * NaN, as above; an infinite input makes the same outputs, and no others,
 * infinite or NaN (the transforms may subtract it from itself where the
 * direct sum gives +-Inf).
 *
 * f16: 1x1 convolutions as for f32 through the f16 GEMM, depthwise ones
 * as above (f32 sums). Where the adapter runs the SPIR-V tensor-core
 * kernels (below), 1x1 stride-1 unpadded ungrouped convolutions with at
 * least 128 input and 128 output channels whose input and output are channels-last
 * with packed pixels run as one GEMM over all images on the
 * VK_KHR_cooperative_matrix kernel, the bias and activation in its
 * epilogue (`WGC_CONV_1X1_NHWC`). Ungrouped ones with fewer than 8 input
 * channels and C*KH*KW up to 512 (a vision net's first layer), where the
 * adapter runs the SPIR-V tensor-core kernels, have the image and weight
 * copied with their channels padded to 8 (zeros; scratch of at most
 * 128 MiB of images at a time (`WGC_CONV_COLS_BYTES`), one image at
 * least, and O*KH*KW*8 elements) for the channel gather; with at most 4
 * channels and a stride of 2 along rows, two adjacent pixels of 4
 * channels make one padded pixel and the window moves one pair at a time
 * (K = 8*KH*ceil(KW/2), half the scratch; `WGC_CONV_STEM=pad8` keeps 8
 * channels per pixel). Windows of under 16 taps into a channels-first
 * output are not padded; those, and on adapters without
 * cooperative matrices all of them, write the columns of a chunk of
 * images (pixels x C*KH*KW padded to whole 8s; at most 128 MiB of f16
 * scratch, one image at least) and multiply them by the f16 GEMM
 * (`wgc_op_gemm`'s routes), a channels-last output as (pixels x O) rows,
 * the bias in the GEMM's epilogue; elsewhere the implicit GEMM below
 * takes them. The others, on adapters with
 * cooperative matrices (`WgcAdapterInfo.has_cooperative_matrix`), run on
 * the tensor cores. Ungrouped ones with a multiple of 8 input channels,
 * where the adapter runs the SPIR-V tensor-core kernels (Vulkan with
 * SPIR-V passthrough and VK_KHR_cooperative_matrix), gather 8 channels of
 * one tap per 16-byte load from a channels-last image: the input is read
 * in place where it is channels-last (channels at unit stride, the other
 * strides and the offset multiples of 8 elements), else copied so into
 * scratch of its size; likewise the weight as (O, KH, KW, C/groups); a
 * channels-last output is computed in blocks of 64 pixels x 64 output
 * channels (`WGC_CONV_KHR_SMALL`), one product over all images where its
 * images are one run of rows. The
 * others run an implicit GEMM that gathers the input's columns into
 * workgroup memory (no scratch). Either way a K past 16,384, or a long K
 * on few output tiles, is split into runs whose f32 sums (scratch of the
 * output's size per run) a second pass adds in order. Elsewhere, and
 * where those kernels' grid or scratch would exceed the adapter's limits,
 * the columns of a chunk of images (at most 128 MiB of f16 scratch, one
 * image at least) are written out (im2col) and multiplied by the f16 GEMM
 * (see `wgc_op_gemm`: tensor cores or its tiled kernel). Results are
 * deterministic. docs/TUNING.md lists the environment variables that fix
 * one of these paths or lower the 128 MiB, for comparisons and tests.
 * `wgc_op_conv2d_explain` names the route a call would take, and why.
 *
 * Records work on `stream` without blocking. Statuses:
 * `WGC_ERROR_NULL_POINTER` (NULL stream, params, input, weight or out),
 * `WGC_ERROR_INVALID_ARGUMENT` (`struct_size` < 4 or ending inside a field; `out` overlaps or shares
 * a buffer with an operand), `WGC_ERROR_DTYPE_MISMATCH` (operands of
 * different dtypes), `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 on an
 * adapter without f16 shaders),
 * `WGC_ERROR_SHAPE_MISMATCH` (ranks, channels not divisible by groups,
 * weight/bias/out of the wrong shape, input smaller than the dilated
 * kernel), `WGC_ERROR_OUT_OF_RANGE` (a view outside its buffer),
 * `WGC_ERROR_TOO_LARGE` (too many workgroups, or channels, a padded input,
 * stride, dilated kernel or C/groups*KH*KW past 2^31-1 through zero
 * strides; partial sums of a depthwise kernel over 262,144 taps, or one
 * image's f16 columns or the packed f16 weight, beyond the adapter's
 * storage binding size), `WGC_ERROR_DEVICE_MISMATCH`. Nothing is
 * recorded on failure.
 */
WgcStatus wgc_op_conv2d(const struct WgcStream *stream,
                        const struct WgcConv2dParams *params,
                        const struct WgcTensor *input,
                        const struct WgcTensor *weight,
                        const struct WgcTensor *bias,
                        const struct WgcTensor *out);

/**
 * 2-D max pooling: `input` (N, C, H, W) to `out` (N, C, OH, OW), both f32
 * or both f16, with `OH = (H + 2*pad_h - kernel_h) / stride_h + 1` (floor;
 * OW alike). NaN in a window gives NaN. Exact. Where `input` and `out`
 * are both channels-last (the C stride 1), neighbouring invocations take
 * neighbouring channels, four at a time (16- or 8-byte loads) where C, the
 * other strides and both views' offsets are multiples of 4 (windows up to
 * 4096 elements; the same for average pooling). Windows of over 4096
 * elements take a workgroup per output (beyond 262,144 elements, several,
 * folded by a second pass), so any window works, on software drivers that
 * cap shader loops too. Records work on `stream` without blocking.
 * Statuses: `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_INVALID_ARGUMENT` (zero
 * window, padding over half the window, `struct_size` < 4 or ending inside a field, `out` sharing a
 * buffer with `input`, or elements of `out` sharing memory: a zero stride or strides that
 * interleave), `WGC_ERROR_DTYPE_MISMATCH`, `WGC_ERROR_UNSUPPORTED`
 * (not f32 or f16, or f16 without adapter support), `WGC_ERROR_SHAPE_MISMATCH` (rank not 4, `out` of the wrong
 * shape, input smaller than the window), `WGC_ERROR_OUT_OF_RANGE`,
 * `WGC_ERROR_TOO_LARGE` (a padded input, stride or window past 2^31-1
 * through zero strides; windows over 262,144 elements whose partial results
 * exceed the adapter's storage binding size), `WGC_ERROR_DEVICE_MISMATCH`.
 * Nothing is recorded on failure.
 */
WgcStatus wgc_op_max_pool2d(const struct WgcStream *stream,
                            const struct WgcPool2dParams *params,
                            const struct WgcTensor *input,
                            const struct WgcTensor *out);

/**
 * 2-D average pooling; shapes, blocking and statuses as for
 * `wgc_op_max_pool2d`, divisor as `count_include_pad` says. Sums run in
 * f32, a window row at a time (windows over 4096 elements: blocks of 32,
 * then a tree), so a sum beyond the f32 range gives +-inf. Accuracy (f32):
 * within 1e-6 * mean(|x|) over the window of the exact mean; f16: the f16
 * rounding of the output.
 */
WgcStatus wgc_op_avg_pool2d(const struct WgcStream *stream,
                            const struct WgcPool2dParams *params,
                            const struct WgcTensor *input,
                            const struct WgcTensor *out);

/**
 * Mean over H and W: `input` (N, C, H, W) to `out` (N, C, 1, 1), f32 or
 * f16 (summed in f32). Contiguous planes (the W stride 1 and the H stride
 * W) take the run kernel of `wgc_op_reduce` (a team of invocations per
 * plane, compensated sums); channels-last planes (the C stride 1) of at
 * most 1024 elements an invocation per (n, c), in blocks of 8; other
 * layouts one workgroup per plane, in blocks of 32 then a tree. Planes of over 65,536 elements in those
 * layouts are averaged as `wgc_op_avg_pool2d` with the whole plane as
 * the window, so any size works, on software drivers that cap shader
 * loops too. Accuracy (f32): within 1e-6 * mean(|x|) of the exact mean; f16: the
 * f16 rounding of the output.
 * Records work on `stream` without blocking. Statuses:
 * `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_DTYPE_MISMATCH`,
 * `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 without adapter support), `WGC_ERROR_SHAPE_MISMATCH` (rank not
 * 4, `out` not (N, C, 1, 1), H or W zero with N*C > 0),
 * `WGC_ERROR_INVALID_ARGUMENT` (`out` sharing a buffer with `input`, or
 * elements of `out` sharing memory),
 * `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_TOO_LARGE` (H*W past 2^31-1 through
 * zero strides), `WGC_ERROR_DEVICE_MISMATCH`.
 */
WgcStatus wgc_op_global_avg_pool2d(const struct WgcStream *stream,
                                   const struct WgcTensor *input,
                                   const struct WgcTensor *out);

/**
 * Explain, without recording anything, how `wgc_op_conv2d` with the same
 * operands would run: one line, `route NAME (PARAMETERS) because REASON`,
 * then `; declined: ROUTE: WHY; ...` for each route asked before it, in
 * order, and last `; activation: in the route's epilogue`,
 * `; activation: in the route's store for relu, relu6 and hardswish, a
 * pass of its own for the others` or `; activation: a pass of its own`:
 * where `wgc_op_conv2d_bn_act` with these operands applies its
 * activation, then `; residual: in the route's epilogue, before the
 * activation` or `; residual: added in place by a pass of its own, then
 * the activation by another`: where `wgc_op_conv2d_bn_act_residual` adds a
 * residual laid out as `out` (the activation then comes with it). The
 * routes are `empty`, `gemm_1x1` (a GEMM per image over NCHW's flat
 * pixels, whose own route `wgc_op_gemm` then chooses), `gemm_1x1_nhwc`
 * (f16 with 128 or more input and output channels on the VK_KHR_cooperative_matrix
 * GEMM, or any with `WGC_CONV_1X1_NHWC=1`: one GEMM over all images' channels-last
 * packed pixels; in the parentheses, whether the GEMM's plan applies the
 * bias, activation and residual in its kernel or split-K pass, else the
 * product transposed with a row bias and the activation a pass of its
 * own), `depthwise` (multiplier 1, at the memory bandwidth), `direct`
 * (other depthwise ones), `winograd` (f32 3x3 stride 1, F(2x2, 3x3)),
 * `implicit_gemm` (other f32), `khr_gather`, `im2col_stem` (f16 under 8
 * input channels, a vision net's first layer: padded to 8 channels, or
 * in pixel pairs of 4 channels, for the KHR gather, or im2col columns and
 * the GEMM with the bias and activation in its epilogue), `coop_implicit`
 * (f16 on tensor cores) and `im2col_gemm` (f16 elsewhere). The text is
 * for people and logs: its wording may change between versions; do not
 * parse it.
 *
 * Writes the text, NUL-terminated, into `buf` if it fits in `buf_len`
 * bytes, and its length without the NUL into `*out_len` either way
 * (`buf` NULL with `buf_len` 0 asks for the length: `WGC_OK`); with a
 * nonzero `buf_len` that is too small it returns `WGC_ERROR_TOO_LARGE`
 * and writes nothing into `buf` (as `wgc_profile_table`).
 *
 * The operands are checked as `wgc_op_conv2d` checks them and a bad one
 * gives the same status (and nothing is written); a convolution that
 * `wgc_op_conv2d` would refuse for the adapter's limits
 * (`WGC_ERROR_TOO_LARGE`) is refused here too. Also
 * `WGC_ERROR_NULL_POINTER` (NULL `out_len`, or NULL `buf` with a nonzero
 * `buf_len`). Does not block; reads the same settings as the call.
 *
 * # Safety
 * As `wgc_op_conv2d`; `buf` must be valid for `buf_len` bytes and
 * `out_len` for one write.
 */
WgcStatus wgc_op_conv2d_explain(const struct WgcStream *stream,
                                const struct WgcConv2dParams *params,
                                const struct WgcTensor *input,
                                const struct WgcTensor *weight,
                                const struct WgcTensor *bias,
                                const struct WgcTensor *out,
                                char *buf,
                                size_t buf_len,
                                size_t *out_len);

/**
 * Create a communicator over `devices[0..count]` (1 to
 * `WGC_MAX_COMM_DEVICES` distinct devices,
 * `WGC_ERROR_INVALID_ARGUMENT` otherwise, for the same device twice too;
 * `WGC_ERROR_NULL_POINTER` for a NULL array or entry;
 * `WGC_ERROR_DEVICE_LOST` for a destroyed device). `*out_comm` holds one
 * reference. Does not block.
 */
WgcStatus wgc_comm_create(const struct WgcDevice *const *devices,
                          uint32_t count,
                          struct WgcComm **out_comm);

/**
 * The number of devices (ranks) of the communicator.
 */
WgcStatus wgc_comm_size(const struct WgcComm *comm, uint32_t *out_size);

/**
 * Add a reference. NULL is ignored.
 */
void wgc_comm_retain(struct WgcComm *comm);

/**
 * Drop a reference (and, with the last, those it holds on its devices).
 * NULL is ignored.
 */
void wgc_comm_release(struct WgcComm *comm);

/**
 * Every rank's tensor becomes the elementwise `op` (a `WgcCollectiveOp`)
 * of all ranks' tensors, in place. `streams` and `tensors` are arrays of
 * the communicator's size. All tensors must have one shape
 * (`WGC_ERROR_SHAPE_MISMATCH`) and dtype (`WGC_ERROR_DTYPE_MISMATCH`), each
 * on its rank's device (`WGC_ERROR_DEVICE_MISMATCH`). Every rank gets the
 * same bits. Accuracy: each element is reduced in a rank order that
 * depends on its position; SUM of f16 and bf16 rounds after each of the
 * N-1 additions. Tensors of at most 256 KiB (rank 0's device's setting
 * `WGC_ALLREDUCE_DIRECT_KIB` changes it; docs/TUNING.md) go to every rank in one step and
 * are reduced there (lower latency); larger ones are reduce-scattered,
 * then all-gathered (each device sends and receives 2(N-1)/N of the
 * tensor). See `WgcComm` for ordering, blocking and failure.
 */
WgcStatus wgc_comm_all_reduce(const struct WgcComm *comm,
                              const struct WgcStream *const *streams,
                              const struct WgcTensor *tensors,
                              uint32_t op);

/**
 * Every rank's `outputs[i]` (contiguous, with N times as many elements as
 * an input) becomes the inputs of ranks 0, 1, ..., N-1 one after another
 * (each input in its row-major order). Inputs: one shape and dtype, any
 * views. `WGC_ERROR_SHAPE_MISMATCH` / `WGC_ERROR_DTYPE_MISMATCH`;
 * `WGC_ERROR_INVALID_ARGUMENT` for an output that overlaps its input. See
 * `WgcComm` for the rest.
 */
WgcStatus wgc_comm_all_gather(const struct WgcComm *comm,
                              const struct WgcStream *const *streams,
                              const struct WgcTensor *inputs,
                              const struct WgcTensor *outputs);

/**
 * Rank i's `outputs[i]` becomes the elementwise `op` over all ranks of the
 * i-th of N equal contiguous parts of their `inputs` (contiguous, N times
 * as many elements as an output; outputs of one shape, any views). Statuses
 * as `wgc_comm_all_gather`. See `WgcComm` for the rest.
 */
WgcStatus wgc_comm_reduce_scatter(const struct WgcComm *comm,
                                  const struct WgcStream *const *streams,
                                  const struct WgcTensor *inputs,
                                  const struct WgcTensor *outputs,
                                  uint32_t op);

/**
 * Every rank's tensor becomes a copy of rank `root`'s (read back once,
 * uploaded to every other rank). One shape and dtype, any views;
 * `WGC_ERROR_INVALID_ARGUMENT` for a root past the last rank. See
 * `WgcComm` for the rest.
 */
WgcStatus wgc_comm_broadcast(const struct WgcComm *comm,
                             const struct WgcStream *const *streams,
                             const struct WgcTensor *tensors,
                             uint32_t root);

/**
 * Convolution, inference batch norm and activation in one call, for
 * networks in inference: `out = act(batch_norm(conv2d(input, weight,
 * bias)))` with the batch norm's running statistics (PyTorch's
 * `Conv2d` + `BatchNorm2d` in eval mode + `ReLU` / `ReLU6` / `Hardswish`).
 *
 * The batch norm is folded into the convolution (see
 * `wgc_conv2d_fold_batch_norm`: `folded_weight = weight * s`,
 * `folded_bias = (bias - running_mean) * s + bn_bias` with
 * `s = bn_weight / sqrt(running_var + eps)`), written into the caller's
 * `folded_weight` (the weight's shape, any strides: give it the input's
 * channels-last layout to keep f16 tensor-core convolutions from packing
 * it) and `folded_bias` (O). Fold on the first call (`params->folded` 0)
 * and set `folded` on later calls with the same weights and statistics:
 * then only the convolution and the activation run. The convolution runs
 * as `wgc_op_conv2d(input, folded_weight, folded_bias)` (routes, dtypes,
 * strides, accuracy and limits as there), and the activation
 * (`WgcActivation`, computed as `wgc_op_unary` computes it; NaN stays NaN)
 * is applied where the route stores the output (the tensor-core
 * kernels, the GEMM's epilogue of f16 convolutions under 8 input
 * channels, channels-last 1x1 convolutions whose GEMM takes an epilogue in
 * its tensor-core kernel or split-K pass, the f32 implicit GEMM where it
 * splits K (in the pass that adds the runs), and the depthwise and
 * Winograd routes for the ReLU family: the f32 sum activated, then rounded
 * once to the output's dtype), else (other 1x1 and im2col convolutions,
 * the f32 implicit GEMM with K whole, other depthwise convolutions,
 * GELU/SiLU/tanh on the depthwise and Winograd routes) to `out` in place
 * by one elementwise pass;
 * `wgc_op_conv2d_explain` ends with which. With `folded` set and
 * `folded_bias` NULL this is a convolution without bias followed by the
 * activation, so a layer without batch norm uses it too.
 *
 * Shapes: `input` (N, C, H, W) in any strides (channels-last views
 * included), `weight` and `folded_weight` (O, C/groups, KH, KW), `bias`
 * (O) or NULL (0), `running_mean`, `running_var` (required when folding),
 * `bn_weight`, `bn_bias` (NULL: 1 and 0) (O), `out` (N, O, OH, OW) as
 * for `wgc_op_conv2d`. All f32 or all f16 (f16 needs f16 shaders).
 *
 * Accuracy: as the folded convolution's (see `wgc_conv2d_fold_batch_norm`:
 * the convolution's bound taken with `max|folded_weight|`, plus the folded
 * bias's one rounding), then the activation's (exact for ReLU and ReLU6).
 *
 * Records work on `stream` without blocking. Statuses:
 * `WGC_ERROR_NULL_POINTER` (NULL stream, params, input, folded_weight or
 * out; when folding, NULL weight, running_mean, running_var or
 * folded_bias), `WGC_ERROR_INVALID_ARGUMENT` (`struct_size` < 4 or ending
 * inside a field; an unknown activation; eps negative or not finite when
 * folding; `out` overlapping an operand; the folded tensors overlapping the
 * fold's operands, each other, `input` or `out`), `WGC_ERROR_DTYPE_MISMATCH`,
 * `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 without f16 shaders),
 * `WGC_ERROR_SHAPE_MISMATCH` (as `wgc_op_conv2d` and
 * `wgc_conv2d_fold_batch_norm`), `WGC_ERROR_OUT_OF_RANGE`,
 * `WGC_ERROR_TOO_LARGE`, `WGC_ERROR_DEVICE_MISMATCH`. Nothing is recorded
 * on failure, with one exception: where the convolution exceeds an
 * adapter limit (`WGC_ERROR_TOO_LARGE`, found only when it is planned,
 * after the fold), the fold has been recorded and will write the folded
 * tensors; `out` is never written on failure.
 *
 * # Safety
 * Pointers are NULL or valid for reads; tensors describe live buffers.
 */
WgcStatus wgc_op_conv2d_bn_act(const struct WgcStream *stream,
                               const struct WgcConv2dBnActParams *params,
                               const struct WgcTensor *input,
                               const struct WgcTensor *weight,
                               const struct WgcTensor *bias,
                               const struct WgcTensor *running_mean,
                               const struct WgcTensor *running_var,
                               const struct WgcTensor *bn_weight,
                               const struct WgcTensor *bn_bias,
                               const struct WgcTensor *folded_weight,
                               const struct WgcTensor *folded_bias,
                               const struct WgcTensor *out);

/**
 * `wgc_op_conv2d_bn_act` with a residual added before the activation:
 * `out = act(batch_norm(conv2d(input, weight, bias)) + residual)`, the
 * end of a ResNet bottleneck (`relu(bn3(conv3(x)) + identity)`) or of a
 * MobileNetV2 inverted residual (`bn(project(x)) + x`, activation
 * `WGC_ACTIVATION_NONE`).
 *
 * Arguments, folding, shapes, dtypes, strides and statuses are those of
 * `wgc_op_conv2d_bn_act`, plus `residual`: (N, O, OH, OW), `out`'s shape
 * and dtype, in any strides (channels-last and NCHW alike, broadcast
 * zero strides included). `residual` may not share a byte with `out`
 * (not even as exactly `out`'s view), nor with the folded tensors when
 * folding (`WGC_ERROR_INVALID_ARGUMENT`); it may share the input's memory.
 *
 * Where it is added, with the bias and the activation, as the output is
 * stored (each output rounded once to the dtype):
 * - a 1x1 stride-1 unpadded convolution over channels-last packed pixels
 *   that runs as one GEMM (`wgc_op_conv2d`: by default f16 with at least
 *   128 input and output channels where the SPIR-V tensor-core kernels
 *   run; `WGC_CONV_1X1_NHWC`, docs/TUNING.md) whose GEMM applies an
 *   epilogue in its kernel or split-K pass;
 * - the f16 tensor-core gather (channels-last output) in one K run, where
 *   the residual's pixels are laid out as `out`'s (one strided dim, and
 *   its images rows of one stride where `out`'s are).
 *
 * Every other route writes the convolution into `out`, then one elementwise
 * pass adds the residual in place and, for an activation other than
 * `WGC_ACTIVATION_NONE`, one more applies it in place (the sum rounded to
 * the dtype first). `wgc_op_conv2d_explain` names the route; its
 * `residual:` clause says which.
 *
 * Accuracy: as `wgc_op_conv2d_bn_act`, plus the addition's one rounding
 * (two where the pass adds it). NaN and infinities propagate as IEEE
 * addition does (inf + -inf is NaN) before the activation.
 *
 * Records work on `stream` without blocking. Statuses: as
 * `wgc_op_conv2d_bn_act`; also `WGC_ERROR_NULL_POINTER` (NULL
 * `residual`), `WGC_ERROR_SHAPE_MISMATCH` (`residual` not `out`'s
 * shape), `WGC_ERROR_DTYPE_MISMATCH` (not `out`'s dtype),
 * `WGC_ERROR_OUT_OF_RANGE` (its view past its buffer),
 * `WGC_ERROR_DEVICE_MISMATCH`.
 * Nothing is recorded on failure, with `wgc_op_conv2d_bn_act`'s one
 * exception.
 *
 * # Safety
 * Pointers are NULL or valid for reads; tensors describe live buffers.
 */
WgcStatus wgc_op_conv2d_bn_act_residual(const struct WgcStream *stream,
                                        const struct WgcConv2dBnActParams *params,
                                        const struct WgcTensor *input,
                                        const struct WgcTensor *weight,
                                        const struct WgcTensor *bias,
                                        const struct WgcTensor *running_mean,
                                        const struct WgcTensor *running_var,
                                        const struct WgcTensor *bn_weight,
                                        const struct WgcTensor *bn_bias,
                                        const struct WgcTensor *folded_weight,
                                        const struct WgcTensor *folded_bias,
                                        const struct WgcTensor *residual,
                                        const struct WgcTensor *out);

/**
 * Fold an inference batch norm into the convolution before it, so that
 * `wgc_op_conv2d(x, weight_out, bias_out)` computes
 * `batch_norm(conv2d(x, weight, bias))` (running statistics) in one pass:
 * with `s[o] = bn_weight[o] / sqrt(running_var[o] + eps)`,
 * `weight_out[o, ...] = weight[o, ...] * s[o]` and
 * `bias_out[o] = (bias[o] - running_mean[o]) / sqrt(running_var[o] + eps) *
 * bn_weight[o] + bn_bias[o]` (batch norm's own operations in its order,
 * in f32, rounded once to the dtype).
 *
 * `weight` is the convolution's (O, C/groups, KH, KW) weight in any
 * strides (channels-last included), `bias` its (O) bias or NULL (0);
 * `running_mean`, `running_var` (required), `bn_weight` and `bn_bias`
 * (NULL: 1 and 0) have shape (O). `weight_out` has `weight`'s shape (any
 * strides: the folded weight keeps its layout where given the same
 * strides), `bias_out` shape (O). All f32, or all f16 on adapters with f16
 * shaders. Call once per layer (weights and statistics are constant in
 * inference) and keep the two outputs: they are the caller's tensors.
 *
 * Numerics: each folded weight is rounded once (f32: relative 2^-24; f16:
 * 2^-11), so the folded convolution differs from convolution then batch
 * norm by the convolution's own bound (see `wgc_op_conv2d`) taken with
 * `max|weight_out|`, plus the folded bias's one rounding; tested in f32
 * within `1e-5 * (1 + sqrt(K)) * max|x| * max|weight_out| + 1e-6 * |ref|`
 * with K = C/groups*KH*KW, and in f16 with `2^-10 * |ref|` more. Where
 * `running_var + eps` is 0 the scale is infinite, as batch norm's; NaN
 * statistics give NaN weights and bias for that channel.
 *
 * Records two launches on `stream`; does not block. Statuses:
 * `WGC_ERROR_NULL_POINTER` (NULL stream, weight, running_mean,
 * running_var, weight_out or bias_out), `WGC_ERROR_SHAPE_MISMATCH`
 * (weight not of rank 4, or a vector or output of the wrong shape),
 * `WGC_ERROR_DTYPE_MISMATCH` (operands of different dtypes),
 * `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 without f16 shaders),
 * `WGC_ERROR_INVALID_ARGUMENT` (eps negative or not finite; an output
 * overlapping an input, the other output, or itself),
 * `WGC_ERROR_OUT_OF_RANGE` (a view outside its buffer),
 * `WGC_ERROR_TOO_LARGE` (weights spanning past 2^31-1 elements),
 * `WGC_ERROR_DEVICE_MISMATCH`. Nothing is recorded on failure.
 */
WgcStatus wgc_conv2d_fold_batch_norm(const struct WgcStream *stream,
                                     const struct WgcTensor *weight,
                                     const struct WgcTensor *bias,
                                     const struct WgcTensor *running_mean,
                                     const struct WgcTensor *running_var,
                                     const struct WgcTensor *bn_weight,
                                     const struct WgcTensor *bn_bias,
                                     float eps,
                                     const struct WgcTensor *weight_out,
                                     const struct WgcTensor *bias_out);

/**
 * A GEMM with its epilogue fused: for every batch matrix,
 *
 * ```text
 * y = alpha * op(a) @ op(b)             (as wgc_op_gemm, beta 0)
 * y = y * scale[n]                      (scale NULL: 1)
 * y = y + bias[n]                       (bias NULL: 0)
 * y = y + residual    (residual_position BEFORE_ACTIVATION; residual NULL: 0)
 * y = activation(y)                     (a WgcActivation)
 * y = y + residual    (residual_position AFTER_ACTIVATION)
 * c = y rounded once to c's dtype
 * ```
 *
 * PyTorch's `act(F.linear(x, w, b))` is `a` = x (M, K), `b` = w (N, K)
 * with `transpose_b`, `bias` = b. Shapes and dtypes of `a`, `b`, `c`,
 * broadcasting of batch dims, transposes and views as for `wgc_op_gemm`
 * (f32, f16 or bf16 operands; `c` f32 or the operands' dtype, but not
 * bf16); `bias` and `scale` are (N) views and `residual` a view of `c`'s
 * shape, in any strides (zero strides included), all of `c`'s dtype.
 * `c` must not overlap any operand.
 *
 * The epilogue is computed in f32 on the product's f32 accumulator, and
 * the result is rounded once to `c`'s dtype, wherever the route applies
 * it: in the kernel that stores C (the tensor-core kernels), in
 * the split-K pass, or, for the other routes (the tiled kernel included),
 * one extra pass over the product held in f32 scratch
 * (`wgc_op_gemm_epilogue_explain` says which). Accuracy: the product's
 * (`wgc_op_gemm`), then the activation's as `wgc_op_unary` computes it
 * into f32 (exact for RELU and RELU6); NaN and inf propagate as there
 * (an inf product through GELU or SILU gives what PyTorch gives).
 *
 * Records work on `stream` without blocking. Statuses:
 * `WGC_ERROR_NULL_POINTER` (NULL stream, params, a, b or c),
 * `WGC_ERROR_INVALID_ARGUMENT` (`struct_size` < 4 or ending inside a
 * field; an unknown activation or residual position; `c` overlapping an
 * operand), `WGC_ERROR_DTYPE_MISMATCH` (a and b differ, c neither f32 nor
 * their dtype, bias/scale/residual not c's dtype), `WGC_ERROR_UNSUPPORTED`
 * (integer operands, a bf16 c, bf16 on an adapter without it),
 * `WGC_ERROR_SHAPE_MISMATCH` (as `wgc_op_gemm`; bias or scale not (N),
 * residual not c's shape), `WGC_ERROR_TOO_LARGE`,
 * `WGC_ERROR_DEVICE_MISMATCH`. Nothing is recorded on failure.
 *
 * # Safety
 * Pointers are NULL or valid for reads; tensors describe live buffers.
 */
WgcStatus wgc_op_gemm_epilogue(const struct WgcStream *stream,
                               const struct WgcGemmEpilogueParams *params,
                               const struct WgcTensor *a,
                               const struct WgcTensor *b,
                               const struct WgcTensor *bias,
                               const struct WgcTensor *scale,
                               const struct WgcTensor *residual,
                               const struct WgcTensor *c);

/**
 * Describe, without recording anything, how `wgc_op_gemm_epilogue` with
 * the same arguments would run: one line, "route <kernel> ... because
 * <why>; epilogue <where> (m=.. n=.. k=.. batch=..)", where the epilogue
 * is "fused in the route's kernel", "fused in the split-K pass" or
 * "applied by one pass over the product in f32 scratch" (the route then
 * reads "into f32 scratch, then the epilogue pass"). The wording is for
 * people and logs and may change.
 *
 * Writes the line, NUL-terminated, into `buf` if it fits in `buf_len`
 * bytes, and its length without the NUL into `*out_len` either way (`buf`
 * NULL with `buf_len` 0 asks for the length); a nonzero `buf_len` too
 * small gives `WGC_ERROR_TOO_LARGE` and leaves `buf` alone. Statuses:
 * those of `wgc_op_gemm_epilogue` for the same arguments, and
 * `WGC_ERROR_NULL_POINTER` for a NULL `out_len` (or NULL `buf` with a
 * nonzero `buf_len`). Does not block; any thread.
 *
 * # Safety
 * As `wgc_op_gemm_epilogue`; `buf` valid for `buf_len` bytes.
 */
WgcStatus wgc_op_gemm_epilogue_explain(const struct WgcStream *stream,
                                       const struct WgcGemmEpilogueParams *params,
                                       const struct WgcTensor *a,
                                       const struct WgcTensor *b,
                                       const struct WgcTensor *bias,
                                       const struct WgcTensor *scale,
                                       const struct WgcTensor *residual,
                                       const struct WgcTensor *c,
                                       char *buf,
                                       size_t buf_len,
                                       size_t *out_len);

/**
 * Which route copies from `src` to `dst` take (`*route`): `Imported`
 * where both devices import host memory, else `Staged`. The same device
 * twice answers as for two devices of its kind. Statuses:
 * `WGC_ERROR_NULL_POINTER`. Any thread.
 */
WgcStatus wgc_device_peer_route(const struct WgcDevice *src,
                                const struct WgcDevice *dst,
                                WgcPeerRoute *route);

/**
 * Copy `size` bytes from `src` at `src_offset` (a buffer of `src_stream`'s
 * device) to `dst` at `dst_offset` (a buffer of `dst_stream`'s device),
 * usually on another device. Vulkan has no memory shared between devices,
 * so the bytes go through host memory in chunks (16 MiB; the source
 * device's setting `WGC_PEER_CHUNK_KIB` changes it, docs/TUNING.md), pipelined so that the read-back
 * of one chunk overlaps the upload of the one before: through one host
 * allocation both devices import where they can, else through staging
 * buffers and a host copy (`wgc_device_peer_route` tells which).
 *
 * Ordering: the bytes are read after all work recorded on `src_stream`
 * before this call, and written before all work recorded on `dst_stream`
 * after it (and after the work recorded there before it). Nothing is
 * ordered with other streams: record the producer on `src_stream` (or wait
 * on an event of its stream first) and the consumer on `dst_stream`. Both
 * streams may be the same device's (even the same stream: then the copy is
 * recorded there like `wgc_stream_copy` and nothing blocks).
 *
 * Blocks until the source's work so far has run and the last chunk has
 * been read back and handed to the destination's queue; it does not wait
 * for the upload to run. Both streams are submitted (flushed) by the call.
 * Threads: the two streams are used by this call, so no other thread may
 * record on them meanwhile (the calls would be serialized, their order
 * unspecified).
 *
 * Statuses: `WGC_ERROR_NULL_POINTER`; `WGC_ERROR_DEVICE_MISMATCH` (a
 * buffer not of its stream's device); `WGC_ERROR_OUT_OF_RANGE`;
 * `WGC_ERROR_ALIGNMENT` (offsets and size must be multiples of 4);
 * `WGC_ERROR_INVALID_ARGUMENT` (overlapping ranges of one buffer);
 * `WGC_ERROR_OUT_OF_MEMORY` (staging buffers); `WGC_ERROR_DEVICE_LOST`
 * when either device is lost or destroyed, before or during the copy, and
 * `WGC_ERROR_TIMEOUT` when a chunk does not arrive within the device's GPU
 * timeout (60 s when none is set): the call returns, it does not hang, and
 * the destination range is then unspecified. Size 0 does nothing.
 */
WgcStatus wgc_buffer_copy_to_device(const struct WgcStream *src_stream,
                                    const struct WgcBuffer *src,
                                    uint64_t src_offset,
                                    const struct WgcStream *dst_stream,
                                    const struct WgcBuffer *dst,
                                    uint64_t dst_offset,
                                    uint64_t size);

/**
 * Copy the view `src` (on `src_stream`'s device) into the view `dst` (on
 * `dst_stream`'s device) of the same shape and dtype: any strides, offsets
 * and dtypes (bf16 and odd-length f16 included). Views that are not one
 * contiguous 4-byte-aligned range are first made contiguous in scratch on
 * their own device (a kernel recorded on their stream). Ordering, blocking,
 * threads, device loss: as `wgc_buffer_copy_to_device`.
 * `WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`,
 * `WGC_ERROR_DEVICE_MISMATCH`, `WGC_ERROR_INVALID_ARGUMENT` (a destination
 * whose elements share memory, or that overlaps `src` on one device), the
 * view errors of `WgcTensor`. Empty views do nothing.
 */
WgcStatus wgc_tensor_copy_to_device(const struct WgcStream *src_stream,
                                    const struct WgcTensor *src,
                                    const struct WgcStream *dst_stream,
                                    const struct WgcTensor *dst);

/**
 * Turn the profiler of `stream` on (`enabled` 1) or off (0). While on,
 * every launch and copy recorded on the stream (by operators, by
 * `wgc_stream_launch`, `wgc_stream_copy_buffer`, `wgc_stream_fill_buffer`)
 * gets a `WgcProfileRecord`, with GPU timestamps written just before and
 * after it where the adapter has timestamp queries
 * (`WgcAdapterInfo.has_timestamps`); elsewhere the records carry names,
 * shapes and sizes and say `WGC_PROFILE_TIME_NO_TIMESTAMPS`. Off by default;
 * while off, recording costs one branch and nothing is allocated.
 * Turning it off keeps the records made so far; turning it on again adds
 * to them (`wgc_stream_profile_clear` forgets them).
 *
 * Timing changes what is timed a little: each command gets two timestamp
 * writes (on most GPUs a few hundred nanoseconds), the GPU may not overlap
 * consecutive commands across them, and a batch flushes after 256 timed
 * commands. Times are per command, so work that overlaps on the GPU is
 * counted in each. Records grow until cleared (about 200 bytes a command).
 * With the autotuner on, the first call of a shape class also records the
 * runs of the candidates it times, under that call.
 *
 * `WGC_ERROR_NULL_POINTER` (stream), `WGC_ERROR_INVALID_ARGUMENT`
 * (`enabled` not 0 or 1), `WGC_ERROR_DEVICE_LOST`. Does not block.
 *
 * # Safety
 * `stream` must be NULL or a live stream handle.
 */
WgcStatus wgc_stream_set_profiling(const struct WgcStream *stream, uint32_t enabled);

/**
 * Forget the stream's profile records (the profiler stays on or off as it
 * was). Arrays already returned by `wgc_stream_profile_records` are not
 * affected. `WGC_ERROR_NULL_POINTER`. Does not block.
 *
 * # Safety
 * `stream` must be NULL or a live stream handle.
 */
WgcStatus wgc_stream_profile_clear(const struct WgcStream *stream);

/**
 * The profile records of `stream`, one per command, in recorded order,
 * since profiling was first turned on or last cleared (none if it never
 * was). Submits what the stream has recorded and **blocks** until it has
 * run, then reads the GPU timestamps back; an error of that work is kept
 * for the stream's next flush or synchronize, as a host read does.
 *
 * On success `*out_records` points to an array of `*out_count` records
 * that the caller owns and must free with `wgc_profile_records_free` (it
 * stays valid after the stream is released or cleared); with no records
 * it is NULL and the count 0. Taking the records does not clear them.
 *
 * `WGC_ERROR_NULL_POINTER` (stream or an out-parameter),
 * `WGC_ERROR_DEVICE_LOST`, `WGC_ERROR_TIMEOUT`.
 *
 * # Safety
 * `stream` must be NULL or a live stream handle; the out-parameters NULL
 * or valid for writes.
 */
WgcStatus wgc_stream_profile_records(const struct WgcStream *stream,
                                     struct WgcProfileRecord **out_records,
                                     size_t *out_count);

/**
 * Free an array from `wgc_stream_profile_records` (its strings included).
 * NULL does nothing. A pointer that is not such an array, or one already
 * freed, fails with `WGC_ERROR_INVALID_ARGUMENT` and frees nothing. Any
 * thread.
 *
 * # Safety
 * None beyond passing a pointer value; it is not dereferenced.
 */
WgcStatus wgc_profile_records_free(struct WgcProfileRecord *records);

/**
 * Summarise `count` records (from `wgc_stream_profile_records`, or any
 * array of them the caller made) as a text table like torch.profiler's:
 * one row per operator name (`WGC_PROFILE_GROUP_BY_OPERATOR`) or per
 * kernel variant (`WGC_PROFILE_GROUP_BY_KERNEL`), with calls, commands,
 * total, share and mean GPU time, mean host time per call, and achieved
 * GFLOP/s and GB/s (from the calls' FLOPs and bytes over their GPU time),
 * sorted by total GPU time (by command count where no time was measured),
 * at most `max_rows` rows (0: all), then a total row. A row whose
 * commands were not all measured shows `-` for its times and says why
 * below the table; no time is ever estimated.
 *
 * Writes the table, NUL-terminated, into `text` if it fits in `capacity`
 * bytes, and its length without the NUL into `*out_length` either way
 * (`text` NULL with `capacity` 0 asks for the length: `WGC_OK`); with a
 * nonzero `capacity` that is too small it returns `WGC_ERROR_TOO_LARGE`
 * and writes nothing into `text`. `WGC_ERROR_NULL_POINTER` (`records` NULL with a
 * nonzero count, a NULL `out_length`, NULL `text` with a nonzero
 * capacity), `WGC_ERROR_INVALID_ARGUMENT` (an unknown group). Does not
 * block; any thread.
 *
 * # Safety
 * `records` must point to `count` records whose strings are NULL or
 * NUL-terminated; `text` must be valid for `capacity` bytes.
 */
WgcStatus wgc_profile_table(const struct WgcProfileRecord *records,
                            size_t count,
                            uint32_t group,
                            uint32_t max_rows,
                            char *text,
                            size_t capacity,
                            size_t *out_length);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* WGCOMPUTE_H */
