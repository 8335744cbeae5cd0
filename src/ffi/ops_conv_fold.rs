//! Folding a batch norm into a convolution, as C sees it.

use super::boundary::{borrow, run};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Result;
use crate::ops::conv::fold_bn::{fold_batch_norm, FoldArgs};
use crate::ops::tensor::Tensor;

/// An optional tensor argument: NULL means absent.
unsafe fn optional<'a>(t: *const WgcTensor, what: &str) -> Result<Option<Tensor<'a>>> {
    if t.is_null() {
        Ok(None)
    } else {
        unsafe { tensor(t, what) }.map(Some)
    }
}

/// Fold an inference batch norm into the convolution before it, so that
/// `wgc_op_conv2d(x, weight_out, bias_out)` computes
/// `batch_norm(conv2d(x, weight, bias))` (running statistics) in one pass:
/// with `s[o] = bn_weight[o] / sqrt(running_var[o] + eps)`,
/// `weight_out[o, ...] = weight[o, ...] * s[o]` and
/// `bias_out[o] = (bias[o] - running_mean[o]) / sqrt(running_var[o] + eps) *
/// bn_weight[o] + bn_bias[o]` (batch norm's own operations in its order,
/// in f32, rounded once to the dtype).
///
/// `weight` is the convolution's (O, C/groups, KH, KW) weight in any
/// strides (channels-last included), `bias` its (O) bias or NULL (0);
/// `running_mean`, `running_var` (required), `bn_weight` and `bn_bias`
/// (NULL: 1 and 0) have shape (O). `weight_out` has `weight`'s shape (any
/// strides: the folded weight keeps its layout where given the same
/// strides), `bias_out` shape (O). All f32, or all f16 on adapters with f16
/// shaders. Call once per layer (weights and statistics are constant in
/// inference) and keep the two outputs: they are the caller's tensors.
///
/// Numerics: each folded weight is rounded once (f32: relative 2^-24; f16:
/// 2^-11), so the folded convolution differs from convolution then batch
/// norm by the convolution's own bound (see `wgc_op_conv2d`) taken with
/// `max|weight_out|`, plus the folded bias's one rounding; tested in f32
/// within `1e-5 * (1 + sqrt(K)) * max|x| * max|weight_out| + 1e-6 * |ref|`
/// with K = C/groups*KH*KW, and in f16 with `2^-10 * |ref|` more. Where
/// `running_var + eps` is 0 the scale is infinite, as batch norm's; NaN
/// statistics give NaN weights and bias for that channel.
///
/// Records two launches on `stream`; does not block. Statuses:
/// `WGC_ERROR_NULL_POINTER` (NULL stream, weight, running_mean,
/// running_var, weight_out or bias_out), `WGC_ERROR_SHAPE_MISMATCH`
/// (weight not of rank 4, or a vector or output of the wrong shape),
/// `WGC_ERROR_DTYPE_MISMATCH` (operands of different dtypes),
/// `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 without f16 shaders),
/// `WGC_ERROR_INVALID_ARGUMENT` (eps negative or not finite; an output
/// overlapping an input, the other output, or itself),
/// `WGC_ERROR_OUT_OF_RANGE` (a view outside its buffer),
/// `WGC_ERROR_TOO_LARGE` (weights spanning past 2^31-1 elements),
/// `WGC_ERROR_DEVICE_MISMATCH`. Nothing is recorded on failure.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_conv2d_fold_batch_norm(
    stream: *const WgcStream,
    weight: *const WgcTensor,
    bias: *const WgcTensor,
    running_mean: *const WgcTensor,
    running_var: *const WgcTensor,
    bn_weight: *const WgcTensor,
    bn_bias: *const WgcTensor,
    eps: f32,
    weight_out: *const WgcTensor,
    bias_out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let weight = unsafe { tensor(weight, "weight") }?;
        let bias = unsafe { optional(bias, "bias") }?;
        let mean = unsafe { tensor(running_mean, "running_mean") }?;
        let var = unsafe { tensor(running_var, "running_var") }?;
        let bn_weight = unsafe { optional(bn_weight, "bn_weight") }?;
        let bn_bias = unsafe { optional(bn_bias, "bn_bias") }?;
        let weight_out = unsafe { tensor(weight_out, "weight_out") }?;
        let bias_out = unsafe { tensor(bias_out, "bias_out") }?;
        let args = FoldArgs {
            weight: &weight,
            bias: bias.as_ref(),
            mean: &mean,
            var: &var,
            bn_weight: bn_weight.as_ref(),
            bn_bias: bn_bias.as_ref(),
            eps,
            weight_out: &weight_out,
            bias_out: &bias_out,
        };
        fold_batch_norm(s, &args)
    })
}
