//! Convolution + inference batch norm + residual + activation, as C sees it.

use super::ops_conv_bn_act::{conv2d_bn_act_call, WgcConv2dBnActParams};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::WgcTensor;
use crate::ffi::boundary::run;

/// `wgc_op_conv2d_bn_act` with a residual added before the activation:
/// `out = act(batch_norm(conv2d(input, weight, bias)) + residual)`, the
/// end of a ResNet bottleneck (`relu(bn3(conv3(x)) + identity)`) or of a
/// MobileNetV2 inverted residual (`bn(project(x)) + x`, activation
/// `WGC_ACTIVATION_NONE`).
///
/// Arguments, folding, shapes, dtypes, strides and statuses are those of
/// `wgc_op_conv2d_bn_act`, plus `residual`: (N, O, OH, OW), `out`'s shape
/// and dtype, in any strides (channels-last and NCHW alike, broadcast
/// zero strides included). `residual` may not share a byte with `out`
/// (not even as exactly `out`'s view), nor with the folded tensors when
/// folding (`WGC_ERROR_INVALID_ARGUMENT`); it may share the input's memory.
///
/// Where it is added, with the bias and the activation, as the output is
/// stored (each output rounded once to the dtype):
/// - a 1x1 stride-1 unpadded convolution over channels-last packed pixels
///   that runs as one GEMM (`wgc_op_conv2d`: by default f16 with at least
///   128 input and output channels where the SPIR-V tensor-core kernels
///   run; `WGC_CONV_1X1_NHWC`, docs/TUNING.md) whose GEMM applies an
///   epilogue in its kernel or split-K pass;
/// - the f16 tensor-core gather (channels-last output) in one K run, where
///   the residual's pixels are laid out as `out`'s (one strided dim, and
///   its images rows of one stride where `out`'s are).
///
/// Every other route writes the convolution into `out`, then one elementwise
/// pass adds the residual in place and, for an activation other than
/// `WGC_ACTIVATION_NONE`, one more applies it in place (the sum rounded to
/// the dtype first). `wgc_op_conv2d_explain` names the route; its
/// `residual:` clause says which.
///
/// Accuracy: as `wgc_op_conv2d_bn_act`, plus the addition's one rounding
/// (two where the pass adds it). NaN and infinities propagate as IEEE
/// addition does (inf + -inf is NaN) before the activation.
///
/// Records work on `stream` without blocking. Statuses: as
/// `wgc_op_conv2d_bn_act`; also `WGC_ERROR_NULL_POINTER` (NULL
/// `residual`), `WGC_ERROR_SHAPE_MISMATCH` (`residual` not `out`'s
/// shape), `WGC_ERROR_DTYPE_MISMATCH` (not `out`'s dtype),
/// `WGC_ERROR_OUT_OF_RANGE` (its view past its buffer),
/// `WGC_ERROR_DEVICE_MISMATCH`.
/// Nothing is recorded on failure, with `wgc_op_conv2d_bn_act`'s one
/// exception.
///
/// # Safety
/// Pointers are NULL or valid for reads; tensors describe live buffers.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_op_conv2d_bn_act_residual(
    stream: *const WgcStream,
    params: *const WgcConv2dBnActParams,
    input: *const WgcTensor,
    weight: *const WgcTensor,
    bias: *const WgcTensor,
    running_mean: *const WgcTensor,
    running_var: *const WgcTensor,
    bn_weight: *const WgcTensor,
    bn_bias: *const WgcTensor,
    folded_weight: *const WgcTensor,
    folded_bias: *const WgcTensor,
    residual: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    if residual.is_null() {
        return run(|| crate::bail!(NullPointer, "conv2d_bn_act_residual: residual is NULL"));
    }
    unsafe {
        conv2d_bn_act_call(
            stream,
            params,
            input,
            [weight, bias, running_mean, running_var, bn_weight, bn_bias],
            (folded_weight, folded_bias),
            residual,
            out,
        )
    }
}
