//! The residual of `wgc_op_conv2d_bn_act_residual`: its checks, and where
//! the convolution's route does not add it as it stores, the one pass
//! `out = act(conv + residual)` (an elementwise expression) from f32-free
//! scratch in the output's own memory order.

use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::elementwise::BinaryOp;
use crate::ops::expr::ir::Expr;
use crate::ops::expr::launch::launch;
use crate::ops::spec::{check_output, Sharing};
use crate::ops::split::scratch;
use crate::ops::tensor::{contiguous_strides, expect_shape, DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// `residual` against `out`: the same shape and dtype, and no element in
/// common with it (exactly `out` included: the kernels read it through a
/// binding of its own).
pub fn check(what: &str, residual: &Tensor, out: &Tensor) -> Result<()> {
    if residual.dtype != out.dtype {
        bail!(DtypeMismatch, "{what}: residual is {} but out is {}", residual.dtype.wgsl(), out.dtype.wgsl());
    }
    expect_shape(residual, &out.shape, &format!("{what}: residual"))?;
    check_output(what, out, &[("the residual", residual)], Sharing::Separate).map(|_| ())
}

/// Uninitialized scratch of `out`'s shape and dtype, dense in `out`'s
/// memory order (so that the convolution into it takes out's route): the
/// view over `buffer` (from `scratch_buffer`).
pub fn scratch_like<'a>(out: &Tensor, buffer: &'a Arc<Buffer>) -> Tensor<'a> {
    let r = out.rank();
    // Dims from the largest stride to the smallest; ties keep their order.
    let mut order: Vec<usize> = (0..r).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(out.strides[d].unsigned_abs()));
    let shape: Vec<usize> = order.iter().map(|&d| out.shape[d]).collect();
    let dense = contiguous_strides(&shape);
    let mut strides = vec![0isize; r];
    for (i, &d) in order.iter().enumerate() {
        strides[d] = dense[i];
    }
    Tensor { buffer, dtype: out.dtype, shape: out.shape.clone(), strides, offset: 0 }
}

/// A buffer for `scratch_like`.
pub fn scratch_buffer(stream: &StreamShared, out: &Tensor) -> Result<Arc<Buffer>> {
    scratch(&stream.device, (out.numel() * out.dtype.size()) as u64)
}

/// out = act(conv + residual) in one pass.
pub fn add_activate(
    stream: &StreamShared,
    conv: &Tensor,
    residual: &Tensor,
    act: Activation,
    out: &Tensor,
) -> Result<()> {
    let dtype: DType = out.dtype;
    let mut e = Expr::default();
    let x = e.input(dtype)?;
    let r = e.input(dtype)?;
    let mut y = e.binary(BinaryOp::Add, x, r)?;
    if let Some(op) = act.unary_op() {
        y = e.unary(op, y)?;
    }
    e.output(y)?;
    launch(stream, &mut e, &[conv.clone(), residual.clone()], &[out.clone()], &[])
}
