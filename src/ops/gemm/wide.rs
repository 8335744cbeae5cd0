//! The wide-block f16 (and bf16) GEMM on VK_KHR_cooperative_matrix
//! (shaders/spirv/gemm_khr_wide.comp, in tools/gen_gemm_spirv.py's khr
//! set): 128 x 128 blocks of 8 subgroups of 64 x 32, K steps of 64, one
//! staging buffer, grouped block order. Same contract, grid, uniform
//! (`CoopParams`) and bindings as gemm_coop_khr.comp, so it is an engine of
//! the tensor-core route (`CoopEngine::Wide`): coop.rs plans the split-K
//! runs, slabs and store as for the KHR kernel and asks `takes` which of
//! the two runs.
//!
//! The rule (`takes`): f16 and bf16 products that the KHR kernel would
//! run with A read along K, K from MIN_K and enough blocks to fill the
//! GPU. On an H100 the (N, K) weights of nn.Linear ran 1.04-1.21x the KHR
//! kernel (LLaMA-7B prefill projections at 1024 and 2048 rows, a
//! 32000-word LM head at 512, 4096^3, 8192^3, an odd 4095 x 4097 x 1023
//! through the aligned copies; f16, bf16 and f32 C). Since whole blocks
//! load without bounds checks (the module's header), B dense along N and
//! K past 8192 run faster here too: on an H200, 1.07-1.09x the KHR kernel
//! for (K, N) weights and 1.08x for the MLP down projection (K 11008)
//! (BENCHMARKS.md, GEMM section). The `wide`
//! setting (WGC_GEMM_WIDE) turns it off, or on wherever it can run.

use crate::ops::gemm::coop::CoopKernel;
use crate::ops::gemm::problem::Problem;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::spirv::{self, EPILOGUE_F16, EPILOGUE_F32};
use crate::ops::tensor::DType;
use crate::runtime::kernel::BindingKind;
use crate::runtime::spirv_kernel::{SpirvBinding, SpirvModule};

/// Rows and columns of C per workgroup (the KHR kernel's too: the grid and
/// the split-K planning are shared).
pub(crate) const BLOCK: usize = 128;
/// Invocations per workgroup (8 subgroups of 32).
pub(crate) const THREADS: u32 = 256;
/// Workgroup memory: one staging buffer of A and one of B, 128 rows of 64
/// halves padded by 8 each.
const WORKGROUP_BYTES: u32 = 2 * 128 * 72 * 2;

/// The shortest K the rule takes: the KHR kernel's own threshold
/// (spirv.rs); no shorter product was measured.
pub(crate) const MIN_K: usize = 512;
/// Fewest blocks per compute unit the rule takes: the smallest product
/// measured (2048 x 4096, 512 blocks on an H100's 132 SMs) had 3.9; fewer
/// blocks of 256 invocations leave SMs idle in the last wave, unmeasured.
pub(crate) const MIN_BLOCKS_PER_SM: usize = 3;

/// Which module a launch takes (the GLSL's -D switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideVariant {
    /// B dense along K (an (N, K) weight), else along N.
    pub b_t: bool,
    pub out: DType,
    /// Fragments stored straight to C (no epilogue, whole blocks).
    pub direct: bool,
    /// bf16 A and B (the bf16 set: f32 C only), else f16.
    pub bf16: bool,
}

const PARAMS_SIZE: u64 = std::mem::size_of::<crate::ops::gemm::coop::CoopParams>() as u64;

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

macro_rules! modules {
    ($($b:literal $out:ident $store:ident $binds:ident),* $(,)?) => {
        /// Every module, in the order of `WideVariant::index`.
        pub static MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!("gemm_khr_wide_b", $b, "_", stringify!($out), "_", stringify!($store), ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_khr_wide_b", $b, "_", stringify!($out), "_",
                stringify!($store), ".spv"
            )),
            entry: "gemm_khr_wide",
            workgroup_size: [THREADS, 1, 1],
            bindings: &$binds,
        }),*];
    };
}

modules! {
    0 f32 epilogue EPILOGUE_F32, 0 f32 direct DIRECT_F32, 0 f16 epilogue EPILOGUE_F16, 0 f16 direct DIRECT_F16,
    1 f32 epilogue EPILOGUE_F32, 1 f32 direct DIRECT_F32, 1 f16 epilogue EPILOGUE_F16, 1 f16 direct DIRECT_F16,
}

macro_rules! bf16_modules {
    ($($b:literal $store:ident $binds:ident),* $(,)?) => {
        /// The bf16 modules (IN_BF16, on VK_KHR_shader_bfloat16; f32 C), in
        /// the order of `WideVariant::index` for bf16.
        pub static BF16_MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!("gemm_khr_wide_bf16_b", $b, "_f32_", stringify!($store), ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_khr_wide_bf16_b", $b, "_f32_", stringify!($store), ".spv"
            )),
            entry: "gemm_khr_wide",
            workgroup_size: [THREADS, 1, 1],
            bindings: &$binds,
        }),*];
    };
}

