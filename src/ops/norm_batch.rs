//! Batch norm in inference form, with running statistics: an elementwise
//! kernel that finds each element's channel (dim 1) while decoding its index.

use super::common::Params;
use super::grid::grid_1d;
use super::norm::check_param;
use super::reduce_kernels::launch;
use super::softmax::check_rowwise;
use super::tensor::{coalesce, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

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
    check_param(stream, Some(mean), input, out, &c, "running_mean")?;
    check_param(stream, Some(var), input, out, &c, "running_var")?;
    check_param(stream, weight, input, out, &c, "weight")?;
    check_param(stream, bias, input, out, &c, "bias")?;
    if out.same_buffer(input) {
        bail!(InvalidArgument, "batch_norm: out shares a buffer with in (out must have its own buffer)");
    }
    let count = input.numel();
    if count == 0 {
        return Ok(());
    }
    if count > u32::MAX as usize {
        bail!(TooLarge, "batch_norm of {count} elements exceeds 2^32-1");
    }
    let chan: Vec<isize> = (0..rank).map(|d| (d == 1) as isize).collect();
    let (shape, strides) = coalesce(&input.shape, &[input.strides.clone(), out.strides.clone(), chan]);
    let dev = &stream.device;
    let flag = |b: bool| if b { "true" } else { "false" };
    let values = [
        ("ENABLES", input.dtype.enable()),
        ("T", input.dtype.wgsl()),
        ("HAS_W", flag(weight.is_some())),
        ("HAS_B", flag(bias.is_some())),
    ];
    let k = super::common::kernel(dev, "norm_batch.wgsl", "batch_norm", &values)?;
    let (groups, row) = grid_1d(count as u64, 256, dev.limits.max_compute_workgroups_per_dimension);
    let w = weight.unwrap_or(mean);
    let b = bias.unwrap_or(mean);
    let params = Params::new()
        .u32(count as u32)
        .u32(row)
        .u32(shape.len() as u32)
        .f32(eps)
        .u32(input.bound_offset())
        .u32(out.bound_offset())
        .align16()
        .u32(mean.bound_offset())
        .u32(var.bound_offset())
        .u32(w.bound_offset())
        .u32(b.bound_offset())
        .i32(mean.strides[0] as i32)
        .i32(var.strides[0] as i32)
        .i32(w.strides[0] as i32)
        .i32(b.strides[0] as i32)
        .array8_u32(&shape, 1)
        .array8_i32(&strides[0])
        .array8_i32(&strides[1])
        .array8_i32(&strides[2]);
    let binds = [input.bind(0), out.bind(1), mean.bind(3), var.bind(4), w.bind(5), b.bind(6)];
    launch(stream, &k, &binds, &params, groups)
}
