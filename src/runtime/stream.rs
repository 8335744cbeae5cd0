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
use super::graph_capture::CaptureLog;
use super::indirect_counts::{self, COUNTS_PARAMS};
use super::kernel::Kernel;
use super::profiler::{OpCall, Profile, Profiler};
use super::stream_scratch::ScratchCache;
use crate::bail;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Created when profiling is first turned on; kept (with its records)
    /// when it is turned off.
    profiler: Option<Box<Profiler>>,
    /// While capturing, `batch` holds the captured commands (never
    /// submitted) and this notes what a graph needs to replay them.
    capture: Option<CaptureLog>,
}

pub struct StreamShared {
    pub device: Arc<Device>,
    pub id: u64,
    state: Mutex<State>,
    /// Whether launches are profiled (read without the lock: one branch when off).
    profiling: AtomicBool,
    /// Whether the stream is capturing (read without the lock by operators
    /// that declare replay scalars: one branch when not).
    capturing: AtomicBool,
    /// Scratch reused in stream order (stream_scratch.rs).
    scratch: Mutex<ScratchCache>,
}

/// An operator call being recorded on a profiled stream; ends when dropped.
pub struct CallScope<'a>(Option<&'a StreamShared>);

impl Drop for CallScope<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.0 {
            if let Some(p) = s.state.lock().unwrap().profiler.as_mut() {
                p.end_call();
            }
        }
    }
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
                profiler: None,
                capture: None,
            }),
            profiling: AtomicBool::new(false),
            capturing: AtomicBool::new(false),
            scratch: Mutex::new(ScratchCache::default()),
        });
        device.register_stream(&s);
        Ok(s)
    }

    pub(super) fn scratch_cache(&self) -> &Mutex<ScratchCache> {
        &self.scratch
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
        self.launch_as(kernel, binds, params, groups, false)
    }

    /// `launch` of a caller's own kernel: a graph may patch its parameters
    /// (never a library kernel's, whose indexing trusts them).
    pub fn launch_from_caller(
        &self,
        kernel: &Kernel,
        binds: &[Bind],
        params: Option<&[u8]>,
        groups: Groups,
    ) -> Result<()> {
        self.launch_as(kernel, binds, params, groups, true)
    }

    fn launch_as(
        &self,
        kernel: &Kernel,
        binds: &[Bind],
        params: Option<&[u8]>,
        groups: Groups,
        caller: bool,
    ) -> Result<()> {
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
        // A capture is never flushed, and its launches are not profiled
        // (a graph replays dispatches, not timestamps).
        let profiled = self.profiling() && st.capture.is_none();
        let profile_full = profiled && st.profiler.as_ref().is_some_and(|p| p.set_full());
        if st.capture.is_some() {
            capture_limit(used + own_uniform + counts_uniform)?;
        } else if used + own_uniform + counts_uniform > ARENA_BYTES
            || st.batch.launches >= MAX_BATCH_LAUNCHES
            || profile_full
        {
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
            // `binding::check` validated everything the GPU layer checks:
            // no error scopes on this per-launch path (a new buffer is a new
            // bind group).
            dev.unscoped(|| dev.wgpu.create_bind_group(&desc))
        })?;
        let indirect = match &groups {
            Groups::Indirect(buf, off) => {
                Some((*buf, indirect_counts::prepare(dev, &mut st.indirect_args, buf, *off, arena.as_ref().unwrap())?))
            }
            Groups::Direct(_) => None,
        };

        let stamps = match (&groups, profiled) {
            (_, false) => None,
            (Groups::Direct(g), true) => self.profile_add(&mut st, &kernel.entry_point, *g)?,
            (Groups::Indirect(..), true) => self.profile_add(&mut st, &kernel.entry_point, [0; 3])?,
        };
        // A captured counts check is rebuilt at replay from its layout.
        let check_layout = match (&groups, st.capture.is_some()) {
            (Groups::Indirect(..), true) => Some(indirect_counts::layout(dev)?),
            _ => None,
        };

        // Record: nothing below fails.
        let State { batch, capture, indirect_args, .. } = &mut *st;
        let stamp_after = stamps.map(|(before, after)| {
            batch.cmds.push(before);
            after
        });
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
        batch.cmds.extend(stamp_after);
        for b in binds {
            batch.hold(b.buffer.lease());
        }
        batch.launches += 1;
        if let Some(log) = capture {
            if let (Groups::Indirect(buf, off), Some(args), Some(layout)) =
                (&groups, indirect_args.as_ref(), check_layout)
            {
                // The counts check, recorded just before this launch.
                let check = &batch.cmds[batch.cmds.len() - 2];
                let align = dev.limits.min_storage_buffer_offset_alignment as u64;
                log.note_counts_check(layout, buf, *off, align, args, check);
            }
            let storage: Vec<(u32, u64, u64)> = storage.iter().map(|(b, _, off, size)| (*b, *off, *size)).collect();
            let params_len = params.map_or(0, |p| p.len()) as u32;
            let uniform = uniform.map(|(binding, window, user)| {
                (binding, window, uniform_offset.unwrap(), user.is_none(), params_len.min(window as u32))
            });
            log.note_launch(kernel, binds, &storage, uniform, caller);
        }
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
        let stamps = if self.profiling() && st.capture.is_none() {
            if st.profiler.as_ref().is_some_and(|p| p.set_full()) {
                self.flush_unreported(&mut st)?;
            }
            self.profile_add(&mut st, "copy_buffer", [0; 3])?
        } else {
            None
        };
        let State { batch, capture, .. } = &mut *st;
        let stamp_after = stamps.map(|(before, after)| {
            batch.cmds.push(before);
            after
        });
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
                if let Some(log) = capture {
                    log.note_copy(src, tmp);
                    log.note_copy(tmp, dst);
                }
            }
            None => {
                batch.cmds.push(copy(src, src_offset, dst, dst_offset));
                if let Some(log) = capture {
                    log.note_copy(src, dst);
                }
            }
        }
        batch.cmds.extend(stamp_after);
        batch.hold(src.lease());
        batch.hold(dst.lease());
        Ok(())
    }

    /// Record a copy between raw allocations (the staging buffers of copies
    /// between devices), checked by the caller; `hold` are the leases the
    /// copy needs kept until it has run.
    pub(crate) fn copy_raw(
        &self,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        size: u64,
        hold: &[&Arc<super::lease::Lease>],
    ) -> Result<()> {
        self.device.check_alive()?;
        let mut st = self.state.lock().unwrap();
        let batch = &mut st.batch;
        batch.cmds.push(Cmd::Copy { src: src.clone(), src_offset, dst: dst.clone(), dst_offset, size });
        for l in hold {
            batch.hold(l);
        }
        Ok(())
    }

    /// Record an event: a point in the stream that can be waited on, with a
    /// GPU timestamp where the adapter has them.
    pub fn record_event(self: &Arc<Self>) -> Result<Arc<Event>> {
        self.device.check_alive()?;
        self.refuse_while_capturing("recording an event")?;
        let event = Event::new(&self.device, Arc::downgrade(self))?;
        self.push_event(&event);
        Ok(event)
    }

    /// Record an event for the library's own timing (the tuner): it has no
    /// link back to the stream, so it must be submitted (`finish_unreported`)
    /// before it is waited on.
    pub(crate) fn record_mark(&self) -> Result<Arc<Event>> {
        self.device.check_alive()?;
        self.refuse_while_capturing("recording an event")?;
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

    /// `flush_for_other`, returning the stream's last submission (the one
    /// that carries what was recorded so far), to wait for it.
    pub(crate) fn flush_for_other_index(&self) -> Result<Option<wgpu::SubmissionIndex>> {
        let mut st = self.state.lock().unwrap();
        self.flush_unreported(&mut st)?;
        Ok(st.last_submission.clone())
    }

    /// Whether anything is recorded and not yet submitted.
    pub(crate) fn has_work(&self) -> bool {
        let st = self.state.lock().unwrap();
        st.capture.is_none() && !st.batch.is_empty()
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
        if st.batch.is_empty() || st.capture.is_some() {
            return Ok(None);
        }
        let dev = &self.device;
        let State { batch, arena, last_submission, profiler, .. } = st;
        if let Some(resolve) = profiler.as_mut().and_then(|p| p.close_batch()) {
            batch.cmds.push(resolve);
        }
        let arena = arena.as_ref().map(|(b, _)| b);
        // Recording checked what the GPU layer checks; an error it reports
        // anyway fails `unscoped` and the batch is salvaged below.
        let result = dev.unscoped(|| {
            let cmd = encode(dev, &batch.cmds, &batch.events, true);
            write_uniforms(dev, arena, &batch.uniform_bytes);
            match extra {
                Some(extra) => dev.submit([cmd, extra()]),
                None => dev.submit([cmd]),
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
        if let Some(p) = profiler.as_mut() {
            p.batch_done(index.is_some());
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
        self.refuse_while_capturing("synchronizing")?;
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

/// The profiler (runtime/profiler.rs).
impl StreamShared {
    /// Whether launches recorded now are profiled.
    #[inline]
    pub fn profiling(&self) -> bool {
        self.profiling.load(Ordering::Relaxed)
    }

    /// Turn profiling on or off. Records made so far are kept either way.
    pub fn set_profiling(&self, on: bool) -> Result<()> {
        self.device.check_alive()?;
        let mut st = self.state.lock().unwrap();
        if on && st.profiler.is_none() {
            st.profiler = Some(Box::new(Profiler::new(&self.device)));
        }
        self.profiling.store(on, Ordering::Relaxed);
        Ok(())
    }

    /// Start an operator call: launches recorded until the scope is dropped
    /// belong to it. `call` runs only while profiling.
    pub fn profile_call(&self, call: impl FnOnce() -> OpCall) -> CallScope<'_> {
        if !self.profiling() {
            return CallScope(None);
        }
        match self.state.lock().unwrap().profiler.as_mut() {
            Some(p) => p.begin_call(call()),
            None => return CallScope(None),
        }
        CallScope(Some(self))
    }

    /// Name the kernel variant of the next launch. `name` runs only while profiling.
    pub fn profile_kernel(&self, name: impl FnOnce() -> String) {
        if self.profiling() {
            if let Some(p) = self.state.lock().unwrap().profiler.as_mut() {
                p.set_next_kernel(name());
            }
        }
    }

    fn profile_add(
        &self,
        st: &mut State,
        fallback: &str,
        groups: [u32; 3],
    ) -> Result<Option<(super::batch::Cmd, super::batch::Cmd)>> {
        match st.profiler.as_mut() {
            Some(p) => p.add(&self.device, fallback, groups),
            None => Ok(None),
        }
    }

    /// Everything profiled since profiling was first turned on or last
    /// cleared (nothing if it never was), with GPU times: submits what is recorded and blocks until
    /// the stream's work has run (an error of that work is kept for the
    /// stream's next flush or synchronize, as a host read does).
    pub fn profile_records(&self) -> Result<Profile> {
        self.finish_unreported()?;
        let mut st = self.state.lock().unwrap();
        let Some(p) = st.profiler.as_mut() else {
            return Ok(Profile::default());
        };
        p.read_back(&self.device)?;
        Ok(p.profile().clone())
    }

    /// Forget the records made so far.
    pub fn profile_clear(&self) {
        if let Some(p) = self.state.lock().unwrap().profiler.as_mut() {
            p.clear();
        }
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

/// What a capture cannot hold: more uniform bytes than one arena.
fn capture_limit(uniform_bytes: u64) -> Result<()> {
    if uniform_bytes > ARENA_BYTES {
        bail!(
            LimitExceeded,
            "a graph holds at most {ARENA_BYTES} bytes of launch parameters (at the adapter's uniform alignment each)"
        );
    }
    Ok(())
}

#[path = "stream_graph.rs"]
mod graph;

#[cfg(test)]
#[path = "stream_test_work.rs"]
mod test_work;

#[cfg(test)]
#[path = "stream_salvage_test.rs"]
mod salvage_test;

#[cfg(test)]
#[path = "stream_read_test.rs"]
mod read_test;
