//! Reductions over axes (sum, mean, max, min, prod, argmax, argmin) and
//! variance / standard deviation, on the GPU in two passes (see
//! shaders/reduce.wgsl): a split pass writes per-chunk partial states to
//! scratch, a finishing pass combines them. Variance runs that pair twice:
//! once for the row means, once for the sums of deviations from them. No
//! host round-trip.

use super::common::{whole, Params};
use super::reduce_axes::{reduced_mask, reduced_shape};
use super::reduce_columns;
use super::reduce_kernels::{extremes, kernel, launch, row_grid, use_subgroups, WG};
use super::tensor::{coalesce, expect_shape, numel, same_device, DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::stream::StreamShared;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    Argmax,
    Argmin,
    /// Variance; `unbiased` divides by n - 1 instead of n.
    Var {
        unbiased: bool,
    },
    Std {
        unbiased: bool,
    },
}

impl ReduceOp {
    /// The OP code of shaders/reduce.wgsl.
    fn code(self) -> u32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Mean => 1,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
            ReduceOp::Prod => 4,
            ReduceOp::Argmax => 5,
            ReduceOp::Argmin => 6,
            ReduceOp::Var { .. } => 7,
            ReduceOp::Std { .. } => 8,
        }
    }
    fn is_var(self) -> bool {
        matches!(self, ReduceOp::Var { .. } | ReduceOp::Std { .. })
    }
    fn is_arg(self) -> bool {
        matches!(self, ReduceOp::Argmax | ReduceOp::Argmin)
    }
    fn floats_only(self) -> bool {
        matches!(self, ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. })
    }
    fn needs_elements(self) -> bool {
        matches!(self, ReduceOp::Max | ReduceOp::Min | ReduceOp::Argmax | ReduceOp::Argmin)
    }
}

/// Size of one partial state in scratch (struct State of reduce.wgsl).
const STATE_BYTES: u64 = 20;
/// The OP code of reduce.wgsl's first variance pass (the row means).
const OP_SHIFT: u32 = 9;
/// Enough workgroups in the split pass to keep a large GPU's memory system busy.
const TARGET_GROUPS: usize = 4096;
/// Elements each invocation should fold before splitting a row further pays.
const ELEMS_PER_THREAD: usize = 16;

