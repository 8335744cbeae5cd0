"""wg.explain_conv2d: the route wg.conv2d would take and why, without
recording anything; bad arguments raise as wg.conv2d does."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import rand


def test_names_the_route_and_why(rng):
    x, w = wg.asarray(rand(rng, (2, 5, 9, 9))), wg.asarray(rand(rng, (7, 5, 3, 3)))
    text = wg.explain_conv2d(x, w, padding=1)
    assert text.startswith("route implicit_gemm ("), text
    assert "because f32" in text and "declined: gemm_1x1: not a 1x1" in text, text
    dw = wg.asarray(rand(rng, (5, 1, 3, 3)))
    assert wg.explain_conv2d(x, dw, padding=1, groups=5).startswith("route depthwise (")
    x16, w1 = wg.asarray(rand(rng, (1, 8, 16, 16))), wg.asarray(rand(rng, (4, 8, 1, 1)))
    assert wg.explain_conv2d(x16, w1).startswith("route gemm_1x1 because")
    x15 = wg.asarray(rand(rng, (1, 8, 15, 15)))
    assert "gemm_1x1: 225 pixels per image, under 256" in wg.explain_conv2d(x15, w1)


def test_records_nothing(rng):
    x, w = wg.asarray(rand(rng, (1, 3, 6, 6))), wg.asarray(rand(rng, (2, 3, 3, 3)))
    before = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    out = wg.asarray(before)
    assert wg.explain_conv2d(x, w, out=out).startswith("route ")
    np.testing.assert_array_equal(out.numpy(), before)


def test_bad_arguments_raise_as_conv2d_does(rng):
    x, w = wg.asarray(rand(rng, (1, 4, 6, 6))), wg.asarray(rand(rng, (2, 4, 3, 3)))
    for kwargs, error in [({"groups": 3}, wg.ShapeMismatchError),
                          ({"out": wg.zeros((1, 2, 5, 4))}, wg.ShapeMismatchError),
                          ({"bias": wg.zeros((3,))}, wg.ShapeMismatchError)]:
        with pytest.raises(error):
            wg.conv2d(x, w, **kwargs)
        with pytest.raises(error):
            wg.explain_conv2d(x, w, **kwargs)
    with pytest.raises(wg.DtypeMismatchError):
        wg.explain_conv2d(x, wg.asarray(rand(rng, (2, 4, 3, 3), "float16")))
