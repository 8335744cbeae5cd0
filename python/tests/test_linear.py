"""wg.linear and wg.gemm_epilogue (wgc_op_gemm_epilogue) against NumPy in
float64: bias, scale, every activation, a residual before or after it."""
from math import erf, sqrt

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand

_erf = np.vectorize(erf)
ACTS = {
    "none": lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "relu6": lambda v: np.clip(v, 0, 6),
    "hardswish": lambda v: v * np.clip(v + 3, 0, 6) / 6,
    "gelu": lambda v: 0.5 * v * (1 + _erf(v / sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))),
    "silu": lambda v: v / (1 + np.exp(-v)),
    "tanh": np.tanh,
}


@pytest.mark.parametrize("act", sorted(ACTS))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_linear_every_activation(rng, act, dtype):
    x, w, b = rand(rng, (67, 33), dtype, -1, 1), rand(rng, (70, 33), dtype, -1, 1), rand(rng, (70,), dtype)
    y = wg.linear(wg.asarray(x), wg.asarray(w), wg.asarray(b), activation=act)
    ref = ACTS[act](x.astype(np.float64) @ w.astype(np.float64).T + b)
    assert_close(y, ref, dtype, scale=4)


@pytest.mark.parametrize("after", [False, True])
def test_gemm_epilogue_scale_bias_residual(rng, after):
    a, b = rand(rng, (3, 20, 17)), rand(rng, (17, 66))
    scale, bias, res = rand(rng, (66,), lo=0.5), rand(rng, (66,)), rand(rng, (3, 20, 66))
    y = wg.gemm_epilogue(wg.asarray(a), wg.asarray(b), bias=wg.asarray(bias), scale=wg.asarray(scale),
                         residual=wg.asarray(res), activation="silu", residual_after=after, alpha=0.5)
    v = 0.5 * (a.astype(np.float64) @ b) * scale + bias
    ref = ACTS["silu"](v) + res if after else ACTS["silu"](v + res)
    assert_close(y, ref, scale=10)


def test_linear_of_a_vector_and_explain(rng):
    x, w = rand(rng, (40,)), rand(rng, (30, 40))
    y = wg.linear(wg.asarray(x), wg.asarray(w), activation="relu")
    assert y.shape == (30,)
    assert_close(y, np.maximum(w.astype(np.float64) @ x, 0), scale=10)
    line = wg.explain_gemm_epilogue(wg.asarray(rand(rng, (64, 40))), wg.asarray(w), transpose_b=True,
                                    activation="gelu")
    assert line.startswith("route ") and "epilogue" in line


def test_misuse_raises(rng):
    a, b = wg.asarray(rand(rng, (8, 6))), wg.asarray(rand(rng, (6, 12)))
    with pytest.raises(wg.WgcError):
        wg.gemm_epilogue(a, b, bias=wg.asarray(rand(rng, (11,))))
    with pytest.raises(wg.WgcError):
        wg.gemm_epilogue(a, b, activation=99)
