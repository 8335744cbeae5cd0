//! Skinny f16 products on tensor cores (shaders/spirv/gemm_skinny_khr.comp,
//! compiled by tools/gen_gemm_spirv.py): up to 32 rows of A (the
//! activations of a decode step) times a large B. They are bound by reading
//! B once, which the square tile of coop.rs does at a quarter of the
//! bandwidth (its 128 rows are mostly padding, and its few workgroups keep
//! too few loads in flight). Same contract and uniform (`CoopParams`) as the
//! square kernel, so coop::record runs it with the split-K and epilogue
//! logic it shares with the square tile.

use crate::ops::gemm::coop::CoopKernel;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::spirv;
use crate::ops::split::{runs_for_one_wave, runs_to_fill};
use crate::ops::tensor::DType;
use crate::runtime::spirv_kernel::{SpirvBinding, SpirvModule};

/// Most rows of A (two fragments of 16).
pub(crate) const MAX_ROWS: usize = 32;
/// Fewest rows: one or two rows (bound by the same bytes) run faster on the
/// matrix-vector kernels, which do no work on padding rows (H200, K 4096 and
/// 14336: one row 0.052-0.068 ms there against 0.061-0.091 here; eight rows
/// 0.12-0.23 against 0.063-0.096).
pub(crate) const MIN_ROWS: usize = 3;

/// A tile of the skinny kernel: fragments per subgroup along N (4
/// subgroups side by side) and the K consumed per staged step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkinnyTile {
    pub fn_: u32,
    pub bk: u32,
}

/// The tiles the generator compiles, in module order: the first is the
/// default for a weight dense along N, the second for one dense along K.
/// Measured on an H200 over decode products (M 1-32, K 4096 and 14336,
/// both layouts, two steps of loads in flight; BENCHMARKS.md): on (K, N)
/// weights 2 fragments and K 32 was fastest on all 16 shapes (64 columns
/// and K 64: 1.2-1.6x slower); on (N, K) weights 1 fragment and K 64 (runs
/// of 128 bytes per row) on 15 of 16, 6-25% faster than 2 and 32.
/// 4 fragments, K 32-128 and 1 fragment with K 32 or 128 were slower.
pub(crate) const TILES: [SkinnyTile; 2] = [SkinnyTile { fn_: 2, bk: 32 }, SkinnyTile { fn_: 1, bk: 64 }];

impl SkinnyTile {
    pub fn block_n(self) -> usize {
        (4 * 16 * self.fn_) as usize
    }
}

/// The module a launch takes (the GLSL's -D switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkinnyVariant {
    pub tile: SkinnyTile,
    /// Fragments along M: 1 (up to 16 rows) or 2 (up to 32).
    pub fm: u32,
    pub b_t: bool,
    pub out: DType,
    /// bf16 A and B (the bf16 set, f32 C only), else f16.
    pub bf16: bool,
}

// gemm_coop_khr.comp's epilogue variants have the same bindings (the same
// gemm_khr_common.glsl).
const F32: &[SpirvBinding] = &spirv::EPILOGUE_F32;
const F16: &[SpirvBinding] = &spirv::EPILOGUE_F16;

macro_rules! modules {
    ($($n:literal $k:literal $m:literal $b:literal $out:ident $binds:ident),* $(,)?) => {
        /// Every module, in the order of `SkinnyVariant::index`.
        pub static MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!("gemm_skinny_khr_n", $n, "_k", $k, "_m", $m, "_b", $b, "_", stringify!($out), ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_skinny_khr_n", $n, "_k", $k, "_m", $m, "_b", $b, "_",
                stringify!($out), ".spv"
            )),
            entry: "main",
            workgroup_size: [128, 1, 1],
            bindings: $binds,
        }),*];
    };
}

modules! {
    2 32 1 0 f32 F32, 2 32 1 0 f16 F16, 2 32 1 1 f32 F32, 2 32 1 1 f16 F16,
    2 32 2 0 f32 F32, 2 32 2 0 f16 F16, 2 32 2 1 f32 F32, 2 32 2 1 f16 F16,
    1 64 1 0 f32 F32, 1 64 1 0 f16 F16, 1 64 1 1 f32 F32, 1 64 1 1 f16 F16,
    1 64 2 0 f32 F32, 1 64 2 0 f16 F16, 1 64 2 1 f32 F32, 1 64 2 1 f16 F16,
}

macro_rules! bf16_modules {
    ($($n:literal $k:literal $m:literal $b:literal),* $(,)?) => {
        /// The bf16 modules (IN_BF16), in the order of `SkinnyVariant::index` for bf16.
        pub static BF16_MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!("gemm_skinny_khr_bf16_n", $n, "_k", $k, "_m", $m, "_b", $b, "_f32.spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_skinny_khr_bf16_n", $n, "_k", $k, "_m", $m, "_b", $b, "_f32.spv"
            )),
            entry: "main",
            workgroup_size: [128, 1, 1],
            bindings: F32,
        }),*];
    };
}

