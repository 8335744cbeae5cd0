//! f16 GEMM on cooperative matrices (tensor cores), for adapters that offer
//! 16x16x16 f16 fragments with f32 accumulation and 32-wide subgroups. The
//! shader is generated for one tile (`TILE`) by tools/gen_gemm_coop_wgsl.py;
//! see its header for the entry points and overrides.

use crate::bail;
use crate::error::Result;
use crate::ops::gemm::coopmat2::{self as gemm_coopmat2, Coopmat2Variant};
use crate::ops::gemm::khr_wide as gemm_khr_wide;
use crate::ops::gemm::skinny::{self as gemm_skinny, SkinnyRoute};
use crate::ops::gemm::spirv::{self as gemm_spirv, Route, SpirvVariant};
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, Arg, Family, Launch, OverrideSlot, TypeSlot, Variant};
use crate::ops::split::{runs_for_one_wave, runs_to_fill, SMS};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;
use std::sync::OnceLock;

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
    source: include_str!("../../../shaders/gemm_coop_f16.wgsl"),
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
    }
}

/// True if the adapter can run this kernel at all (and the environment
/// variable WGC_GEMM_COOP, read once, is not `0`: it sends f16 and bf16
/// GEMMs to the tiled kernel, for comparisons).
pub fn available(dev: &Device) -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    let enabled = *ENABLED.get_or_init(|| std::env::var_os("WGC_GEMM_COOP").is_none_or(|v| v != "0"));
    enabled
        && dev.adapter.coop_f16
        && dev.features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16)
        && dev.adapter.info.subgroup_min_size == 32
        && dev.adapter.info.subgroup_max_size == 32
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
/// the tiles fill half the resident slots already or K is short. The
/// environment variable WGC_GEMM_COOP_SPLIT, read once, set to `0` keeps
/// every such product in one run, for comparisons.
pub fn fill_splits((m, n, k): (usize, usize, usize), batch: usize) -> usize {
    if !fill_splits_enabled() {
        return 1;
    }
    fill_splits_for(m.div_ceil(TILE.block_m()) * n.div_ceil(TILE.block_n()) * batch, k)
}

/// WGC_GEMM_COOP_SPLIT, read once: not `0`.
fn fill_splits_enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("WGC_GEMM_COOP_SPLIT").is_none_or(|v| v != "0"))
}

/// `fill_splits` for the tile `kernel` runs (the skinny tile fills the GPU
/// with more, narrower workgroups: gemm_skinny::fill_splits).
pub fn kernel_fill_splits(dev: &Device, kernel: CoopKernel, (m, n, k): (usize, usize, usize), batch: usize) -> usize {
    if !kernel.skinny {
        return fill_splits((m, n, k), batch);
    }
    if !fill_splits_enabled() {
        return 1;
    }
    // A split product's C is an f32 slab, which route B stores.
    let route = if skinny_on_coopmat2(dev, kernel, m, true) {
        SkinnyRoute::Coopmat2 { b_t: kernel.b_t }
    } else {
        SkinnyRoute::Khr { fm: gemm_skinny::fragments_m(m) }
    };
    gemm_skinny::fill_splits(n.div_ceil(kernel.block_n()) * m.div_ceil(kernel.block_m()) * batch, k, route)
}

fn fill_splits_for(tiles: usize, k: usize) -> usize {
    if let Some(fill) = fill_setting() {
        if tiles * 2 > fill {
            return 1;
        }
        return runs_to_fill(tiles, k, fill, MIN_SPLIT_K);
    }
    runs_for_one_wave(tiles, k, RESIDENT_PER_SM * SMS, MIN_SPLIT_K)
}

/// The environment variable WGC_GEMM_COOP_FILL, read once: a number of
/// workgroups to aim for instead (at least that many, as K runs of equal
/// length allow, where the tiles are at most half of it; for tuning).
fn fill_setting() -> Option<usize> {
    static FILL: OnceLock<Option<usize>> = OnceLock::new();
    *FILL.get_or_init(|| std::env::var("WGC_GEMM_COOP_FILL").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0))
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
    /// Few rows: the skinny tile (gemm_skinny.rs) instead of `TILE`.
    pub skinny: bool,
    /// bf16 A and B (the SPIR-V kernels' bf16 set, f32 C), else f16.
    pub bf16: bool,
}

impl CoopKernel {
    /// The rows, columns and K step of the kernel's tile (the skinny tile
    /// takes every row: it runs for at most MAX_ROWS).
    pub fn block_m(self) -> usize {
        if self.skinny {
            gemm_skinny::MAX_ROWS
        } else {
            TILE.block_m()
        }
    }
    pub fn block_n(self) -> usize {
        if self.skinny {
            gemm_skinny::tile(self.b_t).block_n()
        } else {
            TILE.block_n()
        }
    }
    pub fn bk(self) -> usize {
        if self.skinny {
            gemm_skinny::tile(self.b_t).bk as usize
        } else {
            TILE.bk as usize
        }
    }
}

