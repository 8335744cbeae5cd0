//! Elementwise expressions: a DAG of elementwise operations built node by
//! node, compiled into one kernel and launched as one operator.

use super::boundary::{borrow, out, run, to_handle, Handle};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{dtype_of, tensor, WgcTensor};
use crate::error::{Error, Result};
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::expr::ir::{Expr, NodeId};
use crate::ops::expr::launch::launch;
use crate::ops::tensor::Tensor;
use std::sync::{Arc, Mutex};

/// Most nodes one expression may have (inputs, scalars, parameters and
/// operations together).
pub const WGC_EXPR_MAX_NODES: u32 = 256;
/// Most input tensors one expression may read.
pub const WGC_EXPR_MAX_INPUTS: u32 = 12;
/// Most output tensors one expression may write.
pub const WGC_EXPR_MAX_OUTPUTS: u32 = 4;
/// Most scalar constants and parameters one expression may hold together.
pub const WGC_EXPR_MAX_SCALARS: u32 = 32;

// The header's limits are the IR's.
const _: () = {
    use crate::ops::expr::ir;
    assert!(WGC_EXPR_MAX_NODES as usize == ir::MAX_NODES && WGC_EXPR_MAX_INPUTS as usize == ir::MAX_INPUTS);
    assert!(WGC_EXPR_MAX_OUTPUTS as usize == ir::MAX_OUTPUTS && WGC_EXPR_MAX_SCALARS as usize == ir::MAX_SCALARS);
};

/// An elementwise expression: a DAG of nodes, each an input tensor, a
/// scalar constant, a launch parameter or an elementwise operation of
/// earlier nodes, and the list of nodes written to output tensors. Build it
/// with `wgc_expr_input`, `wgc_expr_scalar`, `wgc_expr_param`,
/// `wgc_expr_unary`, `wgc_expr_binary`, `wgc_expr_where`, `wgc_expr_fma`,
/// `wgc_expr_cast` and `wgc_expr_output`, each returning the new node's id
/// (0, 1, 2, ... in the order built); launch it with `wgc_op_expr`.
///
/// Nodes may only use nodes built before them, so expressions are acyclic;
/// an id not built yet is `WGC_ERROR_INVALID_ARGUMENT`. Each node has a
/// dtype, checked as it is built with the separate operators' rules and no
/// implicit promotion: binary ops, fma and where's values take operands of
/// one dtype (`WGC_ERROR_DTYPE_MISMATCH`; cast first), comparisons give
/// U32 0/1, where's mask is U32, POW and the unary ops other than NEG, ABS
/// and RELU need floats, those three also take I32
/// (`WGC_ERROR_UNSUPPORTED`). A failed build call leaves the expression
/// as it was. Limits (`WGC_ERROR_LIMIT_EXCEEDED`): `WGC_EXPR_MAX_NODES`
/// nodes, `WGC_EXPR_MAX_INPUTS` inputs, `WGC_EXPR_MAX_OUTPUTS` outputs,
/// `WGC_EXPR_MAX_SCALARS` constants and parameters.
///
/// Numerics: every node computes as the separate operator would
/// (`wgc_op_binary`, `wgc_op_unary`, `wgc_op_fma`, `wgc_op_where`,
/// `wgc_op_cast`), f16 and bf16 nodes computed in f32 and rounded to
/// their dtype after each op, so a fused expression gives the bits of the
/// chain of separate operators (same NaN and infinity rules, same
/// tolerances) with two exceptions. An F32 MUL whose result feeds an ADD
/// or SUB may be contracted with it into one fused multiply-add (WGSL lets
/// the driver do so): the product is then neither rounded nor overflows
/// on its own, so that node may differ from the separate operators' by up
/// to half an ulp of the product plus one ulp of the result (or be finite
/// where an overflowing product made them infinite or NaN), and later
/// nodes carry the difference. (f16 and bf16 products are rounded before
/// the add, so they are never contracted.) And a NaN stays NaN, but its
/// payload bits are unspecified, as PyTorch leaves them: they may differ
/// from the separate operators' NaN. To keep intermediates in f32, cast
/// the inputs to F32 and the result back.
///
/// Reference-counted; `wgc_expr_release` drops a reference. Building is
/// not meant to race with itself, but every call locks the expression, so
/// concurrent use from several threads (building and launching) is safe.
pub struct WgcExpr {
    _private: [u8; 0],
}

