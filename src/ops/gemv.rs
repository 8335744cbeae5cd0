//! Skinny products (shaders/gemv.wgsl): GEMMs where M or N is at most
//! `MAX_SKINNY`, such as a batch of activation rows times a weight. They are
//! bound by reading the large operand ("the weight"), which these kernels
//! read once per tile of up to 16 rows, coalesced and in 16-byte units where
//! the layout allows, where the tiled GEMM would spend most of each 64-row
//! tile on padding. The GEMM calls `plan` at the point where it picks its
//! kernel; layouts these kernels cannot read coalesced (neither of the
//! weight's inner strides 1) get `None` and stay with the tiled GEMM.
//!
//! The product is seen as rows x weight: `act` (.., R, K) times `wt`
//! (.., K, N) into `out` (.., R, N) with R small. A product with few columns
//! is the transposed one (C^T = B^T A^T, views only). Where the weight is the
//! same for every batch matrix and the batch's rows are evenly spaced, the
//! batch is folded into R (a decode step over several sequences reads the
//! weight once).
//!
//! `WGC_GEMV_MT` (read once; 1, 2, 4, 8 or 16) caps the rows of A one
//! workgroup takes (the default: 16, and 8 for f16 in the `cols` kernels),
//! so that register pressure against weight re-reads can be measured;
//! `WGC_GEMV_FILL` (read once) sets the invocations below which K is split
//! to fill the GPU (default 131072), so that the split's second pass against
//! fewer workgroups in flight can be measured.

use super::grid::grid_1d;
use super::reduce_kernels::strategy;
use super::spec::uniform::uniform;
use super::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use super::split::scratch;
use super::tensor::{coalesce, numel, DType, Tensor};
use crate::error::Result;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;
use std::sync::OnceLock;

/// Most rows (M, or N for the transposed product) these kernels take. Up to
/// here a product is bound by reading the weight (at M = 32 and f32, by the
/// FMAs as much: M x N x K FMAs over N x K x 4 bytes at 4 TB/s is 32 TFMA/s);
/// these kernels read it once per 16 rows with workgroups enough for any N
/// (K split), where the tiled GEMM's 64-row tiles are at most half used
/// and it has only N / 64 workgroups (224 for N = 14336: under 2 per SM on an
/// H200; it measured 5-19% of the bandwidth at M = 32).
const MAX_SKINNY: usize = 32;
/// With a different weight per batch matrix the tiled GEMM has batch x N / 64
/// tiles and reads each weight once too; from this many tiles (measured on
/// an H200: 64 tiles lose to the skinny kernels, 224 win) it takes products
/// of more than one 16-row tile.
const TILED_ENOUGH: usize = 128;
/// Rows of A per workgroup at most (MAXM in the shader).
const MAX_MT: usize = 16;
/// dot: invocations per workgroup (WGD); columns of W per workgroup at most
/// (ROWS), and the partial sums per invocation (ROWS x MT) at most, which
/// keeps them with the loaded weight units in registers.
const DOT_WG: usize = 64;
const DOT_SLOTS: usize = 32;
/// cols: units of columns per workgroup (CU) and invocations (CU x KS).
const COLS_UNITS: usize = 32;
const COLS_WG: usize = 256;
/// Workgroup size of the slabs' sum.
const SUM_WG: u32 = 256;
/// Invocations that fill a large GPU: 1024 per SM on an H200's 132, each with
/// several 16-byte loads in flight. Fewer tiles than this split K further
/// (`WGC_GEMV_FILL`, read once, sets another count, to measure).
const FILL_INVOCATIONS: usize = 1 << 17;
/// Longest K run per workgroup: a dot invocation loops 8192 / (64 * VW) <= 32
/// times, a cols one 2048 / 8 = 256 times, each with fewer than 250 inner
/// iterations (unrolled where the driver unrolls): both far below a
/// software driver's 65,535.
const DOT_MAX_CHUNK: usize = 8192;
const COLS_MAX_CHUNK: usize = 2048;
/// Shortest K run a split makes (in units of VW for dot: 4 per invocation;
/// rows for cols: 8 per K slice), enough loads per invocation to hide latency.
const DOT_MIN_UNITS: usize = 4 * DOT_WG;
const COLS_MIN_CHUNK: usize = 64;
/// The slabs a split writes and the sum reads stay within 1/16 of the
/// weight's bytes: splits <= K * size(T) / (8 * 16 * rows).
const SLAB_SHARE: usize = 128;
/// Most slabs (the sum loops over them).
const MAX_SPLITS: usize = 4096;
/// Most slab bytes at all (as the tiled GEMM's default budget; past it the
/// tiled GEMM sums its runs in waves).
const MAX_SLAB_BYTES: usize = 256 << 20;

