//! Elementwise arithmetic, comparison and activation operators: each picks
//! the WGSL expression of its op for the dtype and hands it to the map engine.

use super::elementwise_map::{run, Map, Scalar};
use super::tensor::{DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Maximum,
    Minimum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Abs,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tanh,
    Sigmoid,
    Relu,
    GeluErf,
    GeluTanh,
    Silu,
}

/// Integer division truncates toward zero; x / 0 is 0 and i32::MIN / -1 is
/// i32::MIN (no trap on any adapter).
const DIV_I32: &str = "select(x0 / select(x1, V0(1), (x1 == V0(0)) | ((x0 == V0(-2147483647 - 1)) & (x1 == V0(-1)))), V0(0), x1 == V0(0))";
const DIV_U32: &str = "select(x0 / select(x1, V0(1u), x1 == V0(0u)), V0(0u), x1 == V0(0u))";

/// Float comparisons, maximum and minimum test NaN by bits (`isnan_c`)
/// because drivers may fold comparisons as if NaN never occurred.
fn binary_expr(op: BinaryOp, dtype: DType, rhs: &str) -> Result<String> {
    let float = dtype.is_float();
    // NaN-aware forms for floats: NaN wins maximum and minimum (x0 + x1 is
    // then NaN), compares unequal to everything and orders with nothing.
    let cmp = |c: &str| {
        if float {
            format!("select(VO(0u), VO(1u), (x0 {c} {rhs}) & ordered_c(C(x0), C({rhs})))")
        } else {
            format!("select(VO(0u), VO(1u), x0 {c} {rhs})")
        }
    };
    let extreme = |f: &str| {
        if float {
            format!("select({f}(x0, {rhs}), x0 + {rhs}, !ordered_c(C(x0), C({rhs})))")
        } else {
            format!("{f}(x0, {rhs})")
        }
    };
    let e = match op {
        BinaryOp::Add => format!("x0 + {rhs}"),
        BinaryOp::Sub => format!("x0 - {rhs}"),
        BinaryOp::Mul => format!("x0 * {rhs}"),
        // In f32 whatever the dtype: an f16 quotient computed as x * (1 / y)
        // (NVIDIA does) loses its precision where 1 / y is subnormal in f16;
        // div_c does the same for f32 quotients by |y| > 2^126.
        BinaryOp::Div if float => format!("VO(div_c(C(x0), C({rhs})))"),
        BinaryOp::Div if dtype == DType::I32 => DIV_I32.replace("x1", rhs),
        BinaryOp::Div => DIV_U32.replace("x1", rhs),
        BinaryOp::Pow if float => format!("VO(pow_c(C(x0), C({rhs})))"),
        BinaryOp::Pow => bail!(Unsupported, "pow supports f32 and f16, not {}", dtype.wgsl()),
        BinaryOp::Maximum => extreme("max"),
        BinaryOp::Minimum => extreme("min"),
        BinaryOp::Eq => cmp("=="),
        BinaryOp::Ne if float => {
            format!("select(VO(1u), VO(0u), (x0 == {rhs}) & ordered_c(C(x0), C({rhs})))")
        }
        BinaryOp::Ne => format!("select(VO(0u), VO(1u), x0 != {rhs})"),
        BinaryOp::Lt => cmp("<"),
        BinaryOp::Le => cmp("<="),
        BinaryOp::Gt => cmp(">"),
        BinaryOp::Ge => cmp(">="),
    };
    Ok(e)
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
    Ok(())
}

pub fn binary(stream: &StreamShared, op: BinaryOp, a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    if a.dtype != b.dtype {
        bail!(DtypeMismatch, "{op:?}: a is {} and b is {}", a.dtype.wgsl(), b.dtype.wgsl());
    }
    check_out_dtype(op, a, out)?;
    let expr = binary_expr(op, a.dtype, "x1")?;
    run(stream, &Map { inputs: &[a, b], out, expr: &expr, scalars: [None, None] })
}

pub fn binary_scalar(stream: &StreamShared, op: BinaryOp, a: &Tensor, scalar: f64, out: &Tensor) -> Result<()> {
    check_out_dtype(op, a, out)?;
    let expr = binary_expr(op, a.dtype, "s0")?;
    run(stream, &Map { inputs: &[a], out, expr: &expr, scalars: [Some(Scalar::of(a.dtype, scalar)), None] })
}

