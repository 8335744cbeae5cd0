"""A GEMM with its epilogue fused (``wgc_op_gemm_epilogue``): PyTorch's
``act(F.linear(x, w, b))`` and a residual add in one call."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from ._ffi import ffi, lib
from ._structs import enum_values, new_sized
from .dtypes import DTypeLike, as_dtype
from .errors import check
from .ops import _broadcast, _c, _stream
from .tensor import Tensor, _new

ACTIVATIONS = enum_values("WGC_ACTIVATION_")
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
