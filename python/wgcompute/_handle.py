"""One owned reference to a library handle, released exactly once."""

from __future__ import annotations

from typing import Any, Callable, Dict

from ._ffi import lib

# wgc_<kind>_release by kind, looked up once (handles are made per operator).
_RELEASE: Dict[str, Callable[[Any], None]] = {}


class Handle:
    """Owns one reference to ``ptr`` (a ``WgcX *``) and drops it with
    ``wgc_<kind>_release`` on :meth:`release` or when garbage collected,
    whichever comes first. Python objects that need the handle hold this
    object, so the reference lives as long as any of them."""

    # _owned holds the pointer until it is released: list.pop is atomic, so
    # two threads releasing at once release it once, without a lock per
    # handle (one is made for every operator's output).
    __slots__ = ("ptr", "kind", "_release", "_owned", "__weakref__", "__dict__")

    def __init__(self, ptr: Any, kind: str) -> None:
        self.ptr = ptr
        self.kind = kind
        release = _RELEASE.get(kind)
        if release is None:
            release = _RELEASE[kind] = getattr(lib, f"wgc_{kind}_release")
        self._release: Callable[[Any], None] = release
        self._owned = [ptr] if ptr is not None else []

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
        try:
            ptr = self._owned.pop()
        except IndexError:
            return  # released already
        self.ptr = None
        self._release(ptr)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # interpreter shutdown: the library may be gone
            pass
