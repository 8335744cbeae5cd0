//! Events: wait on a point in a stream; GPU time between two points.

use super::boundary::{self, arc, borrow, out, run, to_handle, Handle};
use super::status::WgcStatus;
use super::stream::WgcStream;
use crate::runtime::event::Event;

/// A point recorded in a stream. Safe to wait on from any thread.
pub struct WgcEvent {
    _private: [u8; 0],
}

impl Handle for WgcEvent {
    type Rust = Event;
    const NAME: &'static str = "WgcEvent";
}

/// Record an event at the current point of the stream, with a GPU timestamp
/// where the adapter has them (`WgcAdapterInfo.has_timestamps`). Does not
/// block. `*out_event` holds one reference.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_record_event(stream: *const WgcStream, out_event: *mut *mut WgcEvent) -> WgcStatus {
    run(|| {
        let s = unsafe { arc(stream) }?;
        let out = unsafe { out(out_event, "out_event") }?;
        *out = to_handle::<WgcEvent>(s.record_event()?);
        Ok(())
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_event_retain(event: *mut WgcEvent) {
    unsafe { boundary::retain(event) }
}

/// Drop a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_event_release(event: *mut WgcEvent) {
    unsafe { boundary::release(event) }
}

/// Block until the GPU has passed the event; flushes its stream if the
/// event has not been submitted yet. Waits at most
/// `WgcDeviceOptions.gpu_timeout_ms` (then `WGC_ERROR_TIMEOUT`).
#[no_mangle]
pub unsafe extern "C" fn wgc_event_wait(event: *const WgcEvent) -> WgcStatus {
    run(|| unsafe { borrow(event) }?.wait())
}

/// `*out_done` = 1 if the GPU has passed the event, else 0. Does not block
/// and does not flush.
#[no_mangle]
pub unsafe extern "C" fn wgc_event_query(event: *const WgcEvent, out_done: *mut u32) -> WgcStatus {
    run(|| {
        let e = unsafe { borrow(event) }?;
        let done = e.is_complete()?;
        *unsafe { out(out_done, "out_done") }? = done as u32;
        Ok(())
    })
}

/// GPU time in milliseconds from `start` to `end` (both recorded on streams
/// of one device), measured with GPU timestamps. Blocks until both have
/// passed (at most `WgcDeviceOptions.gpu_timeout_ms`, then
/// `WGC_ERROR_TIMEOUT`). `WGC_ERROR_UNSUPPORTED` if the adapter has no
/// timestamps. Any number of threads may ask about the same events at once.
#[no_mangle]
pub unsafe extern "C" fn wgc_event_elapsed_ms(
    start: *const WgcEvent,
    end: *const WgcEvent,
    out_ms: *mut f64,
) -> WgcStatus {
    run(|| {
        let a = unsafe { borrow(start) }?;
        let b = unsafe { borrow(end) }?;
        let out = unsafe { out(out_ms, "out_ms") }?;
        *out = Event::elapsed_ms(a, b)?;
        Ok(())
    })
}
