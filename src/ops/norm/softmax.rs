//! Softmax and log-softmax along one axis: one workgroup per row, rows
//! cached in registers when contiguous and short enough, very long rows (or
//! long rows too few to fill the GPU) cut into chunks of one workgroup each
//! (see shaders/softmax.wgsl).

use crate::error::Result;
use crate::ops::gemm::tuned::{self, bucket, Candidate, Choice};
use crate::ops::norm::common::{check_rowwise, RowLayout};
use crate::ops::reduce::axes::single_axis;
use crate::ops::reduce::kernels::{row_grid, row_workgroup, strategy, ROW_WGS};
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{
    self, check_output, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot,
};
use crate::ops::split::{CHUNK_LEN, MAX_ITERS, SPLIT_WG};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

const ENTRIES: &[&str] =
    &["softmax_cached", "softmax_vec4", "softmax_strided", "softmax_split_stats", "softmax_split_write"];
const TYPES: &[TypeSlot] = &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }];
const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "WG", values: ROW_WGS },
    OverrideSlot { name: "CACHE", values: &[1.0, 2.0, 4.0, 8.0, 16.0] },
    OverrideSlot { name: "LOG", values: &[0.0, 1.0] },
];

/// softmax.wgsl with the workgroup reductions in workgroup memory only.
pub static FAMILY: Family = Family {
    file: "softmax.wgsl",
    source: concat!(
        include_str!("../../../shaders/softmax.wgsl"),
        include_str!("../../../shaders/reduce_wg_allreduce.wgsl"),
        include_str!("../../../shaders/reduce_wg_shared.wgsl")
    ),
    entries: ENTRIES,
    types: TYPES,
    overrides: OVERRIDES,
    uniform: <SoftmaxParams as spec::Uniform>::layout,
};

/// softmax.wgsl with subgroup operations (adapters with subgroups only).
pub static FAMILY_SUBGROUPS: Family = Family {
    file: "softmax.wgsl+subgroups",
    source: concat!(
        include_str!("../../../shaders/softmax.wgsl"),
        include_str!("../../../shaders/reduce_wg_allreduce.wgsl"),
        include_str!("../../../shaders/reduce_wg_subgroups.wgsl")
    ),
    ..FAMILY
};

uniform! {
    /// The uniform of softmax.wgsl.
    pub struct SoftmaxParams = "Params" {
        pub len: u32,
        pub rows: u32,
        pub rows_per_y: u32,
        pub outer_rank: u32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub in_stride: i32,
        pub out_stride: i32,
        pub chunk_len: u32,
        pub chunks: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub outer_shape: [[u32; 4]; 2],
        pub outer_in: [[i32; 4]; 2],
        pub outer_out: [[i32; 4]; 2],
    }
}

/// Most vec4 slots per invocation kept in registers.
const MAX_CACHE: usize = 16;

/// Rows at least this long, when few, are cut into chunks to fill the GPU.
const SPLIT_MIN_LEN: usize = 32768;
/// Shortest chunk worth a workgroup of its own (16 elements an invocation).
const SPLIT_MIN_CHUNK: usize = 4096;

/// Workgroups to aim for when long rows are too few to fill the GPU (0
/// never cuts rows for that reason). 32 rows of 128256 ran at 10% of the
/// bandwidth on an H200 with one workgroup each.
const SPLIT_GROUPS: usize = 1024;
/// The tuner's candidates for it (SPLIT_GROUPS first).
const TUNED_GROUPS: &[(&str, usize)] = &[("g1024", SPLIT_GROUPS), ("g0", 0), ("g256", 256), ("g4096", 4096)];

/// Elements per chunk for `rows` rows of `len` (`len` itself: not cut),
/// aiming at `target` workgroups. `too_long`: one workgroup's invocations
/// would loop past MAX_ITERS.
fn split_chunk_len(rows: usize, len: usize, too_long: bool, target: usize) -> usize {
    let mut chunk = len;
    if target > 0 && len >= SPLIT_MIN_LEN && 2 * rows <= target {
        let per_row = target / rows;
        // Whole vec4s per invocation of the SPLIT_WG-wide chunk kernels.
        chunk = len.div_ceil(per_row).next_multiple_of(4 * SPLIT_WG).max(SPLIT_MIN_CHUNK);
    }
    if too_long || chunk < len {
        chunk = chunk.min(CHUNK_LEN);
    }
    chunk
}

/// How rows of `layout` are read: (vec4 loads, workgroup size, elements
/// per chunk for `target` workgroups).
fn row_reads(layout: &RowLayout, in_offset: usize, out_offset: usize, target: usize) -> (bool, usize, usize) {
    let vec4 = layout.vec4_ok(in_offset, out_offset);
    let units = if vec4 { layout.len / 4 } else { layout.len };
    let wg = row_workgroup(units);
    // Rows whose loads would take one invocation more than MAX_ITERS
    // iterations a pass are cut into chunks, one workgroup each; so are
    // long rows too few to fill the GPU with one workgroup each.
    let chunk_len = split_chunk_len(layout.rows, layout.len, units.div_ceil(wg) > MAX_ITERS, target);
    (vec4, wg, chunk_len)
}

