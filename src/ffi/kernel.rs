//! Kernels: the caller's own WGSL compute shaders.

use super::boundary::{self, borrow, c_str, out, read_sized, run, to_handle, Handle};
use super::device::WgcDevice;
use super::status::WgcStatus;
use crate::runtime::kernel::KernelRef;
use std::ffi::c_char;
use std::sync::Arc;

/// A compiled compute pipeline for one entry point of a WGSL module.
/// Immutable; safe to use from many threads.
pub struct WgcKernel {
    _private: [u8; 0],
}

impl Handle for WgcKernel {
    type Rust = KernelRef;
    const NAME: &'static str = "WgcKernel";
}

/// Describes a kernel. Zero-initialise and set `struct_size` to
/// `sizeof(WgcKernelDesc)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcKernelDesc {
    pub struct_size: u32,
    /// NUL-terminated WGSL source. Bindings must be in `@group(0)`; storage
    /// buffers are `var<storage, read>` or `var<storage, read_write>`; at most
    /// one `var<uniform>`, which `WgcLaunch.params` can fill.
    pub source: *const c_char,
    /// NUL-terminated name of a `@compute` function in `source`.
    pub entry_point: *const c_char,
    /// 1: compile without the runtime bounds checks that otherwise clamp
    /// every array index, and without zero-initialising workgroup memory.
    /// Faster, but an out-of-bounds access is then undefined behaviour on the
    /// GPU: only for kernels whose indexing the caller has proven in bounds.
    pub skip_bounds_checks: u32,
}

impl Default for WgcKernelDesc {
    fn default() -> Self {
        WgcKernelDesc { struct_size: 0, source: std::ptr::null(), entry_point: std::ptr::null(), skip_bounds_checks: 0 }
    }
}

/// Compile a kernel. The same source and entry point on the same device
/// compile once: later calls return the cached pipeline. Returns
/// `WGC_ERROR_SHADER_COMPILATION` with the compiler's diagnostic (line and
/// column) in `wgc_last_error_message()`, `WGC_ERROR_NOT_FOUND` for a
/// missing entry point, `WGC_ERROR_LIMIT_EXCEEDED` for a workgroup size or
/// workgroup memory beyond the adapter's limits, `WGC_ERROR_UNSUPPORTED` for
/// textures or bind groups other than 0. Blocks while the driver compiles.
#[no_mangle]
pub unsafe extern "C" fn wgc_kernel_create(
    device: *const WgcDevice,
    desc: *const WgcKernelDesc,
    out_kernel: *mut *mut WgcKernel,
) -> WgcStatus {
    run(|| {
        let dev = unsafe { boundary::arc(device) }?;
        let out = unsafe { out(out_kernel, "out_kernel") }?;
        // The kernel cache would otherwise hand out pipelines of a destroyed device.
        dev.check_alive()?;
        let desc = unsafe { read_sized(desc, "desc") }?;
        let source = unsafe { c_str(desc.source, "desc->source") }?;
        let entry = unsafe { c_str(desc.entry_point, "desc->entry_point") }?;
        let kernel = dev.kernels.get(&dev, source, entry, desc.skip_bounds_checks != 0)?;
        *out = to_handle::<WgcKernel>(Arc::new(KernelRef { device: dev, kernel }));
        Ok(())
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_kernel_retain(kernel: *mut WgcKernel) {
    unsafe { boundary::retain(kernel) }
}

/// Drop a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_kernel_release(kernel: *mut WgcKernel) {
    unsafe { boundary::release(kernel) }
}

/// The entry point's `@workgroup_size` (x, y, z) into `out_size[3]`.
#[no_mangle]
pub unsafe extern "C" fn wgc_kernel_workgroup_size(kernel: *const WgcKernel, out_size: *mut u32) -> WgcStatus {
    run(|| {
        let k = unsafe { borrow(kernel) }?;
        let out = unsafe { boundary::bytes_mut(out_size as *mut u8, 12, "out_size") }?;
        out.copy_from_slice(bytemuck::cast_slice(&k.kernel.workgroup_size));
        Ok(())
    })
}

/// Number of bindings the entry point uses (storage and uniform).
#[no_mangle]
pub unsafe extern "C" fn wgc_kernel_binding_count(kernel: *const WgcKernel, out_count: *mut u32) -> WgcStatus {
    run(|| {
        let k = unsafe { borrow(kernel) }?;
        *unsafe { out(out_count, "out_count") }? = k.kernel.bindings.len() as u32;
        Ok(())
    })
}
