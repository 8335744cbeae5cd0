//! What a capturing stream notes beside each recorded command, so that a
//! graph can rebuild the command's bind group for another stream or another
//! binding table: which buffers (slots) each binding refers to, and where
//! each launch's parameters sit in the captured uniform bytes.

use super::batch::Cmd;
use super::buffer::Buffer;
use super::graph_scalars::OpScalar;
use super::indirect_counts::COUNTS_PARAMS;
use super::kernel::{BindingKind, Kernel};
use super::lease::Lease;
use super::stream::Bind;
use std::collections::HashMap;
use std::sync::Arc;

/// One allocation a graph uses: a caller's buffer or a library scratch.
pub struct Slot {
    pub lease: Arc<Lease>,
    /// The buffer's size as its creator asked for it.
    pub size: u64,
    /// Bound as a kernel's uniform buffer: a replacement needs uniform usage.
    pub uniform: bool,
    /// A launch's indirect counts: a replacement needs indirect usage.
    pub indirect: bool,
}

/// Where a binding's buffer comes from at replay.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Slot(u32),
    /// The replaying stream's uniform arena.
    Arena,
}

#[derive(Clone, Copy)]
pub struct Entry {
    pub binding: u32,
    pub source: Source,
    pub offset: u64,
    pub size: u64,
    /// Bound as writable storage (a buffer may then appear in no other entry).
    pub writable: bool,
}

/// A launch's dynamic uniform offset.
#[derive(Clone, Copy)]
pub enum UniformAt {
    None,
    /// At this byte offset in the graph's uniform bytes (the arena at replay).
    Arena(u32),
    /// A caller's buffer (a slot) at this fixed offset.
    Fixed(u32),
}

/// The capture's note of one recorded command, in recording order.
pub enum Step {
    Dispatch {
        layout: wgpu::BindGroupLayout,
        entries: Vec<Entry>,
        uniform: UniformAt,
        /// Indirect counts: the slot of the checked counts' buffer.
        indirect: Option<u32>,
    },
    Copy {
        src: u32,
        dst: u32,
    },
}

#[derive(Default)]
pub struct CaptureLog {
    pub slots: Vec<Slot>,
    slot_of: HashMap<u64, u32>,
    pub steps: Vec<Step>,
    /// Each launch's parameters in the uniform bytes: (offset, length);
    /// None where they may not be patched: a library kernel's, or a
    /// launch whose uniform is a caller's buffer or that has none.
    pub launches: Vec<Option<(u32, u32)>>,
    /// Each launch's parameters in the uniform bytes, library kernels'
    /// included (where built-in operators' replay scalars are written).
    pub params_at: Vec<Option<(u32, u32)>>,
    /// Built-in operators' replay scalars, in declaration order.
    pub op_scalars: Vec<OpScalar>,
    /// The scalars of the operator calls being recorded now (innermost last).
    pub open: Vec<u32>,
    /// The checked counts' slot, for the launch noted next.
    pending_indirect: Option<u32>,
}

impl CaptureLog {
    /// The slot of `buffer`'s allocation, added on first use.
    pub fn slot(&mut self, buffer: &Buffer) -> u32 {
        let id = buffer.alloc_id();
        if let Some(&s) = self.slot_of.get(&id) {
            return s;
        }
        let s = self.slots.len() as u32;
        self.slots.push(Slot { lease: buffer.lease().clone(), size: buffer.size, uniform: false, indirect: false });
        self.slot_of.insert(id, s);
        s
    }

    /// Whether the capture uses the allocation `alloc_id`.
    pub fn uses(&self, alloc_id: u64) -> bool {
        self.slot_of.contains_key(&alloc_id)
    }

    /// Note a launch recorded with these (checked) bindings. `storage` are
    /// the storage ranges as bound: (binding, offset, size); `uniform` is
    /// (binding, window, dynamic offset, from the arena, params length).
    pub fn note_launch(
        &mut self,
        kernel: &Kernel,
        binds: &[Bind],
        storage: &[(u32, u64, u64)],
        uniform: Option<(u32, u64, u32, bool, u32)>,
        caller: bool,
    ) {
        let mut entries = Vec::with_capacity(storage.len() + 1);
        for &(binding, offset, size) in storage {
            let buffer = binds.iter().find(|b| b.binding == binding).expect("checked binding").buffer;
            let writable =
                kernel.bindings.iter().any(|i| i.binding == binding && i.kind == BindingKind::StorageReadWrite);
            entries.push(Entry { binding, source: Source::Slot(self.slot(buffer)), offset, size, writable });
        }
        let mut at = UniformAt::None;
        let mut params = None;
        let mut params_at = None;
        if let Some((binding, window, offset, from_arena, len)) = uniform {
            let source = if from_arena {
                at = UniformAt::Arena(offset);
                params_at = Some((offset, len));
                params = caller.then_some((offset, len));
                Source::Arena
            } else {
                let buffer = binds.iter().find(|b| b.binding == binding).expect("checked uniform").buffer;
                let s = self.slot(buffer);
                self.slots[s as usize].uniform = true;
                at = UniformAt::Fixed(offset);
                Source::Slot(s)
            };
            entries.push(Entry { binding, source, offset: 0, size: window, writable: false });
        }
        entries.sort_by_key(|e| e.binding);
        let indirect = self.pending_indirect.take();
        self.steps.push(Step::Dispatch { layout: kernel.layout.clone(), entries, uniform: at, indirect });
        self.launches.push(params);
        self.params_at.push(params_at);
    }

    /// The launch just noted was recorded with `params` (fields: name,
    /// offset, size): it is a site of every open replay scalar it holds.
    pub fn note_scalar_sites(&mut self, params: &[u8], fields: &[(&'static str, usize, usize)]) {
        let launch = self.launches.len() as u32 - 1;
        if self.params_at[launch as usize].is_none() {
            return;
        }
        for &i in &self.open {
            self.op_scalars[i as usize].note_launch(launch, params, fields);
        }
    }

    /// Note the check of indirect counts at `offset` in `buf` (recorded as
    /// `cmd`, see `indirect_counts`): bound from an aligned start, it copies
    /// them into `args`, which the launch noted next reads.
    pub(super) fn note_counts_check(
        &mut self,
        layout: wgpu::BindGroupLayout,
        buf: &Buffer,
        offset: u64,
        align: u64,
        args: &Buffer,
        cmd: &Cmd,
    ) {
        let start = offset / align * align;
        let (src, args) = (self.slot(buf), self.slot(args));
        self.slots[src as usize].indirect = true;
        let Cmd::Dispatch { uniform_offset: Some(at), .. } = cmd else {
            unreachable!("a counts check is a dispatch with parameters")
        };
        let entries = vec![
            Entry { binding: 0, source: Source::Slot(src), offset: start, size: offset + 12 - start, writable: false },
            Entry { binding: 1, source: Source::Slot(args), offset: 0, size: 12, writable: true },
            Entry { binding: 2, source: Source::Arena, offset: 0, size: COUNTS_PARAMS, writable: false },
        ];
        self.steps.push(Step::Dispatch { layout, entries, uniform: UniformAt::Arena(*at), indirect: None });
        self.pending_indirect = Some(args);
    }

    /// Note a copy between two allocations.
    pub fn note_copy(&mut self, src: &Buffer, dst: &Buffer) {
        let (src, dst) = (self.slot(src), self.slot(dst));
        self.steps.push(Step::Copy { src, dst });
    }
}
