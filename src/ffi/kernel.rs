//! Kernels: the caller's own WGSL compute shaders.

use super::boundary::{self, borrow, c_str, out, run, to_handle, Handle};
use super::device::WgcDevice;
use super::sized::{read_sized, sized_struct};
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

sized_struct!(WgcKernelDesc { source, entry_point, skip_bounds_checks });

impl Default for WgcKernelDesc {
    fn default() -> Self {
        WgcKernelDesc { struct_size: 0, source: std::ptr::null(), entry_point: std::ptr::null(), skip_bounds_checks: 0 }
    }
}

/// Most private memory one invocation of a kernel may use, in bytes: the
/// `var<private>` globals its entry point uses, plus its function variables
/// and those of the deepest chain of functions it calls, plus arrays indexed
/// by value with a computed index (which compilers copy into a variable).
/// Drivers compile large private arrays very slowly or crash on them.
pub const WGC_MAX_PRIVATE_MEMORY_BYTES: u32 = 16384;

/// Most nesting a kernel's source may have: per statement, its operators,
/// `.`, `[` and `(` (each character counts), plus the enclosing `{` blocks
/// and `else` branches. Deeper sources (e.g. an expression chaining over
/// 16,000 `+`) fail with `WGC_ERROR_SHADER_COMPILATION`; split such
/// expressions into `let` statements.
pub const WGC_MAX_KERNEL_NESTING: u32 = 16384;

/// Most bytes a kernel's source may have (4 MiB). Larger sources fail
/// with `WGC_ERROR_LIMIT_EXCEEDED` before they are parsed.
pub const WGC_MAX_KERNEL_SOURCE_BYTES: u32 = 4_194_304;

/// Most tokens a kernel's source may have: identifiers, keywords and
/// numbers count one each, every other character that is not space one
/// more, comments nothing. The compiler's time grows faster than the source
/// past these bounds (100,000 `let` statements in one function took minutes),
/// so sources beyond `WGC_MAX_KERNEL_TOKENS`,
/// `WGC_MAX_KERNEL_DECLARATION_TOKENS` in one module-scope declaration (a
/// function with its body, a `const` with its value) or
/// `WGC_MAX_KERNEL_DECLARATIONS` module-scope declarations (functions,
/// constants, variables, structs, aliases) fail with
/// `WGC_ERROR_LIMIT_EXCEEDED` in milliseconds, naming the line. Within them,
/// creation time grows about linearly with the source (a few seconds on a
/// software driver for a source at the limits, four declarations of the
/// most tokens); real kernels are far below them.
pub const WGC_MAX_KERNEL_TOKENS: u32 = 131_072;

/// Most tokens one module-scope declaration may have (see
/// `WGC_MAX_KERNEL_TOKENS`); a chain of 15,000 additions fits. Split longer
/// functions into smaller ones.
pub const WGC_MAX_KERNEL_DECLARATION_TOKENS: u32 = 32_768;

/// Most module-scope declarations a kernel's source may have (see
/// `WGC_MAX_KERNEL_TOKENS`).
pub const WGC_MAX_KERNEL_DECLARATIONS: u32 = 4096;

/// Most expressions an entry point may become once drivers inline its calls:
/// its own and those of every function it reaches, each function counted
/// with the callees' inlined expressions again at every call. Drivers
/// inline every call, so a chain of functions each calling the one before
/// costs them time quadratic in its length (4,000 took minutes) and calling
/// twice grows exponentially; such kernels fail with
/// `WGC_ERROR_LIMIT_EXCEEDED` once parsed, before the driver sees them.
pub const WGC_MAX_KERNEL_INLINED_EXPRESSIONS: u32 = 1_048_576;

/// Compile a kernel. The same source and entry point on the same device
/// compile once: later calls return the cached pipeline. Returns
/// `WGC_ERROR_SHADER_COMPILATION` with the compiler's diagnostic (line and
/// column) in `wgc_last_error_message()` (also for a source nesting deeper
/// than `WGC_MAX_KERNEL_NESTING`, and for an `override` without a default:
/// kernels get no pipeline constants, so every `override` takes its default),
/// `WGC_ERROR_NOT_FOUND` for a missing entry point,
/// `WGC_ERROR_LIMIT_EXCEEDED` for a workgroup size or workgroup memory
/// beyond the adapter's limits (both as the overrides make them) or private
/// memory beyond `WGC_MAX_PRIVATE_MEMORY_BYTES`, calls that inline past
/// `WGC_MAX_KERNEL_INLINED_EXPRESSIONS`, or a source past
/// `WGC_MAX_KERNEL_SOURCE_BYTES`, `WGC_MAX_KERNEL_TOKENS`,
/// `WGC_MAX_KERNEL_DECLARATION_TOKENS` or `WGC_MAX_KERNEL_DECLARATIONS`
/// (refused before it is parsed), `WGC_ERROR_UNSUPPORTED` for
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

/// Drop a reference. NULL is ignored. When the last reference to a
/// kernel goes, the driver is let free its compiled pipeline (after any
/// recorded work that uses it has run), so creating and releasing kernels
/// in a loop keeps memory bounded.
#[no_mangle]
pub unsafe extern "C" fn wgc_kernel_release(kernel: *mut WgcKernel) {
    // Keep the device past the handle: its queue lets the driver free what
    // the kernel held once the kernel is gone.
    let device = unsafe { borrow(kernel) }.ok().map(|k| k.device.clone());
    unsafe { boundary::release(kernel) }
    if let Some(dev) = device {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dev.kernels.user.reclaim_released(&dev)));
    }
}

/// The entry point's `@workgroup_size` (x, y, z) into `out_size[3]`, with
/// `override` values applied.
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

#[cfg(test)]
mod tests {
    /// The limits the header states are the ones enforced.
    #[test]
    fn header_limits_match_the_runtime() {
        assert_eq!(super::WGC_MAX_PRIVATE_MEMORY_BYTES as u64, crate::runtime::private_memory::MAX_PRIVATE_BYTES);
        assert_eq!(super::WGC_MAX_KERNEL_NESTING as usize, crate::runtime::wgsl_nesting::MAX_NESTING);
        use crate::runtime::wgsl_size;
        assert_eq!(super::WGC_MAX_KERNEL_SOURCE_BYTES as usize, wgsl_size::MAX_SOURCE_BYTES);
        assert_eq!(super::WGC_MAX_KERNEL_TOKENS as usize, wgsl_size::MAX_TOKENS);
        assert_eq!(super::WGC_MAX_KERNEL_DECLARATION_TOKENS as usize, wgsl_size::MAX_DECLARATION_TOKENS);
        assert_eq!(super::WGC_MAX_KERNEL_DECLARATIONS as usize, wgsl_size::MAX_DECLARATIONS);
        assert_eq!(
            super::WGC_MAX_KERNEL_INLINED_EXPRESSIONS as u64,
            crate::runtime::inline_size::MAX_INLINED_EXPRESSIONS
        );
    }
}
