//! Streams record launches, copies and events as a list of commands and
//! submit them in batches: on `flush`, when a host read or write needs the
//! work ordered before it, or when a batch is full. A batch is encoded into
//! one command buffer (consecutive launches share one compute pass) when it
//! is submitted. Per-launch uniform data goes into one arena buffer per
//! stream, bound at a dynamic offset, so repeated launches reuse their
//! cached bind group.
//!
//! Everything the GPU layer checks when a batch is submitted is checked when
//! a launch is recorded (see `binding`), so a batch is not expected to fail.
//! If one still does, its commands are encoded one by one and only those the
//! GPU layer rejects are dropped: no valid work is lost to another's error.

use super::batch::{encode, submit_one_by_one, write_uniforms, Batch, Cmd, Counts};
use super::bind_cache::{buffer_entry, BindKey};
use super::binding::{self, CheckedBindings};
use super::buffer::{Buffer, Usage};
use super::device::{next_id, Device};
use super::event::Event;
use super::indirect_counts::{self, COUNTS_PARAMS};
use super::kernel::Kernel;
use crate::bail;
use crate::error::{Error, Result};
use std::sync::{Arc, Mutex};

/// Bytes of uniform data one batch can carry; a full arena flushes the batch.
const ARENA_BYTES: u64 = 1 << 20;
/// Launches per batch before an automatic flush: early enough that the GPU
/// starts on a long recording while the host is still adding to it. On an
/// H200, 1000 small dependent operators took 4.7-5.0 us each (wall clock)
/// with 128, 5.3-6.3 with 32 or 64, 6.1 with 256 and 8.0-8.6 with 1024.
const MAX_BATCH_LAUNCHES: u32 = 128;

/// Encodes a command buffer to submit after a batch (see
/// `StreamShared::flush_for_other_with`); called at most once per submission.
pub type Extra<'a> = &'a dyn Fn() -> wgpu::CommandBuffer;

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

struct State {
    batch: Batch,
    arena: Option<(wgpu::Buffer, u64)>,
    /// Where launches with indirect counts read their checked counts.
    indirect_args: Option<Arc<Buffer>>,
    last_submission: Option<wgpu::SubmissionIndex>,
    /// An error of a batch that another call submitted (a host read or write,
    /// a full batch): reported by this stream's next flush or synchronize.
    pending_error: Option<Error>,
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
            state: Mutex::new(State {
                batch: Batch::default(),
                arena: None,
                indirect_args: None,
                last_submission: None,
                pending_error: None,
            }),
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

    /// Record one kernel launch. Everything that can fail happens before
    /// anything is recorded.
    pub fn launch(&self, kernel: &Kernel, binds: &[Bind], params: Option<&[u8]>, groups: Groups) -> Result<()> {
        let dev = &self.device;
        dev.check_alive()?;
        if kernel.device_id != dev.id {
            bail!(DeviceMismatch, "the kernel belongs to another device than the stream");
        }
        let CheckedBindings { mut ranges, storage, uniform } = binding::check(dev, kernel, binds, params, &groups)?;
        let mut st = self.state.lock().unwrap();
        let align = dev.limits.min_uniform_buffer_offset_alignment as u64;
        let own_uniform = match &uniform {
            Some((_, window, None)) => window + align,
            _ => 0,
        };
        let counts_uniform = if matches!(groups, Groups::Indirect(..)) { COUNTS_PARAMS + align } else { 0 };
        let used = st.batch.uniform_bytes.len() as u64;
        if used + own_uniform + counts_uniform > ARENA_BYTES || st.batch.launches >= MAX_BATCH_LAUNCHES {
            self.flush_unreported(&mut st)?;
        }
        let arena = if own_uniform + counts_uniform > 0 { Some(self.arena(&mut st)?) } else { None };

        let mut uniform_entry = None;
        if let Some((binding, window, user)) = uniform {
            let (buf, id) = match user {
                Some((b, _)) => (b.raw().clone(), b.alloc_id()),
                None => arena.clone().unwrap(),
            };
            ranges.push((binding, id, 0, window));
            uniform_entry = Some((binding, buf, window));
        }
        ranges.sort();
        let bind_group = dev.bind_groups.get_or_create(BindKey { layout_id: kernel.id, ranges }, || {
            let mut entries: Vec<wgpu::BindGroupEntry> =
                storage.iter().map(|(binding, buf, off, size)| buffer_entry(*binding, buf, *off, *size)).collect();
            if let Some((binding, buf, window)) = &uniform_entry {
                entries.push(buffer_entry(*binding, buf, 0, *window));
            }
            let desc = wgpu::BindGroupDescriptor { label: None, layout: &kernel.layout, entries: &entries };
            dev.scoped(|| dev.wgpu.create_bind_group(&desc))
        })?;
        let indirect = match &groups {
            Groups::Indirect(buf, off) => {
                Some((*buf, indirect_counts::prepare(dev, &mut st.indirect_args, buf, *off, arena.as_ref().unwrap())?))
            }
            Groups::Direct(_) => None,
        };

        // Record: nothing below fails.
        let batch = &mut st.batch;
        let dispatch_groups = match (indirect, &groups) {
            (Some((buf, check)), _) => check.record(batch, buf, align),
            (None, Groups::Direct(g)) => Counts::Direct(*g),
            (None, Groups::Indirect(..)) => unreachable!("indirect counts are always checked"),
        };
        let uniform_offset = match uniform {
            Some((_, _, Some((_, off)))) => Some(off as u32),
            Some((_, window, None)) => Some(batch.uniform_slot(params.unwrap_or(&[]), window, align)),
            None => None,
        };
        batch.cmds.push(Cmd::Dispatch {
            pipeline: kernel.pipeline.clone(),
            bind_group,
            uniform_offset,
            groups: dispatch_groups,
        });
        for b in binds {
            batch.hold(b.buffer.lease());
        }
        batch.launches += 1;
        Ok(())
    }

