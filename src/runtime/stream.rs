//! Streams record launches, copies and events into one command encoder and
//! one open compute pass, and submit them in batches: on `flush`, when a host
//! read or write needs the work ordered before it, or when a batch is full.
//! Per-launch uniform data goes into one arena buffer per stream, bound at a
//! dynamic offset, so repeated launches reuse their cached bind group.

use super::bind_cache::BindKey;
use super::buffer::Buffer;
use super::device::{next_id, Device};
use super::event::Event;
use super::kernel::{BindingKind, Kernel};
use crate::bail;
use crate::error::{Error, Result};
use std::sync::{Arc, Mutex};

/// Bytes of uniform data one batch can carry; a full arena flushes the batch.
const ARENA_BYTES: u64 = 1 << 20;
/// Launches per batch before an automatic flush: early enough that the GPU
/// starts on a long recording while the host is still adding to it.
const MAX_BATCH_LAUNCHES: u32 = 256;

/// A buffer range bound to one of a kernel's bindings.
pub struct Bind<'a> {
    pub binding: u32,
    pub buffer: &'a Buffer,
    pub offset: u64,
    /// `None`: to the end of the buffer.
    pub size: Option<u64>,
}

pub enum Groups<'a> {
    Direct([u32; 3]),
    /// Three u32 workgroup counts read from the buffer at this byte offset.
    Indirect(&'a Buffer, u64),
}

struct Batch {
    encoder: wgpu::CommandEncoder,
    pass: Option<wgpu::ComputePass<'static>>,
    uniform_bytes: Vec<u8>,
    launches: u32,
    events: Vec<Arc<Event>>,
}

struct State {
    batch: Option<Batch>,
    arena: Option<(wgpu::Buffer, u64)>,
    last_submission: Option<wgpu::SubmissionIndex>,
}

pub struct StreamShared {
    pub device: Arc<Device>,
    pub id: u64,
    state: Mutex<State>,
}

impl StreamShared {
    pub fn create(device: &Arc<Device>) -> Result<Arc<StreamShared>> {
        device.check_alive()?;
        let s = Arc::new(StreamShared {
            device: device.clone(),
            id: next_id(),
            state: Mutex::new(State { batch: None, arena: None, last_submission: None }),
        });
        device.register_stream(&s);
        Ok(s)
    }

    fn check_device(&self, other: &Device, what: &str) -> Result<()> {
        if !self.device.same(other) {
            bail!(DeviceMismatch, "{what} belongs to another device than the stream");
        }
        Ok(())
    }

