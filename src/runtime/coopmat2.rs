//! VK_NV_cooperative_matrix2 (workgroup-scope cooperative matrices of
//! flexible size, loaded and stored through tensor layouts): wgpu 30
//! neither knows nor enables it, and ash 0.38 (wgpu-hal's) has none of its
//! types, so its feature struct is declared here, support is queried
//! through wgpu-hal's Vulkan instance, and a device that wants it is opened
//! with the extension and the features added (runtime/hal_open.rs).
//! Only SPIR-V kernels (`ops::gemm::spirv`) use it.

use super::hal_open::{self, FeatureStruct};
use super::settings::{Settings, SpirvRoute};
use ash::vk;
use std::ffi::{c_void, CStr};

pub const EXTENSION: &CStr = c"VK_NV_cooperative_matrix2";
const STRUCTURE_TYPE_FEATURES: i32 = 1_000_593_000;
const STRUCTURE_TYPE_FLEXIBLE_DIMENSIONS: i32 = 1_000_593_001;

/// VkPhysicalDeviceCooperativeMatrix2FeaturesNV.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Features {
    s_type: vk::StructureType,
    p_next: *mut c_void,
    workgroup_scope: vk::Bool32,
    flexible_dimensions: vk::Bool32,
    reductions: vk::Bool32,
    conversions: vk::Bool32,
    per_element_operations: vk::Bool32,
    tensor_addressing: vk::Bool32,
    block_loads: vk::Bool32,
}

impl Features {
    fn none() -> Features {
        Features {
            s_type: vk::StructureType::from_raw(STRUCTURE_TYPE_FEATURES),
            p_next: std::ptr::null_mut(),
            workgroup_scope: vk::FALSE,
            flexible_dimensions: vk::FALSE,
            reductions: vk::FALSE,
            conversions: vk::FALSE,
            per_element_operations: vk::FALSE,
            tensor_addressing: vk::FALSE,
            block_loads: vk::FALSE,
        }
    }

    /// The features the kernels use, to enable.
    pub fn enabled() -> Features {
        Features {
            workgroup_scope: vk::TRUE,
            flexible_dimensions: vk::TRUE,
            tensor_addressing: vk::TRUE,
            conversions: vk::TRUE,
            ..Features::none()
        }
    }

    /// What the kernels use: workgroup scope, flexible sizes, tensor
    /// addressing (and conversions, for an f16 C).
    fn wanted(&self) -> bool {
        self.workgroup_scope == vk::TRUE
            && self.flexible_dimensions == vk::TRUE
            && self.tensor_addressing == vk::TRUE
            && self.conversions == vk::TRUE
    }
}

// SAFETY: repr(C), starting with sType and pNext.
unsafe impl FeatureStruct for Features {}

/// True if devices should enable the extension where the adapter has it:
/// unless the setting WGC_GEMM_SPIRV fixes a route that does not use it
/// (`0` or `1`; see `ops::gemm::spirv`).
pub fn requested(settings: &Settings) -> bool {
    !matches!(settings.gemm.spirv, Some(SpirvRoute::Wgsl | SpirvRoute::Khr))
}

/// VkCooperativeMatrixFlexibleDimensionsPropertiesNV: one shape class of
/// workgroup-scope matrices the driver takes.
#[repr(C)]
#[derive(Clone, Copy)]
struct FlexibleDimensions {
    s_type: vk::StructureType,
    p_next: *mut c_void,
    m_granularity: u32,
    n_granularity: u32,
    k_granularity: u32,
    a_type: vk::ComponentTypeKHR,
    b_type: vk::ComponentTypeKHR,
    c_type: vk::ComponentTypeKHR,
    result_type: vk::ComponentTypeKHR,
    saturating_accumulation: vk::Bool32,
    scope: vk::ScopeKHR,
    workgroup_invocations: u32,
}

type GetFlexibleDimensions =
    unsafe extern "system" fn(vk::PhysicalDevice, *mut u32, *mut FlexibleDimensions) -> vk::Result;

/// A workgroup block a kernel uses: a BM x BN f32 accumulator from f16
/// A (BM x BK) and B (BK x BN) at workgroup scope, on `invocations`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub invocations: u32,
}

/// The driver's flexible dimensions for f16 x f16 into f32 at workgroup
/// scope, as (M, N, K granularity, invocations); None where the query fails.
fn listed_shapes(hal: &wgpu::hal::vulkan::Adapter) -> Option<Vec<[u32; 4]>> {
    let name = c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV";
    let f = hal_open::instance_fn(hal, name)?;
    // SAFETY: the function of that name has this signature.
    let get: GetFlexibleDimensions = unsafe { std::mem::transmute(f) };
    let blank = FlexibleDimensions {
        s_type: vk::StructureType::from_raw(STRUCTURE_TYPE_FLEXIBLE_DIMENSIONS),
        p_next: std::ptr::null_mut(),
        m_granularity: 0,
        n_granularity: 0,
        k_granularity: 0,
        a_type: vk::ComponentTypeKHR::FLOAT16,
        b_type: vk::ComponentTypeKHR::FLOAT16,
        c_type: vk::ComponentTypeKHR::FLOAT16,
        result_type: vk::ComponentTypeKHR::FLOAT16,
        saturating_accumulation: vk::FALSE,
        scope: vk::ScopeKHR::WORKGROUP,
        workgroup_invocations: 0,
    };
    let list = hal_open::physical_device_list(hal, blank, get)?;
    let (f16, f32) = (vk::ComponentTypeKHR::FLOAT16, vk::ComponentTypeKHR::FLOAT32);
    let shapes = list
        .iter()
        .filter(|d| {
            d.scope == vk::ScopeKHR::WORKGROUP
                && (d.a_type, d.b_type, d.c_type, d.result_type) == (f16, f16, f32, f32)
                && d.saturating_accumulation == vk::FALSE
                && [d.m_granularity, d.n_granularity, d.k_granularity].iter().all(|&g| g > 0)
        })
        .map(|d| [d.m_granularity, d.n_granularity, d.k_granularity, d.workgroup_invocations])
        .collect();
    Some(shapes)
}

/// Bit i set where the driver lists `blocks[i]` among its flexible
/// dimensions (using any other shape is undefined); 0 where the adapter
/// is not a Vulkan one with the extension and every feature the kernels
/// use. The setting WGC_COOPMAT2_LOG prints the driver's list to stderr.
pub(crate) fn supported(adapter: &wgpu::Adapter, blocks: &[Block], settings: &Settings) -> u32 {
    let mut mask = 0;
    hal_open::extension_with(adapter, EXTENSION, |hal| {
        let mut features = Features::none();
        hal_open::query_features(hal, &mut features);
        if !features.wanted() {
            return false;
        }
        let Some(shapes) = listed_shapes(hal) else {
            return false;
        };
        if settings.gemm.coopmat2_log {
            eprintln!("wgcompute: VK_NV_cooperative_matrix2 f16 x f16 -> f32 workgroup shapes (M, N, K granularity, invocations): {shapes:?}");
        }
        for (i, b) in blocks.iter().enumerate() {
            let listed = shapes.iter().any(|&[mg, ng, kg, inv]| {
                inv == b.invocations && b.m.is_multiple_of(mg) && b.n.is_multiple_of(ng) && b.k.is_multiple_of(kg)
            });
            if listed {
                mask |= 1 << i;
            }
        }
        true
    });
    mask
}
