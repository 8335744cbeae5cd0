//! f16 GEMM on cooperative matrices (tensor cores), for adapters that offer
//! 16x16x16 f16 fragments with f32 accumulation and 32-wide subgroups. The
//! shader is generated for one tile (`TILE`) by tools/gen_gemm_coop_wgsl.py;
//! see its header for the entry points and overrides.

use crate::bail;
use crate::error::Result;
use crate::ops::gemm::coopmat2::{self, Coopmat2Variant};
use crate::ops::gemm::epilogue::{self, Epilogue, EpilogueViews};
use crate::ops::gemm::problem::{Matrix, Problem};
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::route::{CoopEngine, CoopRoute};
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::skinny::{self, SkinnyRoute};
use crate::ops::gemm::spirv::{self, SpirvVariant};
use crate::ops::gemm::wide::{self, WideVariant};
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, Arg, Family, Launch, OverrideSlot, TypeSlot, Variant};
use crate::ops::split::{runs_for_one_wave, runs_to_fill};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

/// A tile shape: fragments per subgroup (rows x cols of 16x16) and
/// subgroups per workgroup (rows x cols).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub fm: u32,
    pub fn_: u32,
    pub sgm: u32,
    pub sgn: u32,
    /// K consumed per staged tile.
    pub bk: u32,
}

impl Tile {
    pub fn block_m(self) -> usize {
        (16 * self.fm * self.sgm) as usize
    }
    pub fn block_n(self) -> usize {
        (16 * self.fn_ * self.sgn) as usize
    }
}

/// The tile used; chosen by measurement on an H200 (BENCHMARKS.md). The
/// generator writes the shader for this tile only.
pub(crate) const TILE: Tile = Tile { fm: 4, fn_: 4, sgm: 2, sgn: 2, bk: 32 };

const BOOL: &[f64] = &[0.0, 1.0];

/// The tiled tensor-core GEMM for `TILE`. The adapter needs f16 and
/// cooperative matrices: the prelude enables the extension, and the offline
/// test validates the kernel with those capabilities. Overrides: A_T (A
/// dense along M), B_T (B dense along K), EDGE (guard partial tiles).
pub static FAMILY: Family = Family {
    file: "gemm_coop_f16.wgsl",
    source: concat!(
        include_str!("../../../shaders/gemm_coop_f16.wgsl"),
        include_str!("../../../shaders/elementwise_scalar.wgsl"),
        include_str!("../../../shaders/epilogue_activation.wgsl"),
        include_str!("../../../shaders/gemm_epilogue.wgsl")
    ),
    entries: &["gemm_coop_f16", "gemm_coop_f16_epilogue", "gemm_coop_f16_epilogue_h2"],
    types: &[
        TypeSlot { alias: "H", dtypes: &[DType::F16] },
        TypeSlot { alias: "OUT", dtypes: &[DType::F32, DType::F16] },
    ],
    overrides: &[
        OverrideSlot { name: "A_T", values: BOOL },
        OverrideSlot { name: "B_T", values: BOOL },
        OverrideSlot { name: "EDGE", values: BOOL },
    ],
    uniform: <CoopParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of gemm_coop_f16.wgsl.
    pub struct CoopParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub k: u32,
        pub batch_rank: u32,
        pub alpha: f32,
        pub beta: f32,
        pub has_bias: u32,
        pub bias_stride: i32,
        pub a_sm: i32,
        pub a_sk: i32,
        pub b_sk: i32,
        pub b_sn: i32,
        pub c_sm: i32,
        pub c_sn: i32,
        pub bias_off: u32,
        pub k_chunk: u32,
        pub a_off: u32,
        pub b_off: u32,
        pub c_off: u32,
        pub splits: u32,
        pub split_c: u32,
        pub _pad0: [u32; 3],
        pub batch_shape: [[u32; 4]; 2],
        pub a_bstride: [[i32; 4]; 2],
        pub b_bstride: [[i32; 4]; 2],
        pub c_bstride: [[i32; 4]; 2],
        pub epi_act: u32,
        pub epi_flags: u32,
        pub scale_off: u32,
        pub scale_stride: i32,
        pub res_off: u32,
        pub res_sm: i32,
        pub res_sn: i32,
        pub nan: u32,
        pub inf: u32,
        pub _pad1: [u32; 3],
        pub res_bstride: [[i32; 4]; 2],
    }
}

