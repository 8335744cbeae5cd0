//! The browser's stand-in for runtime/host_import.rs: WebGPU cannot import
//! host memory, so no device has `host_import` and copies between devices
//! take the staged route.

use crate::bail;
use crate::error::Result;
use crate::runtime::device::Device;
use std::ffi::CStr;
use std::sync::Arc;

pub const EXTENSION: &CStr = c"VK_EXT_external_memory_host";

pub fn supported(_adapter: &wgpu::Adapter) -> bool {
    false
}

pub struct HostBlock;

impl HostBlock {
    pub fn used_by(&self, _dev: &Arc<Device>, _index: wgpu::SubmissionIndex) {}
}

pub fn take_block(_size: u64) -> Result<Arc<HostBlock>> {
    bail!(Unsupported, "host memory cannot be imported through WebGPU")
}

pub fn give_back(_block: Arc<HostBlock>) {}

pub struct HostImport;

impl HostImport {
    pub fn new(_device: &wgpu::Device) -> Option<HostImport> {
        None
    }

    pub fn usable(&self) -> bool {
        false
    }

    pub fn buffer(&self, _dev: &Device, _block: &Arc<HostBlock>) -> Option<wgpu::Buffer> {
        None
    }
}
