//! Elementwise arithmetic, comparison and activation operators. The op
//! enums live in `op`; each operator checks dtypes and hands its operands
//! to the map engine (`map`, with `bf16_route` for bf16 through f32). The
//! children share `common` and `op`; none imports this file.

pub mod bf16;
pub mod bf16_route;
pub mod common;
pub mod map;
pub mod op;

use crate::bail;
use crate::error::Result;
use crate::ops::replay_scalars;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;
use common::{Code, Map, Operand, Scalar};
use map::run;
pub use op::{BinaryOp, UnaryOp, WGC_NUM_BINARY_OPS, WGC_NUM_UNARY_OPS};

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
    let _replay = stream.replay_scalars(|| vec![replay_scalars::elementwise("scalar", 0, a.dtype, scalar)]);
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
    let _replay = stream.replay_scalars(|| vec![replay_scalars::elementwise("slope", 0, DType::F32, slope as f64)]);
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