/// True if the adapter can run this kernel at all (and `coop` is set:
/// WGC_GEMM_COOP=0 sends f16 and bf16 GEMMs to the tiled kernel, for
/// comparisons).
pub fn available_on(p: &DeviceProfile, s: &GemmSettings) -> bool {
    s.coop && p.coop_f16 && p.subgroup_32
}

/// `available_on` for a device under its settings.
pub fn available(dev: &Device) -> bool {
    available_on(&DeviceProfile::of(dev), &GemmSettings::of(dev))
}

/// Workgroups of the tensor-core tile an H100 or H200 holds at once, per
/// SM, inferred from the times below (Vulkan does not report it). A split
/// whose workgroups spill into a partial second wave costs more than it
/// fills (BENCHMARKS.md at 317f233, "Tenth round"; H100, 100 tiles of a 512 x 3136 x
/// 4608 product: 0.175 ms in 1 run, 0.131 in 2, 0.146 in 3, 0.140 in 4; 64
/// tiles of 1024 x 1024 x 4096: 0.079 in 3 runs, 0.073 in 4, 0.097 in 5;
/// on an H200 0.075 in 3 runs against 0.093 in 5).
const RESIDENT_PER_SM: usize = 2;
/// The shortest K run worth a split of its own (16 steps of the tile's K):
/// shorter runs cost more in slab traffic than the SMs they fill.
const MIN_SPLIT_K: usize = 512;

/// How many K runs a product with fewer tiles than there are SMs should be
/// cut into (their f32 slabs summed by a second pass): as many as one wave
/// of resident workgroups holds, each at least MIN_SPLIT_K long; 1 where
/// the tiles fill half the resident slots already or K is short, or where
/// `coop_split` is off (for comparisons).
pub fn fill_splits_on(sms: usize, s: &GemmSettings, (m, n, k): (usize, usize, usize), batch: usize) -> usize {
    if !s.coop_split {
        return 1;
    }
    fill_splits_for(sms, s, m.div_ceil(TILE.block_m()) * n.div_ceil(TILE.block_n()) * batch, k)
}

/// `fill_splits_on` for a device under its settings (the convolutions').
pub fn fill_splits(dev: &Device, (m, n, k): (usize, usize, usize), batch: usize) -> usize {
    fill_splits_on(DeviceProfile::of(dev).sms, &GemmSettings::of(dev), (m, n, k), batch)
}

/// `fill_splits_on` for the tile `kernel` runs (the skinny tile fills the
/// GPU with more, narrower workgroups: skinny::fill_splits).
fn kernel_fill_splits(
    p: &DeviceProfile,
    s: &GemmSettings,
    kernel: CoopKernel,
    (m, n, k): (usize, usize, usize),
    batch: usize,
) -> usize {
    if !kernel.skinny {
        return fill_splits_on(p.sms, s, (m, n, k), batch);
    }
    if !s.coop_split {
        return 1;
    }
    // A split product's C is an f32 slab, which route B stores.
    let route = if skinny_on_coopmat2(p, s, kernel, m, true) {
        SkinnyRoute::Coopmat2 { b_t: kernel.b_t }
    } else {
        SkinnyRoute::Khr { fm: skinny::fragments_m(m) }
    };
    let blocks = n.div_ceil(kernel.block_n(s)) * m.div_ceil(kernel.block_m()) * batch;
    skinny::fill_splits(p, s, blocks, k, route)
}

fn fill_splits_for(sms: usize, s: &GemmSettings, tiles: usize, k: usize) -> usize {
    if let Some(fill) = s.coop_fill {
        if tiles * 2 > fill {
            return 1;
        }
        return runs_to_fill(tiles, k, fill, MIN_SPLIT_K);
    }
    runs_for_one_wave(tiles, k, RESIDENT_PER_SM * sms, MIN_SPLIT_K)
}

/// The kernel variant for one problem (see the shader's header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopKernel {
    /// A is read along M (a transposed view), else along K.
    pub a_t: bool,
    /// B is read along K (a transposed view), else along N.
    pub b_t: bool,
    /// Some tile crosses M, N or K: loads and stores are guarded.
    pub edge: bool,
    /// Few rows: the skinny tile (skinny.rs) instead of `TILE`.
    pub skinny: bool,
    /// bf16 A and B (the SPIR-V kernels' bf16 set, f32 C), else f16.
    pub bf16: bool,
}

