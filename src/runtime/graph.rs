//! Graphs: the commands a stream recorded while capturing, resolved once
//! (pipelines, bind groups, uniform bytes, workgroup counts), replayed onto
//! a stream with no checks or lookups per command.
//!
//! A replay takes its uniforms in the replaying stream's arena, so a graph's
//! bind groups depend on that arena and on the buffers a binding table puts
//! in place of captured ones. Each combination is an `Instance`, built on
//! first use (only the commands that a rebinding touches get new bind
//! groups) and kept in a small most-recently-used list.

use super::batch::{Cmd, Counts};
use super::bind_cache::buffer_entry;
use super::buffer::Buffer;
use super::device::Device;
use super::graph_capture::{CaptureLog, Entry, Slot, Source, Step, UniformAt};
use super::graph_scalars::OpScalar;
use super::lease::Lease;
use crate::bail;
use crate::error::Result;
use std::sync::{Arc, Mutex};

/// Instances kept per graph (arenas of streams times binding tables).
const MAX_INSTANCES: usize = 16;

pub(super) enum GraphCmd {
    Dispatch {
        pipeline: wgpu::ComputePipeline,
        layout: wgpu::BindGroupLayout,
        entries: Vec<Entry>,
        uniform: UniformAt,
        groups: GraphCounts,
    },
    Copy {
        src: u32,
        src_offset: u64,
        dst: u32,
        dst_offset: u64,
        size: u64,
    },
}

pub(super) enum GraphCounts {
    Direct([u32; 3]),
    /// Read from the start of this slot (checked counts).
    Indirect(u32),
}

/// A graph's bind groups for one arena and one binding table.
pub(super) struct Instance {
    arena_id: u64,
    /// (slot, allocation id) of each replaced slot, by slot.
    table: Vec<(u32, u64)>,
    /// Per command: its bind group (None for copies).
    pub groups: Vec<Option<wgpu::BindGroup>>,
    /// Per slot: the buffer in place.
    pub raws: Vec<wgpu::Buffer>,
}

pub struct Graph {
    pub device: Arc<Device>,
    /// Shared with the batches its replays are in (encoded from there).
    pub(super) cmds: Arc<Vec<GraphCmd>>,
    pub(super) slots: Vec<Slot>,
    /// The captured uniform bytes (launch parameters at aligned offsets).
    pub(super) uniforms: Vec<u8>,
    pub(super) launches: Vec<Option<(u32, u32)>>,
    /// Every launch's parameters in `uniforms` (built-in ones' included).
    pub(super) params_at: Vec<Option<(u32, u32)>>,
    /// Built-in operators' replay scalars, by index.
    pub(super) op_scalars: Vec<OpScalar>,
    pub(super) dispatches: u32,
    instances: Mutex<Vec<Arc<Instance>>>,
}

/// A replacement for one slot at replay.
pub struct Rebind<'a> {
    pub slot: u32,
    pub buffer: &'a Buffer,
}

/// A new value for one of the built-in operators' replay scalars.
#[derive(Clone, Copy)]
pub struct ValuePatch {
    pub index: u32,
    pub value: f64,
}

/// New bytes for part of one captured launch's parameters.
pub struct ScalarPatch<'a> {
    pub launch: u32,
    pub offset: u32,
    pub bytes: &'a [u8],
}

impl Graph {
    /// A graph from a capture's recorded commands and notes; `arena` is the
    /// capturing stream's (its bind groups become the first instance).
    pub(super) fn new(
        device: &Arc<Device>,
        cmds: Vec<Cmd>,
        uniforms: Vec<u8>,
        log: CaptureLog,
        arena_id: u64,
    ) -> Graph {
        let CaptureLog { slots, steps, launches, params_at, op_scalars, .. } = log;
        let mut out = Vec::with_capacity(cmds.len());
        let mut groups = Vec::with_capacity(cmds.len());
        let mut dispatches = 0;
        for (cmd, step) in cmds.into_iter().zip(steps) {
            match (cmd, step) {
                (
                    Cmd::Dispatch { pipeline, bind_group, groups: g, .. },
                    Step::Dispatch { layout, entries, uniform, indirect },
                ) => {
                    let counts = match (g, indirect) {
                        (Counts::Direct(g), _) => GraphCounts::Direct(g),
                        (Counts::Indirect(_), Some(slot)) => GraphCounts::Indirect(slot),
                        (Counts::Indirect(_), None) => unreachable!("a capture notes where indirect counts are"),
                    };
                    out.push(GraphCmd::Dispatch { pipeline, layout, entries, uniform, groups: counts });
                    groups.push(Some(bind_group));
                    dispatches += 1;
                }
                (Cmd::Copy { src_offset, dst_offset, size, .. }, Step::Copy { src, dst }) => {
                    out.push(GraphCmd::Copy { src, src_offset, dst, dst_offset, size });
                    groups.push(None);
                }
                _ => unreachable!("a capture notes every command it records, in order"),
            }
        }
        let raws = slots.iter().map(|s| s.lease.raw().clone()).collect();
        let first = Arc::new(Instance { arena_id, table: Vec::new(), groups, raws });
        Graph {
            device: device.clone(),
            cmds: Arc::new(out),
            slots,
            uniforms,
            launches,
            params_at,
            op_scalars,
            dispatches,
            instances: Mutex::new(vec![first]),
        }
    }

