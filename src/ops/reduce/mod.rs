//! Reductions over axes (sum, mean, max, min, prod, argmax, argmin) and
//! variance / standard deviation, on the GPU in two passes (see
//! shaders/reduce.wgsl): a split pass writes per-chunk partial states to
//! scratch, a finishing pass combines them. Variance runs that pair twice:
//! once for the row means, once for the sums of deviations from them. No
//! host round-trip.

pub mod axes;
pub mod columns;
pub mod common;
pub mod cumsum;
pub mod kernels;
pub mod rows;
pub mod runs;
#[cfg(test)]
mod settings_test;
pub mod topk;

use crate::bail;
use crate::error::Result;
use crate::ops::spec::{
    self, check_output, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot,
};
use crate::ops::tensor::{coalesce, expect_shape, numel, same_device, DType, Tensor};
use crate::ops::{elementwise::bf16, elementwise::bf16_route};
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::stream::StreamShared;
use axes::{reduced_mask, reduced_shape};
pub use common::{FusedInput, Layout, ReduceOp, ReduceParams};
use kernels::{row_grid, strategy, WG};

const ENTRIES: &[&str] = &["reduce_strided", "reduce_columns", "reduce_vec4", "reduce_finish"];
/// Every OP code of reduce.wgsl (`ReduceOp::code` and OP_SHIFT).
const OPS: &[OverrideSlot] =
    &[OverrideSlot { name: "OP", values: &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0] }];
const SOURCE_SHARED: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_input.wgsl"),
    include_str!("../../../shaders/reduce_wg_shared.wgsl")
);
const SOURCE_SUBGROUPS: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_input.wgsl"),
    include_str!("../../../shaders/reduce_wg_subgroups.wgsl")
);
// bf16 inputs read as words (T = f32).
const SOURCE_BF16_SHARED: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_input_bf16.wgsl"),
    include_str!("../../../shaders/reduce_wg_shared.wgsl")
);
const SOURCE_BF16_SUBGROUPS: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_input_bf16.wgsl"),
    include_str!("../../../shaders/reduce_wg_subgroups.wgsl")
);

/// One reduce.wgsl family per accumulator type (the type slots T, ACC and
/// OUT of a family are the combinations that accumulator serves; arg ops
/// write i32) and per workgroup-reduction strategy.
macro_rules! reduce_family {
    ($name:ident, $file:literal, $source:expr, [$($t:ident),*], $acc:ident, [$($out:ident),*]) => {
        pub static $name: Family = Family {
            file: $file,
            source: $source,
            entries: ENTRIES,
            types: &[
                TypeSlot { alias: "T", dtypes: &[$(DType::$t),*] },
                TypeSlot { alias: "ACC", dtypes: &[DType::$acc] },
                TypeSlot { alias: "OUT", dtypes: &[$(DType::$out),*] },
            ],
            overrides: OPS,
            uniform: <ReduceParams as spec::Uniform>::layout,
        };
    };
}
reduce_family!(FAMILY_F32, "reduce.wgsl", SOURCE_SHARED, [F32, F16], F32, [F32, F16, I32]);
reduce_family!(FAMILY_I32, "reduce.wgsl:i32", SOURCE_SHARED, [I32], I32, [I32]);
reduce_family!(FAMILY_U32, "reduce.wgsl:u32", SOURCE_SHARED, [U32], U32, [U32, I32]);
reduce_family!(FAMILY_F32_SUBGROUPS, "reduce.wgsl+subgroups", SOURCE_SUBGROUPS, [F32, F16], F32, [F32, F16, I32]);
reduce_family!(FAMILY_I32_SUBGROUPS, "reduce.wgsl:i32+subgroups", SOURCE_SUBGROUPS, [I32], I32, [I32]);
reduce_family!(FAMILY_U32_SUBGROUPS, "reduce.wgsl:u32+subgroups", SOURCE_SUBGROUPS, [U32], U32, [U32, I32]);
reduce_family!(FAMILY_BF16, "reduce.wgsl:bf16", SOURCE_BF16_SHARED, [F32], F32, [F32, I32]);
reduce_family!(FAMILY_BF16_SUBGROUPS, "reduce.wgsl:bf16+subgroups", SOURCE_BF16_SUBGROUPS, [F32], F32, [F32, I32]);

