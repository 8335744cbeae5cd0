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

A fused function may also reduce, once: ``.sum(axis, keepdims)``,
``.mean``, ``.max``, ``.min``, ``.prod``, ``.argmax``, ``.argmin`` of a traced
value (or ``wg.sum(x, axis)`` and the other reductions of
:mod:`wgcompute.ops`) reduce the value computed so far, in the same kernel
(``wgc_op_expr_reduce``), and what the function then computes from the
reduced value (with numbers and number arguments) is the epilogue applied
before the result is written:

    @wg.fuse
    def std(x, m, eps):
        return wg.sqrt(((x - m) * (x - m)).mean(-1) + eps)

Such a function returns one value computed from the reduced one.

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

    def _reduce(self, name: str, axis: Any, keepdims: bool) -> "Traced":
        return self._wgc_trace.reduce(name, self, axis, keepdims)

    def sum(self, axis: Any = None, keepdims: bool = False) -> "Traced": return self._reduce("sum", axis, keepdims)
    def mean(self, axis: Any = None, keepdims: bool = False) -> "Traced": return self._reduce("mean", axis, keepdims)
    def max(self, axis: Any = None, keepdims: bool = False) -> "Traced": return self._reduce("max", axis, keepdims)
    def min(self, axis: Any = None, keepdims: bool = False) -> "Traced": return self._reduce("min", axis, keepdims)
    def prod(self, axis: Any = None, keepdims: bool = False) -> "Traced": return self._reduce("prod", axis, keepdims)
    def argmax(self, axis: Any = None, keepdims: bool = False) -> "Traced": return self._reduce("argmax", axis, keepdims)
    def argmin(self, axis: Any = None, keepdims: bool = False) -> "Traced": return self._reduce("argmin", axis, keepdims)

    def __bool__(self) -> bool:
        raise TypeError("a traced value has no truth value: use wg.where for choices inside wg.fuse")