/// The tuner's choice of the split target for these rows; the device's
/// setting `WGC_SOFTMAX_SPLIT_GROUPS` (`set`) fixes it.
fn split_choice(
    dtype: DType,
    layout: &RowLayout,
    in_offset: usize,
    out_offset: usize,
    set: Option<usize>,
) -> Choice<usize> {
    let candidates = match set {
        Some(target) => vec![Candidate { name: "env", value: target, plan: 0 }],
        None => TUNED_GROUPS
            .iter()
            .map(|&(name, target)| {
                let chunk_len = row_reads(layout, in_offset, out_offset, target).2;
                Candidate { name, value: target, plan: chunk_len as u64 }
            })
            .collect(),
    };
    let vec4 = layout.vec4_ok(in_offset, out_offset);
    Choice {
        name: "softmax.split_groups",
        class: format!("{}.len{}.r{}.{}", dtype.wgsl(), bucket(layout.len), bucket(layout.rows), vec4 as u8),
        candidates,
        fixed: set.is_some(),
        // The output is apart from the input (checked) and written only.
        rerunnable: true,
    }
}

pub fn softmax(stream: &StreamShared, input: &Tensor, axis: i32, log: bool, out: &Tensor) -> Result<()> {
    let what = if log { "log_softmax" } else { "softmax" };
    check_rowwise(stream, input, out, what)?;
    check_output(what, out, &[("in", input)], Sharing::Separate)?;
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
    if let Some(plan) = crate::ops::norm::softmax_rows::plan(stream, &input, &out, &layout, log) {
        return plan.record(stream, &input, &out);
    }
    let (in_offset, out_offset) = (input.offset, out.offset);
    let run = |target| record_rows(stream, &input, &out, &layout, log, target);
    let set = stream.device.settings().norm.softmax_split_groups;
    let choice = || split_choice(input.dtype, &layout, in_offset, out_offset, set);
    let target = tuned::pick(stream, set.unwrap_or(SPLIT_GROUPS), choice, run)?;
    run(target)
}

/// Record the softmax of rows too long for `softmax_rows`, cutting long
/// rows that are few into chunks for about `target` workgroups: the stats
/// and write passes where rows are cut, else one launch. Writes `out` only.
fn record_rows(
    stream: &StreamShared,
    input: &Tensor,
    out: &Tensor,
    layout: &RowLayout,
    log: bool,
    target: usize,
) -> Result<()> {
    let dev = &stream.device;
    let (vec4, wg, chunk_len) = row_reads(layout, input.offset, out.offset, target);
    let len4 = layout.len / 4;
    let slots = len4.div_ceil(wg).next_power_of_two();
    let chunks = layout.len.div_ceil(chunk_len);
    let (entry, cache, wg) = match (vec4, slots <= MAX_CACHE) {
        _ if chunks > 1 => ("softmax_split_stats", 1, SPLIT_WG),
        (true, true) => ("softmax_cached", slots, wg),
        (true, false) => ("softmax_vec4", 1, wg),
        (false, _) => ("softmax_strided", 1, wg),
    };
    let family = strategy(dev, &FAMILY, &FAMILY_SUBGROUPS);
    let overrides = [wg as f64, cache as f64, if log { 1.0 } else { 0.0 }];
    let (groups, rows_per_y) = row_grid(chunks as u32, layout.rows, dev.limits.max_compute_workgroups_per_dimension);
    let (xa, in_offset) = view_arg("x", input);
    let (ya, out_offset) = view_arg("y", out);
    let params = SoftmaxParams {
        len: layout.len as u32,
        rows: layout.rows as u32,
        rows_per_y,
        outer_rank: layout.outer_shape.len() as u32,
        in_offset,
        out_offset,
        in_stride: layout.in_stride as i32,
        out_stride: layout.out_stride as i32,
        chunk_len: chunk_len as u32,
        chunks: chunks as u32,
        _pad0: 0,
        _pad1: 0,
        outer_shape: pack_u32(&layout.outer_shape, 1),
        outer_in: pack_i32(&layout.outer_in),
        outer_out: pack_i32(&layout.outer_out),
    };
    let types = [input.dtype];
    if chunks > 1 {
        let stats = stream.ordered_scratch((layout.rows * chunks * 8) as u64)?;
        let sa = Arg::whole("stats", &stats);
        let variant = family.variant(entry, &types, &overrides);
        spec::record(stream, &Launch { variant, params, args: [xa, sa], groups })?;
        let variant = family.variant("softmax_split_write", &types, &overrides);
        return spec::record(stream, &Launch { variant, params, args: [xa, ya, sa], groups });
    }
    let variant = family.variant(entry, &types, &overrides);
    let args = if vec4 { [Arg { name: "xv", ..xa }, Arg { name: "yv", ..ya }] } else { [xa, ya] };
    spec::record(stream, &Launch { variant, params, args, groups })
}
