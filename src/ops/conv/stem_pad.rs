//! The first-layer route's other form (WGC_CONV_STEM=pad8): the image's
//! and the weight's few channels padded with zeros to 8 in channels-last
//! scratch, so that the KHR gather takes the convolution with K = 8*KH*KW
//! (more products than the columns' K, but no columns written and read).

use super::khr;
use super::problem::{Operands, Problem, View};
use super::route::{Fit, Khr};
use super::target::Target;
use crate::error::Result;
use crate::ops::fill::fill_words;
use crate::ops::movement;
use crate::ops::split::scratch;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// Channels after padding: one 16-byte word of f16.
const PADDED: usize = 8;

/// `p` with 8 input channels, image and weight contiguous channels-last.
fn padded_problem(p: &Problem) -> Problem {
    let g = p.geo;
    let geo = super::problem::Geometry { c: PADDED, cg: PADDED, ..g };
    Problem {
        geo,
        input: View::channels_last(geo.input_shape(), DType::F16),
        weight: View::channels_last(geo.weight_shape(), DType::F16),
        ..*p
    }
}

/// The KHR gather's plan for the padded problem (the input's channels
/// under 8, ungrouped, checked by the caller).
pub fn supports(p: &Problem, t: &Target) -> Fit<Khr> {
    khr::supports(&padded_problem(p), t).map_err(|why| format!("padded to 8 channels: {why}"))
}

/// `t` (N, C, H, W), C < 8, into zeroed (N, H, W, 8) f16 scratch.
fn padded_copy(stream: &StreamShared, t: &Tensor) -> Result<Arc<Buffer>> {
    let [n, _, h, w] = [t.shape[0], t.shape[1], t.shape[2], t.shape[3]];
    let bytes = (n * h * w * PADDED * 2) as u64;
    let buffer = scratch(&stream.device, bytes)?;
    fill_words(stream, &buffer, 0, bytes, 0)?;
    let p = PADDED as isize;
    let into = Tensor {
        buffer: &buffer,
        dtype: DType::F16,
        shape: vec![n, h, w, t.shape[1]],
        strides: vec![(h * w) as isize * p, w as isize * p, p, 1],
        offset: 0,
    };
    movement::copy(stream, &t.permuted(&[0, 2, 3, 1]), &into)?;
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

/// Record the plan `supports` made.
pub fn record(stream: &StreamShared, p: &Problem, plan: Khr, ops: &Operands) -> Result<()> {
    let q = padded_problem(p);
    let x = padded_copy(stream, ops.input)?;
    let w = padded_copy(stream, ops.weight)?;
    let (input, weight) = (padded_view(&x, q.geo.input_shape()), padded_view(&w, q.geo.weight_shape()));
    khr::record(stream, &q, plan, &Operands { input: &input, weight: &weight, ..*ops })
}
