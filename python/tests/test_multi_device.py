"""Several devices on the one adapter: tensor.to(device), the collectives,
and their misuse. Values are small integers so sums are exact in every
dtype; f32 of random values is compared with a float64 reference."""

import numpy as np
import pytest

import wgcompute as wg

DTYPES = ["float32", "float16", "bfloat16", "int32"]


@pytest.fixture(scope="module")
def devs():
    return [wg.Device() for _ in range(3)]


def put(x: np.ndarray, dtype: str, device: wg.Device) -> wg.Tensor:
    if dtype == "bfloat16":
        return wg.from_bfloat16_bits(wg.float32_to_bfloat16_bits(x.astype(np.float32)), device=device)
    return wg.asarray(x.astype(dtype), device=device)


def values(t: wg.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(), dtype=np.float64)


def test_peer_route(devs):
    route = wg.peer_route(devs[0], devs[1])
    assert route in ("imported", "staged")
    assert wg.peer_route(devs[1], devs[0]) == route


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_device_views(devs, dtype):
    rng = np.random.default_rng(5)
    a, b = devs[0], devs[1]
    x = rng.integers(-100, 100, size=(13, 7)).astype(np.float64)
    t = put(x, dtype, a)
    assert t.to(a) is t
    y = t.to(b)
    assert y.device == b
    np.testing.assert_array_equal(values(y), x)
    # A strided view there, into a view back here.
    z = wg.zeros((7, 13), dtype, device=a)
    wg.to_device(y.T, a, out=z)
    np.testing.assert_array_equal(values(z), x.T)
    odd = t[1:, ::2].to(b)
    np.testing.assert_array_equal(values(odd), x[1:, ::2])


def test_to_device_ordering(devs):
    a, b = devs[0], devs[1]
    x = wg.zeros(10001, device=a)
    x += 2.5                            # recorded on a's stream just before
    y = (x.to(b) * 2)                   # recorded on b's stream just after
    np.testing.assert_array_equal(y.numpy(), np.full(10001, 5.0, np.float32))


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_collectives(devs, n, dtype):
    rng = np.random.default_rng(n)
    ds = devs[:n]
    for length in (1, 1031):
        xs = [rng.integers(-8, 9, size=n * length).astype(np.float64) for _ in ds]
        for op, fold in (("sum", np.sum), ("max", np.max)):
            ts = [put(x[:length], dtype, d) for x, d in zip(xs, ds)]
            wg.all_reduce(ts, op)
            ref = fold(np.stack([x[:length] for x in xs]), axis=0)
            for t in ts:
                np.testing.assert_array_equal(values(t), ref)
            ins = [put(x, dtype, d) for x, d in zip(xs, ds)]
            outs = wg.reduce_scatter(ins, op=op)
            full = fold(np.stack(xs), axis=0)
            for i, o in enumerate(outs):
                np.testing.assert_array_equal(values(o), full[i * length:(i + 1) * length])
        ins = [put(x[:length], dtype, d) for x, d in zip(xs, ds)]
        outs = wg.all_gather(ins)
        for o in outs:
            assert o.shape == (n, length)
            np.testing.assert_array_equal(values(o), np.stack([x[:length] for x in xs]))
        wg.broadcast(ins, root=n - 1)
        for t in ins:
            np.testing.assert_array_equal(values(t), xs[-1][:length])


def test_all_reduce_f32_reference(devs):
    rng = np.random.default_rng(9)
    xs = [rng.uniform(-1, 1, 4099).astype(np.float32) for _ in devs]
    ts = [wg.asarray(x, device=d) for x, d in zip(xs, devs)]
    comm = wg.Comm(devs)
    comm.all_reduce(ts)
    ref = np.sum(np.stack(xs).astype(np.float64), axis=0)
    first = ts[0].numpy()
    for t in ts:
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(t.numpy(), first)


def test_misuse(devs):
    a, b = devs[0], devs[1]
    with pytest.raises(wg.errors.InvalidArgumentError):
        wg.Comm([a, a])
    with pytest.raises(wg.errors.InvalidArgumentError):
        wg.Comm([])
    x, y = wg.zeros(8, device=a), wg.zeros(9, device=b)
    with pytest.raises(wg.errors.ShapeMismatchError):
        wg.all_reduce([x, y])
    with pytest.raises(wg.errors.DtypeMismatchError):
        wg.all_reduce([x, wg.zeros(8, "int32", device=b)])
    with pytest.raises(wg.errors.InvalidArgumentError):
        wg.all_reduce([x[::2], wg.zeros(8, device=b)[::2]])
    with pytest.raises(ValueError):
        wg.all_reduce([x, wg.zeros(8, device=b)], op="mean")
    with pytest.raises(wg.errors.ShapeMismatchError):
        wg.to_device(x, b, out=y)
    with pytest.raises(wg.errors.InvalidArgumentError):
        wg.Comm([a, b]).broadcast([x, wg.zeros(8, device=b)], root=2)
