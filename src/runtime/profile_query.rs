//! What a Vulkan driver says about its compute units, for the device
//! profile (profile.rs): VK_NV_shader_sm_builtins gives NVIDIA's SM count
//! and warps per SM, VK_AMD_shader_core_properties AMD's shader engines,
//! arrays and compute units. Both are property queries: the extension
//! need only be offered, not enabled. Other adapters: None.

use super::hal_open;
use super::profile::Reported;
use ash::vk;

/// The adapter's compute units, where its driver reports them.
pub fn reported(adapter: &wgpu::Adapter) -> Option<Reported> {
    let mut found = None;
    hal_open::extension_with(adapter, c"VK_NV_shader_sm_builtins", |hal| {
        let mut sm = vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV::default();
        properties(hal, &mut sm);
        found = Some(Reported {
            compute_units: sm.shader_sm_count as usize,
            subgroups_per_unit: Some(sm.shader_warps_per_sm as usize),
        });
        true
    });
    if found.is_none() {
        hal_open::extension_with(adapter, c"VK_AMD_shader_core_properties", |hal| {
            let mut core = vk::PhysicalDeviceShaderCorePropertiesAMD::default();
            properties(hal, &mut core);
            let units =
                core.shader_engine_count * core.shader_arrays_per_engine_count * core.compute_units_per_shader_array;
            found = Some(Reported {
                compute_units: units as usize,
                subgroups_per_unit: Some((core.simd_per_compute_unit * core.wavefronts_per_simd) as usize),
            });
            true
        });
    }
    found.filter(|r| r.compute_units > 0)
}

/// Fill `ext` (chained into VkPhysicalDeviceProperties2) with the
/// adapter's properties. The caller has checked that the adapter offers
/// the extension that defines it.
fn properties<T: vk::ExtendsPhysicalDeviceProperties2 + ?Sized>(hal: &wgpu::hal::vulkan::Adapter, ext: &mut T) {
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(ext);
    // SAFETY: the driver knows the chained struct (its extension is
    // offered); both live across the call.
    unsafe {
        hal.shared_instance().raw_instance().get_physical_device_properties2(hal.raw_physical_device(), &mut props)
    };
}
