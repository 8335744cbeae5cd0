//! Normalisation operators as C sees them.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Result;
use crate::ops::norm::batch::batch_norm;
use crate::ops::norm::norm;
use crate::ops::tensor::Tensor;

/// An optional tensor argument: NULL means absent.
unsafe fn optional<'a>(t: *const WgcTensor, what: &str) -> Result<Option<Tensor<'a>>> {
    if t.is_null() {
        Ok(None)
    } else {
        Ok(Some(unsafe { tensor(t, what) }?))
    }
}

/// Layer norm over the last `normalized_dims` dims of `in`:
/// `out = (x - mean) / sqrt(var + eps) * weight + bias`, with the biased
/// variance (divide by n), as torch.nn.functional.layer_norm.
/// `weight` and `bias` (each may be NULL: 1 and 0) have exactly the shape of
/// those dims and `in`'s dtype. `out` has `in`'s shape and dtype and its own
/// buffer (sharing a buffer with any input, or elements that share memory:
/// a zero stride or strides that interleave: WGC_ERROR_INVALID_ARGUMENT).
/// f32 and f16 (statistics in f32); others: WGC_ERROR_UNSUPPORTED.
/// `normalized_dims` in [1, rank]; `eps` finite and >= 0.
/// Statistics are two-pass, in f32: the mean, then the sum of squared
/// deviations from it. A NaN in a row makes that row NaN.
/// Rows of up to 256 elements whose normalised dims merge into one strided
/// dim are read once, many rows per workgroup; their mean gets one
/// correction step (the mean deviation from it), so a row of equal values
/// normalises to exactly 0 (`out` = `bias`).
/// Contiguous rows of up to 16384 elements are read once. Rows longer than
/// 262,144 elements (strided) or 1,048,576 (contiguous) are cut into chunks
/// of one workgroup each, whose means and squared deviations are combined
/// exactly (Chan et al.) before a second pass writes; any length works, on
/// software drivers that cap shader loops too. Accuracy: ~1e-5 relative
/// (f32); f16: rounding of the result.
/// Statuses: WGC_ERROR_INVALID_ARGUMENT, WGC_ERROR_SHAPE_MISMATCH,
/// WGC_ERROR_DTYPE_MISMATCH, WGC_ERROR_UNSUPPORTED, WGC_ERROR_OUT_OF_RANGE,
/// WGC_ERROR_NULL_POINTER, WGC_ERROR_DEVICE_MISMATCH; nothing is recorded on
/// failure. Records work on `stream`; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_layer_norm(
    stream: *const WgcStream,
    input: *const WgcTensor,
    weight: *const WgcTensor,
    bias: *const WgcTensor,
    normalized_dims: u32,
    eps: f32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let x = unsafe { tensor(input, "in") }?;
        let w = unsafe { optional(weight, "weight") }?;
        let b = unsafe { optional(bias, "bias") }?;
        let y = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "layer_norm", [&x], [&y], 0);
        norm(s, &x, w.as_ref(), b.as_ref(), normalized_dims, eps, false, &y)
    })
}

/// RMS norm over the last `normalized_dims` dims of `in`:
/// `out = x / sqrt(mean(x^2) + eps) * weight` (`weight` may be NULL: 1).
/// Arguments, dtypes, accuracy and statuses as for `wgc_op_layer_norm`.
/// Records work; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_rms_norm(
    stream: *const WgcStream,
    input: *const WgcTensor,
    weight: *const WgcTensor,
    normalized_dims: u32,
    eps: f32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let x = unsafe { tensor(input, "in") }?;
        let w = unsafe { optional(weight, "weight") }?;
        let y = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "rms_norm", [&x], [&y], 0);
        norm(s, &x, w.as_ref(), None, normalized_dims, eps, true, &y)
    })
}

/// Batch norm, inference form, for `in` of shape (N, C, ...):
/// `out = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]`
/// with c the index along dim 1. `running_mean` and `running_var` are
/// required, `weight` and `bias` may be NULL (1 and 0); all have shape (C)
/// and `in`'s dtype. `out` as for `wgc_op_layer_norm`. f32 and f16.
/// Accuracy: ~1e-6 relative (f32). NaN inputs give NaN; infinite inputs
/// give infinities (NaN where the channel's weight is 0).
///
/// Layouts: `in` and `out` both NCHW-like (each (n, c) plane of the
/// trailing dims contiguous, any N and C strides) or both channels-last
/// (C at unit stride, N and the trailing dims one evenly strided run of
/// rows, as PyTorch's `channels_last`) run a kernel that reads each
/// element once with no index arithmetic per element, 4 elements a load
/// where the plane (or C), the strides and the offsets are multiples of 4;
/// other views run a general kernel. Every route computes
/// `(x - mean) * (1 / sqrt(var + eps)) * weight + bias` in f32 in that
/// order, so results do not depend on the route.
///
/// Statuses as for `wgc_op_layer_norm` (rank below 2:
/// WGC_ERROR_INVALID_ARGUMENT). Records work; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_batch_norm(
    stream: *const WgcStream,
    input: *const WgcTensor,
    running_mean: *const WgcTensor,
    running_var: *const WgcTensor,
    weight: *const WgcTensor,
    bias: *const WgcTensor,
    eps: f32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let x = unsafe { tensor(input, "in") }?;
        let m = unsafe { tensor(running_mean, "running_mean") }?;
        let v = unsafe { tensor(running_var, "running_var") }?;
        let w = unsafe { optional(weight, "weight") }?;
        let b = unsafe { optional(bias, "bias") }?;
        let y = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "batch_norm", [&x], [&y], 0);
        batch_norm(s, &x, &m, &v, w.as_ref(), b.as_ref(), eps, &y)
    })
}