/// A view's last two dims as the kernel sees an operand: (rows, cols) of
/// op(X) with their strides.
struct Operand {
    /// The stride of each of the two dims.
    strides: [isize; 2],
    sizes: [usize; 2],
}

impl Operand {
    fn of(t: &Tensor) -> Operand {
        let r = t.rank();
        Operand { strides: [t.strides[r - 2], t.strides[r - 1]], sizes: [t.shape[r - 2], t.shape[r - 1]] }
    }
    /// Which dim the kernel reads 8 at a time (the other is the "leading"
    /// one): the unit-stride one, else the smaller stride.
    fn dense(&self) -> usize {
        let unit = |d: usize| self.strides[d] == 1 || self.sizes[d] <= 1;
        let smaller = self.strides[0].abs() < self.strides[1].abs();
        if !unit(1) && (unit(0) || smaller) {
            0
        } else {
            1
        }
    }

    /// True if 16-byte loads along `dense` are whole and aligned: a unit
    /// stride there, a dense dim of whole 8s, and the leading stride, the
    /// offset and every batch stride multiples of 8.
    fn vec_ok(&self, dense: usize, offset: u32, batch_strides: &[isize]) -> bool {
        let lead = self.strides[1 - dense];
        self.strides[dense] == 1
            && self.sizes[dense].is_multiple_of(8)
            && lead >= 0
            && lead % 8 == 0
            && offset.is_multiple_of(8)
            && batch_strides.iter().all(|s| s % 8 == 0)
    }
}

/// True if this device's tensor-core kernels take products of `dtype`
/// operands (f16, or bf16 where the SPIR-V kernels have bf16 fragments),
/// given operands that 16-byte loads can read.
pub fn takes_dtype(dev: &Device, dtype: DType) -> bool {
    let dtype_ok = match dtype {
        DType::F16 => true,
        DType::BF16 => gemm_spirv::bf16_allowed(dev),
        _ => false,
    };
    dtype_ok && available(dev)
}

/// The variant for f16 a (..., M, K) x b (..., K, N), batch strides `a_bs`
/// and `b_bs` over `batch` matrices (the skinny tile for few rows where
/// gemm_skinny::applies), or bf16 ones on a device with bf16 cooperative
/// matrices where the SPIR-V kernels run (`gemm_spirv::bf16_allowed`; the
/// caller sends C as f32); None when the adapter has no tensor cores for
/// the dtype or 16-byte loads cannot read the operands (staging them
/// element by element in the kernel was slower than the tiled kernel, 2.50
/// against 0.98 ms at 4095x4097x1023 on an H200; large ones are copied
/// into aligned scratch instead, gemm_staged.rs).
pub fn choose(
    dev: &Device,
    a: &Tensor,
    b: &Tensor,
    (m, n, k): (usize, usize, usize),
    batch: usize,
    bs: [&[isize]; 2],
) -> Option<CoopKernel> {
    if a.dtype != b.dtype || k == 0 || !takes_dtype(dev, a.dtype) {
        return None;
    }
    let bf16 = a.dtype == DType::BF16;
    let (oa, ob) = (Operand::of(a), Operand::of(b));
    let (da, db) = (oa.dense(), ob.dense());
    if !(oa.vec_ok(da, a.bound_offset(), bs[0]) && ob.vec_ok(db, b.bound_offset(), bs[1])) {
        return None;
    }
    let whole =
        m.is_multiple_of(TILE.block_m()) && n.is_multiple_of(TILE.block_n()) && k.is_multiple_of(TILE.bk as usize);
    let b_broadcast = batch > 1 && bs[1].contains(&0);
    let skinny = gemm_skinny::applies(dev, (m, n), da == 0, db == 0, b_broadcast);
    Some(CoopKernel { a_t: da == 0, b_t: db == 0, edge: !whole, skinny, bf16 })
}

/// Where and how a product is written: the range `target` binds (as C),
/// from element `offset`, at strides `c_sm`, `c_sn` and batch strides `c_bs`
/// over the batch shape; the epilogue alpha, beta and a per-row bias (its
/// binding, offset and stride). K is cut into `splits` runs of `k_chunk`
/// (a multiple of the tile's K step), the products of run s stored
/// `s * split_c` elements further (split_c 0 when there is one run).
pub struct CoopOut<'a> {
    pub target: Arg<'a>,
    pub dtype: DType,
    pub offset: u32,
    pub strides: [isize; 2],
    pub batch_strides: Vec<isize>,
    pub alpha: f32,
    pub beta: f32,
    pub bias: Option<(Arg<'a>, u32, isize)>,
    pub k_chunk: usize,
    pub splits: usize,
    pub split_c: usize,
}

