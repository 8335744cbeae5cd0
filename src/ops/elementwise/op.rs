//! The op enums, defined once for the C API (cbindgen names them
//! `WgcBinaryOp` and `WgcUnaryOp`) and the kernels: an op's value is its
//! code in shaders/elementwise.wgsl (unary ops at `UNARY_BASE` + value).

use crate::bail;
use crate::error::Result;

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
