"""Load ``libwgcompute`` through cffi's ABI mode, declared from the header.

``ffi`` and ``lib`` are the raw binding: every function, struct and constant
of ``wgcompute.h``. The library is looked for, in order, at
``WGC_LIBRARY_PATH`` (a file, or a directory holding the library), next to
this file (where the wheel bundles it), and where the system's loader finds
``wgcompute``; if none loads, ``ImportError`` lists each path tried and why.
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from pathlib import Path
from typing import List, Tuple

import cffi

from . import _header

_HERE = Path(__file__).resolve().parent

if sys.platform == "darwin":
    _LIB_NAMES = ["libwgcompute.dylib"]
elif sys.platform == "win32":
    _LIB_NAMES = ["wgcompute.dll"]
else:
    _LIB_NAMES = ["libwgcompute.so", "libwgcompute.so.0"]


def _header_path() -> Path:
    """The bundled header, or the repository's when run from a source tree."""
    for candidate in (_HERE / "include" / "wgcompute.h", _HERE.parent.parent / "include" / "wgcompute.h"):
        if candidate.is_file():
            return candidate
    raise ImportError(f"wgcompute.h not found next to the package ({_HERE / 'include'}) or in the source tree")


def _candidates() -> List[Tuple[str, str]]:
    """(path, where it came from) in the order they are tried."""
    found: List[Tuple[str, str]] = []
    env = os.environ.get("WGC_LIBRARY_PATH")
    if env:
        p = Path(env)
        if p.is_dir():
            found += [(str(p / n), "WGC_LIBRARY_PATH") for n in _LIB_NAMES]
        else:
            found.append((env, "WGC_LIBRARY_PATH"))
        return found  # an explicit choice is not second-guessed
    found += [(str(_HERE / n), "bundled") for n in _LIB_NAMES[:1]]
    system = ctypes.util.find_library("wgcompute")
    found.append((system or "wgcompute", "system loader"))
    return found


def _load() -> Tuple[cffi.FFI, object, _header.Header, str]:
    header = _header.parse(_header_path())
    ffi = cffi.FFI()
    ffi.cdef(header.cdef)
    failures = []
    for path, origin in _candidates():
        if origin != "system loader" and not Path(path).exists():
            failures.append(f"  {path} ({origin}): no such file")
            continue
        try:
            return ffi, ffi.dlopen(path), header, path
        except OSError as e:
            failures.append(f"  {path} ({origin}): {e}")
    raise ImportError(
        "could not load the wgcompute library; tried:\n"
        + "\n".join(failures)
        + "\nset WGC_LIBRARY_PATH to libwgcompute's path (or its directory), or reinstall the package"
    )


ffi, lib, header, library_path = _load()

if lib.wgc_abi_version() != lib.WGC_ABI_VERSION:
    raise ImportError(
        f"{library_path} has ABI version {lib.wgc_abi_version()}, but the header this package was "
        f"built with has {lib.WGC_ABI_VERSION}: use the library the package bundles"
    )
