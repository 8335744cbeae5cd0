//! Elementwise arithmetic, comparison and activation operators. The op
//! enums are defined here once for the C API (cbindgen names them
//! `WgcBinaryOp` and `WgcUnaryOp`) and the kernels: an op's value is its
//! code in shaders/elementwise.wgsl (unary ops at `UNARY_BASE` + value).
//! Each operator checks dtypes and hands its operands to the map engine.

pub mod bf16;
pub mod bf16_route;
pub mod map;

use crate::bail;
use crate::error::Result;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;
use map::{run, Code, Map, Operand, Scalar};

/// Binary elementwise operations.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add = 0,
    Sub = 1,
    Mul = 2,
    /// Floats: IEEE division. Integers: truncation toward zero; x / 0 = 0;
    /// INT32_MIN / -1 = INT32_MIN.
    Div = 3,
    /// f32, f16 and bf16 only. Computed as exp2(y * log2|x|) in f32, log2 near 1
    /// by a series, so the relative error is within 1e-6 * (1 + |y log2|x||);
    /// negative x with an odd integral y gives a negative result, negative
    /// finite x with a non-integral y gives NaN; the special cases (zeros,
    /// infinities, NaN) are C99's, as the header's Numerics section lists.
    Pow = 4,
    /// NaN if either operand is NaN (PyTorch's maximum and minimum).
    Maximum = 5,
    Minimum = 6,
    /// Comparisons write a U32 tensor of 0 or 1. A NaN operand makes EQ,
    /// LT, LE, GT and GE 0 and NE 1 (IEEE 754).
    Eq = 7,
    Ne = 8,
    Lt = 9,
    Le = 10,
    Gt = 11,
    Ge = 12,
}

/// Unary elementwise operations. All take f32, f16 and bf16 (f16 and bf16
/// are computed in f32 and rounded once); NEG, ABS and RELU also take i32 (ABS(INT32_MIN) wraps).
/// NaN gives NaN for every op (RELU included). Accuracy in f32: exp, log,
/// sqrt, rsqrt, sigmoid, silu within 1e-6 relative (exp reduces its
/// argument exactly, log is computed by a series near 1); sin, cos within
/// 1e-6 absolute for |x| <= 4e5 (the argument is reduced modulo 2 pi in
/// extended precision; beyond, the adapter's sin and cos); sin, cos of
/// +-inf are NaN; tanh within 1e-6 absolute + relative (exactly +-1 beyond
/// |x| = 15); GELU_ERF uses the Abramowitz-Stegun 7.1.26 erf (|erf error| <=
/// 1.5e-7), within 1e-6 absolute + relative overall. f16: the f16 rounding
/// of those (2e-3 absolute + relative covers it).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg = 0,
    Abs = 1,
    Exp = 2,
    Log = 3,
    Sqrt = 4,
    Rsqrt = 5,
    Sin = 6,
    Cos = 7,
    Tanh = 8,
    Sigmoid = 9,
    Relu = 10,
    /// x * Phi(x) with the exact (erf) normal CDF.
    GeluErf = 11,
    /// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    GeluTanh = 12,
    /// x * sigmoid(x).
    Silu = 13,
    /// min(max(x, 0), 6) (PyTorch's `relu6`): exact; NaN gives NaN.
    Relu6 = 14,
    /// x * min(max(x + 3, 0), 6) / 6 (PyTorch's `hardswish`): x itself for
    /// x >= 3 (no overflow near the f32 limit), else x * max(x + 3, 0) / 6
    /// in f32 (relative 3e-7: three roundings); as in PyTorch, -inf gives
    /// NaN (-inf * 0); NaN gives NaN.
    Hardswish = 15,
}

/// The number of `WgcBinaryOp` values (0 .. WGC_NUM_BINARY_OPS - 1): a
/// loop over every binary op stops here.
pub const WGC_NUM_BINARY_OPS: u32 = 13;
/// The number of `WgcUnaryOp` values (0 .. WGC_NUM_UNARY_OPS - 1).
pub const WGC_NUM_UNARY_OPS: u32 = 16;
// The counts name the last ops: adding an op means adding it above and here.
const _: () = assert!(BinaryOp::Ge as u32 + 1 == WGC_NUM_BINARY_OPS);
const _: () = assert!(UnaryOp::Hardswish as u32 + 1 == WGC_NUM_UNARY_OPS);

impl BinaryOp {
    /// Read from a u32, not the enum: C may pass any value.
    pub fn from_u32(v: u32) -> Result<Self> {
        if v >= WGC_NUM_BINARY_OPS {
            bail!(InvalidArgument, "unknown binary op {v}");
        }
        // SAFETY: repr(u32) with the values 0 .. WGC_NUM_BINARY_OPS - 1.
        Ok(unsafe { std::mem::transmute::<u32, BinaryOp>(v) })
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }
}

impl UnaryOp {
    /// Read from a u32, not the enum: C may pass any value.
    pub fn from_u32(v: u32) -> Result<Self> {
        if v >= WGC_NUM_UNARY_OPS {
            bail!(InvalidArgument, "unknown unary op {v}");
        }
        // SAFETY: repr(u32) with the values 0 .. WGC_NUM_UNARY_OPS - 1.
        Ok(unsafe { std::mem::transmute::<u32, UnaryOp>(v) })
    }
}

