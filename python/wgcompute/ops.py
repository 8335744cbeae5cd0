"""Every built-in operator as a function.

Each records GPU work on the current stream of its inputs' device (see
:mod:`wgcompute.stream`) and returns its output, a new tensor unless ``out=``
names one. Argument checks are the library's: a bad call raises the
:class:`~wgcompute.WgcError` subclass of its status with the library's
message. The element-wise, unary and reduction functions are generated from
the header's ``WGC_BINARY_OP_*``, ``WGC_UNARY_OP_*`` and ``WGC_REDUCE_OP_*``
constants, one wrapper per operator family.
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from ._ffi import ffi, lib
from ._structs import enum_values, new_sized
from .dtypes import DType, DTypeLike, as_dtype
from .errors import check
from .stream import current_stream
from .tensor import Tensor, _new, empty, asarray

Scalar = Union[int, float, bool, np.number]


def _traced(*xs: Any) -> Any:
    """The first value among ``xs`` that ``wg.fuse`` is tracing, or None:
    inside a fused function the element-wise ops record nodes instead."""
    for x in xs:
        # Tensors first: the eager path pays one class check per argument.
        if x.__class__ is not Tensor and hasattr(x, "_wgc_trace"):
            return x
    return None


Axes = Union[None, int, Sequence[int]]

BINARY_OPS: Dict[str, int] = enum_values("WGC_BINARY_OP_")
UNARY_OPS: Dict[str, int] = enum_values("WGC_UNARY_OP_")
REDUCE_OPS: Dict[str, int] = enum_values("WGC_REDUCE_OP_")
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}  # write uint32 0/1
ARG_REDUCTIONS = {"argmax", "argmin"}  # write int32 indices

_U32 = as_dtype("uint32")
_I32 = as_dtype("int32")


_TENSOR_C = ffi.typeof("WgcTensor *")
_MAX_RANK = len(ffi.new(_TENSOR_C).shape)


def _c(t: Optional[Tensor]) -> Any:
    """The ``WgcTensor *`` describing ``t`` (NULL for None), made once per
    view: a view's buffer, dtype, shape, strides and offset never change."""
    if t is None:
        return ffi.NULL
    c = t._cs
    if c is not None and t._buf.ptr is not None:
        return c
    rank = len(t.shape)
    if rank > _MAX_RANK:
        raise ValueError(f"at most {_MAX_RANK} dims, not {rank}")
    c = ffi.new(_TENSOR_C, [t._buf.get(), t.dtype.value, rank, t.shape, t.strides, t.offset])
    t._cs = c
    return c


def _stream(t: Tensor) -> Any:
    return current_stream(t._dev).handle


_SCALAR_TYPES = (float, int)


def _is_scalar(x: Any) -> bool:
    if type(x) in _SCALAR_TYPES:
        return True
    return isinstance(x, (numbers.Number, np.number)) and not isinstance(x, Tensor)


def _out(out: Optional[Tensor], shape: Sequence[int], dtype: DType, like: Tensor) -> Tensor:
    """``out``, or a new tensor for an operator to write completely (its
    contents start unspecified: no clear, nothing submitted)."""
    return out if out is not None else _new(tuple(shape), dtype, like._dev, False)


def _scalar_tensor(value: Scalar, like: Tensor) -> Tensor:
    t = _new((), like.dtype, like._dev, False)
    fill(t, value)
    return t


def _tensors(*xs: Any) -> Tuple[Tensor, ...]:
    """Tensors for the arguments: Python numbers take the dtype of the first tensor."""
    like = next((x for x in xs if isinstance(x, Tensor)), None)
    if like is None:
        raise TypeError("at least one argument must be a wgcompute Tensor")
    return tuple(x if isinstance(x, Tensor) else (_scalar_tensor(x, like) if _is_scalar(x) else asarray(x, like.dtype, like.device)) for x in xs)


def _broadcast(*shapes: Sequence[int]) -> Tuple[int, ...]:
    first = shapes[0]
    if all(s == first for s in shapes):
        return tuple(first)
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        return tuple(shapes[0])  # let the library report the mismatch


# --- element-wise ----------------------------------------------------------------


_COMPARISON_CODES = {BINARY_OPS[n] for n in COMPARISONS if n in BINARY_OPS}
_op_binary_scalar = lib.wgc_op_binary_scalar
_op_binary = lib.wgc_op_binary


def binary(op: Union[str, int], a: Any, b: Any, out: Optional[Tensor] = None) -> Tensor:
    """``out = a OP b`` with NumPy broadcasting (``wgc_op_binary``); a Python
    number on either side is converted to the tensor's dtype."""
    t = _traced(a, b)
    if t is not None:  # inside wg.fuse: record a node
        return t._wgc_trace.binary(op, a, b)
    code = BINARY_OPS[op] if op.__class__ is str else op
    if isinstance(a, Tensor) and _is_scalar(b):
        if out is None:
            out = _new(a.shape, _U32 if code in _COMPARISON_CODES else a.dtype, a._dev, False)
        status = _op_binary_scalar(current_stream(a._dev).handle, code, _c(a), float(b), _c(out))
        if status:
            check(status)
        return out
    a, b = _tensors(a, b)
    o = _out(out, _broadcast(a.shape, b.shape), _U32 if code in _COMPARISON_CODES else a.dtype, a)
    check(_op_binary(_stream(a), code, _c(a), _c(b), _c(o)))
    return o


