//! Convolution + inference batch norm + activation, as C sees it.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::sized::{read_sized, sized_struct};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::{conv2d_bn_act, Activation, BatchNormStats, ConvBnAct};
use crate::ops::conv::Conv2dParams;
use crate::ops::profile_call;
use crate::ops::tensor::Tensor;

/// Parameters of `wgc_op_conv2d_bn_act`. Set
/// `struct_size = sizeof(WgcConv2dBnActParams)`. The convolution's fields
/// are those of `WgcConv2dParams` (zero strides, dilations and groups mean
/// 1).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WgcConv2dBnActParams {
    pub struct_size: u32,
    pub stride_h: u32,
    pub stride_w: u32,
    pub pad_h: u32,
    pub pad_w: u32,
    pub dilation_h: u32,
    pub dilation_w: u32,
    pub groups: u32,
    /// The batch norm's epsilon (finite, >= 0; PyTorch's default is 1e-5).
    pub eps: f32,
    /// A `WgcActivation` value.
    pub activation: u32,
    /// Zero: fold the batch norm into `folded_weight` and `folded_bias`
    /// first. Non-zero: they hold the fold already (from an earlier call
    /// with the same weights and statistics); the convolution's weight and
    /// bias and the batch norm's tensors are not read and may be NULL.
    pub folded: u32,
}

sized_struct!(WgcConv2dBnActParams {
    stride_h,
    stride_w,
    pad_h,
    pad_w,
    dilation_h,
    dilation_w,
    groups,
    eps,
    activation,
    folded
});

unsafe fn optional<'a>(t: *const WgcTensor, what: &str) -> Result<Option<Tensor<'a>>> {
    if t.is_null() {
        Ok(None)
    } else {
        unsafe { tensor(t, what) }.map(Some)
    }
}

/// Convolution, inference batch norm and activation in one call, for
/// networks in inference: `out = act(batch_norm(conv2d(input, weight,
/// bias)))` with the batch norm's running statistics (PyTorch's
/// `Conv2d` + `BatchNorm2d` in eval mode + `ReLU` / `ReLU6` / `Hardswish`).
///
/// The batch norm is folded into the convolution (see
/// `wgc_conv2d_fold_batch_norm`: `folded_weight = weight * s`,
/// `folded_bias = (bias - running_mean) * s + bn_bias` with
/// `s = bn_weight / sqrt(running_var + eps)`), written into the caller's
/// `folded_weight` (the weight's shape, any strides: give it the input's
/// channels-last layout to keep f16 tensor-core convolutions from packing
/// it) and `folded_bias` (O). Fold on the first call (`params->folded` 0)
/// and set `folded` on later calls with the same weights and statistics:
/// then only the convolution and the activation run. The convolution runs
/// as `wgc_op_conv2d(input, folded_weight, folded_bias)` (routes, dtypes,
/// strides, accuracy and limits as there), and the activation
/// (`WgcActivation`, computed as `wgc_op_unary` computes it; NaN stays NaN)
/// is applied where the route stores the output (the tensor-core
/// kernels, the GEMM's epilogue of f16 convolutions under 8 input
/// channels, channels-last 1x1 convolutions whose GEMM takes an epilogue in
/// its tensor-core kernel or split-K pass, the f32 implicit GEMM where it
/// splits K (in the pass that adds the runs), and the depthwise and
/// Winograd routes for the ReLU family: the f32 sum activated, then rounded
/// once to the output's dtype), else (other 1x1 and im2col convolutions,
/// the f32 implicit GEMM with K whole, other depthwise convolutions,
/// GELU/SiLU/tanh on the depthwise and Winograd routes) to `out` in place
/// by one elementwise pass;
/// `wgc_op_conv2d_explain` ends with which. With `folded` set and
/// `folded_bias` NULL this is a convolution without bias followed by the
/// activation, so a layer without batch norm uses it too.
///
/// Shapes: `input` (N, C, H, W) in any strides (channels-last views
/// included), `weight` and `folded_weight` (O, C/groups, KH, KW), `bias`
/// (O) or NULL (0), `running_mean`, `running_var` (required when folding),
/// `bn_weight`, `bn_bias` (NULL: 1 and 0) (O), `out` (N, O, OH, OW) as
/// for `wgc_op_conv2d`. All f32 or all f16 (f16 needs f16 shaders).
///
/// Accuracy: as the folded convolution's (see `wgc_conv2d_fold_batch_norm`:
/// the convolution's bound taken with `max|folded_weight|`, plus the folded
/// bias's one rounding), then the activation's (exact for ReLU and ReLU6).
///
/// Records work on `stream` without blocking. Statuses:
/// `WGC_ERROR_NULL_POINTER` (NULL stream, params, input, folded_weight or
/// out; when folding, NULL weight, running_mean, running_var or
/// folded_bias), `WGC_ERROR_INVALID_ARGUMENT` (`struct_size` < 4 or ending
/// inside a field; an unknown activation; eps negative or not finite when
/// folding; `out` overlapping an operand; the folded tensors overlapping the
/// fold's operands, each other, `input` or `out`), `WGC_ERROR_DTYPE_MISMATCH`,
/// `WGC_ERROR_UNSUPPORTED` (not f32 or f16, or f16 without f16 shaders),
/// `WGC_ERROR_SHAPE_MISMATCH` (as `wgc_op_conv2d` and
/// `wgc_conv2d_fold_batch_norm`), `WGC_ERROR_OUT_OF_RANGE`,
/// `WGC_ERROR_TOO_LARGE`, `WGC_ERROR_DEVICE_MISMATCH`. Nothing is recorded
/// on failure, with one exception: where the convolution exceeds an
/// adapter limit (`WGC_ERROR_TOO_LARGE`, found only when it is planned,
/// after the fold), the fold has been recorded and will write the folded
/// tensors; `out` is never written on failure.
///
/// # Safety
/// Pointers are NULL or valid for reads; tensors describe live buffers.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_op_conv2d_bn_act(
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
    out: *const WgcTensor,
) -> WgcStatus {
    unsafe {
        conv2d_bn_act_call(
            stream,
            params,
            input,
            [weight, bias, running_mean, running_var, bn_weight, bn_bias],
            (folded_weight, folded_bias),
            std::ptr::null(),
            out,
        )
    }
}

