//! Tensor views: a buffer plus dtype, shape, strides (in elements, may be
//! negative or zero) and an offset (in elements). Views are checked against
//! their buffer here, once, so kernels can index without bounds checks.

use crate::bail;
use crate::error::{Error, Result};
use crate::runtime::buffer::Buffer;
use crate::runtime::device::Device;
use crate::runtime::stream::Bind;

pub const MAX_RANK: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F16,
    I32,
    U32,
    /// bfloat16: the top half of an f32, stored as its raw 16 bits. Kernels
    /// hold two per u32 word and compute in f32; only the operators that
    /// convert it in their kernels take it (see `check_device_bf16`).
    BF16,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::F16 | DType::BF16 => 2,
            _ => 4,
        }
    }

    /// The WGSL scalar type, and the dtype's name in messages. WGSL has no
    /// bf16 ("bf16" names it; no type slot declares it).
    pub fn wgsl(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::BF16 => "bf16",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16)
    }

    /// `enable f16;` where the dtype needs it, else nothing.
    pub fn enable(self) -> &'static str {
        if self == DType::F16 {
            "enable f16;"
        } else {
            ""
        }
    }

    /// Fail with `Unsupported` if the device cannot compute in this dtype,
    /// or for bf16: every operator checks its dtypes with this, and only
    /// those that convert bf16 in their kernels or through f32 scratch
    /// (elementwise, casts, reductions, GEMM) use `check_device_bf16`.
    pub fn check_device(self, dev: &Device) -> Result<()> {
        if self == DType::BF16 {
            bail!(Unsupported, "this operator does not support bf16 tensors");
        }
        self.check_device_bf16(dev)
    }

    /// `check_device` for operators that take bf16 (which every adapter can
    /// compute: kernels read it as u32 words).
    pub fn check_device_bf16(self, dev: &Device) -> Result<()> {
        if self == DType::F16 && !dev.features.contains(wgpu::Features::SHADER_F16) {
            bail!(Unsupported, "this adapter has no f16 support in shaders");
        }
        Ok(())
    }
}

#[derive(Clone)]
pub struct Tensor<'a> {
    pub buffer: &'a Buffer,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

/// Elements of `shape`: 0 if a dim is 0, None if the count overflows.
pub fn checked_numel(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// Elements of `shape`, saturating at `usize::MAX` (which every size check
/// refuses); validated views never get there.
pub fn numel(shape: &[usize]) -> usize {
    checked_numel(shape).unwrap_or(usize::MAX)
}

/// Most elements (or iterations) one dim, count or index of a kernel may
/// have: kernels compute in 32-bit integers, signed where they index.
const MAX_KERNEL_COUNT: usize = i32::MAX as usize;

/// Fail with `TooLarge` naming the first size past `MAX_KERNEL_COUNT`.
/// Views with zero (broadcast) strides can have dims far past 2^32 over a
/// handful of elements; operators refuse those they cannot count.
pub fn check_kernel_counts(what: &str, sizes: &[(&str, usize)]) -> Result<()> {
    if let Some((name, v)) = sizes.iter().find(|(_, v)| *v > MAX_KERNEL_COUNT) {
        bail!(TooLarge, "{what}: {name} is {v}; kernels handle at most 2^31-1");
    }
    Ok(())
}

pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(shape[i].max(1) as isize);
    }
    strides
}

/// The row-major strides of `shape`, or None if a stride or the element
/// count does not fit in 63 bits (as a C view holds them).
pub fn checked_contiguous_strides(shape: &[usize]) -> Option<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        if i > 0 {
            acc = acc.checked_mul(isize::try_from(shape[i].max(1)).ok()?)?;
        }
    }
    let count = checked_numel(shape)?;
    (count <= isize::MAX as usize).then_some(strides)
}

/// Operators bind a whole buffer when the adapter can bind it in one piece,
/// so every view of it shares one cached bind group; past that, they bind
/// from this alignment (at least the adapter's, and whole vec4 and tile
/// units of every dtype) below the view's first element.
const WINDOW_ALIGN: u64 = 256;