fn unary_expr(op: UnaryOp, dtype: DType) -> Result<&'static str> {
    let int_ok = matches!(op, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu) && dtype == DType::I32;
    if !dtype.is_float() && !int_ok {
        bail!(
            Unsupported,
            "{op:?} supports f32 and f16{}, not {}",
            if matches!(op, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu) { " and i32" } else { "" },
            dtype.wgsl()
        );
    }
    // f16 is computed in f32 (C) and rounded once.
    Ok(match op {
        UnaryOp::Neg => "-x0",
        UnaryOp::Abs => "abs(x0)",
        UnaryOp::Relu if dtype.is_float() => "select(max(x0, V0(0)), x0, isnan_c(C(x0)))",
        UnaryOp::Relu => "max(x0, V0(0))",
        UnaryOp::Exp => "VO(exp_c(C(x0)))",
        UnaryOp::Log => "VO(log_c(C(x0)))",
        UnaryOp::Sqrt => "VO(sqrt(C(x0)))",
        UnaryOp::Rsqrt => "VO(inverseSqrt(C(x0)))",
        UnaryOp::Sin => "VO(sin_c(C(x0)))",
        UnaryOp::Cos => "VO(cos_c(C(x0)))",
        UnaryOp::Tanh => "VO(tanh_c(C(x0)))",
        UnaryOp::Sigmoid => "VO(sigmoid_c(C(x0)))",
        UnaryOp::GeluErf => "VO(0.5 * C(x0) * (1.0 + erf_c(C(x0) * 0.7071067811865476)))",
        UnaryOp::GeluTanh => {
            "VO(0.5 * C(x0) * (1.0 + tanh_c(0.7978845608028654 * (C(x0) + 0.044715 * C(x0) * C(x0) * C(x0)))))"
        }
        UnaryOp::Silu => "VO(silu_c(C(x0)))",
    })
}

fn same_dtype(a: &Tensor, out: &Tensor, what: &str) -> Result<()> {
    if a.dtype != out.dtype {
        bail!(DtypeMismatch, "{what}: input is {} but output is {}", a.dtype.wgsl(), out.dtype.wgsl());
    }
    Ok(())
}

pub fn unary(stream: &StreamShared, op: UnaryOp, a: &Tensor, out: &Tensor) -> Result<()> {
    same_dtype(a, out, &format!("{op:?}"))?;
    let expr = unary_expr(op, a.dtype)?;
    run(stream, &Map { inputs: &[a], out, expr, scalars: [None, None] })
}

pub fn leaky_relu(stream: &StreamShared, a: &Tensor, slope: f32, out: &Tensor) -> Result<()> {
    same_dtype(a, out, "leaky_relu")?;
    if !a.dtype.is_float() {
        bail!(Unsupported, "leaky_relu supports f32 and f16, not {}", a.dtype.wgsl());
    }
    // In f32 with an f32 slope for f16 tensors too, as PyTorch computes it:
    // a slope rounded to f16 could become 0 and turn -inf into NaN.
    let expr = "VO(select(C(x0) * s0, C(x0), x0 >= V0(0.0)))";
    run(stream, &Map { inputs: &[a], out, expr, scalars: [Some(Scalar::of(DType::F32, slope as f64)), None] })
}

pub fn clamp(stream: &StreamShared, a: &Tensor, lo: f64, hi: f64, out: &Tensor) -> Result<()> {
    same_dtype(a, out, "clamp")?;
    if lo.is_nan() || hi.is_nan() {
        bail!(InvalidArgument, "clamp bounds must not be NaN");
    }
    // NaN stays NaN (min and max would pick a bound).
    let expr =
        if a.dtype.is_float() { "select(min(max(x0, s0), s1), x0, isnan_c(C(x0)))" } else { "min(max(x0, s0), s1)" };
    let scalars = [Some(Scalar::of(a.dtype, lo)), Some(Scalar::of(a.dtype, hi))];
    run(stream, &Map { inputs: &[a], out, expr, scalars })
}

pub fn fma(stream: &StreamShared, a: &Tensor, b: &Tensor, c: &Tensor, out: &Tensor) -> Result<()> {
    if a.dtype != b.dtype || a.dtype != c.dtype {
        bail!(DtypeMismatch, "fma: a, b, c are {}, {}, {}", a.dtype.wgsl(), b.dtype.wgsl(), c.dtype.wgsl());
    }
    same_dtype(a, out, "fma")?;
    let expr = if a.dtype.is_float() { "fma(x0, x1, x2)" } else { "x0 * x1 + x2" };
    run(stream, &Map { inputs: &[a, b, c], out, expr, scalars: [None, None] })
}

pub fn where_(stream: &StreamShared, mask: &Tensor, a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    if mask.dtype != DType::U32 {
        bail!(DtypeMismatch, "where: the mask must be u32, not {}", mask.dtype.wgsl());
    }
    if a.dtype != b.dtype {
        bail!(DtypeMismatch, "where: a is {} and b is {}", a.dtype.wgsl(), b.dtype.wgsl());
    }
    same_dtype(a, out, "where")?;
    let expr = "select(x2, x1, x0 != V0(0u))";
    run(stream, &Map { inputs: &[mask, a, b], out, expr, scalars: [None, None] })
}
