//! Matrix products.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::ops::gemm as matmul;
use crate::ops::profile_call;

/// General matrix product: `c = alpha * op(a) op(b) + beta * c`, where
/// `op(x)` swaps the last two dims of `x` when its `transpose_*` flag is
/// non-zero. op(a) is (..., M, K), op(b) is (..., K, N); their batch dims
/// (all but the last two) broadcast as in NumPy, and `c` must have exactly
/// the broadcast batch shape followed by (M, N). All three need at least
/// two dims. `c` is read (when `beta != 0`) and written; with `beta == 0` its
/// old contents are ignored, NaN included. Any strides work; views whose
/// last two dims are row- or column-major (plain or transposed) are fastest.
///
/// Dtypes: f32 x f32 -> f32; f16 x f16 -> f32 or f16; bf16 x bf16 -> f32
/// or bf16. Products are accumulated in f32 on every path: where no bf16
/// tensor cores take them, bf16 operands are widened to f32 as they load
/// (2 bytes an element read), and a bf16 C is computed into f32 scratch
/// and rounded once into C (2^-8 relative added to the f32 accuracy).
///
/// Accumulation and accuracy: each workgroup sums at most 16,384 products
/// along K, one f32 fused multiply-add at a time; a longer K is split into
/// such runs, whose sums go to f32 scratch (the output's size per run, up
/// to 256 MiB at once; beyond, the runs go in waves) and a second pass adds
/// them in order, then applies alpha and beta. Products with too few output
/// tiles to fill the GPU cut K into more runs likewise (runs of at least
/// 256, as many as the device's compute units take at once). Any K works,
/// on software drivers that cap shader loops too. Results (f32) are within
/// about (min(K, 16384) + runs) * 2^-24 * sum_k |a_mk * b_kn| of exact in
/// the worst case; in practice within 1e-6 * K * max|a| * max|b|, long
/// same-sign sums included (tested at K = 600,000). f16 results add the
/// f16 rounding of the output. Every kernel below keeps this accumulation
/// and bound.
///
/// Kernels (the library chooses; the result differs only within the bound):
/// - f16 and bf16 products on tensor cores, on adapters with 16x16x16
///   cooperative matrices and 32-wide subgroups
///   (`WgcAdapterInfo.has_cooperative_matrix`; bf16 needs Vulkan's
///   VK_KHR_shader_bfloat16), wherever each operand has a unit stride
///   along one of its two dims and the other stride, the offsets, the
///   batch strides and the unit-stride dim's size are multiples of 8
///   (16-byte loads). On Vulkan with SPIR-V passthrough the kernels are
///   SPIR-V on VK_KHR_cooperative_matrix (K of 512 or more) or
///   VK_NV_cooperative_matrix2 (some skinny products, where the driver
///   has it); elsewhere WGSL (f16 only). Large f16 and bf16 products the tensor cores cannot
///   read so (K or N not a multiple of 8, say) are first copied into
///   aligned scratch, K padded with zeros to a multiple of 8: the padding
///   adds only 0 * 0 terms, so results, NaN and inf included, are those
///   over K; the copies cost a pass over A and B and scratch of their size.
/// - f16 and bf16 products of 3 to 32 rows (M) with A dense along K, on the
///   same Vulkan adapters: a skinny tensor-core kernel that reads the weight
///   once.
/// - f32 products of 9 to 32 rows (M, or N: the transposed product) with no
///   batch and a weight dense along one dim (sizes and strides multiples
///   of 4): a kernel that takes every row at once.
/// - Other skinny products (M or N at most 32, per batch matrix or with a
///   batch over one shared b folded into M) whose larger operand has a unit
///   stride along K or its other dim: matrix-vector kernels that read it
///   once per 8 rows, coalesced, in interleaved f32 partial sums added in
///   order in groups (the bound above holds).
/// - Everything else: the tiled kernel (f32 FMAs; blocks of 64 or 128).
///
/// Fastest with M and N multiples of 128 and K of 32 (no partial tiles).
/// docs/TUNING.md lists the environment variables that fix one of these
/// choices or their targets, for comparisons; a device reads them when it
/// is created.
///
/// Records work on `stream` and returns without blocking. Releasing a
/// tensor's buffer afterwards is safe: the recorded work keeps what it uses.
///
/// Statuses: `WGC_ERROR_NULL_POINTER` (NULL stream or tensor),
/// `WGC_ERROR_DTYPE_MISMATCH` (a and b differ, or an output other than f32
/// or the inputs' dtype), `WGC_ERROR_UNSUPPORTED` (integer dtypes; f16 on an adapter
/// without f16), `WGC_ERROR_SHAPE_MISMATCH` (rank < 2, inner dims differ,
/// batch dims that do not broadcast, `c` of the wrong shape),
/// `WGC_ERROR_INVALID_ARGUMENT` (`c` overlaps or shares a buffer with an
/// input, or has a zero stride), `WGC_ERROR_OUT_OF_RANGE` (a view outside
/// its buffer), `WGC_ERROR_TOO_LARGE` (more than
/// `max_compute_workgroups_per_dimension` batch matrices, K past 2^31-1
/// through zero strides, or K over 16,384 with an output whose f32 copy
/// exceeds the adapter's storage binding size),
/// `WGC_ERROR_OUT_OF_MEMORY` (scratch for runs of K or for aligned copies
/// that the device cannot allocate), `WGC_ERROR_DEVICE_MISMATCH`. Nothing
/// is recorded on failure.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_op_gemm(
    stream: *const WgcStream,
    alpha: f32,
    a: *const WgcTensor,
    transpose_a: u32,
    b: *const WgcTensor,
    transpose_b: u32,
    beta: f32,
    c: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let a = unsafe { tensor(a, "a") }?;
        let b = unsafe { tensor(b, "b") }?;
        let c = unsafe { tensor(c, "c") }?;
        let _call = profile_op!(
            s,
            "gemm",
            [&a, &b],
            [&c],
            profile_call::product_flops(&c, profile_call::inner_dim(&a, transpose_a != 0))
        );
        matmul::gemm(s, alpha, &a, transpose_a != 0, &b, transpose_b != 0, beta, &c)
    })
}

/// NumPy `matmul`: `out = a @ b`. Like `wgc_op_gemm` with alpha 1, beta 0
/// and no transposes, and also accepting 1-D operands: a 1-D `a` (K) is a
/// row vector and a 1-D `b` (K) a column vector, whose dim is then absent
/// from `out` (matrix-vector gives (..., M), vector-matrix (..., N), vector-
/// vector a 0-D scalar). Dtypes, accuracy, blocking and statuses as for
/// `wgc_op_gemm` (rank 0 operands give `WGC_ERROR_SHAPE_MISMATCH`).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_matmul(
    stream: *const WgcStream,
    a: *const WgcTensor,
    b: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let a = unsafe { tensor(a, "a") }?;
        let b = unsafe { tensor(b, "b") }?;
        let out = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(
            s,
            "matmul",
            [&a, &b],
            [&out],
            profile_call::product_flops(&out, profile_call::inner_dim(&a, false))
        );
        matmul::matmul(s, &a, &b, &out)
    })
}
