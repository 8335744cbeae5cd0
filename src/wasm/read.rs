//! Asynchronous readback: copy the bytes into a mappable buffer after all
//! recorded work, and await the mapping (a promise in the browser).

use crate::error::{Error, Result};
use crate::runtime::buffer::Buffer;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// A one-shot slot a wgpu callback fills and a future awaits.
struct Slot<T> {
    value: Option<T>,
    waker: Option<Waker>,
}

struct SlotFuture<T>(Arc<Mutex<Slot<T>>>);

impl<T> Future for SlotFuture<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut s = self.0.lock().unwrap();
        match s.value.take() {
            Some(v) => Poll::Ready(v),
            None => {
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// `size` bytes of `buffer` from `offset` (both multiples of 4), after all
/// work recorded so far on any stream of its device. Fails with the first
/// error WebGPU reported since the last read.
pub async fn read_bytes(buffer: &Buffer, offset: u64, size: u64) -> Result<Vec<u8>> {
    let dev = &buffer.device;
    dev.check_alive()?;
    buffer.check_range(offset, size, "read")?;
    if size == 0 {
        return Ok(Vec::new());
    }
    dev.flush_all()?;
    let staging = dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("wgcompute readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = dev.wgpu.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer.raw(), offset, &staging, 0, size);
    dev.queue.submit([enc.finish()]);
    let slot = Arc::new(Mutex::new(Slot { value: None, waker: None }));
    let fill = slot.clone();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let mut s = fill.lock().unwrap();
        s.value = Some(r);
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    });
    let mapped = SlotFuture(slot).await;
    if let Some(msg) = dev.take_uncaptured() {
        return Err(Error::Validation(msg));
    }
    dev.check_alive()?;
    mapped.map_err(|e| Error::Internal(format!("mapping the readback buffer failed: {e}")))?;
    let bytes = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| Error::Internal(format!("reading the readback buffer failed: {e}")))?
        .to_vec();
    staging.unmap();
    staging.destroy();
    // Everything submitted before the copy has run: its leases can go.
    dev.in_flight.release_finished();
    Ok(bytes)
}
