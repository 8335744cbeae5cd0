//! The wide-block f16 (and bf16) GEMM on VK_KHR_cooperative_matrix
//! (shaders/spirv/gemm_khr_wide.comp, in tools/gen_gemm_spirv.py's khr
//! set): 128 x 128 blocks of 8 subgroups of 64 x 32, K steps of 64, one
//! staging buffer, grouped block order. Same contract, grid, uniform
//! (`CoopParams`) and bindings as gemm_coop_khr.comp, so it is an engine of
//! the tensor-core route (`CoopEngine::Wide`): coop.rs plans the split-K
//! runs, slabs and store as for the KHR kernel and asks `takes` which of
//! the two runs.
//!
//! The rule (`takes`), from an H100 (BENCHMARKS.md, GEMM section): f16
//! and bf16 products that the KHR kernel would run with A read along K and
//! B dense along K (an (N, K) weight, as nn.Linear stores it), K from
//! MIN_K to MAX_K and enough blocks to fill the GPU ran 1.04-1.21x the KHR
//! kernel (LLaMA-7B prefill projections at 1024 and 2048 rows, a 32000-word
//! LM head at 512, 4096^3, 8192^3, an odd 4095 x 4097 x 1023 through the
//! aligned copies; f16, bf16 and f32 C). The MLP down projection (K 11008)
//! ran 0.99-1.00x, so longer K stays; B dense along N ran 0.90-0.93x. The
//! bf16 products (the bf16 set, f32 C) follow the same rule. The `wide`
//! setting (WGC_GEMM_WIDE) turns it off, or on wherever it can run.
//!
//! Other block shapes (`WideShape`, picked by WGC_GEMM_WIDE_SHAPE for (N, K)
//! weights; bench/run_gemm_wide_shapes.sh compares them): on an H100
//! (2048 x 4096 x 4096, 2048 x 11008 x 4096, 4096^3 and 8192^3 into f16 and
//! f32, bf16 4096^3) the default ran 226-262 TFLOP/s and subgroup tiles of
//! 64 x 64 lost on every product: 128 x 128 of 2 x 2 subgroups 181-204
//! (K steps of 32: 205-250), 256 x 128 of 4 x 2 204-246, 128 x 256 of
//! 2 x 4 201-246 (K steps of 32 both, for 48 KiB of workgroup memory).

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

/// The shortest K the rule takes: the KHR kernel's own threshold
/// (spirv.rs); no shorter product was measured.
pub(crate) const MIN_K: usize = 512;
/// The longest K the rule takes: 8192^3 ran 1.06x the KHR kernel, the
/// 2048 x 4096 x 11008 down projection 0.99x into f32 (H100).
pub(crate) const MAX_K: usize = 8192;
/// Fewest blocks per compute unit the rule takes: the smallest product
/// measured (2048 x 4096, 512 blocks on an H100's 132 SMs) had 3.9; fewer
/// blocks of 256 invocations leave SMs idle in the last wave, unmeasured.
pub(crate) const MIN_BLOCKS_PER_SM: usize = 3;

/// The block's shape (the GLSL's WIDE_* switches, the generator's
/// WIDE_SHAPES): `W128` is the default and has every module; the others
/// run (N, K) weights only (B dense along K), other products keep `W128`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WideShape {
    /// 128 x 128 of 2 x 4 subgroups of 64 x 32, K steps of 64.
    #[default]
    W128,
    /// 128 x 128 of 2 x 4 subgroups of 64 x 32, K steps of 32.
    K32,
    /// 128 x 64 of 2 x 2 subgroups of 64 x 32, K steps of 64.
    N64,
    /// 128 x 64 of 2 x 2 subgroups of 64 x 32, K steps of 32.
    N64K32,
}

/// Every shape with its name (`WGC_GEMM_WIDE_SHAPE`), in `WideShape` order.
pub(crate) const SHAPES: [(&str, WideShape); 4] =
    [("128", WideShape::W128), ("k32", WideShape::K32), ("n64", WideShape::N64), ("n64k32", WideShape::N64K32)];

impl WideShape {
    /// The shape named `name` (see SHAPES).
    pub fn named(name: &str) -> Option<WideShape> {
        SHAPES.iter().find(|(n, _)| *n == name).map(|&(_, s)| s)
    }