/// Size of one partial state in scratch (struct State of reduce.wgsl).
const STATE_BYTES: u64 = 20;
/// The OP code of reduce.wgsl's first variance pass (the row means).
const OP_SHIFT: u32 = 9;
/// Enough workgroups in the split pass to keep a large GPU's memory system busy.
const TARGET_GROUPS: usize = 4096;
/// Elements each invocation should fold before splitting a row further pays.
const ELEMS_PER_THREAD: usize = 16;
/// Rows up to this long, when there are many, take one invocation each.
const SHORT_ROW: usize = 64;

/// Reduce `input` over `axes` (Python-style, none = all) into `out`.
pub fn reduce(
    stream: &StreamShared,
    op: ReduceOp,
    input: &Tensor,
    axes: &[i32],
    keepdim: bool,
    out: &Tensor,
) -> Result<()> {
    reduce_into(stream, op, input, axes, keepdim, out, false)
}

/// `reduce`, where `f32_out` lets a bf16 input's (non-index) result be an
/// f32 `out` (bf16 results are computed so, then rounded into bf16).
fn reduce_into(
    stream: &StreamShared,
    op: ReduceOp,
    input: &Tensor,
    axes: &[i32],
    keepdim: bool,
    out: &Tensor,
    f32_out: bool,
) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[input, out])?;
    input.dtype.check_device_bf16(dev)?;
    let out_dtype = match (op.is_arg(), input.dtype) {
        (true, _) => DType::I32,
        (false, DType::BF16) if f32_out => DType::F32,
        (false, d) => d,
    };
    let (mask, k_total, rows) = validate(op, input.dtype, out_dtype, &input.shape, axes, keepdim, out)?;
    // The input is read in the split pass and out written in the finishing
    // pass, so they may share a buffer; overlapping views are still refused.
    check_output(&format!("{op:?}"), out, &[("the input", input)], Sharing::Disjoint)?;
    if rows == 0 {
        return Ok(());
    }
    // A bf16 result: computed into f32 scratch, then rounded once.
    if out.dtype == DType::BF16 {
        let y = bf16_route::uninit(stream, &out.shape)?;
        reduce_into(stream, op, input, axes, keepdim, &y.view(), true)?;
        return bf16::convert(stream, &y.view(), out);
    }
    let (kept_shape, kept_strides, red_shape, red_in) =
        split_dims(&input.shape, &input.strides, &mask, keepdim, out, op.is_arg());
    let layout = Layout {
        kept_shape: &kept_shape,
        kept_in: &kept_strides[0],
        kept_out: &kept_strides[1],
        red_shape: &red_shape,
        red_in: &red_in,
    };
    // The column and run kernels have no bf16 loads: bf16 takes the kernels below.
    let bf16 = input.dtype == DType::BF16;
    if let Some(plan) = columns::plan(stream, op, input, out, &layout).filter(|_| !bf16) {
        return plan.record(stream, input, out);
    }
    // Several reduced dims ending in a contiguous run (axes 0, 2, 3 of NCHW).
    if red_shape.len() > 1 {
        if let Some(plan) = runs::plan(stream, op, input, out, &layout).filter(|_| !bf16) {
            return plan.record(stream, input, out);
        }
    }
    record_planned(stream, op, Reader::View(input), input.dtype, k_total, rows, &layout, out)
}