impl CoopOut<'_> {
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
            && self.bias.is_none()
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
    fn plain(&self) -> bool {
        let [sm, sn] = self.strides;
        self.alpha == 1.0
            && self.beta == 0.0
            && self.bias.is_none()
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

/// Whether the f16 epilogue may write pairs (`gemm_coop_f16_epilogue_h2`):
/// the environment variable WGC_GEMM_COOP_EPILOGUE, read once, set to
/// `scalar` writes one half per store instead, for comparisons.
fn pairs_enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("WGC_GEMM_COOP_EPILOGUE").is_none_or(|v| v != "scalar"))
}

/// The kernel a product of `m` rows with inner dim `k` runs into `out`.
fn route_for(dev: &Device, kernel: CoopKernel, (m, k): (usize, usize), out: &CoopOut) -> Route {
    if kernel.bf16 {
        // The bf16 set exists on VK_KHR_cooperative_matrix only.
        Route::Khr
    } else if kernel.skinny {
        if skinny_on_coopmat2(dev, kernel, m, out.plain() || out.splits > 1) {
            Route::Coopmat2
        } else {
            Route::Khr
        }
    } else {
        gemm_spirv::route(dev, k)
    }
}

/// True if a skinny product of `m` rows runs on VK_NV_cooperative_matrix2
/// (f16 only; `plain`: C as that kernel stores it).
fn skinny_on_coopmat2(dev: &Device, kernel: CoopKernel, m: usize, plain: bool) -> bool {
    !kernel.bf16 && gemm_spirv::skinny_coopmat2(dev, kernel.b_t, m, plain)
}

/// True if this output goes through an f32 slab and the split-K sum pass
/// even with one run of K: the route (VK_NV_cooperative_matrix2) stores
/// plain products only.
pub fn needs_slab(dev: &Device, kernel: CoopKernel, (m, k): (usize, usize), out: &CoopOut) -> bool {
    route_for(dev, kernel, (m, k), out) == Route::Coopmat2 && !out.plain()
}

/// The entry point and the names of a, b and C's bindings for an output.
fn entry_for(out: &CoopOut, kernel: CoopKernel, n: usize) -> (&'static str, [&'static str; 3]) {
    if out.direct(kernel.edge, false) {
        ("gemm_coop_f16", ["a", "b", "c_f32"])
    } else if pairs_enabled() && out.pairs(n) {
        ("gemm_coop_f16_epilogue_h2", ["a", "b", "c_h2"])
    } else {
        ("gemm_coop_f16_epilogue", ["a", "b", "c"])
    }
}

