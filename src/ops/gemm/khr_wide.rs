//! f16 GEMM on VK_KHR_cooperative_matrix with a choice of block tiles
//! (shaders/spirv/gemm_khr_wide.comp, compiled by tools/gen_gemm_spirv.py's
//! `wide` set): 128 x 128, 128 x 256 and 256 x 128 blocks, one or two
//! staging buffers, K steps of 16-64, grouped block order. Same contract
//! and uniform (`CoopParams`) as gemm_coop_khr.comp, so gemm_coop::record
//! hands it a product it would have run there (`record_khr_wide`), with
//! the split-K, batch and epilogue logic unchanged. A is read along K only.
//!
//! Tiles named `gm...` are shaders/spirv/gemm_khr_global.comp, which loads
//! fragments straight from the buffers without workgroup staging; it takes
//! whole blocks with K in steps of 32, and other products run on
//! `m128n128k32s2`.
//!
//! Which tile runs is fixed by the environment variable WGC_GEMM_KHR_WIDE,
//! read once: a tile's name (`TILES`, e.g. `m128n256k16s2`); unset (or an
//! unknown name) leaves every product on its current kernel. A name
//! followed by `_diag1`, `_diag2` or `_diag3` runs a timing probe of that
//! tile that skips the K loop's global loads, staging stores or both: its
//! results are wrong by design (bench only). Each module's entry point is
//! `khr_wide_<tile>`, the kernel name profiles show.

use crate::error::Result;
use crate::ops::gemm::coop::CoopParams;
use crate::ops::gemm::spirv::{self as gemm_spirv, EPILOGUE_F16, EPILOGUE_F32};
use crate::ops::spec::{self, Arg};
use crate::ops::tensor::DType;
use crate::runtime::device::Device;
use crate::runtime::kernel::BindingKind;
use crate::runtime::spirv_kernel::{SpirvBinding, SpirvModule};
use crate::runtime::stream::StreamShared;
use std::sync::OnceLock;

/// A block tile: rows and columns of C per workgroup, invocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideTile {
    pub name: &'static str,
    pub bm: u32,
    pub bn: u32,
    pub threads: u32,
    /// gemm_khr_global.comp (fragments loaded straight from the buffers):
    /// whole blocks and K in steps of 32 only (`fits`).
    pub global: bool,
}

const fn tile(name: &'static str, bm: u32, bn: u32, threads: u32) -> WideTile {
    WideTile { name, bm, bn, threads, global: false }
}

const fn global(name: &'static str, bm: u32, bn: u32, threads: u32) -> WideTile {
    WideTile { name, bm, bn, threads, global: true }
}

/// The tile a product that a `global` tile cannot take runs on instead
/// (m128n128w8k64s1).
const GLOBAL_FALLBACK: usize = 8;

/// The compiled tiles, in the generator's WIDE_TILES order.
pub const TILES: [WideTile; 19] = [
    tile("m128n128k32s1", 128, 128, 128),
    tile("m128n128k32s2", 128, 128, 128),
    tile("m128n128k32s2g8", 128, 128, 128),
    tile("m128n256k16s2", 128, 256, 256),
    tile("m128n256k16s2g8", 128, 256, 256),
    tile("m128n256k32s1", 128, 256, 256),
    tile("m256n128k32s1", 256, 128, 256),
    tile("m256n128k16s2", 256, 128, 256),
    tile("m128n128w8k64s1", 128, 128, 256),
    tile("m128n128w8k32s2", 128, 128, 256),
    tile("m128n128k64s1", 128, 128, 128),
    tile("m128n256k32s1g8", 128, 256, 256),
    tile("m128n128k64s1g8", 128, 128, 128),
    tile("m128n128w8k64s1g8", 128, 128, 256),
    tile("m128n256k48s1g8", 128, 256, 256),
    tile("m128n128k32s2u", 128, 128, 128),
    tile("m128n128k32s1x", 128, 128, 128),
    global("gm128n128g8", 128, 128, 128),
    global("gm128n256g8", 128, 256, 256),
];

