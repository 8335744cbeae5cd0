"""wg.fuse with a reduction: the traced value reduced in the same kernel
(wgc_op_expr_reduce), an epilogue computed from the reduced value with
numbers and number arguments, shape-polymorphic reuse of the trace, and
clear errors for what cannot be traced."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import rand


def close(actual, expected, rtol, atol=0.0):
    a = actual.numpy() if isinstance(actual, wg.Tensor) else np.asarray(actual)
    np.testing.assert_allclose(a.astype(np.float64), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_sum_of_products_over_axes(dev, rng, dtype):
    x, y = rand(rng, (5, 33, 12), dtype), rand(rng, (5, 33, 12), dtype)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    prod = (x * y).astype(np.float64)  # each product rounded to the dtype, as the kernel does
    rtol = 1e-5 if dtype == "float32" else 2e-3
    for axis, keepdims in [(-1, False), (0, True), ((0, 2), False), (None, False)]:
        f = wg.fuse(lambda a, b: (a * b).sum(axis, keepdims))
        got = f(wg.asarray(x), wg.asarray(y))
        ref = prod.sum(axis=axis, keepdims=keepdims)
        assert got.shape == np.shape(ref)
        close(got, ref, rtol, atol=4e-6 * np.abs(x64 * y64).sum())


def test_variance_with_broadcast_mean_and_epilogue(dev, rng):
    @wg.fuse
    def std(x, m, eps):
        d = x - m
        return wg.sqrt((d * d).mean(-1) + eps)

    for rows in (7, 20):  # new shapes reuse the trace
        x = rand(rng, (rows, 300), lo=1, hi=3)
        m = x.mean(-1, keepdims=True).astype(np.float32)
        ref = np.sqrt(((x.astype(np.float64) - m) ** 2).mean(-1) + 1e-3)
        close(std(wg.asarray(x), wg.asarray(m), 1e-3), ref, 1e-5)
    assert len(std.traces) == 1
    # Another eps: a launch parameter of the epilogue.
    x = rand(rng, (4, 64))
    m = np.zeros((4, 1), np.float32)
    close(std(wg.asarray(x), wg.asarray(m), 0.5), np.sqrt((x.astype(np.float64) ** 2).mean(-1) + 0.5), 1e-5)


def test_max_abs_and_arg_ops_through_module_functions(dev, rng):
    x = rand(rng, (1001,), lo=-50, hi=50)
    x[17] = -75.0
    tx = wg.asarray(x)
    assert wg.fuse(lambda a: wg.max(abs(a)))(tx).numpy() == np.float32(75.0)
    assert wg.fuse(lambda a: (a * a).argmax())(tx).numpy() == 17
    assert wg.fuse(lambda a: wg.argmin(-abs(a), 0))(tx).numpy() == 17
    x[3] = np.nan
    assert np.isnan(wg.fuse(lambda a: abs(a).max())(wg.asarray(x)).numpy())


def test_min_prod_and_integers(dev, rng):
    x = rand(rng, (6, 40), lo=-1, hi=1)
    got = wg.fuse(lambda a, s: (1 + a * s).prod(1))(wg.asarray(x), 0.1)
    close(got, (1 + (x * np.float32(0.1)).astype(np.float64)).prod(1), 1e-5)
    xi, yi = rand(rng, (9, 31), "int32"), rand(rng, (9, 31), "int32")
    got = wg.fuse(lambda a, b: (a * b).sum(-1))(wg.asarray(xi), wg.asarray(yi))
    assert got.dtype == wg.int32
    np.testing.assert_array_equal(got.numpy(), (xi * yi).sum(-1))
    got = wg.fuse(lambda a, b: wg.min(a - b, axis=0))(wg.asarray(xi), wg.asarray(yi))
    np.testing.assert_array_equal(got.numpy(), (xi - yi).min(0))


def test_strided_views(dev, rng):
    x = rand(rng, (24, 17))
    tx = wg.asarray(x.T.copy()).T  # a transposed view
    y = rand(rng, (17,))
    got = wg.fuse(lambda a, b: (a * b).sum(0))(tx, wg.asarray(y))
    close(got, (x * y).astype(np.float64).sum(0), 1e-5, atol=1e-5)


def test_what_cannot_be_traced(dev, rng):
    x = wg.asarray(rand(rng, (4, 5)))
    with pytest.raises(TypeError):  # two reductions
        wg.fuse(lambda a: a.sum(-1).sum())(x)
    with pytest.raises(TypeError):  # the prologue's value after the reduction
        wg.fuse(lambda a: a.sum(-1) + a)(x)
    with pytest.raises(TypeError):  # several results
        wg.fuse(lambda a: (a.sum(-1), a.max(-1)))(x)
    with pytest.raises(wg.WgcError):  # an axis out of range
        wg.fuse(lambda a: a.sum(5))(x)
    with pytest.raises(wg.WgcError):  # mean of integers
        wg.fuse(lambda a: a.mean())(wg.asarray(rand(rng, (4,), "int32")))
