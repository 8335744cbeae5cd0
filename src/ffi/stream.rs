//! Streams: record launches, copies, fills and events; flush; synchronize.

use super::boundary::{self, arc, borrow, out, run, to_handle, Handle};
use super::buffer::WgcBuffer;
use super::device::WgcDevice;
use super::kernel::WgcKernel;
use super::profile::profile_op;
use super::sized::{read_sized, sized_struct};
use super::status::WgcStatus;
use crate::error::Error;
use crate::runtime::profiler::OpCall;
use crate::runtime::stream::{Bind, Groups, StreamShared};

/// An ordered recording of GPU work, submitted in batches. Work recorded on
/// one stream runs in order. A stream is meant to be used by one thread at a
/// time; calls from several threads at once are serialized, not undefined.
pub struct WgcStream {
    _private: [u8; 0],
}

impl Handle for WgcStream {
    type Rust = StreamShared;
    const NAME: &'static str = "WgcStream";
}

/// One buffer range bound to a kernel binding.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcBinding {
    /// The `@binding(N)` number.
    pub binding: u32,
    pub buffer: *const WgcBuffer,
    /// Byte offset: a multiple of the adapter's
    /// `min_storage_buffer_offset_alignment` (uniform: `min_uniform_...`).
    pub offset: u64,
    /// Bytes bound; 0 means to the end of the buffer.
    pub size: u64,
}

/// One kernel launch. Zero-initialise and set `struct_size`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcLaunch {
    pub struct_size: u32,
    pub bindings: *const WgcBinding,
    pub binding_count: u32,
    /// Bytes for the kernel's `var<uniform>` (copied at the call; may be NULL
    /// if the kernel has none or a buffer is bound to it).
    pub params: *const std::ffi::c_void,
    pub params_size: u64,
    /// Workgroup counts, each at most `max_compute_workgroups_per_dimension`.
    pub workgroups: [u32; 3],
    /// If not NULL, the counts are read on the GPU from three u32 at
    /// `indirect_offset` in this buffer (created with INDIRECT usage) and
    /// `workgroups` is ignored.
    pub indirect_buffer: *const WgcBuffer,
    pub indirect_offset: u64,
}

sized_struct!(WgcLaunch { bindings, binding_count, params, params_size, workgroups, indirect_buffer, indirect_offset });

impl Default for WgcLaunch {
    fn default() -> Self {
        WgcLaunch {
            struct_size: 0,
            bindings: std::ptr::null(),
            binding_count: 0,
            params: std::ptr::null(),
            params_size: 0,
            workgroups: [0; 3],
            indirect_buffer: std::ptr::null(),
            indirect_offset: 0,
        }
    }
}

/// Create a stream on a device. `*out_stream` holds one reference.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_create(device: *const WgcDevice, out_stream: *mut *mut WgcStream) -> WgcStatus {
    run(|| {
        let dev = unsafe { arc(device) }?;
        let out = unsafe { out(out_stream, "out_stream") }?;
        *out = to_handle::<WgcStream>(StreamShared::create(&dev)?);
        Ok(())
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_retain(stream: *mut WgcStream) {
    unsafe { boundary::retain(stream) }
}

/// Drop a reference. NULL is ignored. Work still recorded is submitted first.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_release(stream: *mut WgcStream) {
    if !stream.is_null() {
        let s = unsafe { &*(stream as *const StreamShared) };
        let _ = run(|| s.flush());
    }
    unsafe { boundary::release(stream) }
}

/// Record a launch of `kernel`. Every binding the entry point uses must be
/// bound once, with a buffer of the stream's device. Checked here, before
/// anything is recorded: `WGC_ERROR_BINDING_MISMATCH` (a binding missing,
/// unknown, repeated, too small (a uniform's range included), of the wrong
/// usage, or a buffer bound writable that the launch also uses in another
/// way: bound read-only, as its uniform buffer or as its indirect buffer,
/// whatever the ranges), `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_ALIGNMENT`,
/// `WGC_ERROR_LIMIT_EXCEEDED` (workgroup counts or a binding above the
/// adapter's limits), `WGC_ERROR_DEVICE_MISMATCH`, `WGC_ERROR_OUT_OF_MEMORY`.
/// Indirect workgroup counts are read on the GPU when the launch runs; if
/// any of them exceeds `max_compute_workgroups_per_dimension` the launch runs
/// no workgroups at all (no status can report it: the counts are not known
/// on the host). Does not block; the launch is submitted with its batch.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_launch(
    stream: *const WgcStream,
    kernel: *const WgcKernel,
    launch: *const WgcLaunch,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let k = unsafe { borrow(kernel) }?;
        let l = unsafe { read_sized(launch, "launch") }?;
        if l.binding_count > 0 && l.bindings.is_null() {
            return Err(Error::NullPointer("launch->bindings is NULL".into()));
        }
        let raw: &[WgcBinding] = if l.binding_count == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(l.bindings, l.binding_count as usize) }
        };
        let mut binds = Vec::with_capacity(raw.len());
        for b in raw {
            let buffer = unsafe { borrow(b.buffer) }
                .map_err(|_| Error::NullPointer(format!("launch binding {}: buffer is NULL", b.binding)))?;
            binds.push(Bind { binding: b.binding, buffer, offset: b.offset, size: (b.size != 0).then_some(b.size) });
        }
        let params = if l.params.is_null() {
            if l.params_size != 0 {
                return Err(Error::NullPointer("launch->params is NULL but params_size is not 0".into()));
            }
            None
        } else {
            Some(unsafe { boundary::bytes(l.params as *const u8, l.params_size, "launch->params") }?)
        };
        let groups = if l.indirect_buffer.is_null() {
            Groups::Direct(l.workgroups)
        } else {
            Groups::Indirect(unsafe { borrow(l.indirect_buffer) }?, l.indirect_offset)
        };
        let _call = profile_op!(s, format!("launch:{}", k.kernel.entry_point), [], [], 0);
        s.launch_from_caller(&k.kernel, &binds, params, groups)
    })
}