const ENTRIES: &[&str] = &[
    "dot_rows",
    "dot_rows_vec",
    "dot_rows_split",
    "dot_rows_vec_split",
    "cols",
    "cols_vec",
    "cols_split",
    "cols_vec_split",
    "sum_splits",
];
const TYPES: &[TypeSlot] = &[
    TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] },
    TypeSlot { alias: "O", dtypes: &[DType::F32, DType::F16] },
];
const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "MT", values: &[1.0, 2.0, 4.0, 8.0, 16.0] },
    OverrideSlot { name: "ROWS", values: &[1.0, 2.0, 4.0] },
];

/// The kernels with workgroup-memory reductions only.
pub static FAMILY: Family = Family {
    file: "gemv.wgsl",
    source: concat!(include_str!("../../shaders/gemv.wgsl"), include_str!("../../shaders/reduce_wg_shared.wgsl")),
    entries: ENTRIES,
    types: TYPES,
    overrides: OVERRIDES,
    uniform: <GemvParams as spec::Uniform>::layout,
};

/// The same kernels, the dot products' sums through subgroup operations.
pub static FAMILY_SUBGROUPS: Family = Family {
    file: "gemv.wgsl+subgroups",
    source: concat!(include_str!("../../shaders/gemv.wgsl"), include_str!("../../shaders/reduce_wg_subgroups.wgsl")),
    ..FAMILY
};

uniform! {
    /// The uniform of gemv.wgsl.
    pub struct GemvParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub k: u32,
        pub batch_rank: u32,
        pub alpha: f32,
        pub beta: f32,
        pub a_sm: i32,
        pub a_sk: i32,
        pub w_sk: i32,
        pub w_sn: i32,
        pub c_sm: i32,
        pub c_sn: i32,
        pub a_off: u32,
        pub w_off: u32,
        pub c_off: u32,
        pub k_chunk: u32,
        pub splits: u32,
        pub m_tiles: u32,
        pub total: u32,
        pub row: u32,
        pub batches: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub _pad2: u32,
        pub batch_shape: [[u32; 4]; 2],
        pub a_bstride: [[i32; 4]; 2],
        pub w_bstride: [[i32; 4]; 2],
        pub c_bstride: [[i32; 4]; 2],
    }
}

/// Which inner stride of the weight is 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// K contiguous: each output is a dot product of contiguous runs.
    Dot,
    /// N contiguous: invocations across N, a loop over K.
    Cols,
}

/// A skinny product, planned: what `record` launches.
pub struct Plan<'a> {
    act: Tensor<'a>,
    wt: Tensor<'a>,
    out: Tensor<'a>,
    entry: &'static str,
    /// Whether the entry reads 16-byte units (binds `av`/`wv`).
    vec: bool,
    overrides: [f64; 2],
    params: GemvParams,
    groups: [u32; 3],
    /// Elements of C over all batch matrices (the slabs' size).
    outputs: usize,
}

/// The view with its last two dims swapped.
fn swap_last<'a>(t: &Tensor<'a>) -> Tensor<'a> {
    let r = t.rank();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    t.permuted(&perm)
}

/// `t`'s batch strides over the broadcast batch shape (0 where broadcast).
fn batch_strides(t: &Tensor, batch: &[usize]) -> Vec<isize> {
    let own = t.rank() - 2;
    let pad = batch.len() - own;
    (0..batch.len()).map(|i| if i < pad || t.shape[i - pad] == 1 { 0 } else { t.strides[i - pad] }).collect()
}