/// Reduce `input` over `axes` (Python-style, none = all) into `out`.
pub fn reduce(
    stream: &StreamShared,
    op: ReduceOp,
    input: &Tensor,
    axes: &[i32],
    keepdim: bool,
    out: &Tensor,
) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[input, out])?;
    input.dtype.check_device(dev)?;
    if op.floats_only() && !input.dtype.is_float() {
        bail!(Unsupported, "{op:?} of {} tensors is not supported (floating-point inputs only)", input.dtype.wgsl());
    }
    let out_dtype = if op.is_arg() { DType::I32 } else { input.dtype };
    if out.dtype != out_dtype {
        bail!(
            DtypeMismatch,
            "{op:?} of a {} tensor writes {}; out is {}",
            input.dtype.wgsl(),
            out_dtype.wgsl(),
            out.dtype.wgsl()
        );
    }
    if op.is_arg() && axes.len() > 1 {
        bail!(InvalidArgument, "{op:?} takes one axis (or none, for the flattened tensor); {} given", axes.len());
    }
    let rank = input.rank();
    let mask = reduced_mask(rank, axes)?;
    expect_shape(out, &reduced_shape(&input.shape, &mask, keepdim), "out")?;
    let dims = |reduced: bool| -> Vec<usize> {
        input.shape.iter().zip(&mask).filter(|(_, &m)| m == reduced).map(|(&d, _)| d).collect()
    };
    let (k_total, rows) = (numel(&dims(true)), numel(&dims(false)));
    if k_total == 0 && op.needs_elements() {
        bail!(InvalidArgument, "{op:?} over an empty set of elements is undefined");
    }
    if k_total > i32::MAX as usize || rows > i32::MAX as usize {
        bail!(TooLarge, "reduction of {k_total} elements into {rows} outputs exceeds 2^31-1");
    }
    if out.shape.iter().zip(&out.strides).any(|(&d, &s)| d > 1 && s == 0) {
        bail!(InvalidArgument, "out has a zero stride on a dim larger than 1 (its elements would alias)");
    }
    // The input is read in the split pass and out written in the finishing
    // pass, so they may share a buffer; overlapping views are still refused.
    if out.may_overlap(input) {
        bail!(InvalidArgument, "out overlaps the input");
    }
    if rows == 0 {
        return Ok(());
    }

    // Input dims split into kept (with the output's strides) and reduced.
    let (mut kept_shape, mut kept_in, mut kept_out) = (Vec::new(), Vec::new(), Vec::new());
    let mut reduced: Vec<(usize, isize)> = Vec::new();
    let mut out_dim = 0;
    // `mask` has one entry per input dim (`rank` of them).
    for (d, &is_reduced) in mask.iter().enumerate() {
        if is_reduced {
            reduced.push((input.shape[d], input.strides[d]));
            if keepdim {
                out_dim += 1;
            }
        } else {
            kept_shape.push(input.shape[d]);
            kept_in.push(input.strides[d]);
            kept_out.push(out.strides[out_dim]);
            out_dim += 1;
        }
    }
    if !op.is_arg() {
        // Order only matters for arg indices; largest strides first lets transposed views coalesce.
        reduced.sort_by_key(|&(_, s)| std::cmp::Reverse(s.unsigned_abs()));
    }
    let (kept_shape, kept_strides) = coalesce(&kept_shape, &[kept_in, kept_out]);
    let red_shape_raw: Vec<usize> = reduced.iter().map(|r| r.0).collect();
    let red_strides_raw: Vec<isize> = reduced.iter().map(|r| r.1).collect();
    let (red_shape, red_strides) = coalesce(&red_shape_raw, &[red_strides_raw]);
    let red_in = &red_strides[0];
    let layout = reduce_columns::Layout {
        kept_shape: &kept_shape,
        kept_in: &kept_strides[0],
        kept_out: &kept_strides[1],
        red_shape: &red_shape,
        red_in,
    };
    if let Some(plan) = reduce_columns::plan(stream, op, input, out, &layout) {
        return plan.record(stream, input, out);
    }

    let vec4 = red_shape.len() == 1
        && red_in[0] == 1
        && k_total >= 4
        && input.offset.is_multiple_of(4)
        && kept_strides[0].iter().all(|s| s % 4 == 0);
    // Outputs adjacent in memory and reductions across rows: one invocation per output.
    let columns = !vec4
        && kept_shape.last().is_some()
        && kept_strides[0].last() == Some(&1)
        && red_in.iter().all(|&s| s.unsigned_abs() > 1)
        && rows >= WG as usize / 4;
    let (per_group, row_groups) =
        if columns { (ELEMS_PER_THREAD, rows.div_ceil(WG as usize)) } else { (WG as usize * ELEMS_PER_THREAD, rows) };
    let want = k_total.div_ceil(per_group).max(1);
    let chunks =
        want.min((TARGET_GROUPS / row_groups).max(1)).min(dev.limits.max_compute_workgroups_per_dimension as usize);

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
    let acc = match input.dtype {
        DType::F32 | DType::F16 => "f32",
        d => d.wgsl(),
    };
    let (lowest, highest) = extremes(acc);
    let sg = use_subgroups(dev);
    let wg = WG.to_string();
    let entry = match (vec4, columns) {
        (true, _) => "reduce_vec4",
        (false, true) => "reduce_columns",
        (false, false) => "reduce_strided",
    };
    // The split and finishing kernels of one OP code.
    let kernels = |code: u32| {
        let op_code = code.to_string();
        let values = [
            ("ENABLES", input.dtype.enable()),
            ("T", input.dtype.wgsl()),
            ("ACC", acc),
            ("OUT", out_dtype.wgsl()),
            ("OP", op_code.as_str()),
            ("WG", wg.as_str()),
            ("LOWEST", lowest),
            ("HIGHEST", highest),
            ("FLOAT", if acc == "f32" { "true" } else { "false" }),
        ];
        Ok::<_, crate::error::Error>((
            kernel(dev, "reduce.wgsl", entry, &values, sg, false)?,
            kernel(dev, "reduce.wgsl", "reduce_finish", &values, sg, false)?,
        ))
    };
    let passes = if op.is_var() { vec![kernels(OP_SHIFT)?, kernels(op.code())?] } else { vec![kernels(op.code())?] };

    let unbiased = matches!(op, ReduceOp::Var { unbiased: true } | ReduceOp::Std { unbiased: true });
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let (groups, rows_per_y) = row_grid(chunks as u32, row_groups, max_dim);
    let (finish_groups, finish_rows_per_y) = row_grid(1, rows, max_dim);
    let params = |rows_per_y: u32| {
        Params::new()
            .u32(k_total as u32)
            .u32(rows as u32)
            .u32(chunks as u32)
            .u32(input.bound_offset())
            .u32(out.bound_offset())
            .u32(rows_per_y)
            .u32(kept_shape.len() as u32)
            .u32(red_shape.len() as u32)
            .u32(unbiased as u32)
            .f32(k_total as f32)
            .u32(0) // zero: reduce.wgsl's opaque()
            .align16()
            .array8_u32(&kept_shape, 1)
            .array8_i32(&kept_strides[0])
            .array8_i32(&kept_strides[1])
            .array8_u32(&red_shape, 1)
            .array8_i32(red_in)
    };

    let parts =
        Buffer::create_uninit(dev, parts_bytes, Usage { storage: true, uniform: false, indirect: false })?.buffer;
    let mut binds = vec![input.bind(0), whole(2, &parts)];
    if vec4 {
        binds.push(input.bind(1));
    }
    for (split, finish) in &passes {
        launch(stream, split, &binds, &params(rows_per_y), groups)?;
        launch(stream, finish, &[whole(2, &parts), out.bind(4)], &params(finish_rows_per_y), finish_groups)?;
    }
    Ok(())
}
