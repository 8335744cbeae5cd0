//! 1x1 stride-1 unpadded ungrouped convolutions over flat pixels: out[n]
//! (O x H*W) = W (O x C) times x[n] (C x H*W), one batched GEMM.

use super::problem::{Operands, Problem};
use super::route::Fit;
use crate::error::Result;
use crate::ops::gemm::{gemm_views, RowBias};
use crate::ops::tensor::Tensor;
use crate::runtime::stream::StreamShared;

/// Fewest pixels per image for this route: smaller images run better
/// through the implicit GEMM, which folds the batch into M.
const MIN_PIXELS: usize = 256;

pub fn supports(p: &Problem) -> Fit<()> {
    let g = &p.geo;
    if !(g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.groups == 1) {
        return Err(format!(
            "not a 1x1 stride-1 unpadded ungrouped convolution ({}x{} kernel, stride {}x{}, padding {}x{}, {} group(s))",
            g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.groups
        ));
    }
    let (i, o) = (&p.input.strides, &p.out.strides);
    let flat_in = i[3] == 1 && (g.h <= 1 || i[2] == g.w as isize);
    let flat_out = o[3] == 1 && (g.oh <= 1 || o[2] == g.ow as isize);
    if !(flat_in && flat_out) {
        return Err("the input's or output's pixels are not one unit-stride dim".into());
    }
    if g.oh * g.ow < MIN_PIXELS {
        return Err(format!("{} pixels per image, under {MIN_PIXELS}", g.oh * g.ow));
    }
    Ok(())
}

pub fn record(stream: &StreamShared, p: &Problem, ops: &Operands) -> Result<()> {
    let g = &p.geo;
    let Operands { input, weight, bias, out } = *ops;
    let a = Tensor { shape: vec![g.o, g.c], strides: vec![weight.strides[0], weight.strides[1]], ..weight.clone() };
    let b = Tensor {
        shape: vec![g.n, g.c, g.h * g.w],
        strides: vec![input.strides[0], input.strides[1], 1],
        ..input.clone()
    };
    let c =
        Tensor { shape: vec![g.n, g.o, g.oh * g.ow], strides: vec![out.strides[0], out.strides[1], 1], ..out.clone() };
    let rb = bias.map(|t| RowBias { tensor: t, stride: t.strides[0] });
    gemm_views(stream, 1.0, &a, &b, 0.0, &c, rb)
}
