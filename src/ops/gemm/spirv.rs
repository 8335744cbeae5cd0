//! The f16 tensor-core GEMM as SPIR-V (shaders/spirv/gemm_coop_khr.comp on
//! VK_KHR_cooperative_matrix, compiled by tools/gen_gemm_spirv.py), run
//! through wgpu's passthrough instead of the WGSL kernel of coop.rs
//! on Vulkan adapters that have what it needs. Same contract, same tile
//! (`coop::TILE`), same uniform (`CoopParams`): the planner
//! picks the route, so the split-K and epilogue logic is shared.

use crate::ops::gemm::coop::TILE;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::tensor::DType;
use crate::runtime::device::Device;
use crate::runtime::kernel::BindingKind;
use crate::runtime::spirv_kernel::{SpirvBinding, SpirvModule};

/// Which module a launch takes (the GLSL's -D switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpirvVariant {
    /// Two staging buffers (one barrier per K step), else one.
    pub double_buffered: bool,
    pub a_t: bool,
    pub b_t: bool,
    pub out: DType,
    /// Fragments stored straight to C (no epilogue, whole tiles).
    pub direct: bool,
    /// bf16 A and B (the bf16 set: one staging buffer, f32 C), else f16.
    pub bf16: bool,
}

const PARAMS_SIZE: u64 = std::mem::size_of::<crate::ops::gemm::coop::CoopParams>() as u64;

const R: BindingKind = BindingKind::StorageRead;
const RW: BindingKind = BindingKind::StorageReadWrite;

const fn bind(binding: u32, name: &'static str, kind: BindingKind, min_size: u64) -> SpirvBinding {
    SpirvBinding { binding, name, kind, min_size }
}

/// The bindings of a variant with an `OUT`-byte C: a and b (16-byte
/// vectors), C, the uniform p, and the bias, scale and residual where
/// there is an epilogue.
const fn bindings<const OUT: u64, const N: usize>() -> [SpirvBinding; N] {
    let all = [
        bind(0, "a", R, 16),
        bind(1, "b", R, 16),
        bind(2, "c", RW, OUT),
        bind(3, "p", BindingKind::Uniform, PARAMS_SIZE),
        bind(4, "bias", R, OUT),
        bind(5, "scale", R, OUT),
        bind(6, "residual", R, OUT),
    ];
    let mut out = [all[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = all[i];
        i += 1;
    }
    out
}

const DIRECT_F32: [SpirvBinding; 4] = bindings::<4, 4>();
const DIRECT_F16: [SpirvBinding; 4] = bindings::<2, 4>();
/// The epilogue variants' bindings, which gemm_skinny_khr.comp shares.
pub(crate) const EPILOGUE_F32: [SpirvBinding; 7] = bindings::<4, 7>();
pub(crate) const EPILOGUE_F16: [SpirvBinding; 7] = bindings::<2, 7>();

macro_rules! modules {
    ($($s:literal $a:literal $b:literal $out:ident $store:ident $binds:ident),* $(,)?) => {
        /// Every module, in the order of `SpirvVariant::index`.
        pub static MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!(
                "gemm_coop_khr_s", $s, "_a", $a, "_b", $b, "_", stringify!($out), "_", stringify!($store), ".spv"
            ),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_coop_khr_s", $s, "_a", $a, "_b", $b, "_",
                stringify!($out), "_", stringify!($store), ".spv"
            )),
            entry: "main",
            workgroup_size: [128, 1, 1],
            bindings: &$binds,
        }),*];
    };
}

modules! {
    1 0 0 f32 epilogue EPILOGUE_F32, 1 0 0 f32 direct DIRECT_F32, 1 0 0 f16 epilogue EPILOGUE_F16, 1 0 0 f16 direct DIRECT_F16,
    1 0 1 f32 epilogue EPILOGUE_F32, 1 0 1 f32 direct DIRECT_F32, 1 0 1 f16 epilogue EPILOGUE_F16, 1 0 1 f16 direct DIRECT_F16,
    1 1 0 f32 epilogue EPILOGUE_F32, 1 1 0 f32 direct DIRECT_F32, 1 1 0 f16 epilogue EPILOGUE_F16, 1 1 0 f16 direct DIRECT_F16,
    1 1 1 f32 epilogue EPILOGUE_F32, 1 1 1 f32 direct DIRECT_F32, 1 1 1 f16 epilogue EPILOGUE_F16, 1 1 1 f16 direct DIRECT_F16,
    2 0 0 f32 epilogue EPILOGUE_F32, 2 0 0 f32 direct DIRECT_F32, 2 0 0 f16 epilogue EPILOGUE_F16, 2 0 0 f16 direct DIRECT_F16,
    2 0 1 f32 epilogue EPILOGUE_F32, 2 0 1 f32 direct DIRECT_F32, 2 0 1 f16 epilogue EPILOGUE_F16, 2 0 1 f16 direct DIRECT_F16,
    2 1 0 f32 epilogue EPILOGUE_F32, 2 1 0 f32 direct DIRECT_F32, 2 1 0 f16 epilogue EPILOGUE_F16, 2 1 0 f16 direct DIRECT_F16,
    2 1 1 f32 epilogue EPILOGUE_F32, 2 1 1 f32 direct DIRECT_F32, 2 1 1 f16 epilogue EPILOGUE_F16, 2 1 1 f16 direct DIRECT_F16,
}