impl CoopKernel {
    /// The rows, columns and K step of the kernel's tile (the skinny tile
    /// takes every row: it runs for at most MAX_ROWS).
    pub fn block_m(self) -> usize {
        if self.skinny {
            skinny::MAX_ROWS
        } else {
            TILE.block_m()
        }
    }
    pub fn block_n(self, s: &GemmSettings) -> usize {
        if self.skinny {
            skinny::tile(s, self.b_t).block_n()
        } else {
            TILE.block_n()
        }
    }
    pub fn bk(self, s: &GemmSettings) -> usize {
        if self.skinny {
            skinny::tile(s, self.b_t).bk as usize
        } else {
            TILE.bk as usize
        }
    }
}

/// Which dim of an operand the kernel reads 8 at a time (the other is the
/// "leading" one): the unit-stride one, else the smaller stride.
fn dense(x: &Matrix) -> usize {
    let sizes = [x.rows, x.cols];
    let unit = |d: usize| x.strides[d] == 1 || sizes[d] <= 1;
    let smaller = x.strides[0].abs() < x.strides[1].abs();
    if !unit(1) && (unit(0) || smaller) {
        0
    } else {
        1
    }
}

/// True if 16-byte loads along `dense` are whole and aligned: a unit
/// stride there, a dense dim of whole 8s, and the leading stride, the
/// offset and every batch stride multiples of 8.
fn vec_ok(x: &Matrix, dense: usize) -> bool {
    let sizes = [x.rows, x.cols];
    let lead = x.strides[1 - dense];
    x.strides[dense] == 1
        && sizes[dense].is_multiple_of(8)
        && lead >= 0
        && lead % 8 == 0
        && x.offset.is_multiple_of(8)
        && x.batch_strides.iter().all(|s| s % 8 == 0)
}

/// True if this device's tensor-core kernels take products of `dtype`
/// operands (f16, or bf16 where the SPIR-V kernels have bf16 fragments),
/// given operands that 16-byte loads can read.
pub fn takes_dtype(p: &DeviceProfile, s: &GemmSettings, dtype: DType) -> bool {
    let dtype_ok = match dtype {
        DType::F16 => true,
        DType::BF16 => spirv::bf16_allowed(p, s),
        _ => false,
    };
    dtype_ok && available_on(p, s)
}

