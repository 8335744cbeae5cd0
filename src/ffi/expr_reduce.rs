//! Reductions of an expression's value, with an elementwise epilogue, as
//! one operator.

use super::boundary::{borrow, run};
use super::expr::{views, WgcExpr};
use super::ops_reduce::{axes_of, reduce_op_of};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Error;
use crate::ops::expr::ir::Expr;
use crate::ops::expr::reduce_launch::launch_reduce;
use crate::ops::tensor::Tensor;

/// A copy of the expression behind `e` (so that one expression may serve
/// as both prologue and epilogue without locking it twice).
unsafe fn expr_of(e: *const WgcExpr, what: &str) -> crate::error::Result<Expr> {
    if e.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    let obj = unsafe { borrow(e) }?;
    let guard = obj.expr.lock().unwrap_or_else(|p| p.into_inner());
    Ok(Expr { memo: Vec::new(), ..guard.clone() })
}

/// Reduce the value of an expression over axes, in one operator, without
/// an intermediate tensor: `out = epilogue(reduce_op(expr(inputs), axes))`,
/// e.g. `sum(x * y)`, `mean((x - m)^2)` with `m` a keepdim mean,
/// `max(|x|)`, or `sqrt(mean((x - m)^2) + eps)` with the epilogue
/// `sqrt(v + eps)`.
///
/// `expr` must have exactly one output (`WGC_ERROR_INVALID_ARGUMENT`
/// otherwise): its node's value, computed elementwise over the broadcast
/// shape of `inputs` (NumPy's rules; shapes that do not broadcast:
/// `WGC_ERROR_SHAPE_MISMATCH`), is what is reduced. `inputs[k]` is the
/// expression's input k, of the declared dtype (`WGC_ERROR_DTYPE_MISMATCH`
/// otherwise); views may be strided, offset, reversed or broadcast.
/// `reduce_op` (a `WgcReduceOp`), `axes`, `axis_count` and `keepdim` are
/// as for `wgc_op_reduce` applied to a tensor of that broadcast shape
/// holding the expression's values (so the axes count in its rank), with
/// the same dtypes (SUM, MAX, MIN and PROD of f32, f16, bf16, i32 and u32
/// values; MEAN of floats only; ARGMAX and ARGMIN of any, writing i32),
/// accumulation (floats in f32, compensated sums), NaN rules (NaN
/// propagates through every op; ARGMAX and ARGMIN give the first NaN's
/// index), empty reductions (SUM 0, PROD 1, MEAN NaN, the others
/// `WGC_ERROR_INVALID_ARGUMENT`), statuses and accuracy. A value of dtype
/// bf16 is reduced as `wgc_op_reduce` reduces bf16 tensors: in f32 into
/// scratch, the result rounded once to bf16 (then the epilogue runs as a
/// second kernel over the scratch; ARGMAX and ARGMIN need no second one).
///
/// `epilogue` (NULL: none) maps each reduced value before it is written:
/// an expression with exactly one input, the reduced value, and one
/// output, both of the reduced value's dtype (the expression's value's
/// dtype, or I32 for ARGMAX and ARGMIN; `WGC_ERROR_INVALID_ARGUMENT` for
/// other counts, `WGC_ERROR_DTYPE_MISMATCH` for other dtypes). `out` has
/// that dtype and the reduced shape. The reduced value is rounded to its
/// dtype before the epilogue reads it, so the result is that of
/// `wgc_op_reduce` into a tensor followed by `wgc_op_expr`. One expression
/// may serve as both.
///
/// `params` holds the expression's parameters (`wgc_expr_param`) then the
/// epilogue's: `n_params` must be their total (`WGC_ERROR_INVALID_ARGUMENT`
/// otherwise). Constants and parameters of both count together against
/// `WGC_EXPR_MAX_SCALARS` (`WGC_ERROR_LIMIT_EXCEEDED`); so do more
/// tensors than the adapter binds in one kernel (the inputs read, plus 2).
///
/// `out` must share no buffer with an input and its elements no memory
/// (`WGC_ERROR_INVALID_ARGUMENT`). Variance and standard deviation are not
/// among the ops; write them as `mean((x - m)^2)`. NULL `stream`, `expr`
/// or `out`, or NULL arrays with nonzero counts: `WGC_ERROR_NULL_POINTER`.
/// f16 needs shader-f16 support, bf16 inputs bf16 support
/// (`WGC_ERROR_UNSUPPORTED`). Everything is checked before anything is
/// recorded; empty outputs succeed and launch nothing.
///
/// Kernels: the reduction kernels of `wgc_op_reduce` (one launch for rows
/// of contiguous values, else a split pass and a finishing pass), with the
/// expression generated into the step that reads each element and the
/// epilogue into the one that writes the result; the reduction planned as
/// for a dense tensor of the broadcast shape, so the column and run
/// kernels are not used. Compilation: the first launch of a structure
/// compiles its kernels (the prologue's and epilogue's live structure and
/// dtypes, the reduce op, and the layout class: rank after merging
/// contiguous dims, which inputs are dense, whether every input allows
/// 4-element units) and blocks while the driver compiles them; later
/// launches reuse them whatever their sizes, constants and parameters.
/// Other launches record work on `stream` and do not block.
///
/// # Safety
/// `inputs`, `params` and `axes` must point to `n_inputs`, `n_params` and
/// `axis_count` elements (NULL allowed for a count of 0).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_expr_reduce(
    stream: *const WgcStream,
    expr: *const WgcExpr,
    reduce_op: u32,
    axes: *const i32,
    axis_count: u32,
    keepdim: u32,
    inputs: *const WgcTensor,
    n_inputs: u32,
    params: *const f64,
    n_params: u32,
    epilogue: *const WgcExpr,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let pro = unsafe { expr_of(expr, "expr") }?;
        let epi = if epilogue.is_null() { None } else { Some(unsafe { expr_of(epilogue, "epilogue") }?) };
        let op = reduce_op_of(reduce_op)?;
        let axes = unsafe { axes_of(axes, axis_count) }?;
        let ins = unsafe { views(inputs, n_inputs, "inputs") }?;
        let y = unsafe { tensor(out, "out") }?;
        if n_params > 0 && params.is_null() {
            return Err(Error::NullPointer("params is NULL".into()));
        }
        let ps: &[f64] =
            if n_params == 0 { &[] } else { unsafe { std::slice::from_raw_parts(params, n_params as usize) } };
        let _call = s.profile_call(|| {
            let i: Vec<&Tensor> = ins.iter().collect();
            crate::ops::profile_call::call("expr_reduce", &i, &[&y], 0)
        });
        launch_reduce(s, &pro, epi.as_ref(), op, axes, keepdim != 0, &ins, ps, &y)
    })
}
