//! A batch of recorded commands: what it holds until submitted, and how it
//! is encoded (consecutive launches share one compute pass). If the GPU layer
//! rejects a batch as a whole, its commands are encoded and submitted one by
//! one, so that only the rejected ones are lost.

use super::device::Device;
use super::event::Event;
use super::graph::{GraphCmd, GraphCounts, Instance};
use super::graph_capture::UniformAt;
use super::lease::Lease;
use crate::error::Error;
use std::sync::Arc;

pub(super) enum Counts {
    Direct([u32; 3]),
    /// The checked counts at the start of this buffer.
    Indirect(wgpu::Buffer),
}

/// One recorded command; encoded when its batch is submitted.
pub(super) enum Cmd {
    Dispatch {
        pipeline: wgpu::ComputePipeline,
        bind_group: wgpu::BindGroup,
        /// The uniform's dynamic offset, if the kernel has one.
        uniform_offset: Option<u32>,
        groups: Counts,
    },
    Copy {
        src: wgpu::Buffer,
        src_offset: u64,
        dst: wgpu::Buffer,
        dst_offset: u64,
        size: u64,
    },
    /// A graph replay, encoded straight from the graph's resolved commands
    /// with the bind groups and buffers of `inst`; its parameters start at
    /// `base` in the batch's uniform bytes.
    Replay {
        cmds: Arc<Vec<GraphCmd>>,
        inst: Arc<Instance>,
        base: u32,
    },
    /// The timestamp of the batch's event at this index.
    Timestamp(usize),
    /// A profiler timestamp (runtime/profiler.rs) into this query.
    ProfileStamp(wgpu::QuerySet, u32),
    /// Copy the profiler's first `count` timestamps where the host reads them.
    ProfileResolve {
        query: wgpu::QuerySet,
        resolve: wgpu::Buffer,
        readback: wgpu::Buffer,
        count: u32,
    },
}

#[derive(Default)]
pub(super) struct Batch {
    pub cmds: Vec<Cmd>,
    pub uniform_bytes: Vec<u8>,
    pub launches: u32,
    pub events: Vec<Arc<Event>>,
    /// Allocations the recorded work uses: held until it has run.
    pub leases: Vec<Arc<Lease>>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.cmds.is_empty() && self.events.is_empty()
    }

    pub fn hold(&mut self, lease: &Arc<Lease>) {
        // Consecutive launches often bind the same buffers: keep one each.
        if !self.leases.iter().rev().take(4).any(|l| Arc::ptr_eq(l, lease)) {
            self.leases.push(lease.clone());
        }
    }

    /// Reserve an aligned slot of `window` bytes in the uniform arena for `data`.
    pub fn uniform_slot(&mut self, data: &[u8], window: u64, align: u64) -> u32 {
        let off = (self.uniform_bytes.len() as u64).div_ceil(align) * align;
        self.uniform_bytes.resize((off + window) as usize, 0);
        let n = data.len().min(window as usize);
        self.uniform_bytes[off as usize..off as usize + n].copy_from_slice(&data[..n]);
        off as u32
    }
}

pub(super) fn write_uniforms(dev: &Device, arena: Option<&wgpu::Buffer>, bytes: &[u8]) {
    if let (Some(arena), false) = (arena, bytes.is_empty()) {
        dev.queue.write_buffer(arena, 0, bytes);
    }
}

