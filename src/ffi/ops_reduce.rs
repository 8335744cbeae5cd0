//! Reductions, variance and softmax as C sees them.

use super::boundary::{borrow, run};
use super::profile::lower;
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::bail;
use crate::error::Result;
use crate::ops::norm::softmax::softmax;
use crate::ops::reduce::{reduce, ReduceOp};

/// Reduction operators of `wgc_op_reduce`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgcReduceOp {
    Sum = 0,
    Mean = 1,
    Max = 2,
    Min = 3,
    Prod = 4,
    Argmax = 5,
    Argmin = 6,
}

/// The number of `WgcReduceOp` values (0 .. WGC_NUM_REDUCE_OPS - 1).
pub const WGC_NUM_REDUCE_OPS: u32 = 7;
// The count names the last op: adding an op means adding it above and here.
const _: () = assert!(WgcReduceOp::Argmin as u32 + 1 == WGC_NUM_REDUCE_OPS);

pub(super) fn reduce_op_of(v: u32) -> Result<ReduceOp> {
    Ok(match v {
        0 => ReduceOp::Sum,
        1 => ReduceOp::Mean,
        2 => ReduceOp::Max,
        3 => ReduceOp::Min,
        4 => ReduceOp::Prod,
        5 => ReduceOp::Argmax,
        6 => ReduceOp::Argmin,
        _ => bail!(InvalidArgument, "unknown reduce op {v}"),
    })
}

/// The axes array of a C call (NULL allowed when `count` is 0).
pub(super) unsafe fn axes_of<'a>(axes: *const i32, count: u32) -> Result<&'a [i32]> {
    if count == 0 {
        return Ok(&[]);
    }
    if axes.is_null() {
        bail!(NullPointer, "axes is NULL but axis_count is {count}");
    }
    if count > 8 {
        bail!(InvalidArgument, "axis_count {count} exceeds WGC_MAX_RANK");
    }
    Ok(unsafe { std::slice::from_raw_parts(axes, count as usize) })
}

unsafe fn reduce_call(
    stream: *const WgcStream,
    op: Result<ReduceOp>,
    input: *const WgcTensor,
    axes: *const i32,
    axis_count: u32,
    keepdim: u32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let op = op?;
        let x = unsafe { tensor(input, "in") }?;
        let y = unsafe { tensor(out, "out") }?;
        let axes = unsafe { axes_of(axes, axis_count) }?;
        let _call = profile_op!(s, format!("reduce.{}", lower(op)), [&x], [&y], 0);
        reduce(s, op, &x, axes, keepdim != 0, &y)
    })
}

/// Reduce `in` over `axes` into `out`.
///
/// `axes` holds `axis_count` Python-style axes (negative counts from the
/// end); `axis_count` 0 (with `axes` NULL allowed) reduces over all axes.
/// `out` has the input's shape with the reduced dims removed (`keepdim` 0;
/// a full reduction gives rank 0) or set to 1 (`keepdim` 1), exactly. A
/// rank-0 input takes no axes. `out` may share `in`'s buffer but not
/// overlap its view, and its elements must not share memory (a zero stride
/// or strides that interleave: WGC_ERROR_INVALID_ARGUMENT).
///
/// Dtypes: SUM, MAX, MIN, PROD take f32, f16, bf16 (both accumulated in
/// f32), i32 and u32 (integer sums and products wrap), and write the
/// input's dtype. MEAN takes f32, f16 and bf16 only (integers:
/// WGC_ERROR_UNSUPPORTED). bf16 inputs are read as bf16 by the row and
/// general kernels (not the column and run kernels named below, which
/// f32 and f16 take), and a bf16 result is computed into f32 scratch and
/// rounded once into out. ARGMAX and
/// ARGMIN take every dtype, reduce one axis (`axis_count` 1) or the
/// flattened tensor (`axis_count` 0: row-major flat index), write i32, and
/// return the first index among equal values. NaN propagates: MAX, MIN,
/// SUM, MEAN and PROD of a set holding NaN are NaN, and ARGMAX and ARGMIN
/// return the index of its first NaN (as PyTorch).
///
/// Empty reduced sets: SUM gives 0, PROD 1, MEAN NaN; MAX, MIN, ARGMAX and
/// ARGMIN fail with WGC_ERROR_INVALID_ARGUMENT.
///
/// Accuracy (f32): float sums are compensated (each partial sum carries its
/// rounding error, and partials merge error-free), so SUM is within
/// 2e-6 * sum|x| of exact at any length and MEAN within 2e-6 * mean|x|;
/// +inf and -inf together give NaN, overflow gives +-inf. PROD: 1e-6 * n
/// relative. f16 and bf16 inputs are accumulated in f32; the result
/// carries the f16 (bf16: 2^-8 relative) rounding.
///
/// Statuses: WGC_ERROR_INVALID_ARGUMENT (unknown op, duplicate or out-of-range
/// axis, several axes for ARG*, empty MAX/MIN/ARG*, out overlapping in),
/// WGC_ERROR_SHAPE_MISMATCH (out shape), WGC_ERROR_DTYPE_MISMATCH (out
/// dtype), WGC_ERROR_UNSUPPORTED, WGC_ERROR_OUT_OF_RANGE (view outside its
/// buffer), WGC_ERROR_NULL_POINTER, WGC_ERROR_DEVICE_MISMATCH. On failure
/// nothing is recorded. Records work on `stream`; does not block.
///
/// Kernels use subgroup operations where the adapter has them; a device
/// created with the environment variable WGC_DISABLE_SUBGROUPS=1 (for
/// testing) takes the workgroup-memory-only kernels for this family
/// (reductions, variance, softmax, layer and RMS norm).
///
/// Reductions whose innermost kept dim is contiguous in `in` (e.g. over
/// the leading axes) take a column kernel: one invocation per output (or
/// four, with vector loads where the view is 4-aligned), the reduced range
/// split into chunks whose partials a second pass merges, with the same
/// accuracy and NaN rules; it uses no subgroup operations.
///
/// Reductions over the last axis of contiguous rows, when one launch fills
/// the GPU (rows of up to 4096 elements, or more than 2048 rows), take one
/// launch with several invocations per row and several rows per workgroup,
/// vector loads at any row alignment; variance and standard deviation read
/// each row twice in that launch (the mean, then the deviations), with the
/// same accuracy and NaN rules.
/// Reductions over several axes whose innermost reduced dim is contiguous
/// in `in` while another reduced dim lies outside a kept one (e.g. axes 0,
/// 2, 3 of NCHW, or 0 and 2 of a 3-D tensor; not ARGMAX / ARGMIN) take a
/// run kernel: a team of invocations per output reads its contiguous runs
/// side by side (vector loads where the view is 4-aligned), outputs with
/// few teams split their runs into chunks merged by a second pass; same
/// accuracy and NaN rules, no subgroup operations.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_reduce(
    stream: *const WgcStream,
    op: u32,
    input: *const WgcTensor,
    axes: *const i32,
    axis_count: u32,
    keepdim: u32,
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe { reduce_call(stream, reduce_op_of(op), input, axes, axis_count, keepdim, out) }
}

