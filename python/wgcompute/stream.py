"""Streams (ordered, batched GPU work) and events.

Operators record on the *current stream* of the calling thread for the
tensor's device: the innermost ``with stream:`` block of that device, else a
default stream the thread gets for the device. Work on one stream runs in
order; reading a tensor waits for the work of every stream of its device.
"""

from __future__ import annotations

import threading
from typing import Any, List, Optional, Union

from ._ffi import ffi, lib
from ._handle import Handle
from .device import Device, as_device
from .errors import check

_tls = threading.local()


def _stack() -> List["Stream"]:
    if not hasattr(_tls, "streams"):
        _tls.streams = []
    return _tls.streams


class Stream:
    """A ``WgcStream`` on ``device`` (default: :func:`default_device`).

    A stream is meant for one thread at a time. ``with stream:`` makes it
    the current stream of this thread for its device and releases it at the
    end of the block (work recorded on it still runs); use
    :func:`use_stream` to make a stream current without releasing it.
    """

    def __init__(self, device: Optional[Device] = None, *, _handle: Optional[Handle] = None) -> None:
        if _handle is None:
            dev = as_device(device)
            out = ffi.new("WgcStream **")
            check(lib.wgc_stream_create(dev.handle, out))
            _handle = Handle(out[0], "stream")
            self._device_ptr = dev.handle
        self._h = _handle

    @property
    def handle(self) -> Any:
        """The ``WgcStream *``."""
        return self._h.get()

    def flush(self) -> None:
        """Submit what has been recorded; does not wait."""
        check(lib.wgc_stream_flush(self.handle))

    def synchronize(self) -> None:
        """Submit what has been recorded and block until the GPU has finished it."""
        check(lib.wgc_stream_synchronize(self.handle))

    def record_event(self) -> "Event":
        """An event at the current point of the stream (does not block)."""
        out = ffi.new("WgcEvent **")
        check(lib.wgc_stream_record_event(self.handle, out))
        return Event(Handle(out[0], "event"))

    def copy_buffer(self, src: Any, dst: Any, size: int, src_offset: int = 0, dst_offset: int = 0) -> None:
        """Record a copy of ``size`` bytes between two :class:`Buffer` objects."""
        check(lib.wgc_stream_copy_buffer(self.handle, src.handle, src_offset, dst.handle, dst_offset, size))

    def fill_buffer(self, buffer: Any, pattern: int, size: Optional[int] = None, offset: int = 0) -> None:
        """Record a fill of ``size`` bytes (default: to the end) with a 32-bit pattern."""
        if size is None:
            size = buffer.size - offset
        check(lib.wgc_stream_fill_buffer(self.handle, buffer.handle, offset, size, pattern))

    def launch(self, kernel: Any, workgroups: Any, bindings: Any = (), params: Any = None, indirect: Any = None) -> None:
        """Record a launch of a :class:`~wgcompute.Kernel`; see ``Kernel.launch``."""
        kernel.launch(workgroups, bindings, params=params, indirect=indirect, stream=self)

    def close(self) -> None:
        """Release the stream (recorded work is submitted first)."""
        self._h.release()

    def __enter__(self) -> "Stream":
        _stack().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _stack().remove(self)
        self.close()


class use_stream:
    """``with use_stream(s):`` makes ``s`` the current stream of this thread
    for its device, without releasing it afterwards."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def __enter__(self) -> Stream:
        _stack().append(self.stream)
        return self.stream

    def __exit__(self, *exc: object) -> None:
        _stack().remove(self.stream)


def current_stream(device: Union[Device, Handle, None] = None) -> Stream:
    """The stream operators on ``device``'s tensors record on in this thread."""
    h = device if isinstance(device, Handle) else as_device(device)._h
    stack = getattr(_tls, "streams", None)
    if stack:
        for s in reversed(stack):
            if s._device_ptr == h.ptr and s._h.alive:
                return s
    tls = h.tls
    s = getattr(tls, "stream", None)
    if s is None:
        out = ffi.new("WgcStream **")
        check(lib.wgc_stream_create(h.get(), out))
        s = Stream(_handle=Handle(out[0], "stream"))
        s._device_ptr = h.ptr
        tls.stream = s
    return s


class Event:
    """A point recorded in a stream (``WgcEvent``)."""

    def __init__(self, handle: Handle) -> None:
        self._h = handle

    @property
    def handle(self) -> Any:
        return self._h.get()

    def wait(self) -> None:
        """Block until the GPU has passed the event."""
        check(lib.wgc_event_wait(self.handle))

    def query(self) -> bool:
        """True if the GPU has passed the event (does not block or flush)."""
        done = ffi.new("uint32_t *")
        check(lib.wgc_event_query(self.handle, done))
        return bool(done[0])

    def elapsed_ms(self, end: "Event") -> float:
        """GPU milliseconds from this event to ``end`` (blocks until both have
        passed; UnsupportedError without GPU timestamps)."""
        out = ffi.new("double *")
        check(lib.wgc_event_elapsed_ms(self.handle, end.handle, out))
        return float(out[0])

    def close(self) -> None:
        self._h.release()

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