    /// Record one kernel launch.
    pub fn launch(&self, kernel: &Kernel, binds: &[Bind], params: Option<&[u8]>, groups: Groups) -> Result<()> {
        let dev = &self.device;
        dev.check_alive()?;
        if kernel.device_id != dev.id {
            bail!(DeviceMismatch, "the kernel belongs to another device than the stream");
        }
        let limits = &dev.limits;
        // Validate every binding against the kernel's reflection.
        let mut ranges = Vec::with_capacity(kernel.bindings.len());
        let mut entries_src: Vec<(u32, &wgpu::Buffer, u64, u64)> = Vec::with_capacity(kernel.bindings.len());
        for b in binds {
            if !kernel.bindings.iter().any(|k| k.binding == b.binding) {
                bail!(BindingMismatch, "binding {} is not used by kernel {:?}", b.binding, kernel.entry_point);
            }
            if binds.iter().filter(|o| o.binding == b.binding).count() > 1 {
                bail!(BindingMismatch, "binding {} is given more than once", b.binding);
            }
        }
        let mut uniform_window = None;
        for info in &kernel.bindings {
            let given = binds.iter().find(|b| b.binding == info.binding);
            if info.kind == BindingKind::Uniform {
                let window = info.min_size.div_ceil(16) * 16;
                if window > limits.max_uniform_buffer_binding_size {
                    bail!(LimitExceeded, "uniform of {window} bytes exceeds this adapter's limit");
                }
                match (given, params) {
                    (Some(_), Some(_)) => {
                        bail!(BindingMismatch, "uniform binding {} given both as a buffer and as params", info.binding)
                    }
                    (None, None) => bail!(
                        BindingMismatch,
                        "kernel {:?} needs uniform binding {} ({:?}, {} bytes): pass params or a buffer",
                        kernel.entry_point,
                        info.binding,
                        info.name,
                        info.min_size
                    ),
                    (None, Some(p)) => {
                        if (p.len() as u64) < info.min_size {
                            bail!(
                                BindingMismatch,
                                "params are {} bytes; uniform {:?} needs {}",
                                p.len(),
                                info.name,
                                info.min_size
                            );
                        }
                        uniform_window = Some((info.binding, window, None));
                    }
                    (Some(b), None) => {
                        self.check_device(&b.buffer.device, "a bound buffer")?;
                        if !b.buffer.usage.uniform {
                            bail!(BindingMismatch, "binding {}: the buffer was not created with uniform usage", info.binding);
                        }
                        let align = limits.min_uniform_buffer_offset_alignment as u64;
                        if b.offset % align != 0 {
                            bail!(Alignment, "binding {}: uniform offset {} is not a multiple of {align}", info.binding, b.offset);
                        }
                        // The allocation is rounded up past `window`; the caller's range must hold the struct.
                        b.buffer.check_range(b.offset, info.min_size, &format!("uniform binding {}", info.binding))?;
                        uniform_window = Some((info.binding, window, Some((b.buffer, b.offset))));
                    }
                }
                continue;
            }
            let Some(b) = given else {
                bail!(
                    BindingMismatch,
                    "kernel {:?} uses binding {} ({:?}) but no buffer was bound to it",
                    kernel.entry_point,
                    info.binding,
                    info.name
                );
            };
            self.check_device(&b.buffer.device, "a bound buffer")?;
            if !b.buffer.usage.storage {
                bail!(BindingMismatch, "binding {}: the buffer was not created with storage usage", info.binding);
            }
            let size = match b.size {
                Some(s) => {
                    b.buffer.check_range(b.offset, s, &format!("binding {}", info.binding))?;
                    s
                }
                // To the end, rounded up to whole words inside the allocation
                // (a buffer of f16 may hold an odd number of bytes).
                None => b.buffer.size.checked_sub(b.offset).ok_or_else(|| {
                    Error::OutOfRange(format!("binding {}: offset {} is past the buffer's end", info.binding, b.offset))
                })?.div_ceil(4) * 4,
            };
            let align = limits.min_storage_buffer_offset_alignment as u64;
            if b.offset % align != 0 {
                bail!(Alignment, "binding {}: storage offset {} is not a multiple of {align}", info.binding, b.offset);
            }
            if size % 4 != 0 {
                bail!(Alignment, "binding {}: size {size} is not a multiple of 4", info.binding);
            }
            if size < info.min_size {
                bail!(BindingMismatch, "binding {} ({:?}): {size} bytes bound, the kernel needs at least {}", info.binding, info.name, info.min_size);
            }
            if size > limits.max_storage_buffer_binding_size {
                bail!(LimitExceeded, "binding {}: {size} bytes exceeds this adapter's storage binding limit of {}", info.binding, limits.max_storage_buffer_binding_size);
            }
            ranges.push((info.binding, b.buffer.alloc_id(), b.offset, size));
            entries_src.push((info.binding, b.buffer.raw(), b.offset, size));
        }
        // A buffer may not be bound read-only and writable in the same launch.
        for info in kernel.bindings.iter().filter(|i| i.kind == BindingKind::StorageRead) {
            let id = ranges.iter().find(|r| r.0 == info.binding).unwrap().1;
            for other in kernel.bindings.iter().filter(|i| i.kind == BindingKind::StorageReadWrite) {
                if ranges.iter().find(|r| r.0 == other.binding).unwrap().1 == id {
                    bail!(BindingMismatch, "the same buffer is bound read-only (binding {}) and writable (binding {})", info.binding, other.binding);
                }
            }
        }
        match &groups {
            Groups::Direct(g) => {
                let max = limits.max_compute_workgroups_per_dimension;
                if g.iter().any(|&v| v > max) {
                    bail!(LimitExceeded, "dispatch of {g:?} workgroups exceeds this adapter's limit of {max} per dimension");
                }
            }
            Groups::Indirect(buf, off) => {
                self.check_device(&buf.device, "the indirect buffer")?;
                if !buf.usage.indirect {
                    bail!(InvalidArgument, "the indirect buffer was not created with indirect usage");
                }
                if off % 4 != 0 {
                    bail!(Alignment, "indirect offset {off} is not a multiple of 4");
                }
                buf.check_range(*off, 12, "indirect arguments")?;
            }
        }

        let mut st = self.state.lock().unwrap();
        let slot_align = limits.min_uniform_buffer_offset_alignment as u64;
        if let Some(batch) = &st.batch {
            let next = (batch.uniform_bytes.len() as u64).div_ceil(slot_align) * slot_align;
            let need = uniform_window.as_ref().map_or(0, |w| if w.2.is_none() { w.1 } else { 0 });
            if next + need > ARENA_BYTES || batch.launches >= MAX_BATCH_LAUNCHES {
                self.flush_locked(&mut st)?;
            }
        }
        let (arena, arena_id) = {
            if st.arena.is_none() {
                let buf = dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("wgcompute uniform arena"),
                    size: ARENA_BYTES,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                st.arena = Some((buf, next_id()));
            }
            let (b, id) = st.arena.as_ref().unwrap();
            (b.clone(), *id)
        };
        let batch = self.batch(&mut st);
        let mut dynamic_offsets = Vec::new();
        let mut uniform_entry = None;
        if let Some((binding, window, user)) = uniform_window {
            match user {
                Some((buf, off)) => {
                    ranges.push((binding, buf.alloc_id(), 0, window));
                    uniform_entry = Some((binding, buf.raw().clone(), window));
                    dynamic_offsets.push(off as u32);
                }
                None => {
                    let p = params.unwrap();
                    let off = (batch.uniform_bytes.len() as u64).div_ceil(slot_align) * slot_align;
                    batch.uniform_bytes.resize((off + window) as usize, 0);
                    let n = p.len().min(window as usize);
                    batch.uniform_bytes[off as usize..off as usize + n].copy_from_slice(&p[..n]);
                    ranges.push((binding, arena_id, 0, window));
                    uniform_entry = Some((binding, arena.clone(), window));
                    dynamic_offsets.push(off as u32);
                }
            }
        }
        ranges.sort();
        let key = BindKey { layout_id: kernel.id, ranges };
        let bind_group = dev.bind_groups.get_or_create(key, || {
            let mut entries: Vec<wgpu::BindGroupEntry> = entries_src
                .iter()
                .map(|(binding, buf, off, size)| wgpu::BindGroupEntry {
                    binding: *binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: buf,
                        offset: *off,
                        size: wgpu::BufferSize::new(*size),
                    }),
                })
                .collect();
            if let Some((binding, buf, window)) = &uniform_entry {
                entries.push(wgpu::BindGroupEntry {
                    binding: *binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: buf,
                        offset: 0,
                        size: wgpu::BufferSize::new(*window),
                    }),
                });
            }
            dev.wgpu.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &kernel.layout, entries: &entries })
        });
        let pass = Self::pass(batch);
        pass.set_pipeline(&kernel.pipeline);
        pass.set_bind_group(0, &bind_group, &dynamic_offsets);
        match groups {
            Groups::Direct([x, y, z]) => pass.dispatch_workgroups(x, y, z),
            Groups::Indirect(buf, off) => pass.dispatch_workgroups_indirect(buf.raw(), off),
        }
        batch.launches += 1;
        Ok(())
    }

    fn batch<'s>(&self, st: &'s mut State) -> &'s mut Batch {
        st.batch.get_or_insert_with(|| Batch {
            encoder: self.device.wgpu.create_command_encoder(&Default::default()),
            pass: None,
            uniform_bytes: Vec::new(),
            launches: 0,
            events: Vec::new(),
        })
    }

    fn pass(batch: &mut Batch) -> &mut wgpu::ComputePass<'static> {
        if batch.pass.is_none() {
            let pass = batch.encoder.begin_compute_pass(&Default::default()).forget_lifetime();
            batch.pass = Some(pass);
        }
        batch.pass.as_mut().unwrap()
    }

    /// Record a buffer-to-buffer copy.
    pub fn copy(&self, src: &Buffer, src_offset: u64, dst: &Buffer, dst_offset: u64, size: u64) -> Result<()> {
        self.device.check_alive()?;
        self.check_device(&src.device, "the source buffer")?;
        self.check_device(&dst.device, "the destination buffer")?;
        src.check_range(src_offset, size, "copy source")?;
        dst.check_range(dst_offset, size, "copy destination")?;
        if src_offset % 4 != 0 || dst_offset % 4 != 0 || size % 4 != 0 {
            bail!(Alignment, "copy offsets ({src_offset}, {dst_offset}) and size ({size}) must be multiples of 4");
        }
        if std::ptr::eq(src, dst) && src_offset < dst_offset + size && dst_offset < src_offset + size {
            bail!(InvalidArgument, "copy source and destination ranges overlap");
        }
        if size == 0 {
            return Ok(());
        }
        // wgpu rejects copies within one buffer: go through a scratch buffer.
        let scratch = if std::ptr::eq(src, dst) {
            let usage = super::buffer::Usage { storage: true, uniform: false, indirect: false };
            Some(Buffer::create_uninit(&self.device, size, usage)?.buffer)
        } else {
            None
        };
        let mut st = self.state.lock().unwrap();
        let batch = self.batch(&mut st);
        batch.pass = None;
        match &scratch {
            Some(tmp) => {
                batch.encoder.copy_buffer_to_buffer(src.raw(), src_offset, tmp.raw(), 0, size);
                batch.encoder.copy_buffer_to_buffer(tmp.raw(), 0, dst.raw(), dst_offset, size);
            }
            None => batch.encoder.copy_buffer_to_buffer(src.raw(), src_offset, dst.raw(), dst_offset, size),
        }
        Ok(())
    }

    /// Record an event: a point in the stream that can be waited on, with a
    /// GPU timestamp where the adapter has them.
    pub fn record_event(self: &Arc<Self>) -> Result<Arc<Event>> {
        self.device.check_alive()?;
        let event = Event::new(self)?;
        let mut st = self.state.lock().unwrap();
        let features = self.device.features;
        let batch = self.batch(&mut st);
        if let Some(q) = event.query_set() {
            if features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES) {
                Self::pass(batch).write_timestamp(q, 0);
            } else {
                batch.pass = None;
                batch.encoder.write_timestamp(q, 0);
            }
        }
        batch.events.push(event.clone());
        Ok(event)
    }

    /// Submit what has been recorded. Does not wait.
    pub fn flush(&self) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        self.flush_locked(&mut st)
    }

    fn flush_locked(&self, st: &mut State) -> Result<()> {
        let Some(mut batch) = st.batch.take() else { return Ok(()) };
        let dev = &self.device;
        batch.pass = None;
        for ev in &batch.events {
            ev.encode_resolve(&mut batch.encoder);
        }
        let uniforms = std::mem::take(&mut batch.uniform_bytes);
        let result = dev.scoped(|| {
            let cmd = batch.encoder.finish();
            if !uniforms.is_empty() {
                dev.queue.write_buffer(&st.arena.as_ref().unwrap().0, 0, &uniforms);
            }
            dev.queue.submit([cmd])
        });
        let result = match (result, dev.take_uncaptured()) {
            (Ok(_), Some(msg)) => Err(Error::Validation(msg)),
            (r, _) => r,
        };
        match result {
            Ok(index) => {
                for ev in &batch.events {
                    ev.set_submitted(index.clone());
                }
                st.last_submission = Some(index);
                Ok(())
            }
            Err(e) => {
                for ev in &batch.events {
                    ev.set_failed(e.clone());
                }
                dev.check_alive()?;
                Err(e)
            }
        }
    }

    /// Flush and block until this stream's work has finished on the GPU.
    pub fn synchronize(&self) -> Result<()> {
        self.device.check_alive()?;
        let index = {
            let mut st = self.state.lock().unwrap();
            self.flush_locked(&mut st)?;
            st.last_submission.clone()
        };
        match index {
            Some(i) => self.device.wait_for(i),
            None => Ok(()),
        }
    }
}