impl<'a> Tensor<'a> {
    /// Check the view: rank, and every element it reaches lies in the buffer.
    /// Element indices must also fit the kernels' i32 arithmetic.
    /// `what` names the view in messages (formatted only on failure).
    pub fn validate(&self, what: impl std::fmt::Display) -> Result<()> {
        if self.shape.len() > MAX_RANK || self.strides.len() != self.shape.len() {
            bail!(InvalidArgument, "{what}: rank {} (at most {MAX_RANK})", self.shape.len());
        }
        match checked_numel(&self.shape) {
            None => bail!(OutOfRange, "{what}: shape {:?} has more than 2^64 elements", self.shape),
            Some(0) => return Ok(()),
            Some(_) => {}
        }
        let mut lo = self.offset as i128;
        let mut hi = self.offset as i128;
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let span = (d as i128 - 1) * s as i128;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        let elems = (self.buffer.size / self.dtype.size() as u64) as i128;
        if lo < 0 || hi >= elems {
            bail!(
                OutOfRange,
                "{what}: the view reaches elements [{lo}, {hi}] of a buffer holding {elems} {} elements",
                self.dtype.wgsl()
            );
        }
        let base = self.bind_base() as i128;
        if hi - base > i32::MAX as i128 {
            bail!(TooLarge, "{what}: element index {} (from where the view is bound) exceeds 2^31-1", hi - base);
        }
        Ok(())
    }

    /// Whether operators bind this view's whole buffer: when the adapter
    /// can bind all of it in one piece.
    fn binds_whole(&self) -> bool {
        self.buffer.size.div_ceil(4) * 4 <= self.buffer.device.limits.max_storage_buffer_binding_size
    }

    /// The element operators bind the view's buffer from: 0 for a whole
    /// buffer, else the view's first element rounded down to `WINDOW_ALIGN`.
    fn bind_base(&self) -> usize {
        if self.binds_whole() {
            return 0;
        }
        let align = WINDOW_ALIGN.max(self.buffer.device.limits.min_storage_buffer_offset_alignment as u64);
        let esize = self.dtype.size() as u64;
        let first = self.element_span().0 as u64 * esize;
        (first / align * align / esize) as usize
    }

    /// The view's offset counted from where operators bind it: the offset
    /// kernels take (validated to fit in 31 bits).
    pub fn bound_offset(&self) -> u32 {
        (self.offset - self.bind_base()) as u32
    }

    /// `binding` bound as operators bind this view: the whole buffer, or
    /// from `bind_base` to past the view's last element (whole 16-byte
    /// units where the buffer has them).
    pub fn bind(&self, binding: u32) -> Bind<'a> {
        if self.binds_whole() {
            return Bind { binding, buffer: self.buffer, offset: 0, size: None };
        }
        let esize = self.dtype.size() as u64;
        let start = self.bind_base() as u64 * esize;
        let end = (self.element_span().1 as u64 * esize).max(start + 16).div_ceil(16) * 16;
        // Past the buffer's end: bind to its end (rounded up to a word).
        let size = (end <= self.buffer.size).then_some(end - start);
        Bind { binding, buffer: self.buffer, offset: start, size }
    }

    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn is_contiguous(&self) -> bool {
        // Row-major strides from the last dim inwards (dims of size 1 may
        // have any stride), without building them.
        let mut step = 1isize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d > 1 && s != step {
                return false;
            }
            step = step.wrapping_mul(d.max(1) as isize);
        }
        true
    }

    pub fn same_buffer(&self, other: &Tensor) -> bool {
        std::ptr::eq(self.buffer, other.buffer) || self.buffer.alloc_id() == other.buffer.alloc_id()
    }

    /// The half-open range of elements the view can touch.
    pub fn element_span(&self) -> (i128, i128) {
        if self.numel() == 0 {
            return (0, 0);
        }
        let mut lo = self.offset as i128;
        let mut hi = self.offset as i128;
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let span = (d as i128 - 1) * s as i128;
            if span < 0 {
                lo += span
            } else {
                hi += span
            }
        }
        (lo, hi + 1)
    }

    /// True if the two views may touch the same memory (conservative: by byte span).
    pub fn may_overlap(&self, other: &Tensor) -> bool {
        if !self.same_buffer(other) || self.numel() == 0 || other.numel() == 0 {
            return false;
        }
        let (a0, a1) = self.element_span();
        let (b0, b1) = other.element_span();
        let (a0, a1) = (a0 * self.dtype.size() as i128, a1 * self.dtype.size() as i128);
        let (b0, b1) = (b0 * other.dtype.size() as i128, b1 * other.dtype.size() as i128);
        a0 < b1 && b0 < a1
    }

    /// The same view with its dims reordered.
    pub fn permuted(&self, perm: &[usize]) -> Tensor<'a> {
        Tensor {
            buffer: self.buffer,
            dtype: self.dtype,
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        }
    }
}

