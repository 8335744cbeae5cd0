//! Run reductions (shaders/reduce_runs.wgsl): reductions whose innermost
//! reduced dim is contiguous in the input while other reduced dims lie
//! outside kept ones (axes 0, 2, 3 of NCHW; axes 0 and 2 of (A, B, C)), and
//! the planes of a global average pool. A team of lanes per output reads
//! its contiguous runs side by side (coalesced, vec4 where aligned) and
//! merges lane states in workgroup memory; the runs of outputs too few to
//! fill the GPU are split into chunks that a second pass merges. Variance
//! and standard deviation run twice: the means, then the deviations from
//! them (as every reduction kernel, for the header's accuracy).

use crate::error::Result;
use crate::ops::reduce::common::{Layout, ReduceOp};
use crate::ops::reduce::kernels::row_grid;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::split::scratch;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

const WG: usize = 256;
/// Workgroups that keep a large GPU's memory system busy.
const TARGET_GROUPS: usize = 4096;
/// Loads a lane should issue at least before a split into chunks pays.
const MIN_LOADS: usize = 8;
/// Loop steps (loads and decodes) of one lane at most: far below
/// lavapipe's 65,535 loop iterations per invocation.
const MAX_STEPS: usize = 8192;
/// Chunks the finishing pass merges per output at most (one loop each).
const MAX_CHUNKS: usize = 16384;
/// Size of one partial (struct Part of reduce_state.wgsl).
const PART_BYTES: u64 = 20;
/// Every team size the plan can pick (powers of two up to WG).
const TEAMS: &[f64] = &[4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

pub static FAMILY: Family = Family {
    file: "reduce_runs.wgsl",
    source: concat!(
        include_str!("../../../shaders/reduce_runs.wgsl"),
        include_str!("../../../shaders/reduce_state.wgsl")
    ),
    entries: &["runs", "runs4", "runs_mean", "runs_mean4", "runs_dev", "runs_dev4", "finish", "finish_mean"],
    types: &[
        TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16, DType::I32, DType::U32] },
        TypeSlot { alias: "A", dtypes: &[DType::F32, DType::I32, DType::U32] },
    ],
    overrides: &[
        OverrideSlot { name: "OP", values: &[0.0, 1.0, 2.0, 3.0, 4.0, 7.0, 8.0] },
        OverrideSlot { name: "G", values: TEAMS },
    ],
    uniform: <RunParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of reduce_runs.wgsl.
    pub struct RunParams = "Params" {
        pub rows: u32,
        pub run: u32,
        pub k_total: u32,
        pub chunks: u32,
        pub chunk_runs: u32,
        pub runs: u32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub groups_per_y: u32,
        pub kept_rank: u32,
        pub red_rank: u32,
        pub unbiased: u32,
        pub k_total_f: f32,
        pub zero: u32,
        pub lowest: u32,
        pub highest: u32,
        pub direct: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub _pad2: u32,
        pub kept_shape: [[u32; 4]; 2],
        pub kept_in: [[i32; 4]; 2],
        pub kept_out: [[i32; 4]; 2],
        pub red_shape: [[u32; 4]; 2],
        pub red_in: [[i32; 4]; 2],
    }
}

/// The shader's OP code (reduce_state.wgsl); `None` for the arg ops.
fn op_code(op: ReduceOp) -> Option<f64> {
    Some(match op {
        ReduceOp::Sum => 0.0,
        ReduceOp::Mean => 1.0,
        ReduceOp::Max => 2.0,
        ReduceOp::Min => 3.0,
        ReduceOp::Prod => 4.0,
        ReduceOp::Var { .. } => 7.0,
        ReduceOp::Std { .. } => 8.0,
        ReduceOp::Argmax | ReduceOp::Argmin => return None,
    })
}

/// The accumulator and the bits of its lowest and highest values.
fn accumulator(d: DType) -> (DType, u32, u32) {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => (DType::F32, 0xff80_0000, 0x7f80_0000),
        DType::I32 => (DType::I32, 0x8000_0000, 0x7fff_ffff),
        DType::U32 => (DType::U32, 0, 0xffff_ffff),
    }
}

/// The team size for runs of `units` loads (vec4s, or scalars in fours):
/// about two steps a lane, at least 4 lanes, at most a workgroup.
fn team_size(units: usize) -> usize {
    units.div_ceil(2).next_power_of_two().clamp(4, WG)
}

/// A run reduction, planned.
pub struct Plan {
    op: ReduceOp,
    params: RunParams,
    vec4: bool,
    team: usize,
    split_groups: [u32; 3],
    finish_groups: [u32; 3],
    finish_groups_per_y: u32,
}