def unary(op: Union[str, int], x: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """``out = OP(x)`` (``wgc_op_unary``)."""
    if _traced(x) is not None:
        return x._wgc_trace.unary(op, x)
    code = UNARY_OPS[op] if isinstance(op, str) else op
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_unary(_stream(x), code, _c(x), _c(o)))
    return o


def _make_binary(name: str) -> Callable[..., Tensor]:
    def f(a: Any, b: Any, out: Optional[Tensor] = None) -> Tensor:
        return binary(name, a, b, out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Element-wise ``{name}`` with broadcasting (``WGC_BINARY_OP_{name.upper()}``)."
    return f


def _make_unary(name: str) -> Callable[..., Tensor]:
    def f(x: Tensor, out: Optional[Tensor] = None) -> Tensor:
        return unary(name, x, out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Element-wise ``{name}`` (``WGC_UNARY_OP_{name.upper()}``)."
    return f


for _name in BINARY_OPS:
    globals()[_name] = _make_binary(_name)
for _name in UNARY_OPS:
    globals()[_name] = _make_unary(_name)
# NumPy's names for some of them.
subtract, multiply, divide, true_divide, power, equal, not_equal, less, less_equal, greater, greater_equal = (
    globals()[n] for n in ("sub", "mul", "div", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge"))
negative, absolute = globals()["neg"], globals()["abs"]


def gelu(x: Tensor, approximate: str = "none", out: Optional[Tensor] = None) -> Tensor:
    """GELU, exact (``approximate="none"``) or with tanh (``"tanh"``), as PyTorch."""
    return unary("gelu_erf" if approximate == "none" else "gelu_" + approximate, x, out)


def leaky_relu(x: Tensor, slope: float = 0.01, out: Optional[Tensor] = None) -> Tensor:
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_leaky_relu(_stream(x), _c(x), slope, _c(o)))
    return o


def clamp(x: Tensor, lo: float = -np.inf, hi: float = np.inf, out: Optional[Tensor] = None) -> Tensor:
    """``min(max(x, lo), hi)``; a None bound is open."""
    lo = -np.inf if lo is None else lo
    hi = np.inf if hi is None else hi
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_clamp(_stream(x), _c(x), float(lo), float(hi), _c(o)))
    return o


clip = clamp


def fma(a: Any, b: Any, c: Any, out: Optional[Tensor] = None) -> Tensor:
    """``a * b + c`` with one rounding, all broadcast."""
    t = _traced(a, b, c)
    if t is not None:
        return t._wgc_trace.fma(a, b, c)
    a, b, c = _tensors(a, b, c)
    o = _out(out, _broadcast(a.shape, b.shape, c.shape), a.dtype, a)
    check(lib.wgc_op_fma(_stream(a), _c(a), _c(b), _c(c), _c(o)))
    return o


def where(mask: Tensor, a: Any, b: Any, out: Optional[Tensor] = None) -> Tensor:
    """``mask != 0 ? a : b``, broadcast; ``mask`` is uint32 (comparisons make one)."""
    t = _traced(mask, a, b)
    if t is not None:
        return t._wgc_trace.where(mask, a, b)
    a, b = _tensors(a, b)
    o = _out(out, _broadcast(mask.shape, a.shape, b.shape), a.dtype, a)
    check(lib.wgc_op_where(_stream(a), _c(mask), _c(a), _c(b), _c(o)))
    return o


# --- reductions --------------------------------------------------------------------


def _axes(axis: Axes) -> Tuple[int, ...]:
    if axis is None:
        return ()
    return (int(axis),) if isinstance(axis, (numbers.Integral, np.integer)) else tuple(int(a) for a in axis)


def _reduced_shape(shape: Tuple[int, ...], axes: Tuple[int, ...], keepdims: bool) -> Tuple[int, ...]:
    rank = len(shape)
    norm = {a % rank for a in axes if -rank <= a < rank} if rank else set()
    if len(norm) != len(axes):
        return shape  # invalid axes: the library says why
    reduced = norm if axes else set(range(rank))
    if keepdims:
        return tuple(1 if k in reduced else n for k, n in enumerate(shape))
    return tuple(n for k, n in enumerate(shape) if k not in reduced)


def reduce(op: Union[str, int], x: Tensor, axis: Axes = None, keepdims: bool = False, out: Optional[Tensor] = None) -> Tensor:
    """Reduce over ``axis`` (None: all) with ``wgc_op_reduce``."""
    if _traced(x) is not None:  # inside wg.fuse: the function's reduction
        return x._wgc_trace.reduce(op, x, axis, keepdims)
    code = REDUCE_OPS[op] if isinstance(op, str) else op
    name = op if isinstance(op, str) else next((k for k, v in REDUCE_OPS.items() if v == op), "")
    axes = _axes(axis)
    o = _out(out, _reduced_shape(x.shape, axes, keepdims), _I32 if name in ARG_REDUCTIONS else x.dtype, x)
    arr = ffi.new("int32_t[]", list(axes)) if axes else ffi.NULL
    check(lib.wgc_op_reduce(_stream(x), code, _c(x), arr, len(axes), int(keepdims), _c(o)))
    return o


def _make_reduce(name: str) -> Callable[..., Tensor]:
    def f(x: Tensor, axis: Axes = None, keepdims: bool = False, out: Optional[Tensor] = None) -> Tensor:
        return reduce(name, x, axis, keepdims, out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{name}`` over ``axis`` (None: all axes) (``WGC_REDUCE_OP_{name.upper()}``)."
    return f


for _name in REDUCE_OPS:
    globals()[_name] = _make_reduce(_name)
amax, amin = globals()["max"], globals()["min"]


def _moment(fn: Any, x: Tensor, axis: Axes, ddof: int, keepdims: bool, out: Optional[Tensor]) -> Tensor:
    if ddof not in (0, 1):
        raise ValueError("ddof must be 0 (biased) or 1 (unbiased)")
    axes = _axes(axis)
    o = _out(out, _reduced_shape(x.shape, axes, keepdims), x.dtype, x)
    arr = ffi.new("int32_t[]", list(axes)) if axes else ffi.NULL
    check(fn(_stream(x), _c(x), arr, len(axes), int(keepdims), ddof, _c(o)))
    return o


def var(x: Tensor, axis: Axes = None, ddof: int = 0, keepdims: bool = False, out: Optional[Tensor] = None) -> Tensor:
    """Variance (``ddof`` 0: divide by n, 1: by n - 1)."""
    return _moment(lib.wgc_op_var, x, axis, ddof, keepdims, out)


def std(x: Tensor, axis: Axes = None, ddof: int = 0, keepdims: bool = False, out: Optional[Tensor] = None) -> Tensor:
    """Standard deviation (``ddof`` as for :func:`var`)."""
    return _moment(lib.wgc_op_std, x, axis, ddof, keepdims, out)


# --- softmax and normalisation --------------------------------------------------------


def softmax(x: Tensor, axis: int = -1, out: Optional[Tensor] = None) -> Tensor:
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_softmax(_stream(x), _c(x), axis, _c(o)))
    return o


def log_softmax(x: Tensor, axis: int = -1, out: Optional[Tensor] = None) -> Tensor:
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_log_softmax(_stream(x), _c(x), axis, _c(o)))
    return o


def _norm_dims(normalized_shape: Union[int, Sequence[int]]) -> int:
    return 1 if isinstance(normalized_shape, numbers.Integral) else len(tuple(normalized_shape))


def layer_norm(x: Tensor, normalized_shape: Union[int, Sequence[int]], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5, out: Optional[Tensor] = None) -> Tensor:
    """Layer norm over the trailing dims ``normalized_shape`` names (PyTorch's signature)."""
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_layer_norm(_stream(x), _c(x), _c(weight), _c(bias), _norm_dims(normalized_shape), eps, _c(o)))
    return o


