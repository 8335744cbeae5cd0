//! A stream's side of graphs: capturing what it records into a graph, and
//! replaying a graph's commands into its batch.

use super::{State, StreamShared, ARENA_BYTES, MAX_BATCH_LAUNCHES};
use crate::bail;
use crate::error::Result;
use crate::runtime::batch::Cmd;
use crate::runtime::graph::{Graph, Rebind, ScalarPatch, ValuePatch};
use crate::runtime::graph_capture::CaptureLog;
use crate::runtime::graph_scalars::{OpScalar, ScalarDecl};
use std::sync::atomic::Ordering;

/// The replay scalars an operator call declared; closed when dropped.
pub struct ScalarScope<'a> {
    stream: Option<&'a StreamShared>,
    opened: usize,
}

impl Drop for ScalarScope<'_> {
    #[inline]
    fn drop(&mut self) {
        let Some(s) = self.stream else { return };
        let mut st = s.state.lock().unwrap();
        if let Some(log) = st.capture.as_mut() {
            for _ in 0..self.opened {
                if let Some(i) = log.open.pop() {
                    log.op_scalars[i as usize].close();
                }
            }
        }
    }
}

impl StreamShared {
    /// Start capturing: what is recorded from now on goes into a graph
    /// (`end_capture`) instead of being submitted. Work recorded before is
    /// submitted first.
    pub fn begin_capture(&self) -> Result<()> {
        self.device.check_alive()?;
        let mut st = self.state.lock().unwrap();
        if st.capture.is_some() {
            bail!(InvalidOperation, "the stream is already capturing (captures do not nest)");
        }
        self.flush_unreported(&mut st)?;
        st.capture = Some(CaptureLog::default());
        self.capturing.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Stop capturing and return what was captured.
    pub fn end_capture(&self) -> Result<Graph> {
        let mut st = self.state.lock().unwrap();
        let Some(log) = st.capture.take() else {
            bail!(InvalidOperation, "the stream is not capturing (wgc_stream_begin_capture first)");
        };
        self.capturing.store(false, Ordering::Relaxed);
        let batch = std::mem::take(&mut st.batch);
        let arena_id = st.arena.as_ref().map_or(0, |a| a.1);
        drop(st);
        // The capture's leases move to the graph's slots (the log holds them).
        Ok(Graph::new(&self.device, batch.cmds, batch.uniform_bytes, log, arena_id))
    }

    /// Declare the replay scalars of the operator call being recorded (see
    /// `graph_scalars`); `decls` runs only while capturing. Launches
    /// recorded until the scope is dropped are searched for them.
    #[inline]
    pub fn replay_scalars(&self, decls: impl FnOnce() -> Vec<ScalarDecl>) -> ScalarScope<'_> {
        if !self.capturing.load(Ordering::Relaxed) {
            return ScalarScope { stream: None, opened: 0 };
        }
        self.open_scalars(decls())
    }