    pub fn slot_count(&self) -> u32 {
        self.slots.len() as u32
    }

    pub fn dispatch_count(&self) -> u32 {
        self.dispatches
    }

    pub fn launch_count(&self) -> u32 {
        self.launches.len() as u32
    }

    pub fn op_scalar_count(&self) -> u32 {
        self.op_scalars.len() as u32
    }

    /// Replay scalar `index`: its declaration and why a replay may not
    /// change it (None: it may).
    pub fn op_scalar(&self, index: u32) -> Result<&OpScalar> {
        match self.op_scalars.get(index as usize) {
            Some(s) => Ok(s),
            None => bail!(OutOfRange, "replay scalar {index} is past the graph's {}", self.op_scalars.len()),
        }
    }

    /// Check replay values; returns each one's encoded word with its sites'
    /// byte positions in the graph's uniform bytes.
    pub(super) fn check_values(&self, values: &[ValuePatch]) -> Result<Vec<(u32, Vec<usize>)>> {
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            let s = self.op_scalar(v.index)?;
            let word = s.encode(v.index, v.value)?;
            let at = s
                .sites
                .iter()
                .map(|&(launch, off)| {
                    self.params_at[launch as usize].expect("a site has parameters").0 as usize + off as usize
                })
                .collect();
            out.push((word, at));
        }
        Ok(out)
    }

    /// The slot of `buffer`'s allocation, if the graph uses it.
    pub fn slot_of(&self, buffer: &Buffer) -> Option<u32> {
        let id = buffer.alloc_id();
        self.slots.iter().position(|s| s.lease.id() == id).map(|i| i as u32)
    }

    /// Check a replay's binding table and scalar patches against the graph;
    /// returns the table sorted by slot, as (slot, allocation id).
    pub(super) fn check_replay(&self, rebinds: &[Rebind], patches: &[ScalarPatch]) -> Result<Vec<(u32, u64)>> {
        let mut table = Vec::with_capacity(rebinds.len());
        for r in rebinds {
            let Some(slot) = self.slots.get(r.slot as usize) else {
                bail!(OutOfRange, "binding table: slot {} is past the graph's {} slots", r.slot, self.slots.len());
            };
            if !self.device.same(&r.buffer.device) {
                bail!(DeviceMismatch, "binding table: the buffer for slot {} belongs to another device", r.slot);
            }
            if r.buffer.size < slot.size {
                bail!(
                    InvalidArgument,
                    "binding table: slot {} needs a buffer of at least {} bytes (the captured one's size); this one has {}",
                    r.slot,
                    slot.size,
                    r.buffer.size
                );
            }
            if slot.uniform && !r.buffer.usage.uniform {
                bail!(
                    BindingMismatch,
                    "binding table: slot {} is bound as a uniform buffer; the buffer for it has no uniform usage",
                    r.slot
                );
            }
            if slot.indirect && !r.buffer.usage.indirect {
                bail!(
                    BindingMismatch,
                    "binding table: slot {} holds indirect counts; the buffer for it has no indirect usage",
                    r.slot
                );
            }
            table.push((r.slot, r.buffer.alloc_id()));
        }
        table.sort_unstable();
        if table.windows(2).any(|w| w[0].0 == w[1].0) {
            bail!(InvalidArgument, "binding table: a slot is given more than once");
        }
        for p in patches {
            let Some(launch) = self.launches.get(p.launch as usize) else {
                bail!(
                    OutOfRange,
                    "scalar patch: launch {} is past the graph's {} launches",
                    p.launch,
                    self.launches.len()
                );
            };
            let Some((_, len)) = launch else {
                bail!(
                    InvalidArgument,
                    "scalar patch: launch {} has no parameters to patch (a built-in operator's launch, a uniform bound as a buffer, or none)",
                    p.launch
                );
            };
            if p.offset as u64 + p.bytes.len() as u64 > *len as u64 {
                bail!(
                    OutOfRange,
                    "scalar patch: bytes [{}, {}) of launch {} reach past its {len} bytes of parameters",
                    p.offset,
                    p.offset as u64 + p.bytes.len() as u64,
                    p.launch
                );
            }
        }
        Ok(table)
    }

    /// The instance for `arena` and `table` (checked by `check_replay`),
    /// built on first use.
    pub(super) fn instance(
        &self,
        arena: Option<&(wgpu::Buffer, u64)>,
        table: Vec<(u32, u64)>,
        rebinds: &[Rebind],
    ) -> Result<Arc<Instance>> {
        let arena_id = arena.map_or(0, |a| a.1);
        let mut list = self.instances.lock().unwrap();
        let uses_arena = self.uses_arena();
        let matches = |i: &Instance| (!uses_arena || i.arena_id == arena_id) && i.table == table;
        if let Some(pos) = list.iter().rposition(|i| matches(i)) {
            let found = list.remove(pos);
            list.push(found.clone());
            return Ok(found);
        }
        // Commands that neither the table nor the arena changes keep the
        // bind groups of an instance without a table.
        let base = list.iter().rev().find(|i| i.table.is_empty() && (!uses_arena || i.arena_id == arena_id)).cloned();
        let mut raws: Vec<wgpu::Buffer> = self.slots.iter().map(|s| s.lease.raw().clone()).collect();
        for r in rebinds {
            raws[r.slot as usize] = r.buffer.raw().clone();
        }
        let replaced = |s: u32| table.binary_search_by_key(&s, |t| t.0).is_ok();
        let ids: Vec<u64> = (0..self.slots.len())
            .map(|s| match table.binary_search_by_key(&(s as u32), |t| t.0) {
                Ok(i) => table[i].1,
                Err(_) => self.slots[s].lease.id(),
            })
            .collect();
        let mut groups = Vec::with_capacity(self.cmds.len());
        for (i, cmd) in self.cmds.iter().enumerate() {
            match cmd {
                GraphCmd::Dispatch { layout, entries, .. } => {
                    let touched = entries.iter().any(|e| matches!(e.source, Source::Slot(s) if replaced(s)));
                    if let (Some(b), false) = (&base, touched) {
                        groups.push(b.groups[i].clone());
                        continue;
                    }
                    if touched {
                        check_conflicts(entries, &ids, i)?;
                    }
                    let wgpu_entries: Vec<wgpu::BindGroupEntry> = entries
                        .iter()
                        .map(|e| {
                            let buf = match e.source {
                                Source::Slot(s) => &raws[s as usize],
                                Source::Arena => &arena.expect("a graph with arena uniforms gets the arena").0,
                            };
                            buffer_entry(e.binding, buf, e.offset, e.size)
                        })
                        .collect();
                    let desc = wgpu::BindGroupDescriptor { label: None, layout, entries: &wgpu_entries };
                    let dev = &self.device;
                    groups.push(Some(dev.scoped(|| dev.wgpu.create_bind_group(&desc))?));
                }
                GraphCmd::Copy { src, dst, .. } => {
                    if ids[*src as usize] == ids[*dst as usize] {
                        bail!(InvalidArgument, "binding table: command {i} (a copy) would copy a buffer into itself");
                    }
                    groups.push(None);
                }
            }
        }
        let inst = Arc::new(Instance { arena_id, table, groups, raws });
        if list.len() >= MAX_INSTANCES {
            list.remove(0);
        }
        list.push(inst.clone());
        Ok(inst)
    }

    fn uses_arena(&self) -> bool {
        !self.uniforms.is_empty()
    }

    /// The leases replays of the graph hold until they have run.
    pub(super) fn leases(&self) -> impl Iterator<Item = &Arc<Lease>> {
        self.slots.iter().map(|s| &s.lease)
    }
}

/// The GPU layer refuses a dispatch that binds one allocation writable and
/// in any other way too: refuse a binding table that makes one.
fn check_conflicts(entries: &[Entry], ids: &[u64], cmd: usize) -> Result<()> {
    let id = |e: &Entry| match e.source {
        Source::Slot(s) => Some(ids[s as usize]),
        Source::Arena => None,
    };
    for (a, ea) in entries.iter().enumerate() {
        for eb in &entries[a + 1..] {
            if (ea.writable || eb.writable) && id(ea).is_some() && id(ea) == id(eb) {
                bail!(
                    BindingMismatch,
                    "binding table: command {cmd} would bind one buffer writable (binding {}) and also as binding {}",
                    if ea.writable { ea.binding } else { eb.binding },
                    if ea.writable { eb.binding } else { ea.binding }
                );
            }
        }
    }
    Ok(())
}
