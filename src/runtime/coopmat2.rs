//! VK_NV_cooperative_matrix2 (workgroup-scope cooperative matrices of
//! flexible size, loaded and stored through tensor layouts): wgpu 30
//! neither knows nor enables it, and ash 0.38 (wgpu-hal's) has none of its
//! types, so its feature struct is declared here, support is queried
//! through wgpu-hal's Vulkan instance, and a device that wants it is opened
//! with the extension and the features added (runtime/hal_open.rs).
//! Only SPIR-V kernels (`ops::gemm_spirv`) use it.

use super::hal_open::{self, FeatureStruct};
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
/// the environment variable WGC_GEMM_SPIRV, read once, set to `2` (the
/// GEMM route that uses it; see `ops::gemm_spirv`). Devices are otherwise
/// opened as wgpu opens them.
pub fn requested() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("WGC_GEMM_SPIRV").is_some_and(|v| v == "2"))
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

/// The kernels' matrices: a 128 x 128 f32 accumulator, f16 A (128 x 32)
/// and B (32 x 128), at workgroup scope with 128 invocations.
const KERNEL_M: u32 = 128;
const KERNEL_N: u32 = 128;
const KERNEL_K: u32 = 32;
const KERNEL_INVOCATIONS: u32 = 128;

/// True if the driver lists the kernels' shapes among its flexible
/// dimensions (using any other is undefined).
fn kernel_shape_listed(hal: &wgpu::hal::vulkan::Adapter) -> bool {
    let name = c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV";
    let Some(f) = hal_open::instance_fn(hal, name) else {
        return false;
    };
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
    let Some(list) = hal_open::physical_device_list(hal, blank, get) else {
        return false;
    };
    list.iter().any(|d| {
        let f16 = vk::ComponentTypeKHR::FLOAT16;
        let f32 = vk::ComponentTypeKHR::FLOAT32;
        d.scope == vk::ScopeKHR::WORKGROUP
            && d.workgroup_invocations == KERNEL_INVOCATIONS
            && (d.a_type, d.b_type, d.c_type, d.result_type) == (f16, f16, f32, f32)
            && d.saturating_accumulation == vk::FALSE
            && [d.m_granularity, d.n_granularity, d.k_granularity].iter().all(|&g| g > 0)
            && KERNEL_M.is_multiple_of(d.m_granularity)
            && KERNEL_N.is_multiple_of(d.n_granularity)
            && KERNEL_K.is_multiple_of(d.k_granularity)
    })
}

/// True if the adapter is a Vulkan one with the extension, every feature
/// the kernels use, and their matrix shapes among its flexible dimensions.
pub fn supported(adapter: &wgpu::Adapter) -> bool {
    hal_open::extension_with(adapter, EXTENSION, |hal| {
        let mut features = Features::none();
        hal_open::query_features(hal, &mut features);
        features.wanted() && kernel_shape_listed(hal)
    })
}
