//! VK_NV_cooperative_matrix2 (workgroup-scope cooperative matrices of
//! flexible size, loaded and stored through tensor layouts): wgpu 30
//! neither knows nor enables it, and ash 0.38 (wgpu-hal's) has none of its
//! types, so its feature struct is declared here, support is queried
//! through wgpu-hal's Vulkan instance, and a device that wants it is opened
//! through wgpu-hal with the extension and the features added
//! (`open_with_callback`, then `Adapter::create_device_from_hal`).
//! Only SPIR-V kernels (`ops::gemm_spirv`) use it.

use ash::vk;
use std::ffi::{c_void, CStr};

pub const EXTENSION: &CStr = c"VK_NV_cooperative_matrix2";
const STRUCTURE_TYPE_FEATURES: i32 = 1_000_593_000;
const STRUCTURE_TYPE_FLEXIBLE_DIMENSIONS: i32 = 1_000_593_001;

/// VkPhysicalDeviceCooperativeMatrix2FeaturesNV.
#[repr(C)]
#[derive(Clone, Copy)]
struct Features {
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

    /// What the kernels use: workgroup scope, flexible sizes, tensor
    /// addressing (and conversions, for an f16 C).
    fn wanted(&self) -> bool {
        self.workgroup_scope == vk::TRUE
            && self.flexible_dimensions == vk::TRUE
            && self.tensor_addressing == vk::TRUE
            && self.conversions == vk::TRUE
    }
}

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
    let shared = hal.shared_instance();
    let name = c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV";
    // SAFETY: a lookup by name on the adapter's live instance.
    let Some(f) = (unsafe { shared.entry().get_instance_proc_addr(shared.raw_instance().handle(), name.as_ptr()) })
    else {
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
    let mut count = 0u32;
    // SAFETY: the count query, then as many structs as the driver said.
    if unsafe { get(hal.raw_physical_device(), &mut count, std::ptr::null_mut()) } != vk::Result::SUCCESS {
        return false;
    }
    let mut list = vec![blank; count as usize];
    let result = unsafe { get(hal.raw_physical_device(), &mut count, list.as_mut_ptr()) };
    if result != vk::Result::SUCCESS && result != vk::Result::INCOMPLETE {
        return false;
    }
    list.truncate(count as usize);
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
    // SAFETY: the hal adapter is only read while the guard lives.
    let Some(hal) = (unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }) else {
        return false;
    };
    if !hal.physical_device_capabilities().supports_extension(EXTENSION) {
        return false;
    }
    let mut features = Features::none();
    let mut features2 =
        vk::PhysicalDeviceFeatures2 { p_next: (&mut features as *mut Features).cast(), ..Default::default() };
    // SAFETY: the extension is present, so the driver knows the chained
    // struct; both live across the call.
    unsafe {
        hal.shared_instance().raw_instance().get_physical_device_features2(hal.raw_physical_device(), &mut features2)
    };
    features.wanted() && kernel_shape_listed(&hal)
}

/// Open the device as `adapter.request_device(desc)` would, with
/// VK_NV_cooperative_matrix2 and the features the kernels use enabled.
/// The caller has checked `supported(adapter)`.
pub fn open(adapter: &wgpu::Adapter, desc: &wgpu::DeviceDescriptor<'_>) -> Result<(wgpu::Device, wgpu::Queue), String> {
    open_through_hal(adapter, desc, true)
}

/// The device opened through wgpu-hal, with the extension added when
/// `add_extension` (without it, as `request_device` opens it: the tests
/// check that path on adapters without the extension).
fn open_through_hal(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
    add_extension: bool,
) -> Result<(wgpu::Device, wgpu::Queue), String> {
    // SAFETY: the guard is dropped before the device is wrapped.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }.ok_or("not a Vulkan adapter")?;
    let mut features = Features::none();
    features.workgroup_scope = vk::TRUE;
    features.flexible_dimensions = vk::TRUE;
    features.tensor_addressing = vk::TRUE;
    features.conversions = vk::TRUE;
    let features_ptr: *mut Features = &mut features;
    let add: Box<wgpu::hal::vulkan::CreateDeviceCallback> = Box::new(move |args| {
        if !add_extension {
            return;
        }
        args.extensions.push(EXTENSION);
        // SAFETY: `features` outlives the device creation below; it goes
        // first in the chain and keeps the rest behind it.
        unsafe {
            (*features_ptr).p_next = args.create_info.p_next as *mut c_void;
            args.create_info.p_next = features_ptr as *const c_void;
        }
    });
    // SAFETY: the callback only adds an extension the adapter has and
    // features it reported; the features and limits are those `desc` asks
    // for, as `request_device` would pass them.
    let opened =
        unsafe { hal.open_with_callback(desc.required_features, &desc.required_limits, &desc.memory_hints, Some(add)) }
            .map_err(|e| format!("opening the device with {EXTENSION:?}: {e}"))?;
    drop(hal);
    // SAFETY: `opened` was opened from this adapter with `desc`'s features and limits.
    unsafe { adapter.create_device_from_hal(opened, desc) }.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::instance::{choose, instance, Preference};

    /// The device opened through wgpu-hal (what a device with the extension
    /// takes) works like one from `request_device`: here without the
    /// extension, which the test adapters lack.
    #[test]
    fn a_device_opened_through_hal_runs_work() {
        let adapters = instance().adapters().unwrap();
        let adapter = choose(&adapters, None, Preference::Default).unwrap();
        if adapter.get_info().backend != wgpu::Backend::Vulkan {
            return;
        }
        // The feature query runs on any Vulkan adapter, with or without the extension.
        let _ = supported(&adapter);
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
        let (device, queue) = open_through_hal(&adapter, &desc, false).unwrap();
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