const PARAMS_SIZE: u64 = std::mem::size_of::<CoopParams>() as u64;

const fn direct_bindings(out: u64) -> [SpirvBinding; 4] {
    let r = BindingKind::StorageRead;
    [
        SpirvBinding { binding: 0, name: "a", kind: r, min_size: 16 },
        SpirvBinding { binding: 1, name: "b", kind: r, min_size: 16 },
        SpirvBinding { binding: 2, name: "c", kind: BindingKind::StorageReadWrite, min_size: out },
        SpirvBinding { binding: 3, name: "p", kind: BindingKind::Uniform, min_size: PARAMS_SIZE },
    ]
}
const DIRECT_F32: [SpirvBinding; 4] = direct_bindings(4);
const DIRECT_F16: [SpirvBinding; 4] = direct_bindings(2);

macro_rules! wide_modules {
    ($($tile:literal $threads:literal),* $(,)?) => {
        /// Every module: per tile, b0/b1 x f32/f16 x epilogue/direct (the
        /// order of `WideVariant::index`).
        pub static MODULES: &[SpirvModule] = &[$(
            wide_modules!(@one $tile $threads "0" "f32" "epilogue" EPILOGUE_F32),
            wide_modules!(@one $tile $threads "0" "f32" "direct" DIRECT_F32),
            wide_modules!(@one $tile $threads "0" "f16" "epilogue" EPILOGUE_F16),
            wide_modules!(@one $tile $threads "0" "f16" "direct" DIRECT_F16),
            wide_modules!(@one $tile $threads "1" "f32" "epilogue" EPILOGUE_F32),
            wide_modules!(@one $tile $threads "1" "f32" "direct" DIRECT_F32),
            wide_modules!(@one $tile $threads "1" "f16" "epilogue" EPILOGUE_F16),
            wide_modules!(@one $tile $threads "1" "f16" "direct" DIRECT_F16),
        )*];
    };
    (@one $tile:literal $threads:literal $b:literal $out:literal $store:literal $binds:ident) => {
        SpirvModule {
            file: concat!("gemm_khr_wide_", $tile, "_a0_b", $b, "_", $out, "_", $store, ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_khr_wide_", $tile, "_a0_b", $b, "_", $out, "_", $store, ".spv"
            )),
            entry: concat!("khr_wide_", $tile),
            workgroup_size: [$threads, 1, 1],
            bindings: &$binds,
        }
    };
}

wide_modules! {
    "m128n128k32s1" 128, "m128n128k32s2" 128, "m128n128k32s2g8" 128, "m128n256k16s2" 256, "m128n256k16s2g8" 256,
    "m128n256k32s1" 256, "m256n128k32s1" 256, "m256n128k16s2" 256, "m128n128w8k64s1" 256, "m128n128w8k32s2" 256,
    "m128n128k64s1" 128, "m128n256k32s1g8" 256, "m128n128k64s1g8" 128, "m128n128w8k64s1g8" 256,
    "m128n256k48s1g8" 256, "m128n128k32s2u" 128, "m128n128k32s1x" 128, "gm128n128g8" 128, "gm128n256g8" 256,
}

macro_rules! diag_modules {
    ($($tile:literal $threads:literal $d:literal),* $(,)?) => {
        /// The timing probes: (tile name, DIAG, module); A row-major, B
        /// (N, K), f16 C stored directly.
        pub static DIAG_MODULES: &[(&str, u8, SpirvModule)] = &[$((
            $tile,
            $d,
            SpirvModule {
                file: concat!("gemm_khr_wide_", $tile, "_diag", $d, ".spv"),
                bytes: include_bytes!(concat!(
                    "../../../shaders/spirv/generated/gemm_khr_wide_", $tile, "_diag", $d, ".spv"
                )),
                entry: concat!("khr_wide_", $tile),
                workgroup_size: [$threads, 1, 1],
                bindings: &DIRECT_F16,
            },
        )),*];
    };
}

