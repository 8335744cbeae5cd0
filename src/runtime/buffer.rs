//! Buffers: a caller-visible size over a pooled allocation, with blocking host
//! reads and ordered host writes.

use super::device::{next_id, Device};
use super::lease::Lease;
use super::pool::{size_class, Allocation};
use crate::bail;
use crate::error::{Error, Result};
use std::sync::Arc;

/// How a caller may use a buffer, beyond copies (always allowed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub storage: bool,
    pub uniform: bool,
    pub indirect: bool,
}

impl Usage {
    /// Every allocation can be bound as storage by the library itself: fills
    /// write buffers of any usage, and indirect counts are checked by a
    /// kernel that reads them (`indirect_counts`). Callers still need
    /// `storage` to bind a buffer as storage.
    fn wgpu(self) -> wgpu::BufferUsages {
        let mut u = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::STORAGE;
        if self.uniform {
            u |= wgpu::BufferUsages::UNIFORM;
        }
        if self.indirect {
            u |= wgpu::BufferUsages::INDIRECT;
        }
        u
    }
}

pub struct Buffer {
    pub device: Arc<Device>,
    lease: Arc<Lease>,
    /// The size the caller asked for; the allocation may be larger.
    pub size: u64,
    pub usage: Usage,
}

/// Copies and host writes need 4-byte multiples.
pub const COPY_ALIGN: u64 = wgpu::COPY_BUFFER_ALIGNMENT;

impl Buffer {
    /// Create a buffer whose contents read as zero, without submitting
    /// anything: a new driver allocation is zeroed by wgpu before its first
    /// use; a reused one holds old data, and its clear is deferred to the
    /// device's next submission (see `deferred_clear`), before any work of
    /// the new owner.
    pub fn create(device: &Arc<Device>, size: u64, usage: Usage) -> Result<Arc<Buffer>> {
        let b = Self::create_uninit(device, size, usage)?;
        if b.reused {
            device.defer_clear(b.buffer.raw().clone());
        }
        Ok(b.buffer)
    }

    /// Create a buffer whose contents are unspecified (operators' scratch
    /// space, outputs that will be overwritten). Never submits anything.
    pub fn create_uninit(device: &Arc<Device>, size: u64, usage: Usage) -> Result<NewBuffer> {
        device.check_alive()?;
        if size == 0 {
            bail!(InvalidArgument, "buffer size must be greater than zero");
        }
        let max = device.limits.max_buffer_size;
        if size > max {
            bail!(TooLarge, "buffer of {size} bytes requested; this adapter allows at most {max}");
        }
        let class = size_class(size).min(max.max(size));
        let wusage = usage.wgpu();
        // Allocations whose last work has finished go back to the pool now.
        device.in_flight.release_finished();
        let (alloc, reused) = match device.pool.take(class, wusage) {
            Some(alloc) => (alloc, true),
            None => (Self::allocate(device, size, class, wusage)?, false),
        };
        let lease = Lease::new(alloc, &device.pool, &device.bind_groups);
        Ok(NewBuffer { buffer: Arc::new(Buffer { device: device.clone(), lease, size, usage }), reused })
    }

    /// A new driver allocation of `class` bytes.
    fn allocate(device: &Device, size: u64, class: u64, usage: wgpu::BufferUsages) -> Result<Allocation> {
        let desc = wgpu::BufferDescriptor { label: None, size: class, usage, mapped_at_creation: false };
        let raw = match device.scoped(|| device.wgpu.create_buffer(&desc)) {
            Ok(raw) => raw,
            Err(Error::OutOfMemory(m)) => {
                // Give the streams' unused scratch and the pooled memory back
                // to the driver and try once more.
                device.give_back_memory(0);
                device
                    .scoped(|| device.wgpu.create_buffer(&desc))
                    .map_err(|_| Error::OutOfMemory(format!("{size} bytes: {m}")))?
            }
            Err(e) => return Err(e),
        };
        device.pool.note_new(class);
        Ok(Allocation { raw, id: next_id() })
    }

    pub fn raw(&self) -> &wgpu::Buffer {
        self.lease.raw()
    }

    /// The allocation's id: the bind group cache keys on it.
    pub fn alloc_id(&self) -> u64 {
        self.lease.id()
    }

    /// The same memory, bindable as storage by the library's own kernels
    /// whatever the caller's usage (see `Usage::wgpu`).
    pub fn as_storage(&self) -> Buffer {
        let usage = Usage { storage: true, ..self.usage };
        Buffer { device: self.device.clone(), lease: self.lease.clone(), size: self.size, usage }
    }