fn check_out_dtype(op: BinaryOp, a: &Tensor, out: &Tensor) -> Result<()> {
    let want = if op.is_comparison() { DType::U32 } else { a.dtype };
    if out.dtype != want {
        bail!(
            DtypeMismatch,
            "{op:?} on {} writes {}, but the output is {}",
            a.dtype.wgsl(),
            want.wgsl(),
            out.dtype.wgsl()
        );
    }
    if op == BinaryOp::Pow && !a.dtype.is_float() {
        bail!(Unsupported, "pow supports f32 and f16, not {}", a.dtype.wgsl());
    }
    Ok(())
}

pub fn binary(stream: &StreamShared, op: BinaryOp, a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    if a.dtype != b.dtype {
        bail!(DtypeMismatch, "{op:?}: a is {} and b is {}", a.dtype.wgsl(), b.dtype.wgsl());
    }
    check_out_dtype(op, a, out)?;
    let operands = [Operand::Tensor(a), Operand::Tensor(b)];
    run(stream, &Map { code: Code::binary(op), a: a.dtype, operands: &operands, out, scalars: [None, None] })
}

pub fn binary_scalar(stream: &StreamShared, op: BinaryOp, a: &Tensor, scalar: f64, out: &Tensor) -> Result<()> {
    check_out_dtype(op, a, out)?;
    let operands = [Operand::Tensor(a), Operand::Scalar(0)];
    let scalars = [Some(Scalar::of(a.dtype, scalar)), None];
    run(stream, &Map { code: Code::binary(op), a: a.dtype, operands: &operands, out, scalars })
}

fn same_dtype(a: &Tensor, out: &Tensor, what: impl std::fmt::Display) -> Result<()> {
    if a.dtype != out.dtype {
        bail!(DtypeMismatch, "{what}: input is {} but output is {}", a.dtype.wgsl(), out.dtype.wgsl());
    }
    Ok(())
}

pub fn unary(stream: &StreamShared, op: UnaryOp, a: &Tensor, out: &Tensor) -> Result<()> {
    same_dtype(a, out, format_args!("{op:?}"))?;
    let int_ok = matches!(op, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu);
    if !(a.dtype.is_float() || int_ok && a.dtype == DType::I32) {
        bail!(
            Unsupported,
            "{op:?} supports f32 and f16{}, not {}",
            if int_ok { " and i32" } else { "" },
            a.dtype.wgsl()
        );
    }
    run(stream, &Map { code: Code::unary(op), a: a.dtype, operands: &[Operand::Tensor(a)], out, scalars: [None, None] })
}

pub fn leaky_relu(stream: &StreamShared, a: &Tensor, slope: f32, out: &Tensor) -> Result<()> {
    same_dtype(a, out, "leaky_relu")?;
    if !a.dtype.is_float() {
        bail!(Unsupported, "leaky_relu supports f32 and f16, not {}", a.dtype.wgsl());
    }
    // In f32 with an f32 slope for f16 tensors too, as PyTorch computes it:
    // a slope rounded to f16 could become 0 and turn -inf into NaN.
    let scalars = [Some(Scalar::of(DType::F32, slope as f64)), None];
    run(stream, &Map { code: Code::LEAKY_RELU, a: a.dtype, operands: &[Operand::Tensor(a)], out, scalars })
}

pub fn clamp(stream: &StreamShared, a: &Tensor, lo: f64, hi: f64, out: &Tensor) -> Result<()> {
    same_dtype(a, out, "clamp")?;
    if lo.is_nan() || hi.is_nan() {
        bail!(InvalidArgument, "clamp bounds must not be NaN");
    }
    let scalars = [Some(Scalar::of(a.dtype, lo)), Some(Scalar::of(a.dtype, hi))];
    run(stream, &Map { code: Code::CLAMP, a: a.dtype, operands: &[Operand::Tensor(a)], out, scalars })
}

pub fn fma(stream: &StreamShared, a: &Tensor, b: &Tensor, c: &Tensor, out: &Tensor) -> Result<()> {
    if a.dtype != b.dtype || a.dtype != c.dtype {
        bail!(DtypeMismatch, "fma: a, b, c are {}, {}, {}", a.dtype.wgsl(), b.dtype.wgsl(), c.dtype.wgsl());
    }
    same_dtype(a, out, "fma")?;
    let operands = [Operand::Tensor(a), Operand::Tensor(b), Operand::Tensor(c)];
    run(stream, &Map { code: Code::FMA, a: a.dtype, operands: &operands, out, scalars: [None, None] })
}

pub fn where_(stream: &StreamShared, mask: &Tensor, a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    if mask.dtype != DType::U32 {
        bail!(DtypeMismatch, "where: the mask must be u32, not {}", mask.dtype.wgsl());
    }
    if a.dtype != b.dtype {
        bail!(DtypeMismatch, "where: a is {} and b is {}", a.dtype.wgsl(), b.dtype.wgsl());
    }
    same_dtype(a, out, "where")?;
    let operands = [Operand::Tensor(mask), Operand::Tensor(a), Operand::Tensor(b)];
    run(stream, &Map { code: Code::WHERE, a: a.dtype, operands: &operands, out, scalars: [None, None] })
}
