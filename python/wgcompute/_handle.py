"""One owned reference to a library handle, released exactly once."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict

from ._ffi import lib

# wgc_<kind>_release by kind, looked up once (handles are made per operator).
_RELEASE: Dict[str, Callable[[Any], None]] = {}
_new_lock = threading.Lock


class Handle:
    """Owns one reference to ``ptr`` (a ``WgcX *``) and drops it with
    ``wgc_<kind>_release`` on :meth:`release` or when garbage collected,
    whichever comes first. Python objects that need the handle hold this
    object, so the reference lives as long as any of them."""

    __slots__ = ("ptr", "kind", "_release", "_lock", "__weakref__", "__dict__")

    def __init__(self, ptr: Any, kind: str) -> None:
        self.ptr = ptr
        self.kind = kind
        release = _RELEASE.get(kind)
        if release is None:
            release = _RELEASE[kind] = getattr(lib, f"wgc_{kind}_release")
        self._release: Callable[[Any], None] = release
        self._lock = _new_lock()

    @property
    def alive(self) -> bool:
        return self.ptr is not None

    def get(self) -> Any:
        """The pointer, or ValueError if released."""
        ptr = self.ptr
        if ptr is None:
            raise ValueError(f"the {self.kind} was closed")
        return ptr

    def release(self) -> None:
        with self._lock:
            ptr, self.ptr = self.ptr, None
        if ptr is not None:
            self._release(ptr)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # interpreter shutdown: the library may be gone
            pass
