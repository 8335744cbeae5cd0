//! Elementwise operators and random tensors.
//!
//! Common rules: tensors are views (`WgcTensor`) on buffers of the stream's
//! device; inputs broadcast with NumPy rules and the output's shape must be
//! the broadcast shape (`WGC_ERROR_SHAPE_MISMATCH`). The output may be the
//! very same view as an input (in place); an output that overlaps an input
//! without being the same view, or whose elements share memory (a 0 stride),
//! fails with `WGC_ERROR_INVALID_ARGUMENT`. Every check runs before anything
//! is recorded. Empty tensors succeed and launch nothing. None of these
//! functions blocks: the work is recorded on the stream.
//! Other statuses: `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_OUT_OF_RANGE` (a view
//! past its buffer), `WGC_ERROR_DEVICE_MISMATCH`, `WGC_ERROR_UNSUPPORTED`
//! (a dtype the op does not support, or f16 on an adapter without it).

use super::boundary::{borrow, run};
use super::profile::lower;
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::ops::elementwise::{self as ew, BinaryOp, UnaryOp};
use crate::ops::random::{random, Distribution};

/// out = a OP b with broadcasting; `op` is a `WgcBinaryOp` value. a and b have the same dtype (f32, f16,
/// bf16, i32, u32; `WGC_ERROR_DTYPE_MISMATCH` otherwise); out has that dtype, or
/// U32 (0/1) for comparisons. Integer arithmetic wraps. POW on integers:
/// `WGC_ERROR_UNSUPPORTED`. Unknown op: `WGC_ERROR_INVALID_ARGUMENT`.
///
/// Rules common to every `wgc_op_*` function (elementwise, movement,
/// random): tensors are views on buffers of the stream's device
/// (`WGC_ERROR_DEVICE_MISMATCH`); inputs broadcast with NumPy rules and out's
/// shape must be the broadcast shape (`WGC_ERROR_SHAPE_MISMATCH`). out may
/// be the very same view as an input (in place); out overlapping an input
/// without being the same view (judged by byte range), or out having
/// elements that share memory (a 0 stride), is `WGC_ERROR_INVALID_ARGUMENT`.
/// NULL pointers: `WGC_ERROR_NULL_POINTER`; a view reaching outside its
/// buffer: `WGC_ERROR_OUT_OF_RANGE`; an unsupported dtype, or f16 on an
/// adapter without it: `WGC_ERROR_UNSUPPORTED`. Everything is checked before
/// anything is recorded, so a failed call writes nothing. Empty tensors
/// succeed and launch nothing. Nothing blocks: the work is recorded on the
/// stream. f16 tolerances: about 2 half ulps (2e-3 relative).
///
/// bf16 (every elementwise operator that takes f16, and cast, copy, fill,
/// arange): computed in f32 and rounded once (header's Numerics section);
/// tolerances those of f32 plus 2^-8 relative. bf16 operands and a bf16
/// output whose views have vec4 units (dense, or dense rows with 4-aligned
/// sizes and offsets) run in kernels that read and write bf16 words
/// directly; other layouts, mixed dtypes and tails of fewer than 4
/// elements are computed through f32 scratch on the GPU (bf16 inputs
/// widened, the f32 kernel, the result rounded into out), which costs about
/// three times the memory traffic. WGC_ERROR_TOO_LARGE or
/// WGC_ERROR_OUT_OF_MEMORY where that scratch does not fit.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_binary(
    stream: *const WgcStream,
    op: u32,
    a: *const WgcTensor,
    b: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let op = BinaryOp::from_u32(op)?;
        let (a, b, out) = unsafe { (tensor(a, "a")?, tensor(b, "b")?, tensor(out, "out")?) };
        let _call = profile_op!(s, format!("binary.{}", lower(op)), [&a, &b], [&out], out.numel() as u64);
        ew::binary(s, op, &a, &b, &out)
    })
}

/// out = a OP scalar, as `wgc_op_binary` with b a scalar converted to a's
/// dtype (floats: rounded once to nearest even, f16 directly from the
/// double, +-inf beyond the range; integers: truncated toward zero and
/// saturated to the type's range, NaN -> 0).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_binary_scalar(
    stream: *const WgcStream,
    op: u32,
    a: *const WgcTensor,
    scalar: f64,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let op = BinaryOp::from_u32(op)?;
        let (a, out) = unsafe { (tensor(a, "a")?, tensor(out, "out")?) };
        let _call = profile_op!(s, format!("binary_scalar.{}", lower(op)), [&a], [&out], out.numel() as u64);
        ew::binary_scalar(s, op, &a, scalar, &out)
    })
}

