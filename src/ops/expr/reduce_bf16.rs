//! Reductions of bf16 values, as the reduce front door computes bf16
//! results: the values (already rounded to bf16) are reduced in f32 into f32
//! scratch, then one elementwise expression rounds each result to bf16 and
//! applies the epilogue. ARGMAX and ARGMIN write their indices directly.

use super::ir::{Expr, NodeId, Op};
use super::launch::launch;
use super::reduce_launch::launch_reduce;
use crate::bail;
use crate::error::Result;
use crate::ops::elementwise::bf16_route;
use crate::ops::reduce::ReduceOp;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

/// `pro` with its output cast to f32 (exact: the value is a bf16).
fn widened(pro: &Expr) -> Result<Expr> {
    let mut e = Expr { memo: Vec::new(), ..pro.clone() };
    let f = e.cast(pro.outputs[0], DType::F32)?;
    e.outputs = vec![f];
    Ok(e)
}

/// The expression `epi(bf16(y))` of an f32 input y.
fn rounded_then(epi: Option<&Expr>) -> Result<Expr> {
    let mut e = Expr::default();
    let y = e.input(DType::F32)?;
    let v = e.cast(y, DType::BF16)?;
    let Some(epi) = epi else {
        e.output(v)?;
        return Ok(e);
    };
    // epi's nodes, in order, with its input replaced by v.
    let mut map: Vec<NodeId> = Vec::with_capacity(epi.nodes.len());
    for n in &epi.nodes {
        let m = |id: NodeId| map[id as usize];
        let id = match n.op {
            Op::Input(_) => v,
            Op::Scalar(x) => e.scalar(n.dtype, x)?,
            Op::Param(_) => e.param(n.dtype)?,
            Op::Unary(u, a) => e.unary(u, m(a))?,
            Op::Binary(b, x, y) => e.binary(b, m(x), m(y))?,
            Op::Where(c, a, b) => e.where_(m(c), m(a), m(b))?,
            Op::Fma(a, b, c) => e.fma(m(a), m(b), m(c))?,
            Op::Cast(a) => e.cast(m(a), n.dtype)?,
        };
        map.push(id);
    }
    e.output(map[epi.outputs[0] as usize])?;
    Ok(e)
}

/// `launch_reduce` for a prologue whose value is bf16 (the caller has
/// checked the expressions, devices and that `out` shares no buffer with
/// an input).
#[allow(clippy::too_many_arguments)]
pub fn launch_reduce_bf16(
    stream: &StreamShared,
    pro: &Expr,
    epi: Option<&Expr>,
    op: ReduceOp,
    axes: &[i32],
    keepdim: bool,
    inputs: &[Tensor],
    params: &[f64],
    out: &Tensor,
) -> Result<()> {
    let pro32 = widened(pro)?;
    if matches!(op, ReduceOp::Argmax | ReduceOp::Argmin) {
        return launch_reduce(stream, &pro32, epi, op, axes, keepdim, inputs, params, out);
    }
    if out.dtype != DType::BF16 {
        bail!(DtypeMismatch, "{op:?} of bf16 values writes bf16; out is {}", out.dtype.wgsl());
    }
    // Built before anything is recorded: a failure here records nothing.
    let mut finish = rounded_then(epi)?;
    let y = bf16_route::uninit(stream, &out.shape)?;
    let (pro_params, epi_params) = params.split_at(pro.params.len());
    launch_reduce(stream, &pro32, None, op, axes, keepdim, inputs, pro_params, &y.view())?;
    launch(stream, &mut finish, &[y.view()], std::slice::from_ref(out), epi_params)
}