/// The variant for an f16 product (the skinny tile for few rows where
/// skinny::applies), or a bf16 one on a device with bf16 cooperative
/// matrices where the SPIR-V kernels run (`spirv::bf16_allowed`; C is then
/// f32); None when the adapter has no tensor cores for the dtype or
/// 16-byte loads cannot read the operands (staging them element by element
/// in the kernel was slower than the tiled kernel, 2.50 against 0.98 ms at
/// 4095x4097x1023 on an H200; large ones are copied into aligned scratch
/// instead, staged.rs).
pub fn choose(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> Option<CoopKernel> {
    if q.k == 0 || !takes_dtype(p, s, q.dtype) {
        return None;
    }
    let bf16 = q.dtype == DType::BF16;
    let (da, db) = (dense(&q.a), dense(&q.b));
    if !(vec_ok(&q.a, da) && vec_ok(&q.b, db)) {
        return None;
    }
    let whole = q.m.is_multiple_of(TILE.block_m())
        && q.n.is_multiple_of(TILE.block_n())
        && q.k.is_multiple_of(TILE.bk as usize);
    let b_broadcast = q.batch_count > 1 && q.b.batch_strides.contains(&0);
    let skinny = skinny::applies(p, s, (q.m, q.n), da == 0, db == 0, b_broadcast);
    Some(CoopKernel { a_t: da == 0, b_t: db == 0, edge: !whole, skinny, bf16 })
}

/// Where and how a product is written (as planned; the binding comes at
/// recording): C's dtype, element offset, strides [rows, cols] and batch
/// strides; the epilogue alpha, beta and whether a row bias is added. K is
/// cut into `splits` runs of `k_chunk` (a multiple of the tile's K step),
/// the products of run s stored `s * split_c` elements further (split_c 0
/// when there is one run).
#[derive(Clone, Debug, PartialEq)]
pub struct CoopStore {
    pub dtype: DType,
    pub offset: u32,
    pub strides: [isize; 2],
    pub batch_strides: Vec<isize>,
    pub alpha: f32,
    pub beta: f32,
    pub has_bias: bool,
    /// The problem's epilogue is applied as C is stored (epilogue.rs).
    pub epilogue: bool,
    pub k_chunk: usize,
    pub splits: usize,
    pub split_c: usize,
}

impl CoopStore {
    /// C as the problem describes it.
    pub fn of(q: &Problem, (k_chunk, splits): (usize, usize)) -> CoopStore {
        CoopStore {
            dtype: q.out,
            offset: q.c.offset,
            strides: q.c.strides,
            batch_strides: q.c.batch_strides.clone(),
            alpha: q.alpha,
            beta: q.beta,
            has_bias: q.bias.is_some(),
            epilogue: !q.epilogue.is_none(),
            k_chunk,
            splits,
            split_c: 0,
        }
    }

    /// Plain products of every run into contiguous f32 slabs, summed with
    /// the epilogue by the split-K pass.
    pub fn slab(q: &Problem, (k_chunk, splits): (usize, usize)) -> CoopStore {
        let slab = Matrix::row_major(q.m, q.n, &q.batch);
        CoopStore {
            dtype: DType::F32,
            offset: 0,
            strides: slab.strides,
            batch_strides: slab.batch_strides,
            alpha: 1.0,
            beta: 0.0,
            has_bias: false,
            epilogue: false,
            k_chunk,
            splits,
            split_c: q.outputs(),
        }
    }

    /// True if the fragments can be stored straight to C: f32 (or f16 where
    /// `f16_ok`: the SPIR-V kernel converts fragments) at unit column
    /// stride, rows and offsets of whole 8s, no tile the kernel must guard
    /// (`guarded`), no epilogue.
    fn direct(&self, guarded: bool, f16_ok: bool) -> bool {
        let [sm, sn] = self.strides;
        (self.dtype == DType::F32 || (f16_ok && self.dtype == DType::F16))
            && !guarded
            && self.alpha == 1.0
            && self.beta == 0.0
            && !self.has_bias
            && !self.epilogue
            && sn == 1
            && sm >= 0
            && sm % 8 == 0
            && self.offset.is_multiple_of(8)
            && self.split_c.is_multiple_of(8)
            && self.batch_strides.iter().all(|s| *s >= 0 && s % 8 == 0)
    }

    /// True if the product goes to C as it is: alpha 1, beta 0, no bias,
    /// unit column stride, rows and batches at non-negative strides (what
    /// the VK_NV_cooperative_matrix2 kernel stores; partial tiles and any
    /// alignment are fine there).
    pub fn plain(&self) -> bool {
        let [sm, sn] = self.strides;
        self.alpha == 1.0
            && self.beta == 0.0
            && !self.has_bias
            && !self.epilogue
            && sn == 1
            && sm >= 0
            && self.batch_strides.iter().all(|s| *s >= 0)
    }

    /// True if the epilogue can write an f16 C two halves at a time: dense
    /// along N, N even, and the offset, row stride, split stride and batch
    /// strides even (so every pair of columns 2j, 2j+1 is one aligned
    /// 4-byte word). `n`: C's columns.
    fn pairs(&self, n: usize) -> bool {
        self.dtype == DType::F16 && pairs_fit(n, self.offset, self.strides, self.split_c, &self.batch_strides)
    }
}

/// True if every pair of columns 2j, 2j+1 of an f16 C (n columns, element
/// offset, strides [rows, cols], split and batch strides) is one aligned
/// 4-byte word.
fn pairs_fit(n: usize, offset: u32, [sm, sn]: [isize; 2], split_c: usize, batch_strides: &[isize]) -> bool {
    sn == 1
        && n.is_multiple_of(2)
        && sm % 2 == 0
        && offset.is_multiple_of(2)
        && split_c.is_multiple_of(2)
        && batch_strides.iter().all(|s| s % 2 == 0)
}

/// Which API a tensor-core product runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Wgsl,
    Khr,
    Coopmat2,
}

