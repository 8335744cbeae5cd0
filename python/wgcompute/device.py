"""Adapters and devices.

The environment variables of the C library apply: ``WGC_ADAPTER`` and
``WGC_BACKEND`` choose adapters exactly as for a C program.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from ._ffi import ffi, lib
from ._handle import Handle
from ._structs import enum_names, enum_values, new_sized, to_python
from .errors import check

_BACKENDS = enum_names("WGC_BACKEND_")
_DEVICE_TYPES = enum_names("WGC_DEVICE_TYPE_")
_PREFERENCES = enum_values("WGC_POWER_PREFERENCE_")
_AUTOTUNE = enum_values("WGC_AUTOTUNE_")
_AUTOTUNE_NAMES = enum_names("WGC_AUTOTUNE_")

_instance_lock = threading.Lock()
_instance: Optional[Handle] = None


def _instance_handle() -> Handle:
    """The process's instance, created on first use (adapters are listed once)."""
    global _instance
    with _instance_lock:
        if _instance is None:
            out = ffi.new("WgcInstance **")
            check(lib.wgc_instance_create(lib.WGC_ABI_VERSION, out))
            _instance = Handle(out[0], "instance")
        return _instance


@dataclass(frozen=True)
class AdapterInfo:
    """What an adapter is and can do (``WgcAdapterInfo``). ``features`` holds
    the ``has_*`` flags as booleans plus the subgroup size range; ``limits``
    the ``WgcLimits`` fields."""

    name: str
    backend: str
    device_type: str
    driver: str
    driver_info: str
    vendor_id: int
    device_id: int
    limits: Dict[str, int] = field(repr=False)
    features: Dict[str, Any] = field(repr=False)

    @classmethod
    def _from_struct(cls, info: Any) -> "AdapterInfo":
        d = to_python(info[0])
        features = {k: bool(v) if k.startswith("has_") else v for k, v in d.items() if k.startswith(("has_", "subgroup_"))}
        return cls(
            name=d["name"],
            backend=_BACKENDS.get(d["backend"], str(d["backend"])),
            device_type=_DEVICE_TYPES.get(d["device_type"], str(d["device_type"])),
            driver=d["driver"],
            driver_info=d["driver_info"],
            vendor_id=d["vendor_id"],
            device_id=d["device_id"],
            limits=d["limits"],
            features=features,
        )


def adapters() -> List[AdapterInfo]:
    """The adapters found (as ``wgc_instance_adapter_info`` lists them; the
    index in this list is the ``adapter`` argument of :class:`Device`)."""
    inst = _instance_handle().get()
    count = ffi.new("uint32_t *")
    check(lib.wgc_instance_adapter_count(inst, count))
    result = []
    for i in range(count[0]):
        info = new_sized("WgcAdapterInfo")
        check(lib.wgc_instance_adapter_info(inst, i, info))
        result.append(AdapterInfo._from_struct(info))
    return result


