"""``Tensor``: a view (dtype, shape, strides, offset) of a GPU buffer.

Slicing, transposes, reshapes of contiguous tensors and broadcasting make
new views of the same buffer without copying; a view keeps its buffer alive.
Strides and offsets count elements, as in ``WgcTensor`` (NumPy counts bytes).
"""

from __future__ import annotations

import builtins
import functools
import math
import numbers
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._ffi import ffi, lib
from ._handle import Handle
from .buffer import Buffer
from .device import Device, as_device
from .dtypes import DType, DTypeLike, as_dtype
from .dtypes import from_numpy as _dtype_for_host
from .errors import check

Shape = Tuple[int, ...]
ShapeLike = Union[int, Sequence[int]]


def _shape(shape: Any) -> Shape:
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(int(s) for s in shape)


@functools.lru_cache(maxsize=1024)
def contiguous_strides(shape: Shape) -> Shape:
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= builtins.max(n, 1)
    return tuple(reversed(strides))


class Tensor:
    """A tensor on a wgcompute device. Make one with :func:`asarray`,
    :func:`empty`, :func:`zeros`, :func:`full`, :func:`arange`, ... .

    ``np.asarray(t)`` and :meth:`numpy` read it back (blocking until the work
    that writes it is done). The usual operators (``+ - * / @ **``,
    comparisons, unary minus, ``abs``) record GPU work on the current stream
    and return new tensors; Python numbers combine with tensors in the
    tensor's dtype. Integer division truncates toward zero (x / 0 = 0).
    Comparisons give uint32 tensors of 0 and 1.
    """

    # _cs: the WgcTensor struct describing the view, made on first use (ops.py).
    __slots__ = ("_buf", "_dev", "dtype", "shape", "strides", "offset", "_cs", "__weakref__")
    __array_ufunc__ = None  # ndarray <op> Tensor defers to Tensor's reflected operator

    def __init__(self, buffer: Handle, device: Handle, dtype: DType, shape: Shape, strides: Shape, offset: int = 0) -> None:
        self._buf = buffer
        self._dev = device
        self.dtype = dtype
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.offset = int(offset)
        self._cs = None

    # --- description -----------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> Device:
        return Device(_handle=self._dev)

    @property
    def buffer(self) -> Buffer:
        """The buffer this view looks at."""
        return Buffer(0, _handle=self._buf, _device=self._dev)

    def is_contiguous(self) -> bool:
        """Row-major without gaps (dims of size 1 may have any stride)."""
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n == 0:
                return True
            if n != 1 and s != step:
                return False
            step *= n
        return True

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        if not self._buf.alive:
            return "<wgcompute.Tensor released>"
        body = np.array2string(self.numpy(), separator=", ", threshold=200) if self.size <= 10_000 else "..."
        return f"wgcompute.Tensor({body}, dtype={self.dtype.name}, shape={self.shape})"

    # --- host transfer ------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """A new NumPy array with the values (blocks until they are computed).
        A non-contiguous view is first made contiguous on the GPU. bfloat16
        gives ml_dtypes' bfloat16 array where ml_dtypes is installed, else
        float32 with the same values (exact); ``bfloat16_bits()`` gives the
        raw bits."""
        if self.dtype.numpy is None and self.dtype.name == "bfloat16":
            return bfloat16_bits_to_float32(self.bfloat16_bits())
        if self.dtype.numpy is None:
            raise TypeError(f"NumPy has no {self.dtype.name} type here")
        return self._read(self.dtype.numpy)

    def bfloat16_bits(self) -> np.ndarray:
        """The raw bits of a bfloat16 tensor as a new uint16 array (blocks
        until they are computed). ``numpy()`` gives ml_dtypes' bfloat16 where
        ml_dtypes is installed, else the values exactly as float32."""
        if self.dtype.name != "bfloat16":
            raise TypeError(f"bfloat16_bits() of a {self.dtype.name} tensor")
        return self._read(np.dtype(np.uint16))

    def _read(self, npd: np.dtype) -> np.ndarray:
        out = np.empty(self.shape, dtype=npd)
        if self.size == 0:
            return out
        src = self if self.is_contiguous() else self.contiguous()
        data = memoryview(out.reshape(-1)).cast("B")
        check(lib.wgc_buffer_read(src._buf.get(), src.offset * self.dtype.itemsize,
                                  ffi.from_buffer(data, require_writable=True), out.nbytes))
        return out

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(f"item() needs exactly one element, not {self.size}")
        return self.numpy().reshape(-1)[0].item()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None) -> Any:
        """DLPack export of the values read back to host memory (one GPU to
        host copy; the capsule shares that array's memory, no further copy)."""
        if copy is False:
            raise BufferError("a wgcompute tensor lives in GPU memory: exporting it to the host copies")
        kwargs = {"max_version": max_version} if max_version is not None else {}
        return self.numpy().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        """``(kDLCPU, 0)``: :meth:`__dlpack__` hands out host memory."""
        return (1, 0)

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("the truth value of a tensor with more than one element is ambiguous")
        return bool(self.item())

    def __iter__(self) -> Iterator["Tensor"]:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # --- views --------------------------------------------------------------

    def _view(self, shape: Sequence[int], strides: Sequence[int], offset: int) -> "Tensor":
        return Tensor(self._buf, self._dev, self.dtype, tuple(shape), tuple(strides), offset)

    def __getitem__(self, index: Any) -> "Tensor":
        if not isinstance(index, tuple):
            index = (index,)
        if builtins.sum(1 for i in index if i is Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis")
        consumed = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
        if consumed > self.ndim:
            raise IndexError(f"too many indices for a tensor of {self.ndim} dimension(s)")
        expanded: List[Any] = []
        for i in index:
            if i is Ellipsis:
                expanded += [slice(None)] * (self.ndim - consumed)
            else:
                expanded.append(i)
        expanded += [slice(None)] * (self.ndim - builtins.sum(1 for i in expanded if i is not None))
        shape: List[int] = []
        strides: List[int] = []
        offset = self.offset
        dim = 0
        for i in expanded:
            if i is None:
                shape.append(1)
                strides.append(0)
                continue
            n, s = self.shape[dim], self.strides[dim]
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                length = len(range(start, stop, step))
                shape.append(length)
                strides.append(s * step)
                if length:
                    offset += start * s
            elif isinstance(i, (numbers.Integral, np.integer)):
                k = int(i)
                if not -n <= k < n:
                    raise IndexError(f"index {k} is out of bounds for dimension {dim} of size {n}")
                offset += (k % n) * s
            else:
                raise IndexError(f"wgcompute tensors take ints, slices, None and ... as indices, not {type(i).__name__}")
            dim += 1
        return self._view(shape, strides, offset)

    def __setitem__(self, index: Any, value: Any) -> None:
        target = self[index]
        if isinstance(value, (numbers.Number, np.number)):
            _ops.fill(target, value)
            return
        src = value if isinstance(value, Tensor) else asarray(value, dtype=self.dtype, device=self.device)
        _ops.copy(src.broadcast_to(target.shape), out=target)

    def transpose(self, *axes: Any) -> "Tensor":
        """A view with the dims permuted (NumPy's ``transpose``: no axes
        reverses them)."""
        if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        axes = tuple(int(a) % self.ndim if self.ndim else int(a) for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of {self.ndim} dims")
        return self._view([self.shape[a] for a in axes], [self.strides[a] for a in axes], self.offset)

    permute = transpose

    def swapaxes(self, a: int, b: int) -> "Tensor":
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    @property
    def T(self) -> "Tensor":
        return self.transpose()

    @property
    def mT(self) -> "Tensor":
        """The last two dims swapped (a view)."""
        return self.swapaxes(-1, -2)

    def reshape(self, *shape: Any) -> "Tensor":
        """A view if the tensor is contiguous, else a contiguous copy reshaped.
        One dim may be -1."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        shape = tuple(int(s) for s in shape)
        if shape.count(-1) > 1:
            raise ValueError("only one dim may be -1")
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape {self.shape} into {shape}")
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape {self.shape} ({self.size} elements) into {shape}")
        src = self if self.is_contiguous() else self.contiguous()
        return src._view(shape, contiguous_strides(shape), src.offset)

    view = reshape

    def flatten(self) -> "Tensor":
        return self.reshape(-1)

    ravel = flatten

    def broadcast_to(self, shape: ShapeLike) -> "Tensor":
        """A view repeating size-1 (or missing leading) dims with stride 0."""
        shape = _shape(shape)
        if len(shape) < self.ndim:
            raise ValueError(f"cannot broadcast {self.shape} to {shape}")
        pad = len(shape) - self.ndim
        strides = []
        for k, n in enumerate(shape):
            if k < pad:
                strides.append(0)
                continue
            own, s = self.shape[k - pad], self.strides[k - pad]
            if own == n:
                strides.append(s)
            elif own == 1:
                strides.append(0)
            else:
                raise ValueError(f"cannot broadcast {self.shape} to {shape}")
        return self._view(shape, strides, self.offset)

    expand = broadcast_to

    def expand_dims(self, axis: int) -> "Tensor":
        axis = axis % (self.ndim + 1)
        return self._view(self.shape[:axis] + (1,) + self.shape[axis:], self.strides[:axis] + (0,) + self.strides[axis:], self.offset)

    unsqueeze = expand_dims

    def squeeze(self, axis: Optional[int] = None) -> "Tensor":
        if axis is None:
            keep = [k for k, n in enumerate(self.shape) if n != 1]
        else:
            axis = axis % self.ndim
            if self.shape[axis] != 1:
                raise ValueError(f"dim {axis} has size {self.shape[axis]}, not 1")
            keep = [k for k in range(self.ndim) if k != axis]
        return self._view([self.shape[k] for k in keep], [self.strides[k] for k in keep], self.offset)

    # --- copies -------------------------------------------------------------

    def contiguous(self) -> "Tensor":
        """This tensor if contiguous, else a row-major copy (on the GPU)."""
        return self if self.is_contiguous() else self.copy()

    def copy(self) -> "Tensor":
        out = _new(self.shape, self.dtype, self._dev, False)
        _ops.copy(self, out=out)
        return out

    clone = copy

    def astype(self, dtype: DTypeLike) -> "Tensor":
        """A converted copy (``wgc_op_cast`` rules); the same dtype copies."""
        dt = as_dtype(dtype)
        return self.copy() if dt == self.dtype else _ops.cast(self, dt)

    def fill_(self, value: float) -> "Tensor":
        _ops.fill(self, value)
        return self

    def release(self) -> None:
        """Drop this view's reference to its buffer now (other views keep theirs)."""
        self._buf = _RELEASED
        self._cs = None

    def __enter__(self) -> "Tensor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # --- operators (see ops.py) ---------------------------------------------

    def __add__(self, o: Any) -> "Tensor": return _ops.add(self, o)
    def __radd__(self, o: Any) -> "Tensor": return _ops.add(o, self)
    def __sub__(self, o: Any) -> "Tensor": return _ops.sub(self, o)
    def __rsub__(self, o: Any) -> "Tensor": return _ops.sub(o, self)
    def __mul__(self, o: Any) -> "Tensor": return _ops.mul(self, o)
    def __rmul__(self, o: Any) -> "Tensor": return _ops.mul(o, self)
    def __truediv__(self, o: Any) -> "Tensor": return _ops.div(self, o)
    def __rtruediv__(self, o: Any) -> "Tensor": return _ops.div(o, self)
    def __pow__(self, o: Any) -> "Tensor": return _ops.pow(self, o)
    def __rpow__(self, o: Any) -> "Tensor": return _ops.pow(o, self)
    def __matmul__(self, o: Any) -> "Tensor": return _ops.matmul(self, o)
    def __rmatmul__(self, o: Any) -> "Tensor": return _ops.matmul(o, self)
    def __iadd__(self, o: Any) -> "Tensor": return _ops.add(self, o, out=self)
    def __isub__(self, o: Any) -> "Tensor": return _ops.sub(self, o, out=self)
    def __imul__(self, o: Any) -> "Tensor": return _ops.mul(self, o, out=self)
    def __itruediv__(self, o: Any) -> "Tensor": return _ops.div(self, o, out=self)
    def __eq__(self, o: Any) -> "Tensor": return _ops.eq(self, o)  # type: ignore[override]
    def __ne__(self, o: Any) -> "Tensor": return _ops.ne(self, o)  # type: ignore[override]
    def __lt__(self, o: Any) -> "Tensor": return _ops.lt(self, o)
    def __le__(self, o: Any) -> "Tensor": return _ops.le(self, o)
    def __gt__(self, o: Any) -> "Tensor": return _ops.gt(self, o)
    def __ge__(self, o: Any) -> "Tensor": return _ops.ge(self, o)
    def __neg__(self) -> "Tensor": return _ops.neg(self)
    def __pos__(self) -> "Tensor": return self
    def __abs__(self) -> "Tensor": return _ops.abs(self)
    __hash__ = None  # type: ignore[assignment]  # == is element-wise

    def sum(self, axis: Any = None, keepdims: bool = False) -> "Tensor": return _ops.sum(self, axis, keepdims)
    def mean(self, axis: Any = None, keepdims: bool = False) -> "Tensor": return _ops.mean(self, axis, keepdims)
    def max(self, axis: Any = None, keepdims: bool = False) -> "Tensor": return _ops.max(self, axis, keepdims)
    def min(self, axis: Any = None, keepdims: bool = False) -> "Tensor": return _ops.min(self, axis, keepdims)
    def prod(self, axis: Any = None, keepdims: bool = False) -> "Tensor": return _ops.prod(self, axis, keepdims)
    def argmax(self, axis: Optional[int] = None, keepdims: bool = False) -> "Tensor": return _ops.argmax(self, axis, keepdims)
    def argmin(self, axis: Optional[int] = None, keepdims: bool = False) -> "Tensor": return _ops.argmin(self, axis, keepdims)
    def var(self, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> "Tensor": return _ops.var(self, axis, ddof, keepdims)
    def std(self, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> "Tensor": return _ops.std(self, axis, ddof, keepdims)


_RELEASED = Handle(None, "buffer")


# --- creation -------------------------------------------------------------------


_BUFFER_OUT = ffi.typeof("WgcBuffer **")
_TENSOR_C = ffi.typeof("WgcTensor *")
# A WgcTensor per (shape, dtype) of new tensors, copied for each new one
# (cheaper than filling a struct field by field).
_TEMPLATES: dict = {}
_STORAGE = lib.WGC_BUFFER_USAGE_STORAGE
_create_zeroed = lib.wgc_buffer_create
_create_uninit = lib.wgc_buffer_create_uninit


def _new(shape: Shape, dt: DType, dev: Handle, zeroed: bool) -> Tensor:
    """A new contiguous tensor on the device ``dev`` (a device Handle), in
    a buffer of its own: zeroed, or with unspecified contents for outputs
    that are written completely. Neither submits GPU work."""
    nbytes = math.prod(shape) * dt.itemsize
    size = (nbytes + 3) & ~3 or 4  # buffers are whole 32-bit words
    out = ffi.new(_BUFFER_OUT)
    status = (_create_zeroed if zeroed else _create_uninit)(dev.get(), size, _STORAGE, out)
    if status:
        check(status)
    ptr = out[0]
    strides = contiguous_strides(shape)
    t = Tensor(Handle(ptr, "buffer"), dev, dt, shape, strides, 0)
    key = (shape, dt.value)
    template = _TEMPLATES.get(key)
    if template is None and len(shape) <= 8:
        if len(_TEMPLATES) >= 4096:
            _TEMPLATES.clear()
        template = _TEMPLATES[key] = ffi.new(_TENSOR_C, [ffi.NULL, dt.value, len(shape), shape, strides, 0])
    if template is not None:
        c = ffi.new(_TENSOR_C, template[0])
        c.buffer = ptr
        t._cs = c  # the description ops.py passes to the library
    return t


def empty(shape: ShapeLike, dtype: DTypeLike = "float32", device: Optional[Device] = None) -> Tensor:
    """A new contiguous tensor whose values are unspecified (as NumPy's and
    PyTorch's ``empty``): for tensors that will be written completely.
    Costs no GPU work; use :func:`zeros` where zeros are needed."""
    return _new(_shape(shape), as_dtype(dtype), as_device(device)._h, False)


def zeros(shape: ShapeLike, dtype: DTypeLike = "float32", device: Optional[Device] = None) -> Tensor:
    """A new contiguous tensor of zeros (cleared on the GPU ahead of the
    device's next work; nothing is submitted here)."""
    return _new(_shape(shape), as_dtype(dtype), as_device(device)._h, True)


def full(shape: ShapeLike, value: float, dtype: DTypeLike = "float32", device: Optional[Device] = None) -> Tensor:
    if value == 0:
        return zeros(shape, dtype, device)
    t = empty(shape, dtype, device)
    _ops.fill(t, value)
    return t


def ones(shape: ShapeLike, dtype: DTypeLike = "float32", device: Optional[Device] = None) -> Tensor:
    return full(shape, 1, dtype, device)


def empty_like(t: Tensor, dtype: Optional[DTypeLike] = None) -> Tensor:
    """A new tensor of ``t``'s shape with unspecified values (see :func:`empty`)."""
    return _new(t.shape, as_dtype(dtype) if dtype is not None else t.dtype, t._dev, False)


def zeros_like(t: Tensor, dtype: Optional[DTypeLike] = None) -> Tensor:
    return _new(t.shape, as_dtype(dtype) if dtype is not None else t.dtype, t._dev, True)


def full_like(t: Tensor, value: float, dtype: Optional[DTypeLike] = None) -> Tensor:
    return full(t.shape, value, dtype or t.dtype, t.device)


def ones_like(t: Tensor, dtype: Optional[DTypeLike] = None) -> Tensor:
    return full_like(t, 1, dtype)


def asarray(obj: Any, dtype: Optional[DTypeLike] = None, device: Optional[Device] = None) -> Tensor:
    """A tensor from a Tensor (returned as is, or converted), a NumPy array,
    anything NumPy accepts (lists, scalars, DLPack host arrays) .

    Without ``dtype`` NumPy's float64 becomes float32, other integer types
    int32 (uint64: uint32) and bool uint32; values outside the target
    integer range raise OverflowError."""
    if isinstance(obj, Tensor):
        if device is not None and device != obj.device:
            raise ValueError("asarray does not move tensors between devices; use asarray(t.numpy(), device=...)")
        return obj if dtype is None or as_dtype(dtype) == obj.dtype else obj.astype(dtype)
    arr = np.asarray(obj)
    dt = as_dtype(dtype) if dtype is not None else _dtype_for_host(arr.dtype)
    if dt.numpy is None and dt.name == "bfloat16":
        return from_bfloat16_bits(float32_to_bfloat16_bits(np.asarray(arr, dtype=np.float32)), device)
    if dt.numpy is None:
        raise TypeError(f"cannot convert host data to {dt.name}")
    if dt.numpy.kind in "iu" and arr.dtype.kind in "iub" and arr.size:
        info = np.iinfo(dt.numpy)
        if arr.min() < info.min or arr.max() > info.max:
            raise OverflowError(f"values outside the {dt.name} range [{info.min}, {info.max}]")
    host = np.asarray(arr, dtype=dt.numpy, order="C")  # keeps 0-d arrays 0-d
    t = _new(host.shape, dt, as_device(device)._h, False)  # written completely below
    if host.nbytes:
        # Whole 32-bit words: the array itself where it has them (no copy).
        data = host.reshape(-1).view(np.uint8) if host.nbytes % 4 == 0 else host.tobytes() + bytes(4 - host.nbytes % 4)
        check(lib.wgc_buffer_write(t._buf.get(), 0, ffi.from_buffer(data), host.nbytes + (-host.nbytes) % 4))
    return t


tensor = asarray


def from_numpy(arr: np.ndarray, device: Optional[Device] = None) -> Tensor:
    """A tensor with the values of ``arr`` (in its dtype, converted as :func:`asarray`)."""
    return asarray(arr, device=device)


def from_dlpack(obj: Any, device: Optional[Device] = None) -> Tensor:
    """A tensor from any host (CPU) DLPack exporter: NumPy arrays,
    ``torch`` CPU tensors, ... (read without a copy, then uploaded)."""
    return asarray(np.from_dlpack(obj), device=device)


from . import ops as _ops  # noqa: E402  (ops builds on Tensor)


def float32_to_bfloat16_bits(arr: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16) of float32 values, rounded to nearest even as
    the library rounds (NaN becomes 0x7fc0; beyond the range, +-inf).
    ``asarray(x, dtype="bfloat16")`` uses it without ml_dtypes: host values
    are first converted to float32 by NumPy, then rounded to bfloat16."""
    u = np.ascontiguousarray(arr, dtype=np.float32).view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    return np.where((u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000), np.uint16(0x7FC0), rounded)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """The float32 values (exact) of bfloat16 bits given as uint16."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def from_bfloat16_bits(bits: Any, device: Optional[Device] = None) -> Tensor:
    """A bfloat16 tensor holding ``bits`` (uint16 values, the raw bfloat16
    bits; NumPy has no bfloat16 type without ml_dtypes)."""
    host = np.ascontiguousarray(bits, dtype=np.uint16)
    t = _new(host.shape, as_dtype("bfloat16"), as_device(device)._h, False)  # written completely below
    if host.nbytes:
        data = host.tobytes() if host.nbytes % 4 == 0 else host.tobytes() + bytes(4 - host.nbytes % 4)
        check(lib.wgc_buffer_write(t._buf.get(), 0, ffi.from_buffer(data), len(data)))
    return t