    /// (subgroups along M, along N, fragments of 16 per subgroup along N,
    /// K per step); every shape has 4 fragments per subgroup along M.
    const fn layout(self) -> (usize, usize, usize, usize) {
        match self {
            WideShape::W128 => (2, 4, 2, 64),
            WideShape::K32 => (2, 4, 2, 32),
            WideShape::N64 => (2, 2, 2, 64),
            WideShape::N64K32 => (2, 2, 2, 32),
        }
    }

    /// Rows and columns of C per workgroup.
    pub fn block(self) -> (usize, usize) {
        let (wm, wn, fn_, _) = self.layout();
        (64 * wm, 16 * fn_ * wn)
    }

    /// Invocations per workgroup (subgroups of 32).
    pub fn threads(self) -> u32 {
        let (wm, wn, _, _) = self.layout();
        (32 * wm * wn) as u32
    }

    /// Workgroup memory: the A and B staging buffers, rows of K padded by
    /// 8 halves (B staged along N, and the epilogue, fit in the larger).
    pub fn workgroup_bytes(self) -> u32 {
        let (bm, bn) = self.block();
        let bk = self.layout().3;
        (2 * (bm + bn) * (bk + 8)) as u32
    }
}

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
    /// The block (not `W128` only with `b_t`).
    pub shape: WideShape,
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

macro_rules! shape_modules {
    ($($name:ident $shape:literal $threads:literal),* $(,)?) => {$(
        /// A shape's modules for (N, K) weights: f16 into f32 (epilogue,
        /// direct), into f16 (epilogue, direct), then bf16 into f32
        /// (epilogue, direct).
        static $name: [SpirvModule; 6] = [
            shape_module!($shape, "", "f32", "epilogue", EPILOGUE_F32, $threads),
            shape_module!($shape, "", "f32", "direct", DIRECT_F32, $threads),
            shape_module!($shape, "", "f16", "epilogue", EPILOGUE_F16, $threads),
            shape_module!($shape, "", "f16", "direct", DIRECT_F16, $threads),
            shape_module!($shape, "bf16_", "f32", "epilogue", EPILOGUE_F32, $threads),
            shape_module!($shape, "bf16_", "f32", "direct", DIRECT_F32, $threads),
        ];
    )*};
}

macro_rules! shape_module {
    ($shape:literal, $in:literal, $out:literal, $store:literal, $binds:ident, $threads:literal) => {
        SpirvModule {
            file: concat!("gemm_khr_wide_", $in, $shape, "_b1_", $out, "_", $store, ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_khr_wide_",
                $in,
                $shape,
                "_b1_",
                $out,
                "_",
                $store,
                ".spv"
            )),
            entry: "gemm_khr_wide",
            workgroup_size: [$threads, 1, 1],
            bindings: &$binds,
        }
    };
}

shape_modules! {
    K32_MODULES "k32" 256, N64_MODULES "n64" 128, N64K32_MODULES "n64k32" 128,
}

/// The modules of the shapes other than `W128`, in `SHAPES` order.
pub static SHAPE_MODULES: [&[SpirvModule; 6]; 3] = [&K32_MODULES, &N64_MODULES, &N64K32_MODULES];

/// The modules of a shape other than `W128`.
fn shape_modules(shape: WideShape) -> &'static [SpirvModule; 6] {
    match shape {
        WideShape::W128 => unreachable!("W128 has MODULES and BF16_MODULES"),
        WideShape::K32 => &K32_MODULES,
        WideShape::N64 => &N64_MODULES,
        WideShape::N64K32 => &N64K32_MODULES,
    }
}

impl WideVariant {
    /// Its module's position in `MODULES` (`BF16_MODULES` for bf16; for
    /// another shape, in its six).
    pub fn index(self) -> usize {
        if self.shape != WideShape::W128 {
            debug_assert!(self.b_t, "the other shapes take (N, K) weights only");
            debug_assert!(!self.bf16 || self.out == DType::F32, "the bf16 set stores f32");
            return (self.bf16 as usize) * 4 + ((self.out == DType::F16) as usize) * 2 + self.direct as usize;
        }
        if self.bf16 {
            debug_assert!(self.out == DType::F32, "the bf16 set stores f32");
            return (self.b_t as usize) * 2 + self.direct as usize;
        }
        (self.b_t as usize) * 4 + ((self.out == DType::F16) as usize) * 2 + self.direct as usize
    }

    pub fn module(self) -> &'static SpirvModule {
        if self.shape != WideShape::W128 {
            &shape_modules(self.shape)[self.index()]
        } else if self.bf16 {
            &BF16_MODULES[self.index()]
        } else {
            &MODULES[self.index()]
        }
    }
}

