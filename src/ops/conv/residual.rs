//! The residual of `wgc_op_conv2d_bn_act_residual`: its checks, and where
//! the convolution's route does not add it as it stores, the one pass
//! `out = act(conv + residual)` (an elementwise expression) from f32-free
//! scratch in the output's own memory order.

use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::elementwise::{binary, unary, BinaryOp};
use crate::ops::spec::{check_output, Sharing};
use crate::ops::tensor::{expect_shape, Tensor};
use crate::runtime::stream::StreamShared;

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

/// out += residual in place, then out = act(out) in place: the passes
/// where the convolution's route did not add the residual as it stored.
pub fn add_activate(stream: &StreamShared, residual: &Tensor, act: Activation, out: &Tensor) -> Result<()> {
    binary(stream, BinaryOp::Add, out, residual, out)?;
    match act.unary_op() {
        Some(op) => unary(stream, op, out, out),
        None => Ok(()),
    }
}
