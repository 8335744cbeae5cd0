//! Column reductions (shaders/reduce_columns.wgsl): reductions whose kept
//! innermost dim is contiguous in the input (sum over axis 0 of a matrix,
//! over the leading axes of a batch). Each invocation owns one column (or
//! four, with vec4 loads) and walks the reduced rows, so every load of a
//! workgroup is coalesced; when there are too few columns to fill the GPU
//! the reduced range is split into chunks whose partials a second pass
//! combines. Variance and standard deviation run the pair twice: the
//! column means, then the deviations from them.

use crate::error::Result;
use crate::ops::reduce::kernels::row_grid;
use crate::ops::reduce::ReduceOp;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::split::scratch;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

const WG: u32 = 256;
/// Columns below which the row kernels do better (a warp would idle).
const MIN_COLUMNS: usize = 16;
/// Invocations that keep a large GPU's memory system busy (each has four
/// loads in flight).
const TARGET_INVOCATIONS: usize = 1 << 17;
/// Reduced rows a chunk folds at least, so a split pays for its partials
/// (20 bytes per output and chunk, written and read again).
const MIN_CHUNK: usize = 128;
/// Reduced rows a chunk folds at most: with a decode of up to 7 dims per
/// run of at least 2 rows, an invocation stays far below lavapipe's 65,535
/// loop iterations.
const MAX_CHUNK: usize = 8192;
/// Chunks the finishing pass folds per output at most (one loop each).
const MAX_CHUNKS: usize = 16384;
/// Size of one partial (struct Part of the shader).
const PART_BYTES: u64 = 20;
/// Most row groups per workgroup: their states (80 bytes each) must fit
/// the 16 KiB of workgroup memory every adapter offers.
const MAX_ROW_GROUPS: usize = 4;

/// Invocations a split pass aims for (the device's setting
/// `WGC_COLUMNS_INVOCATIONS`, else TARGET_INVOCATIONS).
fn target_invocations(dev: &Device) -> usize {
    dev.settings().reduce.columns_invocations.unwrap_or(TARGET_INVOCATIONS)
}

/// Row groups per workgroup (the device's setting `WGC_COLUMNS_ROW_GROUPS`
/// = 1, 2 or 4 forces one).
fn forced_row_groups(dev: &Device) -> Option<usize> {
    dev.settings().reduce.columns_row_groups
}

pub static FAMILY: Family = Family {
    file: "reduce_columns.wgsl",
    source: concat!(
        include_str!("../../../shaders/reduce_columns.wgsl"),
        include_str!("../../../shaders/reduce_state.wgsl")
    ),
    entries: &["columns", "columns4", "columns_dev", "columns_dev4", "finish", "finish_index", "finish_mean"],
    types: &[
        TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16, DType::I32, DType::U32] },
        TypeSlot { alias: "A", dtypes: &[DType::F32, DType::I32, DType::U32] },
    ],
    overrides: &[
        OverrideSlot { name: "OP", values: &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0] },
        OverrideSlot { name: "RG", values: &[1.0, 2.0, 4.0] },
    ],
    uniform: <ColumnParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of reduce_columns.wgsl.
    pub struct ColumnParams = "Params" {
        pub rows: u32,
        pub cols: u32,
        pub k_total: u32,
        pub chunks: u32,
        pub chunk_len: u32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub blocks_per_y: u32,
        pub outer_rank: u32,
        pub red_rank: u32,
        pub unbiased: u32,
        pub k_total_f: f32,
        pub zero: u32,
        pub lowest: u32,
        pub highest: u32,
        pub out_stride: i32,
        pub outer_shape: [[u32; 4]; 2],
        pub outer_in: [[i32; 4]; 2],
        pub outer_out: [[i32; 4]; 2],
        pub red_shape: [[u32; 4]; 2],
        pub red_in: [[i32; 4]; 2],
    }
}

/// The shader's OP code.
fn op_code(op: ReduceOp) -> f64 {
    match op {
        ReduceOp::Sum => 0.0,
        ReduceOp::Mean => 1.0,
        ReduceOp::Max => 2.0,
        ReduceOp::Min => 3.0,
        ReduceOp::Prod => 4.0,
        ReduceOp::Argmax => 5.0,
        ReduceOp::Argmin => 6.0,
        ReduceOp::Var { .. } => 7.0,
        ReduceOp::Std { .. } => 8.0,
    }
}