    /// The stream's uniform arena (created on first use) and its id.
    fn arena(&self, st: &mut State) -> Result<(wgpu::Buffer, u64)> {
        if st.arena.is_none() {
            let dev = &self.device;
            let buf = dev.scoped(|| {
                dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("wgcompute uniform arena"),
                    size: ARENA_BYTES,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })?;
            st.arena = Some((buf, next_id()));
        }
        Ok(st.arena.clone().unwrap())
    }

    /// Record a buffer-to-buffer copy.
    pub fn copy(&self, src: &Buffer, src_offset: u64, dst: &Buffer, dst_offset: u64, size: u64) -> Result<()> {
        self.device.check_alive()?;
        self.check_device(&src.device, "the source buffer")?;
        self.check_device(&dst.device, "the destination buffer")?;
        src.check_range(src_offset, size, "copy source")?;
        dst.check_range(dst_offset, size, "copy destination")?;
        if !src_offset.is_multiple_of(4) || !dst_offset.is_multiple_of(4) || !size.is_multiple_of(4) {
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
            let usage = Usage { storage: true, uniform: false, indirect: false };
            Some(Buffer::create_uninit(&self.device, size, usage)?.buffer)
        } else {
            None
        };
        let mut st = self.state.lock().unwrap();
        let batch = &mut st.batch;
        let copy = |s: &Buffer, so, d: &Buffer, dof| Cmd::Copy {
            src: s.raw().clone(),
            src_offset: so,
            dst: d.raw().clone(),
            dst_offset: dof,
            size,
        };
        match &scratch {
            Some(tmp) => {
                batch.cmds.push(copy(src, src_offset, tmp, 0));
                batch.cmds.push(copy(tmp, 0, dst, dst_offset));
                batch.hold(tmp.lease());
            }
            None => batch.cmds.push(copy(src, src_offset, dst, dst_offset)),
        }
        batch.hold(src.lease());
        batch.hold(dst.lease());
        Ok(())
    }

    /// Record an event: a point in the stream that can be waited on, with a
    /// GPU timestamp where the adapter has them.
    pub fn record_event(self: &Arc<Self>) -> Result<Arc<Event>> {
        self.device.check_alive()?;
        let event = Event::new(&self.device, Arc::downgrade(self))?;
        self.push_event(&event);
        Ok(event)
    }

    /// Record an event for the library's own timing (the tuner): it has no
    /// link back to the stream, so it must be submitted (`finish_unreported`)
    /// before it is waited on.
    pub(crate) fn record_mark(&self) -> Result<Arc<Event>> {
        self.device.check_alive()?;
        let event = Event::new(&self.device, std::sync::Weak::new())?;
        self.push_event(&event);
        Ok(event)
    }

    fn push_event(&self, event: &Arc<Event>) {
        let mut st = self.state.lock().unwrap();
        let batch = &mut st.batch;
        if event.query_set().is_some() {
            batch.cmds.push(Cmd::Timestamp(batch.events.len()));
        }
        batch.events.push(event.clone());
    }

