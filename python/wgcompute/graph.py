"""Graph capture and replay (``WgcGraph``).

    with wg.capture() as g:          # records on the current stream, runs nothing
        y = wg.softmax(x * 2 + 1, axis=-1)
    g.replay()                       # y now holds the result; again and again

A replay runs the captured work again on what the captured buffers hold
then: write new inputs into them (``x.copy_from(...)``, ``Buffer.write``), or
give ``rebind=[(captured, other)]`` to use other buffers or tensors for one
replay (at least as large, same device). ``scalars=[(launch, offset,
value)]`` overwrites bytes of one of your kernels' captured ``params``
(``g.next_launch()`` during the capture gives the index the next launch
gets). ``values={index: v}`` gives built-in operators' scalar arguments new
values (``g.next_value()`` during the capture gives the index of the next
operator's first one: the scalar of ``x * 2``, RoPE's ``position_offset``,
attention's ``kv_len``; see the table under ``WgcGraph``). Reading or writing a captured tensor on the host, synchronizing or
recording an event on the capturing stream raise ``InvalidOperationError``
inside the block; the capture stays usable. See ``WgcGraph`` in
``wgcompute.h`` for the full contract.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from ._ffi import ffi, lib
from ._handle import Handle
from ._structs import new_sized
from .device import Device, as_device
from .errors import check
from .stream import Stream, current_stream

Rebind = Union[Dict[Any, Any], Iterable[Tuple[Any, Any]]]


def _buffer_handle(value: Any) -> Any:
    """The ``WgcBuffer *`` of a Buffer or a Tensor."""
    buffer = getattr(value, "buffer", None)
    if buffer is not None and not hasattr(value, "write"):  # a Tensor
        value = buffer
    return value.handle


class Graph:
    """A captured sequence of GPU work; made by :class:`capture`."""

    def __init__(self, stream: Stream, device: Optional[Handle]) -> None:
        self._stream = stream
        self._h: Optional[Handle] = None
        self._dev = device

    @property
    def handle(self) -> Any:
        if self._h is None:
            raise ValueError("the capture has not ended")
        return self._h.get()

    def next_launch(self) -> int:
        """During the capture: the index the next launch will have."""
        out = ffi.new("uint32_t *")
        check(lib.wgc_stream_capture_launch_count(self._stream.handle, out))
        return int(out[0])

    def next_value(self) -> int:
        """During the capture: the index the next built-in operator's first
        replay value will have (its scalar argument, RoPE position, kv_len)."""
        out = ffi.new("uint32_t *")
        check(lib.wgc_stream_capture_value_count(self._stream.handle, out))
        return int(out[0])

    def value_info(self, index: int) -> Tuple[float, float, float]:
        """``(captured, min, max)`` of replay value ``index``;
        ``UnsupportedError`` if a replay cannot change it."""
        out = ffi.new("double[3]")
        check(lib.wgc_graph_value_info(self.handle, index, out, out + 1, out + 2))
        return float(out[0]), float(out[1]), float(out[2])

    def counts(self) -> Dict[str, int]:
        """``{"dispatches", "launches", "slots", "values"}`` of the graph."""
        d, n, s, v = ffi.new("uint32_t *"), ffi.new("uint32_t *"), ffi.new("uint32_t *"), ffi.new("uint32_t *")
        check(lib.wgc_graph_counts(self.handle, d, n, s))
        check(lib.wgc_graph_value_count(self.handle, v))
        return {"dispatches": int(d[0]), "launches": int(n[0]), "slots": int(s[0]), "values": int(v[0])}

    def slot(self, captured: Any) -> int:
        """The slot of a captured Buffer or Tensor (``NotFoundError`` if unused)."""
        out = ffi.new("uint32_t *")
        check(lib.wgc_graph_buffer_slot(self.handle, _buffer_handle(captured), out))
        return int(out[0])

    def replay(self, stream: Optional[Stream] = None, rebind: Optional[Rebind] = None,
               scalars: Sequence[Tuple[int, int, Any]] = (),
               values: Optional[Union[Dict[int, float], Iterable[Tuple[int, float]]]] = None) -> None:
        """Record the captured work on ``stream`` (default: the current stream
        of the graph's device, or the capturing stream if one was given); does not block.

        ``rebind``: ``(captured, replacement)`` pairs (or a dict), each side
        a Buffer or Tensor, or an int slot on the left. ``scalars``:
        ``(launch, byte offset, value)``, value bytes or a NumPy scalar or
        array, written over that launch's params for this replay only.
        ``values``: ``{index: number}`` (or pairs), new values of built-in
        operators' scalar arguments for this replay only.
        """
        g = self.handle
        if stream is None:
            stream = current_stream(self._dev) if self._dev is not None else self._stream
        s = stream
        if rebind is None and not scalars and not values:
            check(lib.wgc_graph_replay(g, s.handle, ffi.NULL))
            return
        new_values = list(values.items() if isinstance(values, dict) else (values or ()))
        pairs = list(rebind.items() if isinstance(rebind, dict) else (rebind or ()))
        table = ffi.new("WgcGraphRebind[]", max(len(pairs), 1))
        for i, (old, new) in enumerate(pairs):
            table[i].slot = old if isinstance(old, int) else self.slot(old)
            table[i].buffer = _buffer_handle(new)
        patches = ffi.new("WgcGraphScalar[]", max(len(scalars), 1))
        keep = []
        for i, (launch, offset, value) in enumerate(scalars):
            if type(value) in (int, float):
                # A Python number has no width: 4 or 8 bytes would be a guess.
                raise TypeError("scalar values are bytes or NumPy scalars/arrays (e.g. np.float32(x), np.uint32(n))")
            raw = value if isinstance(value, (bytes, bytearray)) else np.ascontiguousarray(value).tobytes()
            data = ffi.from_buffer(raw)
            keep.append(data)
            patches[i].launch = launch
            patches[i].offset = offset
            patches[i].data = data
            patches[i].size = len(raw)
        desc = new_sized("WgcGraphReplay")
        desc.rebinds = table
        desc.rebind_count = len(pairs)
        desc.scalars = patches
        desc.scalar_count = len(scalars)
        given = ffi.new("WgcGraphValue[]", max(len(new_values), 1))
        for i, (index, value) in enumerate(new_values):
            given[i].index = index
            given[i].value = float(value)
        desc.values = given
        desc.value_count = len(new_values)
        check(lib.wgc_graph_replay(g, s.handle, desc))

    def close(self) -> None:
        """Release the graph (replays already recorded still run)."""
        if self._h is not None:
            self._h.release()

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class capture:
    """``with capture() as g:`` captures what is recorded on ``stream``
    (default: the current stream of ``device``) into the :class:`Graph`
    ``g``, which is complete when the block ends. An exception in the block
    ends the capture and drops what it held."""

    def __init__(self, stream: Optional[Stream] = None, device: Optional[Device] = None) -> None:
        if stream is None:
            dev = as_device(device)
            self.stream = current_stream(dev)
            self.graph = Graph(self.stream, dev._h)
        else:
            # Replays default to the capturing stream (its device is not known here).
            self.stream = stream
            self.graph = Graph(stream, None)

    def __enter__(self) -> Graph:
        check(lib.wgc_stream_begin_capture(self.stream.handle))
        return self.graph

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        out = ffi.new("WgcGraph **")
        check(lib.wgc_stream_end_capture(self.stream.handle, out))
        handle = Handle(out[0], "graph")
        if exc_type is not None:
            handle.release()
            return
        self.graph._h = handle
