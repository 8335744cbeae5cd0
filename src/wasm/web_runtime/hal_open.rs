//! The browser's stand-in for runtime/hal_open.rs: WebGPU has no wgpu-hal
//! and no Vulkan extensions, so there is nothing to chain into device
//! creation. `device.rs` only calls `open` when an extension is supported,
//! which never happens here (see coopmat2.rs and bf16_coop.rs beside this).

use std::ffi::CStr;
use std::marker::PhantomData;

/// Marker for the feature structs of the native build; none exist here.
///
/// # Safety
/// Never implemented for any type on the web.
pub unsafe trait FeatureStruct {}

pub struct Extension<'a> {
    pub name: &'static CStr,
    _features: PhantomData<&'a mut ()>,
}

impl<'a> Extension<'a> {
    pub fn new<F>(name: &'static CStr, _features: &'a mut F) -> Extension<'a> {
        Extension { name, _features: PhantomData }
    }

    pub fn plain(name: &'static CStr) -> Extension<'static> {
        Extension { name, _features: PhantomData }
    }
}

pub fn open(
    _adapter: &wgpu::Adapter,
    _desc: &wgpu::DeviceDescriptor<'_>,
    _extensions: Vec<Extension<'_>>,
) -> Result<(wgpu::Device, wgpu::Queue), String> {
    Err("Vulkan device extensions are not available through WebGPU".into())
}