/// The API a product of `m` rows with inner dim `k` runs on into `out`.
fn api_for(p: &DeviceProfile, s: &GemmSettings, kernel: CoopKernel, (m, k): (usize, usize), out: &CoopStore) -> Api {
    if kernel.bf16 {
        // The bf16 set exists on VK_KHR_cooperative_matrix only.
        Api::Khr
    } else if kernel.skinny {
        if skinny_on_coopmat2(p, s, kernel, m, out.plain() || out.splits > 1) {
            Api::Coopmat2
        } else {
            Api::Khr
        }
    } else {
        match spirv::route(p, s, k) {
            Some(true) => Api::Khr,
            Some(false) => Api::Coopmat2,
            None => Api::Wgsl,
        }
    }
}

/// True if a skinny product of `m` rows runs on VK_NV_cooperative_matrix2
/// (f16 only; `plain`: C as that kernel stores it).
fn skinny_on_coopmat2(p: &DeviceProfile, s: &GemmSettings, kernel: CoopKernel, m: usize, plain: bool) -> bool {
    !kernel.bf16 && spirv::skinny_coopmat2(p, s, kernel.b_t, m, plain)
}

/// True if this output goes through an f32 slab and the split-K sum pass
/// even with one run of K: the route (VK_NV_cooperative_matrix2) stores
/// plain products only.
fn needs_slab(
    p: &DeviceProfile,
    s: &GemmSettings,
    kernel: CoopKernel,
    (m, k): (usize, usize),
    out: &CoopStore,
) -> bool {
    api_for(p, s, kernel, (m, k), out) == Api::Coopmat2 && !out.plain()
}

/// The WGSL kernel's entry point for an output.
fn entry_for(out: &CoopStore, kernel: CoopKernel, n: usize) -> &'static str {
    if out.direct(kernel.edge, false) {
        "gemm_coop_f16"
    } else if out.pairs(n) {
        "gemm_coop_f16_epilogue_h2"
    } else {
        "gemm_coop_f16_epilogue"
    }
}

/// The kernel, grid and store of `kernel` for `q` into `out`; TooLarge
/// where the grid exceeds the adapter's workgroups per dimension.
fn route_into(
    q: &Problem,
    p: &DeviceProfile,
    s: &GemmSettings,
    kernel: CoopKernel,
    out: CoopStore,
    via_slab: bool,
) -> Result<CoopRoute> {
    let (m, n, k) = (q.m, q.n, q.k);
    let api = api_for(p, s, kernel, (m, k), &out);
    // The wide-block KHR kernel where its rule (or the setting) takes the product.
    let wide = wide::takes(p, s, kernel, (m, n, k), q.batch_count, api == Api::Khr);
    let api = if wide { Api::Khr } else { api };
    // The SPIR-V kernel guards every load, so only tiles crossing M or N
    // need guarded stores there; a K that ends inside a step keeps them
    // direct (H200, 4096 x 4096 x 4080 into f16: 0.59 ms against 0.96).
    let khr = api == Api::Khr;
    // The wide block's shape, whose blocks the grid and the store follow.
    let shape = wide::shape_for(p, s, kernel);
    let (bm, bn) = if wide { shape.block() } else { (TILE.block_m(), TILE.block_n()) };
    let guarded = if khr { !(m.is_multiple_of(bm) && n.is_multiple_of(bn)) } else { kernel.edge };
    let direct = !kernel.skinny && out.direct(guarded, khr);
    let mut groups = [
        n.div_ceil(kernel.block_n(s)) as u32,
        m.div_ceil(kernel.block_m()) as u32,
        (q.batch_count * out.splits) as u32,
    ];
    if groups.iter().any(|&g| g as usize > p.max_workgroups_per_dim) {
        bail!(TooLarge, "gemm: {m}x{n} output needs more workgroups than this adapter allows per dimension");
    }
    let engine = match api {
        Api::Coopmat2 if kernel.skinny => {
            debug_assert!(out.plain(), "the planner sends other outputs through a slab");
            // The skinny block has the skinny tile's columns and K step: the same grid.
            let block = coopmat2::skinny_block(p, s, kernel.b_t).expect("api_for checks it");
            CoopEngine::SkinnyCoopmat2 { block, b_t: kernel.b_t, out: out.dtype }
        }
        Api::Coopmat2 => {
            debug_assert!(out.plain(), "the planner sends other outputs through a slab");
            let block = coopmat2::block(p, s).expect("spirv::route checks the block");
            let b = coopmat2::BLOCKS[block];
            groups = [n.div_ceil(b.n as usize) as u32, m.div_ceil(b.m as usize) as u32, groups[2]];
            CoopEngine::Coopmat2(Coopmat2Variant { block, a_t: kernel.a_t, b_t: kernel.b_t, out: out.dtype })
        }
        _ if kernel.skinny => CoopEngine::SkinnyKhr(skinny::variant(s, kernel, m, out.dtype)),
        Api::Khr if wide => {
            groups = [n.div_ceil(bn) as u32, m.div_ceil(bm) as u32, groups[2]];
            CoopEngine::Wide(WideVariant { b_t: kernel.b_t, out: out.dtype, direct, bf16: kernel.bf16, shape })
        }
        Api::Khr => CoopEngine::Khr(SpirvVariant {
            double_buffered: s.spirv_double_buffered && !kernel.bf16,
            a_t: kernel.a_t,
            b_t: kernel.b_t,
            out: out.dtype,
            direct,
            bf16: kernel.bf16,
        }),
        Api::Wgsl => CoopEngine::Wgsl { entry: entry_for(&out, kernel, n), direct },
    };
    Ok(CoopRoute { kernel, engine, store: out, via_slab, groups })
}