pub(crate) struct ExprObject {
    pub(super) expr: Mutex<Expr>,
}

impl Handle for WgcExpr {
    type Rust = ExprObject;
    const NAME: &'static str = "WgcExpr";
}

/// Create an empty expression into `*out_expr` (released with
/// `wgc_expr_release`). `WGC_ERROR_NULL_POINTER` if `out_expr` is NULL.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_create(out_expr: *mut *mut WgcExpr) -> WgcStatus {
    run(|| {
        let slot = unsafe { out(out_expr, "out_expr") }?;
        *slot = to_handle::<WgcExpr>(Arc::new(ExprObject { expr: Mutex::new(Expr::default()) }));
        Ok(())
    })
}

/// Take another reference to `expr`. NULL does nothing.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_retain(expr: *mut WgcExpr) {
    unsafe { super::boundary::retain(expr) }
}

/// Drop a reference to `expr`. NULL does nothing. Launched work does not
/// need the expression: it may be released right after `wgc_op_expr`.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_release(expr: *mut WgcExpr) {
    unsafe { super::boundary::release(expr) }
}

/// Add a node with `build` and write its id to `out_node`.
unsafe fn add(expr: *mut WgcExpr, out_node: *mut u32, build: impl FnOnce(&mut Expr) -> Result<NodeId>) -> WgcStatus {
    run(|| {
        let e = unsafe { borrow(expr as *const WgcExpr) }?;
        let slot = unsafe { out(out_node, "out_node") }?;
        let mut guard = e.expr.lock().unwrap_or_else(|p| p.into_inner());
        *slot = build(&mut guard)?;
        Ok(())
    })
}

/// Add input tensor number k (k = the number of inputs added before; the
/// k-th tensor of `wgc_op_expr`'s `inputs`) of `dtype` (a `WgcDtype`).
/// Unknown dtype: `WGC_ERROR_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_input(expr: *mut WgcExpr, dtype: u32, out_node: *mut u32) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.input(dtype_of(dtype)?)) }
}

/// Add a constant of `dtype`: `value` converted as `wgc_op_binary_scalar`
/// converts its scalar (floats rounded once to nearest even, integers
/// truncated and saturated, NaN -> 0). The value is not part of the
/// compiled kernel: expressions that differ only in constants share it.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_scalar(expr: *mut WgcExpr, dtype: u32, value: f64, out_node: *mut u32) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.scalar(dtype_of(dtype)?, value)) }
}

/// Add launch parameter number k (k = the number of parameters added
/// before) of `dtype`: its value is `params[k]` of each `wgc_op_expr`,
/// converted as `wgc_expr_scalar` converts. Changing it between launches
/// reuses the compiled kernel.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_param(expr: *mut WgcExpr, dtype: u32, out_node: *mut u32) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.param(dtype_of(dtype)?)) }
}

/// Add `op(a)`, `op` a `WgcUnaryOp` (unknown: `WGC_ERROR_INVALID_ARGUMENT`).
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_unary(expr: *mut WgcExpr, op: u32, a: u32, out_node: *mut u32) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.unary(UnaryOp::from_u32(op)?, a)) }
}

/// Add `a op b`, `op` a `WgcBinaryOp` (unknown: `WGC_ERROR_INVALID_ARGUMENT`).
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_binary(expr: *mut WgcExpr, op: u32, a: u32, b: u32, out_node: *mut u32) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.binary(BinaryOp::from_u32(op)?, a, b)) }
}

/// Add `mask != 0 ? a : b` (mask U32, a and b of one dtype).
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_where(
    expr: *mut WgcExpr,
    mask: u32,
    a: u32,
    b: u32,
    out_node: *mut u32,
) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.where_(mask, a, b)) }
}

/// Add `a * b + c` (one rounding for floats, as `wgc_op_fma`).
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_fma(expr: *mut WgcExpr, a: u32, b: u32, c: u32, out_node: *mut u32) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.fma(a, b, c)) }
}

