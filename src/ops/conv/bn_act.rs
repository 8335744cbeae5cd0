//! Convolution + batch norm (inference) + activation: the batch norm is
//! folded into the convolution's weight and bias (fold_bn.rs), kept in the
//! caller's tensors so later calls skip the fold, then the convolution runs
//! with the folded bias and the activation. The routes that store through
//! an epilogue (1x1 and im2col GEMMs, the tensor-core kernels) apply it
//! there; elsewhere (the f32 implicit GEMM, depthwise) it is one extra
//! elementwise pass over the output, in place.

use crate::bail;
use crate::error::Result;
use crate::ops::conv::fold_bn::{check_fold, fold_batch_norm, FoldArgs};
use crate::ops::conv::problem::Operands;
use crate::ops::conv::residual;
use crate::ops::conv::{conv2d_fused, out_size, Conv2dParams};
use crate::ops::elementwise::{unary, UnaryOp};
use crate::ops::spec::{check_output, Sharing};
use crate::ops::tensor::{expect_shape, same_device, DType, Tensor};
use crate::runtime::stream::StreamShared;

/// The activation of a fused convolution (`wgc_op_conv2d_bn_act`) or GEMM
/// epilogue (`wgc_op_gemm_epilogue`): `WgcActivation` in C.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Activation {
    /// The convolution's output as it is.
    #[default]
    None = 0,
    /// max(x, 0), as `WGC_UNARY_OP_RELU`.
    Relu = 1,
    /// min(max(x, 0), 6), as `WGC_UNARY_OP_RELU6`.
    Relu6 = 2,
    /// x * min(max(x + 3, 0), 6) / 6, as `WGC_UNARY_OP_HARDSWISH`.
    Hardswish = 3,
    /// x * Phi(x) with the erf form of the normal CDF (PyTorch's default
    /// `gelu`), as `WGC_UNARY_OP_GELU_ERF`.
    Gelu = 4,
    /// The tanh approximation of GELU (PyTorch's `approximate="tanh"`), as
    /// `WGC_UNARY_OP_GELU_TANH`.
    GeluTanh = 5,
    /// x * sigmoid(x), as `WGC_UNARY_OP_SILU`.
    Silu = 6,
    /// tanh(x), as `WGC_UNARY_OP_TANH`.
    Tanh = 7,
}

/// The number of `WgcActivation` values (0 .. WGC_NUM_ACTIVATIONS - 1).
pub const WGC_NUM_ACTIVATIONS: u32 = 8;
const _: () = assert!(Activation::Tanh as u32 + 1 == WGC_NUM_ACTIVATIONS);

impl Activation {
    /// Read from a u32, not the enum: C may pass any value.
    pub fn from_u32(v: u32) -> Result<Self> {
        if v >= WGC_NUM_ACTIVATIONS {
            bail!(InvalidArgument, "unknown activation {v}");
        }
        // SAFETY: repr(u32) with the values 0 .. WGC_NUM_ACTIVATIONS - 1.
        Ok(unsafe { std::mem::transmute::<u32, Activation>(v) })
    }

    pub(crate) fn unary_op(self) -> Option<UnaryOp> {
        match self {
            Activation::None => None,
            Activation::Relu => Some(UnaryOp::Relu),
            Activation::Relu6 => Some(UnaryOp::Relu6),
            Activation::Hardswish => Some(UnaryOp::Hardswish),
            Activation::Gelu => Some(UnaryOp::GeluErf),
            Activation::GeluTanh => Some(UnaryOp::GeluTanh),
            Activation::Silu => Some(UnaryOp::Silu),
            Activation::Tanh => Some(UnaryOp::Tanh),
        }
    }
}

/// The batch norm to fold: present when the call folds, absent when the
/// folded tensors already hold the fold from an earlier call.
pub struct BatchNormStats<'t, 'a> {
    pub weight: &'t Tensor<'a>,
    pub bias: Option<&'t Tensor<'a>>,
    pub mean: &'t Tensor<'a>,
    pub var: &'t Tensor<'a>,
    pub bn_weight: Option<&'t Tensor<'a>>,
    pub bn_bias: Option<&'t Tensor<'a>>,
    pub eps: f32,
}

/// One convolution + batch norm + activation call.
pub struct ConvBnAct<'t, 'a> {
    pub conv: Conv2dParams,
    pub input: &'t Tensor<'a>,
    pub fold: Option<BatchNormStats<'t, 'a>>,
    pub folded_weight: &'t Tensor<'a>,
    pub folded_bias: Option<&'t Tensor<'a>>,
    pub activation: Activation,
    /// Added before the activation (`wgc_op_conv2d_bn_act_residual`).
    pub residual: Option<&'t Tensor<'a>>,
    pub out: &'t Tensor<'a>,
}

