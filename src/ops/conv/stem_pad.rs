//! The first-layer route's other form (WGC_CONV_STEM=pad8): the image's
//! and the weight's few channels padded with zeros to 8 in channels-last
//! scratch (one pass each, pad_channels.rs), so that the KHR gather takes
//! the convolution with K = 8*KH*KW (more products than the columns' K,
//! but no columns written and read).
//! The padded images go in chunks of at most the columns' budget (batch
//! 256 at 224 x 224 pads 205 MB), each convolved on its own.

use super::khr;
use super::pad_channels::{pad_channels, PADDED};
use super::problem::{Geometry, Operands, Problem, View};
use super::route::{Fit, Khr};
use super::target::Target;
use crate::bail;
use crate::error::Result;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// `p` with 8 input channels, image and weight contiguous channels-last,
/// and no residual: this route adds one in a pass of its own
/// (`Route::fuses_residual`).
fn padded_problem(p: &Problem) -> Problem {
    let g = p.geo;
    let geo = super::problem::Geometry { c: PADDED, cg: PADDED, ..g };
    Problem {
        geo,
        input: View::channels_last(geo.input_shape(), DType::F16),
        weight: View::channels_last(geo.weight_shape(), DType::F16),
        residual: None,
        ..*p
    }
}

/// Images per chunk: as many padded images as the columns' budget (and a
/// binding) holds, at least one.
pub fn images_per_chunk(g: &Geometry, t: &Target) -> usize {
    let per_image = (g.h * g.w * PADDED * 2).max(1) as u64;
    ((t.cols_budget.min(t.max_binding) / per_image) as usize).clamp(1, g.n.max(1))
}

/// `p` for images n0..n0 + nb (views moved along the batch).
fn images(p: &Problem, n0: usize, nb: usize) -> Problem {
    let at = |v: View| View { offset: (v.offset as isize + n0 as isize * v.strides[0]) as usize, ..v };
    Problem { geo: Geometry { n: nb, ..p.geo }, input: at(p.input), out: at(p.out), ..*p }
}

/// The KHR gather's plan for the padded problem of one chunk of images
/// (the input's channels under 8, ungrouped, checked by the caller).
pub fn supports(p: &Problem, t: &Target) -> Fit<Khr> {
    let chunk = images(p, 0, images_per_chunk(&p.geo, t));
    khr::supports(&padded_problem(&chunk), t).map_err(|why| format!("padded to 8 channels: {why}"))
}

/// `t` (N, C, H, W), C < 8, padded into (N, H, W, 8) f16 scratch.
fn padded_copy(stream: &StreamShared, t: &Tensor) -> Result<Arc<Buffer>> {
    let [n, _, h, w] = [t.shape[0], t.shape[1], t.shape[2], t.shape[3]];
    // Every word written by the padding kernel: reusable in stream order.
    let buffer = stream.ordered_scratch((n * h * w * PADDED * 2) as u64)?;
    pad_channels(stream, t, &buffer)?;
    Ok(buffer)
}

/// The padded buffer as the (N, 8, H, W) channels-last view.
fn padded_view(buffer: &Buffer, shape: [usize; 4]) -> Tensor<'_> {
    let [n, _, h, w] = shape;
    let p = PADDED as isize;
    Tensor {
        buffer,
        dtype: DType::F16,
        shape: vec![n, PADDED, h, w],
        strides: vec![(h * w) as isize * p, 1, w as isize * p, p],
        offset: 0,
    }
}

/// `t` (N, ...) for images n0..n0 + nb.
fn narrowed<'a>(t: &Tensor<'a>, n0: usize, nb: usize) -> Tensor<'a> {
    let mut t = t.clone();
    t.shape[0] = nb;
    t.offset = (t.offset as isize + n0 as isize * t.strides[0]) as usize;
    t
}

/// Record the plan `supports` made: chunk by chunk of images, the last
/// (shorter) one planned for its own size.
pub fn record(stream: &StreamShared, p: &Problem, plan: Khr, ops: &Operands) -> Result<()> {
    let w = padded_copy(stream, ops.weight)?;
    let target = Target::of(&stream.device);
    let chunk = images_per_chunk(&p.geo, &target);
    for n0 in (0..p.geo.n).step_by(chunk) {
        let nb = chunk.min(p.geo.n - n0);
        let q = padded_problem(&images(p, n0, nb));
        let plan = match nb == chunk {
            true => plan,
            false => match khr::supports(&q, &target) {
                Ok(k) => k,
                Err(why) => bail!(Internal, "conv2d: the padded first layer's last {nb} images: {why}"),
            },
        };
        let (input, out) = (narrowed(ops.input, n0, nb), narrowed(ops.out, n0, nb));
        let x = padded_copy(stream, &input)?;
        let (input, weight) = (padded_view(&x, q.geo.input_shape()), padded_view(&w, q.geo.weight_shape()));
        khr::record(stream, &q, plan, &Operands { input: &input, weight: &weight, out: &out, bias: ops.bias }, None)?;
    }
    Ok(())
}