/// The accumulator and the bits of its lowest and highest values.
fn accumulator(d: DType) -> (DType, u32, u32) {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => (DType::F32, 0xff80_0000, 0x7f80_0000),
        DType::I32 => (DType::I32, 0x8000_0000, 0x7fff_ffff),
        DType::U32 => (DType::U32, 0, 0xffff_ffff),
    }
}

/// The reduction's layout after coalescing (as `reduce` computes it): kept
/// dims with their input and output strides, reduced dims (largest stride
/// first) with their input strides.
pub struct Layout<'a> {
    pub kept_shape: &'a [usize],
    pub kept_in: &'a [isize],
    pub kept_out: &'a [isize],
    pub red_shape: &'a [usize],
    pub red_in: &'a [isize],
}

/// A column reduction, planned.
pub struct Plan {
    op: ReduceOp,
    params: ColumnParams,
    vec4: bool,
    /// Row groups per workgroup (the shader's RG).
    row_groups: usize,
    split_groups: [u32; 3],
    finish_groups: [u32; 3],
    finish_blocks_per_y: u32,
}

/// The column plan for this reduction, or `None` where its layout is not a
/// column reduction (the innermost kept dim not contiguous in the input,
/// few columns, nothing reduced) or too long for its limits. `input` and
/// `out` are validated.
pub fn plan(stream: &StreamShared, op: ReduceOp, input: &Tensor, out: &Tensor, l: &Layout) -> Option<Plan> {
    let dev = &stream.device;
    let (Some(&cols), Some(&1)) = (l.kept_shape.last(), l.kept_in.last()) else { return None };
    let (red_rank, outer_rank) = (l.red_shape.len(), l.kept_shape.len() - 1);
    if cols < MIN_COLUMNS || red_rank == 0 || l.red_shape.contains(&0) || red_rank > 8 || outer_rank > 8 {
        return None;
    }
    let rows: usize = l.kept_shape.iter().product();
    let k_total: usize = l.red_shape.iter().product();
    let in_offset = input.bound_offset();
    let vec4 = cols.is_multiple_of(4)
        && in_offset.is_multiple_of(4)
        && l.kept_in[..outer_rank].iter().chain(l.red_in).all(|s| s % 4 == 0);
    let units = rows / if vec4 { 4 } else { 1 };
    let target = target_invocations(dev);
    let chunks = target.div_ceil(units).min(k_total.div_ceil(MIN_CHUNK)).max(k_total.div_ceil(MAX_CHUNK)).max(1);
    let chunk_len = k_total.div_ceil(chunks);
    let chunks = k_total.div_ceil(chunk_len);
    // Still too few invocations (few columns, chunks kept long so that
    // partials stay cheap): more row groups per workgroup, each folding a
    // share of a chunk, while a share keeps at least MIN_CHUNK / 4 rows.
    let mut row_groups = 1;
    while row_groups < MAX_ROW_GROUPS
        && units * chunks * row_groups < target
        && chunk_len / (2 * row_groups) >= MIN_CHUNK / 4
    {
        row_groups *= 2;
    }
    let row_groups = forced_row_groups(dev).unwrap_or(row_groups);
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let parts_bytes = (chunks * rows) as u64 * PART_BYTES;
    if chunks > MAX_CHUNKS.min(max_dim as usize) || parts_bytes > dev.limits.max_storage_buffer_binding_size {
        return None;
    }
    let (split_groups, blocks_per_y) = row_grid(chunks as u32, units.div_ceil(WG as usize / row_groups), max_dim);
    let (finish_groups, finish_blocks_per_y) = row_grid(1, rows.div_ceil(WG as usize), max_dim);
    let (_, lowest, highest) = accumulator(input.dtype);
    let unbiased = matches!(op, ReduceOp::Var { unbiased: true } | ReduceOp::Std { unbiased: true });
    let params = ColumnParams {
        rows: rows as u32,
        cols: cols as u32,
        k_total: k_total as u32,
        chunks: chunks as u32,
        chunk_len: chunk_len as u32,
        in_offset,
        out_offset: out.bound_offset(),
        blocks_per_y,
        outer_rank: outer_rank as u32,
        red_rank: red_rank as u32,
        unbiased: unbiased as u32,
        k_total_f: k_total as f32,
        zero: 0,
        lowest,
        highest,
        out_stride: *l.kept_out.last()? as i32,
        outer_shape: pack_u32(&l.kept_shape[..outer_rank], 1),
        outer_in: pack_i32(&l.kept_in[..outer_rank]),
        outer_out: pack_i32(&l.kept_out[..outer_rank]),
        red_shape: pack_u32(l.red_shape, 1),
        red_in: pack_i32(l.red_in),
    };
    Some(Plan { op, params, vec4, row_groups, split_groups, finish_groups, finish_blocks_per_y })
}

