//! Data movement: copies between views (making contiguous), permutes,
//! transposes, dtype casts, fills and ranges, all through the map engine.

pub mod concat;
pub mod gather;

use crate::bail;
use crate::error::Result;
use crate::ops::elementwise::map::{run, Code, Map, Operand, Scalar};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

fn check_same_shape(a: &Tensor, out: &Tensor, what: &str) -> Result<()> {
    if a.shape != out.shape {
        bail!(ShapeMismatch, "{what}: input shape {:?} differs from output shape {:?}", a.shape, out.shape);
    }
    Ok(())
}

pub fn copy(stream: &StreamShared, a: &Tensor, out: &Tensor) -> Result<()> {
    if a.dtype != out.dtype {
        bail!(DtypeMismatch, "copy: input is {} but output is {} (use cast)", a.dtype.wgsl(), out.dtype.wgsl());
    }
    check_same_shape(a, out, "copy")?;
    run(stream, &Map { code: Code::COPY, a: a.dtype, operands: &[Operand::Tensor(a)], out, scalars: [None, None] })
}

/// `perm` must be a permutation of 0..rank; out gets shape `in.shape[perm[i]]`.
pub fn permute(stream: &StreamShared, a: &Tensor, perm: &[usize], out: &Tensor) -> Result<()> {
    if perm.len() != a.rank() {
        bail!(InvalidArgument, "permute: {} axes given for a rank-{} tensor", perm.len(), a.rank());
    }
    let mut seen = [false; 8];
    for &p in perm {
        if p >= a.rank() || seen[p] {
            bail!(InvalidArgument, "permute: {perm:?} is not a permutation of 0..{}", a.rank());
        }
        seen[p] = true;
    }
    copy(stream, &a.permuted(perm), out)
}

/// Swap two axes; negative axes count from the end.
pub fn transpose(stream: &StreamShared, a: &Tensor, dim0: i32, dim1: i32, out: &Tensor) -> Result<()> {
    let r = a.rank() as i32;
    let norm = |d: i32| -> Result<usize> {
        let n = if d < 0 { d + r } else { d };
        if n < 0 || n >= r {
            bail!(OutOfRange, "transpose: axis {d} is out of range for rank {r}");
        }
        Ok(n as usize)
    };
    let (d0, d1) = (norm(dim0)?, norm(dim1)?);
    let mut perm: Vec<usize> = (0..a.rank()).collect();
    perm.swap(d0, d1);
    copy(stream, &a.permuted(&perm), out)
}

/// Float to integer: truncation toward zero, saturating at the integer
/// range, NaN -> 0. i32 <-> u32 reinterpret the bits (wrap). Integer to
/// f16 goes through f32, whose rounding is exact within the f16 range, so
/// the value is rounded once (elementwise.wgsl's `cast`).
pub fn cast(stream: &StreamShared, a: &Tensor, out: &Tensor) -> Result<()> {
    check_same_shape(a, out, "cast")?;
    let code = if a.dtype == out.dtype { Code::COPY } else { Code::CAST };
    run(stream, &Map { code, a: a.dtype, operands: &[Operand::Tensor(a)], out, scalars: [None, None] })
}

pub fn fill(stream: &StreamShared, out: &Tensor, value: f64) -> Result<()> {
    let scalars = [Some(Scalar::of(out.dtype, value)), None];
    run(stream, &Map { code: Code::COPY, a: out.dtype, operands: &[Operand::Scalar(0)], out, scalars })
}

/// `v` truncated toward zero and reduced modulo 2^32: the two's complement
/// bits of an i32 or u32 (exact for every finite double).
fn wrapped_bits(v: f64) -> u32 {
    v.trunc().rem_euclid(4294967296.0) as u32
}

/// out[i] = start + i * step. Floats compute in f32; integers convert start
/// and step toward zero, wrap them modulo 2^32 and compute with wrapping
/// integer arithmetic.
pub fn arange(stream: &StreamShared, out: &Tensor, start: f64, step: f64) -> Result<()> {
    if out.rank() != 1 {
        bail!(InvalidArgument, "arange: the output must be 1-D, not rank {}", out.rank());
    }
    if !start.is_finite() || !step.is_finite() {
        bail!(InvalidArgument, "arange: start and step must be finite");
    }
    let scalars = match out.dtype {
        DType::F32 | DType::F16 | DType::BF16 => [Scalar::of(DType::F32, start), Scalar::of(DType::F32, step)],
        _ => [Scalar::bits(wrapped_bits(start)), Scalar::bits(wrapped_bits(step))],
    };
    let scalars = scalars.map(Some);
    run(stream, &Map { code: Code::ARANGE, a: out.dtype, operands: &[], out, scalars })
}
