//! The types of the map engine that its files share: an op's kernel code,
//! scalar operands, and one map (`y = OP(x0, x1, x2)`).

use super::op::{BinaryOp, UnaryOp};
use crate::ops::half::{bf16_bits, bf16_to_f32, f16_bits};
use crate::ops::tensor::{DType, Tensor};

/// An op's code in elementwise.wgsl (its `OP` override).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code(pub(crate) u32);

pub(crate) const UNARY_BASE: u32 = 32;
/// The ops after the unary ones, from `Code::LEAKY_RELU` on.
pub(crate) const SPECIAL_BASE: u32 = 64;
pub(crate) const SPECIALS: u32 = 7;

impl Code {
    pub const LEAKY_RELU: Code = Code(SPECIAL_BASE);
    pub const CLAMP: Code = Code(SPECIAL_BASE + 1);
    pub const FMA: Code = Code(SPECIAL_BASE + 2);
    pub const WHERE: Code = Code(SPECIAL_BASE + 3);
    pub const COPY: Code = Code(SPECIAL_BASE + 4);
    pub const CAST: Code = Code(SPECIAL_BASE + 5);
    pub const ARANGE: Code = Code(SPECIAL_BASE + 6);

    pub fn binary(op: BinaryOp) -> Code {
        Code(op as u32)
    }
    pub fn unary(op: UnaryOp) -> Code {
        Code(UNARY_BASE + op as u32)
    }
}

/// A scalar operand's value as the kernel reads it: bits for integer
/// operands, an f32 for float ones (f16 ones rounded to f16 first, once).
#[derive(Clone, Copy)]
pub struct Scalar {
    pub bits: u32,
    pub value: f32,
}

impl Scalar {
    /// `v` converted to `dtype`: floats round to nearest even, once (f16
    /// and bf16 directly from the double), integers truncate toward zero and
    /// saturate to the type's range (NaN gives 0).
    pub fn of(dtype: DType, v: f64) -> Scalar {
        match dtype {
            DType::F32 => Scalar { bits: 0, value: v as f32 },
            DType::F16 => Scalar { bits: 0, value: f16_to_f32(f16_bits(v)) },
            DType::BF16 => Scalar { bits: 0, value: bf16_to_f32(bf16_bits(v)) },
            DType::I32 => Scalar { bits: (v as i32) as u32, value: 0.0 },
            DType::U32 => Scalar { bits: v as u32, value: 0.0 },
        }
    }

    /// Integer bits as they are (arange's wrapped start and step).
    pub fn bits(bits: u32) -> Scalar {
        Scalar { bits, value: 0.0 }
    }
}

/// The f32 with the value of the f16 `h` (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f32;
    match exp {
        0 => sign * frac * (2.0f32).powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + frac / 1024.0) * (2.0f32).powi(e - 15),
    }
}

/// One operand: a tensor, or scalar 0 or 1 of the map.
#[derive(Clone, Copy)]
pub enum Operand<'t, 'a> {
    Tensor(&'t Tensor<'a>),
    Scalar(u32),
}

/// One elementwise operation: `code` on `operands` of dtype `a` (the mask
/// of `WHERE` aside), written to `out`.
pub struct Map<'t, 'a> {
    pub code: Code,
    pub a: DType,
    pub operands: &'t [Operand<'t, 'a>],
    pub out: &'t Tensor<'a>,
    pub scalars: [Option<Scalar>; 2],
}