impl Plan {
    /// Record the passes: split and finish, twice for variance (the means
    /// first). Writes `out` only; partials live in scratch.
    pub fn record(&self, stream: &StreamShared, input: &Tensor, out: &Tensor) -> Result<()> {
        let dev = &stream.device;
        let p = &self.params;
        let (acc, _, _) = accumulator(input.dtype);
        let types = [input.dtype, acc];
        let var = matches!(self.op, ReduceOp::Var { .. } | ReduceOp::Std { .. });
        // Scratch first: nothing is recorded unless every allocation succeeded.
        let parts = scratch(dev, p.chunks as u64 * p.rows as u64 * PART_BYTES)?;
        let means = scratch(dev, if var { p.rows as u64 * 4 } else { 4 })?;
        let pa = Arg::whole("parts", &parts);
        let (xa, _) = view_arg("x", input);
        let xa = if self.vec4 { Arg { name: "x4", ..xa } } else { xa };
        let (ya, _) = view_arg("y", out);
        let split = |dev_entry: bool| match (dev_entry, self.vec4) {
            (false, false) => "columns",
            (false, true) => "columns4",
            (true, false) => "columns_dev",
            (true, true) => "columns_dev4",
        };
        let finish_params = ColumnParams { blocks_per_y: self.finish_blocks_per_y, ..*p };
        let code = op_code(self.op);
        let rg = self.row_groups as f64;
        match self.op {
            ReduceOp::Var { .. } | ReduceOp::Std { .. } => {
                let ma = Arg::whole("means", &means);
                let mean = |e| FAMILY.variant(e, &types, &[op_code(ReduceOp::Mean), 1.0]);
                let var = |e| FAMILY.variant(e, &types, &[code, 1.0]);
                let mean_split = FAMILY.variant(split(false), &types, &[op_code(ReduceOp::Mean), rg]);
                let var_split = FAMILY.variant(split(true), &types, &[code, rg]);
                spec::record(
                    stream,
                    &Launch { variant: mean_split, params: *p, args: [xa, pa], groups: self.split_groups },
                )?;
                spec::record(
                    stream,
                    &Launch {
                        variant: mean("finish_mean"),
                        params: finish_params,
                        args: [pa, ma],
                        groups: self.finish_groups,
                    },
                )?;
                spec::record(
                    stream,
                    &Launch { variant: var_split, params: *p, args: [xa, pa, ma], groups: self.split_groups },
                )?;
                spec::record(
                    stream,
                    &Launch {
                        variant: var("finish"),
                        params: finish_params,
                        args: [pa, ya],
                        groups: self.finish_groups,
                    },
                )
            }
            op => {
                let variant = |e| FAMILY.variant(e, &types, &[code, 1.0]);
                let split_variant = FAMILY.variant(split(false), &types, &[code, rg]);
                spec::record(
                    stream,
                    &Launch { variant: split_variant, params: *p, args: [xa, pa], groups: self.split_groups },
                )?;
                let (entry, ya) = match op {
                    ReduceOp::Argmax | ReduceOp::Argmin => ("finish_index", Arg { name: "y_index", ..ya }),
                    _ => ("finish", ya),
                };
                spec::record(
                    stream,
                    &Launch {
                        variant: variant(entry),
                        params: finish_params,
                        args: [pa, ya],
                        groups: self.finish_groups,
                    },
                )
            }
        }
    }
}
