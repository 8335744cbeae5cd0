//! Skinny products (shaders/gemv*.wgsl): GEMMs where M or N is at most
//! `MAX_SKINNY`, such as a batch of activation rows times a weight. They are
//! bound by reading the large operand ("the weight"), which these kernels
//! read once per tile of up to 8 rows, coalesced, where the tiled GEMM would
//! spend most of each 64-row tile on padding. The planner asks `plan`;
//! layouts these kernels cannot read coalesced (neither of the weight's
//! inner strides 1) get `None` and stay with the tiled GEMM.
//!
//! The product is seen as rows x weight: `act` (.., R, K) times `wt`
//! (.., K, N) into `out` (.., R, N) with R small. A product with few columns
//! is the transposed one (C^T = B^T A^T, views only). Where the weight is the
//! same for every batch matrix and the batch's rows are evenly spaced, the
//! batch is folded into R (a decode step over several sequences reads the
//! weight once).

use crate::error::Result;
use crate::ops::gemm::problem::{Matrix, Problem};
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::route::GemvRoute;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::split::{runs_to_fill, scaled, K_CHUNK};
use crate::ops::tensor::{coalesce, numel, DType, Tensor};
use crate::runtime::stream::StreamShared;

/// Most rows (M, or N for the transposed product) these kernels take.
const MAX_SKINNY: usize = 32;
/// 64x64 tiles from which the tiled GEMM beats these kernels for more than
/// 8 rows (measured on an H200: 64 tiles lose to them, 224 win).
const TILED_ENOUGH: usize = 128;
/// Columns one axpy workgroup takes (4 * AX in the shader; twice as many in
/// the 16-bit axpy_unit kernels).
const AXPY_COLS: usize = 128;
/// Columns one axpy_unit_narrow workgroup takes (NX units of 8 in the
/// shader).
const NARROW_COLS: usize = 64;
/// Workgroups (of 256 threads) axpy_unit_narrow's split aims for (NARROW_FILL_GROUPS): one per
/// SM and a half. On an H200 the loads alone of one row against a
/// 4096 x 14336 f16 weight took 0.036 ms in one run of K (224 workgroups),
/// and against 14336 x 4096 0.034-0.035 at 256 (the 128-thread grid of
/// axpy_unit_staged: 0.043-0.047). On an H100, 198 was the fastest or level
/// of 132-396 on LLaMA weights with one-row tiles; for tiles of two rows,
/// 264 was 1-3% faster on three of six shapes and 18% slower on
/// 4096 x 14336, where it splits K.
fn narrow_fill_groups(sms: usize) -> usize {
    sms * 3 / 2
}
/// Workgroup size of the slabs' sum.
const SUM_WG: u32 = 256;
/// Workgroups that fill a large GPU (about 8 per SM on an H200); fewer
/// column tiles than this split K further.
const FILL_GROUPS: usize = 1024;
/// The same for the axpy kernels with 16-byte loads and on f32 (a weight
/// stored (K, N)), AXPY_FILL_GROUPS: 2 per SM. On an H200, one row of f16 times K 14336 ->
/// N 4096 took 0.0515 ms at 264 against 0.0561 at 1024 (f32, 8 rows: 1-3%
/// faster); the bf16 kernel that reads words was 5% slower there, so it
/// keeps FILL_GROUPS.
fn axpy_fill_groups(sms: usize) -> usize {
    2 * sms
}
/// Longest K run per workgroup. A row_dot invocation (of 128) loops K / 512 times
/// (K / 128 unvectorised) with up to 44 inner iterations; an axpy invocation
/// K / 4 times with up to 12 (axpy4_staged: K / 4 plus K / 64 staging
/// iterations): all stay far below 65,535 iterations.
const DOT_MAX_CHUNK: usize = K_CHUNK;
const AXPY_MAX_CHUNK: usize = 4096;
/// Shortest K run a split makes (enough loads per invocation to hide latency).
const DOT_MIN_CHUNK: usize = 1024;
const AXPY_MIN_CHUNK: usize = 64;
/// Most slabs (the sum loops over them) and most slab bytes a split adds to
/// fill the GPU (splits that K's length forces are not held to this).
const MAX_SPLITS: usize = 4096;
const FILL_SLAB_BYTES: usize = 64 << 20;
/// Most slab bytes at all (as the tiled GEMM's default budget; past it the
/// tiled GEMM sums its runs in waves).
const MAX_SLAB_BYTES: usize = 256 << 20;