/// `wgc_op_conv2d_bn_act` and `wgc_op_conv2d_bn_act_residual` (a NULL
/// `residual` here: none); `bn` is weight, bias, running_mean,
/// running_var, bn_weight, bn_bias.
pub(super) unsafe fn conv2d_bn_act_call(
    stream: *const WgcStream,
    params: *const WgcConv2dBnActParams,
    input: *const WgcTensor,
    bn: [*const WgcTensor; 6],
    (folded_weight, folded_bias): (*const WgcTensor, *const WgcTensor),
    residual: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    let [weight, bias, running_mean, running_var, bn_weight, bn_bias] = bn;
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let p = unsafe { read_sized(params, "params") }?;
        let activation = Activation::from_u32(p.activation)?;
        let input = unsafe { tensor(input, "input") }?;
        let folded_weight = unsafe { tensor(folded_weight, "folded_weight") }?;
        let folded_bias = unsafe { optional(folded_bias, "folded_bias") }?;
        let residual = unsafe { optional(residual, "residual") }?;
        let out = unsafe { tensor(out, "out") }?;
        let stats = if p.folded == 0 {
            if folded_bias.is_none() {
                bail!(NullPointer, "conv2d_bn_act: folding needs folded_bias");
            }
            Some((
                unsafe { tensor(weight, "weight") }?,
                unsafe { optional(bias, "bias") }?,
                unsafe { tensor(running_mean, "running_mean") }?,
                unsafe { tensor(running_var, "running_var") }?,
                unsafe { optional(bn_weight, "bn_weight") }?,
                unsafe { optional(bn_bias, "bn_bias") }?,
            ))
        } else {
            None
        };
        let fold = stats.as_ref().map(|(w, b, m, v, g, beta)| BatchNormStats {
            weight: w,
            bias: b.as_ref(),
            mean: m,
            var: v,
            bn_weight: g.as_ref(),
            bn_bias: beta.as_ref(),
            eps: p.eps,
        });
        let call = ConvBnAct {
            conv: Conv2dParams {
                stride: [p.stride_h, p.stride_w],
                pad: [p.pad_h, p.pad_w],
                dilation: [p.dilation_h, p.dilation_w],
                groups: p.groups,
            },
            input: &input,
            fold,
            folded_weight: &folded_weight,
            folded_bias: folded_bias.as_ref(),
            activation,
            residual: residual.as_ref(),
            out: &out,
        };
        let _call = profile_op!(
            s,
            "conv2d_bn_act",
            [&input, &folded_weight],
            [&out],
            profile_call::product_flops(&out, folded_weight.shape.iter().skip(1).product())
        );
        conv2d_bn_act(s, &call)
    })
}