/// Record a copy of `size` bytes between buffers of the stream's device.
/// Offsets and size must be multiples of 4; ranges in one buffer must not
/// overlap (`WGC_ERROR_INVALID_ARGUMENT`).
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_copy_buffer(
    stream: *const WgcStream,
    src: *const WgcBuffer,
    src_offset: u64,
    dst: *const WgcBuffer,
    dst_offset: u64,
    size: u64,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let _call = s.profile_call(|| buffer_call("copy_buffer", 2 * size));
        s.copy(unsafe { borrow(src) }?, src_offset, unsafe { borrow(dst) }?, dst_offset, size)
    })
}

/// Record a fill of `size` bytes at `offset` with the 32-bit `pattern`
/// (e.g. the bits of a float). Offset and size must be multiples of 4
/// (`WGC_ERROR_ALIGNMENT`). Like a write, it works on buffers of any usage,
/// and any size works: fills larger than one storage binding take several
/// launches.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_fill_buffer(
    stream: *const WgcStream,
    buffer: *const WgcBuffer,
    offset: u64,
    size: u64,
    pattern: u32,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let _call = s.profile_call(|| buffer_call("fill_buffer", size));
        crate::ops::fill::fill_words(s, unsafe { borrow(buffer) }?, offset, size, pattern)
    })
}

/// Submit what has been recorded. Does not wait.
///
/// Everything the GPU layer checks at submit is checked when work is
/// recorded, so a batch is not expected to fail here. If the GPU layer still
/// rejects one (or runs out of memory), the batch's commands are submitted
/// one by one and only those it rejects are dropped: work recorded before
/// and after them still runs. The error (`WGC_ERROR_VALIDATION`,
/// `WGC_ERROR_OUT_OF_MEMORY`, with how many commands were dropped) is
/// reported by this stream's next `wgc_stream_flush` or
/// `wgc_stream_synchronize` (or `wgc_device_synchronize`), whichever comes
/// first, even when another call submitted the batch (a host read or write,
/// or a full batch); those other calls do not fail because of it.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_flush(stream: *const WgcStream) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        // A destroyed device dropped the recorded work: say so, not OK.
        s.device.check_alive()?;
        s.flush()
    })
}

/// Submit what has been recorded and block until the GPU has finished it,
/// at most `WgcDeviceOptions.gpu_timeout_ms` (then `WGC_ERROR_TIMEOUT`).
/// Reports batch errors as `wgc_stream_flush` does, after waiting for what
/// was submitted.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_synchronize(stream: *const WgcStream) -> WgcStatus {
    run(|| unsafe { borrow(stream) }?.synchronize())
}

/// A buffer command as the profiler describes it: no tensors, `bytes` moved.
fn buffer_call(name: &str, bytes: u64) -> OpCall {
    OpCall { name: name.into(), shapes: String::new(), flops: 0, bytes, host_ns: 0 }
}
