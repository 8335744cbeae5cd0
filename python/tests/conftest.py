"""Shared helpers: a device, random inputs, and NumPy comparisons."""

import numpy as np
import pytest

import wgcompute as wg

TOL = {"float32": (1e-5, 1e-5), "float16": (2e-3, 2e-3), "int32": (0, 0), "uint32": (0, 0)}


@pytest.fixture(scope="session")
def dev() -> wg.Device:
    return wg.default_device()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def rand(rng: np.random.Generator, shape, dtype="float32", lo=-2.0, hi=2.0) -> np.ndarray:
    """Random values of ``dtype`` (integers in [lo*50, hi*50])."""
    if np.dtype(dtype).kind in "iu":
        lo_i = 0 if np.dtype(dtype).kind == "u" else int(lo * 50)
        return rng.integers(lo_i, int(hi * 50) + 1, size=shape).astype(dtype)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def assert_close(actual, expected, dtype="float32", scale=1.0):
    """Compare a tensor (or array) with a float64 (or exact) reference."""
    a = actual.numpy() if isinstance(actual, wg.Tensor) else np.asarray(actual)
    rtol, atol = TOL[str(np.dtype(dtype))]
    np.testing.assert_allclose(a.astype(np.float64), np.asarray(expected, dtype=np.float64), rtol=rtol * scale, atol=atol * scale)