/// out = OP(in); in and out have the same dtype and shape (see `WgcUnaryOp`
/// for dtypes and accuracy).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_unary(
    stream: *const WgcStream,
    op: u32,
    input: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let op = UnaryOp::from_u32(op)?;
        let (a, out) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, format!("unary.{}", lower(op)), [&a], [&out], out.numel() as u64);
        ew::unary(s, op, &a, &out)
    })
}

/// out = in >= 0 ? in : in * slope. f32, f16 and bf16 (computed in f32 with the
/// f32 slope, then rounded once); NaN stays NaN.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_leaky_relu(
    stream: *const WgcStream,
    input: *const WgcTensor,
    slope: f32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (a, out) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "leaky_relu", [&a], [&out], out.numel() as u64);
        ew::leaky_relu(s, &a, slope, &out)
    })
}

/// out = min(max(in, lo), hi) for every dtype; lo and hi are converted to
/// the dtype as in `wgc_op_binary_scalar`. lo > hi gives hi. A NaN element
/// stays NaN. NaN bounds: `WGC_ERROR_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_clamp(
    stream: *const WgcStream,
    input: *const WgcTensor,
    lo: f64,
    hi: f64,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (a, out) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "clamp", [&a], [&out], out.numel() as u64);
        ew::clamp(s, &a, lo, hi, &out)
    })
}

/// out = a * b + c, all four broadcast, one dtype. Floats use a fused
/// multiply-add (one rounding where the adapter fuses); integers wrap.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_fma(
    stream: *const WgcStream,
    a: *const WgcTensor,
    b: *const WgcTensor,
    c: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (a, b, c, out) = unsafe { (tensor(a, "a")?, tensor(b, "b")?, tensor(c, "c")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "fma", [&a, &b, &c], [&out], 2 * out.numel() as u64);
        ew::fma(s, &a, &b, &c, &out)
    })
}

/// out = mask != 0 ? a : b, all four broadcast. mask is U32; a, b and out
/// share one dtype (any).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_where(
    stream: *const WgcStream,
    mask: *const WgcTensor,
    a: *const WgcTensor,
    b: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (m, a, b, out) = unsafe { (tensor(mask, "mask")?, tensor(a, "a")?, tensor(b, "b")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "where", [&m, &a, &b], [&out], 0);
        ew::where_(s, &m, &a, &b, &out)
    })
}

/// Fill out (f32 or f16, any view) with uniform numbers in [lo, hi) from
/// Philox4x32-10: logical element i (row-major) is 32-bit word i % 4 of
/// the block for counter `offset + i / 4` (a 128-bit counter with the upper
/// 64 bits 0) under key `seed`; the word w becomes u = (w >> 8) * 2^-24 and
/// then lo + (hi - lo) * u in f32 (which can round up to hi). The integer
/// stream and u are bit-identical on every adapter. To continue a sequence,
/// advance `offset` by ceil(n / 4). lo == hi fills with lo. As PyTorch's
/// uniform_, lo > hi, a bound outside the dtype's finite range, or hi - lo
/// beyond it (3.4e38 for f32, 65504 for f16) is
/// `WGC_ERROR_INVALID_ARGUMENT`, and so are non-finite lo/hi; integer
/// dtypes: `WGC_ERROR_UNSUPPORTED`.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_random_uniform(
    stream: *const WgcStream,
    out: *const WgcTensor,
    seed: u64,
    offset: u64,
    lo: f64,
    hi: f64,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let out = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "random_uniform", [], [&out], 0);
        random(s, &out, Distribution::Uniform, seed, offset, lo, hi)
    })
}

/// Fill out (f32 or f16, any view) with normal numbers: the Philox block of
/// counter `offset + i / 4` (as in `wgc_op_random_uniform`) gives words
/// w0..w3; u1 = ((w0 >> 8) + 1) 2^-24, u2 = (w1 >> 8) 2^-24, and elements
/// 4k, 4k+1 are mean + std * sqrt(-2 ln u1) * (cos, sin)(2 pi u2); elements
/// 4k+2, 4k+3 likewise from w2, w3. The integers are identical everywhere;
/// the floats depend on the adapter's log/sin/cos (about 1e-6 relative).
/// std < 0 or non-finite parameters: `WGC_ERROR_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_random_normal(
    stream: *const WgcStream,
    out: *const WgcTensor,
    seed: u64,
    offset: u64,
    mean: f64,
    std: f64,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let out = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "random_normal", [], [&out], 0);
        random(s, &out, Distribution::Normal, seed, offset, mean, std)
    })
}
