"""wgcompute: GPU compute for Python over the wgcompute C library.

    import numpy as np, wgcompute as wg
    x = wg.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = wg.softmax(x * 2 + 1, axis=-1)
    print(y.numpy(), (x @ x.T).numpy())

``wgcompute.lib`` and ``wgcompute.ffi`` are the raw binding of every
function, struct and constant in ``wgcompute.h`` (cffi, ABI mode), for what
the Pythonic layer does not cover.
"""

from __future__ import annotations

from ._ffi import ffi, lib, library_path
from . import dtypes, errors
from .buffer import Buffer
from .device import AdapterInfo, Device, adapters, default_device
from .dtypes import DType
from .errors import WgcError
from .errors import *  # noqa: F401,F403  (one exception class per status)
from .graph import Graph, capture
from .fuse import fuse
from .kernel import Kernel
from .multi import Comm, all_gather, all_reduce, broadcast, peer_route, reduce_scatter, to_device
from .ops import *  # noqa: F401,F403
from .ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from .stream import Event, Stream, current_stream, use_stream
from .profiler import Profile, ProfileRecord, profile
from .tensor import (Tensor, asarray, bfloat16_bits_to_float32, empty, empty_like, float32_to_bfloat16_bits,
                     from_bfloat16_bits, from_dlpack, from_numpy, full, full_like, ones, ones_like, tensor, zeros,
                     zeros_like)

float32 = dtypes.BY_NAME["float32"]
float16 = dtypes.BY_NAME["float16"]
int32 = dtypes.BY_NAME["int32"]
uint32 = dtypes.BY_NAME["uint32"]
if "bfloat16" in dtypes.BY_NAME:
    bfloat16 = dtypes.BY_NAME["bfloat16"]


def version() -> str:
    """The loaded library's version, ``"MAJOR.MINOR.PATCH"``."""
    v = lib.wgc_version()
    return f"{v >> 16}.{(v >> 8) & 0xFF}.{v & 0xFF}"


__version__ = version()