/// Encode `cmds` into one command buffer; with `resolve`, the events'
/// timestamps are then copied where the host can read them.
pub(super) fn encode(dev: &Device, cmds: &[Cmd], events: &[Arc<Event>], resolve: bool) -> wgpu::CommandBuffer {
    let mut encoder = dev.wgpu.create_command_encoder(&Default::default());
    let mut pass: Option<wgpu::ComputePass<'static>> = None;
    let in_passes = dev.features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
    // The pipeline set in the open pass: launches of one kernel in a row
    // set it once.
    let mut current: Option<&wgpu::ComputePipeline> = None;
    for cmd in cmds {
        match cmd {
            Cmd::Dispatch { pipeline, bind_group, uniform_offset, groups } => {
                let p = pass.get_or_insert_with(|| encoder.begin_compute_pass(&Default::default()).forget_lifetime());
                if current != Some(pipeline) {
                    p.set_pipeline(pipeline);
                    current = Some(pipeline);
                }
                p.set_bind_group(0, bind_group, uniform_offset.as_slice());
                match groups {
                    Counts::Direct([x, y, z]) => p.dispatch_workgroups(*x, *y, *z),
                    Counts::Indirect(args) => p.dispatch_workgroups_indirect(args, 0),
                }
            }
            Cmd::Copy { src, src_offset, dst, dst_offset, size } => {
                pass = None;
                current = None;
                encoder.copy_buffer_to_buffer(src, *src_offset, dst, *dst_offset, *size);
            }
            Cmd::Replay { cmds, inst, base } => {
                for (c, group) in cmds.iter().zip(&inst.groups) {
                    match c {
                        GraphCmd::Dispatch { pipeline, uniform, groups, .. } => {
                            let p = pass.get_or_insert_with(|| {
                                encoder.begin_compute_pass(&Default::default()).forget_lifetime()
                            });
                            if current != Some(pipeline) {
                                p.set_pipeline(pipeline);
                                current = Some(pipeline);
                            }
                            let group = group.as_ref().expect("a dispatch has a bind group");
                            match uniform {
                                UniformAt::None => p.set_bind_group(0, group, &[]),
                                UniformAt::Arena(off) => p.set_bind_group(0, group, &[base + off]),
                                UniformAt::Fixed(off) => p.set_bind_group(0, group, &[*off]),
                            }
                            match groups {
                                GraphCounts::Direct([x, y, z]) => p.dispatch_workgroups(*x, *y, *z),
                                GraphCounts::Indirect(slot) => {
                                    p.dispatch_workgroups_indirect(&inst.raws[*slot as usize], 0)
                                }
                            }
                        }
                        GraphCmd::Copy { src, src_offset, dst, dst_offset, size } => {
                            pass = None;
                            current = None;
                            let raws = &inst.raws;
                            encoder.copy_buffer_to_buffer(
                                &raws[*src as usize],
                                *src_offset,
                                &raws[*dst as usize],
                                *dst_offset,
                                *size,
                            );
                        }
                    }
                }
            }
            Cmd::Timestamp(i) => {
                let q = events[*i].query_set().unwrap();
                if in_passes {
                    if pass.is_none() {
                        current = None;
                    }
                    pass.get_or_insert_with(|| encoder.begin_compute_pass(&Default::default()).forget_lifetime())
                        .write_timestamp(q, 0);
                } else {
                    pass = None;
                    current = None;
                    encoder.write_timestamp(q, 0);
                }
            }
            Cmd::ProfileStamp(q, i) => {
                if in_passes {
                    pass.get_or_insert_with(|| encoder.begin_compute_pass(&Default::default()).forget_lifetime())
                        .write_timestamp(q, *i);
                } else {
                    pass = None;
                    encoder.write_timestamp(q, *i);
                }
            }
            Cmd::ProfileResolve { query, resolve, readback, count } => {
                pass = None;
                if *count > 0 {
                    encoder.resolve_query_set(query, 0..*count, resolve, 0);
                    encoder.copy_buffer_to_buffer(resolve, 0, readback, 0, *count as u64 * 8);
                }
            }
        }
    }
    drop(pass);
    if resolve {
        for ev in events {
            ev.encode_resolve(&mut encoder);
        }
    }
    encoder.finish()
}

/// The GPU layer rejected the batch as a whole: encode each command on its
/// own, drop those it rejects and submit the rest in order, so that valid
/// work still runs. Returns the submission and what was dropped.
pub(super) fn submit_one_by_one(
    dev: &Device,
    batch: &Batch,
    arena: Option<&wgpu::Buffer>,
) -> (Option<wgpu::SubmissionIndex>, Option<Error>) {
    let mut good = Vec::with_capacity(batch.cmds.len() + 1);
    let mut rejected = Vec::new();
    for cmd in &batch.cmds {
        match dev.scoped(|| encode(dev, std::slice::from_ref(cmd), &batch.events, false)) {
            Ok(cb) => good.push(cb),
            Err(e) => rejected.push(e),
        }
    }
    match dev.scoped(|| encode(dev, &[], &batch.events, true)) {
        Ok(cb) => good.push(cb),
        Err(e) => rejected.push(e),
    }
    let submitted = dev.scoped(|| {
        write_uniforms(dev, arena, &batch.uniform_bytes);
        dev.submit(good)
    });
    let dropped = |first: &Error| {
        let msg = format!(
            "{} of {} recorded commands were rejected by the GPU layer and not run (the others ran): {first}",
            rejected.len(),
            batch.cmds.len()
        );
        match first {
            Error::OutOfMemory(_) => Error::OutOfMemory(msg),
            _ => Error::Validation(msg),
        }
    };
    match (submitted, rejected.first()) {
        (Ok(index), None) => (Some(index), None),
        (Ok(index), Some(first)) => (Some(index), Some(dropped(first))),
        (Err(e), _) => (None, Some(e)),
    }
}
