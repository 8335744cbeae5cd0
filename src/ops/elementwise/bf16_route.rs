//! bf16 through f32 scratch on the GPU, where a kernel cannot read or write
//! bf16 itself: a bf16 input is widened into f32 scratch (exactly), the f32
//! kernel runs, and a bf16 output is written from f32 scratch, rounded once
//! to nearest even (the same value as rounding the f32 kernel's result).
//! Elementwise maps whose views have no vec4 units (or mix dtypes) go this
//! way; reductions and GEMM read bf16 in their kernels and use `uninit`
//! (and `widen` for GEMM's C) only for a bf16 output. Casts and copies
//! convert directly (`bf16::convert`).

use super::bf16::convert;
use super::common::{Code, Map, Operand};
use crate::error::Result;
use crate::ops::split::scratch;
use crate::ops::tensor::{contiguous_strides, DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// An f32 view over scratch: a bf16 view's values, or room for a result.
pub struct F32Scratch {
    buffer: Arc<Buffer>,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl F32Scratch {
    /// The scratch buffer (its elements start at its beginning).
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    pub fn view(&self) -> Tensor<'_> {
        Tensor {
            buffer: &self.buffer,
            dtype: DType::F32,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
        }
    }
}

/// Uninitialised f32 scratch of `shape`, contiguous.
pub fn uninit(stream: &StreamShared, shape: &[usize]) -> Result<F32Scratch> {
    let n: usize = shape.iter().product();
    let buffer = scratch(&stream.device, (n * 4) as u64)?;
    Ok(F32Scratch { buffer, shape: shape.to_vec(), strides: contiguous_strides(shape), offset: 0 })
}

/// The values of the bf16 view `t` in f32 scratch. Converts whichever is
/// smaller: the range of elements the view spans (keeping its strides, so
/// broadcast and transposed layouts stay as they are), or its elements
/// into a contiguous copy (`contiguous` forces the latter).
pub fn widen(stream: &StreamShared, t: &Tensor, contiguous: bool) -> Result<F32Scratch> {
    debug_assert_eq!(t.dtype, DType::BF16);
    let (lo, hi) = t.element_span();
    let span = (hi - lo) as usize;
    if contiguous || span > t.numel() {
        let out = uninit(stream, &t.shape)?;
        convert(stream, t, &out.view())?;
        return Ok(out);
    }
    let range =
        Tensor { buffer: t.buffer, dtype: DType::BF16, shape: vec![span], strides: vec![1], offset: lo as usize };
    let copy = uninit(stream, &[span])?;
    convert(stream, &range, &copy.view())?;
    Ok(F32Scratch { shape: t.shape.clone(), strides: t.strides.clone(), offset: t.offset - lo as usize, ..copy })
}

/// The map engine that computes the widened map (`map::run`, which routes
/// bf16 maps here: passed in, so that neither file imports the other).
pub type Engine = fn(&StreamShared, &Map) -> Result<()>;

/// The elementwise map `m` with bf16 operands or output (validated by
/// `map::run`): a cast or copy converts directly, everything else computes
/// in f32 on widened operands into f32 scratch (by `run`), rounded once
/// into the output.
pub fn map(stream: &StreamShared, m: &Map, run: Engine) -> Result<()> {
    if let ([Operand::Tensor(x)], Code::COPY | Code::CAST) = (m.operands, m.code) {
        return convert(stream, x, m.out);
    }
    let widened: Vec<Option<F32Scratch>> = m
        .operands
        .iter()
        .map(|o| match o {
            Operand::Tensor(t) if t.dtype == DType::BF16 => widen(stream, t, false).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let views: Vec<Option<Tensor>> = widened.iter().map(|w| w.as_ref().map(F32Scratch::view)).collect();
    let operands: Vec<Operand> =
        m.operands.iter().zip(&views).map(|(o, v)| v.as_ref().map_or(*o, Operand::Tensor)).collect();
    let a = if m.a == DType::BF16 { DType::F32 } else { m.a };
    if m.out.dtype != DType::BF16 {
        return run(stream, &Map { code: m.code, a, operands: &operands, out: m.out, scalars: m.scalars });
    }
    let y = uninit(stream, &m.out.shape)?;
    let yv = y.view();
    run(stream, &Map { code: m.code, a, operands: &operands, out: &yv, scalars: m.scalars })?;
    convert(stream, &yv, m.out)
}
