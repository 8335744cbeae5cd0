"""Element-wise operators against NumPy: every binary and unary op, every
dtype they take, broadcasting, strided views and Python scalars."""

import math

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand

FLOATS = ["float32", "float16"]
ALL = ["float32", "float16", "int32", "uint32"]


def int_div(a, b):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    q = np.where(b64 == 0, 0, np.trunc(a64 / np.where(b64 == 0, 1, b64)))
    return q.astype(a.dtype)


BINARY_REF = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b if a.dtype.kind == "f" else int_div(a, b),
    "pow": lambda a, b: np.power(np.abs(a), b),
    "maximum": np.maximum,
    "minimum": np.minimum,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}

_erf = np.vectorize(math.erf)
UNARY_REF = {  # name: (reference, input range)
    "neg": (np.negative, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "sqrt": (np.sqrt, (0.0, 5)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 5)),
    "sin": (np.sin, (-6, 6)),
    "cos": (np.cos, (-6, 6)),
    "tanh": (np.tanh, (-4, 4)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-6, 6)),
    "relu": (lambda x: np.maximum(x, 0), (-3, 3)),
    "gelu_erf": (lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), (-4, 4)),
    "gelu_tanh": (lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))), (-4, 4)),
    "silu": (lambda x: x / (1 + np.exp(-x)), (-6, 6)),
    "relu6": (lambda x: np.clip(x, 0, 6), (-3, 9)),
    "hardswish": (lambda x: x * np.clip(x + 3, 0, 6) / 6, (-5, 5)),
}


def test_every_operator_of_the_header_has_a_reference():
    assert set(wg.BINARY_OPS) == set(BINARY_REF)
    assert set(wg.UNARY_OPS) == set(UNARY_REF)


def binary_inputs(rng, op, dtype, a_shape, b_shape):
    a = rand(rng, a_shape, dtype)
    b = rand(rng, b_shape, dtype)
    if op == "div" and np.dtype(dtype).kind == "f":
        b = (np.sign(b) + (b == 0)) * (0.5 + np.abs(b)).astype(dtype)
    if op == "pow":
        a = np.abs(a).astype(dtype)
    if op in ("eq", "ne", "le", "ge") and a.shape == b.shape:
        b.reshape(-1)[::2] = a.reshape(-1)[::2]  # make some elements equal
    if op == "mul" and np.dtype(dtype).kind in "iu":
        a, b = a % 1000, b % 1000
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", sorted(BINARY_REF))
def test_binary_with_broadcasting(dev, rng, op, dtype):
    if op == "pow" and dtype not in FLOATS:
        with pytest.raises(wg.UnsupportedError):
            wg.binary(op, wg.asarray(rand(rng, 3, dtype)), wg.asarray(rand(rng, 3, dtype)))
        return
    for a_shape, b_shape in [((37,), (37,)), ((3, 1, 5), (4, 5)), ((2, 3, 4), ())]:
        a, b = binary_inputs(rng, op, dtype, a_shape, b_shape)
        out = wg.binary(op, wg.asarray(a, device=dev), wg.asarray(b, device=dev))
        expected = BINARY_REF[op](a.astype(np.float64) if dtype in FLOATS else a, b.astype(np.float64) if dtype in FLOATS else b)
        assert out.shape == np.broadcast_shapes(a_shape, b_shape)
        if op in ("eq", "ne", "lt", "le", "gt", "ge"):
            assert out.dtype == wg.uint32
            np.testing.assert_array_equal(out.numpy(), expected.astype(np.uint32))
        else:
            assert out.dtype.name == dtype
            assert_close(out, expected, dtype, scale=4 if op == "pow" else 1)


