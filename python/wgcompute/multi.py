"""Several devices in one process: copies between devices and collectives.

    a, b = wg.Device(), wg.Device()
    x = wg.asarray(np.ones(1000, np.float32), device=a)
    y = x.to(b)                           # through host memory, pipelined
    xs = [wg.full(1000, i, device=d) for i, d in enumerate((a, b))]
    wg.all_reduce(xs)                     # every tensor becomes the sum

Each call orders its work on the current streams of the tensors' devices
(see :mod:`wgcompute.stream`): it reads after the work recorded there before
it, and work recorded there after it sees the result. It blocks until the
data has been read back from the sources and handed to the destinations'
queues (see ``wgc_buffer_copy_to_device`` and ``WgcComm`` in the header).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

from ._ffi import ffi, lib
from ._handle import Handle
from ._structs import enum_values
from .device import Device
from .errors import check
from .ops import _c, _stream
from .tensor import Tensor, empty

COLLECTIVE_OPS = enum_values("WGC_COLLECTIVE_OP_")


def to_device(x: Tensor, device: Device, out: Optional[Tensor] = None) -> Tensor:
    """``x`` copied to ``device`` (a new contiguous tensor unless ``out=``
    names a view there). Any view; bfloat16 and odd lengths included."""
    o = out if out is not None else empty(x.shape, x.dtype, device)
    check(lib.wgc_tensor_copy_to_device(_stream(x), _c(x), _stream(o), _c(o)))
    return o


def _tensor_to(self: Tensor, device: Device, out: Optional[Tensor] = None) -> Tensor:
    """``self`` on ``device``: itself where it already is, else a copy (see
    :func:`wgcompute.to_device`)."""
    if out is None and self.device == device:
        return self
    return to_device(self, device, out)


Tensor.to = _tensor_to  # type: ignore[attr-defined]


def _views(ts: Sequence[Tensor]) -> Any:
    views = ffi.new("WgcTensor[]", len(ts))
    for i, t in enumerate(ts):
        views[i] = _c(t)[0]
    return views


def _op(op: str) -> int:
    if op not in COLLECTIVE_OPS:
        raise ValueError(f"op must be one of {sorted(COLLECTIVE_OPS)}, not {op!r}")
    return COLLECTIVE_OPS[op]


class Comm:
    """A communicator over distinct devices; rank i is ``devices[i]``. Each
    collective takes one tensor per rank, in rank order, on its device."""

    def __init__(self, devices: Sequence[Device]) -> None:
        self.devices = list(devices)
        ptrs = ffi.new("WgcDevice *[]", [d.handle for d in self.devices] or [ffi.NULL])
        out = ffi.new("WgcComm **")
        check(lib.wgc_comm_create(ptrs, len(self.devices), out))
        self._h = Handle(out[0], "comm")

    @classmethod
    def of(cls, tensors: Sequence[Tensor]) -> "Comm":
        """The communicator over the tensors' devices, in their order."""
        return cls([t.device for t in tensors])

    def _streams(self, tensors: Sequence[Tensor]) -> Any:
        if len(tensors) != len(self.devices):
            raise ValueError(f"{len(tensors)} tensors for {len(self.devices)} devices")
        return ffi.new("WgcStream *[]", [_stream(t) for t in tensors])

    def all_reduce(self, tensors: Sequence[Tensor], op: str = "sum") -> List[Tensor]:
        """Each (contiguous) tensor becomes the elementwise ``op`` ("sum" or
        "max") of all of them, in place. Returns the tensors."""
        check(lib.wgc_comm_all_reduce(self._h.get(), self._streams(tensors), _views(tensors), _op(op)))
        return list(tensors)

    def all_gather(self, inputs: Sequence[Tensor], outputs: Optional[Sequence[Tensor]] = None) -> List[Tensor]:
        """Each output (default: new, shape ``(N, *input.shape)``) becomes the
        inputs stacked in rank order."""
        if outputs is None:
            outputs = [empty((len(inputs),) + tuple(x.shape), x.dtype, x.device) for x in inputs]
        check(lib.wgc_comm_all_gather(self._h.get(), self._streams(inputs), _views(inputs), _views(outputs)))
        return list(outputs)

    def reduce_scatter(self, inputs: Sequence[Tensor], outputs: Optional[Sequence[Tensor]] = None,
                       op: str = "sum") -> List[Tensor]:
        """Output i (default: new, the first dim of the input divided by N)
        becomes ``op`` over ranks of the inputs' i-th of N parts."""
        if outputs is None:
            n = len(inputs)
            outputs = []
            for x in inputs:
                if not x.shape or x.shape[0] % n:
                    raise ValueError(f"the first dim of {x.shape} does not split into {n} parts")
                outputs.append(empty((x.shape[0] // n,) + tuple(x.shape[1:]), x.dtype, x.device))
        check(lib.wgc_comm_reduce_scatter(self._h.get(), self._streams(inputs), _views(inputs), _views(outputs),
                                          _op(op)))
        return list(outputs)

    def broadcast(self, tensors: Sequence[Tensor], root: int = 0) -> List[Tensor]:
        """Every tensor becomes a copy of ``tensors[root]``."""
        check(lib.wgc_comm_broadcast(self._h.get(), self._streams(tensors), _views(tensors), root))
        return list(tensors)

    def close(self) -> None:
        self._h.release()


def all_reduce(tensors: Sequence[Tensor], op: str = "sum") -> List[Tensor]:
    """:meth:`Comm.all_reduce` over the tensors' devices."""
    return Comm.of(tensors).all_reduce(tensors, op)


def all_gather(inputs: Sequence[Tensor], outputs: Optional[Sequence[Tensor]] = None) -> List[Tensor]:
    """:meth:`Comm.all_gather` over the inputs' devices."""
    return Comm.of(inputs).all_gather(inputs, outputs)


def reduce_scatter(inputs: Sequence[Tensor], outputs: Optional[Sequence[Tensor]] = None,
                   op: str = "sum") -> List[Tensor]:
    """:meth:`Comm.reduce_scatter` over the inputs' devices."""
    return Comm.of(inputs).reduce_scatter(inputs, outputs, op)


def broadcast(tensors: Sequence[Tensor], root: int = 0) -> List[Tensor]:
    """:meth:`Comm.broadcast` over the tensors' devices."""
    return Comm.of(tensors).broadcast(tensors, root)


PEER_ROUTES = enum_values("WGC_PEER_ROUTE_")


def peer_route(src: Device, dst: Device) -> str:
    """How copies from ``src`` to ``dst`` move their bytes: ``"imported"``
    (one host allocation both devices import, no host copy) or ``"staged"``
    (mapped staging buffers and a host copy)."""
    out = ffi.new("WgcPeerRoute *")
    check(lib.wgc_device_peer_route(src.handle, dst.handle, out))
    return {v: k for k, v in PEER_ROUTES.items()}[int(out[0])]
