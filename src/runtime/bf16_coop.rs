//! bf16 cooperative matrices (VK_KHR_shader_bfloat16 with
//! VK_KHR_cooperative_matrix): tensor cores for bf16 GEMMs. wgpu 30
//! neither knows nor enables the extension and ash 0.38 (wgpu-hal's) has
//! none of its types, so its feature struct is declared here, support is
//! queried through wgpu-hal's Vulkan instance, and a device on an adapter
//! that has it is opened with it (runtime/hal_open.rs). Only the SPIR-V
//! GEMM kernels (`ops::gemm::spirv`, `ops::gemm::skinny`) use it.

use super::hal_open::{self, FeatureStruct};
use ash::vk;
use std::ffi::{c_void, CStr};

pub const EXTENSION: &CStr = c"VK_KHR_shader_bfloat16";
const STRUCTURE_TYPE_FEATURES: i32 = 1_000_141_000;
/// VK_COMPONENT_TYPE_BFLOAT16_KHR.
const COMPONENT_BFLOAT16: i32 = 1_000_141_000;

/// VkPhysicalDeviceShaderBfloat16FeaturesKHR.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Features {
    s_type: vk::StructureType,
    p_next: *mut c_void,
    bfloat16_type: vk::Bool32,
    bfloat16_dot_product: vk::Bool32,
    bfloat16_cooperative_matrix: vk::Bool32,
}

// SAFETY: repr(C), starting with sType and pNext.
unsafe impl FeatureStruct for Features {}

impl Features {
    fn none() -> Features {
        Features {
            s_type: vk::StructureType::from_raw(STRUCTURE_TYPE_FEATURES),
            p_next: std::ptr::null_mut(),
            bfloat16_type: vk::FALSE,
            bfloat16_dot_product: vk::FALSE,
            bfloat16_cooperative_matrix: vk::FALSE,
        }
    }

    /// What the kernels use: the type (their fragments declare it) and
    /// cooperative matrices of it.
    pub fn enabled() -> Features {
        Features { bfloat16_type: vk::TRUE, bfloat16_cooperative_matrix: vk::TRUE, ..Features::none() }
    }
}

/// True if the driver lists the kernels' fragments: 16 x 16 x 16 at
/// subgroup scope, bf16 A and B, f32 C and result.
fn kernel_shape_listed(hal: &wgpu::hal::vulkan::Adapter) -> bool {
    let Some(f) = hal_open::instance_fn(hal, c"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR") else {
        return false;
    };
    // SAFETY: the function of that name has this signature.
    let get: vk::PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR = unsafe { std::mem::transmute(f) };
    let blank = vk::CooperativeMatrixPropertiesKHR::default();
    let Some(list) = hal_open::physical_device_list(hal, blank, get) else {
        return false;
    };
    let bf16 = vk::ComponentTypeKHR::from_raw(COMPONENT_BFLOAT16);
    let f32 = vk::ComponentTypeKHR::FLOAT32;
    list.iter().any(|p| {
        (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
            && (p.a_type, p.b_type, p.c_type, p.result_type) == (bf16, bf16, f32, f32)
            && p.saturating_accumulation == vk::FALSE
            && p.scope == vk::ScopeKHR::SUBGROUP
    })
}

/// True if devices on this adapter should enable the extension: a Vulkan
/// adapter with it, both features and the kernels' fragment shape listed.
/// (The device also asks the setting WGC_GEMM_BF16_COOP: `0` opens it
/// without the extension, bf16 GEMMs then converting in the tiled kernel.)
pub fn supported(adapter: &wgpu::Adapter) -> bool {
    hal_open::extension_with(adapter, EXTENSION, |hal| {
        let mut features = Features::none();
        hal_open::query_features(hal, &mut features);
        let both = features.bfloat16_type == vk::TRUE && features.bfloat16_cooperative_matrix == vk::TRUE;
        both && kernel_shape_listed(hal)
    })
}
