//! Softmax and log-softmax along one axis: one workgroup per row, rows
//! cached in registers when contiguous and short enough, very long rows cut
//! into chunks of one workgroup each (see shaders/softmax.wgsl).

use super::common::{whole, Params};
use super::reduce_axes::single_axis;
use super::reduce_kernels::{kernel, launch, row_grid, row_workgroup, use_subgroups};
use super::split::{scratch, CHUNK_LEN, MAX_ITERS, SPLIT_WG};
use super::tensor::{coalesce, expect_shape, same_device, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

/// Most vec4 slots per invocation kept in registers.
const MAX_CACHE: usize = 16;

/// Rows along one axis: their count, length, and how to find them.
pub struct RowLayout {
    pub rows: usize,
    pub len: usize,
    pub in_stride: isize,
    pub out_stride: isize,
    pub outer_shape: Vec<usize>,
    pub outer_in: Vec<isize>,
    pub outer_out: Vec<isize>,
}

impl RowLayout {
    /// Rows of `input` and `out` (same shape) along `axis`.
    pub fn along(input: &Tensor, out: &Tensor, axis: usize) -> RowLayout {
        let others: Vec<usize> = (0..input.rank()).filter(|&d| d != axis).collect();
        let shape: Vec<usize> = others.iter().map(|&d| input.shape[d]).collect();
        let sin: Vec<isize> = others.iter().map(|&d| input.strides[d]).collect();
        let sout: Vec<isize> = others.iter().map(|&d| out.strides[d]).collect();
        let (outer_shape, mut strides) = coalesce(&shape, &[sin, sout]);
        let outer_out = strides.pop().unwrap();
        let outer_in = strides.pop().unwrap();
        RowLayout {
            rows: shape.iter().product(),
            len: input.shape[axis],
            in_stride: input.strides[axis],
            out_stride: out.strides[axis],
            outer_shape,
            outer_in,
            outer_out,
        }
    }

    /// Every row of both tensors is contiguous and starts 4-aligned, and whole vec4s cover it.
    pub fn vec4_ok(&self, in_offset: usize, out_offset: usize) -> bool {
        self.in_stride == 1
            && self.out_stride == 1
            && self.len.is_multiple_of(4)
            && in_offset.is_multiple_of(4)
            && out_offset.is_multiple_of(4)
            && self.outer_in.iter().chain(&self.outer_out).all(|s| s % 4 == 0)
    }
}

/// Checks shared by row-wise operators: floats, same device, out shaped and typed like in, no overlap.
pub fn check_rowwise(stream: &StreamShared, input: &Tensor, out: &Tensor, what: &str) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[input, out])?;
    if !input.dtype.is_float() {
        bail!(Unsupported, "{what} of {} tensors is not supported (f32 and f16 only)", input.dtype.wgsl());
    }
    input.dtype.check_device(dev)?;
    if out.dtype != input.dtype {
        bail!(DtypeMismatch, "{what}: out is {}, in is {}", out.dtype.wgsl(), input.dtype.wgsl());
    }
    expect_shape(out, &input.shape, "out")?;
    if out.shape.iter().zip(&out.strides).any(|(&d, &s)| d > 1 && s == 0) {
        bail!(InvalidArgument, "out has a zero stride on a dim larger than 1 (its elements would alias)");
    }
    if out.may_overlap(input) {
        bail!(InvalidArgument, "{what}: out overlaps the input");
    }
    Ok(())
}

pub fn softmax(stream: &StreamShared, input: &Tensor, axis: i32, log: bool, out: &Tensor) -> Result<()> {
    let what = if log { "log_softmax" } else { "softmax" };
    check_rowwise(stream, input, out, what)?;
    if out.same_buffer(input) {
        bail!(InvalidArgument, "{what}: out shares a buffer with in (out must have its own buffer)");
    }
    // A rank-0 tensor is one row of one element.
    let (input, out) = if input.rank() == 0 {
        fn lift<'a>(t: &Tensor<'a>) -> Tensor<'a> {
            Tensor { shape: vec![1], strides: vec![1], ..t.clone() }
        }
        (lift(input), lift(out))
    } else {
        (input.clone(), out.clone())
    };
    let axis = single_axis(input.rank(), axis)?;
    let layout = RowLayout::along(&input, &out, axis);
    if layout.rows == 0 || layout.len == 0 {
        return Ok(());
    }
    if let Some(plan) = super::softmax_rows::plan(stream, &input, &out, &layout, log) {
        return plan.record(stream, &input, &out);
    }
    let dev = &stream.device;
    let vec4 = layout.vec4_ok(input.offset, out.offset);
    let len4 = layout.len / 4;
    let wg = row_workgroup(if vec4 { len4 } else { layout.len });
    let slots = len4.div_ceil(wg).next_power_of_two();
    // Rows whose loads would take one invocation more than MAX_ITERS
    // iterations a pass are cut into chunks, one workgroup each.
    let iters = if vec4 { len4 } else { layout.len }.div_ceil(wg);
    let chunks = if iters > MAX_ITERS { layout.len.div_ceil(CHUNK_LEN) } else { 1 };
    let (entry, cache, wg) = match (vec4, slots <= MAX_CACHE) {
        _ if chunks > 1 => ("softmax_split_stats", 1, SPLIT_WG),
        (true, true) => ("softmax_cached", slots, wg),
        (true, false) => ("softmax_vec4", 1, wg),
        (false, _) => ("softmax_strided", 1, wg),
    };
    let sg = use_subgroups(dev);
    let (wg, cache) = (wg.to_string(), cache.to_string());
    let values = [
        ("ENABLES", input.dtype.enable()),
        ("T", input.dtype.wgsl()),
        ("WG", wg.as_str()),
        ("CACHE", cache.as_str()),
        ("LOG", if log { "true" } else { "false" }),
    ];
    let k = kernel(dev, "softmax.wgsl", entry, &values, sg, true)?;
    let (groups, rows_per_y) = row_grid(chunks as u32, layout.rows, dev.limits.max_compute_workgroups_per_dimension);
    let params = Params::new()
        .u32(layout.len as u32)
        .u32(layout.rows as u32)
        .u32(rows_per_y)
        .u32(layout.outer_shape.len() as u32)
        .u32(input.bound_offset())
        .u32(out.bound_offset())
        .i32(layout.in_stride as i32)
        .i32(layout.out_stride as i32)
        .u32(CHUNK_LEN as u32)
        .u32(chunks as u32)
        .array8_u32(&layout.outer_shape, 1)
        .array8_i32(&layout.outer_in)
        .array8_i32(&layout.outer_out);
    if chunks > 1 {
        let stats = scratch(dev, (layout.rows * chunks * 8) as u64)?;
        launch(stream, &k, &[input.bind(0), whole(5, &stats)], &params, groups)?;
        let write = kernel(dev, "softmax.wgsl", "softmax_split_write", &values, sg, true)?;
        return launch(stream, &write, &[input.bind(0), out.bind(2), whole(5, &stats)], &params, groups);
    }
    let binds = if vec4 { [input.bind(1), out.bind(4)] } else { [input.bind(0), out.bind(2)] };
    launch(stream, &k, &binds, &params, groups)
}
