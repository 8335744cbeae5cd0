//! Folding an inference batch norm into the convolution before it, once, so
//! a network runs the convolution (with the folded bias) alone:
//! `bn(conv(x, w) + b) = conv(x, w * s) + (b - mean) * s + beta` with
//! `s = gamma / sqrt(var + eps)` per output channel.

use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::norm::check_param;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, check_output, view_arg, Family, Launch, OverrideSlot, Sharing, TypeSlot};
use crate::ops::tensor::DType;
use crate::ops::tensor::{expect_shape, same_device, Tensor};
use crate::runtime::stream::StreamShared;

pub static FAMILY: Family = Family {
    file: "conv_fold_bn.wgsl",
    source: include_str!("../../../shaders/conv_fold_bn.wgsl"),
    entries: &["fold_weight", "fold_bias"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        OverrideSlot { name: "HAS_CB", values: &[0.0, 1.0] },
        OverrideSlot { name: "HAS_W", values: &[0.0, 1.0] },
        OverrideSlot { name: "HAS_B", values: &[0.0, 1.0] },
    ],
    uniform: <FoldParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_fold_bn.wgsl.
    pub struct FoldParams = "Params" {
        pub count: u32,
        pub row: u32,
        pub eps: f32,
        pub _pad0: u32,
        pub shape: [u32; 4],
        pub in_strides: [i32; 4],
        pub out_strides: [i32; 4],
        pub offsets: [u32; 4],
        pub param_offsets: [[u32; 4]; 2],
        pub param_strides: [[i32; 4]; 2],
    }
}

/// The convolution's operands and the batch norm's parameters.
pub struct FoldArgs<'t, 'a> {
    pub weight: &'t Tensor<'a>,
    pub bias: Option<&'t Tensor<'a>>,
    pub mean: &'t Tensor<'a>,
    pub var: &'t Tensor<'a>,
    pub bn_weight: Option<&'t Tensor<'a>>,
    pub bn_bias: Option<&'t Tensor<'a>>,
    pub eps: f32,
    pub weight_out: &'t Tensor<'a>,
    pub bias_out: &'t Tensor<'a>,
}

fn check(stream: &StreamShared, a: &FoldArgs) -> Result<()> {
    let what = "conv2d_fold_batch_norm";
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[a.weight, a.weight_out, a.bias_out])?;
    if !matches!(a.weight.dtype, DType::F32 | DType::F16) {
        bail!(Unsupported, "{what} of {} weights is not supported (f32 and f16 only)", a.weight.dtype.wgsl());
    }
    a.weight.dtype.check_device(dev)?;
    if a.weight.rank() != 4 {
        bail!(ShapeMismatch, "{what}: weight of rank {}; expected (O, C/groups, KH, KW)", a.weight.rank());
    }
    if !a.eps.is_finite() || a.eps < 0.0 {
        bail!(InvalidArgument, "{what}: eps {} must be finite and >= 0", a.eps);
    }
    let o = [a.weight.shape[0]];
    for (t, name) in [(a.weight_out, "weight_out"), (a.bias_out, "bias_out")] {
        if t.dtype != a.weight.dtype {
            bail!(DtypeMismatch, "{what}: {name} is {}, weight is {}", t.dtype.wgsl(), a.weight.dtype.wgsl());
        }
    }
    expect_shape(a.weight_out, &a.weight.shape, "weight_out")?;
    expect_shape(a.bias_out, &o, "bias_out")?;
    check_param(stream, a.bias, a.weight, &o, "bias")?;
    check_param(stream, Some(a.mean), a.weight, &o, "running_mean")?;
    check_param(stream, Some(a.var), a.weight, &o, "running_var")?;
    check_param(stream, a.bn_weight, a.weight, &o, "bn_weight")?;
    check_param(stream, a.bn_bias, a.weight, &o, "bn_bias")?;
    let mut inputs = vec![("weight", a.weight), ("running_mean", a.mean), ("running_var", a.var)];
    inputs.extend(a.bias.map(|t| ("bias", t)));
    inputs.extend(a.bn_weight.map(|t| ("bn_weight", t)));
    inputs.extend(a.bn_bias.map(|t| ("bn_bias", t)));
    check_output(what, a.weight_out, &inputs, Sharing::Separate)?;
    inputs.push(("weight_out", a.weight_out));
    check_output(what, a.bias_out, &inputs, Sharing::Separate)?;
    // The shader's offsets are 32-bit signed.
    for t in [a.weight, a.weight_out] {
        let (lo, hi) = t.element_span();
        if lo < 0 || hi > i32::MAX as i128 {
            bail!(TooLarge, "{what}: weights spanning {} elements exceed 2^31-1", hi - lo);
        }
    }
    Ok(())
}

