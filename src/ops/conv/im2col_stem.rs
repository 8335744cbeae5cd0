//! f16 convolutions with few input channels (a vision net's first layer: 3
//! channels under a 7x7 or 3x3 window). Their K = C*KH*KW is small and not
//! whole 8-channel words, which the KHR gather needs, and the WGSL implicit
//! GEMM gathers it element by element. Two forms, chosen by shape from
//! H100 timings (`supports`): the image's and weight's channels padded to
//! 8 for the KHR gather (stem_pad.rs), or the columns (pixels x K padded
//! to whole 8s) written to scratch (conv_im2col.wgsl, 16 bytes per
//! invocation) and multiplied by the packed (O, Kp) weight on the GEMM,
//! with the bias and the activation in its epilogue: a channels-last
//! output as one (pixels x O) product per chunk stored along its rows,
//! the bias per column; any other output as the (O x pixels) product per
//! image of the im2col route, the bias per row.

use super::im2col::{self, columns_scratch, pack_weight, write_columns};
use super::problem::{Operands, Problem};
use super::route::{Fit, Stem};
use super::stem_pad;
use super::target::{StemForm, Target};
use crate::error::Result;
use crate::ops::gemm::epilogue::EpilogueViews;
use crate::ops::gemm::with_epilogue::{gemm_epilogue, GemmEpilogue};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

/// Input channels (per group) under which this route takes a convolution:
/// from 8 the KHR gather reads whole 16-byte words of channels.
const MAX_CHANNELS: usize = 7;
/// The largest K: beyond it the columns outweigh what the gathers cost.
const MAX_K: usize = 512;
/// Channels of the padded form.
const PADDED_CHANNELS: usize = 8;
/// Padded K under which a channels-first output takes the columns.
const SMALL_PADDED_K: usize = 128;

/// Ungrouped f16 convolutions of fewer than 8 input channels and K up to
/// `MAX_K` whose columns fit the adapter's bindings.
pub fn supports(p: &Problem, t: &Target) -> Fit<Stem> {
    let g = &p.geo;
    if p.dtype != DType::F16 {
        return Err(format!("{} is not f16", p.dtype.wgsl()));
    }
    if g.groups != 1 {
        return Err(format!("{} groups", g.groups));
    }
    if g.c > MAX_CHANNELS {
        return Err(format!("{} input channels, over {MAX_CHANNELS}", g.c));
    }
    if g.k() > MAX_K {
        return Err(format!("K = {} over {MAX_K}", g.k()));
    }
    let cols = im2col::supports(p, t).map_err(|e| e.to_string())?;
    let os = &p.out.strides;
    let rows = (os[1] == 1 || g.o == 1) && (g.oh == 1 || os[2] == g.ow as isize * os[3]);
    let columns = Stem { cols, rows, padded: None, pairs: false };
    let pairs = t.stem != StemForm::Pad8 && stem_pad::pairs_apply(g);
    let padded = match t.stem {
        StemForm::Columns => None,
        _ => stem_pad::supports(p, t, pairs).ok(),
    };
    // By shape, from an H100 (ResNet-50 conv1 and MobileNetV2 features.0,
    // batch 32 and 256, f16): the padded KHR gather ran 2.3-2.7x faster
    // than the WGSL implicit GEMM for 7x7 windows in either layout, and
    // fastest for 3x3 into a channels-last output; the columns were fastest
    // only for a small window into a channels-first output (MobileNetV2
    // NCHW: 1.86 ms against 2.59 and 3.10) and slower than the implicit
    // GEMM elsewhere (conv1: 1.00-1.14 ms against 0.89-0.91). So chosen,
    // against the implicit GEMM: conv1 0.40/0.35 ms (NCHW/NHWC) against
    // 0.91/0.93 at batch 32, 2.92/2.85 against 7.33/7.41 at 256;
    // MobileNetV2 1.32/2.38 against 2.65/2.68 at 256.
    // In whole networks at batch 256 (205 MB of padded image a forward in
    // one piece) the padded form's gain vanished (ResNet-50 f16 47.5 ms
    // either way) or turned into a loss (MobileNetV2 f16 21.1 against 18.8
    // ms); the padded images now go in chunks of the columns' budget
    // (stem_pad.rs).
    let small_channels_first = !rows && PADDED_CHANNELS * g.kh * g.kw < SMALL_PADDED_K;
    match (t.stem, padded) {
        (StemForm::Columns, _) => Ok(columns),
        (StemForm::Pad8 | StemForm::Pairs, Some(k)) => Ok(Stem { padded: Some(k), pairs, ..columns }),
        (StemForm::Auto, Some(k)) if !small_channels_first => Ok(Stem { padded: Some(k), pairs, ..columns }),
        _ if small_channels_first || !t.coop => Ok(columns),
        _ => Err(format!(
            "a {}x{} window into a {} output runs faster on the WGSL implicit GEMM than through columns",
            g.kh,
            g.kw,
            if rows { "channels-last" } else { "channels-first" }
        )),
    }
}

