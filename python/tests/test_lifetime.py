"""Handles are released once, deterministically, and live as long as anything uses them."""

import gc

import numpy as np

import wgcompute as wg


def live_bytes(dev):
    return dev.memory_stats()["live_bytes"]


def test_tensor_outlives_its_device_object():
    dev = wg.Device()
    t = wg.asarray(np.arange(8, dtype=np.float32), device=dev)
    dev.close()
    del dev
    gc.collect()
    np.testing.assert_array_equal((t * 2).numpy(), np.arange(8) * 2)
    np.testing.assert_array_equal(t.device.memory_stats()["live_bytes"] > 0, True)


def test_device_context_manager_closes_its_reference():
    with wg.Device() as dev:
        t = wg.ones(4, device=dev)
    assert "closed" in repr(dev)
    np.testing.assert_array_equal((t + 1).numpy(), [2, 2, 2, 2])


def test_views_keep_the_buffer_alive():
    dev = wg.Device()
    base = wg.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=dev)
    view = base[1:, ::2].T
    before = live_bytes(dev)
    del base
    gc.collect()
    assert live_bytes(dev) == before  # still used by the view
    np.testing.assert_array_equal(view.numpy(), np.arange(12).reshape(3, 4)[1:, ::2].T)
    del view
    gc.collect()
    assert live_bytes(dev) < before


def test_release_is_deterministic_and_happens_once():
    dev = wg.Device()
    t = wg.zeros((1024,), device=dev)
    assert live_bytes(dev) >= 4096
    with t:
        pass
    assert live_bytes(dev) == 0
    t.release()  # again: nothing happens
    b = wg.Buffer(64, device=dev)
    b.close()
    b.close()
    assert live_bytes(dev) == 0
    s = wg.Stream(dev)
    s.close()
    s.close()
    k = wg.Kernel("@compute @workgroup_size(1) fn main() {}", device=dev)
    k.close()
    k.close()


def test_using_a_released_object_raises():
    b = wg.Buffer(16)
    b.close()
    try:
        b.read()
    except ValueError as e:
        assert "closed" in str(e)
    else:
        raise AssertionError("reading a closed buffer did not raise")


def test_garbage_collection_releases_memory():
    dev = wg.Device()
    for _ in range(20):
        wg.zeros((256, 256), device=dev) + 1
    gc.collect()
    dev.synchronize()
    assert live_bytes(dev) == 0