/// The entry points of the gemv kernels (both families' sources).
const ENTRIES: &[&str] = &[
    "row_dot",
    "row_dot4",
    "row_dot_split",
    "row_dot4_split",
    "row_dot4_a4",
    "row_dot4_a4_split",
    "row_dot_unit_a4",
    "row_dot_unit_a4_split",
    "axpy",
    "axpy4",
    "axpy_split",
    "axpy4_split",
    "axpy4_staged",
    "axpy4_staged_split",
    "axpy_unit_staged",
    "axpy_unit_staged_split",
    "axpy_unit_narrow",
    "axpy_unit_narrow_split",
    "sum_splits",
];

/// gemv.wgsl and its kernels' fragments, then the operand loads `$operands`.
macro_rules! gemv_source {
    ($operands:literal) => {
        concat!(
            include_str!("../../../shaders/gemv.wgsl"),
            include_str!("../../../shaders/gemv_dot.wgsl"),
            include_str!("../../../shaders/gemv_axpy.wgsl"),
            include_str!("../../../shaders/gemv_axpy_staged.wgsl"),
            include_str!("../../../shaders/gemv_axpy_unit.wgsl"),
            include_str!("../../../shaders/gemv_axpy_narrow.wgsl"),
            include_str!($operands),
        )
    };
}

pub static FAMILY: Family = Family {
    file: "gemv.wgsl",
    source: gemv_source!("../../../shaders/gemv_operands.wgsl"),
    entries: ENTRIES,
    types: &[
        TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] },
        TypeSlot { alias: "O", dtypes: &[DType::F32, DType::F16] },
    ],
    overrides: OVERRIDES,
    uniform: <GemvParams as spec::Uniform>::layout,
};

/// The kernels for bf16 A and W (read as words, widened to f32 as they are
/// read) and an f32 C; T and O are f32 (the unit entries read W as 8 bf16
/// per 16-byte load).
pub static FAMILY_BF16: Family = Family {
    file: "gemv.wgsl+bf16",
    source: gemv_source!("../../../shaders/gemv_operands_bf16.wgsl"),
    entries: ENTRIES,
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32] }, TypeSlot { alias: "O", dtypes: &[DType::F32] }],
    overrides: OVERRIDES,
    uniform: <GemvParams as spec::Uniform>::layout,
};

const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "MT", values: &[1.0, 2.0, 4.0, 8.0] },
    OverrideSlot { name: "ROWS", values: &[1.0, 2.0, 4.0] },
];

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

/// Which kernels take a weight stored (K, N): the `axpy` setting
/// (`WGC_GEMV_AXPY`) fixes it; else the tuner may choose among the plans of
/// each mode (plan.rs), by default `Wide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxpyMode {
    /// `plain`: the axpy kernels read A's rows from global memory for every
    /// weight load, and past 8 rows the tiled GEMM takes wide products.
    Plain,
    /// `staged`: rows >= 2 with vec4 weight loads stage A's rows in
    /// workgroup memory (axpy4_staged); the tiled GEMM cutover as `plain`.
    Staged,
    /// `wide` (the default): as `staged`, and f32 products keep the staged
    /// kernel up to MAX_SKINNY rows: it reads the weight at most
    /// MAX_SKINNY / 8 times (adjacent M tiles, mostly from cache), which
    /// cost less than the tiled f32 GEMM's padded 64-row tiles (H200, M = 32,
    /// K 4096, N 14336: 0.267 against 0.305 ms). With a weight dense along K
    /// (row_dot), f32 products keep it up to 16 rows (0.259 against 0.300
    /// at M 16; 0.50 against 0.30 at M 32) and bf16 ones up to MAX_SKINNY
    /// (their tiled GEMM has no tensor cores either: 0.219 against 0.515 at
    /// M 16, 0.478 against 0.532 at M 32). f16 products keep the cutover:
    /// there the tensor-core GEMM took 0.214 ms against 0.325.
    Wide,
}

/// Names of the modes in the tuning file, the default first.
pub const MODES: &[(&str, AxpyMode)] =
    &[("wide", AxpyMode::Wide), ("staged", AxpyMode::Staged), ("plain", AxpyMode::Plain)];

