"""Element types: the header's ``WGC_DTYPE_*`` values and their NumPy dtypes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Union

import numpy as np

from ._ffi import header


@dataclass(frozen=True)
class DType:
    """A wgcompute element type (``wgcompute.float32``, ...)."""

    name: str
    value: int
    numpy: Optional[np.dtype]  # None where NumPy has no such type
    itemsize: int

    def __repr__(self) -> str:
        return f"wgcompute.{self.name}"

    @property
    def is_float(self) -> bool:
        return self.numpy is not None and self.numpy.kind == "f" or self.name == "bfloat16"


def _bfloat16() -> Optional[np.dtype]:
    try:
        import ml_dtypes  # type: ignore[import-not-found]

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return None


# Names and NumPy types of the header's dtype constants; a constant missing
# here still gets a DType (without a NumPy type).
_KNOWN = {
    "F32": ("float32", np.dtype(np.float32), 4),
    "F16": ("float16", np.dtype(np.float16), 2),
    "I32": ("int32", np.dtype(np.int32), 4),
    "U32": ("uint32", np.dtype(np.uint32), 4),
    "BF16": ("bfloat16", None, 2),
}

BY_VALUE: Dict[int, DType] = {}
for _const, _value in header.constants.items():
    if not _const.startswith("WGC_DTYPE_"):
        continue
    _short = _const[len("WGC_DTYPE_"):]
    _name, _np, _size = _KNOWN.get(_short, (_short.lower(), None, 4))
    if _short == "BF16":
        _np = _bfloat16()
    BY_VALUE[_value] = DType(_name, _value, _np, _size)
    globals()[_name] = BY_VALUE[_value]

BY_NAME: Dict[str, DType] = {d.name: d for d in BY_VALUE.values()}
_ALIASES = {"f32": "float32", "f16": "float16", "half": "float16", "i32": "int32", "u32": "uint32", "bf16": "bfloat16"}

DTypeLike = Union[DType, str, np.dtype, type]


def _same(dt: DType, npd: np.dtype) -> bool:
    # Not `dt.numpy == npd`: NumPy reads None as float64, so bfloat16
    # without ml_dtypes (numpy None) would claim float64 arrays.
    return dt.numpy is not None and dt.numpy == npd


def as_dtype(d: DTypeLike) -> DType:
    """A DType from a DType, its name (``"float32"``, ``"f16"``) or a NumPy dtype."""
    if isinstance(d, DType):
        return d
    if isinstance(d, str):
        key = _ALIASES.get(d, d)
        if key in BY_NAME:
            return BY_NAME[key]
    npd = np.dtype(d)
    for dt in BY_VALUE.values():
        if _same(dt, npd):
            return dt
    raise TypeError(f"wgcompute has no dtype for {d!r} (it has {', '.join(BY_NAME)})")


def from_numpy(npd: np.dtype) -> DType:
    """The DType an ``asarray`` of an array of ``npd`` uses: the same type, or
    float64 -> float32, int64/int16/int8/uint8/uint16 -> int32, uint64 ->
    uint32, bool -> uint32 (values are range-checked by the caller)."""
    npd = np.dtype(npd)
    for dt in BY_VALUE.values():
        if _same(dt, npd):
            return dt
    if npd.kind == "f":
        return BY_NAME["float32"]
    if npd.kind == "b" or (npd.kind == "u" and npd.itemsize > 4):
        return BY_NAME["uint32"]
    if npd.kind in "iu":
        return BY_NAME["int32"]
    raise TypeError(f"wgcompute has no dtype for NumPy's {npd}")
