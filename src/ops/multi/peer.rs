//! Copies of tensor views between devices: contiguous, 4-byte aligned views
//! go straight through `runtime::peer_copy`; any other view is first made
//! contiguous in scratch on its own device (and the destination's scratch
//! copied into its view there), so strides, offsets and 2-byte dtypes of
//! odd lengths all work.

use crate::bail;
use crate::error::Result;
use crate::ops::movement;
use crate::ops::spec::{check_output, Sharing};
use crate::ops::split::scratch;
use crate::ops::tensor::Tensor;
use crate::runtime::buffer::Buffer;
use crate::runtime::peer_copy::{self, Endpoint};
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// The byte offset of a view that can be copied as one byte range, if it is one.
fn flat_range(t: &Tensor) -> Option<u64> {
    let bytes = (t.numel() * t.dtype.size()) as u64;
    let start = (t.offset * t.dtype.size()) as u64;
    (t.is_contiguous() && start.is_multiple_of(4) && bytes.is_multiple_of(4)).then_some(start)
}

/// A contiguous view of the whole of `buf` with `like`'s dtype and shape.
fn view_of<'a>(buf: &'a Buffer, like: &Tensor) -> Tensor<'a> {
    Tensor {
        buffer: buf,
        dtype: like.dtype,
        shape: like.shape.clone(),
        strides: crate::ops::tensor::contiguous_strides(&like.shape),
        offset: 0,
    }
}

/// Check one source view against its destinations: devices, dtype, shape,
/// an output whose elements do not share memory.
pub fn check(src_stream: &StreamShared, src: &Tensor, dsts: &[(&StreamShared, &Tensor)]) -> Result<()> {
    if !src.buffer.device.same(&src_stream.device) {
        bail!(DeviceMismatch, "the source tensor belongs to another device than the source stream");
    }
    for (s, d) in dsts {
        if !d.buffer.device.same(&s.device) {
            bail!(DeviceMismatch, "a destination tensor belongs to another device than its stream");
        }
        if d.dtype != src.dtype {
            bail!(
                DtypeMismatch,
                "copy between devices: source is {}, destination {}",
                src.dtype.wgsl(),
                d.dtype.wgsl()
            );
        }
        if d.shape != src.shape {
            bail!(ShapeMismatch, "copy between devices: source shape {:?}, destination {:?}", src.shape, d.shape);
        }
        let inputs: &[(&str, &Tensor)] = if d.buffer.device.same(&src.buffer.device) { &[("src", src)] } else { &[] };
        check_output("copy between devices", d, inputs, Sharing::Separate)?;
    }
    Ok(())
}

/// Copy `src` (ordered on `src_stream`) into every destination view (each
/// ordered on its stream). See `runtime::peer_copy` for what blocks.
pub fn copy_to_many(src_stream: &StreamShared, src: &Tensor, dsts: &[(&StreamShared, &Tensor)]) -> Result<()> {
    check(src_stream, src, dsts)?;
    if src.numel() == 0 || dsts.is_empty() {
        return Ok(());
    }
    let bytes = (src.numel() * src.dtype.size()) as u64;
    let padded = bytes.div_ceil(4) * 4;
    // The source as one aligned byte range.
    let staged: Option<Arc<Buffer>>;
    let (src_buf, src_off) = match flat_range(src) {
        Some(off) => (src.buffer, off),
        None => {
            staged = Some(scratch(&src.buffer.device, padded)?);
            let b = staged.as_deref().unwrap();
            movement::copy(src_stream, src, &view_of(b, src))?;
            (b, 0)
        }
    };
    // Destinations that are not one aligned range get scratch of their own.
    let mut scratches: Vec<Option<Arc<Buffer>>> = Vec::with_capacity(dsts.len());
    for (_, d) in dsts {
        scratches.push(match flat_range(d) {
            Some(_) => None,
            None => Some(scratch(&d.buffer.device, padded)?),
        });
    }
    let ends: Vec<Endpoint> = dsts
        .iter()
        .zip(&scratches)
        .map(|((s, d), tmp)| match tmp {
            Some(b) => Endpoint { stream: s, buffer: b, offset: 0 },
            None => Endpoint { stream: s, buffer: d.buffer, offset: flat_range(d).unwrap() },
        })
        .collect();
    // A flat source or destination has a multiple of 4 bytes; otherwise both
    // sides are scratch of the padded size.
    peer_copy::copy(Endpoint { stream: src_stream, buffer: src_buf, offset: src_off }, &ends, padded)?;
    for ((s, d), tmp) in dsts.iter().zip(&scratches) {
        if let Some(b) = tmp {
            movement::copy(s, &view_of(b, d), d)?;
        }
    }
    Ok(())
}

/// Copy one view into another, each ordered on its own stream.
pub fn copy(src_stream: &StreamShared, src: &Tensor, dst_stream: &StreamShared, dst: &Tensor) -> Result<()> {
    copy_to_many(src_stream, src, &[(dst_stream, dst)])
}