/// The workgroups a split aims for: the `gemv_fill` setting
/// (`WGC_GEMV_FILL`, a positive count) to measure other targets (more
/// splits: more workgroups, larger slabs), else NARROW_FILL_GROUPS for
/// axpy_unit_narrow (`narrow`), AXPY_FILL_GROUPS for the other axpy
/// kernels with 16-byte loads (`unit`) or on f32, FILL_GROUPS for the
/// others.
fn fill_groups(p: &DeviceProfile, s: &GemmSettings, layout: Layout, dtype: DType, unit: bool, narrow: bool) -> usize {
    let axpy = layout == Layout::Axpy && (unit || dtype != DType::BF16);
    s.gemv_fill.unwrap_or(if narrow {
        narrow_fill_groups(p.sms)
    } else if axpy {
        axpy_fill_groups(p.sms)
    } else {
        scaled(p.sms, FILL_GROUPS)
    })
}

/// Which inner stride of the weight is 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// K contiguous: each output is a dot product of contiguous runs.
    RowDot,
    /// N contiguous: threads across N, a loop over K.
    Axpy,
}

/// The route for `q` (nothing empty) if it is a skinny product these
/// kernels read coalesced; `None` leaves it to the tiled GEMM. Products
/// with a row bias (1x1 convolutions) are not skinny ones. `mode`: the
/// settings' default or the tuner's choice. Weight loads of f16 and bf16
/// products: with the `gemv_wide_loads` setting (WGC_GEMV_F16_LOAD not
/// `8`) 8 weights in one 16-byte load where the weight's dense dim, its
/// other stride, offset and batch strides are multiples of 8: 8 columns of
/// a (K, N) weight outside `plain` (axpy_unit_narrow for one or two rows
/// where `gemv_narrow`, else axpy_unit_staged), 8 values of K of an (N, K)
/// one (row_dot_unit_a4); else 8-byte vec4 loads (axpy4_staged, axpy4,
/// row_dot4_a4).
pub fn plan(q: &Problem, p: &DeviceProfile, s: &GemmSettings, mode: AxpyMode) -> Option<GemvRoute> {
    if q.bias.is_some() {
        return None;
    }
    let straight = (false, q.a.clone(), q.b.clone(), q.c.clone());
    let flipped = (true, q.b.t(), q.a.t(), q.c.t());
    // The smaller side as the rows first; the other where only it is readable.
    let order = if q.m <= q.n { [straight, flipped] } else { [flipped, straight] };
    for (transposed, act, wt, out) in order {
        if let Some(route) = plan_rows(q, p, s, mode, transposed, (act, wt, out)) {
            return Some(route);
        }
    }
    None
}

