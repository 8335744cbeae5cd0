//! Copies between devices. Vulkan has no peer memory between physical
//! devices, so bytes go through host memory: the source stream copies a
//! chunk into a MAP_READ staging buffer, the host copies the mapped bytes
//! into a MAP_WRITE staging buffer of each destination, and each
//! destination stream copies that into the destination buffer. Chunks are
//! pipelined through rings of stagings, so while the host copies chunk i
//! and the destinations upload it, the source is already downloading the
//! next chunks: both links (and every destination's) run at once.
//!
//! Ordering: the download is recorded on the source stream, so it reads the
//! bytes after everything recorded there before the call; the uploads are
//! recorded on the destination streams, so work recorded there afterwards
//! sees them and work recorded before runs first. The host blocks until the
//! last chunk has been read back and handed to the destinations' queues
//! (not until the uploads have run).
//!
//! Where every device of the copy imports host memory
//! (VK_EXT_external_memory_host), the copy takes `peer_copy_imported`
//! instead: one host block imported into all of them, no mapping and no
//! host copy (`Route::Imported`); the staged route above is the fallback.

use super::buffer::Buffer;
use super::device::{next_id, Device};
use super::lease::Lease;
use super::peer_copy_imported::Outcome;
use super::pool::{size_class, Allocation};
use super::stream::StreamShared;
use crate::bail;
use crate::error::{Error, Result};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;

/// Chunk size unless `WGC_PEER_CHUNK_KIB` says otherwise: large enough that
/// a submit per chunk costs little against its transfer (16 MiB take about
/// 0.3 ms at 55 GB/s), small enough that three of them in flight overlap
/// both links for copies of tens of MiB.
const DEFAULT_CHUNK: u64 = 16 << 20;
/// Stagings per ring: one being copied on the host, the others in flight.
const RING: usize = 3;
/// Host copies of at least this many bytes are split over threads.
const PARALLEL_PART: usize = 2 << 20;
const MAX_COPY_THREADS: usize = 4;

/// The chunk of copies from `src_dev`: its setting, clamped to 4 KiB - 1 GiB.
fn chunk_bytes(src_dev: &Device) -> u64 {
    let kib = src_dev.settings().multi.peer_chunk_kib;
    kib.map_or(DEFAULT_CHUNK, |k| (k.clamp(4, 1 << 20)) << 10)
}

/// One side of a copy: a byte offset in a buffer, ordered on a stream of the
/// buffer's device.
#[derive(Clone, Copy)]
pub struct Endpoint<'a> {
    pub stream: &'a StreamShared,
    pub buffer: &'a Buffer,
    pub offset: u64,
}

/// A staging buffer of a ring and the result of its pending mapping.
struct Staging {
    lease: Arc<Lease>,
    mapping: Option<Receiver<std::result::Result<(), wgpu::BufferAsyncError>>>,
    /// The submission the pending mapping waits for: waiting on it blocks in
    /// the driver and runs the mapping's callback (polling for the callback
    /// alone would notice it only at the next poll).
    after: Option<wgpu::SubmissionIndex>,
    /// Mapped or being mapped: must be unmapped before the GPU uses it or
    /// it goes back to the pool (unmapping an unmapped buffer is an error).
    mapped: bool,
}

impl Staging {
    fn new(dev: &Device, class: u64, usage: wgpu::BufferUsages) -> Result<Staging> {
        // Allocations whose last work has finished go back to the pool now.
        dev.in_flight.release_finished();
        let alloc = match dev.pool.take(class, usage) {
            Some(a) => a,
            None => {
                let raw = dev.scoped(|| {
                    dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("wgcompute peer staging"),
                        size: class,
                        usage,
                        mapped_at_creation: false,
                    })
                })?;
                dev.pool.note_new(class);
                Allocation { raw, id: next_id() }
            }
        };
        Ok(Staging { lease: Lease::new(alloc, &dev.pool, &dev.bind_groups), mapping: None, after: None, mapped: false })
    }

    fn raw(&self) -> &wgpu::Buffer {
        self.lease.raw()
    }

    fn map(&mut self, mode: wgpu::MapMode, len: u64, after: Option<wgpu::SubmissionIndex>) {
        self.after = after;
        let (tx, rx) = channel();
        self.raw().slice(0..len).map_async(mode, move |r| {
            let _ = tx.send(r);
        });
        self.mapping = Some(rx);
        self.mapped = true;
    }

    fn unmap(&mut self) {
        if std::mem::take(&mut self.mapped) {
            self.mapping = None;
            self.after = None;
            self.raw().unmap();
        }
    }

    /// Wait for the pending mapping (polling `dev`, bounded by its timeout).
    fn wait_mapped(&mut self, dev: &Device, what: &str) -> Result<()> {
        if let Some(index) = self.after.take() {
            dev.wait_for(index)?;
        }
        if let Some(rx) = self.mapping.take() {
            if let Err(e) = dev.wait_callback(&rx, what)? {
                bail!(DeviceLost, "{what} failed: {e}");
            }
        }
        Ok(())
    }
}

