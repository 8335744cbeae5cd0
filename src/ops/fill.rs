//! Filling buffer ranges with a 32-bit pattern.

use super::grid::grid_1d;
use crate::bail;
use crate::error::Result;
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::{Bind, Groups, StreamShared};

pub fn fill_words(stream: &StreamShared, buffer: &Buffer, offset: u64, size: u64, pattern: u32) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    // Before the empty-fill shortcut: a call is checked whatever its size.
    if !dev.same(&buffer.device) {
        bail!(DeviceMismatch, "the buffer belongs to another device than the stream");
    }
    buffer.check_range(offset, size, "fill")?;
    if !offset.is_multiple_of(4) || !size.is_multiple_of(4) {
        bail!(Alignment, "fill offset ({offset}) and size ({size}) must be multiples of 4");
    }
    if size == 0 {
        return Ok(());
    }
    let kernel = dev.kernels.get_builtin(dev, "fill.wgsl", "fill_words")?;
    // A fill is a write: allowed whatever the buffer's usage.
    let alias;
    let buffer = if buffer.usage.storage {
        buffer
    } else {
        alias = buffer.as_storage();
        &alias
    };
    // A launch binds at most the adapter's storage binding size (and counts
    // words in 32 bits): larger fills take several.
    let max_bind = dev.limits.max_storage_buffer_binding_size.min(1 << 32) / 256 * 256;
    let end = offset + size;
    let mut start = offset;
    while start < end {
        // Bind from a 256-byte aligned start so any word offset works.
        let bind_start = start / 256 * 256;
        let stop = end.min(bind_start + max_bind);
        let first_word = ((start - bind_start) / 4) as u32;
        let count = (stop - start) / 4;
        let (groups, row) = grid_1d(count, 256, dev.limits.max_compute_workgroups_per_dimension);
        let params: [u32; 4] = [first_word, count as u32, pattern, row];
        stream.launch(
            &kernel,
            &[Bind { binding: 0, buffer, offset: bind_start, size: Some(stop - bind_start) }],
            Some(bytemuck::cast_slice(&params)),
            Groups::Direct(groups),
        )?;
        start = stop;
    }
    Ok(())
}