/// `plan` for one orientation: `act` holds the few rows, `wt` the weight.
fn plan_rows(
    q: &Problem,
    p: &DeviceProfile,
    s: &GemmSettings,
    mode: AxpyMode,
    transposed: bool,
    (act, wt, out): (Matrix, Matrix, Matrix),
) -> Option<GemvRoute> {
    let dtype = q.dtype;
    let (mut rows, k, n) = (act.rows, act.cols, wt.cols);
    let [mut a_sm, a_sk] = act.strides;
    let [w_sk, w_sn] = wt.strides;
    let [mut c_sm, c_sn] = out.strides;
    let mut batch = q.batch.clone();
    let mut a_bs = act.batch_strides.clone();
    let w_bs = wt.batch_strides.clone();
    let mut c_bs = out.batch_strides.clone();

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
    if rows > MAX_SKINNY {
        return None;
    }
    let w_bs = if batch.is_empty() { Vec::new() } else { w_bs };
    let layout = if w_sk == 1 || k == 1 {
        Layout::RowDot
    } else if w_sn == 1 || n == 1 {
        Layout::Axpy
    } else {
        return None;
    };
    let w_off = wt.offset;
    let aligned = w_off.is_multiple_of(4) && w_bs.iter().all(|s| s % 4 == 0);
    let vec4 = k > 0
        && aligned
        && match layout {
            Layout::RowDot => k.is_multiple_of(4) && w_sn % 4 == 0,
            Layout::Axpy => n.is_multiple_of(4) && w_sk % 4 == 0,
        };
    let staged = layout == Layout::Axpy && vec4 && rows >= 2 && mode != AxpyMode::Plain;
    // 16-byte loads of 8 f16 or bf16 weights: the weight's dense dim, its
    // other stride, offset and batch strides multiples of 8.
    let wide16 = k > 0
        && matches!(dtype, DType::F16 | DType::BF16)
        && s.gemv_wide_loads
        && w_off.is_multiple_of(8)
        && w_bs.iter().all(|s| s % 8 == 0);
    let unit = layout == Layout::Axpy && wide16 && mode != AxpyMode::Plain && n.is_multiple_of(8) && w_sk % 8 == 0;
    let dot_unit = layout == Layout::RowDot && wide16 && k.is_multiple_of(8) && w_sn % 8 == 0;
    let narrow = unit && rows <= 2 && s.gemv_narrow;
    let staged = staged || unit;
    // Past 8 rows the weight is read once per 8-row tile, and the tiled GEMM
    // (one read, 64-row tiles) wins once it has tiles enough to fill a GPU
    // (measured with the plain kernels).
    let gemm_tiles = n.div_ceil(64) * numel(&batch).max(1);
    let keep_wide = mode == AxpyMode::Wide
        && match (dtype, layout) {
            (DType::F32, Layout::Axpy) => staged,
            (DType::F32, Layout::RowDot) => rows <= 16,
            (DType::BF16, Layout::RowDot) => true,
            _ => false,
        };
    if rows > 8 && gemm_tiles >= TILED_ENOUGH && !keep_wide {
        return None;
    }

    // axpy_unit_narrow: one tile of both rows (`gemv_narrow_tile` 1: two
    // one-row tiles, each reading the weight).
    let mt = if narrow { rows.min(s.gemv_narrow_tile) } else { rows.next_power_of_two().min(8) };
    let m_tiles = rows.div_ceil(mt);
    let dot_rows = n.next_power_of_two().min(4);
    let n_tiles = match layout {
        Layout::RowDot => n.div_ceil(dot_rows),
        Layout::Axpy if narrow => n.div_ceil(NARROW_COLS),
        Layout::Axpy if unit => n.div_ceil(AXPY_COLS * 2),
        Layout::Axpy => n.div_ceil(AXPY_COLS),
    };
    let batches = numel(&batch);
    let outputs = batches * rows * n;
    let (max_chunk, min_chunk) = match layout {
        Layout::RowDot => (DOT_MAX_CHUNK, DOT_MIN_CHUNK),
        Layout::Axpy => (AXPY_MAX_CHUNK, AXPY_MIN_CHUNK),
    };
    let fill = fill_groups(p, s, layout, dtype, unit, narrow);
    let splits = split_count(p, k, (n_tiles * m_tiles * batches, fill), outputs, max_chunk, min_chunk)?;
    // Runs start on a whole vec4 (a 16-byte unit for row_dot_unit_a4*).
    let step = if dot_unit { 8 } else { 4 };
    let k_chunk = k.div_ceil(splits).next_multiple_of(step).max(step);
    let splits = k.div_ceil(k_chunk).max(1);

    let max_dim = p.max_workgroups_per_dim;
    let total = n_tiles * splits * m_tiles;
    let gx = total.min(max_dim);
    let gy = total.div_ceil(gx);
    if gy > max_dim || total > u32::MAX as usize {
        return None;
    }
    // A's rows read as vec4s too (row_dot4_a4*), except by f32 8-row tiles:
    // there the wider registers measured slower on an H200 (M 8, K 14336,
    // N 4096: 0.204 against 0.176 ms), while one-row products ran 10-23%
    // faster and bf16 8-row ones 17%.
    let a_quads = a_sk == 1
        && !(dtype == DType::F32 && mt == 8)
        && (rows == 1 || a_sm % 4 == 0)
        && act.offset.is_multiple_of(4)
        && a_bs.iter().all(|s| s % 4 == 0);
    let name = match (layout, vec4, splits > 1) {
        (Layout::RowDot, true, false) if a_quads && dot_unit => "row_dot_unit_a4",
        (Layout::RowDot, true, true) if a_quads && dot_unit => "row_dot_unit_a4_split",
        (Layout::RowDot, true, false) if a_quads => "row_dot4_a4",
        (Layout::RowDot, true, true) if a_quads => "row_dot4_a4_split",
        (Layout::Axpy, _, false) if narrow => "axpy_unit_narrow",
        (Layout::Axpy, _, true) if narrow => "axpy_unit_narrow_split",
        (Layout::Axpy, _, false) if unit => "axpy_unit_staged",
        (Layout::Axpy, _, true) if unit => "axpy_unit_staged_split",
        (Layout::RowDot, false, false) => "row_dot",
        (Layout::RowDot, true, false) => "row_dot4",
        (Layout::RowDot, false, true) => "row_dot_split",
        (Layout::RowDot, true, true) => "row_dot4_split",
        (Layout::Axpy, false, false) => "axpy",
        (Layout::Axpy, true, false) if staged => "axpy4_staged",
        (Layout::Axpy, true, false) => "axpy4",
        (Layout::Axpy, false, true) => "axpy_split",
        (Layout::Axpy, true, true) if staged => "axpy4_staged_split",
        (Layout::Axpy, true, true) => "axpy4_split",
    };
    let params = GemvParams {
        m: rows as u32,
        n: n as u32,
        k: k as u32,
        batch_rank: batch.len() as u32,
        alpha: q.alpha,
        beta: q.beta,
        a_sm: a_sm as i32,
        a_sk: a_sk as i32,
        w_sk: w_sk as i32,
        w_sn: w_sn as i32,
        c_sm: c_sm as i32,
        c_sn: c_sn as i32,
        a_off: act.offset,
        w_off,
        c_off: out.offset,
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
    let dot_rows = if layout == Layout::RowDot { dot_rows as u32 } else { 1 };
    let groups = [gx as u32, gy as u32, batches as u32];
    Some(GemvRoute { transposed, entry: name, mt: mt as u32, dot_rows, params, groups, outputs })
}

/// How many runs K is cut into: as many as its length needs (runs of at
/// most `max_chunk`), more while the tiles alone cannot make `fill`
/// workgroups (runs of at least `min_chunk`, slabs within FILL_SLAB_BYTES).
/// `None` where the slabs would not fit a binding or MAX_SLAB_BYTES, or be
/// too many to sum.
fn split_count(
    p: &DeviceProfile,
    k: usize,
    (tiles, fill): (usize, usize),
    outputs: usize,
    max_chunk: usize,
    min_chunk: usize,
) -> Option<usize> {
    let needed = k.div_ceil(max_chunk).max(1);
    let slab = outputs * 4;
    let to_fill = runs_to_fill(tiles, k, fill, min_chunk).min(FILL_SLAB_BYTES / slab);
    let splits = needed.max(to_fill);
    let binding = p.max_binding.min(MAX_SLAB_BYTES);
    let fits = splits == 1 || (splits <= MAX_SPLITS && splits.checked_mul(slab).is_some_and(|b| b <= binding));
    fits.then_some(splits)
}

/// The view with its last two dims swapped.
fn swap_last<'a>(t: &Tensor<'a>) -> Tensor<'a> {
    let r = t.rank();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    t.permuted(&perm)
}

