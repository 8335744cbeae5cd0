"""Reductions, softmax and normalisation against NumPy (float64 references)."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand

AXES = [None, 0, -1, (0, 2), (1,)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint32"])
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_reduce_over_axes(rng, op, dtype):
    x = rand(rng, (4, 6, 5), dtype, 0.9, 1.1) if op == "prod" and dtype in ("float32", "float16") else rand(rng, (4, 6, 5), dtype)
    if op == "prod" and dtype in ("int32", "uint32"):
        x = (x % 3).astype(dtype)
    t = wg.asarray(x)
    ref = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[op]
    for axis in AXES:
        for keepdims in (False, True):
            out = wg.reduce(op, t, axis, keepdims)
            if dtype in ("int32", "uint32"):
                expected = ref(x, axis=axis, keepdims=keepdims, **({"dtype": x.dtype} if op in ("sum", "prod") else {}))
                np.testing.assert_array_equal(out.numpy(), expected)
            else:
                expected = ref(x.astype(np.float64), axis=axis, keepdims=keepdims)
                assert_close(out, expected, dtype, scale=5)
            assert out.shape == np.shape(expected)


# Every reduce op of the header with its NumPy reference (float64 in,
# argmax/argmin give indices).
REDUCE_REF = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
              "argmax": np.argmax, "argmin": np.argmin}


def test_every_reduce_op_of_the_header_has_a_reference():
    assert set(wg.REDUCE_OPS) == set(REDUCE_REF)


@pytest.mark.parametrize("op", sorted(REDUCE_REF))
def test_every_reduce_op_along_one_axis(rng, op):
    x = rand(rng, (5, 33), "float32", 0.9, 1.1)
    X = x.astype(np.float64)
    out = wg.reduce(op, wg.asarray(x), 1)
    if op in ("argmax", "argmin"):
        np.testing.assert_array_equal(out.numpy(), REDUCE_REF[op](X, axis=1))
    else:
        assert_close(out, REDUCE_REF[op](X, axis=1), "float32", scale=5)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_mean_var_std(rng, dtype):
    x = rand(rng, (3, 50, 7), dtype)
    t = wg.asarray(x)
    X = x.astype(np.float64)
    for axis in AXES:
        assert_close(wg.mean(t, axis), X.mean(axis=axis), dtype)
        for ddof in (0, 1):
            assert_close(wg.var(t, axis, ddof=ddof), X.var(axis=axis, ddof=ddof), dtype, scale=5)
            assert_close(t.std(axis, ddof=ddof, keepdims=True), X.std(axis=axis, ddof=ddof, keepdims=True), dtype, scale=5)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint32"])
def test_argmax_argmin(rng, dtype):
    x = rng.permutation(60).reshape(3, 4, 5).astype(dtype)  # distinct values
    t = wg.asarray(x)
    for axis in (None, 0, 1, -1):
        assert t.argmax(axis).dtype == wg.int32
        np.testing.assert_array_equal(t.argmax(axis).numpy(), np.argmax(x, axis=axis))
        np.testing.assert_array_equal(wg.argmin(t, axis).numpy(), np.argmin(x, axis=axis))


def test_reductions_of_strided_views(rng):
    x = rand(rng, (8, 9, 10))
    view = wg.asarray(x)[::2, 1:, ::-3].T
    expected = x[::2, 1:, ::-3].T.astype(np.float64)
    assert_close(view.sum(axis=(0, 2)), expected.sum(axis=(0, 2)))
    assert_close(view.max(axis=1), expected.max(axis=1))


def test_mean_of_integers_is_unsupported():
    with pytest.raises(wg.UnsupportedError):
        wg.mean(wg.asarray(np.arange(5, dtype=np.int32)))


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax_and_log_softmax_on_any_axis(rng, dtype):
    x = rand(rng, (3, 17, 6), dtype, -5, 5)
    t = wg.asarray(x)
    X = x.astype(np.float64)
    for axis in (-1, 0, 1):
        assert_close(wg.softmax(t, axis), softmax_ref(X, axis), dtype)
        assert_close(wg.log_softmax(t, axis), np.log(softmax_ref(X, axis)), dtype, scale=3)
    assert_close(wg.softmax(t.transpose(2, 0, 1)), softmax_ref(X.transpose(2, 0, 1), -1), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_layer_rms_and_batch_norm(rng, dtype):
    x = rand(rng, (4, 3, 8), dtype)
    w, b = rand(rng, (3, 8), dtype), rand(rng, (3, 8), dtype)
    X, W, B = (v.astype(np.float64) for v in (x, w, b))
    t = wg.asarray(x)
    mu = X.mean(axis=(1, 2), keepdims=True)
    var = X.var(axis=(1, 2), keepdims=True)
    assert_close(wg.layer_norm(t, (3, 8), wg.asarray(w), wg.asarray(b), eps=1e-5), (X - mu) / np.sqrt(var + 1e-5) * W + B,
                 dtype, scale=10)
    assert_close(wg.layer_norm(t, 8), (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 1e-5), dtype,
                 scale=10)
    ms = (X**2).mean(axis=-1, keepdims=True)
    assert_close(wg.rms_norm(t, 8, wg.asarray(w[0]), eps=1e-6), X / np.sqrt(ms + 1e-6) * W[0], dtype, scale=10)
    mean, varc = rand(rng, (3,), dtype), rand(rng, (3,), dtype, 0.5, 2)
    gamma, beta = rand(rng, (3,), dtype), rand(rng, (3,), dtype)
    M, V, G, Bb = (v.astype(np.float64)[None, :, None] for v in (mean, varc, gamma, beta))
    out = wg.batch_norm(t, wg.asarray(mean), wg.asarray(varc), wg.asarray(gamma), wg.asarray(beta), eps=1e-5)
    assert_close(out, (X - M) / np.sqrt(V + 1e-5) * G + Bb, dtype, scale=10)