/// The cap on rows of A per workgroup from `WGC_GEMV_MT` (read once), if set
/// to a power of two up to `MAX_MT`.
fn mt_cap_from_env() -> Option<usize> {
    static CAP: OnceLock<Option<usize>> = OnceLock::new();
    *CAP.get_or_init(|| {
        let v: usize = std::env::var("WGC_GEMV_MT").ok()?.trim().parse().ok()?;
        (v.is_power_of_two() && v <= MAX_MT).then_some(v)
    })
}

/// The fill target: `WGC_GEMV_FILL` (read once) where set to a count, else
/// FILL_INVOCATIONS.
fn fill_invocations() -> usize {
    static FILL: OnceLock<usize> = OnceLock::new();
    *FILL.get_or_init(|| {
        let v = std::env::var("WGC_GEMV_FILL").ok().and_then(|v| v.trim().parse::<usize>().ok());
        v.filter(|&v| v > 0).unwrap_or(FILL_INVOCATIONS)
    })
}

/// The plan for `c = alpha * a b + beta * c` (views a (.., M, K), b (.., K,
/// N), c (.., M, N), batch the broadcast batch shape, dtypes and shapes
/// checked, nothing empty) if it is a skinny product these kernels read
/// coalesced; `None` leaves it to the tiled GEMM. Products with a row bias
/// (1x1 convolutions) are not skinny ones.
#[allow(clippy::too_many_arguments)]
pub fn plan<'a>(
    dev: &Device,
    alpha: f32,
    a: &Tensor<'a>,
    b: &Tensor<'a>,
    beta: f32,
    c: &Tensor<'a>,
    batch: &[usize],
    has_bias: bool,
) -> Result<Option<Plan<'a>>> {
    if has_bias {
        return Ok(None);
    }
    let (m, n) = (a.shape[a.rank() - 2], b.shape[b.rank() - 1]);
    let straight = (a.clone(), b.clone(), c.clone());
    let flipped = (swap_last(b), swap_last(a), swap_last(c));
    // The smaller side as the rows first; the other where only it is readable.
    let order = if m <= n { [straight, flipped] } else { [flipped, straight] };
    for (act, wt, out) in order {
        if let Some(p) = plan_rows(dev, alpha, beta, act, wt, out, batch) {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// Whether view `t` (bound as `view_arg` binds it) can be read in 16-byte
/// units of `vw` elements along a dim of stride 1: its bound offset, `strides`
/// (the others it walks) multiples of `vw`, and its binding 16-byte aligned.
fn vec_readable(t: &Tensor, vw: usize, strides: &[isize]) -> bool {
    (t.bound_offset() as usize).is_multiple_of(vw)
        && t.bind(0).offset.is_multiple_of(16)
        && strides.iter().all(|s| s % vw as isize == 0)
}

/// `plan` for one orientation: `act` holds the few rows, `wt` the weight.
fn plan_rows<'a>(
    dev: &Device,
    alpha: f32,
    beta: f32,
    act: Tensor<'a>,
    wt: Tensor<'a>,
    out: Tensor<'a>,
    batch: &[usize],
) -> Option<Plan<'a>> {
    let (ra, rw) = (act.rank(), wt.rank());
    let (mut rows, k, n) = (act.shape[ra - 2], act.shape[ra - 1], wt.shape[rw - 1]);
    let (mut a_sm, a_sk) = (act.strides[ra - 2], act.strides[ra - 1]);
    let (w_sk, w_sn) = (wt.strides[rw - 2], wt.strides[rw - 1]);
    let mut c_sm = out.strides[out.rank() - 2];
    let c_sn = out.strides[out.rank() - 1];
    let mut batch = batch.to_vec();
    let mut a_bs = batch_strides(&act, &batch);
    let w_bs = batch_strides(&wt, &batch);
    let mut c_bs = out.strides[..batch.len()].to_vec();

    // One weight for every batch matrix: the batch's rows as more rows, if
    // they are evenly spaced in both act and out.
    if numel(&batch) > 1 && w_bs.iter().all(|&s| s == 0) {
        let shape: Vec<usize> = batch.iter().copied().chain([rows]).collect();
        let sa: Vec<isize> = a_bs.iter().copied().chain([a_sm]).collect();
        let sc: Vec<isize> = c_bs.iter().copied().chain([c_sm]).collect();
        let (dims, strides) = coalesce(&shape, &[sa, sc]);
        if dims.len() <= 1 {
            rows = numel(&shape);
            a_sm = strides[0].first().copied().unwrap_or(0);
            c_sm = strides[1].first().copied().unwrap_or(0);
            (batch, a_bs, c_bs) = (Vec::new(), Vec::new(), Vec::new());
        }
    }
    let gemm_tiles = n.div_ceil(64) * numel(&batch).max(1);
    if rows > MAX_SKINNY || (rows > MAX_MT && !batch.is_empty() && gemm_tiles >= TILED_ENOUGH) {
        return None;
    }
    let w_bs = if batch.is_empty() { Vec::new() } else { w_bs };
    let layout = if w_sk == 1 || k == 1 {
        Layout::Dot
    } else if w_sn == 1 || n == 1 {
        Layout::Cols
    } else {
        return None;
    };
    // Elements per 16-byte unit.
    let vw = 16 / act.dtype.size();
    let vec = k > 0
        && match layout {
            Layout::Dot => {
                let a_strides: Vec<isize> = a_bs.iter().copied().chain([if rows > 1 { a_sm } else { 0 }]).collect();
                let w_strides: Vec<isize> = w_bs.iter().copied().chain([if n > 1 { w_sn } else { 0 }]).collect();
                k.is_multiple_of(vw)
                    && (a_sk == 1 || k == 1)
                    && vec_readable(&act, vw, &a_strides)
                    && vec_readable(&wt, vw, &w_strides)
            }
            Layout::Cols => {
                let w_strides: Vec<isize> = w_bs.iter().copied().chain([if k > 1 { w_sk } else { 0 }]).collect();
                n.is_multiple_of(vw) && w_sn == 1 && vec_readable(&wt, vw, &w_strides)
            }
        };

    // Partial sums per invocation: ROWS x MT (dot) or MT x VW (cols).
    let cap = match layout {
        Layout::Dot => MAX_MT,
        Layout::Cols => (64 / vw).min(MAX_MT),
    };
    let mt = rows.next_power_of_two().min(mt_cap_from_env().unwrap_or(cap));
    let m_tiles = rows.div_ceil(mt);
    let dot_cols = n.next_power_of_two().min(4).min(DOT_SLOTS / mt);
    let (n_tiles, wg) = match layout {
        Layout::Dot => (n.div_ceil(dot_cols), DOT_WG),
        Layout::Cols => (n.div_ceil(COLS_UNITS * vw), COLS_WG),
    };
    let batches = numel(&batch);
    let outputs = batches * rows * n;
    let (max_chunk, min_chunk) = match layout {
        Layout::Dot => (DOT_MAX_CHUNK, DOT_MIN_UNITS * vw),
        Layout::Cols => (COLS_MAX_CHUNK, COLS_MIN_CHUNK),
    };
    let groups = n_tiles * m_tiles * batches;
    let slab_cap = (k * act.dtype.size() / (SLAB_SHARE * rows)).max(1);
    let splits = split_count(dev, k, groups * wg, outputs, max_chunk, min_chunk, slab_cap)?;
    // Runs of whole 16-byte units (8 covers both dtypes).
    let k_chunk = k.div_ceil(splits).next_multiple_of(8).max(8);
    let splits = k.div_ceil(k_chunk).max(1);

    let max_dim = dev.limits.max_compute_workgroups_per_dimension as usize;
    let total = n_tiles * splits * m_tiles;
    let gx = total.min(max_dim);
    let gy = total.div_ceil(gx);
    if gy > max_dim || total > u32::MAX as usize {
        return None;
    }
    let name = match (layout, vec, splits > 1) {
        (Layout::Dot, false, false) => "dot_rows",
        (Layout::Dot, true, false) => "dot_rows_vec",
        (Layout::Dot, false, true) => "dot_rows_split",
        (Layout::Dot, true, true) => "dot_rows_vec_split",
        (Layout::Cols, false, false) => "cols",
        (Layout::Cols, true, false) => "cols_vec",
        (Layout::Cols, false, true) => "cols_split",
        (Layout::Cols, true, true) => "cols_vec_split",
    };
    let params = GemvParams {
        m: rows as u32,
        n: n as u32,
        k: k as u32,
        batch_rank: batch.len() as u32,
        alpha,
        beta,
        a_sm: a_sm as i32,
        a_sk: a_sk as i32,
        w_sk: w_sk as i32,
        w_sn: w_sn as i32,
        c_sm: c_sm as i32,
        c_sn: c_sn as i32,
        a_off: act.bound_offset(),
        w_off: wt.bound_offset(),
        c_off: out.bound_offset(),
        k_chunk: k_chunk as u32,
        splits: splits as u32,
        m_tiles: m_tiles as u32,
        total: total as u32,
        row: gx as u32,
        batches: batches as u32,
        _pad0: 0,
        _pad1: 0,
        _pad2: 0,
        batch_shape: pack_u32(&batch, 1),
        a_bstride: pack_i32(&a_bs),
        w_bstride: pack_i32(&w_bs),
        c_bstride: pack_i32(&c_bs),
    };
    let overrides = [mt as f64, if layout == Layout::Dot { dot_cols as f64 } else { 1.0 }];
    let groups = [gx as u32, gy as u32, batches as u32];
    Some(Plan { act, wt, out, entry: name, vec, overrides, params, groups, outputs })
}