macro_rules! bf16_modules {
    ($($a:literal $b:literal $store:ident $binds:ident),* $(,)?) => {
        /// The bf16 modules (IN_BF16, on VK_KHR_shader_bfloat16), in the
        /// order of `SpirvVariant::index` for bf16.
        pub static BF16_MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!("gemm_coop_khr_bf16_a", $a, "_b", $b, "_f32_", stringify!($store), ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_coop_khr_bf16_a", $a, "_b", $b, "_f32_", stringify!($store), ".spv"
            )),
            entry: "main",
            workgroup_size: [128, 1, 1],
            bindings: &$binds,
        }),*];
    };
}

bf16_modules! {
    0 0 epilogue EPILOGUE_F32, 0 0 direct DIRECT_F32, 0 1 epilogue EPILOGUE_F32, 0 1 direct DIRECT_F32,
    1 0 epilogue EPILOGUE_F32, 1 0 direct DIRECT_F32, 1 1 epilogue EPILOGUE_F32, 1 1 direct DIRECT_F32,
}

// The GLSL is written for coop::TILE: 2 x 2 subgroups of 4 x 4
// fragments, K in steps of 32.
const _: () = assert!(TILE.fm == 4 && TILE.fn_ == 4 && TILE.sgm == 2 && TILE.sgn == 2 && TILE.bk == 32);

impl SpirvVariant {
    /// Its module's position in `MODULES` (`BF16_MODULES` for bf16).
    pub fn index(self) -> usize {
        if self.bf16 {
            debug_assert!(!self.double_buffered && self.out == DType::F32, "the bf16 set has neither");
            return (self.a_t as usize) * 4 + (self.b_t as usize) * 2 + self.direct as usize;
        }
        (self.double_buffered as usize) * 16
            + (self.a_t as usize) * 8
            + (self.b_t as usize) * 4
            + ((self.out == DType::F16) as usize) * 2
            + self.direct as usize
    }

    pub fn module(self) -> &'static SpirvModule {
        if self.bf16 {
            &BF16_MODULES[self.index()]
        } else {
            &MODULES[self.index()]
        }
    }
}

/// The shortest K for which the default takes the VK_KHR_cooperative_matrix
/// kernel: measured on an H200, it ran prefill products (K 4096 and 14336)
/// 1.1-2.0x faster than the WGSL kernel and 8192^3 1.08x, while at K 128
/// (batched attention scores) and 256 (a 1x1 convolution) the WGSL kernel
/// was 6% and 16% faster (BENCHMARKS.md).
const KHR_MIN_K: usize = 512;

/// The SPIR-V kernel an f16 tensor-core GEMM with inner dim `k` runs:
/// Some(true) the VK_KHR_cooperative_matrix kernel, Some(false) the
/// VK_NV_cooperative_matrix2 one, None the WGSL kernel (coop.rs). By
/// default the KHR kernel where the device can run it (`runnable`) and K
/// is at least KHR_MIN_K. The `spirv` setting (WGC_GEMM_SPIRV) fixes the
/// route for comparisons: `0` the WGSL kernel; `1` the KHR kernel wherever
/// runnable; `2` the coopmat2 kernel where the device was opened with that
/// extension and can run one of its blocks (`coopmat2::block`). Everywhere
/// else the WGSL kernel. (Skinny and bf16 products choose in coop.rs.)
pub fn route(p: &DeviceProfile, s: &GemmSettings, k: usize) -> Option<bool> {
    match s.spirv {
        Some(0) => None,
        Some(1) if runnable(p) => Some(true),
        Some(2) if crate::ops::gemm::coopmat2::block(p, s).is_some() => Some(false),
        None if runnable(p) && k >= KHR_MIN_K => Some(true),
        _ => None,
    }
}

/// True if kernels on VK_KHR_cooperative_matrix may run: the device can
/// (`runnable`) and the `spirv` setting does not fix another route (0 or 2).
pub fn khr_allowed_for(p: &DeviceProfile, s: &GemmSettings) -> bool {
    matches!(s.spirv, None | Some(1)) && runnable(p)
}

