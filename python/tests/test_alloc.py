"""Allocation: outputs in uninitialised pool memory (no clear, nothing
submitted), zeros where promised even in memory reused from the pool, and
the per-call caches of the binding (tensor descriptions, streams)."""

import gc

import numpy as np
import pytest

import wgcompute as wg
from wgcompute import ffi, lib


def pool_hits(dev):
    return dev.memory_stats()["pool_hits"]


def junk_in_pool(dev, n, dtype="float32"):
    """Leave a finished allocation of n elements full of NaN bits in the pool."""
    t = wg.asarray(np.full(n, 0xFFFFFFFF, dtype=np.uint32), device=dev)
    dev.synchronize()
    dev.trim_pool(0)  # the junk becomes the only pooled allocation
    del t
    gc.collect()
    dev.synchronize()


def test_zeros_read_zero_after_reuse(dev):
    junk_in_pool(dev, 1000)
    before = pool_hits(dev)
    z = wg.zeros(1000, "uint32", device=dev)
    assert pool_hits(dev) == before + 1  # the junk's memory
    np.testing.assert_array_equal(z.numpy(), 0)
    # The deferred clear comes before work recorded right after creation.
    junk_in_pool(dev, 1000)
    z = wg.zeros(1000, device=dev)
    y = z + 1
    np.testing.assert_array_equal(y.numpy(), 1)
    junk_in_pool(dev, 1000)
    like = wg.zeros_like(wg.empty(1000, "uint32", device=dev))
    np.testing.assert_array_equal(like.numpy(), 0)
    assert wg.full(7, 0.0, device=dev).numpy().tolist() == [0.0] * 7


def test_writes_after_zeros_are_kept(dev):
    junk_in_pool(dev, 256)
    z = wg.zeros(256, "uint32", device=dev)
    z[10:20] = 5  # a fill recorded after the clear was deferred
    want = np.zeros(256, np.uint32)
    want[10:20] = 5
    np.testing.assert_array_equal(z.numpy(), want)


def test_operator_outputs_in_uninitialised_memory(dev, rng):
    x_np = rng.uniform(-2, 2, size=(33, 70)).astype(np.float32)
    for _ in range(2):
        junk_in_pool(dev, 33 * 70)
        x = wg.asarray(x_np, device=dev)
        junk_in_pool(dev, 33 * 70)
        np.testing.assert_allclose((x * 2 + 1).numpy(), x_np * 2 + 1, rtol=1e-6)
        junk_in_pool(dev, 33)
        np.testing.assert_allclose(x.sum(axis=1).numpy(), x_np.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
        junk_in_pool(dev, 33 * 70)
        sm = wg.softmax(x, axis=-1).numpy()
        e = np.exp(x_np - x_np.max(-1, keepdims=True))
        np.testing.assert_allclose(sm, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
        junk_in_pool(dev, 33 * 33)
        np.testing.assert_allclose((x @ x.T).numpy(), x_np.astype(np.float64) @ x_np.T, rtol=1e-4, atol=1e-4)
        junk_in_pool(dev, 70 * 33)
        np.testing.assert_array_equal(x.T.copy().numpy(), x_np.T)


def test_gemm_without_c_reads_zeros_where_beta_is_set(dev, rng):
    a_np = rng.uniform(-1, 1, size=(9, 5)).astype(np.float32)
    b_np = rng.uniform(-1, 1, size=(5, 7)).astype(np.float32)
    junk_in_pool(dev, 63)
    c = wg.gemm(wg.asarray(a_np, device=dev), wg.asarray(b_np, device=dev), alpha=2.0, beta=0.5)
    np.testing.assert_allclose(c.numpy(), 2 * (a_np.astype(np.float64) @ b_np), rtol=1e-5, atol=1e-5)


def test_empty_is_uninitialised_and_cheap(dev):
    t = wg.empty((3, 4), "int32", device=dev)
    assert t.shape == (3, 4) and t.dtype == wg.int32
    t.fill_(3)
    np.testing.assert_array_equal(t.numpy(), 3)
    assert wg.empty_like(t).shape == (3, 4)


def test_raw_uninit_call_statuses(dev):
    out = ffi.new("WgcBuffer **")
    assert lib.wgc_buffer_create_uninit(dev.handle, 0, lib.WGC_BUFFER_USAGE_STORAGE, out) == lib.WGC_ERROR_INVALID_ARGUMENT
    assert lib.wgc_buffer_create_uninit(dev.handle, 64, 0x100, out) == lib.WGC_ERROR_INVALID_ARGUMENT
    assert lib.wgc_buffer_create_uninit(ffi.NULL, 64, 0, out) == lib.WGC_ERROR_NULL_POINTER
    assert lib.wgc_buffer_create_uninit(dev.handle, 64, 0, out) == lib.WGC_OK
    lib.wgc_buffer_release(out[0])


def test_cached_description_follows_release(dev):
    t = wg.asarray(np.arange(4, dtype=np.float32), device=dev)
    np.testing.assert_array_equal((t + 1).numpy(), [1, 2, 3, 4])  # caches t's WgcTensor
    v = t[1:]
    t.release()
    with pytest.raises(ValueError):
        t + 1
    np.testing.assert_array_equal((v * 2).numpy(), [2, 4, 6])


def test_a_long_loop_of_small_ops_stays_correct(dev):
    x_np = (np.arange(4096, dtype=np.float32) % 97) * 0.25 - 3.0
    x = wg.asarray(x_np, device=dev)
    y = x
    for i in range(300):
        y = x * 1.5 + 0 if i % 2 else y * 1.0 + 0
    np.testing.assert_array_equal(y.numpy(), x_np * np.float32(1.5))
