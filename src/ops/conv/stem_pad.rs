//! The first-layer route's other form (WGC_CONV_STEM=pad8 or pairs): the
//! image's and the weight's few channels padded with zeros to 8 in
//! channels-last scratch (one pass each, pad_channels.rs), so that the KHR
//! gather takes the convolution with K = 8*KH*KW (more products than the
//! columns' K, but no columns written and read).
//!
//! Pixel pairs: with up to 4 channels, a horizontal stride of 2 and no
//! horizontal dilation, two adjacent pixels of 4 channels make one 8-channel
//! pixel and the window moves one pair per output column: the same
//! convolution over pairs, KW/2 (rounded up) pairs wide with stride 1, the
//! horizontal padding written into the pairs. ResNet-50's 7x7 first layer
//! takes K = 8*7*4 = 224 instead of 8*7*7 = 392, and half the scratch.
//! The padded images go in chunks of at most the columns' budget (batch
//! 256 at 224 x 224 pads 205 MB), each convolved on its own.

use super::khr;
use super::pad_channels::{pad_channels, Padding, PADDED};
use super::problem::{Geometry, Operands, Problem, View};
use super::route::{Fit, Khr};
use super::target::Target;
use crate::bail;
use crate::error::Result;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// True if pixel pairs apply to `g` (the module's conditions).
pub fn pairs_apply(g: &Geometry) -> bool {
    g.c <= PADDED / 2 && g.sw == 2 && g.dw == 1
}

/// The padded convolution's geometry, and how the image and the weight are
/// padded: channels to 8, or pixel pairs (`pairs`, where `pairs_apply`).
fn layout(g: &Geometry, pairs: bool) -> (Geometry, Padding, Padding) {
    if !pairs {
        return (Geometry { c: PADDED, cg: PADDED, ..*g }, Padding::Channels8, Padding::Channels8);
    }
    let kp = g.kw.div_ceil(2);
    // Output column x reads pairs x .. x + kp - 1: pixels 2x - pw onwards.
    let words = g.ow - 1 + kp;
    let geo = Geometry { c: PADDED, cg: PADDED, w: words, kw: kp, sw: 1, pw: 0, ..*g };
    (geo, Padding::Pairs { lpad: g.pw, words }, Padding::Pairs { lpad: 0, words: kp })
}

/// `p` padded (`layout`), image and weight contiguous channels-last, and no
/// residual: this route adds one in a pass of its own
/// (`Route::fuses_residual`).
fn padded_problem(p: &Problem, pairs: bool) -> Problem {
    let (geo, _, _) = layout(&p.geo, pairs);
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
pub fn images_per_chunk(g: &Geometry, t: &Target, pairs: bool) -> usize {
    let (padded, _, _) = layout(g, pairs);
    let per_image = (padded.h * padded.w * PADDED * 2).max(1) as u64;
    ((t.cols_budget.min(t.max_binding) / per_image) as usize).clamp(1, g.n.max(1))
}

/// `p` for images n0..n0 + nb (views moved along the batch).
fn images(p: &Problem, n0: usize, nb: usize) -> Problem {
    let at = |v: View| View { offset: (v.offset as isize + n0 as isize * v.strides[0]) as usize, ..v };
    Problem { geo: Geometry { n: nb, ..p.geo }, input: at(p.input), out: at(p.out), ..*p }
}

/// The KHR gather's plan for the padded problem of one chunk of images
/// (the input's channels under 8, ungrouped, checked by the caller), in
/// pixel pairs where `pairs` (the caller checks `pairs_apply`).
pub fn supports(p: &Problem, t: &Target, pairs: bool) -> Fit<Khr> {
    let chunk = images(p, 0, images_per_chunk(&p.geo, t, pairs));
    let what = if pairs { "padded into pixel pairs" } else { "padded to 8 channels" };
    khr::supports(&padded_problem(&chunk, pairs), t).map_err(|why| format!("{what}: {why}"))
}

/// `t` (N, C, H, W), C < 8, padded as `padding` into (N, H, WQ, 8) f16
/// scratch.
fn padded_copy(stream: &StreamShared, t: &Tensor, padding: Padding) -> Result<Arc<Buffer>> {
    let [n, _, h, w] = [t.shape[0], t.shape[1], t.shape[2], t.shape[3]];
    // Every word written by the padding kernel: reusable in stream order.
    let buffer = stream.ordered_scratch((n * h * padding.words(w) * PADDED * 2) as u64)?;
    pad_channels(stream, t, padding, &buffer)?;
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
pub fn record(stream: &StreamShared, p: &Problem, plan: Khr, pairs: bool, ops: &Operands) -> Result<()> {
    let (_, image_padding, weight_padding) = layout(&p.geo, pairs);
    let w = padded_copy(stream, ops.weight, weight_padding)?;
    let target = Target::of(&stream.device);
    let chunk = images_per_chunk(&p.geo, &target, pairs);
    for n0 in (0..p.geo.n).step_by(chunk) {
        let nb = chunk.min(p.geo.n - n0);
        let q = padded_problem(&images(p, n0, nb), pairs);
        let plan = match nb == chunk {
            true => plan,
            false => match khr::supports(&q, &target) {
                Ok(k) => k,
                Err(why) => bail!(Internal, "conv2d: the padded first layer's last {nb} images: {why}"),
            },
        };
        let (input, out) = (narrowed(ops.input, n0, nb), narrowed(ops.out, n0, nb));
        let x = padded_copy(stream, &input, image_padding)?;
        let (input, weight) = (padded_view(&x, q.geo.input_shape()), padded_view(&w, q.geo.weight_shape()));
        khr::record(stream, &q, plan, &Operands { input: &input, weight: &weight, out: &out, bias: ops.bias }, None)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "stem_pad_tests.rs"]
mod tests;