/// The tensor-core route for `kernel` (chosen by `choose` for `q`): K cut
/// into runs (to bound the loop and to fill the GPU), stored to C
/// directly or through f32 slabs and the split-K pass; None where the runs
/// need more slabs than one pass holds (the tiled kernel's waves take it).
pub fn plan(q: &Problem, p: &DeviceProfile, s: &GemmSettings, kernel: CoopKernel) -> Result<Option<CoopRoute>> {
    let (m, n, k) = (q.m, q.n, q.k);
    let bk = kernel.bk(s);
    let outputs = q.outputs();
    let mut split = Split::plan(p, s, k, outputs, q.batch_count, bk)?;
    // Too few tiles to fill the GPU: K in runs summed by the second pass.
    let fill = kernel_fill_splits(p, s, kernel, (m, n, k), q.batch_count);
    if split.splits == 1 && fill > 1 {
        if let Ok(more) = Split::into(p, s, k, fill, outputs, q.batch_count, bk) {
            if more.parts == more.splits {
                split = more;
            }
        }
    }
    let out = CoopStore::of(q, (split.k_chunk, split.splits));
    if split.splits == 1 && !needs_slab(p, s, kernel, (m, k), &out) {
        return route_into(q, p, s, kernel, out, false).map(Some);
    }
    // All splits at once into f32 slabs (the fragments cannot add to a
    // slab), then the second pass applies the epilogue (also for one
    // split, where the kernel stores plain products only). A slab past the
    // binding limit, which only a single run can ask for here, takes the
    // tiled kernel, as do too many splits for one pass.
    let slab_fits = outputs * 4 <= p.max_binding;
    if split.parts == split.splits && slab_fits {
        return route_into(q, p, s, kernel, CoopStore::slab(q, (split.k_chunk, split.splits)), true).map(Some);
    }
    Ok(None)
}