bf16_modules! {
    2 32 1 0, 2 32 1 1, 2 32 2 0, 2 32 2 1,
    1 64 1 0, 1 64 1 1, 1 64 2 0, 1 64 2 1,
}

impl SkinnyVariant {
    /// Its module's position in `MODULES` (`BF16_MODULES` for bf16).
    pub fn index(self) -> usize {
        let tile = TILES.iter().position(|t| *t == self.tile).expect("a compiled tile");
        if self.bf16 {
            debug_assert_eq!(self.out, DType::F32, "the bf16 set writes f32");
            return tile * 4 + (self.fm as usize - 1) * 2 + self.b_t as usize;
        }
        tile * 8 + (self.fm as usize - 1) * 4 + (self.b_t as usize) * 2 + (self.out == DType::F16) as usize
    }

    pub fn module(self) -> &'static SpirvModule {
        if self.bf16 {
            &BF16_MODULES[self.index()]
        } else {
            &MODULES[self.index()]
        }
    }
}

/// The tile for a weight dense along K (`b_t`) or N: the one the settings
/// name (WGC_GEMM_SKINNY_TILE, e.g. `n1k64`: fragments per subgroup along
/// N, K per step) for both, for comparisons; else TILES[1] for `b_t`,
/// TILES[0] otherwise.
pub fn tile(s: &GemmSettings, b_t: bool) -> SkinnyTile {
    s.skinny_tile.unwrap_or(TILES[b_t as usize])
}

/// True if a product of `m` rows (MIN_ROWS to MAX_ROWS) and `n` columns
/// with A dense along K (`a_t` false), B dense along K (`b_t`) or N, and
/// B the same for every batch matrix or its own (`b_broadcast` false)
/// takes the skinny kernel on this device: the VK_KHR_cooperative_matrix
/// kernels can run, the route is not fixed to another (WGC_GEMM_SPIRV 0 or 2), and
/// the `skinny` setting is on (WGC_GEMM_SKINNY=0 turns it off, for
/// comparisons). A weight shared by a batch stays with the matrix-vector
/// kernels, which fold the batch into rows and read it once.
pub fn applies(
    p: &DeviceProfile,
    s: &GemmSettings,
    (m, n): (usize, usize),
    a_t: bool,
    b_t: bool,
    b_broadcast: bool,
) -> bool {
    // Column blocks in one grid dimension (the matrix-vector kernels take
    // wider products in two).
    let blocks_fit = n.div_ceil(tile(s, b_t).block_n()) <= p.max_workgroups_per_dim;
    let route = spirv::khr_allowed_for(p, s) || spirv::skinny_coopmat2(p, s, b_t, m, true);
    s.skinny && (MIN_ROWS..=MAX_ROWS).contains(&m) && blocks_fit && !a_t && !b_broadcast && route
}

/// Workgroups of these kernels an H100 or H200 (132 SMs) holds at once,
/// per SM, inferred from the times below (Vulkan does not report it): 4 of
/// the VK_KHR_cooperative_matrix kernel with one fragment along M, 3 with
/// two; 4 of the
/// VK_NV_cooperative_matrix2 kernel on a (K, N) weight, 3 on an (N, K) one.
/// A split that launches more than that leaves a partial second wave: on an
/// H100, M 8 with an (N, K) weight, K 4096 and 224 blocks took 0.062 ms in
/// 2 runs (448 workgroups), 0.070 in 3 (672) and 0.069 in 5 (1120); K 14336
/// and 64 blocks 0.069 in 5 (320), 0.078 in 9 (576), 0.064 in 16 (1024).
/// Measured over M 8-32, both layouts, K 4096 and 14336, f16 and bf16
/// (BENCHMARKS.md at 317f233, "Ninth round").
const RESIDENT_PER_SM_ONE_FRAGMENT: usize = 4;
const RESIDENT_PER_SM_TWO_FRAGMENTS: usize = 3;
const RESIDENT_PER_SM_COOPMAT2_KN: usize = 4;
const RESIDENT_PER_SM_COOPMAT2_NK: usize = 3;
/// The shortest K run of a split.
const MIN_SPLIT_K: usize = 256;

/// Which kernel a skinny product runs, for `fill_splits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkinnyRoute {
    /// gemm_skinny_khr.comp with `fm` fragments along M.
    Khr { fm: u32 },
    /// gemm_coopmat2.comp's skinny block for a weight dense along K (`b_t`) or N.
    Coopmat2 { b_t: bool },
}