diag_modules! {
    "m128n128k32s1" 128 1, "m128n128k32s1" 128 2, "m128n128k32s1" 128 3,
    "m128n128k32s2" 128 1, "m128n128k32s2" 128 2, "m128n128k32s2" 128 3,
    "m128n256k16s2" 256 1, "m128n256k16s2" 256 2, "m128n256k16s2" 256 3,
    "m128n128k64s1" 128 1, "m128n128k64s1" 128 3, "m128n128w8k64s1" 256 1, "m128n128w8k64s1" 256 3,
}

/// The tile a product runs on, and a timing probe's number (0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideChoice {
    pub tile: usize,
    pub diag: u8,
}

/// WGC_GEMM_KHR_WIDE, read once (see the module's header).
fn setting() -> Option<WideChoice> {
    static SETTING: OnceLock<Option<WideChoice>> = OnceLock::new();
    *SETTING.get_or_init(|| parse(&std::env::var("WGC_GEMM_KHR_WIDE").ok()?))
}

fn parse(v: &str) -> Option<WideChoice> {
    let (name, diag) = match v.rsplit_once("_diag") {
        Some((name, d)) => (name, d.parse::<u8>().ok().filter(|d| (1..=3).contains(d))?),
        None => (v, 0),
    };
    let tile = TILES.iter().position(|t| t.name == name)?;
    if diag != 0 && !DIAG_MODULES.iter().any(|(t, d, _)| *t == name && *d == diag) {
        return None;
    }
    Some(WideChoice { tile, diag })
}

/// The tile for an f16 product that gemm_coop would run on
/// gemm_coop_khr.comp (A read along K: `a_t` false), where
/// WGC_GEMM_KHR_WIDE names one and the device runs the SPIR-V kernels
/// with 256 invocations per workgroup; else None (nothing changes).
pub fn choose(dev: &Device, a_t: bool, bf16: bool) -> Option<WideChoice> {
    let choice = setting()?;
    let threads = TILES[choice.tile].threads;
    let ok = !a_t && !bf16 && gemm_spirv::runnable(dev) && dev.limits.max_compute_invocations_per_workgroup >= threads;
    ok.then_some(choice)
}

/// The tile measured best on an H100 (BENCHMARKS.md): 128 x 128 blocks
/// of 8 subgroups of 64 x 32, K steps of 64, grouped block order.
pub const BEST_TILE: usize = 13;

/// The rule proposed for the GEMM planner's default (not applied here):
/// `BEST_TILE` for f16 products that gemm_coop runs on the
/// VK_KHR_cooperative_matrix kernel (K of at least 512, not skinny) with
/// A read along K (`a_t` false) and B dense along K (`b_t`: an (N, K)
/// weight, as nn.Linear stores it), either output dtype. Measured on an
/// H100 over 4096^3, 8192^3, 8192 x 8192 x 1024 and LLaMA-7B/LLaMA-3
/// prefill projections (2048 tokens), those ran 1.04-1.15x the current
/// kernel; with B dense along N (0.90-0.93x) and for transposed A or bf16
/// (no modules) the current kernel stays.
pub fn proposed_default(a_t: bool, b_t: bool, bf16: bool, k: usize) -> Option<WideChoice> {
    (!a_t && b_t && !bf16 && k >= 512).then_some(WideChoice { tile: BEST_TILE, diag: 0 })
}

impl WideChoice {
    pub fn tile(self) -> WideTile {
        TILES[self.tile]
    }

    /// True if no block crosses M or N (the direct store may run).
    pub fn whole(self, m: usize, n: usize) -> bool {
        let t = self.tile();
        m.is_multiple_of(t.bm as usize) && n.is_multiple_of(t.bn as usize)
    }

    fn module(self, b_t: bool, out: DType, direct: bool) -> &'static SpirvModule {
        if self.diag != 0 {
            let name = self.tile().name;
            let d = self.diag;
            return &DIAG_MODULES.iter().find(|(t, dd, _)| *t == name && *dd == d).expect("parse checks it").2;
        }
        let index = self.tile * 8 + (b_t as usize) * 4 + ((out == DType::F16) as usize) * 2 + direct as usize;
        &MODULES[index]
    }
}

