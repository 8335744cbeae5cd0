//! Instances and adapter information.

use super::boundary::{self, out, run, to_handle, Handle};
use super::sized::{sized_struct, write_sized};
use super::status::{WgcStatus, WGC_ABI_VERSION};
use crate::error::Error;
use crate::runtime::instance::{instance, summarize, AdapterSummary};
use std::ffi::c_char;
use std::sync::Arc;

/// The entry point to the library: a snapshot of the adapters (GPUs and
/// software drivers) found when it was created.
pub struct WgcInstance {
    _private: [u8; 0],
}

pub struct InstanceInner {
    pub adapters: Vec<wgpu::Adapter>,
}

impl Handle for WgcInstance {
    type Rust = InstanceInner;
    const NAME: &'static str = "WgcInstance";
}

/// Graphics API an adapter runs on.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WgcBackend {
    #[default]
    Other = 0,
    Vulkan = 1,
    Metal = 2,
    Dx12 = 3,
    Gl = 4,
}

/// Kind of adapter.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WgcDeviceType {
    #[default]
    Other = 0,
    IntegratedGpu = 1,
    DiscreteGpu = 2,
    VirtualGpu = 3,
    /// A software driver (e.g. lavapipe).
    Cpu = 4,
}

/// The limits that matter for compute work.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WgcLimits {
    pub max_buffer_size: u64,
    pub max_storage_buffer_binding_size: u64,
    pub max_uniform_buffer_binding_size: u64,
    pub max_compute_workgroup_size_x: u32,
    pub max_compute_workgroup_size_y: u32,
    pub max_compute_workgroup_size_z: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_workgroup_storage_size: u32,
    pub max_storage_buffers_per_shader_stage: u32,
    pub min_storage_buffer_offset_alignment: u32,
    pub min_uniform_buffer_offset_alignment: u32,
    pub max_immediate_size: u32,
}

/// What an adapter is and can do. The caller sets `struct_size` to
/// `sizeof(WgcAdapterInfo)` before passing it; the library writes no more
/// than that many bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcAdapterInfo {
    pub struct_size: u32,
    pub backend: WgcBackend,
    pub device_type: WgcDeviceType,
    /// PCI vendor and device ids (0 where unknown).
    pub vendor_id: u32,
    pub device_id: u32,
    /// NUL-terminated, truncated to fit.
    pub name: [c_char; 256],
    pub driver: [c_char; 256],
    pub driver_info: [c_char; 256],
    pub limits: WgcLimits,
    /// 1 if f16 arithmetic in kernels (`enable f16;`) is available.
    pub has_f16: u32,
    /// 1 if subgroup operations are available; sizes range over min..max.
    pub has_subgroups: u32,
    pub subgroup_min_size: u32,
    pub subgroup_max_size: u32,
    /// 1 if events carry GPU timestamps.
    pub has_timestamps: u32,
    /// 1 if 16x16x16 f16 cooperative matrices (tensor cores) are available.
    pub has_cooperative_matrix: u32,
    /// 1 if the driver pipeline cache can be saved to disk.
    pub has_pipeline_cache: u32,
    pub has_immediates: u32,
}

sized_struct!(WgcAdapterInfo {
    backend,
    device_type,
    vendor_id,
    device_id,
    name,
    driver,
    driver_info,
    limits,
    has_f16,
    has_subgroups,
    subgroup_min_size,
    subgroup_max_size,
    has_timestamps,
    has_cooperative_matrix,
    has_pipeline_cache,
    has_immediates,
});

impl Default for WgcAdapterInfo {
    fn default() -> Self {
        WgcAdapterInfo {
            struct_size: std::mem::size_of::<Self>() as u32,
            backend: Default::default(),
            device_type: Default::default(),
            vendor_id: 0,
            device_id: 0,
            name: [0; 256],
            driver: [0; 256],
            driver_info: [0; 256],
            limits: Default::default(),
            has_f16: 0,
            has_subgroups: 0,
            subgroup_min_size: 0,
            subgroup_max_size: 0,
            has_timestamps: 0,
            has_cooperative_matrix: 0,
            has_pipeline_cache: 0,
            has_immediates: 0,
        }
    }
}

fn copy_str(dst: &mut [c_char; 256], s: &str) {
    let bytes = s.as_bytes();
    let n = bytes.len().min(255);
    for (d, b) in dst.iter_mut().zip(&bytes[..n]) {
        *d = *b as c_char;
    }
    dst[n] = 0;
}

