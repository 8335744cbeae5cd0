//! Opening a device through wgpu-hal with Vulkan device extensions that
//! wgpu 30 neither knows nor enables (VK_NV_cooperative_matrix2,
//! VK_KHR_shader_bfloat16): the device is created as `request_device`
//! would create it, with each extension's name added and its feature
//! struct chained into VkDeviceCreateInfo (`open_with_callback`), then
//! wrapped (`Adapter::create_device_from_hal`). Only SPIR-V kernels use
//! what the extensions add.

use ash::vk;
use std::ffi::{c_void, CStr};
use std::marker::PhantomData;

/// A Vulkan feature struct that can be chained into device creation.
///
/// # Safety
/// The type is `repr(C)` and starts with `s_type: vk::StructureType` and
/// `p_next: *mut c_void`, as every Vulkan feature struct does.
pub unsafe trait FeatureStruct {}

/// One extension to enable, with the features of it to turn on.
pub struct Extension<'a> {
    pub name: &'static CStr,
    features: *mut vk::BaseOutStructure<'static>,
    _features: PhantomData<&'a mut ()>,
}

impl<'a> Extension<'a> {
    /// `features` (its members set to what the device should enable)
    /// stays borrowed until the device is opened.
    pub fn new<F: FeatureStruct>(name: &'static CStr, features: &'a mut F) -> Extension<'a> {
        Extension { name, features: (features as *mut F).cast(), _features: PhantomData }
    }

    /// An extension with no feature struct to chain (one that only adds
    /// functions and structures, as VK_EXT_external_memory_host).
    pub fn plain(name: &'static CStr) -> Extension<'static> {
        Extension { name, features: std::ptr::null_mut(), _features: PhantomData }
    }
}

/// Open the device as `adapter.request_device(desc)` would, with
/// `extensions` added. The caller has checked that the adapter has each
/// extension and every feature it turns on.
pub fn open(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
    extensions: Vec<Extension<'_>>,
) -> Result<(wgpu::Device, wgpu::Queue), String> {
    // SAFETY: the guard is dropped before the device is wrapped.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }.ok_or("not a Vulkan adapter")?;
    let names: Vec<&CStr> = extensions.iter().map(|e| e.name).collect();
    let add: Box<wgpu::hal::vulkan::CreateDeviceCallback> = Box::new(move |args| {
        for e in &extensions {
            args.extensions.push(e.name);
            if e.features.is_null() {
                continue;
            }
            // SAFETY: the feature struct outlives the device creation below
            // (borrowed by `e`); each goes first in the chain and keeps the
            // rest behind it.
            unsafe {
                (*e.features).p_next = args.create_info.p_next as *mut vk::BaseOutStructure<'static>;
                args.create_info.p_next = e.features as *const c_void;
            }
        }
    });
    // SAFETY: the callback only adds extensions the adapter has and
    // features it reported; the features and limits are those `desc` asks
    // for, as `request_device` would pass them.
    let opened =
        unsafe { hal.open_with_callback(desc.required_features, &desc.required_limits, &desc.memory_hints, Some(add)) }
            .map_err(|e| format!("opening the device with {names:?}: {e}"))?;
    drop(hal);
    // SAFETY: `opened` was opened from this adapter with `desc`'s features and limits.
    unsafe { adapter.create_device_from_hal(opened, desc) }.map_err(|e| e.to_string())
}

/// True if `adapter` is a Vulkan one with the device extension `name`
/// and `check` holds for it (given the wgpu-hal adapter, to query what the
/// extension offers).
pub fn extension_with(
    adapter: &wgpu::Adapter,
    name: &CStr,
    check: impl FnOnce(&wgpu::hal::vulkan::Adapter) -> bool,
) -> bool {
    // SAFETY: the hal adapter is only read while the guard lives.
    let Some(hal) = (unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }) else {
        return false;
    };
    hal.physical_device_capabilities().supports_extension(name) && check(&hal)
}

/// Fill `features` (chained into VkPhysicalDeviceFeatures2) with what the
/// adapter supports. The caller has checked that the adapter has the
/// extension that defines the struct.
pub fn query_features<F: FeatureStruct>(hal: &wgpu::hal::vulkan::Adapter, features: &mut F) {
    let mut features2 =
        vk::PhysicalDeviceFeatures2 { p_next: (features as *mut F).cast::<c_void>(), ..Default::default() };
    // SAFETY: the driver knows the chained struct (its extension is
    // present); both live across the call.
    unsafe {
        hal.shared_instance().raw_instance().get_physical_device_features2(hal.raw_physical_device(), &mut features2)
    };
}

/// The instance-level function `name` of the adapter's Vulkan instance.
pub fn instance_fn(hal: &wgpu::hal::vulkan::Adapter, name: &CStr) -> vk::PFN_vkVoidFunction {
    let shared = hal.shared_instance();
    // SAFETY: a lookup by name on the adapter's live instance.
    unsafe { shared.entry().get_instance_proc_addr(shared.raw_instance().handle(), name.as_ptr()) }
}

/// A physical-device list query's entries (Vulkan's two-call idiom: the
/// count, then as many copies of `blank` filled in); None if it fails.
pub fn physical_device_list<T: Clone>(
    hal: &wgpu::hal::vulkan::Adapter,
    blank: T,
    get: unsafe extern "system" fn(vk::PhysicalDevice, *mut u32, *mut T) -> vk::Result,
) -> Option<Vec<T>> {
    let mut count = 0u32;
    // SAFETY: the count query, then as many structs as the driver said.
    if unsafe { get(hal.raw_physical_device(), &mut count, std::ptr::null_mut()) } != vk::Result::SUCCESS {
        return None;
    }
    let mut list = vec![blank; count as usize];
    let result = unsafe { get(hal.raw_physical_device(), &mut count, list.as_mut_ptr()) };
    if result != vk::Result::SUCCESS && result != vk::Result::INCOMPLETE {
        return None;
    }
    list.truncate(count as usize);
    Some(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::instance::{choose, instance, Preference};

    /// A device opened through wgpu-hal (what a device with extra
    /// extensions takes) works like one from `request_device`: here with no
    /// extension added, which runs on any Vulkan adapter.
    #[test]
    fn a_device_opened_through_hal_runs_work() {
        let adapters = instance().adapters().unwrap();
        let adapter = choose(&adapters, None, Preference::Default).unwrap();
        if adapter.get_info().backend != wgpu::Backend::Vulkan {
            return;
        }
        // The feature queries run on any Vulkan adapter, with or without the extensions.
        let block = crate::runtime::coopmat2::Block { m: 128, n: 128, k: 32, invocations: 128 };
        let _ = crate::runtime::coopmat2::supported(&adapter, &[block], &Default::default());
        let _ = crate::runtime::bf16_coop::supported(&adapter);
        // What Device::create asks for.
        let features = adapter.features() & crate::runtime::device::wanted_features();
        let experimental = if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: as in Device::create.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let desc = wgpu::DeviceDescriptor {
            label: None,
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: experimental,
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) = open(&adapter, &desc, Vec::new()).unwrap();
        assert_eq!(device.features(), features);
        let size = 256u64;
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        queue.write_buffer(&buffer, 0, &[7u8; 256]);
        queue.submit([]);
        buffer.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        let bytes = buffer.slice(..).get_mapped_range().unwrap().to_vec();
        assert!(bytes.iter().all(|&b| b == 7));
    }
}