    #[cold]
    fn open_scalars(&self, decls: Vec<ScalarDecl>) -> ScalarScope<'_> {
        let mut st = self.state.lock().unwrap();
        let Some(log) = st.capture.as_mut() else {
            return ScalarScope { stream: None, opened: 0 };
        };
        for d in &decls {
            log.open.push(log.op_scalars.len() as u32);
            log.op_scalars.push(OpScalar::new(d.clone()));
        }
        ScalarScope { stream: Some(self), opened: decls.len() }
    }

    /// The launch just recorded had these parameters (bytes and the fields
    /// of its uniform struct): note where it holds open replay scalars.
    /// `fields` runs only while an operator's replay scalars are open.
    #[inline]
    pub fn note_scalar_sites(&self, params: &[u8], fields: impl FnOnce() -> Vec<(&'static str, usize, usize)>) {
        if self.capturing.load(Ordering::Relaxed) {
            self.note_sites(params, fields);
        }
    }

    #[cold]
    fn note_sites(&self, params: &[u8], fields: impl FnOnce() -> Vec<(&'static str, usize, usize)>) {
        let mut st = self.state.lock().unwrap();
        if let Some(log) = st.capture.as_mut().filter(|l| !l.open.is_empty()) {
            log.note_scalar_sites(params, &fields());
        }
    }

    /// Replay scalars declared so far, or None when not capturing.
    pub fn captured_scalars(&self) -> Option<u32> {
        self.state.lock().unwrap().capture.as_ref().map(|c| c.op_scalars.len() as u32)
    }

    pub fn is_capturing(&self) -> bool {
        self.state.lock().unwrap().capture.is_some()
    }

    /// Launches captured so far, or None when not capturing.
    pub fn captured_launches(&self) -> Option<u32> {
        self.state.lock().unwrap().capture.as_ref().map(|c| c.launches.len() as u32)
    }

    /// Whether this stream's capture uses the allocation `alloc_id`.
    pub(crate) fn capture_uses(&self, alloc_id: u64) -> bool {
        self.state.lock().unwrap().capture.as_ref().is_some_and(|c| c.uses(alloc_id))
    }

    pub(super) fn refuse_while_capturing(&self, what: &str) -> Result<()> {
        if self.is_capturing() {
            bail!(InvalidOperation, "{what} is not allowed on a capturing stream (it cannot be part of a graph)");
        }
        Ok(())
    }

    /// Record `graph`'s commands, with `rebinds` in place of captured
    /// buffers and `patches` written over captured parameters. Everything is
    /// checked before anything is recorded; the whole replay goes into one
    /// batch, so that no other stream's work runs between its commands.
    pub fn replay(&self, graph: &Graph, rebinds: &[Rebind], patches: &[ScalarPatch]) -> Result<()> {
        self.replay_with(graph, rebinds, patches, &[])
    }

    /// `replay`, with new values for built-in operators' replay scalars.
    pub fn replay_with(
        &self,
        graph: &Graph,
        rebinds: &[Rebind],
        patches: &[ScalarPatch],
        values: &[ValuePatch],
    ) -> Result<()> {
        let dev = &self.device;
        dev.check_alive()?;
        if !dev.same(&graph.device) {
            bail!(DeviceMismatch, "the graph was captured on another device than the stream's");
        }
        let table = graph.check_replay(rebinds, patches)?;
        let values = if values.is_empty() { Vec::new() } else { graph.check_values(values)? };
        let mut st = self.state.lock().unwrap();
        if st.capture.is_some() {
            bail!(InvalidOperation, "a graph cannot be replayed onto a capturing stream");
        }
        let align = dev.limits.min_uniform_buffer_offset_alignment as u64;
        let start = (st.batch.uniform_bytes.len() as u64).div_ceil(align) * align;
        if start + graph.uniforms.len() as u64 > ARENA_BYTES || st.batch.launches >= MAX_BATCH_LAUNCHES {
            self.flush_unreported(&mut st)?;
        }
        let arena = if graph.uniforms.is_empty() { None } else { Some(self.arena(&mut st)?) };
        let inst = graph.instance(arena.as_ref(), table, rebinds)?;

        // Record: nothing below fails.
        let State { batch, .. } = &mut *st;
        let base = (batch.uniform_bytes.len() as u64).div_ceil(align) * align;
        batch.uniform_bytes.resize(base as usize, 0);
        batch.uniform_bytes.extend_from_slice(&graph.uniforms);
        for p in patches {
            let (at, _) = graph.launches[p.launch as usize].unwrap();
            let start = base as usize + at as usize + p.offset as usize;
            batch.uniform_bytes[start..start + p.bytes.len()].copy_from_slice(p.bytes);
        }
        for (word, sites) in &values {
            for &at in sites {
                let start = base as usize + at;
                batch.uniform_bytes[start..start + 4].copy_from_slice(&word.to_le_bytes());
            }
        }
        // One command: encoded from the graph's resolved commands when the
        // batch is submitted (nothing per dispatch here).
        batch.cmds.push(Cmd::Replay { cmds: graph.cmds.clone(), inst, base: base as u32 });
        for lease in graph.leases() {
            batch.hold(lease);
        }
        for r in rebinds {
            batch.hold(r.buffer.lease());
        }
        batch.launches += graph.dispatch_count();
        Ok(())
    }
}