    /// Recorded work that uses the buffer holds this until it has run.
    pub fn lease(&self) -> &Arc<Lease> {
        &self.lease
    }

    /// `what` names the range in messages (formatted only on failure).
    pub fn check_range(&self, offset: u64, size: u64, what: impl std::fmt::Display) -> Result<()> {
        match offset.checked_add(size) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(Error::OutOfRange(format!(
                "{what}: bytes [{offset}, {offset}+{size}) reach past the end of a {}-byte buffer",
                self.size
            ))),
        }
    }

    /// Write host bytes. Ordered after all work recorded so far on any stream
    /// of the device; returns once `data` has been copied (not waiting for the GPU).
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.device.check_alive()?;
        let size = data.len() as u64;
        self.check_range(offset, size, "write")?;
        if !offset.is_multiple_of(COPY_ALIGN) || !size.is_multiple_of(COPY_ALIGN) {
            bail!(Alignment, "write offset ({offset}) and size ({size}) must be multiples of 4");
        }
        if size == 0 {
            return Ok(());
        }
        self.device.refuse_if_captured(self.alloc_id(), "a host write")?;
        self.device.flush_all()?;
        self.device.submit_deferred_clears();
        // Range and alignment are checked above; only running out of
        // memory for the staging copy remains (reported through `unscoped`).
        self.device.unscoped(|| self.device.queue.write_buffer(self.raw(), offset, data))
    }

    /// Read into host memory. Blocks until all work recorded so far on any
    /// stream of the device has finished and the bytes have arrived.
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        self.device.check_alive()?;
        let size = out.len() as u64;
        self.check_range(offset, size, "read")?;
        if size == 0 {
            return Ok(());
        }
        self.device.refuse_if_captured(self.alloc_id(), "a host read")?;
        let dev = &self.device;
        // Copy an aligned superset of the range to a staging buffer.
        let start = offset / COPY_ALIGN * COPY_ALIGN;
        let end = (offset + size).div_ceil(COPY_ALIGN) * COPY_ALIGN;
        let end = end.min(self.raw().size());
        let len = end - start;
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let class = size_class(len);
        let staging = match dev.pool.take(class, usage) {
            Some(a) => a,
            None => {
                let raw = dev.scoped(|| {
                    dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("wgcompute read staging"),
                        size: class,
                        usage,
                        mapped_at_creation: false,
                    })
                })?;
                dev.pool.note_new(class);
                Allocation { raw, id: next_id() }
            }
        };
        let result = (|| {
            let copy = || {
                let mut enc = dev.wgpu.create_command_encoder(&Default::default());
                enc.copy_buffer_to_buffer(self.raw(), start, &staging.raw, 0, len);
                enc.finish()
            };
            let index = if dev.has_gpu_timeout() {
                dev.flush_all()?;
                // Wait (at most the timeout) before submitting the copy: some
                // drivers (lavapipe) block a submission until the work whose
                // results it reads has finished.
                dev.wait_idle()?;
                dev.scoped(|| dev.submit([copy()]))?
            } else {
                dev.flush_all_then(&copy)?
            };
            let (tx, rx) = std::sync::mpsc::channel();
            staging.raw.slice(0..len).map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
            dev.wait_for(index)?;
            if let Err(e) = dev.wait_callback(&rx, "mapping the read-back buffer")? {
                bail!(DeviceLost, "mapping the read-back buffer failed: {e}");
            }
            {
                let view = staging
                    .raw
                    .slice(0..len)
                    .get_mapped_range()
                    .map_err(|e| Error::Internal(format!("mapped range: {e:?}")))?;
                let skip = (offset - start) as usize;
                out.copy_from_slice(&view[skip..skip + size as usize]);
            }
            staging.raw.unmap();
            Ok(())
        })();
        match result {
            Ok(()) => dev.pool.give_back(staging, &dev.bind_groups),
            Err(_) => {
                // The copy may still be pending (a wait that timed out):
                // neither its source nor its staging may be reused before it ran.
                dev.in_flight.hold(&dev.queue, vec![self.lease.clone()]);
                dev.pool.discard(staging, &dev.bind_groups);
            }
        }
        result
    }
}

/// A freshly created buffer and whether its allocation came from the pool.
pub struct NewBuffer {
    pub buffer: Arc<Buffer>,
    pub reused: bool,
}
