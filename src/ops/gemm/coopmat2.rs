//! The f16 tensor-core GEMM on VK_NV_cooperative_matrix2
//! (shaders/spirv/gemm_coopmat2.comp, compiled by tools/gen_gemm_spirv.py):
//! one workgroup-scope BM x BN matrix per workgroup (`BLOCKS`), the driver
//! staging the tiles, edges clamped by tensor layouts. It stores plain
//! products only (`plain` outputs); the planner sends alpha, beta and the
//! bias through an f32 slab and the split-K sum pass. Skinny products take
//! the `SKINNY_BLOCKS` modules by default where `spirv::skinny_coopmat2`
//! says; every f16 product takes these kernels under WGC_GEMM_SPIRV=2
//! (`spirv::route`). Devices are opened with the extension by
//! runtime/coopmat2.rs.

use crate::ops::gemm::coop::{CoopParams, TILE};
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::tensor::DType;
use crate::runtime::coopmat2::Block;
use crate::runtime::kernel::BindingKind;
use crate::runtime::spirv_kernel::{SpirvBinding, SpirvModule};

/// The blocks the modules are built for, in the order of
/// tools/gen_gemm_spirv.py's CM2_TILES (BM, BN, BK, invocations). Measured
/// on an H200 (BENCHMARKS.md), 128 x 128 x 32 ran the square and prefill
/// products fastest or within 2% of the best; 128 x 256 x 64 on 256
/// invocations (llama.cpp's large tile) is kept for comparisons
/// (WGC_GEMM_CM2_BLOCK); 128 x 128 x 64 and 256 x 128 x 64 measured 5-10%
/// and 45% slower and are not built.
pub(crate) const BLOCKS: [Block; 2] =
    [Block { m: 128, n: 128, k: 32, invocations: 128 }, Block { m: 128, n: 256, k: 64, invocations: 256 }];

/// Which module a launch takes (the GLSL's -D switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coopmat2Variant {
    /// Index into `BLOCKS`.
    pub block: usize,
    pub a_t: bool,
    pub b_t: bool,
    pub out: DType,
}

const PARAMS_SIZE: u64 = std::mem::size_of::<CoopParams>() as u64;

const fn bindings(out: u64) -> [SpirvBinding; 4] {
    [
        SpirvBinding { binding: 0, name: "a", kind: BindingKind::StorageRead, min_size: 2 },
        SpirvBinding { binding: 1, name: "b", kind: BindingKind::StorageRead, min_size: 2 },
        SpirvBinding { binding: 2, name: "c", kind: BindingKind::StorageReadWrite, min_size: out },
        SpirvBinding { binding: 3, name: "p", kind: BindingKind::Uniform, min_size: PARAMS_SIZE },
    ]
}

const F32: [SpirvBinding; 4] = bindings(4);
const F16: [SpirvBinding; 4] = bindings(2);

macro_rules! modules {
    ($($tile:literal $wg:literal: [$($a:literal $b:literal $out:ident $binds:ident),*]),* $(,)?) => {
        /// Every module, in the order of `Coopmat2Variant::index`.
        pub static MODULES: &[SpirvModule] = &[$($(SpirvModule {
            file: concat!("gemm_coopmat2_", $tile, "_a", $a, "_b", $b, "_", stringify!($out), ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_coopmat2_", $tile, "_a", $a, "_b", $b, "_", stringify!($out), ".spv"
            )),
            entry: "main",
            workgroup_size: [$wg, 1, 1],
            bindings: &$binds,
        }),*),*];
    };
}

modules! {
    "128x128x32_w128" 128: [0 0 f32 F32, 0 0 f16 F16, 0 1 f32 F32, 0 1 f16 F16, 1 0 f32 F32, 1 0 f16 F16, 1 1 f32 F32, 1 1 f16 F16],
    "128x256x64_w256" 256: [0 0 f32 F32, 0 0 f16 F16, 0 1 f32 F32, 0 1 f16 F16, 1 0 f32 F32, 1 0 f16 F16, 1 1 f32 F32, 1 1 f16 F16],
}

/// The skinny blocks (at most 32 rows, A row-major), in the order of
/// tools/gen_gemm_spirv.py's CM2_SKINNY_TILES: the skinny tensor-core
/// tiles' columns and K steps (skinny::TILES), so the same grid and
/// K runs apply. (32 x 128 x 64 and 32 x 256 x 32 measured slower on every
/// decode product.)
pub(crate) const SKINNY_BLOCKS: [Block; 2] =
    [Block { m: 32, n: 128, k: 32, invocations: 128 }, Block { m: 32, n: 64, k: 64, invocations: 128 }];

macro_rules! skinny_modules {
    ($($tile:literal $wg:literal: [$($b:literal $out:ident $binds:ident),*]),* $(,)?) => {
        /// The skinny modules, in the order of `skinny_module`.
        pub static SKINNY_MODULES: &[SpirvModule] = &[$($(SpirvModule {
            file: concat!("gemm_coopmat2_skinny_", $tile, "_b", $b, "_", stringify!($out), ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_coopmat2_skinny_", $tile, "_b", $b, "_", stringify!($out), ".spv"
            )),
            entry: "main",
            workgroup_size: [$wg, 1, 1],
            bindings: &$binds,
        }),*),*];
    };
}