/// True if the device can run the modules of `shape`: the KHR kernel's
/// needs (spirv::runnable) and the shape's invocations and staging buffers
/// per workgroup.
pub fn runnable(p: &DeviceProfile, shape: WideShape) -> bool {
    spirv::runnable(p) && p.max_invocations >= shape.threads() && p.max_workgroup_storage >= shape.workgroup_bytes()
}

/// The shape a product of `kernel` runs with: the setting's for (N, K)
/// weights where the device can run it, else `W128`.
pub fn shape_for(p: &DeviceProfile, s: &GemmSettings, kernel: CoopKernel) -> WideShape {
    if kernel.b_t && runnable(p, s.wide_shape) {
        s.wide_shape
    } else {
        WideShape::W128
    }
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
    let can = dtype_ok && !kernel.skinny && !kernel.a_t && runnable(p, WideShape::W128) && spirv::khr_allowed_for(p, s);
    match s.wide {
        Some(false) => false,
        Some(true) => can,
        None => can && on_khr && kernel.b_t && (MIN_K..=MAX_K).contains(&k) && fills(p, (m, n), batch),
    }
}

/// Why a product runs on this kernel, for `explain`.
pub fn reason(q: &Problem, shape: WideShape) -> String {
    let (bm, bn) = shape.block();
    let blocks = q.m.div_ceil(bm) * q.n.div_ceil(bn) * q.batch_count;
    format!(
        "the wide-block VK_KHR_cooperative_matrix kernel (A row-major, B an (N, K) weight, K {} in {MIN_K}..={MAX_K}, \
         {blocks} blocks of {bm} x {bn} to fill the GPU; or the route fixed)",
        q.k
    )
}

/// True if the product has at least MIN_BLOCKS_PER_SM blocks of 128 x 128
/// per compute unit (the rule's measure whatever the shape).
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
            let v = WideVariant { b_t: i & 4 != 0, out, direct: i & 1 != 0, bf16: false, shape: WideShape::W128 };
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
            let v = WideVariant {
                b_t: i & 2 != 0,
                out: DType::F32,
                direct: i & 1 != 0,
                bf16: true,
                shape: WideShape::W128,
            };
            assert_eq!(v.index(), i);
            assert!(std::ptr::eq(v.module(), m));
            let store = if v.direct { "direct" } else { "epilogue" };
            assert_eq!(m.file, format!("gemm_khr_wide_bf16_b{}_f32_{store}.spv", v.b_t as u8));
            assert_eq!(m.bindings.len(), if v.direct { 4 } else { 7 });
        }
    }

    #[test]
    fn every_shape_names_its_own_modules() {
        for &(name, shape) in &SHAPES[1..] {
            assert_eq!(WideShape::named(name), Some(shape));
            for i in 0..6 {
                let out = if i & 2 != 0 { DType::F16 } else { DType::F32 };
                let v = WideVariant { b_t: true, out, direct: i & 1 != 0, bf16: i & 4 != 0, shape };
                assert_eq!(v.index(), i);
                let m = v.module();
                let store = if v.direct { "direct" } else { "epilogue" };
                let dt = if v.out == DType::F16 { "f16" } else { "f32" };
                let input = if v.bf16 { "bf16_" } else { "" };
                assert_eq!(m.file, format!("gemm_khr_wide_{input}{name}_b1_{dt}_{store}.spv"));
                assert_eq!(m.workgroup_size[0], shape.threads());
                assert_eq!(m.bindings.len(), if v.direct { 4 } else { 7 });
            }
        }
        assert_eq!(WideShape::named("128"), Some(WideShape::W128));
        assert_eq!(WideShape::named("x"), None);
    }

    #[test]
    fn shapes_fit_48_kib_of_workgroup_memory() {
        let sizes: Vec<_> = SHAPES.iter().map(|&(_, s)| (s.block(), s.threads(), s.workgroup_bytes())).collect();
        assert_eq!(
            sizes,
            [((128, 128), 256, 36864), ((128, 128), 256, 20480), ((128, 64), 128, 27648), ((128, 64), 128, 15360)]
        );
    }

    #[test]
    fn the_block_is_the_khr_kernels() {
        let t = crate::ops::gemm::coop::TILE;
        assert_eq!((t.block_m(), t.block_n()), (BLOCK, BLOCK));
    }
}
