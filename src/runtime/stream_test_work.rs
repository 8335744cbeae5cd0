//! GPU work for the stream tests, recorded through the runtime alone (the
//! built-in fill kernel), so that they need no operator.

use super::{Bind, Groups, StreamShared};
use crate::runtime::buffer::Buffer;

/// GPU work on `stream`: the first `count` words of `buffer` set to `value`
/// by the built-in fill kernel (one workgroup).
pub(super) fn fill(stream: &StreamShared, buffer: &Buffer, count: u32, value: u32) {
    let dev = &stream.device;
    let kernel = dev.kernels.get_builtin(dev, "fill.wgsl", "fill_words").unwrap();
    // first word, count, value, words per row of workgroups
    let params: [u32; 4] = [0, count, value, 256];
    let binds = [Bind { binding: 0, buffer, offset: 0, size: Some(buffer.size) }];
    stream.launch(&kernel, &binds, Some(bytemuck::cast_slice(&params)), Groups::Direct([1, 1, 1])).unwrap();
}