skinny_modules! {
    "32x128x32_w128" 128: [0 f32 F32, 0 f16 F16, 1 f32 F32, 1 f16 F16],
    "32x64x64_w128" 128: [0 f32 F32, 0 f16 F16, 1 f32 F32, 1 f16 F16],
}

/// The skinny module of block `block` (index into SKINNY_BLOCKS).
pub fn skinny_module(block: usize, b_t: bool, out: DType) -> &'static SpirvModule {
    &SKINNY_MODULES[block * 4 + (b_t as usize) * 2 + (out == DType::F16) as usize]
}

/// The skinny block for a weight dense along K (`b_t`) or N: the one with
/// the skinny tensor-core tile's columns and K step; None where the driver
/// does not list it or the device cannot run the modules.
pub fn skinny_block(p: &DeviceProfile, s: &GemmSettings, b_t: bool) -> Option<usize> {
    let tile = crate::ops::gemm::skinny::tile(s, b_t);
    let i = SKINNY_BLOCKS.iter().position(|b| b.n as usize == tile.block_n() && b.k == tile.bk)?;
    usable(p, BLOCKS.len() + i, SKINNY_BLOCKS[i]).then_some(i)
}

/// True if the device can run block `b`, bit `bit` of its listed blocks:
/// the modules run there, the driver lists it, and the device allows its
/// invocations per workgroup.
fn usable(p: &DeviceProfile, bit: usize, b: Block) -> bool {
    runnable(p) && p.coopmat2_blocks & (1 << bit) != 0 && b.invocations <= p.max_invocations
}

/// Every block, as the runtime checks them against the driver's list:
/// `BLOCKS`, then `SKINNY_BLOCKS` (bit i of `Device::coopmat2_blocks`).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))] // the C API asks for them
pub(crate) fn all_blocks() -> Vec<Block> {
    BLOCKS.iter().chain(SKINNY_BLOCKS.iter()).copied().collect()
}

// The host's K runs are whole steps of coop::TILE's 32 (the GLSL relies on it).
const _: () = assert!(TILE.bk == 32);

impl Coopmat2Variant {
    /// Its module's position in `MODULES`.
    pub fn index(self) -> usize {
        self.block * 8 + (self.a_t as usize) * 4 + (self.b_t as usize) * 2 + (self.out == DType::F16) as usize
    }

    pub fn module(self) -> &'static SpirvModule {
        &MODULES[self.index()]
    }
}

/// The block products take on this device: the one the `cm2_block`
/// setting (WGC_GEMM_CM2_BLOCK, `BMxBNxBK`, e.g. `128x256x64`) names where
/// the driver lists it, else the first listed. None where the device
/// cannot run the modules.
pub fn block(p: &DeviceProfile, s: &GemmSettings) -> Option<usize> {
    let listed = |i: usize| usable(p, i, BLOCKS[i]);
    s.cm2_block.filter(|&i| listed(i)).or_else(|| (0..BLOCKS.len()).find(|&i| listed(i)))
}

/// True if the device can run the modules: opened with
/// VK_NV_cooperative_matrix2 (which the runtime enables only where the
/// adapter reports workgroup scope, flexible dimensions that list one of
/// `all_blocks`, tensor addressing and conversions), SPIR-V passthrough
/// and f16 cooperative matrices (`block` and `skinny_block` say which
/// blocks).
pub fn runnable(p: &DeviceProfile) -> bool {
    p.coopmat2_blocks != 0 && p.spirv && p.coop_f16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_names_its_own_module() {
        assert_eq!(MODULES.len(), 8 * BLOCKS.len());
        for (i, m) in MODULES.iter().enumerate() {
            let v = Coopmat2Variant {
                block: i / 8,
                a_t: i & 4 != 0,
                b_t: i & 2 != 0,
                out: [DType::F32, DType::F16][i & 1],
            };
            assert_eq!(v.index(), i);
            let b = BLOCKS[v.block];
            let out = if v.out == DType::F16 { "f16" } else { "f32" };
            let tile = format!("{}x{}x{}_w{}", b.m, b.n, b.k, b.invocations);
            assert_eq!(m.file, format!("gemm_coopmat2_{tile}_a{}_b{}_{out}.spv", v.a_t as u8, v.b_t as u8));
            assert_eq!(m.workgroup_size[0], b.invocations);
        }
        assert_eq!(SKINNY_MODULES.len(), 4 * SKINNY_BLOCKS.len());
        for (i, b) in SKINNY_BLOCKS.iter().enumerate() {
            for (b_t, out) in [(false, DType::F32), (false, DType::F16), (true, DType::F32), (true, DType::F16)] {
                let m = skinny_module(i, b_t, out);
                let out = if out == DType::F16 { "f16" } else { "f32" };
                let tile = format!("{}x{}x{}_w{}", b.m, b.n, b.k, b.invocations);
                assert_eq!(m.file, format!("gemm_coopmat2_skinny_{tile}_b{}_{out}.spv", b_t as u8));
                assert_eq!(m.workgroup_size[0], b.invocations);
            }
        }
    }

    #[test]
    fn each_skinny_tile_has_its_block() {
        for t in super::super::skinny::TILES {
            assert!(SKINNY_BLOCKS.iter().any(|b| b.n as usize == t.block_n() && b.k == t.bk && b.m == 32));
        }
    }
}