/// Reduce the elements `fused` computes, those of a dense (row-major,
/// offset 0) tensor of `dtype` and `shape`, over `axes` into `out`, with
/// reduce.wgsl's kernels and the planning of `reduce` (the column and run
/// kernels, which have no input stage, are not used). The caller checks
/// devices and that `out` shares no buffer with what `fused` reads; `out`
/// has the dtype of the reduction's result (i32 for arg ops, else `dtype`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_fused(
    stream: &StreamShared,
    op: ReduceOp,
    fused: &dyn FusedInput,
    dtype: DType,
    shape: &[usize],
    axes: &[i32],
    keepdim: bool,
    out: &Tensor,
) -> Result<()> {
    if dtype == DType::BF16 {
        bail!(Unsupported, "a fused reduction of bf16 values is not supported (cast them to f32 first)");
    }
    let out_dtype = if op.is_arg() { DType::I32 } else { dtype };
    let (mask, k_total, rows) = validate(op, dtype, out_dtype, shape, axes, keepdim, out)?;
    if rows == 0 {
        return Ok(());
    }
    let mut strides = vec![0isize; shape.len()];
    let mut n = 1isize;
    for d in (0..shape.len()).rev() {
        strides[d] = n;
        n *= shape[d] as isize;
    }
    let (kept_shape, kept_strides, red_shape, red_in) = split_dims(shape, &strides, &mask, keepdim, out, op.is_arg());
    let layout = Layout {
        kept_shape: &kept_shape,
        kept_in: &kept_strides[0],
        kept_out: &kept_strides[1],
        red_shape: &red_shape,
        red_in: &red_in,
    };
    record_planned(stream, op, Reader::Fused(fused), dtype, k_total, rows, &layout, out)
}

/// The checks every reduction makes of its op, dtypes, axes and output
/// shape, and the reduced mask with the reduced and kept element counts.
fn validate(
    op: ReduceOp,
    dtype: DType,
    out_dtype: DType,
    shape: &[usize],
    axes: &[i32],
    keepdim: bool,
    out: &Tensor,
) -> Result<(Vec<bool>, usize, usize)> {
    if op.floats_only() && !dtype.is_float() {
        bail!(Unsupported, "{op:?} of {} tensors is not supported (floating-point inputs only)", dtype.wgsl());
    }
    if out.dtype != out_dtype {
        bail!(
            DtypeMismatch,
            "{op:?} of a {} tensor writes {}; out is {}",
            dtype.wgsl(),
            out_dtype.wgsl(),
            out.dtype.wgsl()
        );
    }
    if op.is_arg() && axes.len() > 1 {
        bail!(InvalidArgument, "{op:?} takes one axis (or none, for the flattened tensor); {} given", axes.len());
    }
    let mask = reduced_mask(shape.len(), axes)?;
    expect_shape(out, &reduced_shape(shape, &mask, keepdim), "out")?;
    let dims = |reduced: bool| -> Vec<usize> {
        shape.iter().zip(&mask).filter(|(_, &m)| m == reduced).map(|(&d, _)| d).collect()
    };
    let (k_total, rows) = (numel(&dims(true)), numel(&dims(false)));
    if k_total == 0 && op.needs_elements() {
        bail!(InvalidArgument, "{op:?} over an empty set of elements is undefined");
    }
    if k_total > i32::MAX as usize || rows > i32::MAX as usize {
        bail!(TooLarge, "reduction of {k_total} elements into {rows} outputs exceeds 2^31-1");
    }
    Ok((mask, k_total, rows))
}

/// The input's dims split into kept (coalesced, with the input's and the
/// output's strides) and reduced (largest stride first unless the op is an
/// arg op, coalesced, with the input's strides).
type SplitDims = (Vec<usize>, Vec<Vec<isize>>, Vec<usize>, Vec<isize>);
fn split_dims(shape: &[usize], strides: &[isize], mask: &[bool], keepdim: bool, out: &Tensor, arg: bool) -> SplitDims {
    let (mut kept_shape, mut kept_in, mut kept_out) = (Vec::new(), Vec::new(), Vec::new());
    let mut reduced: Vec<(usize, isize)> = Vec::new();
    let mut out_dim = 0;
    // `mask` has one entry per input dim.
    for (d, &is_reduced) in mask.iter().enumerate() {
        if is_reduced {
            reduced.push((shape[d], strides[d]));
            if keepdim {
                out_dim += 1;
            }
        } else {
            kept_shape.push(shape[d]);
            kept_in.push(strides[d]);
            kept_out.push(out.strides[out_dim]);
            out_dim += 1;
        }
    }
    if !arg {
        // Order only matters for arg indices; largest strides first lets transposed views coalesce.
        reduced.sort_by_key(|&(_, s)| std::cmp::Reverse(s.unsigned_abs()));
    }
    let (kept_shape, kept_strides) = coalesce(&kept_shape, &[kept_in, kept_out]);
    let red_shape_raw: Vec<usize> = reduced.iter().map(|r| r.0).collect();
    let red_strides_raw: Vec<isize> = reduced.iter().map(|r| r.1).collect();
    let (red_shape, mut red_strides) = coalesce(&red_shape_raw, &[red_strides_raw]);
    (kept_shape, kept_strides, red_shape, red_strides.remove(0))
}