/// NumPy broadcasting of several shapes into one.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(Error::ShapeMismatch(format!("shapes {:?} do not broadcast", shapes)));
            }
        }
    }
    Ok(out)
}

/// Strides of `t` seen as broadcast to `shape` (0 on broadcast dims).
pub fn broadcast_strides(t: &Tensor, shape: &[usize]) -> Vec<isize> {
    let pad = shape.len() - t.rank();
    (0..shape.len()).map(|i| if i < pad || t.shape[i - pad] == 1 { 0 } else { t.strides[i - pad] }).collect()
}

/// Merge adjacent dims that are contiguous in every operand, so kernels
/// index with as few divisions as possible. `strides[k]` are per operand.
pub fn coalesce(shape: &[usize], strides: &[Vec<isize>]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut out_shape: Vec<usize> = Vec::new();
    let mut out_strides: Vec<Vec<isize>> = vec![Vec::new(); strides.len()];
    for i in 0..shape.len() {
        if shape[i] == 1 {
            continue;
        }
        let merge = !out_shape.is_empty()
            && strides
                .iter()
                .zip(&out_strides)
                .all(|(s, o)| s[i].checked_mul(shape[i] as isize) == Some(*o.last().unwrap()));
        if merge {
            *out_shape.last_mut().unwrap() *= shape[i];
            for (k, s) in strides.iter().enumerate() {
                *out_strides[k].last_mut().unwrap() = s[i];
            }
        } else {
            out_shape.push(shape[i]);
            for (k, s) in strides.iter().enumerate() {
                out_strides[k].push(s[i]);
            }
        }
    }
    (out_shape, out_strides)
}

/// The dims reordered by the strides of operand `key` (largest first, ties
/// in their order), every operand's strides alike: for maps whose result
/// does not depend on the order dims are walked in, so that a view whose
/// dims are not in memory order (channels-last (N, C, H, W)) coalesces as
/// the dense run it is.
pub fn in_memory_order(shape: &[usize], strides: Vec<Vec<isize>>, key: usize) -> (Vec<usize>, Vec<Vec<isize>>) {
    let ks = &strides[key];
    if ks.windows(2).all(|w| w[0].unsigned_abs() >= w[1].unsigned_abs()) {
        return (shape.to_vec(), strides);
    }
    let mut order: Vec<usize> = (0..shape.len()).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(ks[d].unsigned_abs()));
    let permuted = strides.iter().map(|s| order.iter().map(|&d| s[d]).collect()).collect();
    (order.iter().map(|&d| shape[d]).collect(), permuted)
}

/// Check that an output view has exactly the expected shape.
pub fn expect_shape(t: &Tensor, shape: &[usize], what: &str) -> Result<()> {
    if t.shape != shape {
        bail!(ShapeMismatch, "{what} has shape {:?}; expected {:?}", t.shape, shape);
    }
    Ok(())
}

/// Check that every view is on the stream's device.
pub fn same_device(dev: &Device, tensors: &[&Tensor]) -> Result<()> {
    for t in tensors {
        if !t.buffer.device.same(dev) {
            bail!(DeviceMismatch, "a tensor's buffer belongs to another device than the stream");
        }
    }
    Ok(())
}
