//! The f16 tensor-core GEMM on VK_NV_cooperative_matrix2
//! (shaders/spirv/gemm_coopmat2.comp, compiled by tools/gen_gemm_spirv.py):
//! one workgroup-scope 128 x 128 matrix per workgroup, the driver staging
//! the tiles, edges clamped by tensor layouts. It stores plain products
//! only (`plain` outputs); gemm_views sends alpha, beta and the bias
//! through an f32 slab and the split-K sum pass. Chosen by
//! `gemm_spirv::route` under WGC_GEMM_SPIRV=2 on devices opened with the
//! extension (runtime/coopmat2.rs).

use super::gemm_coop::{CoopParams, TILE};
use super::tensor::DType;
use crate::runtime::device::Device;
use crate::runtime::kernel::BindingKind;
use crate::runtime::spirv_kernel::{self, SpirvBinding, SpirvModule};

/// Which module a launch takes (the GLSL's -D switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coopmat2Variant {
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
    ($($a:literal $b:literal $out:ident $binds:ident),* $(,)?) => {
        /// Every module, in the order of `Coopmat2Variant::index`.
        pub static MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!("gemm_coopmat2_a", $a, "_b", $b, "_", stringify!($out), ".spv"),
            bytes: include_bytes!(concat!(
                "../../shaders/spirv/generated/gemm_coopmat2_a", $a, "_b", $b, "_", stringify!($out), ".spv"
            )),
            entry: "main",
            workgroup_size: [128, 1, 1],
            bindings: &$binds,
        }),*];
    };
}

modules! {
    0 0 f32 F32, 0 0 f16 F16, 0 1 f32 F32, 0 1 f16 F16,
    1 0 f32 F32, 1 0 f16 F16, 1 1 f32 F32, 1 1 f16 F16,
}

// The GLSL's block is gemm_coop's (the host's grid and splits use TILE).
const _: () = assert!(16 * TILE.fm * TILE.sgm == 128 && 16 * TILE.fn_ * TILE.sgn == 128 && TILE.bk == 32);

impl Coopmat2Variant {
    /// Its module's position in `MODULES`.
    pub fn index(self) -> usize {
        (self.a_t as usize) * 4 + (self.b_t as usize) * 2 + (self.out == DType::F16) as usize
    }

    pub fn module(self) -> &'static SpirvModule {
        &MODULES[self.index()]
    }
}

/// True if the device can run the modules: opened with
/// VK_NV_cooperative_matrix2 (which the runtime enables only where the
/// adapter reports workgroup scope, flexible dimensions that list this
/// kernel's shapes, tensor addressing and conversions), SPIR-V passthrough, f16 cooperative matrices and
/// 128 invocations per workgroup.
pub fn runnable(dev: &Device) -> bool {
    dev.coopmat2
        && spirv_kernel::supported(dev)
        && dev.adapter.coop_f16
        && dev.features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16)
        && dev.limits.max_compute_invocations_per_workgroup >= 128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_names_its_own_module() {
        assert_eq!(MODULES.len(), 8);
        for (i, m) in MODULES.iter().enumerate() {
            let v = Coopmat2Variant { a_t: i & 4 != 0, b_t: i & 2 != 0, out: [DType::F32, DType::F16][i & 1] };
            assert_eq!(v.index(), i);
            let out = if v.out == DType::F16 { "f16" } else { "f32" };
            assert_eq!(m.file, format!("gemm_coopmat2_a{}_b{}_{out}.spv", v.a_t as u8, v.b_t as u8));
        }
    }
}
