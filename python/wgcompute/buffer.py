"""Raw GPU buffers (``WgcBuffer``), for custom kernels and byte-level work."""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from ._ffi import ffi, lib
from ._handle import Handle
from ._structs import enum_values
from .device import Device, as_device
from .errors import check

USAGE = enum_values("WGC_BUFFER_USAGE_")


def _usage_bits(usage: Union[int, str]) -> int:
    if isinstance(usage, int):
        return usage
    bits = 0
    for word in usage.replace("|", " ").split():
        if word.lower() not in USAGE:
            raise ValueError(f"unknown buffer usage {word!r}; known: {', '.join(USAGE)}")
        bits |= USAGE[word.lower()]
    return bits


class Buffer:
    """``size`` bytes of GPU memory that read as zero when created.

    ``usage``: ``WGC_BUFFER_USAGE_*`` bits, or their names (``"storage"``,
    ``"uniform"``, ``"indirect"``, ``"storage|indirect"``).
    """

    def __init__(self, size: int, usage: Union[int, str] = "storage", device: Optional[Device] = None,
                 *, _handle: Optional[Handle] = None, _device: Optional[Handle] = None) -> None:
        if _handle is None:
            dev = as_device(device)
            out = ffi.new("WgcBuffer **")
            check(lib.wgc_buffer_create(dev.handle, size, _usage_bits(usage), out))
            _handle, _device = Handle(out[0], "buffer"), dev._h
        self._h = _handle
        self._dev = _device

    @property
    def handle(self) -> Any:
        """The ``WgcBuffer *``."""
        return self._h.get()

    @property
    def device(self) -> Device:
        return Device(_handle=self._dev)

    @property
    def size(self) -> int:
        out = ffi.new("uint64_t *")
        check(lib.wgc_buffer_size(self.handle, out))
        return int(out[0])

    def write(self, data: Any, offset: int = 0) -> None:
        """Copy bytes (anything with the buffer protocol) in at ``offset``;
        ordered after work already recorded. Offset and length: multiples of 4."""
        view = memoryview(np.ascontiguousarray(data) if not isinstance(data, (bytes, bytearray)) else data).cast("B")
        check(lib.wgc_buffer_write(self.handle, offset, ffi.from_buffer(view), view.nbytes))

    def read(self, size: Optional[int] = None, offset: int = 0) -> bytes:
        """``size`` bytes (default: to the end) at ``offset``; blocks until the
        work recorded before has finished."""
        if size is None:
            size = self.size - offset
        out = bytearray(size)
        self.read_into(out, offset)
        return bytes(out)

    def read_into(self, target: Any, offset: int = 0) -> None:
        """Fill a writable buffer (e.g. a contiguous NumPy array) from ``offset``."""
        view = memoryview(target).cast("B")
        check(lib.wgc_buffer_read(self.handle, offset, ffi.from_buffer(view, require_writable=True), view.nbytes))

    def close(self) -> None:
        """Drop this object's reference (tensors viewing the buffer keep theirs)."""
        self._h = _CLOSED

    def __enter__(self) -> "Buffer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_CLOSED = Handle(None, "buffer")
