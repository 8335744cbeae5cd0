//! Indirect workgroup counts are only known on the GPU, so they are checked
//! there: before a launch with indirect counts, a one-invocation dispatch
//! (shaders/indirect_counts.wgsl) copies them into the stream's own argument
//! buffer, or zeros if any exceeds the adapter's per-dimension limit, and the
//! launch reads that buffer: a bad count makes it run no workgroups.

use super::batch::{Batch, Cmd, Counts};
use super::bind_cache::{buffer_entry, BindKey, Ranges};
use super::buffer::{Buffer, Usage};
use super::device::Device;
use crate::error::Result;
use std::sync::Arc;

/// Uniform bytes of the indirect-count check (struct Params of indirect_counts.wgsl, padded).
pub(super) const COUNTS_PARAMS: u64 = 16;

/// What an indirect launch adds: the dispatch that checks its counts.
pub(super) struct CountsCheck {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    args: Arc<Buffer>,
    params: [u32; 4],
}

/// Everything the check of the counts at `offset` in `buf` needs (the
/// stream's argument buffer is made on first use into `args_slot`). wgpu
/// can check indirect counts itself (`InstanceFlags::VALIDATION_INDIRECT_CALL`),
/// but that also caps every buffer and binding at 4 GiB; this check costs
/// direct launches nothing.
pub(super) fn prepare(
    dev: &Arc<Device>,
    args_slot: &mut Option<Arc<Buffer>>,
    buf: &Buffer,
    offset: u64,
    arena: &(wgpu::Buffer, u64),
) -> Result<CountsCheck> {
    let kernel = dev.kernels.get_builtin(dev, "indirect_counts.wgsl", "check_counts")?;
    let args = match args_slot {
        Some(a) => a.clone(),
        None => {
            let usage = Usage { storage: true, uniform: false, indirect: true };
            let a = Buffer::create_uninit(dev, 12, usage)?.buffer;
            *args_slot = Some(a.clone());
            a
        }
    };
    // Bind from an aligned start; the counts are a few words further in.
    let align = dev.limits.min_storage_buffer_offset_alignment as u64;
    let start = offset / align * align;
    let size = offset + 12 - start;
    let ranges = Ranges::from_slice(&[
        (0, buf.alloc_id(), start, size),
        (1, args.alloc_id(), 0, 12),
        (2, arena.1, 0, COUNTS_PARAMS),
    ]);
    let bind_group = dev.bind_groups.get_or_create(BindKey { layout_id: kernel.id, ranges }, || {
        let entries = [
            buffer_entry(0, buf.raw(), start, size),
            buffer_entry(1, args.raw(), 0, 12),
            buffer_entry(2, &arena.0, 0, COUNTS_PARAMS),
        ];
        let desc = wgpu::BindGroupDescriptor { label: None, layout: &kernel.layout, entries: &entries };
        dev.scoped(|| dev.wgpu.create_bind_group(&desc))
    })?;
    let params = [((offset - start) / 4) as u32, dev.limits.max_compute_workgroups_per_dimension, 0, 0];
    Ok(CountsCheck { pipeline: kernel.pipeline.clone(), bind_group, args, params })
}

/// The bind group layout of the check's kernel (for graphs, which rebuild
/// its bind group for other streams and buffers).
pub(super) fn layout(dev: &Arc<Device>) -> Result<wgpu::BindGroupLayout> {
    Ok(dev.kernels.get_builtin(dev, "indirect_counts.wgsl", "check_counts")?.layout.clone())
}

impl CountsCheck {
    /// Record the check of `buf`'s counts; the launch reads what it returns.
    pub(super) fn record(self, batch: &mut Batch, buf: &Buffer, align: u64) -> Counts {
        let offset = batch.uniform_slot(bytemuck::cast_slice(&self.params), COUNTS_PARAMS, align);
        batch.cmds.push(Cmd::Dispatch {
            pipeline: self.pipeline,
            bind_group: self.bind_group,
            uniform_offset: Some(offset),
            groups: Counts::Direct([1, 1, 1]),
        });
        batch.hold(buf.lease());
        batch.hold(self.args.lease());
        Counts::Indirect(self.args.raw().clone())
    }
}
