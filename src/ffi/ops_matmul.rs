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
/// or bf16 (products accumulated in f32). WGSL has no bf16 arithmetic or
/// bf16 cooperative matrices: except where bf16 tensor cores take them
/// (below), the tiled and skinny kernels read bf16 A and B as 16-bit halves of words and widen them to f32 as they load
/// (2 bytes an element read; the same f32 arithmetic and accuracy as f32
/// operands); a bf16 C is computed into contiguous f32 scratch (C's values
/// copied in where beta reads them) and rounded once into C (2^-8 relative
/// added to the f32 accuracy). Accumulation: each workgroup sums at most 16,384 products along
/// K, one f32 fused multiply-add at a time; a longer K is split into such
/// runs, whose sums go to f32 scratch (the output's size per run, up to
/// 256 MiB at once; beyond, the runs go in waves) and a second pass adds
/// them in order, then applies alpha and beta. A product on the tiled
/// kernel of at most 132 blocks of 64 x 64 (over the batch) likewise cuts a
/// K of 512 or more into runs of at least 256 (about 528 workgroups), and
/// one of 133-264 such blocks with M over 64 takes blocks of 128 x 64 over
/// runs of at least 512 (about 264 workgroups), so that more of the GPU
/// works on it (WGC_GEMM_TILED_FILL=0, read once, keeps one run, for
/// comparisons). Any K works, on software
/// drivers that cap shader loops too. Accuracy (f32 results): within about
/// (min(K, 16384) + runs) * 2^-24 * sum_k |a_mk * b_kn| of exact in the
/// worst case; in practice within 1e-6 * K * max|a| * max|b|, long
/// same-sign sums included (tested at K = 600,000). f16 results add the
/// f16 rounding of the output. On adapters with 16x16x16 f16 cooperative
/// matrices and 32-wide subgroups (`WgcAdapterInfo.has_cooperative_matrix`),
/// f16 x f16 products that are not skinny (below) run on the tensor cores,
/// with the same f32 accumulation, runs of K and epilogue (f32 or f16 C,
/// any alpha and beta, any batch shape, any M, N, K), wherever each
/// operand has a unit stride along one of its two dims (A along K or M, B
/// along N or K, plain or transposed) and the other stride, the offsets,
/// the batch strides and the unit-stride dim's size are multiples of 8
/// (16-byte loads). Other f16 and bf16 products that the tensor cores would
/// take with M and N of at least 64 and 2^30 FLOPs or more (K or N not a
/// multiple of 8, say) are first copied into aligned scratch, each operand
/// dense along M (A) or N (B) where it already is and that dim is a
/// multiple of 8, else dense along K, with K8 = K rounded up to 8 and the
/// padding zero, then run as above over K8: the padding adds only 0 * 0 terms, so
/// results, NaN and inf included, are those over K. The copies cost a pass
/// over A and B and scratch of their size (on an H200 the tiled kernel
/// they replace ran at a sixth of the tensor cores' rate); smaller such
/// products take the tiled kernel. (WGC_GEMM_STAGE, read once: `0` never
/// copies, `always` copies every such product whatever its size and on
/// any adapter, for tests.) Fastest with
/// M and N multiples of 128 and K of 32 (no partial tiles). There, a
/// product of at most 132 blocks of 128 x 128 (over the batch) also cuts a
/// K of 1,024 or more into runs of at least 512, so that more of the GPU
/// works on it; the accuracy bound above holds. (The environment variable
/// WGC_GEMM_SCRATCH_BYTES, for testing, lowers the 256 MiB; read once,
/// WGC_GEMM_COOP=0 sends f16 and bf16 products to the tiled kernel instead,
/// WGC_GEMM_COOP_SPLIT=0 keeps a K of up to 16,384 in one run, and
/// WGC_GEMM_COOP_EPILOGUE=scalar writes an f16 C one element per store
/// rather than two, for comparisons.) On Vulkan adapters with SPIR-V
/// passthrough, f16 16x16x16 cooperative matrices, 32-wide subgroups and
/// 48 KiB of workgroup memory, products with K of 512 or more run a SPIR-V
/// kernel on VK_KHR_cooperative_matrix (faster there than the WGSL one,
/// which the others keep): the same products, accumulation and results;
/// there partial tiles cost about what their FLOPs do (M, N or K off the
/// tile ran as fast per FLOP as whole tiles on an H200).
/// (The environment variable WGC_GEMM_SPIRV, read once, fixes the kernel
/// for comparisons: `0` the WGSL one, `1` the VK_KHR_cooperative_matrix
/// one for every K; WGC_GEMM_SPIRV_STAGES=2 stages its K tiles in two
/// workgroup buffers instead of one. WGC_GEMM_SPIRV=2 runs these products
/// with a SPIR-V kernel on VK_NV_cooperative_matrix2 instead, with the same
/// f32 accumulation and results (alpha, beta and the bias go through f32
/// scratch the size of the output and the second pass);
/// WGC_GEMM_CM2_BLOCK=128x256x64 makes that kernel take blocks of 128 x
/// 256 on 256 invocations rather than 128 x 128.)
/// Vulkan devices are opened with VK_NV_cooperative_matrix2 where the
/// adapter has it (workgroup scope, flexible dimensions listing the
/// kernels' blocks for f16 products into f32, tensor addressing,
/// conversions), unless WGC_GEMM_SPIRV is `0` or `1`
/// (WGC_COOPMAT2_LOG=1 prints the driver's list of blocks to stderr).
/// On the same Vulkan adapters, f16 products of 3 to 32 rows (M) with A
/// dense along K, where each batch matrix has its own b (or there is one),
/// run a SPIR-V kernel for skinny products on VK_KHR_cooperative_matrix
/// instead of the matrix-vector kernels below (a decode step's rows times a
/// weight, either layout): blocks of all the rows by 128 columns and K
/// steps of 32 (64 columns and K steps of 64 for a weight stored (N, K)),
/// K cut into as many runs of at least 256 as one wave of resident
/// workgroups holds (3 or 4 per SM of an H100 or H200), whose f32 sums the
/// second pass adds in order; the same accumulation and bound. On a device opened with
/// VK_NV_cooperative_matrix2, those with a weight stored (K, N), or with
/// 17 rows or more, and no alpha, beta or bias (or K in more than one
/// run) take the same blocks, grid and runs of K on a kernel on that
/// extension instead, whose driver stages the weight (5-10% faster on an
/// H200); the same accumulation and bound. (Read once, for comparisons:
/// WGC_GEMM_SKINNY=0 leaves these products to the kernels below,
/// WGC_GEMM_SKINNY_TILE=n2k32 or n1k64 takes that tile for both layouts,
/// WGC_GEMM_SKINNY_FILL=N aims for N workgroups.)
/// Where those Vulkan adapters also have VK_KHR_shader_bfloat16 with
/// 16x16x16 bf16 cooperative matrices into f32, devices are opened with it
/// and bf16 x bf16 products take the same two SPIR-V kernels as f16 ones
/// (any K; the same layouts, 16-byte alignment, runs of K, skinny rule
/// and epilogue; one K staging buffer), with the same f32 accumulation and
/// bound (a product of two bf16 values is exact in f32); a bf16 C goes
/// through f32 scratch as above. (WGC_GEMM_BF16_COOP=0, read once, opens
/// devices without the extension, for comparisons.)
///
/// f32 products of 9 to 32 rows (M, or N: the transposed product) with no
/// batch (every batch dim 1), where the larger operand has a unit stride
/// along K or along its other dim and that dim's size, the other stride
/// and the offset are multiples of 4, run a kernel that takes every row at
/// once: blocks of all the rows by 128 columns (256 for up to 16 rows), K
/// in runs of at most 4,096 (more, of at least 256 and at most 32 of them,
/// until about 1,056 workgroups run) whose f32 sums the second pass adds in
/// order, then applies alpha and beta; the accuracy bound above holds.
/// (WGC_GEMM_ROWS=0, read once, leaves them to the kernels below;
/// WGC_GEMM_ROWS_FILL=N aims for N workgroups.)
///
/// Other skinny products (M or N at most 32, per batch matrix or with a batch
/// over one shared b folded into M) where the larger operand has a unit
/// stride along K or along its other dim (row-major or transposed, plain or
/// as a view) run on matrix-vector kernels that read that operand once per
/// 8 rows, coalesced; other layouts take the tiled kernel. There each
/// workgroup sums at most 16,384 products along K (4,096 where the large
/// operand's unit stride is not along K) in interleaved f32 partial sums,
/// added in order in groups (8, then 16 where the unit stride is along K;
/// 4 otherwise, 32 for one or two rows against a 16-bit operand read in
/// 16-byte units); more runs (also cut to fill the GPU when the output is
/// small) go to at most 256 MiB of f32 scratch and a second pass adds them
/// in order, then applies alpha and beta. The accuracy bound above holds.
/// With M >= 2 rows and the large operand's unit stride not along K (a
/// weight stored (K, N)), N, that operand's other stride, its offset and
/// batch strides multiples of 4, the rows are staged in workgroup memory
/// (from 3 rows where a 16-bit operand is read in 16-byte units: one or
/// two rows then run as one tile of 64 columns);
/// f32 products stay on these kernels up to 32 rows whatever their width
/// (f16 ones past 8 rows go to the tensor cores where the tiled kernel
/// would be chosen). Where the large operand's unit stride is along K,
/// f32 products stay up to 16 rows and bf16 ones up to 32. (The environment variable WGC_GEMV_AXPY, read once, is for
/// comparisons: `plain` takes the kernels without staging, `staged` stages
/// but leaves products of more than 8 rows wide enough to fill the GPU to
/// the tiled kernel; WGC_GEMV_F16_LOAD=8, read once, keeps 16-bit weights
/// to narrower loads (8 bytes; 4 for a bf16 weight stored (K, N)) where
/// 16-byte ones, of 8 weights, would be taken: the weight's dense dim (N or
/// K), its other stride, the offset and batch strides multiples of 8, any
/// M; WGC_GEMV_NARROW=0, read once, keeps one or two rows against such a
/// (K, N) weight on 256-column workgroups instead of 64-column ones, and
/// WGC_GEMV_NARROW_TILE=1 runs two rows there as two one-row tiles.)
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
