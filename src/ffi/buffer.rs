//! Buffers: create, size, host writes and reads.

use super::boundary::{self, borrow, bytes, bytes_mut, out, run, to_handle, Handle};
use super::device::WgcDevice;
use super::status::WgcStatus;
use crate::error::Error;
use crate::runtime::buffer::{Buffer, Usage};

/// A region of GPU memory. Safe to use from many threads; the library orders
/// host reads and writes after all work recorded before them (see
/// `wgc_buffer_write`).
pub struct WgcBuffer {
    _private: [u8; 0],
}

impl Handle for WgcBuffer {
    type Rust = Buffer;
    const NAME: &'static str = "WgcBuffer";
}

/// Bound as `var<storage>` in kernels and used by operators.
pub const WGC_BUFFER_USAGE_STORAGE: u32 = 1;
/// Bound as `var<uniform>` in kernels.
pub const WGC_BUFFER_USAGE_UNIFORM: u32 = 2;
/// Holds workgroup counts for `wgc_stream_launch` with an indirect buffer.
pub const WGC_BUFFER_USAGE_INDIRECT: u32 = 4;
/// All of the above.
pub const WGC_BUFFER_USAGE_ALL: u32 = 7;

/// Create a buffer of `size` bytes whose contents read as zero. `usage` is a
/// combination of `WGC_BUFFER_USAGE_*` (0 means STORAGE); copies, reads and
/// writes are always allowed. Freed buffers are pooled and reused.
///
/// Never submits GPU work and never blocks on the GPU: a new driver
/// allocation starts zeroed; a reused one is cleared on the GPU by the
/// device's next queue submission (a stream's flush or synchronize, a host
/// read or write, `wgc_device_synchronize`), before any work recorded or
/// written after this call, on any stream, can touch it. Where every byte
/// will be overwritten anyway (an operator's output), use
/// `wgc_buffer_create_uninit`, which skips the clear.
///
/// Returns `WGC_ERROR_INVALID_ARGUMENT` for size 0 or unknown usage bits,
/// `WGC_ERROR_TOO_LARGE` above the adapter's `max_buffer_size`,
/// `WGC_ERROR_OUT_OF_MEMORY` when the GPU has no room,
/// `WGC_ERROR_DEVICE_LOST` on a lost or destroyed device.
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_create(
    device: *const WgcDevice,
    size: u64,
    usage: u32,
    out_buffer: *mut *mut WgcBuffer,
) -> WgcStatus {
    run(|| {
        let dev = unsafe { boundary::arc(device) }?;
        let out = unsafe { out(out_buffer, "out_buffer") }?;
        *out = to_handle::<WgcBuffer>(Buffer::create(&dev, size, usage_of(usage)?)?);
        Ok(())
    })
}

/// Create a buffer of `size` bytes whose contents are unspecified: the
/// stale bytes of a pooled allocation, or zeros. For buffers that will be
/// written completely before they are read (operators' outputs, the target
/// of `wgc_buffer_write`), where `wgc_buffer_create`'s clear is wasted work.
/// The contents are never another device's or process's data, and they are
/// stable: reading twice gives the same bytes until something writes them.
///
/// Taking an allocation from the pool costs no GPU work, no queue
/// submission and no driver call (a few microseconds at most); only a pool
/// miss asks the driver for memory. The memory is reused only once all
/// work that used it before has finished on the GPU, so nothing recorded
/// earlier can write into the new buffer.
///
/// Arguments, usage and statuses as `wgc_buffer_create`. Thread-safe; does
/// not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_create_uninit(
    device: *const WgcDevice,
    size: u64,
    usage: u32,
    out_buffer: *mut *mut WgcBuffer,
) -> WgcStatus {
    run(|| {
        let dev = unsafe { boundary::arc(device) }?;
        let out = unsafe { out(out_buffer, "out_buffer") }?;
        *out = to_handle::<WgcBuffer>(Buffer::create_uninit(&dev, size, usage_of(usage)?)?.buffer);
        Ok(())
    })
}

/// The `Usage` of `WGC_BUFFER_USAGE_*` bits (0 means STORAGE).
fn usage_of(usage: u32) -> Result<Usage, Error> {
    if usage & !WGC_BUFFER_USAGE_ALL != 0 {
        return Err(Error::InvalidArgument(format!("unknown buffer usage bits {usage:#x}")));
    }
    let usage = if usage == 0 { WGC_BUFFER_USAGE_STORAGE } else { usage };
    Ok(Usage {
        storage: usage & WGC_BUFFER_USAGE_STORAGE != 0,
        uniform: usage & WGC_BUFFER_USAGE_UNIFORM != 0,
        indirect: usage & WGC_BUFFER_USAGE_INDIRECT != 0,
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_retain(buffer: *mut WgcBuffer) {
    unsafe { boundary::retain(buffer) }
}

/// Drop a reference. NULL is ignored. Work already recorded that uses the
/// buffer still completes correctly: its memory returns to the pool (and
/// can be handed out again) only once that work has run on the GPU.
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_release(buffer: *mut WgcBuffer) {
    unsafe { boundary::release(buffer) }
}

/// The size in bytes the buffer was created with.
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_size(buffer: *const WgcBuffer, out_size: *mut u64) -> WgcStatus {
    run(|| {
        let b = unsafe { borrow(buffer) }?;
        *unsafe { out(out_size, "out_size") }? = b.size;
        Ok(())
    })
}

/// Copy `size` bytes from host memory into the buffer at `offset`. The write
/// is ordered after all work recorded so far on every stream of the device
/// (those streams are flushed) and before any work recorded after it. It
/// returns once `data` has been copied; it does not wait for the GPU.
/// `offset` and `size` must be multiples of 4 (`WGC_ERROR_ALIGNMENT`);
/// the range must lie inside the buffer (`WGC_ERROR_OUT_OF_RANGE`).
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_write(
    buffer: *const WgcBuffer,
    offset: u64,
    data: *const std::ffi::c_void,
    size: u64,
) -> WgcStatus {
    run(|| {
        let b = unsafe { borrow(buffer) }?;
        let data = unsafe { bytes(data as *const u8, size, "data") }?;
        b.write(offset, data)
    })
}

/// Copy `size` bytes at `offset` of the buffer into host memory. Blocks
/// until all work recorded before the call, on every stream of the device,
/// has finished, at most `WgcDeviceOptions.gpu_timeout_ms`: then
/// `WGC_ERROR_TIMEOUT` and `data` is left untouched. Any offset and size
/// inside the buffer are allowed (`WGC_ERROR_OUT_OF_RANGE` otherwise).
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_read(
    buffer: *const WgcBuffer,
    offset: u64,
    data: *mut std::ffi::c_void,
    size: u64,
) -> WgcStatus {
    run(|| {
        let b = unsafe { borrow(buffer) }?;
        let data = unsafe { bytes_mut(data as *mut u8, size, "data") }?;
        b.read(offset, data)
    })
}