def rms_norm(x: Tensor, normalized_shape: Union[int, Sequence[int]], weight: Optional[Tensor] = None,
             eps: float = 1e-6, out: Optional[Tensor] = None) -> Tensor:
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_rms_norm(_stream(x), _c(x), _c(weight), _norm_dims(normalized_shape), eps, _c(o)))
    return o


def rms_norm_residual(x: Tensor, residual: Tensor, normalized_shape: Union[int, Sequence[int]],
                      weight: Optional[Tensor] = None, eps: float = 1e-6, out: Optional[Tensor] = None,
                      sum_out: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """``s = x + residual`` and ``rms_norm(s)``, one pass where rows allow
    (``wgc_op_rms_norm_residual``). Returns ``(out, sum_out)``."""
    o, so = _out(out, x.shape, x.dtype, x), _out(sum_out, x.shape, x.dtype, x)
    check(lib.wgc_op_rms_norm_residual(_stream(x), _c(x), _c(residual), _c(weight), _norm_dims(normalized_shape), eps,
                                       _c(o), _c(so)))
    return o, so


def layer_norm_residual(x: Tensor, residual: Tensor, normalized_shape: Union[int, Sequence[int]],
                        weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, eps: float = 1e-5,
                        out: Optional[Tensor] = None, sum_out: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """``s = x + residual`` and ``layer_norm(s)`` (``wgc_op_layer_norm_residual``). Returns ``(out, sum_out)``."""
    o, so = _out(out, x.shape, x.dtype, x), _out(sum_out, x.shape, x.dtype, x)
    check(lib.wgc_op_layer_norm_residual(_stream(x), _c(x), _c(residual), _c(weight), _c(bias),
                                         _norm_dims(normalized_shape), eps, _c(o), _c(so)))
    return o, so


def _expr(expr: Any, inputs: Sequence[Tensor], outputs: Sequence[Tensor], params: Sequence[float]) -> None:
    """Launch a ``WgcExpr`` (``wgc_op_expr``; see :func:`wgcompute.fuse`)."""
    cin = ffi.new("WgcTensor[]", builtins.max(len(inputs), 1))
    for i, t in enumerate(inputs):
        cin[i] = _c(t)[0]
    cout = ffi.new("WgcTensor[]", builtins.max(len(outputs), 1))
    for j, t in enumerate(outputs):
        cout[j] = _c(t)[0]
    cp = ffi.new("double[]", list(params)) if params else ffi.NULL
    check(lib.wgc_op_expr(_stream(inputs[0]), expr, cin, len(inputs), cout, len(outputs), cp, len(params)))


def _expr_reduce(expr: Any, op: int, axes: Sequence[int], keepdims: bool, inputs: Sequence[Tensor],
                 params: Sequence[float], epilogue: Any, out: Tensor) -> None:
    """Launch a reduction of a ``WgcExpr``'s value (``wgc_op_expr_reduce``;
    see :func:`wgcompute.fuse`); ``epilogue`` may be ``ffi.NULL``."""
    cin = ffi.new("WgcTensor[]", builtins.max(len(inputs), 1))
    for i, t in enumerate(inputs):
        cin[i] = _c(t)[0]
    cax = ffi.new("int32_t[]", list(axes)) if axes else ffi.NULL
    cp = ffi.new("double[]", list(params)) if params else ffi.NULL
    check(lib.wgc_op_expr_reduce(_stream(inputs[0]), expr, op, cax, len(axes), int(keepdims), cin, len(inputs), cp,
                                 len(params), epilogue, _c(out)))


def batch_norm(x: Tensor, running_mean: Tensor, running_var: Tensor, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5, out: Optional[Tensor] = None) -> Tensor:
    """Inference batch norm over dim 1 of (N, C, ...)."""
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_batch_norm(_stream(x), _c(x), _c(running_mean), _c(running_var), _c(weight), _c(bias), eps, _c(o)))
    return o


# --- matrix products -------------------------------------------------------------------


def _matmul_shape(a: Sequence[int], b: Sequence[int]) -> Tuple[int, ...]:
    if not a or not b:
        return (1, 1)  # rank 0: the library reports it
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    shape = _broadcast(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def matmul(a: Any, b: Any, out: Optional[Tensor] = None, out_dtype: Optional[DTypeLike] = None) -> Tensor:
    """NumPy's ``matmul`` (``a @ b``); f16 inputs give f16 unless ``out_dtype="float32"``."""
    a, b = _tensors(a, b)
    o = _out(out, _matmul_shape(a.shape, b.shape), as_dtype(out_dtype) if out_dtype else a.dtype, a)
    check(lib.wgc_op_matmul(_stream(a), _c(a), _c(b), _c(o)))
    return o


def gemm(a: Tensor, b: Tensor, c: Optional[Tensor] = None, alpha: float = 1.0, beta: float = 0.0,
         transpose_a: bool = False, transpose_b: bool = False, out_dtype: Optional[DTypeLike] = None) -> Tensor:
    """``c = alpha op(a) op(b) + beta c`` (``op`` swaps the last two dims when
    asked); ``c`` is written in place, or made when None."""
    if c is None:
        sa = a.shape[:-2] + ((a.shape[-1], a.shape[-2]) if transpose_a else a.shape[-2:]) if a.ndim >= 2 else a.shape
        sb = b.shape[:-2] + ((b.shape[-1], b.shape[-2]) if transpose_b else b.shape[-2:]) if b.ndim >= 2 else b.shape
        shape = _broadcast(sa[:-2], sb[:-2]) + (sa[-2], sb[-1]) if len(sa) >= 2 and len(sb) >= 2 else (1, 1)
        # Read where beta != 0 (as zeros), else only written.
        c = _new(tuple(shape), as_dtype(out_dtype) if out_dtype else a.dtype, a._dev, beta != 0)
    check(lib.wgc_op_gemm(_stream(a), alpha, _c(a), int(transpose_a), _c(b), int(transpose_b), beta, _c(c)))
    return c


def explain_gemm(a: Tensor, b: Tensor, c: Optional[Tensor] = None, alpha: float = 1.0, beta: float = 0.0,
                 transpose_a: bool = False, transpose_b: bool = False, out_dtype: Optional[DTypeLike] = None) -> str:
    """The route ``gemm`` with these arguments would take, and why
    (``wgc_op_gemm_explain``): one line, nothing recorded. Raises what
    ``gemm`` would raise for them."""
    if c is None:
        sa = a.shape[:-2] + ((a.shape[-1], a.shape[-2]) if transpose_a else a.shape[-2:]) if a.ndim >= 2 else a.shape
        sb = b.shape[:-2] + ((b.shape[-1], b.shape[-2]) if transpose_b else b.shape[-2:]) if b.ndim >= 2 else b.shape
        shape = _broadcast(sa[:-2], sb[:-2]) + (sa[-2], sb[-1]) if len(sa) >= 2 and len(sb) >= 2 else (1, 1)
        c = _new(tuple(shape), as_dtype(out_dtype) if out_dtype else a.dtype, a._dev, False)
    args = (_stream(a), alpha, _c(a), int(transpose_a), _c(b), int(transpose_b), beta, _c(c))
    length = ffi.new("size_t *")
    check(lib.wgc_op_gemm_explain(*args, ffi.NULL, 0, length))
    buf = ffi.new("char[]", length[0] + 1)
    check(lib.wgc_op_gemm_explain(*args, buf, length[0] + 1, length))
    return ffi.string(buf).decode()


# --- convolution and pooling ----------------------------------------------------------------


def _pair(v: Union[int, Sequence[int]]) -> Tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, numbers.Integral) else (int(v[0]), int(v[1]))


def _out_size(n: int, k: int, pad: int, stride: int, dilation: int = 1) -> int:
    return builtins.max((n + 2 * pad - dilation * (k - 1) - 1) // builtins.max(stride, 1) + 1, 0)


def conv2d(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1, out: Optional[Tensor] = None) -> Tensor:
    """PyTorch's ``conv2d`` on NCHW: x (N, C, H, W), weight (O, C/groups, KH, KW)."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    p = new_sized("WgcConv2dParams")
    p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w, p.groups = sh, sw, ph, pw, dh, dw, groups
    shape = x.shape
    if x.ndim == 4 and weight.ndim == 4:
        shape = (x.shape[0], weight.shape[0], _out_size(x.shape[2], weight.shape[2], ph, sh, dh),
                 _out_size(x.shape[3], weight.shape[3], pw, sw, dw))
    o = _out(out, shape, x.dtype, x)
    check(lib.wgc_op_conv2d(_stream(x), p, _c(x), _c(weight), _c(bias), _c(o)))
    return o


def explain_conv2d(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Any = 1, padding: Any = 0,
                   dilation: Any = 1, groups: int = 1, out: Optional[Tensor] = None) -> str:
    """Which route :func:`conv2d` with these arguments would take, and why
    (``wgc_op_conv2d_explain``): ``"route NAME (...) because ..."``. Records
    nothing; bad arguments raise as :func:`conv2d` would. Without ``out``, a
    tensor of the output's shape is made to describe it."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    p = new_sized("WgcConv2dParams")
    p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w, p.groups = sh, sw, ph, pw, dh, dw, groups
    shape = x.shape
    if x.ndim == 4 and weight.ndim == 4:
        shape = (x.shape[0], weight.shape[0], _out_size(x.shape[2], weight.shape[2], ph, sh, dh),
                 _out_size(x.shape[3], weight.shape[3], pw, sw, dw))
    o = _out(out, shape, x.dtype, x)
    length = ffi.new("size_t *")
    args = (_stream(x), p, _c(x), _c(weight), _c(bias), _c(o))
    check(lib.wgc_op_conv2d_explain(*args, ffi.NULL, 0, length))
    buf = ffi.new("char[]", length[0] + 1)
    check(lib.wgc_op_conv2d_explain(*args, buf, length[0] + 1, length))
    return ffi.string(buf, length[0]).decode()


ACTIVATIONS: Dict[str, int] = enum_values("WGC_ACTIVATION_")


def conv2d_bn_act(x: Tensor, weight: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
                  bn_weight: Optional[Tensor] = None, bn_bias: Optional[Tensor] = None,
                  bias: Optional[Tensor] = None, eps: float = 1e-5, activation: Union[str, int] = "relu",
                  stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1,
                  folded_weight: Optional[Tensor] = None, folded_bias: Optional[Tensor] = None,
                  folded: bool = False, out: Optional[Tensor] = None,
                  residual: Optional[Tensor] = None) -> Tensor:
    """``act(batch_norm(conv2d(x, weight, bias)) + residual)`` with the
    batch norm's running statistics (inference), its batch norm folded into
    ``folded_weight`` / ``folded_bias`` (made here when not given; pass
    them with ``folded=True`` on later calls to skip the fold).
    ``activation``: a name of ``ACTIVATIONS`` ("none", "relu", "relu6",
    "hardswish", ...). ``residual`` (the output's shape and dtype, any
    strides, not sharing ``out``'s memory) is added before the activation
    (``wgc_op_conv2d_bn_act_residual``); None: no residual."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    p = new_sized("WgcConv2dBnActParams")
    p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w, p.groups = sh, sw, ph, pw, dh, dw, groups
    p.eps = eps
    p.activation = ACTIVATIONS[activation] if isinstance(activation, str) else int(activation)
    p.folded = int(folded)
    shape, kw = x.shape, weight if weight is not None else folded_weight
    if x.ndim == 4 and kw is not None and kw.ndim == 4:
        shape = (x.shape[0], kw.shape[0], _out_size(x.shape[2], kw.shape[2], ph, sh, dh),
                 _out_size(x.shape[3], kw.shape[3], pw, sw, dw))
    if folded_weight is None:
        folded_weight = _out(None, weight.shape, weight.dtype, weight)
    if folded_bias is None and not folded:
        folded_bias = _out(None, weight.shape[:1], weight.dtype, weight)
    o = _out(out, shape, x.dtype, x)
    args = (_stream(x), p, _c(x), _c(weight), _c(bias), _c(running_mean), _c(running_var), _c(bn_weight),
            _c(bn_bias), _c(folded_weight), _c(folded_bias))
    if residual is None:
        check(lib.wgc_op_conv2d_bn_act(*args, _c(o)))
    else:
        check(lib.wgc_op_conv2d_bn_act_residual(*args, _c(residual), _c(o)))
    return o


def _pool(fn: Any, x: Tensor, kernel_size: Any, stride: Any, padding: Any, count_include_pad: bool,
          out: Optional[Tensor]) -> Tensor:
    (kh, kw), (ph, pw) = _pair(kernel_size), _pair(padding)
    sh, sw = _pair(stride) if stride is not None else (0, 0)
    p = new_sized("WgcPool2dParams")
    p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w = kh, kw, sh, sw, ph, pw
    p.count_include_pad = int(count_include_pad)
    shape = x.shape
    if x.ndim == 4:
        shape = x.shape[:2] + (_out_size(x.shape[2], kh, ph, sh or kh), _out_size(x.shape[3], kw, pw, sw or kw))
    o = _out(out, shape, x.dtype, x)
    check(fn(_stream(x), p, _c(x), _c(o)))
    return o


def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, out: Optional[Tensor] = None) -> Tensor:
    """Max pooling on NCHW (stride None: the window)."""
    return _pool(lib.wgc_op_max_pool2d, x, kernel_size, stride, padding, False, out)


def avg_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, count_include_pad: bool = True,
               out: Optional[Tensor] = None) -> Tensor:
    """Average pooling on NCHW (PyTorch's defaults)."""
    return _pool(lib.wgc_op_avg_pool2d, x, kernel_size, stride, padding, count_include_pad, out)


def global_avg_pool2d(x: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """Mean over H and W: (N, C, H, W) -> (N, C, 1, 1)."""
    o = _out(out, x.shape[:2] + (1, 1) if x.ndim == 4 else x.shape, x.dtype, x)
    check(lib.wgc_op_global_avg_pool2d(_stream(x), _c(x), _c(o)))
    return o


# --- data movement -----------------------------------------------------------------------


def copy(x: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """Copy any view into ``out`` (default: a new contiguous tensor)."""
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_copy(_stream(x), _c(x), _c(o)))
    return o


def permute(x: Tensor, dims: Sequence[int], out: Optional[Tensor] = None) -> Tensor:
    """The dims permuted, materialised (``Tensor.permute`` is the view)."""
    dims = [int(d) for d in dims]
    shape = tuple(x.shape[d] for d in dims) if sorted(dims) == list(range(x.ndim)) else x.shape
    o = _out(out, shape, x.dtype, x)
    check(lib.wgc_op_permute(_stream(x), _c(x), ffi.new("uint32_t[]", dims or [0]), len(dims), _c(o)))
    return o


def transpose(x: Tensor, dim0: int = -2, dim1: int = -1, out: Optional[Tensor] = None) -> Tensor:
    """Two dims swapped, materialised (``Tensor.swapaxes`` is the view)."""
    shape = list(x.shape)
    if -x.ndim <= dim0 < x.ndim and -x.ndim <= dim1 < x.ndim:
        shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    o = _out(out, shape, x.dtype, x)
    check(lib.wgc_op_transpose(_stream(x), _c(x), dim0, dim1, _c(o)))
    return o


def cast(x: Tensor, dtype: DTypeLike, out: Optional[Tensor] = None) -> Tensor:
    """Convert to ``dtype`` (``wgc_op_cast``: truncating, saturating float to int)."""
    if _traced(x) is not None:
        return x._wgc_trace.cast(x, dtype)
    o = _out(out, x.shape, as_dtype(dtype), x)
    check(lib.wgc_op_cast(_stream(x), _c(x), _c(o)))
    return o


def fill(out: Tensor, value: Scalar) -> Tensor:
    """Set every element of the view ``out`` to ``value``."""
    check(lib.wgc_op_fill(_stream(out), _c(out), float(value)))
    return out


def arange(start: float, stop: Optional[float] = None, step: float = 1, dtype: DTypeLike = "float32",
           device: Any = None) -> Tensor:
    """``start, start + step, ...`` below ``stop`` (NumPy's arange)."""
    if stop is None:
        start, stop = 0, start
    n = builtins.max(int(np.ceil((stop - start) / step)), 0) if step else 0
    o = empty((n,), dtype, device)
    check(lib.wgc_op_arange(_stream(o), _c(o), float(start), float(step)))
    return o


# --- random numbers ------------------------------------------------------------------------


def random_uniform(shape: Any, seed: int = 0, offset: int = 0, low: float = 0.0, high: float = 1.0,
                   dtype: DTypeLike = "float32", device: Any = None, out: Optional[Tensor] = None) -> Tensor:
    """Philox uniform numbers in [low, high): the same for the same seed and offset everywhere."""
    o = out if out is not None else empty(shape, dtype, device)
    check(lib.wgc_op_random_uniform(_stream(o), _c(o), seed, offset, low, high))
    return o


def random_normal(shape: Any, seed: int = 0, offset: int = 0, mean: float = 0.0, std: float = 1.0,
                  dtype: DTypeLike = "float32", device: Any = None, out: Optional[Tensor] = None) -> Tensor:
    """Philox normal numbers (Box-Muller)."""
    o = out if out is not None else empty(shape, dtype, device)
    check(lib.wgc_op_random_normal(_stream(o), _c(o), seed, offset, mean, std))
    return o


# --- indexing, joining, positions, selection, scans -------------------------------------

ROPE_LAYOUTS: Dict[str, int] = enum_values("WGC_ROPE_LAYOUT_")


def index_select(x: Tensor, axis: int, index: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """``torch.index_select``: entries of ``x`` along ``axis`` at the 1-D int32/uint32 ``index``.
    An index outside [0, x.shape[axis]) gives 0."""
    shape = list(x.shape)
    if -x.ndim <= axis < x.ndim and index.ndim == 1:
        shape[axis] = index.shape[0]
    o = _out(out, shape, x.dtype, x)
    check(lib.wgc_op_index_select(_stream(x), _c(x), axis, _c(index), _c(o)))
    return o


def gather(x: Tensor, axis: int, index: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """``torch.gather``: ``out[i] = x[i with coordinate axis replaced by index[i]]``; out-of-range indices give 0."""
    o = _out(out, index.shape, x.dtype, x)
    check(lib.wgc_op_gather(_stream(x), _c(x), axis, _c(index), _c(o)))
    return o


def embedding(index: Tensor, table: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """``torch.nn.functional.embedding``: rows of ``table`` (V, ...) by index; out-of-range rows are zeros."""
    o = _out(out, tuple(index.shape) + tuple(table.shape[1:]), table.dtype, table)
    check(lib.wgc_op_embedding(_stream(table), _c(table), _c(index), _c(o)))
    return o


def concat(xs: Sequence[Tensor], axis: int = 0, out: Optional[Tensor] = None) -> Tensor:
    """``torch.cat``: the tensors joined along ``axis``."""
    xs = list(xs)
    if not xs:
        raise ValueError("concat needs at least one tensor")
    shape = list(xs[0].shape)
    if -len(shape) <= axis < len(shape) and all(x.ndim == len(shape) for x in xs):
        shape[axis] = builtins.sum(x.shape[axis] for x in xs)
    views = ffi.new("WgcTensor[]", len(xs))
    for i, x in enumerate(xs):
        views[i] = _c(x)[0]
    o = _out(out, shape, xs[0].dtype, xs[0])
    check(lib.wgc_op_concat(_stream(xs[0]), views, len(xs), axis, _c(o)))
    return o


def rope(x: Tensor, seq_axis: int, base: float = 10000.0, layout: str = "half_split", rotary_dims: int = 0,
         position_offset: int = 0, out: Optional[Tensor] = None) -> Tensor:
    """Rotary position embedding over the last dim; positions count along ``seq_axis`` from
    ``position_offset``. ``layout``: "half_split" (rotate_half) or "interleaved". ``out=x`` works in place."""
    d = new_sized("WgcRopeDesc")
    d.layout = ROPE_LAYOUTS[layout] if isinstance(layout, str) else layout
    d.seq_axis, d.rotary_dims, d.base, d.position_offset = seq_axis, rotary_dims, base, position_offset
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_rope(_stream(x), _c(x), d, _c(o)))
    return o


def topk(x: Tensor, k: int, largest: bool = True, indices_dtype: DTypeLike = "int32",
         out: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
    """``torch.topk`` along the last dim, sorted: (values, indices); NaN above every number, ties by lower index."""
    shape = tuple(x.shape[:-1]) + (k,)
    values, indices = out if out is not None else (empty(shape, x.dtype, x.device), empty(shape, indices_dtype, x.device))
    check(lib.wgc_op_topk(_stream(x), _c(x), k, int(largest), _c(values), _c(indices)))
    return values, indices


def cumsum(x: Tensor, axis: int, out: Optional[Tensor] = None) -> Tensor:
    """Inclusive prefix sums along ``axis``, in x's dtype (integers wrap)."""
    o = _out(out, x.shape, x.dtype, x)
    check(lib.wgc_op_cumsum(_stream(x), _c(x), axis, _c(o)))
    return o


ATTENTION_CAUSAL: Dict[str, int] = enum_values("WGC_ATTENTION_CAUSAL_")


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Optional[Tensor] = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False, *, causal_alignment: str = "top_left",
                                 window: int = 0, kv_len: int = 0, kv_lens: Optional[Tensor] = None,
                                 return_lse: bool = False, out: Optional[Tensor] = None
                                 ) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """``softmax(scale * q k^T + mask) v`` without materialising the scores.

    q (..., Hq, Sq, D), k and v (..., Hkv, Skv, D). As PyTorch: ``is_causal``
    aligns the causal mask to the top-left (query i sees keys j <= i);
    ``causal_alignment="bottom_right"`` aligns it to the last valid key
    (decode, chunked prefill). ``attn_mask``: of q's dtype (added) or
    int32/uint32 (boolean, nonzero takes part), broadcast to (..., Hq, Sq, Skv).
    ``enable_gqa`` must be set when Hq != Hkv (as PyTorch). Extras:
    ``window`` (sliding window), ``kv_len`` (valid keys of a longer cache),
    ``kv_lens`` (int32 per batch entry), ``return_lse`` (also the f32
    log-sum-exp, shaped (..., Hq, Sq)). Rows no key reaches give 0 (as
    PyTorch 2.5+). Dropout is not supported."""
    if dropout_p != 0.0:
        raise ValueError("scaled_dot_product_attention: dropout is not supported")
    if q.ndim >= 3 and k.ndim >= 3 and q.shape[-3] != k.shape[-3] and not enable_gqa:
        raise ValueError(f"q has {q.shape[-3]} heads and k {k.shape[-3]}: pass enable_gqa=True")
    d = new_sized("WgcAttentionDesc")
    if is_causal:
        d.causal = ATTENTION_CAUSAL["top_left" if causal_alignment == "top_left" else "bottom_right"]
    d.scale = 0.0 if scale is None else float(scale)
    d.window, d.kv_len = window, kv_len
    o = _out(out, q.shape, q.dtype, q)
    lse = empty(tuple(q.shape[:-1]), "float32", q.device) if return_lse else None
    check(lib.wgc_op_attention(_stream(q), _c(q), _c(k), _c(v), _c(attn_mask), _c(kv_lens), d, _c(o), _c(lse)))
    return (o, lse) if return_lse else o


# A GEMM with its epilogue fused (wgc_op_gemm_epilogue): PyTorch's
# act(F.linear(x, w, b)) and a residual add in one call.

RESIDUAL_POSITIONS = enum_values("WGC_RESIDUAL_POSITION_")


def _params(alpha: float, transpose_a: bool, transpose_b: bool, activation: Union[str, int],
            residual_after: bool) -> Any:
    p = new_sized("WgcGemmEpilogueParams")
    p.alpha = alpha
    p.transpose_a, p.transpose_b = int(transpose_a), int(transpose_b)
    p.activation = ACTIVATIONS[activation] if isinstance(activation, str) else int(activation)
    p.residual_position = RESIDUAL_POSITIONS["after_activation" if residual_after else "before_activation"]
    return p


def _c_shape(a: Tensor, b: Tensor, transpose_a: bool, transpose_b: bool) -> Tuple[int, ...]:
    sa = a.shape[:-2] + ((a.shape[-1], a.shape[-2]) if transpose_a else a.shape[-2:])
    sb = b.shape[:-2] + ((b.shape[-1], b.shape[-2]) if transpose_b else b.shape[-2:])
    return _broadcast(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])


def gemm_epilogue(a: Tensor, b: Tensor, bias: Optional[Tensor] = None, scale: Optional[Tensor] = None,
                  residual: Optional[Tensor] = None, activation: Union[str, int] = "none",
                  residual_after: bool = True, alpha: float = 1.0, transpose_a: bool = False,
                  transpose_b: bool = False, out: Optional[Tensor] = None,
                  out_dtype: Optional[DTypeLike] = None) -> Tensor:
    """``act(alpha op(a) op(b) * scale + bias (+ residual)) (+ residual)``
    in one call: ``scale`` and ``bias`` per output column (N,), ``residual``
    of the output's shape, added after the activation where
    ``residual_after`` (else before it); activations as ``WgcActivation``
    ("relu", "relu6", "hardswish", "gelu", "gelu_tanh", "silu", "tanh").
    ``out`` (f32 or the operands' dtype) is written, or made when None."""
    if out is None:
        shape = _c_shape(a, b, transpose_a, transpose_b) if a.ndim >= 2 and b.ndim >= 2 else (1, 1)
        out = _new(tuple(shape), as_dtype(out_dtype) if out_dtype else a.dtype, a._dev, False)
    p = _params(alpha, transpose_a, transpose_b, activation, residual_after)
    check(lib.wgc_op_gemm_epilogue(_stream(a), p, _c(a), _c(b), _c(bias), _c(scale), _c(residual), _c(out)))
    return out


def linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, activation: Union[str, int] = "none",
           residual: Optional[Tensor] = None, residual_after: bool = True, out: Optional[Tensor] = None,
           out_dtype: Optional[DTypeLike] = None) -> Tensor:
    """PyTorch's ``act(F.linear(x, weight, bias)) + residual``: x (..., K),
    weight (N, K), bias (N,), residual x's shape with N last (added before
    the activation where ``residual_after`` is False), fused into the GEMM."""
    x2 = x if x.ndim >= 2 else x.reshape((1,) + tuple(x.shape))
    r2 = residual if residual is None or x.ndim >= 2 else residual.reshape((1,) + tuple(residual.shape))
    o2 = out if out is None or x.ndim >= 2 else out.reshape((1,) + tuple(out.shape))
    y = gemm_epilogue(x2, weight, bias=bias, residual=r2, activation=activation, residual_after=residual_after,
                      transpose_b=True, out=o2, out_dtype=out_dtype)
    return y if x.ndim >= 2 else y.reshape(tuple(y.shape[1:]))


def explain_gemm_epilogue(a: Tensor, b: Tensor, bias: Optional[Tensor] = None, scale: Optional[Tensor] = None,
                          residual: Optional[Tensor] = None, activation: Union[str, int] = "none",
                          residual_after: bool = True, alpha: float = 1.0, transpose_a: bool = False,
                          transpose_b: bool = False, out: Optional[Tensor] = None,
                          out_dtype: Optional[DTypeLike] = None) -> str:
    """The route ``gemm_epilogue`` with these arguments would take and
    whether its kernel, its split-K pass or one extra pass applies the
    epilogue (``wgc_op_gemm_epilogue_explain``); nothing is recorded."""
    if out is None:
        shape = _c_shape(a, b, transpose_a, transpose_b) if a.ndim >= 2 and b.ndim >= 2 else (1, 1)
        out = _new(tuple(shape), as_dtype(out_dtype) if out_dtype else a.dtype, a._dev, False)
    p = _params(alpha, transpose_a, transpose_b, activation, residual_after)
    args = (_stream(a), p, _c(a), _c(b), _c(bias), _c(scale), _c(residual), _c(out))
    length = ffi.new("size_t *")
    check(lib.wgc_op_gemm_epilogue_explain(*args, ffi.NULL, 0, length))
    buf = ffi.new("char[]", length[0] + 1)
    check(lib.wgc_op_gemm_epilogue_explain(*args, buf, length[0] + 1, length))
    return ffi.string(buf).decode()



rand = random_uniform
randn = random_normal

__all__ = sorted(
    n for n, v in globals().items()
    if callable(v) and not n.startswith("_") and getattr(v, "__module__", None) == __name__
)