/// Records C = alpha * A x B + beta * C (+ bias) on `choice`'s tile with
/// gemm_coop_khr.comp's uniform and bindings (`args`: a, b, C and the
/// bias, named as gemm_coop gives them) for an `m` x `n` C over `z`
/// workgroups along the batch and split dim. The module: B dense along K
/// (`b_t`), C's dtype `out`, and `direct` where the caller checked that C
/// is plain and every block whole (`WideChoice::whole`).
pub fn record_khr_wide(
    stream: &StreamShared,
    choice: WideChoice,
    params: &CoopParams,
    [a, b, c, bias]: [Arg; 4],
    (m, n, z): (usize, usize, u32),
    (b_t, out, direct): (bool, DType, bool),
) -> Result<()> {
    let k = params.k as usize;
    let fits = choice.whole(m, n) && k.is_multiple_of(32) && (params.k_chunk as usize).is_multiple_of(32);
    let choice = if choice.tile().global && !fits { WideChoice { tile: GLOBAL_FALLBACK, diag: 0 } } else { choice };
    let t = choice.tile();
    // The probes store directly (f16, (N, K) B): their results are not checked.
    let direct = direct || choice.diag != 0;
    let module = choice.module(b_t, out, direct);
    let kernel = module.kernel(&stream.device)?;
    let groups = [n.div_ceil(t.bn as usize) as u32, m.div_ceil(t.bm as usize) as u32, z];
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    if groups.iter().any(|&g| g > max_dim) {
        crate::bail!(TooLarge, "gemm: {m}x{n} output needs more workgroups than this adapter allows per dimension");
    }
    let c = Arg { name: "c", ..c };
    if direct {
        return spec::record_kernel(stream, &kernel, params, &[a, b, c], groups);
    }
    let bias = Arg { name: "bias", ..bias };
    spec::record_kernel(stream, &kernel, params, &[a, b, c, bias], groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_names_its_own_module() {
        assert_eq!(MODULES.len(), TILES.len() * 8);
        for (ti, t) in TILES.iter().enumerate() {
            for b_t in [false, true] {
                for out in [DType::F32, DType::F16] {
                    for direct in [false, true] {
                        let m = WideChoice { tile: ti, diag: 0 }.module(b_t, out, direct);
                        let o = if out == DType::F16 { "f16" } else { "f32" };
                        let s = if direct { "direct" } else { "epilogue" };
                        assert_eq!(m.file, format!("gemm_khr_wide_{}_a0_b{}_{o}_{s}.spv", t.name, b_t as u8));
                        assert_eq!(m.workgroup_size[0], t.threads);
                    }
                }
            }
        }
    }

    #[test]
    fn the_global_tiles_fall_back_to_a_staged_one() {
        assert_eq!(TILES[GLOBAL_FALLBACK].name, "m128n128w8k64s1");
        assert!(!TILES[GLOBAL_FALLBACK].global);
    }

    #[test]
    fn the_proposed_rule_takes_nk_weights_with_long_k() {
        assert_eq!(TILES[BEST_TILE].name, "m128n128w8k64s1g8");
        assert_eq!(proposed_default(false, true, false, 4096), Some(WideChoice { tile: BEST_TILE, diag: 0 }));
        assert_eq!(proposed_default(false, false, false, 4096), None);
        assert_eq!(proposed_default(true, true, false, 4096), None);
        assert_eq!(proposed_default(false, true, true, 4096), None);
        assert_eq!(proposed_default(false, true, false, 256), None);
    }

    #[test]
    fn settings_name_a_tile_and_probe() {
        assert_eq!(parse("m128n256k16s2"), Some(WideChoice { tile: 3, diag: 0 }));
        assert_eq!(parse("m128n128k32s1_diag3"), Some(WideChoice { tile: 0, diag: 3 }));
        assert_eq!(parse("m256n128k32s1_diag1"), None);
        assert_eq!(parse("m128n128k32s1_diag4"), None);
        assert_eq!(parse("nothing"), None);
    }
}