/// `khr_allowed_for` a device under its settings.
pub fn khr_allowed(dev: &Device) -> bool {
    khr_allowed_for(&DeviceProfile::of(dev), &GemmSettings::of(dev))
}

/// Below this many rows, products with a weight dense along K keep the
/// VK_KHR_cooperative_matrix skinny kernel by default: measured on an H200
/// (BENCHMARKS.md), at 8 and 16 rows it read (N, K) weights as fast or
/// faster (a 128256-row vocabulary projection: 0.32 against 0.39 ms),
/// while at 32 rows the VK_NV_cooperative_matrix2 block was 5-13% faster.
const SKINNY_NK_MIN_ROWS_COOPMAT2: usize = 17;

/// True if a skinny product of `m` rows (skinny.rs) with a weight dense
/// along K (`b_t`) or N runs on VK_NV_cooperative_matrix2, storing a plain
/// product (`plain`: no alpha, beta or bias, or an f32 slab). By default
/// where the device has the extension and the skinny block, C is plain,
/// and the weight lies (K, N) or there are at least
/// SKINNY_NK_MIN_ROWS_COOPMAT2 rows: measured on an H200, those products
/// ran 5-10% faster than on the VK_KHR_cooperative_matrix kernel (the
/// driver stages the weight). WGC_GEMM_SPIRV=2 sends every skinny product
/// there, `0` and `1` none.
pub fn skinny_coopmat2(p: &DeviceProfile, s: &GemmSettings, b_t: bool, m: usize, plain: bool) -> bool {
    if crate::ops::gemm::coopmat2::skinny_block(p, s, b_t).is_none() {
        return false;
    }
    match s.spirv {
        Some(2) => true,
        None => plain && (!b_t || m >= SKINNY_NK_MIN_ROWS_COOPMAT2),
        _ => false,
    }
}

/// True if the device can run the modules: SPIR-V passthrough on Vulkan,
/// cooperative matrices with 16x16x16 f16 inputs (whose feature makes
/// wgpu enable VK_KHR_cooperative_matrix and the Vulkan memory model),
/// f16, 48 KiB of workgroup memory and 32-wide subgroups (the kernel
/// counts subgroups as 32 invocations).
pub fn runnable(p: &DeviceProfile) -> bool {
    p.spirv && p.coop_f16 && p.max_workgroup_storage >= 48 * 1024 && p.max_invocations >= 128 && p.subgroup_32
}

/// True if bf16 products may run on the tensor cores: the
/// VK_KHR_cooperative_matrix kernels may (`khr_allowed_for`) and the device was
/// opened with bf16 cooperative matrices (runtime/bf16_coop.rs).
pub fn bf16_allowed(p: &DeviceProfile, s: &GemmSettings) -> bool {
    p.coop_bf16 && khr_allowed_for(p, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_names_its_own_module() {
        assert_eq!(MODULES.len(), 32);
        for (i, m) in MODULES.iter().enumerate() {
            let v = SpirvVariant {
                double_buffered: i & 16 != 0,
                a_t: i & 8 != 0,
                b_t: i & 4 != 0,
                out: [DType::F32, DType::F16][(i >> 1) & 1],
                direct: i & 1 != 0,
                bf16: false,
            };
            assert_eq!(v.index(), i);
            let out = if v.out == DType::F16 { "f16" } else { "f32" };
            let store = if v.direct { "direct" } else { "epilogue" };
            let stages = if v.double_buffered { 2 } else { 1 };
            let name = format!("gemm_coop_khr_s{stages}_a{}_b{}_{out}_{store}.spv", v.a_t as u8, v.b_t as u8);
            assert_eq!(m.file, name);
            assert_eq!(m.bindings.len(), if v.direct { 4 } else { 7 });
            let c = m.bindings.iter().find(|b| b.name == "c").unwrap();
            assert_eq!(c.min_size, if v.out == DType::F16 { 2 } else { 4 });
        }
    }

    #[test]
    fn every_bf16_variant_names_its_own_module() {
        assert_eq!(BF16_MODULES.len(), 8);
        for (i, m) in BF16_MODULES.iter().enumerate() {
            let (a_t, b_t, direct) = (i & 4 != 0, i & 2 != 0, i & 1 != 0);
            let v = SpirvVariant { double_buffered: false, a_t, b_t, out: DType::F32, direct, bf16: true };
            assert_eq!(v.index(), i);
            assert!(std::ptr::eq(v.module(), m));
            let store = if direct { "direct" } else { "epilogue" };
            assert_eq!(m.file, format!("gemm_coop_khr_bf16_a{}_b{}_f32_{store}.spv", a_t as u8, b_t as u8));
            assert_eq!(m.bindings.len(), if direct { 4 } else { 7 });
        }
    }
}