/// Record a planned tensor-core product of `a` and `b` (the views `q`
/// describes) into `target` (C, or the slabs where the route goes through
/// them), with the row or column bias (binding, offset, stride) where it
/// has one, and the epilogue's tensors where the store applies it.
pub fn record(
    stream: &StreamShared,
    q: &Problem,
    route: &CoopRoute,
    (a, b): (&Tensor, &Tensor),
    target: Arg,
    bias: Option<(Arg, u32, isize)>,
    epi: Option<&EpilogueViews>,
) -> Result<()> {
    let out = &route.store;
    let (m, n, k) = (q.m, q.n, q.k);
    debug_assert!(out.splits == k.div_ceil(out.k_chunk));
    let names = match route.engine {
        CoopEngine::Wgsl { entry: "gemm_coop_f16", .. } => ["a", "b", "c_f32"],
        CoopEngine::Wgsl { entry: "gemm_coop_f16_epilogue_h2", .. } => ["a", "b", "c_h2"],
        _ => ["a", "b", "c"],
    };
    let (a_arg, a_off) = spec::view_arg(names[0], a);
    let (b_arg, b_off) = spec::view_arg(names[1], b);
    // Without a bias the bias binding still needs a buffer: a's (never read).
    let (bias_arg, bias_off, bias_stride) = bias.unwrap_or((a_arg, 0, 0));
    let none = Epilogue::default();
    let epilogue = if out.epilogue { &q.epilogue } else { &none };
    let (scale, residual, e) = epilogue::bind(epilogue, epi, a_arg);
    let params = CoopParams {
        m: m as u32,
        n: n as u32,
        k: k as u32,
        batch_rank: q.batch.len() as u32,
        alpha: out.alpha,
        beta: out.beta,
        has_bias: out.has_bias as u32,
        bias_stride: bias_stride as i32,
        a_sm: q.a.strides[0] as i32,
        a_sk: q.a.strides[1] as i32,
        b_sk: q.b.strides[0] as i32,
        b_sn: q.b.strides[1] as i32,
        c_sm: out.strides[0] as i32,
        c_sn: out.strides[1] as i32,
        bias_off,
        k_chunk: out.k_chunk as u32,
        a_off,
        b_off,
        c_off: out.offset,
        splits: out.splits as u32,
        split_c: out.split_c as u32,
        _pad0: [0; 3],
        batch_shape: pack_u32(&q.batch, 1),
        a_bstride: pack_i32(&q.a.batch_strides),
        b_bstride: pack_i32(&q.b.batch_strides),
        c_bstride: pack_i32(&out.batch_strides),
        epi_act: e.act,
        epi_flags: e.flags,
        scale_off: e.scale_off,
        scale_stride: e.scale_stride,
        res_off: e.res_off,
        res_sm: e.res_sm,
        res_sn: e.res_sn,
        nan: f32::NAN.to_bits(),
        inf: f32::INFINITY.to_bits(),
        _pad1: [0; 3],
        res_bstride: e.res_bstride,
    };
    let groups = route.groups;
    let dev = &stream.device;
    let target = Arg { name: names[2], ..target };
    let bias = Arg { name: "bias", ..bias_arg };
    match route.engine {
        CoopEngine::SkinnyCoopmat2 { block, b_t, out } => {
            let compiled = coopmat2::skinny_module(block, b_t, out).kernel(dev)?;
            spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target], groups)
        }
        CoopEngine::Coopmat2(variant) => {
            let compiled = variant.module().kernel(dev)?;
            spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target], groups)
        }
        CoopEngine::SkinnyKhr(variant) => {
            let compiled = variant.module().kernel(dev)?;
            spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target, bias, scale, residual], groups)
        }
        CoopEngine::Khr(variant) => {
            let compiled = variant.module().kernel(dev)?;
            if variant.direct {
                return spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target], groups);
            }
            spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target, bias, scale, residual], groups)
        }
        CoopEngine::Wide(variant) => {
            let compiled = variant.module().kernel(dev)?;
            if variant.direct {
                return spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target], groups);
            }
            spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target, bias, scale, residual], groups)
        }
        CoopEngine::Wgsl { entry, direct } => {
            let flag = |b: bool| if b { 1.0 } else { 0.0 };
            let kernel = route.kernel;
            let overrides = [flag(kernel.a_t), flag(kernel.b_t), flag(kernel.edge)];
            let variant: Variant = FAMILY.variant(entry, &[DType::F16, out.dtype], &overrides);
            if direct {
                return spec::record(stream, &Launch { variant, params, args: [a_arg, b_arg, target], groups });
            }
            let args = [a_arg, b_arg, target, bias, scale, residual];
            spec::record(stream, &Launch { variant, params, args, groups })
        }
    }
}

/// How a GEMM's K is cut: `splits` runs of `k_chunk`, computed `parts` at a
/// time into as many f32 slabs of the output's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub splits: usize,
    pub k_chunk: usize,
    pub parts: usize,
}

/// Most slabs (each element's second pass loops over them).
const MAX_PARTS: usize = 4096;