/// Variance of `in` over `axes` into `out` (axes, `keepdim` and the out
/// shape as for `wgc_op_reduce`). `unbiased` 1 divides by n - 1 (Bessel),
/// 0 by n; a divisor <= 0 gives NaN, and so does a NaN or infinite
/// element. Two passes over the input: the mean m, then compensated sums
/// S1 of (x - m) and S2 of (x - m)^2, giving (S2 - S1^2 / n) / divisor, in
/// f32; exact whatever m's rounding, so a mean far above the spread costs
/// no accuracy (within 1e-5 relative in f32, measured at mean 1e4 and 1e6
/// with std 1). f32, f16 and bf16 only (others: WGC_ERROR_UNSUPPORTED); out has
/// the input's dtype.
/// Statuses as for `wgc_op_reduce`. Records work; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_var(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axes: *const i32,
    axis_count: u32,
    keepdim: u32,
    unbiased: u32,
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe { reduce_call(stream, Ok(ReduceOp::Var { unbiased: unbiased != 0 }), input, axes, axis_count, keepdim, out) }
}

/// Standard deviation: the square root of `wgc_op_var`, same arguments,
/// dtypes and statuses. Records work; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_std(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axes: *const i32,
    axis_count: u32,
    keepdim: u32,
    unbiased: u32,
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe { reduce_call(stream, Ok(ReduceOp::Std { unbiased: unbiased != 0 }), input, axes, axis_count, keepdim, out) }
}

unsafe fn softmax_call(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axis: i32,
    out: *const WgcTensor,
    log: bool,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let x = unsafe { tensor(input, "in") }?;
        let y = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, if log { "log_softmax" } else { "softmax" }, [&x], [&y], 0);
        softmax(s, &x, axis, log, &y)
    })
}

/// Softmax of `in` along `axis` (Python-style) into `out` (same shape and
/// dtype, in a buffer of its own: sharing `in`'s buffer is
/// WGC_ERROR_INVALID_ARGUMENT, so it is never computed in place).
/// Numerically stable: the row maximum is subtracted before exponentiating.
/// A NaN anywhere in a row makes that whole row NaN, as in PyTorch (so does
/// +inf, through inf - inf; a row of only -inf gives NaN).
/// f32 and f16 (computed in f32); other dtypes: WGC_ERROR_UNSUPPORTED.
/// Rows of up to 256 elements, along any axis, are read once, many rows
/// per workgroup. Longer rows contiguous along `axis` are read once when
/// they fit in registers (up to 16384 elements), else twice; other axes
/// use a strided path. Rows
/// longer than 262,144 elements (strided) or 1,048,576 (contiguous) are cut
/// into chunks of one workgroup each and take a second pass, so any length
/// works, on software drivers that cap shader loops too. So are rows of
/// 32,768 elements or more when there are at most 512 of them, to spread
/// them over enough workgroups.
/// Accuracy: relative error within 1e-5 (f32); f16: rounding of the result.
/// Statuses: WGC_ERROR_INVALID_ARGUMENT (axis, shared buffer, elements of
/// `out` that share memory),
/// WGC_ERROR_SHAPE_MISMATCH, WGC_ERROR_DTYPE_MISMATCH, WGC_ERROR_UNSUPPORTED,
/// WGC_ERROR_OUT_OF_RANGE, WGC_ERROR_NULL_POINTER, WGC_ERROR_DEVICE_MISMATCH.
/// Records work; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_softmax(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axis: i32,
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe { softmax_call(stream, input, axis, out, false) }
}

/// Log-softmax: `(x - max) - log(sum(exp(x - max)))` along `axis`, in that
/// order, so large logits keep their precision: within 2e-6 + 1e-6 * |result|
/// (f32) for logits around 1e4 as around 0. NaN, arguments, dtypes, long rows
/// and statuses as for `wgc_op_softmax`. Records work; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_log_softmax(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axis: i32,
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe { softmax_call(stream, input, axis, out, true) }
}