impl SkinnyRoute {
    /// The workgroups an H100 or H200 (or a GPU of `sms` such SMs) holds at once.
    fn resident(self, sms: usize) -> usize {
        sms * match self {
            SkinnyRoute::Khr { fm: 1 } => RESIDENT_PER_SM_ONE_FRAGMENT,
            SkinnyRoute::Khr { .. } => RESIDENT_PER_SM_TWO_FRAGMENTS,
            SkinnyRoute::Coopmat2 { b_t: false } => RESIDENT_PER_SM_COOPMAT2_KN,
            SkinnyRoute::Coopmat2 { b_t: true } => RESIDENT_PER_SM_COOPMAT2_NK,
        }
    }
}

/// How many K runs `blocks` column and row blocks take on `route`: as many
/// as one wave of resident workgroups holds (1 where the blocks fill it
/// already or K is short), each run at least MIN_SPLIT_K long; the
/// `skinny_fill` setting (WGC_GEMM_SKINNY_FILL) aims for that many
/// workgroups instead, for tuning.
pub fn fill_splits(p: &DeviceProfile, s: &GemmSettings, blocks: usize, k: usize, route: SkinnyRoute) -> usize {
    if let Some(fill) = s.skinny_fill {
        return runs_to_fill(blocks, k, fill, MIN_SPLIT_K);
    }
    runs_for_one_wave(blocks, k, route.resident(p.sms), MIN_SPLIT_K)
}

/// Fragments of 16 rows along M that `m` rows take (1 or 2).
pub fn fragments_m(m: usize) -> u32 {
    if m > 16 {
        2
    } else {
        1
    }
}

/// The variant for a kernel `choose` made skinny, `m` rows and output `out`.
pub fn variant(s: &GemmSettings, kernel: CoopKernel, m: usize, out: DType) -> SkinnyVariant {
    SkinnyVariant { tile: tile(s, kernel.b_t), fm: fragments_m(m), b_t: kernel.b_t, out, bf16: kernel.bf16 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_names_its_own_module() {
        assert_eq!(MODULES.len(), TILES.len() * 8);
        for (i, m) in MODULES.iter().enumerate() {
            let v = SkinnyVariant {
                tile: TILES[i / 8],
                fm: 1 + ((i / 4) % 2) as u32,
                b_t: (i / 2) % 2 == 1,
                out: [DType::F32, DType::F16][i % 2],
                bf16: false,
            };
            assert_eq!(v.index(), i);
            let out = if v.out == DType::F16 { "f16" } else { "f32" };
            let name = format!("gemm_skinny_khr_n{}_k{}_m{}_b{}_{out}.spv", v.tile.fn_, v.tile.bk, v.fm, v.b_t as u8);
            assert_eq!(m.file, name);
        }
    }

    #[test]
    fn every_bf16_variant_names_its_own_module() {
        assert_eq!(BF16_MODULES.len(), TILES.len() * 4);
        for (i, m) in BF16_MODULES.iter().enumerate() {
            let (tile, fm, b_t) = (TILES[i / 4], 1 + ((i / 2) % 2) as u32, i % 2 == 1);
            let v = SkinnyVariant { tile, fm, b_t, out: DType::F32, bf16: true };
            assert_eq!(v.index(), i);
            assert!(std::ptr::eq(v.module(), m));
            let name = format!("gemm_skinny_khr_bf16_n{}_k{}_m{fm}_b{}_f32.spv", tile.fn_, tile.bk, b_t as u8);
            assert_eq!(m.file, name);
        }
    }

    fn fill_splits(blocks: usize, k: usize, route: SkinnyRoute) -> usize {
        super::fill_splits(&DeviceProfile::h100_like(), &GemmSettings::default(), blocks, k, route)
    }

    #[test]
    fn splits_fill_one_wave_with_runs_of_at_least_256() {
        let one = SkinnyRoute::Khr { fm: 1 };
        assert_eq!(fill_splits(224, 4096, one), 2, "N 14336 in blocks of 64: 448 of 528 resident");
        assert_eq!(fill_splits(64, 14336, one), 8, "N 4096 in blocks of 64: 512 of 528");
        assert_eq!(fill_splits(224, 4096, SkinnyRoute::Khr { fm: 2 }), 1, "2 runs would need 448 of 396");
        assert_eq!(fill_splits(112, 4096, SkinnyRoute::Coopmat2 { b_t: false }), 4);
        assert_eq!(fill_splits(64, 14336, SkinnyRoute::Coopmat2 { b_t: true }), 6);
        assert_eq!(fill_splits(16, 1024, one), 4, "K too short for more runs");
        assert_eq!(fill_splits(1000, 4096, one), 1, "more blocks than one wave");
        assert_eq!(fill_splits(0, 4096, one), 1);
    }
}
