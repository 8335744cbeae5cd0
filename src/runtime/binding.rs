//! Checking a launch's bindings against the kernel's reflection, before
//! anything is recorded: every binding the entry point uses is bound once,
//! with a buffer of the right device, usage, alignment, size and range.

use super::bind_cache::{BoundRange, Ranges};
use super::buffer::Buffer;
use super::device::Device;
use super::kernel::{BindingKind, Kernel};
use super::stream::{Bind, Groups};
use crate::bail;
use crate::error::{Error, Result};

/// Where the kernel's uniform comes from: (binding, bound window, the
/// caller's buffer and offset, or None for the stream's arena).
pub(crate) type UniformSource<'a> = (u32, u64, Option<(&'a Buffer, u64)>);

/// A launch's bindings, checked.
pub(crate) struct CheckedBindings<'a> {
    /// Storage ranges for the bind group cache key.
    pub ranges: Ranges,
    /// Storage bind group entries: (binding, buffer, offset, size).
    pub storage: Vec<(u32, &'a wgpu::Buffer, u64, u64)>,
    pub uniform: Option<UniformSource<'a>>,
}

fn same_device(dev: &Device, other: &Device, what: &str) -> Result<()> {
    if !dev.same(other) {
        bail!(DeviceMismatch, "{what} belongs to another device than the stream");
    }
    Ok(())
}

pub(crate) fn check<'a>(
    dev: &Device,
    kernel: &Kernel,
    binds: &[Bind<'a>],
    params: Option<&[u8]>,
    groups: &Groups,
) -> Result<CheckedBindings<'a>> {
    let limits = &dev.limits;
    // Validate every binding against the kernel's reflection.
    let mut ranges = Ranges::default();
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
                    same_device(dev, &b.buffer.device, "a bound buffer")?;
                    if !b.buffer.usage.uniform {
                        bail!(
                            BindingMismatch,
                            "binding {}: the buffer was not created with uniform usage",
                            info.binding
                        );
                    }
                    let align = limits.min_uniform_buffer_offset_alignment as u64;
                    if b.offset % align != 0 {
                        bail!(
                            Alignment,
                            "binding {}: uniform offset {} is not a multiple of {align}",
                            info.binding,
                            b.offset
                        );
                    }
                    // The allocation is rounded up past `window`; the caller's range must hold the struct.
                    let what = format!("uniform binding {}", info.binding);
                    let bound = b.size.unwrap_or(info.min_size);
                    b.buffer.check_range(b.offset, bound, &what)?;
                    if bound < info.min_size {
                        bail!(
                            BindingMismatch,
                            "{what} ({:?}): {bound} bytes bound, the uniform needs {}",
                            info.name,
                            info.min_size
                        );
                    }
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
        same_device(dev, &b.buffer.device, "a bound buffer")?;
        if !b.buffer.usage.storage {
            bail!(BindingMismatch, "binding {}: the buffer was not created with storage usage", info.binding);
        }
        let size = match b.size {
            Some(s) => {
                b.buffer.check_range(b.offset, s, format_args!("binding {}", info.binding))?;
                s
            }
            // To the end, rounded up to whole words inside the allocation
            // (a buffer of f16 may hold an odd number of bytes).
            None => {
                b.buffer
                    .size
                    .checked_sub(b.offset)
                    .ok_or_else(|| {
                        Error::OutOfRange(format!(
                            "binding {}: offset {} is past the buffer's end",
                            info.binding, b.offset
                        ))
                    })?
                    .div_ceil(4)
                    * 4
            }
        };
        let align = limits.min_storage_buffer_offset_alignment as u64;
        if b.offset % align != 0 {
            bail!(Alignment, "binding {}: storage offset {} is not a multiple of {align}", info.binding, b.offset);
        }
        if size % 4 != 0 {
            bail!(Alignment, "binding {}: size {size} is not a multiple of 4", info.binding);
        }
        if size < info.min_size {
            bail!(
                BindingMismatch,
                "binding {} ({:?}): {size} bytes bound, the kernel needs at least {}",
                info.binding,
                info.name,
                info.min_size
            );
        }
        if size > limits.max_storage_buffer_binding_size {
            bail!(
                LimitExceeded,
                "binding {}: {size} bytes exceeds this adapter's storage binding limit of {}",
                info.binding,
                limits.max_storage_buffer_binding_size
            );
        }
        ranges.push((info.binding, b.buffer.alloc_id(), b.offset, size));
        entries_src.push((info.binding, b.buffer.raw(), b.offset, size));
    }
    match &groups {
        Groups::Direct(g) => {
            let max = limits.max_compute_workgroups_per_dimension;
            if g.iter().any(|&v| v > max) {
                bail!(
                    LimitExceeded,
                    "dispatch of {g:?} workgroups exceeds this adapter's limit of {max} per dimension"
                );
            }
        }
        Groups::Indirect(buf, off) => {
            same_device(dev, &buf.device, "the indirect buffer")?;
            if !buf.usage.indirect {
                bail!(InvalidArgument, "the indirect buffer was not created with indirect usage");
            }
            if off % 4 != 0 {
                bail!(Alignment, "indirect offset {off} is not a multiple of 4");
            }
            buf.check_range(*off, 12, "indirect arguments")?;
        }
    }
    check_usage_conflicts(kernel, &ranges, &uniform_window, groups)?;

    Ok(CheckedBindings { ranges, storage: entries_src, uniform: uniform_window })
}

/// The GPU layer refuses, at submit, a dispatch that uses one buffer as
/// writable storage and in any other way too (read-only storage, uniform,
/// indirect counts), whatever the ranges: refuse it here, before anything
/// is recorded, so that no other work of the batch is affected.
fn check_usage_conflicts(
    kernel: &Kernel,
    ranges: &[BoundRange],
    uniform: &Option<UniformSource>,
    groups: &Groups,
) -> Result<()> {
    let kind = |binding: u32| kernel.bindings.iter().find(|i| i.binding == binding).map(|i| i.kind);
    let written = |alloc: u64| {
        ranges.iter().find(|r| r.1 == alloc && kind(r.0) == Some(BindingKind::StorageReadWrite)).map(|r| r.0)
    };
    for r in ranges.iter().filter(|r| kind(r.0) == Some(BindingKind::StorageRead)) {
        if let Some(w) = written(r.1) {
            bail!(BindingMismatch, "the same buffer is bound read-only (binding {}) and writable (binding {w})", r.0);
        }
    }
    if let Some((binding, _, Some((buf, _)))) = uniform {
        if let Some(w) = written(buf.alloc_id()) {
            bail!(BindingMismatch, "the buffer of uniform binding {binding} is also bound writable (binding {w})");
        }
    }
    if let Groups::Indirect(buf, _) = groups {
        if let Some(w) = written(buf.alloc_id()) {
            bail!(BindingMismatch, "the indirect buffer is also bound writable (binding {w}); a launch may not write the buffer its workgroup counts come from");
        }
    }
    Ok(())
}