impl Split {
    /// K in runs of at most K_CHUNK (see split.rs; runs a multiple of
    /// `align`, which divides K_CHUNK), for `outputs` elements of C over
    /// `batch` matrices.
    pub fn plan(
        p: &DeviceProfile,
        s: &GemmSettings,
        k: usize,
        outputs: usize,
        batch: usize,
        align: usize,
    ) -> Result<Split> {
        Split::into(p, s, k, k.div_ceil(crate::ops::split::K_CHUNK).max(1), outputs, batch, align)
    }

    /// K in about `splits` runs (a multiple of `align` each), as `plan`;
    /// past the slab budget (`scratch_bytes`) the runs go in waves.
    pub fn into(
        p: &DeviceProfile,
        s: &GemmSettings,
        k: usize,
        splits: usize,
        outputs: usize,
        batch: usize,
        align: usize,
    ) -> Result<Split> {
        if splits <= 1 {
            return Ok(Split { splits, k_chunk: k, parts: 1 });
        }
        let k_chunk = k.div_ceil(splits).next_multiple_of(align);
        let splits = k.div_ceil(k_chunk);
        let slab = outputs * 4;
        let binding = p.max_binding;
        if slab > binding {
            bail!(
                TooLarge,
                "gemm: K = {k} is summed in {splits} parts into f32 scratch the size of the output ({slab} bytes), over this adapter's binding limit of {binding}"
            );
        }
        let budget = s.scratch_bytes.min(binding).min(p.max_buffer);
        // At least one slab, even over the budget.
        let cap = (budget / slab).min(p.max_workgroups_per_dim / batch).clamp(1, MAX_PARTS);
        let parts = splits.min(cap);
        Ok(Split { splits, k_chunk, parts })
    }
}

#[cfg(test)]
mod tests {
    use super::{pairs_fit, GemmSettings};
    use crate::runtime::kernel::parse_and_validate;
    use crate::runtime::private_memory::{private_bytes, MAX_PRIVATE_BYTES};

    /// Every variant of the tensor-core GEMM (not compiled on CI's software
    /// driver) fits the private memory the runtime allows a kernel.
    #[test]
    fn the_cooperative_matrix_gemm_fits_private_memory() {
        for v in super::FAMILY.all_variants() {
            let (module, info) = parse_and_validate(&v.source()).unwrap();
            let used = private_bytes(&module, &info, 0, 32);
            assert!(used > 0 && used <= MAX_PRIVATE_BYTES, "{} {:?}: {used} bytes", v.entry, v.types);
        }
    }

    fn fill_splits_for(tiles: usize, k: usize) -> usize {
        super::fill_splits_for(132, &GemmSettings::default(), tiles, k)
    }

    #[test]
    fn few_tiles_split_k_into_runs_of_at_least_512() {
        assert_eq!(fill_splits_for(64, 4096), 4, "M = N = 1024: 64 tiles, 256 of 264 resident");
        assert_eq!(fill_splits_for(100, 4608), 2, "a 512-channel 3x3 convolution's shape: 200 of 264");
        assert_eq!(fill_splits_for(64, 1024), 2);
        assert_eq!(fill_splits_for(64, 1000), 1, "K too short for two runs of 512");
        assert_eq!(fill_splits_for(1, 100_000), 195, "runs of at least 512");
        assert_eq!(fill_splits_for(133, 1 << 20), 1, "tiles for more than half the resident slots");
        assert_eq!(fill_splits_for(0, 4096), 1);
        assert_eq!(fill_splits_for(1024, 4096), 1);
    }

    #[test]
    fn pairs_only_where_every_pair_is_an_aligned_word() {
        assert!(pairs_fit(136, 0, [136, 1], 0, &[130 * 136]));
        assert!(pairs_fit(100, 2, [-100, 1], 0, &[]), "even offsets and negative even strides pair up");
        assert!(!pairs_fit(257, 0, [257, 1], 0, &[]), "odd N: the last column has no partner");
        assert!(!pairs_fit(136, 1, [136, 1], 0, &[]), "odd offset");
        assert!(!pairs_fit(136, 0, [137, 1], 0, &[]), "odd row stride");
        assert!(!pairs_fit(136, 0, [1, 140], 0, &[]), "column-major C");
        assert!(!pairs_fit(136, 0, [136, 1], 0, &[0, 3]), "odd batch stride");
        assert!(!pairs_fit(136, 0, [136, 1], 7, &[]), "odd split stride");
    }
}
