"""Custom WGSL kernels and their launches."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from ._ffi import ffi, lib
from ._handle import Handle
from ._structs import new_sized
from .buffer import Buffer
from .device import Device, as_device
from .errors import check
from .stream import Stream, current_stream

# A binding value: a Buffer, a Tensor (its buffer from the view's offset),
# or (Buffer, byte offset, byte size) with size 0 meaning to the end.
BindingValue = Any


class Kernel:
    """A compiled ``@compute`` entry point of WGSL ``source`` (``WgcKernel``).

    Compiling blocks while the driver works; the same source and entry point
    on one device compile once. Errors: ``ShaderCompilationError`` (with line
    and column), ``NotFoundError`` (no such entry point),
    ``LimitExceededError``, ``UnsupportedError``.
    """

    def __init__(self, source: str, entry_point: str = "main", device: Optional[Device] = None,
                 skip_bounds_checks: bool = False) -> None:
        dev = as_device(device)
        desc = new_sized("WgcKernelDesc")
        src = ffi.new("char[]", source.encode())
        entry = ffi.new("char[]", entry_point.encode())
        desc.source = src
        desc.entry_point = entry
        desc.skip_bounds_checks = int(bool(skip_bounds_checks))
        out = ffi.new("WgcKernel **")
        check(lib.wgc_kernel_create(dev.handle, desc, out))
        self._h = Handle(out[0], "kernel")
        self._dev = dev._h

    @property
    def handle(self) -> Any:
        return self._h.get()

    @property
    def workgroup_size(self) -> Tuple[int, int, int]:
        out = ffi.new("uint32_t[3]")
        check(lib.wgc_kernel_workgroup_size(self.handle, out))
        return (out[0], out[1], out[2])

    @property
    def binding_count(self) -> int:
        out = ffi.new("uint32_t *")
        check(lib.wgc_kernel_binding_count(self.handle, out))
        return int(out[0])

    def launch(self, workgroups: Union[int, Sequence[int]], bindings: Union[Dict[int, BindingValue], Sequence[BindingValue]] = (),
               params: Any = None, indirect: Optional[Tuple[Buffer, int]] = None, stream: Optional[Stream] = None) -> None:
        """Record a launch (does not block).

        ``bindings``: ``{binding number: value}``, or a sequence bound to
        0, 1, 2, ...; values are Buffers, Tensors, or ``(Buffer, offset,
        size)``. ``params``: bytes or a NumPy array/scalar copied into the
        kernel's ``var<uniform>``. ``indirect``: ``(Buffer, byte offset)``
        holding three u32 workgroup counts read on the GPU. ``stream``:
        default, the current stream of the kernel's device.
        """
        if isinstance(workgroups, int):
            workgroups = (workgroups, 1, 1)
        wg = tuple(workgroups) + (1,) * (3 - len(workgroups))
        items: Iterable[Tuple[int, BindingValue]] = bindings.items() if isinstance(bindings, dict) else enumerate(bindings)
        items = list(items)
        arr = ffi.new("WgcBinding[]", max(len(items), 1))
        for i, (number, value) in enumerate(items):
            buf, offset, size = _resolve_binding(value)
            arr[i].binding = number
            arr[i].buffer = buf.handle
            arr[i].offset = offset
            arr[i].size = size
        launch = new_sized("WgcLaunch")
        launch.bindings = arr
        launch.binding_count = len(items)
        launch.workgroups = wg
        keep = None
        if params is not None:
            raw = params if isinstance(params, (bytes, bytearray)) else np.ascontiguousarray(params).tobytes()
            keep = ffi.from_buffer(raw)
            launch.params = keep
            launch.params_size = len(raw)
        if indirect is not None:
            launch.indirect_buffer = indirect[0].handle
            launch.indirect_offset = indirect[1]
        s = stream if stream is not None else current_stream(self._dev)
        check(lib.wgc_stream_launch(s.handle, self.handle, launch))

    __call__ = launch

    def close(self) -> None:
        self._h.release()

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _resolve_binding(value: BindingValue) -> Tuple[Buffer, int, int]:
    if isinstance(value, tuple):
        buf, offset, size = value
        return buf, offset, size
    if isinstance(value, Buffer):
        return value, 0, 0
    buffer = getattr(value, "buffer", None)  # a Tensor
    if isinstance(buffer, Buffer):
        return buffer, value.offset * value.dtype.itemsize, 0
    raise TypeError(f"cannot bind {type(value).__name__}: expected a Buffer, a Tensor or (Buffer, offset, size)")