/// The rings of one copy; on drop (success or failure) nothing stays mapped,
/// and each staging returns to its pool once the work that uses it has run.
struct Rings {
    src: Vec<Staging>,
    dst: Vec<Vec<Staging>>,
}

impl Drop for Rings {
    fn drop(&mut self) {
        for s in self.src.iter_mut().chain(self.dst.iter_mut().flatten()) {
            s.unmap();
        }
    }
}

fn check_endpoint(e: &Endpoint, size: u64, what: &str) -> Result<()> {
    e.buffer.device.check_alive()?;
    if !e.stream.device.same(&e.buffer.device) {
        bail!(DeviceMismatch, "the {what} buffer belongs to another device than the {what} stream");
    }
    e.buffer.check_range(e.offset, size, format!("{what} of the copy between devices"))?;
    if !e.offset.is_multiple_of(4) {
        bail!(Alignment, "the {what} offset ({}) must be a multiple of 4", e.offset);
    }
    Ok(())
}

/// Copy `size` bytes from `src` to every destination. See the module docs
/// for the ordering. Destinations may be on the source's device (even the
/// same stream); their ranges must not overlap the source's.
pub fn copy(src: Endpoint, dsts: &[Endpoint], size: u64) -> Result<()> {
    check_endpoint(&src, size, "source")?;
    for d in dsts {
        check_endpoint(d, size, "destination")?;
        let same_buffer = std::ptr::eq(d.buffer, src.buffer) || d.buffer.alloc_id() == src.buffer.alloc_id();
        if same_buffer && d.offset < src.offset + size && src.offset < d.offset + size {
            bail!(InvalidArgument, "the source and destination ranges of the copy overlap");
        }
    }
    if !size.is_multiple_of(4) {
        bail!(Alignment, "the size of a copy between devices ({size}) must be a multiple of 4");
    }
    if size == 0 || dsts.is_empty() {
        return Ok(());
    }
    // Destinations on the source's stream need no host round trip.
    let (local, remote): (Vec<&Endpoint>, Vec<&Endpoint>) =
        dsts.iter().partition(|d| std::ptr::eq(d.stream, src.stream));
    for d in local {
        src.stream.copy(src.buffer, src.offset, d.buffer, d.offset, size)?;
    }
    if remote.is_empty() {
        return Ok(());
    }
    if route(&src.buffer.device, remote.iter().map(|d| &*d.buffer.device)) == Route::Imported
        && super::peer_copy_imported::copy(&src, &remote, size, chunk_bytes(&src.buffer.device))? == Outcome::Done
    {
        return Ok(());
    }
    through_host(src, &remote, size, chunk_bytes(&src.buffer.device))
}

/// How bytes travel between two devices.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Through mapped staging buffers of each device and a host copy.
    Staged = 0,
    /// Through one host allocation both devices import: no host copy.
    Imported = 1,
}

/// The route a copy from `src` to the `dsts` devices takes.
pub fn route<'a>(src: &'a Device, dsts: impl IntoIterator<Item = &'a Device>) -> Route {
    if super::peer_copy_imported::usable(std::iter::once(src).chain(dsts)) {
        Route::Imported
    } else {
        Route::Staged
    }
}

