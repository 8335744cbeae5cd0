//! Norms with a fused residual add, as C sees them.

use super::boundary::{borrow, run};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Result;
use crate::ops::norm::residual::{norm_residual, Residual};
use crate::ops::tensor::Tensor;

unsafe fn optional<'a>(t: *const WgcTensor, what: &str) -> Result<Option<Tensor<'a>>> {
    if t.is_null() {
        Ok(None)
    } else {
        Ok(Some(unsafe { tensor(t, what) }?))
    }
}

/// `sum_out = in + residual` and `out = rms_norm(sum_out)` over the last
/// `normalized_dims` dims, both written: the residual connection and the
/// norm of a transformer layer. `residual` and `sum_out` have `in`'s shape
/// and dtype (`WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`); the
/// add is rounded to the dtype first (as `wgc_op_binary`), then normalised
/// as `wgc_op_rms_norm` normalises. `out` and `sum_out` each need a buffer
/// of their own (sharing one with any input or with each other:
/// `WGC_ERROR_INVALID_ARGUMENT`). Other arguments, dtypes (f32, f16),
/// accuracy and statuses as for `wgc_op_rms_norm`.
///
/// Where every view is dense row-major with 4-aligned offsets, rows of at
/// most 16384 elements and a multiple of 4 long (a contiguous weight),
/// one kernel reads `in` and `residual` once and writes both outputs once;
/// other layouts record the add and then the norm (two launches, the same
/// results). Records work on `stream`; does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_rms_norm_residual(
    stream: *const WgcStream,
    input: *const WgcTensor,
    residual: *const WgcTensor,
    weight: *const WgcTensor,
    normalized_dims: u32,
    eps: f32,
    out: *const WgcTensor,
    sum_out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let st = unsafe { borrow(stream) }?;
        let (x, r) = unsafe { (tensor(input, "in")?, tensor(residual, "residual")?) };
        let w = unsafe { optional(weight, "weight") }?;
        let (y, s) = unsafe { (tensor(out, "out")?, tensor(sum_out, "sum_out")?) };
        let a =
            Residual { x: &x, r: &r, weight: w.as_ref(), bias: None, normalized_dims, eps, rms: true, y: &y, s: &s };
        norm_residual(st, &a)
    })
}

/// `sum_out = in + residual` and `out = layer_norm(sum_out)`, as
/// `wgc_op_rms_norm_residual` with the layer norm (`weight` and `bias` as
/// `wgc_op_layer_norm` takes them).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_layer_norm_residual(
    stream: *const WgcStream,
    input: *const WgcTensor,
    residual: *const WgcTensor,
    weight: *const WgcTensor,
    bias: *const WgcTensor,
    normalized_dims: u32,
    eps: f32,
    out: *const WgcTensor,
    sum_out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let st = unsafe { borrow(stream) }?;
        let (x, r) = unsafe { (tensor(input, "in")?, tensor(residual, "residual")?) };
        let (w, b) = unsafe { (optional(weight, "weight")?, optional(bias, "bias")?) };
        let (y, s) = unsafe { (tensor(out, "out")?, tensor(sum_out, "sum_out")?) };
        let a = Residual {
            x: &x,
            r: &r,
            weight: w.as_ref(),
            bias: b.as_ref(),
            normalized_dims,
            eps,
            rms: false,
            y: &y,
            s: &s,
        };
        norm_residual(st, &a)
    })
}