pub(crate) fn adapter_info(s: &AdapterSummary, features: wgpu::Features, limits: &wgpu::Limits) -> WgcAdapterInfo {
    let mut info = WgcAdapterInfo {
        backend: match s.info.backend {
            wgpu::Backend::Vulkan => WgcBackend::Vulkan,
            wgpu::Backend::Metal => WgcBackend::Metal,
            wgpu::Backend::Dx12 => WgcBackend::Dx12,
            wgpu::Backend::Gl => WgcBackend::Gl,
            _ => WgcBackend::Other,
        },
        device_type: match s.info.device_type {
            wgpu::DeviceType::IntegratedGpu => WgcDeviceType::IntegratedGpu,
            wgpu::DeviceType::DiscreteGpu => WgcDeviceType::DiscreteGpu,
            wgpu::DeviceType::VirtualGpu => WgcDeviceType::VirtualGpu,
            wgpu::DeviceType::Cpu => WgcDeviceType::Cpu,
            wgpu::DeviceType::Other => WgcDeviceType::Other,
        },
        vendor_id: s.info.vendor,
        device_id: s.info.device,
        limits: WgcLimits {
            max_buffer_size: limits.max_buffer_size,
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_uniform_buffer_binding_size: limits.max_uniform_buffer_binding_size,
            max_compute_workgroup_size_x: limits.max_compute_workgroup_size_x,
            max_compute_workgroup_size_y: limits.max_compute_workgroup_size_y,
            max_compute_workgroup_size_z: limits.max_compute_workgroup_size_z,
            max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
            max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
            max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
            min_storage_buffer_offset_alignment: limits.min_storage_buffer_offset_alignment,
            min_uniform_buffer_offset_alignment: limits.min_uniform_buffer_offset_alignment,
            max_immediate_size: limits.max_immediate_size,
        },
        has_f16: features.contains(wgpu::Features::SHADER_F16) as u32,
        has_subgroups: features.contains(wgpu::Features::SUBGROUP) as u32,
        subgroup_min_size: s.info.subgroup_min_size,
        subgroup_max_size: s.info.subgroup_max_size,
        has_timestamps: (features.contains(wgpu::Features::TIMESTAMP_QUERY)
            && features.intersects(
                wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
            )) as u32,
        has_cooperative_matrix: (s.coop_f16 && features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX))
            as u32,
        has_pipeline_cache: features.contains(wgpu::Features::PIPELINE_CACHE) as u32,
        has_immediates: features.contains(wgpu::Features::IMMEDIATES) as u32,
        ..Default::default()
    };
    copy_str(&mut info.name, &s.info.name);
    copy_str(&mut info.driver, &s.info.driver);
    copy_str(&mut info.driver_info, &s.info.driver_info);
    info
}

/// Create an instance and enumerate the adapters of the backends that the
/// environment allows (`WGC_BACKEND` = vulkan, metal, dx12 or gl; unset: all).
///
/// `abi_version` must be `WGC_ABI_VERSION` from the header the caller was
/// compiled with; otherwise this fails with `WGC_ERROR_ABI_MISMATCH`.
/// On success `*out_instance` holds one reference; release it with
/// `wgc_instance_release`. Returns `WGC_ERROR_INVALID_ARGUMENT` for a bad
/// `WGC_BACKEND` (an unknown name, or a value that is not UTF-8).
/// Enumeration may take a moment; later calls are quick.
#[no_mangle]
pub unsafe extern "C" fn wgc_instance_create(abi_version: u32, out_instance: *mut *mut WgcInstance) -> WgcStatus {
    run(|| {
        let out = unsafe { out(out_instance, "out_instance") }?;
        if abi_version != WGC_ABI_VERSION {
            return Err(Error::AbiMismatch(format!(
                "the caller was compiled against ABI version {abi_version}; this library implements {WGC_ABI_VERSION}"
            )));
        }
        let adapters = instance().adapters()?;
        *out = to_handle::<WgcInstance>(Arc::new(InstanceInner { adapters }));
        Ok(())
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_instance_retain(instance: *mut WgcInstance) {
    unsafe { boundary::retain(instance) }
}

/// Drop a reference. NULL is ignored. Devices created from the instance stay valid.
#[no_mangle]
pub unsafe extern "C" fn wgc_instance_release(instance: *mut WgcInstance) {
    unsafe { boundary::release(instance) }
}

/// Number of adapters found (0 if none: then `wgc_device_create` fails with
/// `WGC_ERROR_NOT_FOUND`).
#[no_mangle]
pub unsafe extern "C" fn wgc_instance_adapter_count(instance: *const WgcInstance, out_count: *mut u32) -> WgcStatus {
    run(|| {
        let inst = unsafe { boundary::borrow(instance) }?;
        *unsafe { out(out_count, "out_count") }? = inst.adapters.len() as u32;
        Ok(())
    })
}

/// Describe adapter `index` (0-based, in the order used by
/// `WgcDeviceOptions.adapter_index`). Set `info->struct_size` first.
/// Returns `WGC_ERROR_OUT_OF_RANGE` for a bad index.
#[no_mangle]
pub unsafe extern "C" fn wgc_instance_adapter_info(
    instance: *const WgcInstance,
    index: u32,
    info: *mut WgcAdapterInfo,
) -> WgcStatus {
    run(|| {
        let inst = unsafe { boundary::borrow(instance) }?;
        let a = inst.adapters.get(index as usize).ok_or_else(|| {
            Error::OutOfRange(format!("adapter index {index}: there are {} adapter(s)", inst.adapters.len()))
        })?;
        let s = summarize(a);
        let value = adapter_info(&s, s.features, &s.limits);
        unsafe { write_sized(info, &value, "info") }
    })
}
