"""Exceptions: one class per ``WgcStatus``, all under :class:`WgcError`.

The classes are made from the header's ``WGC_ERROR_*`` constants, so a status
added to the library gets its class here (``WGC_ERROR_OUT_OF_RANGE`` ->
``OutOfRangeError``).
"""

from __future__ import annotations

from typing import Dict, Type

from ._ffi import ffi, header, lib


class WgcError(Exception):
    """A wgcompute call failed. ``status`` is the ``WgcStatus`` value,
    ``status_name`` its name, ``message`` the library's explanation."""

    status: int = -1

    def __init__(self, message: str, status: int | None = None) -> None:
        if status is not None:
            self.status = status
        self.status_name = status_name(self.status)
        self.message = message
        super().__init__(f"{self.status_name}: {message}")


def status_name(status: int) -> str:
    """The library's name for a status code, e.g. ``"WGC_ERROR_OUT_OF_RANGE"``."""
    return ffi.string(lib.wgc_status_string(status)).decode()


def _class_name(constant: str) -> str:
    words = constant[len("WGC_ERROR_"):].lower().split("_")
    return "".join(w.capitalize() for w in words) + "Error"


_BY_STATUS: Dict[int, Type[WgcError]] = {}
for _name, _value in sorted(header.constants.items(), key=lambda kv: kv[1]):
    if _name.startswith("WGC_ERROR_"):
        _cls = type(_class_name(_name), (WgcError,), {"status": _value, "__doc__": f"``{_name}``."})
        _cls.__module__ = __name__
        globals()[_cls.__name__] = _cls
        _BY_STATUS[_value] = _cls


def error_class(status: int) -> Type[WgcError]:
    """The exception class of a status (:class:`WgcError` for unknown ones)."""
    return _BY_STATUS.get(status, WgcError)


def check(status: int) -> None:
    """Raise the exception for a failed status, with the thread's last message."""
    if status:  # WGC_OK is 0
        message = ffi.string(lib.wgc_last_error_message()).decode(errors="replace")
        raise error_class(status)(message, status)


__all__ = ["WgcError", "check", "error_class", "status_name"] + [c.__name__ for c in _BY_STATUS.values()]