class Device:
    """A GPU device (``WgcDevice``).

    ``adapter``: an index into :func:`adapters`, or None to choose by
    ``preference`` (one of ``"default"``, ``"high_performance"``,
    ``"low_power"``, ``"software"``); with the default preference the
    ``WGC_ADAPTER`` variable decides first. ``pipeline_cache_path``,
    ``pool_limit_bytes`` and ``tuning_cache_path`` are the
    ``WgcDeviceOptions`` fields; ``autotune`` is one of ``"default"``
    (``WGC_AUTOTUNE`` decides), ``"off"``, ``"on"``, ``"cached"`` (see
    ``WgcAutotune`` in the header). Opening blocks while the driver starts
    the device.

    Tensors, streams and kernels made from the device keep it alive: closing
    the Device (``close()``, the end of a ``with`` block, or garbage
    collection) drops this object's reference only.
    """

    def __init__(
        self,
        adapter: Optional[int] = None,
        preference: str = "default",
        pipeline_cache_path: Optional[str] = None,
        pool_limit_bytes: int = 0,
        *,
        autotune: str = "default",
        tuning_cache_path: Optional[str] = None,
        _handle: Optional[Handle] = None,
    ) -> None:
        if _handle is not None:
            self._h = _handle
            return
        if preference not in _PREFERENCES:
            raise ValueError(f"preference must be one of {sorted(_PREFERENCES)}, not {preference!r}")
        if autotune not in _AUTOTUNE:
            raise ValueError(f"autotune must be one of {sorted(_AUTOTUNE)}, not {autotune!r}")
        opts = new_sized("WgcDeviceOptions")
        opts.adapter_index = -1 if adapter is None else adapter
        opts.preference = _PREFERENCES[preference]
        keep = None
        if pipeline_cache_path is not None:
            keep = ffi.new("char[]", str(pipeline_cache_path).encode())
            opts.pipeline_cache_path = keep
        keep_tuning = None
        if tuning_cache_path is not None:
            keep_tuning = ffi.new("char[]", str(tuning_cache_path).encode())
            opts.tuning_cache_path = keep_tuning
        opts.autotune = _AUTOTUNE[autotune]
        opts.pool_limit_bytes = pool_limit_bytes
        out = ffi.new("WgcDevice **")
        check(lib.wgc_device_create(_instance_handle().get(), opts, out))
        self._h = Handle(out[0], "device")
        self._h.tls = threading.local()  # per-thread default streams

    @property
    def handle(self) -> Any:
        """The ``WgcDevice *`` (for calling the raw binding ``wgcompute.lib``)."""
        return self._h.get()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and self._h.ptr == other._h.ptr

    def __hash__(self) -> int:
        return hash(int(ffi.cast("uintptr_t", self._h.ptr))) if self._h.ptr is not None else 0

    def __repr__(self) -> str:
        return f"<wgcompute.Device {self.info.name!r}>" if self._h.alive else "<wgcompute.Device closed>"

    @property
    def info(self) -> AdapterInfo:
        """The adapter, with the limits and features enabled on the device."""
        info = new_sized("WgcAdapterInfo")
        check(lib.wgc_device_info(self.handle, info))
        return AdapterInfo._from_struct(info)

    def synchronize(self) -> None:
        """Submit every stream's work and block until the GPU has finished it."""
        check(lib.wgc_device_synchronize(self.handle))

    def memory_stats(self) -> Dict[str, int]:
        """Live, peak and pooled bytes, driver allocations and pool hits."""
        stats = new_sized("WgcMemoryStats")
        check(lib.wgc_device_memory_stats(self.handle, stats))
        d = to_python(stats[0])
        d.pop("struct_size")
        return d

    def trim_pool(self, keep_bytes: int = 0) -> None:
        """Return pooled memory to the driver until at most ``keep_bytes`` stay."""
        check(lib.wgc_device_trim_pool(self.handle, keep_bytes))

    def save_pipeline_cache(self) -> bool:
        """Save the driver's pipeline cache now; False if there is none."""
        saved = ffi.new("uint32_t *")
        check(lib.wgc_device_save_pipeline_cache(self.handle, saved))
        return bool(saved[0])

    def tuning_stats(self) -> Dict[str, Any]:
        """The autotuner's mode (``"off"``, ``"on"``, ``"cached"``) and its
        counters: stored entries, entries loaded from the file, shape classes
        timed, calls that reused a stored choice."""
        stats = new_sized("WgcTuningStats")
        check(lib.wgc_device_tuning_stats(self.handle, stats))
        d: Dict[str, Any] = to_python(stats[0])
        d.pop("struct_size")
        d["mode"] = _AUTOTUNE_NAMES.get(d["mode"], str(d["mode"]))
        return d

    def save_tuning(self) -> bool:
        """Save the tuner's choices to ``tuning_cache_path`` now; False if
        there is no such file (no path, or the tuner is off)."""
        saved = ffi.new("uint32_t *")
        check(lib.wgc_device_save_tuning(self.handle, saved))
        return bool(saved[0])

    def destroy(self) -> None:
        """Destroy the GPU resources now; later use fails with DeviceLostError."""
        check(lib.wgc_device_destroy(self.handle))

    def close(self) -> None:
        """Drop this object's reference (objects made from the device keep theirs)."""
        self._h = _CLOSED

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_CLOSED = Handle(None, "device")

_default_lock = threading.Lock()
_default: Optional[Device] = None


def default_device() -> Device:
    """The device operations use when given none: opened on first use with
    the default options (``WGC_ADAPTER`` / ``WGC_BACKEND`` apply)."""
    global _default
    with _default_lock:
        if _default is None or not _default._h.alive:
            _default = Device()
        return _default


def as_device(device: Union[Device, None]) -> Device:
    return default_device() if device is None else device
