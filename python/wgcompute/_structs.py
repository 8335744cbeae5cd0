"""Small helpers between cffi structs, header constants and Python values."""

from __future__ import annotations

from typing import Any, Dict

from ._ffi import ffi, header


def enum_names(prefix: str) -> Dict[int, str]:
    """{value: lower-case name} of the header constants starting with ``prefix``."""
    return {v: k[len(prefix):].lower() for k, v in header.constants.items() if k.startswith(prefix)}


def enum_values(prefix: str) -> Dict[str, int]:
    """{lower-case name: value} of the header constants starting with ``prefix``."""
    return {name: v for v, name in enum_names(prefix).items()}


def new_sized(ctype: str) -> Any:
    """A zeroed ``ctype`` struct with ``struct_size`` set, as the C contract asks."""
    p = ffi.new(f"{ctype} *")
    p.struct_size = ffi.sizeof(ctype)
    return p


def to_python(value: Any) -> Any:
    """A cffi struct (or array, or scalar) as plain Python: dict, str or int."""
    if not isinstance(value, ffi.CData):
        return value
    t = ffi.typeof(value)
    if t.kind == "struct":
        return {name: to_python(getattr(value, name)) for name, _ in t.fields}
    if t.kind == "array" and t.item.cname == "char":
        return ffi.string(value).decode(errors="replace")
    if t.kind == "array":
        return [to_python(v) for v in value]
    return value
