//! What every operator does: find its kernel variant, bind its tensors (see
//! `Tensor::bind`: whole buffers where the adapter allows, so bind groups
//! are cached across calls), and launch.

use super::tensor::Tensor;
use crate::error::Result;
use crate::runtime::buffer::Buffer;
use crate::runtime::device::Device;
use crate::runtime::kernel::Kernel;
use crate::runtime::stream::{Bind, Groups, StreamShared};
use crate::shaders;
use std::sync::Arc;

/// The kernel for `entry` of shader `file` rendered with `values`. Cached
/// by (file, entry, values), so the hot path renders nothing.
pub fn kernel(dev: &Device, file: &'static str, entry: &str, values: &[(&str, &str)]) -> Result<Arc<Kernel>> {
    dev.kernels.get_variant(dev, file, entry, values, || shaders::render(shaders::source(file), values))
}

/// Launch with tensors bound at bindings 0, 1, ... in order (their kernels
/// take `Tensor::bound_offset` as offsets), and `params` as the uniform.
pub fn launch(
    stream: &StreamShared,
    kernel: &Kernel,
    tensors: &[&Tensor],
    params: &[u8],
    groups: [u32; 3],
) -> Result<()> {
    let binds: Vec<Bind> = tensors.iter().enumerate().map(|(i, t)| t.bind(i as u32)).collect();
    stream.launch(kernel, &binds, Some(params), Groups::Direct(groups))
}

/// A whole buffer (an operator's scratch space) bound at `binding`.
pub fn whole(binding: u32, buffer: &Buffer) -> Bind<'_> {
    Bind { binding, buffer, offset: 0, size: None }
}

/// Pack little-endian 32-bit words for a uniform.
#[derive(Default)]
pub struct Params {
    words: Vec<u32>,
}

impl Params {
    /// Room for the largest parameter block any operator builds, so filling
    /// it never reallocates (operators build one per launch).
    pub fn new() -> Self {
        Params { words: Vec::with_capacity(128) }
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.words.push(v);
        self
    }
    pub fn i32(mut self, v: i32) -> Self {
        self.words.push(v as u32);
        self
    }
    pub fn f32(mut self, v: f32) -> Self {
        self.words.push(v.to_bits());
        self
    }
    /// Pad to a multiple of 4 words (a vec4 boundary) before arrays.
    pub fn align16(mut self) -> Self {
        while !self.words.len().is_multiple_of(4) {
            self.words.push(0);
        }
        self
    }
    /// Up to 8 values as two vec4<u32> (or i32), padded with `fill`.
    pub fn array8_u32(mut self, vals: &[usize], fill: u32) -> Self {
        self = self.align16();
        for i in 0..8 {
            self.words.push(vals.get(i).map_or(fill, |&v| v as u32));
        }
        self
    }
    pub fn array8_i32(mut self, vals: &[isize]) -> Self {
        self = self.align16();
        for i in 0..8 {
            self.words.push(vals.get(i).map_or(0, |&v| v as i32 as u32));
        }
        self
    }
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.words)
    }
}