/// Record a planned skinny product of the views `q` describes: the product
/// kernel, then (K split) the slabs' sum.
pub fn record(
    stream: &StreamShared,
    q: &Problem,
    route: &GemvRoute,
    (a, b, c): (&Tensor, &Tensor, &Tensor),
) -> Result<()> {
    let dev = &stream.device;
    let (act, wt, out) =
        if route.transposed { (swap_last(b), swap_last(a), swap_last(c)) } else { (a.clone(), b.clone(), c.clone()) };
    // bf16 operands (the output is f32 then): the bf16 family, T and O f32.
    let (family, types) =
        if q.dtype == DType::BF16 { (&FAMILY_BF16, [DType::F32; 2]) } else { (&FAMILY, [q.dtype, out.dtype]) };
    let overrides = [route.mt as f64, route.dot_rows as f64];
    let variant = family.variant(route.entry, &types, &overrides);
    let (a_arg, _) = view_arg("a", &act);
    let a_arg = if route.entry.contains("_a4") { Arg { name: "a4", ..a_arg } } else { a_arg };
    let (w_arg, _) = view_arg("w", &wt);
    let w_arg = match route.entry {
        e if e.contains("unit") => Arg { name: "wu", ..w_arg },
        e if e.contains('4') => Arg { name: "w4", ..w_arg },
        _ => w_arg,
    };
    let (c_arg, _) = view_arg("c", &out);
    let params = route.params;
    if params.splits == 1 {
        return spec::record(stream, &Launch { variant, params, args: [a_arg, w_arg, c_arg], groups: route.groups });
    }
    let parts = stream.ordered_scratch((params.splits as usize * route.outputs * 4) as u64)?;
    let parts_arg = Arg::whole("parts", &parts);
    spec::record(stream, &Launch { variant, params, args: [a_arg, w_arg, parts_arg], groups: route.groups })?;
    let (groups, row) = grid_1d(route.outputs as u64, SUM_WG, dev.limits.max_compute_workgroups_per_dimension);
    let sum = family.variant("sum_splits", &types, &overrides);
    let params = GemvParams { row, ..params };
    spec::record(stream, &Launch { variant: sum, params, args: [c_arg, parts_arg], groups })
}