@pytest.mark.parametrize("dtype", ALL)
def test_binary_on_strided_and_reversed_views(rng, dtype):
    base_a = rand(rng, (6, 10), dtype)
    base_b = rand(rng, (10, 6), dtype)
    a, b = wg.asarray(base_a), wg.asarray(base_b)
    view_a = a[1::2, ::-3]  # (3, 4): strides (20, -3)
    view_b = b.T[2:5, 9:1:-2]  # transposed and reversed
    np.testing.assert_array_equal(view_a.numpy(), base_a[1::2, ::-3])
    np.testing.assert_array_equal(view_b.numpy(), base_b.T[2:5, 9:1:-2])
    assert_close(view_a + view_b, base_a[1::2, ::-3].astype(np.float64) + base_b.T[2:5, 9:1:-2], dtype)
    assert_close(view_a * 2, base_a[1::2, ::-3].astype(np.float64) * 2, dtype)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_python_operators_and_scalars(rng, dtype):
    a_np, b_np = rand(rng, (4, 5), dtype), rand(rng, (5,), dtype)
    b_np[b_np == 0] = 1
    a, b = wg.asarray(a_np), wg.asarray(b_np)
    f = np.float64 if dtype == "float32" else a_np.dtype.type
    A, B = a_np.astype(f), b_np.astype(f)
    assert_close(a + b, A + B, dtype)
    assert_close(a - b, A - B, dtype)
    assert_close(a * b, A * B, dtype)
    assert_close(3 - a, 3 - A, dtype)
    assert_close(2 * a + 1, 2 * A + 1, dtype)
    assert_close(-a, -A, dtype)
    assert_close(abs(a), np.abs(A), dtype)
    if dtype == "float32":
        assert_close(a / b, A / B, dtype)
        assert_close(1 / b, 1 / B, dtype)
        assert_close(abs(a) ** 2, np.abs(A) ** 2, dtype)
    np.testing.assert_array_equal((a > b).numpy(), (A > B).astype(np.uint32))
    np.testing.assert_array_equal((a <= 0).numpy(), (A <= 0).astype(np.uint32))
    np.testing.assert_array_equal((a == a).numpy(), np.ones(A.shape, np.uint32))
    c = a.copy()
    c += b
    assert_close(c, A + B, dtype)
    assert_close(a_np + b, A + B, dtype)  # ndarray <op> Tensor defers to the tensor


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY_REF))
def test_unary(rng, op, dtype):
    ref, (lo, hi) = UNARY_REF[op]
    x = rand(rng, (7, 33), dtype, lo, hi)
    out = wg.unary(op, wg.asarray(x)[:, 1:])
    expected = ref(x[:, 1:].astype(np.float64))
    assert_close(out, expected, dtype, scale=3)


@pytest.mark.parametrize("op", ["neg", "abs", "relu"])
def test_unary_on_integers(rng, op):
    x = rand(rng, (50,), "int32")
    np.testing.assert_array_equal(wg.unary(op, wg.asarray(x)).numpy(), UNARY_REF[op][0](x))


def test_unary_rejects_integers_for_float_functions(rng):
    with pytest.raises(wg.UnsupportedError):
        wg.exp(wg.asarray(rand(rng, 5, "int32")))


def test_gelu_names():
    x = wg.asarray(np.linspace(-3, 3, 13, dtype=np.float32))
    np.testing.assert_array_equal(wg.gelu(x).numpy(), wg.gelu_erf(x).numpy())
    np.testing.assert_array_equal(wg.gelu(x, approximate="tanh").numpy(), wg.gelu_tanh(x).numpy())


@pytest.mark.parametrize("dtype", FLOATS)
def test_leaky_relu_clamp_fma_where(rng, dtype):
    x_np = rand(rng, (5, 8), dtype)
    y_np = rand(rng, (8,), dtype)
    z_np = rand(rng, (5, 1), dtype)
    x, y, z = wg.asarray(x_np), wg.asarray(y_np), wg.asarray(z_np)
    X, Y, Z = (v.astype(np.float64) for v in (x_np, y_np, z_np))
    assert_close(wg.leaky_relu(x, 0.1), np.where(X >= 0, X, 0.1 * X), dtype)
    assert_close(wg.clamp(x, -0.5, 0.75), np.clip(X, -0.5, 0.75), dtype)
    assert_close(wg.fma(x, y, z), X * Y + Z, dtype, scale=2)
    assert_close(wg.where(x > y, x, z), np.where(X > Y, X, Z), dtype)


def test_clamp_and_where_on_integers(rng):
    a = rand(rng, (20,), "int32")
    t = wg.asarray(a)
    np.testing.assert_array_equal(wg.clamp(t, -10, 10).numpy(), np.clip(a, -10, 10))
    np.testing.assert_array_equal(wg.where(t > 0, t, 0).numpy(), np.where(a > 0, a, 0))