/// The fold's checks alone, for callers that check everything before
/// recording anything.
pub(crate) fn check_fold(stream: &StreamShared, a: &FoldArgs) -> Result<()> {
    check(stream, a)
}

/// Write `weight_out` and `bias_out`, the convolution's weight and bias
/// with the batch norm folded in. Records two launches.
pub fn fold_batch_norm(stream: &StreamShared, a: &FoldArgs) -> Result<()> {
    check(stream, a)?;
    let dev = &stream.device;
    let max = dev.limits.max_compute_workgroups_per_dimension;
    let outs = a.weight.shape[0];
    let count = a.weight.numel();
    if outs == 0 {
        return Ok(());
    }
    if outs.div_ceil(256) > max as usize {
        bail!(TooLarge, "conv2d_fold_batch_norm: {outs} output channels need too many workgroups");
    }
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let overrides = [flag(a.bias.is_some()), flag(a.bn_weight.is_some()), flag(a.bn_bias.is_some())];
    // Absent vectors bind the running mean in their place (unread).
    let cb = a.bias.unwrap_or(a.mean);
    let w = a.bn_weight.unwrap_or(a.mean);
    let b = a.bn_bias.unwrap_or(a.mean);
    let (wa, w_off) = view_arg("weight", a.weight);
    let (woa, wo_off) = view_arg("weight_out", a.weight_out);
    let vectors = [cb, a.mean, a.var, w, b, a.bias_out];
    let names = ["conv_bias", "mean", "variance", "w", "b", "bias_out"];
    let mut param_offsets = [[0u32; 4]; 2];
    let mut param_strides = [[0i32; 4]; 2];
    let [cba, ma, va, bwa, bba, boa] = std::array::from_fn(|k| {
        let (arg, off) = view_arg(names[k], vectors[k]);
        param_offsets[k / 4][k % 4] = off;
        param_strides[k / 4][k % 4] = vectors[k].strides[0] as i32;
        arg
    });
    let mut params = FoldParams {
        count: count as u32,
        row: 0,
        eps: a.eps,
        _pad0: 0,
        shape: [0, 1, 2, 3].map(|d| a.weight.shape[d] as u32),
        in_strides: [0, 1, 2, 3].map(|d| a.weight.strides[d] as i32),
        out_strides: [0, 1, 2, 3].map(|d| a.weight_out.strides[d] as i32),
        offsets: [w_off, wo_off, 0, 0],
        param_offsets,
        param_strides,
    };
    if count > 0 {
        if count > u32::MAX as usize {
            bail!(TooLarge, "conv2d_fold_batch_norm: {count} weights exceed 2^32-1");
        }
        let (groups, row) = grid_1d(count as u64, 256, max);
        params.row = row;
        let variant = FAMILY.variant("fold_weight", &[a.weight.dtype], &overrides);
        let args = [wa, woa, va, bwa];
        spec::record(stream, &Launch { variant, params, args, groups })?;
    }
    let variant = FAMILY.variant("fold_bias", &[a.weight.dtype], &overrides);
    let groups = [outs.div_ceil(256) as u32, 1, 1];
    let args = [boa, cba, ma, va, bwa, bba];
    spec::record(stream, &Launch { variant, params, args, groups })
}