class _Trace:
    """One expression being built (owns its ``WgcExpr``)."""

    def __init__(self, prologue: "_Trace | None" = None) -> None:
        p = ffi.new("WgcExpr **")
        check(lib.wgc_expr_create(p))
        self.handle = ffi.gc(p[0], lib.wgc_expr_release)
        # The function's reduction: (op code, axes, keepdims, epilogue trace).
        self.reduction: "Tuple[int, Tuple[int, ...], bool, _Trace] | None" = None
        # An epilogue's prologue, and which of its parameters (by number
        # argument) the epilogue reads, in epilogue parameter order.
        self.prologue = prologue
        self.params: Dict[int, Traced] = {}
        self.param_args: List[int] = []
        # A prologue's parameter nodes -> their index among the number arguments.
        self.param_of: Dict[int, int] = {}
        self.has_output = False

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
            if x._wgc_trace is self:
                return x
            pro = self.prologue
            if pro is not None and x._wgc_trace is pro:
                arg = pro.param_of.get(x.id)
                if arg is None:
                    raise TypeError("after its reduction a wg.fuse function may use only the reduced value, "
                                    "numbers and number arguments")
                if arg not in self.params:
                    self.params[arg] = self.param(x.dtype)
                    self.param_args.append(arg)
                return self.params[arg]
            raise ValueError("a value traced by another wg.fuse function")
        if _is_number(x):
            return self._node(lambda o: lib.wgc_expr_scalar(self.handle, like.dtype.value, float(x), o), like.dtype)
        raise TypeError(f"wg.fuse traces element-wise operations of its arguments and numbers, not {type(x).__name__}")

    def _route(self, *xs: Any) -> "_Trace":
        """The trace an operation of ``xs`` belongs to: the epilogue once one
        of them is computed from the reduced value."""
        epi = self.reduction[3] if self.reduction is not None else None
        if epi is not None and any(isinstance(x, Traced) and x._wgc_trace is epi for x in xs):
            return epi
        return self

    def binary(self, name: Any, a: Any, b: Any) -> Traced:
        if self._route(a, b) is not self:
            return self._route(a, b).binary(name, a, b)
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
        x = self.operand(x, x)
        return self._node(lambda o: lib.wgc_expr_unary(self.handle, code, x.id, o), x.dtype)

    def reduce(self, name: Any, x: Traced, axis: Any, keepdims: bool) -> Traced:
        """Reduce ``x``: its value becomes the expression's output, and the
        reduced value the input of a new trace, the epilogue."""
        from .ops import REDUCE_OPS, _axes
        if self.prologue is not None or self.reduction is not None:
            raise TypeError("a wg.fuse function may reduce once (its epilogue cannot reduce again)")
        x = self.operand(x, x)
        code = REDUCE_OPS[name] if isinstance(name, str) else int(name)
        name = next(k for k, v in REDUCE_OPS.items() if v == code)
        check(lib.wgc_expr_output(self.handle, x.id))
        epi = _Trace(prologue=self)
        self.reduction = (code, _axes(axis), bool(keepdims), epi)
        return epi.input(as_dtype("int32") if name in ("argmax", "argmin") else x.dtype)

    def fma(self, a: Any, b: Any, c: Any) -> Traced:
        if self._route(a, b, c) is not self:
            return self._route(a, b, c).fma(a, b, c)
        like = next(x for x in (a, b, c) if isinstance(x, Traced))
        ta, tb, tc = (self.operand(x, like) for x in (a, b, c))
        return self._node(lambda o: lib.wgc_expr_fma(self.handle, ta.id, tb.id, tc.id, o), ta.dtype)

    def where(self, mask: Any, a: Any, b: Any) -> Traced:
        if self._route(mask, a, b) is not self:
            return self._route(mask, a, b).where(mask, a, b)
        like = a if isinstance(a, Traced) else b if isinstance(b, Traced) else mask
        tm = self.operand(mask, like)
        ta, tb = self.operand(a, like), self.operand(b, like)
        return self._node(lambda o: lib.wgc_expr_where(self.handle, tm.id, ta.id, tb.id, o), ta.dtype)

    def cast(self, x: Traced, dtype: Any) -> Traced:
        d = as_dtype(dtype)
        x = self.operand(x, x)
        return self._node(lambda o: lib.wgc_expr_cast(self.handle, x.id, d.value, o), d)

    def output(self, x: Any) -> DType:
        if not isinstance(x, Traced) or x._wgc_trace is not self:
            raise TypeError("a wg.fuse function must return traced values (computed from its tensor arguments)")
        check(lib.wgc_expr_output(self.handle, x.id))
        self.has_output = True
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
                tr.param_of[proxies[i].id] = len(tr.param_of)
        result = self.fn(*proxies)
        single = not isinstance(result, (tuple, list))
        if tr.reduction is not None:
            epi = tr.reduction[3]
            if not single or not isinstance(result, Traced) or result._wgc_trace not in (epi, tr):
                raise TypeError("a wg.fuse function that reduces returns one value computed from the reduced one")
            if result._wgc_trace is tr:
                raise TypeError("after its reduction a wg.fuse function may use only the reduced value, "
                                "numbers and number arguments")
            # The reduced value itself: no epilogue.
            outs = [result.dtype] if result.id == 0 else [epi.output(result)]
        else:
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
        if tr.reduction is not None:
            return _reduce(tr, tensors, params, shape, out_dtypes[0], dev)
        outs = [empty(shape, d, dev) for d in out_dtypes]
        from .ops import _expr
        _expr(tr.handle, tensors, outs, params)
        return outs[0] if single else tuple(outs)


def _reduce(tr: _Trace, tensors: List[Tensor], params: List[float], shape: Tuple[int, ...], dtype: DType,
            dev: Any) -> Tensor:
    """Launch a traced reduction (``wgc_op_expr_reduce``)."""
    from .ops import _expr_reduce, _reduced_shape
    code, axes, keepdims, epi = tr.reduction  # type: ignore[misc]
    out = empty(_reduced_shape(shape, axes, keepdims), dtype, dev)
    has_epi = epi.has_output  # else the result is the reduced value itself
    allp = params + ([params[i] for i in epi.param_args] if has_epi else [])
    _expr_reduce(tr.handle, code, axes, keepdims, tensors, allp, epi.handle if has_epi else ffi.NULL, out)
    return out


def fuse(fn: Callable[..., Any]) -> Fused:
    """Trace ``fn`` into one fused kernel (see the module documentation)."""
    return Fused(fn)