fn through_host(src: Endpoint, dsts: &[&Endpoint], size: u64, chunk: u64) -> Result<()> {
    let chunk = chunk.min(size);
    let chunks = size.div_ceil(chunk);
    let depth = RING.min(chunks as usize);
    let class = size_class(chunk);
    let read = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
    let write = wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC;
    let src_dev = &src.buffer.device;
    let mut rings = Rings { src: Vec::with_capacity(depth), dst: Vec::with_capacity(dsts.len()) };
    for _ in 0..depth {
        rings.src.push(Staging::new(src_dev, class, read)?);
    }
    for d in dsts {
        let ring = (0..depth).map(|_| Staging::new(&d.buffer.device, class, write)).collect::<Result<Vec<_>>>()?;
        rings.dst.push(ring);
    }
    let span = |c: u64| (c * chunk, chunk.min(size - c * chunk));

    let download = |s: &mut Staging, c: u64| -> Result<()> {
        let (at, len) = span(c);
        src.stream.copy_raw(src.buffer.raw(), src.offset + at, s.raw(), 0, len, &[src.buffer.lease(), &s.lease])?;
        let index = src.stream.flush_for_other_index()?;
        s.map(wgpu::MapMode::Read, len, index);
        Ok(())
    };
    for c in 0..depth {
        download(&mut rings.src[c], c as u64)?;
    }
    for c in 0..chunks {
        let slot = (c % depth as u64) as usize;
        let (at, len) = span(c);
        rings.src[slot].wait_mapped(src_dev, "reading back a chunk of a copy between devices")?;
        for (d, ring) in dsts.iter().zip(rings.dst.iter_mut()) {
            let w = &mut ring[slot];
            if !w.mapped {
                w.map(wgpu::MapMode::Write, len, None);
            }
            w.wait_mapped(&d.buffer.device, "mapping a staging buffer of a copy between devices")?;
        }
        let targets: Vec<&wgpu::Buffer> = rings.dst.iter().map(|r| r[slot].raw()).collect();
        host_copy(rings.src[slot].raw(), &targets, len)?;
        rings.src[slot].unmap();
        let again = c + (depth as u64) < chunks;
        for (d, ring) in dsts.iter().zip(rings.dst.iter_mut()) {
            let w = &mut ring[slot];
            w.unmap();
            d.stream.copy_raw(w.raw(), 0, d.buffer.raw(), d.offset + at, len, &[d.buffer.lease(), &w.lease])?;
            let index = d.stream.flush_for_other_index()?;
            if again {
                // Ready (for the host) once the upload out of it has run.
                let next_len = span(c + depth as u64).1;
                w.map(wgpu::MapMode::Write, next_len, index);
            }
        }
        if again {
            download(&mut rings.src[slot], c + depth as u64)?;
        }
    }
    Ok(())
}

/// Copy the first `len` bytes of the mapped `src` into each mapped target,
/// split over a few threads when large (one thread does not saturate a
/// host-memory link).
fn host_copy(src: &wgpu::Buffer, targets: &[&wgpu::Buffer], len: u64) -> Result<()> {
    let len = len as usize;
    let parts = (len / PARALLEL_PART).clamp(1, MAX_COPY_THREADS);
    // Part boundaries on 64 KiB (mapped ranges start at multiples of 8).
    let step = len.div_ceil(parts).div_ceil(1 << 16) << 16;
    let copy_part = |lo: usize| -> Result<()> {
        let hi = (lo + step).min(len);
        let (lo64, hi64) = (lo as u64, hi as u64);
        let view =
            src.slice(lo64..hi64).get_mapped_range().map_err(|e| Error::Internal(format!("mapped range: {e:?}")))?;
        for t in targets {
            let mut out = t
                .slice(lo64..hi64)
                .get_mapped_range_mut()
                .map_err(|e| Error::Internal(format!("mapped range: {e:?}")))?;
            out.copy_from_slice(&view);
        }
        Ok(())
    };
    if parts == 1 {
        return copy_part(0);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..len).step_by(step).map(|lo| scope.spawn(move || copy_part(lo))).collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| Error::Internal("host copy thread panicked".into()))?)
    })
}

#[cfg(test)]
#[path = "peer_copy_test.rs"]
mod tests;