/// C = alpha * A x B + beta * C (+ bias) over the batch shape `batch`, A
/// and B at batch strides `bs` (0 broadcasts). The caller has chosen
/// `kernel` with `choose` for these views and validated them, and sends
/// outputs that `needs_slab` through an f32 slab. Runs the kernel
/// `gemm_spirv::route` picks.
#[allow(clippy::too_many_arguments)]
pub fn record(
    stream: &StreamShared,
    kernel: CoopKernel,
    a: &Tensor,
    b: &Tensor,
    out: CoopOut,
    (m, n, k): (usize, usize, usize),
    batch: &[usize],
    bs: [&[isize]; 2],
) -> Result<()> {
    let input = if kernel.bf16 { DType::BF16 } else { DType::F16 };
    debug_assert!(a.dtype == input && b.dtype == input);
    debug_assert!(!kernel.bf16 || out.dtype == DType::F32, "bf16 products write f32 (gemm_views)");
    debug_assert!(out.k_chunk.is_multiple_of(kernel.bk()) && out.splits == k.div_ceil(out.k_chunk));
    let (oa, ob) = (Operand::of(a), Operand::of(b));
    let route = route_for(&stream.device, kernel, (m, k), &out);
    // The SPIR-V kernel guards every load, so only tiles crossing M or N
    // need guarded stores there; a K that ends inside a step keeps them
    // direct (H200, 4096 x 4096 x 4080 into f16: 0.59 ms against 0.96).
    let khr = route == Route::Khr;
    let guarded =
        if khr { !(m.is_multiple_of(TILE.block_m()) && n.is_multiple_of(TILE.block_n())) } else { kernel.edge };
    let direct = !kernel.skinny && out.direct(guarded, khr);
    let (entry, names) = entry_for(&out, kernel, n);
    let (a_arg, a_off) = spec::view_arg(names[0], a);
    let (b_arg, b_off) = spec::view_arg(names[1], b);
    // Without a bias the bias binding still needs a buffer: a's (never read).
    let (bias_arg, bias_off, bias_stride) = out.bias.unwrap_or((a_arg, 0, 0));
    let params = CoopParams {
        m: m as u32,
        n: n as u32,
        k: k as u32,
        batch_rank: batch.len() as u32,
        alpha: out.alpha,
        beta: out.beta,
        has_bias: out.bias.is_some() as u32,
        bias_stride: bias_stride as i32,
        a_sm: oa.strides[0] as i32,
        a_sk: oa.strides[1] as i32,
        b_sk: ob.strides[0] as i32,
        b_sn: ob.strides[1] as i32,
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
        batch_shape: pack_u32(batch, 1),
        a_bstride: pack_i32(bs[0]),
        b_bstride: pack_i32(bs[1]),
        c_bstride: pack_i32(&out.batch_strides),
    };
    let batch_count: usize = batch.iter().product();
    let groups =
        [n.div_ceil(kernel.block_n()) as u32, m.div_ceil(kernel.block_m()) as u32, (batch_count * out.splits) as u32];
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    if groups.iter().any(|&g| g > max_dim) {
        bail!(TooLarge, "gemm: {m}x{n} output needs more workgroups than this adapter allows per dimension");
    }
    if route == Route::Coopmat2 && kernel.skinny {
        debug_assert!(out.plain(), "gemm_views sends other outputs through a slab");
        // The skinny block has the skinny tile's columns and K step: the same grid.
        let block = gemm_coopmat2::skinny_block(&stream.device, kernel.b_t).expect("route_for checks it");
        let compiled = gemm_coopmat2::skinny_module(block, kernel.b_t, out.dtype).kernel(&stream.device)?;
        let target = Arg { name: "c", ..out.target };
        return spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target], groups);
    }
    if route == Route::Coopmat2 {
        debug_assert!(out.plain(), "gemm_views sends other outputs through a slab");
        let block = gemm_coopmat2::block(&stream.device).expect("route checks the block");
        let variant = Coopmat2Variant { block, a_t: kernel.a_t, b_t: kernel.b_t, out: out.dtype };
        let compiled = variant.module().kernel(&stream.device)?;
        let target = Arg { name: "c", ..out.target };
        let b = gemm_coopmat2::BLOCKS[block];
        let groups = [n.div_ceil(b.n as usize) as u32, m.div_ceil(b.m as usize) as u32, groups[2]];
        return spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target], groups);
    }
    if kernel.skinny {
        let compiled = gemm_skinny::variant(kernel, m, out.dtype).module().kernel(&stream.device)?;
        let args = [a_arg, b_arg, Arg { name: "c", ..out.target }, Arg { name: "bias", ..bias_arg }];
        return spec::record_kernel(stream, &compiled, &params, &args, groups);
    }
    if let Some(wide) = gemm_khr_wide::choose(&stream.device, kernel.a_t, kernel.bf16).filter(|_| khr) {
        let direct = out.direct(!wide.whole(m, n), true);
        let (args, shape) = ([a_arg, b_arg, out.target, bias_arg], (m, n, groups[2]));
        return gemm_khr_wide::record_khr_wide(stream, wide, &params, args, shape, (kernel.b_t, out.dtype, direct));
    }
    if route == Route::Khr {
        let double_buffered = gemm_spirv::double_buffered();
        let variant = SpirvVariant {
            double_buffered: double_buffered && !kernel.bf16,
            a_t: kernel.a_t,
            b_t: kernel.b_t,
            out: out.dtype,
            direct,
            bf16: kernel.bf16,
        };
        let compiled = variant.module().kernel(&stream.device)?;
        let target = Arg { name: "c", ..out.target };
        if direct {
            return spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target], groups);
        }
        let bias = Arg { name: "bias", ..bias_arg };
        return spec::record_kernel(stream, &compiled, &params, &[a_arg, b_arg, target, bias], groups);
    }
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let overrides = [flag(kernel.a_t), flag(kernel.b_t), flag(kernel.edge)];
    let variant: Variant = FAMILY.variant(entry, &[DType::F16, out.dtype], &overrides);
    let target = Arg { name: names[2], ..out.target };
    if direct {
        let args = [a_arg, b_arg, target];
        return spec::record(stream, &Launch { variant, params, args, groups });
    }
    let args = [a_arg, b_arg, target, Arg { name: "bias", ..bias_arg }];
    spec::record(stream, &Launch { variant, params, args, groups })
}

#[cfg(test)]
mod tests {
    use super::{fill_splits_for, pairs_fit};
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