/// Where reduce.wgsl's kernels read their elements.
#[derive(Clone, Copy)]
enum Reader<'r, 'a> {
    /// The input view, bound as `x` (and `xv`).
    View(&'r Tensor<'a>),
    /// A generated input stage.
    Fused(&'r dyn FusedInput),
}

/// Plan and record the reduction of `layout` (elements of `dtype`, read by
/// `reader`) with reduce.wgsl's kernels: the row kernel, or the split pass
/// (strided, columns or vec4) and the finishing pass.
#[allow(clippy::too_many_arguments)]
fn record_planned(
    stream: &StreamShared,
    op: ReduceOp,
    reader: Reader,
    dtype: DType,
    k_total: usize,
    rows: usize,
    layout: &Layout,
    out: &Tensor,
) -> Result<()> {
    let dev = &stream.device;
    let (kept_shape, red_shape, red_in) = (layout.kept_shape, layout.red_shape, layout.red_in);
    let kept_strides = [layout.kept_in, layout.kept_out];
    let (same_buffer, offset) = match reader {
        Reader::View(input) => (input.same_buffer(out), input.offset),
        Reader::Fused(_) => (false, 0),
    };
    let out_dtype = out.dtype;

    // Contiguous rows that one launch reads with one chunk each (as below): several rows per workgroup.
    let contiguous_rows = red_shape.len() == 1 && red_in[0] == 1 && !same_buffer;
    let row_launch =
        contiguous_rows && (k_total <= WG as usize * ELEMS_PER_THREAD || 2 * rows > TARGET_GROUPS) && k_total > 0;

    // Many short rows (a few dozen elements): one invocation per row. A
    // workgroup per row leaves most of its invocations idle and ran at 1% of
    // the bandwidth on an H200 for rows of 32.
    let short_rows = k_total <= SHORT_ROW && rows >= 4 * WG as usize;
    let vec4 = !short_rows
        && red_shape.len() == 1
        && red_in[0] == 1
        && k_total >= 4
        && offset.is_multiple_of(4)
        && kept_strides[0].iter().all(|s| s % 4 == 0);
    // Outputs adjacent in memory and reductions across rows: one invocation per output.
    let columns = short_rows
        || (!vec4
            && kept_shape.last().is_some()
            && kept_strides[0].last() == Some(&1)
            && red_in.iter().all(|&s| s.unsigned_abs() > 1)
            && rows >= WG as usize / 4);
    let (per_group, row_groups) =
        if columns { (ELEMS_PER_THREAD, rows.div_ceil(WG as usize)) } else { (WG as usize * ELEMS_PER_THREAD, rows) };
    let want = k_total.div_ceil(per_group).max(1);
    let chunks = if row_launch {
        1
    } else {
        want.min((TARGET_GROUPS / row_groups).max(1)).min(dev.limits.max_compute_workgroups_per_dimension as usize)
    };

    // Variance also keeps each row's mean after the partials.
    let states = rows as u64 * chunks as u64 + if op.is_var() { rows as u64 } else { 0 };
    let parts_bytes = states * STATE_BYTES;
    if parts_bytes > dev.limits.max_storage_buffer_binding_size {
        bail!(
            TooLarge,
            "reduction into {rows} outputs needs {parts_bytes} bytes of scratch; the adapter binds at most {}",
            dev.limits.max_storage_buffer_binding_size
        );
    }
    let family = family_of(dev, dtype);
    let entry = match (vec4, columns) {
        (true, _) => "reduce_vec4",
        (false, true) => "reduce_columns",
        (false, false) => "reduce_strided",
    };
    // bf16 families read the words themselves: their T is f32.
    let t = if dtype == DType::BF16 { DType::F32 } else { dtype };
    let types = [t, family.types[1].dtypes[0], out_dtype];
    let unbiased = matches!(op, ReduceOp::Var { unbiased: true } | ReduceOp::Std { unbiased: true });
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let (groups, rows_per_y) = row_grid(chunks as u32, row_groups, max_dim);
    let (finish_groups, finish_rows_per_y) = row_grid(1, rows, max_dim);
    // A row in one chunk is finished by the launch that reads it, unless the
    // output shares the input's buffer (one launch cannot bind a buffer both
    // read-only and writable).
    let single_pass = chunks == 1 && !same_buffer;
    let (xa, in_offset) = match reader {
        Reader::View(input) => {
            let (xa, in_offset) = view_arg("x", input);
            (Some(xa), in_offset)
        }
        Reader::Fused(_) => (None, 0),
    };
    let (oa, out_offset) = view_arg("out", out);
    let params = |rows_per_y: u32| ReduceParams {
        k_total: k_total as u32,
        rows: rows as u32,
        chunks: chunks as u32,
        in_offset,
        out_offset,
        rows_per_y,
        kept_rank: kept_shape.len() as u32,
        red_rank: red_shape.len() as u32,
        unbiased: unbiased as u32,
        k_total_f: k_total as f32,
        zero: 0,
        single_pass: single_pass as u32,
        kept_shape: pack_u32(kept_shape, 1),
        kept_in: pack_i32(kept_strides[0]),
        kept_out: pack_i32(kept_strides[1]),
        red_shape: pack_u32(red_shape, 1),
        red_in: pack_i32(red_in),
    };

    if row_launch {
        match (reader, xa) {
            (Reader::View(_), Some(xa)) if rows::fits(&xa, dtype.size() as u64) => {
                return rows::record(stream, op.code(), dtype, types, xa, oa, params);
            }
            (Reader::Fused(f), _) => return rows::record_fused(stream, f, op.code(), types, oa, params),
            _ => {}
        }
    }

    let parts =
        Buffer::create_uninit(dev, parts_bytes, Usage { storage: true, uniform: false, indirect: false })?.buffer;
    let pa = Arg::whole("partials", &parts);
    // Variance first stores each row's mean (OP_SHIFT), then sums the deviations from it.
    let codes: &[u32] = if op.is_var() { &[OP_SHIFT, op.code()] } else { &[op.code()] };
    for &code in codes {
        let params_split = params(rows_per_y);
        // The split kernels name `out`; without a single pass they never
        // write it, and it is bound to the scratch instead.
        let out_arg = if single_pass { oa } else { Arg::whole("out", &parts) };
        match (reader, xa) {
            (Reader::View(_), Some(xa)) => {
                let split = family.variant(entry, &types, &[code as f64]);
                if vec4 {
                    let args = [xa, Arg { name: "xv", ..xa }, pa, out_arg];
                    spec::record(stream, &Launch { variant: split, params: params_split, args, groups })?;
                } else {
                    let args = [xa, pa, out_arg];
                    spec::record(stream, &Launch { variant: split, params: params_split, args, groups })?;
                }
            }
            (Reader::Fused(f), _) => f.record(stream, entry, types, code, 4, &params_split, &[pa, out_arg], groups)?,
            (Reader::View(_), None) => unreachable!("a view is bound"),
        }
        if single_pass {
            continue;
        }
        let finish_params = params(finish_rows_per_y);
        match reader {
            Reader::View(_) => {
                let finish = family.variant("reduce_finish", &types, &[code as f64]);
                let launch = Launch { variant: finish, params: finish_params, args: [pa, oa], groups: finish_groups };
                spec::record(stream, &launch)?;
            }
            Reader::Fused(f) => {
                f.record(stream, "reduce_finish", types, code, 4, &finish_params, &[pa, oa], finish_groups)?
            }
        }
    }
    Ok(())
}

/// The family for inputs of `dtype` on `dev` (accumulator and strategy).
fn family_of(dev: &crate::runtime::device::Device, dtype: DType) -> &'static Family {
    match dtype {
        DType::F32 | DType::F16 => strategy(dev, &FAMILY_F32, &FAMILY_F32_SUBGROUPS),
        DType::BF16 => strategy(dev, &FAMILY_BF16, &FAMILY_BF16_SUBGROUPS),
        DType::I32 => strategy(dev, &FAMILY_I32, &FAMILY_I32_SUBGROUPS),
        DType::U32 => strategy(dev, &FAMILY_U32, &FAMILY_U32_SUBGROUPS),
    }
}