/// The run plan for this reduction, or `None` where the innermost reduced
/// dim is not contiguous, the op is an arg op, a dim is empty, the ranks
/// exceed 8, or a run is too long for one team's loop limit. `input` and
/// `out` are validated; `l` is coalesced with the reduced dims in the
/// order they are to be walked (the run last).
pub fn plan(stream: &StreamShared, op: ReduceOp, input: &Tensor, out: &Tensor, l: &Layout) -> Option<Plan> {
    let dev = &stream.device;
    op_code(op)?;
    let (Some(&run), Some(&1)) = (l.red_shape.last(), l.red_in.last()) else { return None };
    let red_rank = l.red_shape.len() - 1;
    if red_rank > 8 || l.kept_shape.len() > 8 || l.red_shape.contains(&0) || l.kept_shape.contains(&0) {
        return None;
    }
    let rows: usize = l.kept_shape.iter().product();
    let runs: usize = l.red_shape[..red_rank].iter().product();
    let k_total = run * runs;
    let in_offset = input.bound_offset();
    let vec4 = run.is_multiple_of(4)
        && in_offset.is_multiple_of(4)
        && l.kept_in.iter().chain(&l.red_in[..red_rank]).all(|s| s % 4 == 0);
    let units = if vec4 { run / 4 } else { run.div_ceil(4) };
    let team = team_size(units);
    // Loop steps of a lane per run: its loads (two or four a step) and a decode.
    let steps = units.div_ceil(if vec4 { 2 * team } else { team }) + red_rank + 1;
    let loads = units.div_ceil(team) * if vec4 { 1 } else { 4 };
    if steps > MAX_STEPS {
        return None;
    }
    let row_groups = rows.div_ceil(WG / team);
    let chunks = TARGET_GROUPS
        .div_ceil(row_groups)
        .min(runs.div_ceil(MIN_LOADS.div_ceil(loads)))
        .max(runs.div_ceil(MAX_STEPS / steps))
        .max(1);
    let chunk_runs = runs.div_ceil(chunks);
    let chunks = runs.div_ceil(chunk_runs);
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let parts_bytes = (chunks * rows) as u64 * PART_BYTES;
    if chunks > MAX_CHUNKS.min(max_dim as usize) || parts_bytes > dev.limits.max_storage_buffer_binding_size {
        return None;
    }
    let (split_groups, groups_per_y) = row_grid(chunks as u32, row_groups, max_dim);
    let (finish_groups, finish_groups_per_y) = row_grid(1, rows.div_ceil(WG), max_dim);
    let (_, lowest, highest) = accumulator(input.dtype);
    let unbiased = matches!(op, ReduceOp::Var { unbiased: true } | ReduceOp::Std { unbiased: true });
    // One launch cannot bind a buffer both read-only and writable.
    let direct = chunks == 1 && !input.same_buffer(out);
    let params = RunParams {
        rows: rows as u32,
        run: run as u32,
        k_total: k_total as u32,
        chunks: chunks as u32,
        chunk_runs: chunk_runs as u32,
        runs: runs as u32,
        in_offset,
        out_offset: out.bound_offset(),
        groups_per_y,
        kept_rank: l.kept_shape.len() as u32,
        red_rank: red_rank as u32,
        unbiased: unbiased as u32,
        k_total_f: k_total as f32,
        zero: 0,
        lowest,
        highest,
        direct: direct as u32,
        _pad0: 0,
        _pad1: 0,
        _pad2: 0,
        kept_shape: pack_u32(l.kept_shape, 1),
        kept_in: pack_i32(l.kept_in),
        kept_out: pack_i32(l.kept_out),
        red_shape: pack_u32(&l.red_shape[..red_rank], 1),
        red_in: pack_i32(&l.red_in[..red_rank]),
    };
    Some(Plan { op, params, vec4, team, split_groups, finish_groups, finish_groups_per_y })
}

impl Plan {
    /// Record the passes: split, and finish where the runs were chunked;
    /// twice for variance (the means first). Writes `out` only; partials
    /// and means live in scratch.
    pub fn record(&self, stream: &StreamShared, input: &Tensor, out: &Tensor) -> Result<()> {
        let dev = &stream.device;
        let p = &self.params;
        let (acc, _, _) = accumulator(input.dtype);
        let types = [input.dtype, acc];
        let var = matches!(self.op, ReduceOp::Var { .. } | ReduceOp::Std { .. });
        // Scratch first: nothing is recorded unless every allocation succeeded.
        let parts =
            scratch(dev, if p.direct != 0 { PART_BYTES } else { p.chunks as u64 * p.rows as u64 * PART_BYTES })?;
        let means = scratch(dev, if var { p.rows as u64 * 4 } else { 4 })?;
        let (pa, ma) = (Arg::whole("parts", &parts), Arg::whole("means", &means));
        let (xa, _) = view_arg("x", input);
        let xa = if self.vec4 { Arg { name: "x4", ..xa } } else { xa };
        // Without `direct` the split entries never write y: it is bound to
        // the scratch (out may share the input's buffer, which one launch
        // cannot bind both read-only and writable).
        let (ya, _) = view_arg("y", out);
        let split_y = if p.direct != 0 { ya } else { Arg::whole("y", &parts) };
        let code = op_code(self.op).expect("planned ops have a code");
        let four = |scalar: &'static str, vector: &'static str| if self.vec4 { vector } else { scalar };
        let direct = p.direct != 0;
        if var {
            let mean = op_code(ReduceOp::Mean).expect("mean has a code");
            self.split(stream, four("runs_mean", "runs_mean4"), &types, mean, [xa, pa, ma])?;
            if !direct {
                self.finish(stream, "finish_mean", &types, mean, [pa, ma])?;
            }
            self.split(stream, four("runs_dev", "runs_dev4"), &types, code, [xa, pa, ma, split_y])?;
        } else {
            self.split(stream, four("runs", "runs4"), &types, code, [xa, pa, split_y])?;
        }
        if !direct {
            self.finish(stream, "finish", &types, code, [pa, ya])?;
        }
        Ok(())
    }

    fn split<const N: usize>(
        &self,
        stream: &StreamShared,
        entry: &'static str,
        types: &[DType],
        code: f64,
        args: [Arg; N],
    ) -> Result<()> {
        let variant = FAMILY.variant(entry, types, &[code, self.team as f64]);
        spec::record(stream, &Launch { variant, params: self.params, args, groups: self.split_groups })
    }

    fn finish<const N: usize>(
        &self,
        stream: &StreamShared,
        entry: &'static str,
        types: &[DType],
        code: f64,
        args: [Arg; N],
    ) -> Result<()> {
        let variant = FAMILY.variant(entry, types, &[code, self.team as f64]);
        let params = RunParams { groups_per_y: self.finish_groups_per_y, ..self.params };
        spec::record(stream, &Launch { variant, params, args, groups: self.finish_groups })
    }
}
