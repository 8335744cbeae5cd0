//! What a device offers the GEMM routes, as one plain value: the planner
//! reads these fields only, so routing can be tested with made-up devices
//! (see `DeviceProfile::h100_like` and `lavapipe_like`).

use crate::runtime::device::Device;
use crate::runtime::spirv_kernel;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceProfile {
    /// Cooperative matrices with 16x16x16 f16 inputs and f16 shaders.
    pub coop_f16: bool,
    /// The device was opened with bf16 cooperative matrices (runtime/bf16_coop.rs).
    pub coop_bf16: bool,
    /// Subgroups are exactly 32 wide.
    pub subgroup_32: bool,
    /// SPIR-V passthrough on Vulkan.
    pub spirv: bool,
    /// Bit i: block i of `coopmat2::all_blocks` is listed (VK_NV_cooperative_matrix2).
    pub coopmat2_blocks: u32,
    pub max_workgroup_storage: u32,
    pub max_invocations: u32,
    pub max_workgroups_per_dim: usize,
    pub max_binding: usize,
    pub max_buffer: usize,
    /// Compute units the fill targets are stated per.
    pub sms: usize,
}

impl DeviceProfile {
    pub fn of(dev: &Device) -> DeviceProfile {
        let info = &dev.adapter.info;
        let features = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16;
        DeviceProfile {
            coop_f16: dev.adapter.coop_f16 && dev.features.contains(features),
            coop_bf16: dev.coop_bf16,
            subgroup_32: info.subgroup_min_size == 32 && info.subgroup_max_size == 32,
            spirv: spirv_kernel::supported(dev),
            coopmat2_blocks: dev.coopmat2_blocks,
            max_workgroup_storage: dev.limits.max_compute_workgroup_storage_size,
            max_invocations: dev.limits.max_compute_invocations_per_workgroup,
            max_workgroups_per_dim: dev.limits.max_compute_workgroups_per_dimension as usize,
            max_binding: dev.limits.max_storage_buffer_binding_size as usize,
            max_buffer: dev.limits.max_buffer_size as usize,
            sms: dev.profile().compute_units,
        }
    }

    /// An H100 as the Vulkan driver presents it: f16 and bf16 cooperative
    /// matrices, 32-wide subgroups, SPIR-V passthrough, every
    /// VK_NV_cooperative_matrix2 block listed.
    pub fn h100_like() -> DeviceProfile {
        DeviceProfile {
            coop_f16: true,
            coop_bf16: true,
            subgroup_32: true,
            spirv: true,
            coopmat2_blocks: 0b1111,
            max_workgroup_storage: 48 * 1024,
            max_invocations: 1024,
            max_workgroups_per_dim: 65535,
            max_binding: u32::MAX as usize - 3,
            max_buffer: (1u64 << 40).min(usize::MAX as u64) as usize,
            sms: 132,
        }
    }

    /// The same without VK_NV_cooperative_matrix2 (the extension not
    /// requested, or a driver without it).
    pub fn h100_khr_only() -> DeviceProfile {
        DeviceProfile { coopmat2_blocks: 0, ..DeviceProfile::h100_like() }
    }

    /// A software Vulkan driver: no cooperative matrices, subgroups of 4 to 64,
    /// no passthrough.
    pub fn lavapipe_like() -> DeviceProfile {
        DeviceProfile {
            coop_f16: false,
            coop_bf16: false,
            subgroup_32: false,
            spirv: false,
            coopmat2_blocks: 0,
            max_workgroup_storage: 32 * 1024,
            max_invocations: 1024,
            max_workgroups_per_dim: 65535,
            max_binding: 1 << 30,
            max_buffer: 1 << 31,
            sms: 132,
        }
    }
}
