//! Layer norm and RMS norm over the trailing dims: one workgroup per row,
//! rows cached in registers when contiguous and short enough, very long rows
//! cut into chunks of one workgroup each (see shaders/norm.wgsl).

use super::common::{whole, Params};
use super::reduce_kernels::{kernel, launch, row_grid, row_workgroup, use_subgroups};
use super::softmax::check_rowwise;
use super::split::{scratch, CHUNK_LEN, MAX_ITERS, SPLIT_WG};
use super::tensor::{coalesce, contiguous_strides, expect_shape, same_device, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

/// Most vec4 slots per invocation kept in registers.
const MAX_CACHE: usize = 16;

/// Check an optional per-element parameter (weight, bias) against the normalised shape.
pub fn check_param(
    stream: &StreamShared,
    p: Option<&Tensor>,
    input: &Tensor,
    out: &Tensor,
    shape: &[usize],
    what: &str,
) -> Result<()> {
    let Some(p) = p else { return Ok(()) };
    same_device(&stream.device, &[p])?;
    if p.dtype != input.dtype {
        bail!(DtypeMismatch, "{what} is {}, in is {}", p.dtype.wgsl(), input.dtype.wgsl());
    }
    expect_shape(p, shape, what)?;
    if p.same_buffer(out) {
        bail!(InvalidArgument, "{what} shares a buffer with out (out must have its own buffer)");
    }
    Ok(())
}

/// Layer norm (`rms` false) or RMS norm (`rms` true, `bias` must be None)
/// over the last `normalized_dims` dims of `input`.
#[allow(clippy::too_many_arguments)]
pub fn norm(
    stream: &StreamShared,
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    normalized_dims: u32,
    eps: f32,
    rms: bool,
    out: &Tensor,
) -> Result<()> {
    let what = if rms { "rms_norm" } else { "layer_norm" };
    check_rowwise(stream, input, out, what)?;
    let rank = input.rank();
    let nd = normalized_dims as usize;
    if nd == 0 || nd > rank {
        bail!(
            InvalidArgument,
            "{what}: normalized_dims {normalized_dims} must be in [1, {rank}] for a rank-{rank} input"
        );
    }
    if !eps.is_finite() || eps < 0.0 {
        bail!(InvalidArgument, "{what}: eps {eps} must be finite and >= 0");
    }
    let split = rank - nd;
    let inner: Vec<usize> = input.shape[split..].to_vec();
    check_param(stream, weight, input, out, &inner, "weight")?;
    check_param(stream, bias, input, out, &inner, "bias")?;
    if out.same_buffer(input) {
        bail!(InvalidArgument, "{what}: out shares a buffer with in (out must have its own buffer)");
    }
    let rows: usize = input.shape[..split].iter().product();
    let len: usize = inner.iter().product();
    if rows == 0 || len == 0 {
        return Ok(());
    }
    let args = super::norm_rows::NormArgs { input, weight, bias, out, split };
    if let Some(plan) = super::norm_rows::plan(stream, &args, eps, rms) {
        return plan.record(stream, &args);
    }
    let (outer_shape, outer) =
        coalesce(&input.shape[..split], &[input.strides[..split].to_vec(), out.strides[..split].to_vec()]);
    let dense = contiguous_strides(&inner);
    let w_strides = weight.map_or(dense.clone(), |w| w.strides.clone());
    let b_strides = bias.map_or(dense.clone(), |b| b.strides.clone());
    let (inner_shape, inner_s) =
        coalesce(&inner, &[input.strides[split..].to_vec(), out.strides[split..].to_vec(), w_strides, b_strides]);
    let aligned = |t: Option<&Tensor>| t.is_none_or(|t| t.offset % 4 == 0);
    let vec4 = inner_shape.len() == 1
        && inner_s.iter().all(|s| s[0] == 1)
        && len.is_multiple_of(4)
        && input.offset.is_multiple_of(4)
        && out.offset.is_multiple_of(4)
        && aligned(weight)
        && aligned(bias)
        && outer.iter().flatten().all(|s| s % 4 == 0);
    let wg = row_workgroup(if vec4 { len / 4 } else { len });
    let slots = (len / 4).div_ceil(wg).next_power_of_two();
    // Rows whose loads would take one invocation more than MAX_ITERS
    // iterations a pass are cut into chunks, one workgroup each.
    let iters = if vec4 { len / 4 } else { len }.div_ceil(wg);
    let chunks = if iters > MAX_ITERS { len.div_ceil(CHUNK_LEN) } else { 1 };
    let (entry, cache, wg) = match (vec4, slots <= MAX_CACHE) {
        _ if chunks > 1 => ("norm_split_stats", 1, SPLIT_WG),
        (true, true) => ("norm_cached", slots, wg),
        (true, false) => ("norm_vec4", 1, wg),
        (false, _) => ("norm_strided", 1, wg),
    };
    let dev = &stream.device;
    let sg = use_subgroups(dev);
    let (wg, cache) = (wg.to_string(), cache.to_string());
    let flag = |b: bool| if b { "true" } else { "false" };
    let values = [
        ("ENABLES", input.dtype.enable()),
        ("T", input.dtype.wgsl()),
        ("WG", wg.as_str()),
        ("CACHE", cache.as_str()),
        ("RMS", flag(rms)),
        ("HAS_W", flag(weight.is_some())),
        ("HAS_B", flag(bias.is_some())),
    ];
    let k = kernel(dev, "norm.wgsl", entry, &values, sg, true)?;
    let (groups, rows_per_y) = row_grid(chunks as u32, rows, dev.limits.max_compute_workgroups_per_dimension);
    let params = Params::new()
        .u32(len as u32)
        .u32(rows as u32)
        .u32(rows_per_y)
        .u32(outer_shape.len() as u32)
        .u32(input.bound_offset())
        .u32(out.bound_offset())
        .u32(weight.map_or(0, |w| w.bound_offset()))
        .u32(bias.map_or(0, |b| b.bound_offset()))
        .u32(inner_shape.len() as u32)
        .f32(eps)
        .f32(1.0 / len as f32)
        .u32(CHUNK_LEN as u32)
        .u32(chunks as u32)
        .array8_u32(&outer_shape, 1)
        .array8_i32(&outer[0])
        .array8_i32(&outer[1])
        .array8_u32(&inner_shape, 1)
        .array8_i32(&inner_s[0])
        .array8_i32(&inner_s[1])
        .array8_i32(&inner_s[2])
        .array8_i32(&inner_s[3]);
    // Absent parameters bind the input in their place (unread).
    let (w, b) = (weight.unwrap_or(input), bias.unwrap_or(input));
    if chunks > 1 {
        let stats = scratch(dev, (rows * chunks * 8) as u64)?;
        launch(stream, &k, &[input.bind(0), whole(9, &stats)], &params, groups)?;
        let write = kernel(dev, "norm.wgsl", "norm_split_write", &values, sg, true)?;
        let binds = [input.bind(0), out.bind(2), w.bind(5), b.bind(6), whole(9, &stats)];
        return launch(stream, &write, &binds, &params, groups);
    }
    let binds = if vec4 {
        [input.bind(1), out.bind(4), w.bind(7), b.bind(8)]
    } else {
        [input.bind(0), out.bind(2), w.bind(5), b.bind(6)]
    };
    launch(stream, &k, &binds, &params, groups)
}
