"""wg.fuse: traced element-wise functions run as one kernel, with the
separate operators' results bit for bit, launch parameters, several
outputs, retracing only when the arguments' structure changes, and clear
errors for what cannot be traced."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand


def chain(a, b, c):
    return wg.sqrt(wg.relu(a * b + c)) * 0.5 + wg.sigmoid(c)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_chain_matches_separate_ops(dev, rng, dtype):
    a, b, c = (rand(rng, (37, 29), dtype, -3, 3) for _ in range(3))
    ta, tb, tc = (wg.asarray(x) for x in (a, b, c))
    fused = wg.fuse(chain)
    y = fused(ta, tb, tc).numpy()
    np.testing.assert_array_equal(y.view(np.uint16 if dtype == "float16" else np.uint32),
                                  chain(ta, tb, tc).numpy().view(np.uint16 if dtype == "float16" else np.uint32))
    a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
    ref = np.sqrt(np.maximum(a64 * b64 + c64, 0)) * 0.5 + 1 / (1 + np.exp(-c64))
    assert_close(y, ref, dtype, scale=4)


def test_params_shapes_and_views_reuse_the_trace(dev, rng):
    f = wg.fuse(lambda x, bias, s: wg.fma(x, s, bias))
    for rows, s in [(5, 2.0), (9, -0.25), (3, 7.5)]:
        x = rand(rng, (rows, 8))
        bias = rand(rng, (8,))
        tx = wg.asarray(x.T.copy()).T  # a transposed view
        y = f(tx, wg.asarray(bias), s)
        assert_close(y, x.astype(np.float64) * s + bias, "float32")
    assert len(f.traces) == 1
    f(wg.asarray(rand(rng, (4,), "float16")), wg.asarray(rand(rng, (4,), "float16")), 1.0)
    assert len(f.traces) == 2  # new dtypes: traced again


def test_several_outputs_where_and_casts(dev, rng):
    @wg.fuse
    def f(x, y):
        m = x > y
        return wg.where(m, x, y), m, (x * 4).astype("int32")

    x, y = rand(rng, (6, 7)), rand(rng, (7,))
    mx, m, xi = f(wg.asarray(x), wg.asarray(y))
    assert m.dtype == wg.uint32 and xi.dtype == wg.int32
    np.testing.assert_array_equal(mx.numpy(), np.maximum(x, y))
    np.testing.assert_array_equal(m.numpy(), (x > y).astype(np.uint32))
    np.testing.assert_array_equal(xi.numpy(), np.trunc(x * np.float32(4)).astype(np.int32))


def test_what_cannot_be_traced(dev, rng):
    x = wg.asarray(rand(rng, (4,)))
    with pytest.raises(TypeError):
        wg.fuse(lambda a: 3.0)(x)
    with pytest.raises(TypeError):
        wg.fuse(lambda a: a if a > 0 else -a)(x)
    with pytest.raises(TypeError):
        wg.fuse(lambda a: a)(1.0)
    with pytest.raises(wg.WgcError):
        wg.fuse(lambda a, b: a + b)(x, wg.asarray(rand(rng, (4,), "float16")))


@pytest.mark.parametrize("rms", [True, False])
def test_residual_norms(dev, rng, rms):
    x, r, w = rand(rng, (3, 64)), rand(rng, (3, 64)), rand(rng, (64,), lo=0.5, hi=1.5)
    tx, tr, tw = wg.asarray(x), wg.asarray(r), wg.asarray(w)
    if rms:
        y, s = wg.rms_norm_residual(tx, tr, 64, tw, eps=1e-6)
    else:
        y, s = wg.layer_norm_residual(tx, tr, 64, tw, None, eps=1e-6)
    s64 = (x + r).astype(np.float64)
    np.testing.assert_array_equal(s.numpy(), x + r)
    mean = 0 if rms else s64.mean(-1, keepdims=True)
    ref = (s64 - mean) / np.sqrt(((s64 - mean) ** 2).mean(-1, keepdims=True) + 1e-6) * w
    assert_close(y, ref, "float32")