    /// Submit what has been recorded. Does not wait. Reports an error of
    /// this batch or of one submitted earlier by another call.
    pub fn flush(&self) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        let result = self.flush_locked(&mut st);
        let pending = st.pending_error.take();
        result.and(pending.map_or(Ok(()), Err))
    }

    /// Submit what has been recorded because another call needs it ordered
    /// before itself: an error of the batch is kept for this stream's next
    /// flush or synchronize; only a lost device is returned.
    pub(crate) fn flush_for_other(&self) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        self.flush_unreported(&mut st)
    }

    /// Like `flush_for_other`, and `extra` (a command buffer that must run
    /// after the batch: a host read's copy) goes in the same queue
    /// submission, saving one. Returns that submission, or `None` when
    /// `extra` was not submitted: the batch was empty, or the GPU layer
    /// rejected the submission and the batch's valid commands were
    /// resubmitted without it. The caller then submits `extra` itself,
    /// so that its own failure is reported to the caller.
    pub(crate) fn flush_for_other_with(&self, extra: Extra) -> Result<Option<wgpu::SubmissionIndex>> {
        let mut st = self.state.lock().unwrap();
        match self.flush_locked_with(&mut st, Some(extra)) {
            Err(e @ Error::DeviceLost(_)) => Err(e),
            Err(e) => {
                st.pending_error.get_or_insert(e);
                Ok(None)
            }
            Ok(carried) => Ok(carried),
        }
    }

    /// Whether anything is recorded and not yet submitted.
    pub(crate) fn has_work(&self) -> bool {
        !self.state.lock().unwrap().batch.is_empty()
    }

    fn flush_unreported(&self, st: &mut State) -> Result<()> {
        match self.flush_locked(st) {
            Err(e @ Error::DeviceLost(_)) => Err(e),
            Err(e) => {
                st.pending_error.get_or_insert(e);
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }

    fn flush_locked(&self, st: &mut State) -> Result<()> {
        self.flush_locked_with(st, None).map(|_| ())
    }

    /// Submit the batch (with `extra` after it, see `flush_for_other_with`).
    fn flush_locked_with(&self, st: &mut State, extra: Option<Extra>) -> Result<Option<wgpu::SubmissionIndex>> {
        if st.batch.is_empty() {
            return Ok(None);
        }
        let dev = &self.device;
        let State { batch, arena, last_submission, .. } = st;
        let arena = arena.as_ref().map(|(b, _)| b);
        let result = dev.scoped(|| {
            let cmd = encode(dev, &batch.cmds, &batch.events, true);
            write_uniforms(dev, arena, &batch.uniform_bytes);
            match extra {
                Some(extra) => dev.queue.submit([cmd, extra()]),
                None => dev.queue.submit([cmd]),
            }
        });
        let carried = result.as_ref().ok().filter(|_| extra.is_some()).cloned();
        let (index, error) = match result {
            Ok(index) => (Some(index), None),
            Err(_) if dev.check_alive().is_err() => (None, dev.check_alive().err()),
            Err(_) => submit_one_by_one(dev, batch, arena),
        };
        for ev in &batch.events {
            match &index {
                Some(i) => ev.set_submitted(i.clone()),
                None => ev.set_failed(error.clone().unwrap()),
            }
        }
        if let Some(i) = index {
            *last_submission = Some(i);
        }
        let capacity = batch.leases.len();
        let leases = std::mem::replace(&mut batch.leases, Vec::with_capacity(capacity));
        dev.in_flight.hold(&dev.queue, leases);
        batch.cmds.clear();
        batch.uniform_bytes.clear();
        batch.events.clear();
        batch.launches = 0;
        error.map_or(Ok(carried), Err)
    }

    /// Submit what has been recorded and block until this stream's work has
    /// finished on the GPU, keeping a batch's error for the stream's next
    /// flush or synchronize (as `flush_for_other`); only a lost device or a
    /// timeout is returned. For the library's own timing.
    pub(crate) fn finish_unreported(&self) -> Result<()> {
        let index = {
            let mut st = self.state.lock().unwrap();
            self.flush_unreported(&mut st)?;
            st.last_submission.clone()
        };
        match index {
            Some(i) => self.device.wait_for(i),
            None => Ok(()),
        }
    }

    /// Flush and block until this stream's work has finished on the GPU
    /// (at most the device's GPU timeout).
    pub fn synchronize(&self) -> Result<()> {
        self.device.check_alive()?;
        let (index, error) = {
            let mut st = self.state.lock().unwrap();
            let result = self.flush_locked(&mut st);
            let error = result.err().or(st.pending_error.take());
            (st.last_submission.clone(), error)
        };
        // What was submitted has run when this returns, even after an error.
        if let Some(i) = index {
            self.device.wait_for(i)?;
        }
        error.map_or(Ok(()), Err)
    }
}

impl Drop for StreamShared {
    fn drop(&mut self) {
        // Its bind groups would keep the arena (1 MiB) alive.
        if let Some((_, id)) = &self.state.get_mut().unwrap().arena {
            self.device.bind_groups.forget_allocation(*id);
        }
    }
}

#[cfg(test)]
#[path = "stream_test_work.rs"]
mod test_work;

#[cfg(test)]
#[path = "stream_salvage_test.rs"]
mod salvage_test;

#[cfg(test)]
#[path = "stream_read_test.rs"]
mod read_test;
