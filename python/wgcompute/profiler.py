"""The profiler: GPU time per launch, by operator, on one stream.

    with wg.profile() as p:
        y = wg.softmax(x @ w, axis=-1)
    print(p.table())          # per operator, like torch.profiler's table
    p.records                 # one ProfileRecord per GPU command

``profile()`` profiles the current stream of the calling thread for the
device (``stream=`` picks another), from the start of the ``with`` block
(earlier records of that stream are cleared) to its end, which waits for
the recorded work and reads the timestamps back. Where the adapter has no
timestamp queries the records keep names, shapes and sizes with
``gpu_ns`` None and ``time_status`` ``"no_timestamps"``: no time is made
up. See ``wgc_stream_set_profiling`` in wgcompute.h.
"""

from __future__ import annotations

import threading
from typing import Any, List, NamedTuple, Optional

from ._ffi import ffi, lib
from .errors import check
from .stream import Stream, current_stream

_STATUS = {
    lib.WGC_PROFILE_TIME_MEASURED: "measured",
    lib.WGC_PROFILE_TIME_NO_TIMESTAMPS: "no_timestamps",
    lib.WGC_PROFILE_TIME_NOT_RUN: "not_run",
}
_GROUPS = {"operator": lib.WGC_PROFILE_GROUP_BY_OPERATOR, "kernel": lib.WGC_PROFILE_GROUP_BY_KERNEL}
_active = threading.local()


class ProfileRecord(NamedTuple):
    """One GPU command (a ``WgcProfileRecord``)."""

    op: str
    kernel: str
    shapes: str
    call: Optional[int]
    flops: int
    bytes: int
    host_ns: int
    gpu_ns: Optional[int]
    time_status: str
    groups: tuple


def _free(ptr: Any) -> None:
    lib.wgc_profile_records_free(ptr)


class Profile:
    """Context manager returned by :func:`profile`."""

    def __init__(self, stream: Optional[Stream] = None, device: Any = None) -> None:
        self._stream = stream
        self._device = device
        self._ptr: Any = None
        self._count = 0
        self._done = False
        self._running = False

    def __enter__(self) -> "Profile":
        if self._running or self._done:
            raise RuntimeError("a profile can be entered once")
        stream = self._stream if self._stream is not None else current_stream(self._device)
        running = getattr(_active, "streams", set())
        key = int(ffi.cast("uintptr_t", stream.handle))
        if key in running:
            raise RuntimeError("this stream is already being profiled by an enclosing wg.profile()")
        check(lib.wgc_stream_profile_clear(stream.handle))
        check(lib.wgc_stream_set_profiling(stream.handle, 1))
        running.add(key)
        _active.streams = running
        self._stream, self._key, self._running = stream, key, True
        return self

    def __exit__(self, *exc: object) -> None:
        self._running = False
        _active.streams.discard(self._key)
        check(lib.wgc_stream_set_profiling(self._stream.handle, 0))
        out, count = ffi.new("WgcProfileRecord **"), ffi.new("size_t *")
        check(lib.wgc_stream_profile_records(self._stream.handle, out, count))
        check(lib.wgc_stream_profile_clear(self._stream.handle))
        self._ptr = ffi.gc(out[0], _free) if out[0] != ffi.NULL else None
        self._count = count[0]
        self._done = True

    def _finished(self) -> None:
        if not self._done:
            raise RuntimeError("the profile is still running: read it after its with block")

    @property
    def records(self) -> List[ProfileRecord]:
        """Every command profiled, in recorded order."""
        self._finished()
        out = []
        for i in range(self._count):
            r = self._ptr[i]
            measured = r.time_status == lib.WGC_PROFILE_TIME_MEASURED
            out.append(ProfileRecord(
                op=ffi.string(r.op).decode(), kernel=ffi.string(r.kernel).decode(),
                shapes=ffi.string(r.shapes).decode(), call=None if r.call == 2**64 - 1 else int(r.call),
                flops=int(r.flops), bytes=int(r.bytes), host_ns=int(r.host_ns),
                gpu_ns=int(r.gpu_ns) if measured else None, time_status=_STATUS.get(r.time_status, "unknown"),
                groups=tuple(r.groups)))
        return out

    @property
    def has_times(self) -> bool:
        """Whether every command's GPU time was measured."""
        return all(r.gpu_ns is not None for r in self.records)

    def table(self, group: str = "operator", max_rows: int = 0) -> str:
        """The summary table (``wgc_profile_table``): one row per operator
        (``group="operator"``) or kernel variant (``"kernel"``), by GPU time."""
        self._finished()
        if group not in _GROUPS:
            raise ValueError(f"group must be one of {sorted(_GROUPS)}, not {group!r}")
        if max_rows < 0:
            raise ValueError("max_rows must be >= 0")
        ptr = self._ptr if self._ptr is not None else ffi.NULL
        length = ffi.new("size_t *")
        check(lib.wgc_profile_table(ptr, self._count, _GROUPS[group], max_rows, ffi.NULL, 0, length))
        buf = ffi.new("char[]", length[0] + 1)
        check(lib.wgc_profile_table(ptr, self._count, _GROUPS[group], max_rows, buf, length[0] + 1, length))
        return ffi.string(buf).decode()


def profile(stream: Optional[Stream] = None, device: Any = None) -> Profile:
    """Profile the work recorded on ``stream`` (default: this thread's current
    stream of ``device``, or of the default device) inside a ``with`` block."""
    return Profile(stream, device)