/// The convolution's shape checks, made before the fold is recorded (the
/// convolution repeats them, and its adapter-limit checks, when it runs).
fn check_conv(stream: &StreamShared, a: &ConvBnAct) -> Result<()> {
    let what = "conv2d_bn_act";
    let (x, w, out) = (a.input, a.folded_weight, a.out);
    let mut all = vec![x, w, out];
    all.extend(a.folded_bias);
    same_device(&stream.device, &all)?;
    for t in &all {
        if t.dtype != x.dtype {
            bail!(DtypeMismatch, "{what}: input is {} but another operand is {}", x.dtype.wgsl(), t.dtype.wgsl());
        }
    }
    if !matches!(x.dtype, DType::F32 | DType::F16) {
        bail!(Unsupported, "{what}: {} is not supported (f32 or f16)", x.dtype.wgsl());
    }
    x.dtype.check_device(&stream.device)?;
    for (t, name) in [(x, "input"), (w, "folded_weight"), (out, "out")] {
        if t.rank() != 4 {
            bail!(ShapeMismatch, "{what}: {name} has rank {}; expected 4", t.rank());
        }
    }
    let groups = a.conv.groups.max(1) as usize;
    let [n, c, h, wd] = [x.shape[0], x.shape[1], x.shape[2], x.shape[3]];
    let [o, cg, kh, kw] = [w.shape[0], w.shape[1], w.shape[2], w.shape[3]];
    if c % groups != 0 || o % groups != 0 || cg != c / groups {
        bail!(
            ShapeMismatch,
            "{what}: weight ({o}, {cg}, {kh}, {kw}) does not fit {c} input channels in {groups} groups"
        );
    }
    if let Some(b) = a.folded_bias {
        expect_shape(b, &[o], "conv2d_bn_act: folded_bias")?;
    }
    let size = |i: usize, k: usize, d: usize| {
        let (s, p, dil) = (a.conv.stride[d].max(1), a.conv.pad[d], a.conv.dilation[d].max(1));
        out_size(i, k, s as usize, p as usize, dil as usize)
    };
    let (Some(oh), Some(ow)) = (size(h, kh, 0), size(wd, kw, 1)) else {
        bail!(ShapeMismatch, "{what}: the padded input {h}x{wd} is smaller than the dilated {kh}x{kw} kernel");
    };
    expect_shape(out, &[n, o, oh, ow], "conv2d_bn_act: out")?;
    let mut inputs = vec![("input", x), ("folded_weight", w)];
    inputs.extend(a.folded_bias.map(|b| ("folded_bias", b)));
    check_output(what, out, &inputs, Sharing::Separate)?;
    if let Some(r) = a.residual {
        same_device(&stream.device, &[r])?;
        residual::check(what, r, out)?;
    }
    Ok(())
}

/// Fold (where asked), convolve with the folded weight and bias, activate.
pub fn conv2d_bn_act(stream: &StreamShared, a: &ConvBnAct) -> Result<()> {
    check_conv(stream, a)?;
    let fold = match &a.fold {
        Some(bn) => {
            let Some(bias_out) = a.folded_bias else {
                bail!(NullPointer, "conv2d_bn_act: folding needs folded_bias");
            };
            let args = FoldArgs {
                weight: bn.weight,
                bias: bn.bias,
                mean: bn.mean,
                var: bn.var,
                bn_weight: bn.bn_weight,
                bn_bias: bn.bn_bias,
                eps: bn.eps,
                weight_out: a.folded_weight,
                bias_out,
            };
            check_fold(stream, &args)?;
            // The fold writes the folded tensors: they must not be the
            // convolution's input or output either.
            let mut read = vec![("input", a.input), ("out", a.out)];
            read.extend(a.residual.map(|r| ("residual", r)));
            for (t, name) in [(a.folded_weight, "folded_weight"), (bias_out, "folded_bias")] {
                let what = format!("conv2d_bn_act ({name} as the fold's output)");
                check_output(&what, t, &read, Sharing::Separate)?;
            }
            Some(args)
        }
        None => None,
    };
    if let Some(args) = &fold {
        fold_batch_norm(stream, args)?;
    }
    let ops = Operands { input: a.input, weight: a.folded_weight, bias: a.folded_bias, out: a.out };
    let applied = conv2d_fused(stream, &a.conv, &ops, a.activation, a.residual)?;
    match a.activation.unary_op() {
        Some(op) if !applied.activation => unary(stream, op, a.out, a.out),
        _ => Ok(()),
    }
}
