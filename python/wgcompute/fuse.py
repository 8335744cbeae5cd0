"""``fuse(fn)``: a function of tensors built from element-wise operations,
traced once into one ``WgcExpr`` and run as one kernel (``wgc_op_expr``).

    @wg.fuse
    def chain(a, b, c):
        return wg.sqrt(wg.relu(a * b + c)) * 0.5 + wg.sigmoid(c)

    y = chain(a, b, c)          # one kernel; traced on the first call

Inside ``fn`` the arguments are traced values: the operators (``+ - * /
** == != < <= > >=``, unary ``-`` and ``abs``), the element-wise functions of
:mod:`wgcompute.ops` (``binary``, ``unary`` and every generated op such as
``sqrt``, ``sigmoid``, ``silu``, ``maximum``; ``fma``, ``where``, ``cast``)
and ``astype`` record nodes instead of running. Python numbers in ``fn``
become constants of the other operand's dtype; numbers passed as arguments
become launch parameters (of the first tensor argument's dtype), so
calling again with other numbers reuses the compiled kernel. ``fn``
returns one traced value or a tuple of them (the outputs, allocated with
the broadcast shape of the tensor arguments).

The trace is cached by the arguments' structure (which are tensors, their
dtypes); shapes, layouts and parameter values may change without tracing
again (the library compiles one kernel per layout class). Results are those
of the separate operators, bit for bit (see ``wgc_expr_*`` in the header).
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from ._ffi import ffi, lib
from .dtypes import DType, as_dtype
from .errors import check
from .tensor import Tensor, empty

_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def _is_number(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.number)) and not isinstance(x, (Tensor, Traced))


class Traced:
    """A node of an expression being traced: what ``fn`` sees for a tensor."""

    __slots__ = ("_wgc_trace", "id", "dtype")

    def __init__(self, trace: "_Trace", node: int, dtype: DType) -> None:
        self._wgc_trace = trace
        self.id = node
        self.dtype = dtype

    def _bin(self, name: str, a: Any, b: Any) -> "Traced":
        return self._wgc_trace.binary(name, a, b)

    def __add__(self, o: Any) -> "Traced": return self._bin("add", self, o)
    def __radd__(self, o: Any) -> "Traced": return self._bin("add", o, self)
    def __sub__(self, o: Any) -> "Traced": return self._bin("sub", self, o)
    def __rsub__(self, o: Any) -> "Traced": return self._bin("sub", o, self)
    def __mul__(self, o: Any) -> "Traced": return self._bin("mul", self, o)
    def __rmul__(self, o: Any) -> "Traced": return self._bin("mul", o, self)
    def __truediv__(self, o: Any) -> "Traced": return self._bin("div", self, o)
    def __rtruediv__(self, o: Any) -> "Traced": return self._bin("div", o, self)
    def __pow__(self, o: Any) -> "Traced": return self._bin("pow", self, o)
    def __rpow__(self, o: Any) -> "Traced": return self._bin("pow", o, self)
    def __eq__(self, o: Any) -> "Traced": return self._bin("eq", self, o)  # type: ignore[override]
    def __ne__(self, o: Any) -> "Traced": return self._bin("ne", self, o)  # type: ignore[override]
    def __lt__(self, o: Any) -> "Traced": return self._bin("lt", self, o)
    def __le__(self, o: Any) -> "Traced": return self._bin("le", self, o)
    def __gt__(self, o: Any) -> "Traced": return self._bin("gt", self, o)
    def __ge__(self, o: Any) -> "Traced": return self._bin("ge", self, o)
    def __neg__(self) -> "Traced": return self._wgc_trace.unary("neg", self)
    def __abs__(self) -> "Traced": return self._wgc_trace.unary("abs", self)

    __hash__ = None  # type: ignore[assignment]

    def astype(self, dtype: Any) -> "Traced":
        return self._wgc_trace.cast(self, dtype)

    def __bool__(self) -> bool:
        raise TypeError("a traced value has no truth value: use wg.where for choices inside wg.fuse")


class _Trace:
    """One expression being built (owns its ``WgcExpr``)."""

    def __init__(self) -> None:
        p = ffi.new("WgcExpr **")
        check(lib.wgc_expr_create(p))
        self.handle = ffi.gc(p[0], lib.wgc_expr_release)

    def _node(self, call: Callable[[Any], int], dtype: DType) -> Traced:
        out = ffi.new("uint32_t *")
        check(call(out))
        return Traced(self, out[0], dtype)

    def input(self, dtype: DType) -> Traced:
        return self._node(lambda o: lib.wgc_expr_input(self.handle, dtype.value, o), dtype)

    def param(self, dtype: DType) -> Traced:
        return self._node(lambda o: lib.wgc_expr_param(self.handle, dtype.value, o), dtype)

    def operand(self, x: Any, like: Traced) -> Traced:
        if isinstance(x, Traced):
            if x._wgc_trace is not self:
                raise ValueError("a value traced by another wg.fuse function")
            return x
        if _is_number(x):
            return self._node(lambda o: lib.wgc_expr_scalar(self.handle, like.dtype.value, float(x), o), like.dtype)
        raise TypeError(f"wg.fuse traces element-wise operations of its arguments and numbers, not {type(x).__name__}")

    def binary(self, name: Any, a: Any, b: Any) -> Traced:
        from .ops import BINARY_OPS
        code = BINARY_OPS[name] if isinstance(name, str) else int(name)
        name = next(k for k, v in BINARY_OPS.items() if v == code)
        like = a if isinstance(a, Traced) else b
        ta, tb = self.operand(a, like), self.operand(b, like)
        dtype = as_dtype("uint32") if name in _COMPARISONS else ta.dtype
        return self._node(lambda o: lib.wgc_expr_binary(self.handle, code, ta.id, tb.id, o), dtype)

    def unary(self, name: Any, x: Traced) -> Traced:
        from .ops import UNARY_OPS
        code = UNARY_OPS[name] if isinstance(name, str) else int(name)
        return self._node(lambda o: lib.wgc_expr_unary(self.handle, code, x.id, o), x.dtype)

    def fma(self, a: Any, b: Any, c: Any) -> Traced:
        like = next(x for x in (a, b, c) if isinstance(x, Traced))
        ta, tb, tc = (self.operand(x, like) for x in (a, b, c))
        return self._node(lambda o: lib.wgc_expr_fma(self.handle, ta.id, tb.id, tc.id, o), ta.dtype)

    def where(self, mask: Any, a: Any, b: Any) -> Traced:
        like = a if isinstance(a, Traced) else b if isinstance(b, Traced) else mask
        tm = self.operand(mask, like)
        ta, tb = self.operand(a, like), self.operand(b, like)
        return self._node(lambda o: lib.wgc_expr_where(self.handle, tm.id, ta.id, tb.id, o), ta.dtype)

    def cast(self, x: Traced, dtype: Any) -> Traced:
        d = as_dtype(dtype)
        return self._node(lambda o: lib.wgc_expr_cast(self.handle, x.id, d.value, o), d)

    def output(self, x: Any) -> DType:
        if not isinstance(x, Traced) or x._wgc_trace is not self:
            raise TypeError("a wg.fuse function must return traced values (computed from its tensor arguments)")
        check(lib.wgc_expr_output(self.handle, x.id))
        return x.dtype


class Fused:
    """A traced function; see :func:`fuse`."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.traces: Dict[Tuple[Any, ...], Tuple[_Trace, List[DType], bool]] = {}
        functools.update_wrapper(self, fn)

    def _trace(self, key: Tuple[Any, ...], args: Tuple[Any, ...]) -> Tuple[_Trace, List[DType], bool]:
        tr = _Trace()
        first = next(a.dtype for a in args if isinstance(a, Tensor))
        proxies = [tr.input(a.dtype) if isinstance(a, Tensor) else None for a in args]
        for i, a in enumerate(args):
            if not isinstance(a, Tensor):
                proxies[i] = tr.param(first)
        result = self.fn(*proxies)
        single = not isinstance(result, (tuple, list))
        outs = [tr.output(r) for r in ((result,) if single else result)]
        entry = (tr, outs, single)
        self.traces[key] = entry
        return entry

    def __call__(self, *args: Any) -> Any:
        if not any(isinstance(a, Tensor) for a in args):
            raise TypeError("a wg.fuse function needs at least one tensor argument")
        for a in args:
            if not isinstance(a, Tensor) and not _is_number(a):
                raise TypeError(f"wg.fuse arguments are tensors and numbers, not {type(a).__name__}")
        key = tuple(a.dtype.value if isinstance(a, Tensor) else "param" for a in args)
        tr, out_dtypes, single = self.traces.get(key) or self._trace(key, args)
        tensors = [a for a in args if isinstance(a, Tensor)]
        params = [float(a) for a in args if not isinstance(a, Tensor)]
        shape = tuple(np.broadcast_shapes(*[tuple(t.shape) for t in tensors]))
        dev = tensors[0].device
        outs = [empty(shape, d, dev) for d in out_dtypes]
        from .ops import _expr
        _expr(tr.handle, tensors, outs, params)
        return outs[0] if single else tuple(outs)


def fuse(fn: Callable[..., Any]) -> Fused:
    """Trace ``fn`` into one fused kernel (see the module documentation)."""
    return Fused(fn)
