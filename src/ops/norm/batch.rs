//! Batch norm in inference form, with running statistics: an elementwise
//! kernel that finds each element's channel (dim 1) while decoding its index,
//! for views the fast routes of norm_batch_fast.rs (NCHW planes, NHWC rows)
//! do not take.

use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::norm::batch_fast as norm_batch_fast;
use crate::ops::norm::common::{check_param, check_rowwise};
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{
    self, check_output, pack_i32, pack_u32, view_arg, Family, Launch, OverrideSlot, Sharing, TypeSlot,
};
use crate::ops::tensor::DType;
use crate::ops::tensor::{coalesce, Tensor};
use crate::runtime::stream::StreamShared;

pub static FAMILY: Family = Family {
    file: "norm_batch.wgsl",
    source: include_str!("../../../shaders/norm_batch.wgsl"),
    entries: &["batch_norm"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        OverrideSlot { name: "HAS_W", values: &[0.0, 1.0] },
        OverrideSlot { name: "HAS_B", values: &[0.0, 1.0] },
    ],
    uniform: <BatchNormParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of norm_batch.wgsl.
    pub struct BatchNormParams = "Params" {
        pub count: u32,
        pub row: u32,
        pub rank: u32,
        pub eps: f32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        /// Offsets of mean, var, w, b.
        pub chan_offset: [u32; 4],
        pub chan_stride: [i32; 4],
        pub shape: [[u32; 4]; 2],
        pub in_strides: [[i32; 4]; 2],
        pub out_strides: [[i32; 4]; 2],
        pub chan_strides: [[i32; 4]; 2],
    }
}

#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    stream: &StreamShared,
    input: &Tensor,
    mean: &Tensor,
    var: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
    out: &Tensor,
) -> Result<()> {
    check_rowwise(stream, input, out, "batch_norm")?;
    let rank = input.rank();
    if rank < 2 {
        bail!(InvalidArgument, "batch_norm: input of rank {rank}; expected (N, C, ...)");
    }
    if !eps.is_finite() || eps < 0.0 {
        bail!(InvalidArgument, "batch_norm: eps {eps} must be finite and >= 0");
    }
    let c = [input.shape[1]];
    check_param(stream, Some(mean), input, &c, "running_mean")?;
    check_param(stream, Some(var), input, &c, "running_var")?;
    check_param(stream, weight, input, &c, "weight")?;
    check_param(stream, bias, input, &c, "bias")?;
    let mut inputs = vec![("in", input), ("running_mean", mean), ("running_var", var)];
    inputs.extend(weight.map(|w| ("weight", w)));
    inputs.extend(bias.map(|b| ("bias", b)));
    check_output("batch_norm", out, &inputs, Sharing::Separate)?;
    // Absent parameters bind the running mean in their place (unread).
    let count = input.numel();
    if count == 0 {
        return Ok(());
    }
    if count > u32::MAX as usize {
        bail!(TooLarge, "batch_norm of {count} elements exceeds 2^32-1");
    }
    let (w, b) = (weight.unwrap_or(mean), bias.unwrap_or(mean));
    if norm_batch_fast::try_record(stream, input, [mean, var, w, b], [weight.is_some(), bias.is_some()], eps, out)? {
        return Ok(());
    }
    let chan: Vec<isize> = (0..rank).map(|d| (d == 1) as isize).collect();
    let (shape, strides) = coalesce(&input.shape, &[input.strides.clone(), out.strides.clone(), chan]);
    let dev = &stream.device;
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let variant = FAMILY.variant("batch_norm", &[input.dtype], &[flag(weight.is_some()), flag(bias.is_some())]);
    let (groups, row) = grid_1d(count as u64, 256, dev.limits.max_compute_workgroups_per_dimension);
    let (xa, x_off) = view_arg("x", input);
    let (ya, y_off) = view_arg("y", out);
    let (ma, m_off) = view_arg("mean", mean);
    let (va, v_off) = view_arg("variance", var);
    let (wa, w_off) = view_arg("w", w);
    let (ba, b_off) = view_arg("b", b);
    let params = BatchNormParams {
        count: count as u32,
        row,
        rank: shape.len() as u32,
        eps,
        in_offset: x_off,
        out_offset: y_off,
        _pad0: 0,
        _pad1: 0,
        chan_offset: [m_off, v_off, w_off, b_off],
        chan_stride: [mean.strides[0], var.strides[0], w.strides[0], b.strides[0]].map(|s| s as i32),
        shape: pack_u32(&shape, 1),
        in_strides: pack_i32(&strides[0]),
        out_strides: pack_i32(&strides[1]),
        chan_strides: pack_i32(&strides[2]),
    };
    spec::record(stream, &Launch { variant, params, args: [xa, ya, ma, va, wa, ba], groups })
}