/// Add `a` converted to `dtype`, as `wgc_op_cast` converts.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_cast(expr: *mut WgcExpr, a: u32, dtype: u32, out_node: *mut u32) -> WgcStatus {
    unsafe { add(expr, out_node, |e| e.cast(a, dtype_of(dtype)?)) }
}

/// Write node `node` to output tensor number j (j = the number of outputs
/// added before), whose dtype must be the node's. A node may be written to
/// several outputs.
#[no_mangle]
pub unsafe extern "C" fn wgc_expr_output(expr: *mut WgcExpr, node: u32) -> WgcStatus {
    run(|| {
        let e = unsafe { borrow(expr as *const WgcExpr) }?;
        e.expr.lock().unwrap_or_else(|p| p.into_inner()).output(node)?;
        Ok(())
    })
}

/// Views from a C array, or an error naming the argument.
pub(super) unsafe fn views<'a>(p: *const WgcTensor, n: u32, what: &str) -> Result<Vec<Tensor<'a>>> {
    if n > 0 && p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    (0..n as usize).map(|i| unsafe { tensor(p.add(i), &format!("{what}[{i}]")) }).collect()
}

/// Launch `expr`: every output is computed elementwise over the outputs'
/// shape (every output has the same shape; each input broadcasts to it
/// with NumPy's rules, `WGC_ERROR_SHAPE_MISMATCH` otherwise) in one
/// kernel. `inputs[k]` is input k (dtype as declared,
/// `WGC_ERROR_DTYPE_MISMATCH` otherwise), `outputs[j]` output j (the
/// dtype of its node), `params[k]` parameter k. Counts that differ from
/// the expression's, or an expression without outputs:
/// `WGC_ERROR_INVALID_ARGUMENT`. Views may be strided, offset, reversed
/// or broadcast (inputs); an output whose elements share memory, or that
/// shares a buffer with an input or another output, is
/// `WGC_ERROR_INVALID_ARGUMENT` (no in-place: write to a buffer of its own).
/// f16 needs shader-f16 support (`WGC_ERROR_UNSUPPORTED`); more tensors
/// than the adapter binds in one kernel: `WGC_ERROR_LIMIT_EXCEEDED`.
/// Everything is checked before anything is recorded. Empty outputs
/// succeed and launch nothing.
///
/// Compilation: the first launch of a structure compiles its kernel and
/// blocks while the driver compiles it (milliseconds); later launches of
/// any expression with the same live structure (ops, dtypes, which inputs
/// are read, outputs) and the same layout class (rank after merging
/// contiguous dims, whether every view allows 4-element units) reuse it
/// whatever their sizes, constants and parameters. Other launches do not
/// block: the work is recorded on the stream. Nodes no output depends on
/// are not computed, and inputs no output depends on are checked but not read.
///
/// # Safety
/// `inputs`, `outputs` and `params` must point to `n_inputs`, `n_outputs`
/// and `n_params` elements (NULL allowed for a count of 0).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_expr(
    stream: *const WgcStream,
    expr: *const WgcExpr,
    inputs: *const WgcTensor,
    n_inputs: u32,
    outputs: *const WgcTensor,
    n_outputs: u32,
    params: *const f64,
    n_params: u32,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let e = unsafe { borrow(expr) }?;
        let ins = unsafe { views(inputs, n_inputs, "inputs") }?;
        let outs = unsafe { views(outputs, n_outputs, "outputs") }?;
        if n_params > 0 && params.is_null() {
            return Err(Error::NullPointer("params is NULL".into()));
        }
        let ps: &[f64] =
            if n_params == 0 { &[] } else { unsafe { std::slice::from_raw_parts(params, n_params as usize) } };
        let mut guard = e.expr.lock().unwrap_or_else(|p| p.into_inner());
        // One profiled call, as each operator is (its launches share its call index).
        let _call = s.profile_call(|| {
            let (i, o): (Vec<&Tensor>, Vec<&Tensor>) = (ins.iter().collect(), outs.iter().collect());
            crate::ops::profile_call::call("expr", &i, &o, 0)
        });
        launch(s, &mut guard, &ins, &outs, ps)
    })
}
