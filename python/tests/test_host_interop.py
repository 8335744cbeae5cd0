"""NumPy in and out, DLPack, dtypes and views without copies."""

import numpy as np
import pytest

import wgcompute as wg


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint32"])
def test_round_trip(dtype):
    x = (np.arange(30) - 10).astype(dtype).reshape(5, 6)
    t = wg.asarray(x)
    assert t.dtype.numpy == np.dtype(dtype) and t.shape == (5, 6) and t.strides == (6, 1)
    np.testing.assert_array_equal(np.asarray(t), x)
    np.testing.assert_array_equal(t.numpy(), x)


def test_odd_sized_half_arrays():
    x = np.arange(7, dtype=np.float16)
    np.testing.assert_array_equal(wg.asarray(x).numpy(), x)
    np.testing.assert_array_equal(wg.asarray(x)[1::3].numpy(), x[1::3])


def test_default_conversions():
    assert wg.asarray(np.zeros(3)).dtype == wg.float32  # float64
    assert wg.asarray([1, 2, 3]).dtype == wg.int32
    assert wg.asarray(np.array([True, False])).dtype == wg.uint32
    assert wg.asarray(2.5).shape == ()
    assert wg.asarray(2.5).item() == 2.5


def test_views_share_the_buffer():
    t = wg.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    for view in (t[1], t[:, ::2], t.T, t.transpose(1, 0, 2), t.reshape(6, 4), t[None, ..., 1], t[0].broadcast_to((5, 3, 4))):
        assert view._buf is t._buf
    np.testing.assert_array_equal(t[None, ..., 1].numpy(), np.arange(24).reshape(2, 3, 4)[None, ..., 1])
    np.testing.assert_array_equal(t[0].broadcast_to((5, 3, 4)).numpy(), np.broadcast_to(np.arange(12).reshape(3, 4), (5, 3, 4)))
    np.testing.assert_array_equal(t.T.reshape(-1).numpy(), np.arange(24).reshape(2, 3, 4).T.reshape(-1))
    assert t.T.reshape(-1)._buf is not t._buf  # a non-contiguous reshape copies


def test_dlpack_with_numpy():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    t = wg.asarray(x)
    assert t.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(t), x)
    np.testing.assert_array_equal(np.from_dlpack(t[:, ::2]), x[:, ::2])
    back = wg.from_dlpack(x[:, 1:])
    np.testing.assert_array_equal(back.numpy(), x[:, 1:])
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)


def test_adapters_and_device_info():
    infos = wg.adapters()
    assert infos and all(i.name for i in infos)
    dev = wg.Device(adapter=0)
    info = dev.info
    assert info.name == infos[0].name
    assert info.limits["max_buffer_size"] > 0
    assert isinstance(info.features["has_f16"], bool)
    assert wg.Device(preference="software").info.device_type in ("cpu", "other")


def test_repr_and_iteration():
    t = wg.asarray(np.array([[1, 2], [3, 4]], np.int32))
    assert "dtype=int32" in repr(t)
    assert [r.tolist() for r in t] == [[1, 2], [3, 4]]
    assert len(t) == 2 and t[1, 0].item() == 3
