"""wg.conv2d_bn_act against NumPy in float64: convolution, inference batch
norm, activation; the fold kept and reused."""
import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand
from test_matmul_conv import conv2d_ref

ACTS = {
    "none": lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "relu6": lambda v: np.clip(v, 0, 6),
    "hardswish": lambda v: v * np.clip(v + 3, 0, 6) / 6,
    "silu": lambda v: v / (1 + np.exp(-v)),
    "tanh": np.tanh,
}


def reference(x, w, b, mean, var, gamma, beta, eps, act, stride, pad, groups):
    y = conv2d_ref(x, w, b, stride, pad, 1, groups)
    y = (y - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + eps)
    return ACTS[act](y * gamma[None, :, None, None] + beta[None, :, None, None])


@pytest.mark.parametrize("act,stride,pad,groups", [("relu", 1, 1, 1), ("relu6", 2, 1, 5), ("hardswish", 1, 0, 1),
                                                    ("none", 2, 2, 1), ("silu", 1, 1, 1), ("tanh", 1, 0, 5)])
def test_conv2d_bn_act(rng, act, stride, pad, groups):
    x = rand(rng, (2, 5, 9, 7))
    w = rand(rng, (5, 5 // groups, 3, 3))
    b = rand(rng, (5,))
    mean, beta = rand(rng, (5,)), rand(rng, (5,))
    var = (0.5 + rng.random(5)).astype(np.float32)
    gamma = (0.5 + rng.random(5)).astype(np.float32)
    t = [wg.asarray(v) for v in (x, w, b, mean, var, gamma, beta)]
    fw, fb = wg.empty(w.shape, wg.float32), wg.empty((5,), wg.float32)
    out = wg.conv2d_bn_act(t[0], t[1], t[3], t[4], t[5], t[6], bias=t[2], activation=act, stride=stride,
                           padding=pad, groups=groups, folded_weight=fw, folded_bias=fb)
    f64 = [v.astype(np.float64) for v in (x, w, b, mean, var, gamma, beta)]
    expected = reference(*f64, 1e-5, act, stride, pad, groups)
    assert out.shape == expected.shape
    assert_close(out, expected, scale=10)
    # Again with the fold kept: the statistics are not passed.
    x2 = rand(rng, x.shape)
    again = wg.conv2d_bn_act(wg.asarray(x2), None, None, None, activation=act, stride=stride, padding=pad,
                             groups=groups, folded_weight=fw, folded_bias=fb, folded=True)
    f64[0] = x2.astype(np.float64)
    assert_close(again, reference(*f64, 1e-5, act, stride, pad, groups), scale=10)


def test_conv2d_bn_act_rejects_unknown_activation(rng):
    x, w, v = wg.asarray(rand(rng, (1, 2, 4, 4))), wg.asarray(rand(rng, (2, 2, 1, 1))), wg.asarray(rand(rng, (2,)))
    with pytest.raises(wg.InvalidArgumentError):
        wg.conv2d_bn_act(x, w, v, v, activation=max(wg.ops.ACTIVATIONS.values()) + 1)


@pytest.mark.parametrize("k,nhwc,act", [(1, True, "relu"), (1, True, "none"), (3, False, "relu6")])
def test_conv2d_bn_act_residual(rng, k, nhwc, act):
    n, c, h, o = 2, 6, 5, 8
    x, w, b = rand(rng, (n, c, h, h)), rand(rng, (o, c, k, k)), rand(rng, (o,))
    mean, beta = rand(rng, (o,)), rand(rng, (o,))
    var = (0.5 + rng.random(o)).astype(np.float32)
    gamma = (0.5 + rng.random(o)).astype(np.float32)
    r = rand(rng, (n, o, h, h))
    if nhwc:  # channels-last views of the input and output
        tx = wg.asarray(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).transpose(0, 3, 1, 2)
        out = wg.empty((n, h, h, o), wg.float32).transpose(0, 3, 1, 2)
    else:
        tx, out = wg.asarray(x), None
    t = [wg.asarray(v) for v in (w, b, mean, var, gamma, beta)]
    y = wg.conv2d_bn_act(tx, t[0], t[2], t[3], t[4], t[5], bias=t[1], activation=act, padding=k // 2, out=out,
                         residual=wg.asarray(r))
    f64 = [v.astype(np.float64) for v in (x, w, b, mean, var, gamma, beta)]
    pre = reference(*f64, 1e-5, "none", 1, k // 2, 1)
    assert_close(y, ACTS[act](pre + r.astype(np.float64)), scale=10)
    # The residual may not be the output itself.
    with pytest.raises(wg.InvalidArgumentError):
        wg.conv2d_bn_act(tx, t[0], t[2], t[3], activation=act, padding=k // 2, out=y, residual=y)