bf16_modules! {
    0 epilogue EPILOGUE_F32, 0 direct DIRECT_F32, 1 epilogue EPILOGUE_F32, 1 direct DIRECT_F32,
}

impl WideVariant {
    /// Its module's position in `MODULES` (`BF16_MODULES` for bf16).
    pub fn index(self) -> usize {
        if self.bf16 {
            debug_assert!(self.out == DType::F32, "the bf16 set stores f32");
            return (self.b_t as usize) * 2 + self.direct as usize;
        }
        (self.b_t as usize) * 4 + ((self.out == DType::F16) as usize) * 2 + self.direct as usize
    }

    pub fn module(self) -> &'static SpirvModule {
        if self.bf16 {
            &BF16_MODULES[self.index()]
        } else {
            &MODULES[self.index()]
        }
    }
}

/// True if the device can run the modules: the KHR kernel's needs
/// (spirv::runnable) and 256 invocations and the staging buffers per
/// workgroup.
pub fn runnable(p: &DeviceProfile) -> bool {
    spirv::runnable(p) && p.max_invocations >= THREADS && p.max_workgroup_storage >= WORKGROUP_BYTES
}

/// True if `kernel`'s product of `m` x `n` x `k` over `batch` matrices
/// runs on this kernel instead of gemm_coop_khr.comp: `on_khr` says the
/// planner sent it to the KHR kernel. The `wide` setting decides where set
/// (true: every f16, non-skinny product with A read along K where the KHR
/// kernels may run, and bf16 where the KHR bf16 set may); else the rule of
/// the module's header, for f16 and bf16 alike.
pub fn takes(
    p: &DeviceProfile,
    s: &GemmSettings,
    kernel: CoopKernel,
    (m, n, k): (usize, usize, usize),
    batch: usize,
    on_khr: bool,
) -> bool {
    let dtype_ok = !kernel.bf16 || spirv::bf16_allowed(p, s);
    let can = dtype_ok && !kernel.skinny && !kernel.a_t && runnable(p) && spirv::khr_allowed_for(p, s);
    match s.wide {
        Some(false) => false,
        Some(true) => can,
        None => can && on_khr && k >= MIN_K && fills(p, (m, n), batch),
    }
}

/// Why a product runs on this kernel, for `explain`.
pub fn reason(q: &Problem) -> String {
    let blocks = q.m.div_ceil(BLOCK) * q.n.div_ceil(BLOCK) * q.batch_count;
    format!(
        "the wide-block VK_KHR_cooperative_matrix kernel (A row-major, K {} from {MIN_K}, \
         {blocks} blocks of {BLOCK} x {BLOCK} to fill the GPU; or the route fixed)",
        q.k
    )
}

/// True if the product has at least MIN_BLOCKS_PER_SM blocks per compute unit.
fn fills(p: &DeviceProfile, (m, n): (usize, usize), batch: usize) -> bool {
    let blocks = m.div_ceil(BLOCK) * n.div_ceil(BLOCK) * batch;
    blocks >= MIN_BLOCKS_PER_SM * p.sms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_names_its_own_module() {
        assert_eq!(MODULES.len(), 8);
        for (i, m) in MODULES.iter().enumerate() {
            let out = [DType::F32, DType::F16][(i >> 1) & 1];
            let v = WideVariant { b_t: i & 4 != 0, out, direct: i & 1 != 0, bf16: false };
            assert_eq!(v.index(), i);
            assert!(std::ptr::eq(v.module(), m));
            let out = if v.out == DType::F16 { "f16" } else { "f32" };
            let store = if v.direct { "direct" } else { "epilogue" };
            assert_eq!(m.file, format!("gemm_khr_wide_b{}_{out}_{store}.spv", v.b_t as u8));
            assert_eq!(m.bindings.len(), if v.direct { 4 } else { 7 });
            let c = m.bindings.iter().find(|b| b.name == "c").unwrap();
            assert_eq!(c.min_size, if v.out == DType::F16 { 2 } else { 4 });
        }
    }

    #[test]
    fn every_bf16_variant_names_its_own_module() {
        assert_eq!(BF16_MODULES.len(), 4);
        for (i, m) in BF16_MODULES.iter().enumerate() {
            let v = WideVariant { b_t: i & 2 != 0, out: DType::F32, direct: i & 1 != 0, bf16: true };
            assert_eq!(v.index(), i);
            assert!(std::ptr::eq(v.module(), m));
            let store = if v.direct { "direct" } else { "epilogue" };
            assert_eq!(m.file, format!("gemm_khr_wide_bf16_b{}_f32_{store}.spv", v.b_t as u8));
            assert_eq!(m.bindings.len(), if v.direct { 4 } else { 7 });
        }
    }

    #[test]
    fn the_block_is_the_khr_kernels() {
        let t = crate::ops::gemm::coop::TILE;
        assert_eq!((t.block_m(), t.block_n()), (BLOCK, BLOCK));
    }
}