/// Record the plan `supports` made.
pub fn record(stream: &StreamShared, p: &Problem, plan: Stem, ops: &Operands) -> Result<()> {
    if let Some(khr) = plan.padded {
        return stem_pad::record(stream, p, khr, plan.pairs, ops);
    }
    if !plan.rows {
        return im2col::record_with(stream, p, plan.cols, ops, p.activation);
    }
    let g = &p.geo;
    let Operands { input, weight, bias, out } = *ops;
    let (kp, chunk, ohw) = (plan.cols.kp, plan.cols.chunk, g.oh * g.ow);
    let os = &out.strides;
    // The weight as B (kp, O): K down the rows of the (O, kp) weight.
    let packed;
    let b = if plan.cols.pack_weight {
        packed = pack_weight(stream, p, kp, weight)?;
        Tensor { buffer: &packed, dtype: DType::F16, shape: vec![kp, g.o], strides: vec![1, kp as isize], offset: 0 }
    } else {
        Tensor { shape: vec![kp, g.o], strides: vec![1, weight.strides[0]], ..weight.clone() }
    };
    let cols = columns_scratch(stream, chunk * ohw * kp)?;
    // Images one pixel stride apart fold into M: one product per chunk.
    let fold = g.n == 1 || os[0] == ohw as isize * os[3];
    let epilogue = EpilogueViews { bias, activation: p.activation, ..Default::default() };
    for n0 in (0..g.n).step_by(chunk) {
        let nb = chunk.min(g.n - n0);
        write_columns(stream, p, kp, input, &cols, (n0, nb, 0))?;
        let c_off = (out.offset as isize + n0 as isize * os[0]) as usize;
        let (a, b, c) = if fold {
            let a = Tensor {
                buffer: &cols,
                dtype: DType::F16,
                shape: vec![nb * ohw, kp],
                strides: vec![kp as isize, 1],
                offset: 0,
            };
            let c = Tensor { shape: vec![nb * ohw, g.o], strides: vec![os[3], os[1]], offset: c_off, ..out.clone() };
            (a, b.clone(), c)
        } else {
            let a = Tensor {
                buffer: &cols,
                dtype: DType::F16,
                shape: vec![nb, ohw, kp],
                strides: vec![(ohw * kp) as isize, kp as isize, 1],
                offset: 0,
            };
            let b = Tensor { shape: vec![1, kp, g.o], strides: vec![0, b.strides[0], b.strides[1]], ..b.clone() };
            let c =
                Tensor { shape: vec![nb, ohw, g.o], strides: vec![os[0], os[3], os[1]], offset: c_off, ..out.clone() };
            (a, b, c)
        };
        let product =
            GemmEpilogue { alpha: 1.0, a: &a, transpose_a: false, b: &b, transpose_b: false, epilogue, c: &c };
        gemm_epilogue(stream, &product)?;
    }
    Ok(())
}
