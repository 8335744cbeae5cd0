//! What the row-wise operators of this family share: their argument
//! checks and the layout of rows along one axis.

use crate::bail;
use crate::error::Result;
use crate::ops::tensor::{coalesce, expect_shape, same_device, Tensor};
use crate::runtime::stream::StreamShared;

/// Check an optional per-element parameter (weight, bias) against the normalised shape.
pub fn check_param(
    stream: &StreamShared,
    p: Option<&Tensor>,
    input: &Tensor,
    shape: &[usize],
    what: &str,
) -> Result<()> {
    let Some(p) = p else { return Ok(()) };
    same_device(&stream.device, &[p])?;
    if p.dtype != input.dtype {
        bail!(DtypeMismatch, "{what} is {}, in is {}", p.dtype.wgsl(), input.dtype.wgsl());
    }
    expect_shape(p, shape, what)?;
    Ok(())
}

/// Rows along one axis: their count, length, and how to find them.
pub struct RowLayout {
    pub rows: usize,
    pub len: usize,
    pub in_stride: isize,
    pub out_stride: isize,
    pub outer_shape: Vec<usize>,
    pub outer_in: Vec<isize>,
    pub outer_out: Vec<isize>,
}

impl RowLayout {
    /// Rows of `input` and `out` (same shape) along `axis`.
    pub fn along(input: &Tensor, out: &Tensor, axis: usize) -> RowLayout {
        let others: Vec<usize> = (0..input.rank()).filter(|&d| d != axis).collect();
        let shape: Vec<usize> = others.iter().map(|&d| input.shape[d]).collect();
        let sin: Vec<isize> = others.iter().map(|&d| input.strides[d]).collect();
        let sout: Vec<isize> = others.iter().map(|&d| out.strides[d]).collect();
        let (outer_shape, mut strides) = coalesce(&shape, &[sin, sout]);
        let outer_out = strides.pop().unwrap();
        let outer_in = strides.pop().unwrap();
        RowLayout {
            rows: shape.iter().product(),
            len: input.shape[axis],
            in_stride: input.strides[axis],
            out_stride: out.strides[axis],
            outer_shape,
            outer_in,
            outer_out,
        }
    }

    /// Every row of both tensors is contiguous and starts 4-aligned, and whole vec4s cover it.
    pub fn vec4_ok(&self, in_offset: usize, out_offset: usize) -> bool {
        self.in_stride == 1
            && self.out_stride == 1
            && self.len.is_multiple_of(4)
            && in_offset.is_multiple_of(4)
            && out_offset.is_multiple_of(4)
            && self.outer_in.iter().chain(&self.outer_out).all(|s| s % 4 == 0)
    }
}

/// Checks shared by row-wise operators: floats, same device, out shaped and
/// typed like in (each operator then runs `spec::check_output` with its inputs).
pub fn check_rowwise(stream: &StreamShared, input: &Tensor, out: &Tensor, what: &str) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[input, out])?;
    if !input.dtype.is_float() {
        bail!(Unsupported, "{what} of {} tensors is not supported (f32 and f16 only)", input.dtype.wgsl());
    }
    input.dtype.check_device(dev)?;
    if out.dtype != input.dtype {
        bail!(DtypeMismatch, "{what}: out is {}, in is {}", out.dtype.wgsl(), input.dtype.wgsl());
    }
    expect_shape(out, &input.shape, "out")?;
    Ok(())
}