/// How many runs K is cut into: as many as its length needs (runs of at
/// most `max_chunk`), more while the tiles' `invocations` cannot fill the
/// GPU (runs of at least `min_chunk`, at most `slab_cap` runs). `None` where
/// the slabs would not fit a binding or MAX_SLAB_BYTES, or be too many to sum.
fn split_count(
    dev: &Device,
    k: usize,
    invocations: usize,
    outputs: usize,
    max_chunk: usize,
    min_chunk: usize,
    slab_cap: usize,
) -> Option<usize> {
    let needed = k.div_ceil(max_chunk).max(1);
    let to_fill = fill_invocations().div_ceil(invocations).min(k / min_chunk).min(slab_cap);
    let splits = needed.max(to_fill);
    let slab = outputs * 4;
    let binding = (dev.limits.max_storage_buffer_binding_size as usize).min(MAX_SLAB_BYTES);
    let fits = splits == 1 || (splits <= MAX_SPLITS && splits.checked_mul(slab).is_some_and(|b| b <= binding));
    fits.then_some(splits)
}

/// Record a planned skinny product: the product kernel, then (K split) the
/// slabs' sum.
pub fn record(stream: &StreamShared, plan: &Plan) -> Result<()> {
    let dev = &stream.device;
    let family = strategy(dev, &FAMILY, &FAMILY_SUBGROUPS);
    let types = [plan.act.dtype, plan.out.dtype];
    let variant = family.variant(plan.entry, &types, &plan.overrides);
    let (a_arg, _) = view_arg("a", &plan.act);
    let (w_arg, _) = view_arg("w", &plan.wt);
    let (a_arg, w_arg) = match (plan.vec, plan.entry.starts_with("dot")) {
        (true, true) => (Arg { name: "av", ..a_arg }, Arg { name: "wv", ..w_arg }),
        (true, false) => (a_arg, Arg { name: "wv", ..w_arg }),
        (false, _) => (a_arg, w_arg),
    };
    let (c_arg, _) = view_arg("c", &plan.out);
    let params = plan.params;
    if params.splits == 1 {
        return spec::record(stream, &Launch { variant, params, args: [a_arg, w_arg, c_arg], groups: plan.groups });
    }
    let parts = scratch(dev, (params.splits as usize * plan.outputs * 4) as u64)?;
    let parts_arg = Arg::whole("parts", &parts);
    spec::record(stream, &Launch { variant, params, args: [a_arg, w_arg, parts_arg], groups: plan.groups })?;
    let (groups, row) = grid_1d(plan.outputs as u64, SUM_WG, dev.limits.max_compute_workgroups_per_dimension);
    let sum = family.variant("sum_splits", &types, &plan.overrides);
    let params = GemvParams { row, ..params };
    spec::record(stream, &Launch { variant: sum, params, args: [c_arg, parts_arg], groups })
}
