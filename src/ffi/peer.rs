//! Copies between devices: byte ranges of buffers and tensor views.

use super::boundary::{borrow, out, run};
use super::buffer::WgcBuffer;
use super::device::WgcDevice;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::ops::multi::peer;
use crate::runtime::peer_copy::{self, Endpoint, Route};

/// How a copy between two devices (and a collective's transfers) moves the
/// bytes through host memory.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgcPeerRoute {
    /// Chunks are read back into mapped staging buffers of the source
    /// device, copied by the host into mapped staging buffers of the
    /// destination, and uploaded from there.
    Staged = 0,
    /// One host allocation is imported into both devices
    /// (VK_EXT_external_memory_host): the source copies chunks into it and
    /// the destination copies them out, with no host copy.
    Imported = 1,
}

/// Which route copies from `src` to `dst` take (`*route`): `Imported`
/// where both devices import host memory, else `Staged`. The same device
/// twice answers as for two devices of its kind. Statuses:
/// `WGC_ERROR_NULL_POINTER`. Any thread.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_peer_route(
    src: *const WgcDevice,
    dst: *const WgcDevice,
    route: *mut WgcPeerRoute,
) -> WgcStatus {
    run(|| {
        let (a, b) = unsafe { (borrow(src)?, borrow(dst)?) };
        let route = unsafe { out(route, "route")? };
        *route = match peer_copy::route(a, [b]) {
            Route::Staged => WgcPeerRoute::Staged,
            Route::Imported => WgcPeerRoute::Imported,
        };
        Ok(())
    })
}

/// Copy `size` bytes from `src` at `src_offset` (a buffer of `src_stream`'s
/// device) to `dst` at `dst_offset` (a buffer of `dst_stream`'s device),
/// usually on another device. Vulkan has no memory shared between devices,
/// so the bytes go through host memory in chunks (16 MiB; the source
/// device's setting `WGC_PEER_CHUNK_KIB` changes it, docs/TUNING.md), pipelined so that the read-back
/// of one chunk overlaps the upload of the one before: through one host
/// allocation both devices import where they can, else through staging
/// buffers and a host copy (`wgc_device_peer_route` tells which).
///
/// Ordering: the bytes are read after all work recorded on `src_stream`
/// before this call, and written before all work recorded on `dst_stream`
/// after it (and after the work recorded there before it). Nothing is
/// ordered with other streams: record the producer on `src_stream` (or wait
/// on an event of its stream first) and the consumer on `dst_stream`. Both
/// streams may be the same device's (even the same stream: then the copy is
/// recorded there like `wgc_stream_copy` and nothing blocks).
///
/// Blocks until the source's work so far has run and the last chunk has
/// been read back and handed to the destination's queue; it does not wait
/// for the upload to run. Both streams are submitted (flushed) by the call.
/// Threads: the two streams are used by this call, so no other thread may
/// record on them meanwhile (the calls would be serialized, their order
/// unspecified).
///
/// Statuses: `WGC_ERROR_NULL_POINTER`; `WGC_ERROR_DEVICE_MISMATCH` (a
/// buffer not of its stream's device); `WGC_ERROR_OUT_OF_RANGE`;
/// `WGC_ERROR_ALIGNMENT` (offsets and size must be multiples of 4);
/// `WGC_ERROR_INVALID_ARGUMENT` (overlapping ranges of one buffer);
/// `WGC_ERROR_OUT_OF_MEMORY` (staging buffers); `WGC_ERROR_DEVICE_LOST`
/// when either device is lost or destroyed, before or during the copy, and
/// `WGC_ERROR_TIMEOUT` when a chunk does not arrive within the device's GPU
/// timeout (60 s when none is set): the call returns, it does not hang, and
/// the destination range is then unspecified. Size 0 does nothing.
#[no_mangle]
pub unsafe extern "C" fn wgc_buffer_copy_to_device(
    src_stream: *const WgcStream,
    src: *const WgcBuffer,
    src_offset: u64,
    dst_stream: *const WgcStream,
    dst: *const WgcBuffer,
    dst_offset: u64,
    size: u64,
) -> WgcStatus {
    run(|| {
        let (ss, sb) = unsafe { (borrow(src_stream)?, borrow(src)?) };
        let (ds, db) = unsafe { (borrow(dst_stream)?, borrow(dst)?) };
        let to = Endpoint { stream: ds, buffer: db, offset: dst_offset };
        peer_copy::copy(Endpoint { stream: ss, buffer: sb, offset: src_offset }, &[to], size)
    })
}

/// Copy the view `src` (on `src_stream`'s device) into the view `dst` (on
/// `dst_stream`'s device) of the same shape and dtype: any strides, offsets
/// and dtypes (bf16 and odd-length f16 included). Views that are not one
/// contiguous 4-byte-aligned range are first made contiguous in scratch on
/// their own device (a kernel recorded on their stream). Ordering, blocking,
/// threads, device loss: as `wgc_buffer_copy_to_device`.
/// `WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`,
/// `WGC_ERROR_DEVICE_MISMATCH`, `WGC_ERROR_INVALID_ARGUMENT` (a destination
/// whose elements share memory, or that overlaps `src` on one device), the
/// view errors of `WgcTensor`. Empty views do nothing.
#[no_mangle]
pub unsafe extern "C" fn wgc_tensor_copy_to_device(
    src_stream: *const WgcStream,
    src: *const WgcTensor,
    dst_stream: *const WgcStream,
    dst: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let (ss, ds) = unsafe { (borrow(src_stream)?, borrow(dst_stream)?) };
        let (a, b) = unsafe { (tensor(src, "src")?, tensor(dst, "dst")?) };
        peer::copy(ss, &a, ds, &b)
    })
}
