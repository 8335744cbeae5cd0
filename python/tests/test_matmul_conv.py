"""Matrix products, convolution and pooling against NumPy."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand


@pytest.mark.parametrize("a_shape,b_shape", [((5, 7), (7, 3)), ((2, 1, 4, 6), (3, 6, 5)), ((6,), (6, 4)), ((3, 6), (6,)),
                                             ((9,), (9,)), ((33, 65), (65, 17))])
def test_matmul_shapes(rng, a_shape, b_shape):
    a, b = rand(rng, a_shape), rand(rng, b_shape)
    out = wg.asarray(a) @ wg.asarray(b)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert out.shape == np.shape(expected)
    assert_close(out, expected, scale=10)


def test_matmul_of_transposed_views(rng):
    a, b = rand(rng, (8, 5)), rand(rng, (7, 8))
    out = wg.asarray(a).T @ wg.asarray(b).T
    assert_close(out, a.T.astype(np.float64) @ b.T.astype(np.float64), scale=10)
    assert_close(wg.asarray(a)[::2].mT @ wg.asarray(a)[1::2], a[::2].T.astype(np.float64) @ a[1::2], scale=10)


def test_matmul_f16(rng):
    a, b = rand(rng, (16, 24), "float16"), rand(rng, (24, 8), "float16")
    expected = a.astype(np.float64) @ b.astype(np.float64)
    out16 = wg.matmul(wg.asarray(a), wg.asarray(b))
    out32 = wg.matmul(wg.asarray(a), wg.asarray(b), out_dtype="float32")
    assert out16.dtype == wg.float16 and out32.dtype == wg.float32
    assert_close(out16, expected, "float16", scale=10)
    assert_close(out32, expected, "float32", scale=10)


def test_gemm_alpha_beta_and_transposes(rng):
    a, b, c = rand(rng, (6, 4)), rand(rng, (5, 6)), rand(rng, (4, 5))
    ct = wg.asarray(c)
    out = wg.gemm(wg.asarray(a), wg.asarray(b), ct, alpha=2.0, beta=0.5, transpose_a=True, transpose_b=True)
    assert out is ct
    assert_close(ct, 2 * a.T.astype(np.float64) @ b.T + 0.5 * c, scale=10)
    assert_close(wg.gemm(wg.asarray(a), wg.asarray(b).T.contiguous().T, transpose_a=True, transpose_b=True),
                 a.T.astype(np.float64) @ b.T, scale=10)


def test_explain_gemm_names_the_route_and_records_nothing(rng):
    a, b = wg.asarray(rand(rng, (16, 64))), wg.asarray(rand(rng, (64, 1024)))
    c = wg.asarray(np.full((16, 1024), 3.0, np.float32))
    line = wg.explain_gemm(a, b, c, beta=1.0)
    assert line.startswith("route rows rt=16") and " because " in line and "m=16 n=1024 k=64" in line
    np.testing.assert_array_equal(c.numpy(), np.full((16, 1024), 3.0, np.float32))
    assert wg.explain_gemm(wg.asarray(rand(rng, (1, 64))), b).startswith("route gemv ")
    assert wg.explain_gemm(a, b.T, transpose_b=True).startswith("route rows")
    assert "because" in wg.explain_gemm(wg.asarray(rand(rng, (100, 70))), wg.asarray(rand(rng, (70, 90))))
    with pytest.raises(wg.ShapeMismatchError):
        wg.explain_gemm(a, wg.asarray(rand(rng, (63, 8))))
    with pytest.raises(wg.ShapeMismatchError):
        wg.explain_gemm(a, b, wg.asarray(np.zeros((16, 1000), np.float32)))


def test_matmul_rejects_integers_and_bad_shapes(rng):
    with pytest.raises(wg.UnsupportedError):
        wg.asarray(np.ones((2, 2), np.int32)) @ wg.asarray(np.ones((2, 2), np.int32))
    with pytest.raises(wg.ShapeMismatchError):
        wg.asarray(rand(rng, (2, 3))) @ wg.asarray(rand(rng, (4, 2)))


def conv2d_ref(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dil:i * dil + stride * oh:stride, j * dil:j * dil + stride * ow:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch[:, :, :oh, :ow], w[g * og:(g + 1) * og, :, i, j])
    return out + (b[None, :, None, None] if b is not None else 0)


@pytest.mark.parametrize("stride,pad,dil,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2), (1, 1, 1, 4)])
def test_conv2d(rng, stride, pad, dil, groups):
    x = rand(rng, (2, 4, 9, 11))
    w = rand(rng, (4, 4 // groups, 3, 3))
    b = rand(rng, (4,))
    out = wg.conv2d(wg.asarray(x), wg.asarray(w), wg.asarray(b), stride=stride, padding=pad, dilation=dil, groups=groups)
    expected = conv2d_ref(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride, pad, dil, groups)
    assert out.shape == expected.shape
    assert_close(out, expected, scale=10)


def pool_ref(x, k, s, p, kind, count_include_pad=True):
    n, c, h, w = x.shape
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    ones = np.pad(np.ones((h, w)), p)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                div = k * k if count_include_pad else ones[i * s:i * s + k, j * s:j * s + k].sum()
                out[:, :, i, j] = win.sum(axis=(2, 3)) / div
    return out


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_pooling(rng, dtype):
    x = rand(rng, (2, 3, 8, 7), dtype)
    X = x.astype(np.float64)
    t = wg.asarray(x)
    assert_close(wg.max_pool2d(t, 2), pool_ref(X, 2, 2, 0, "max"), dtype)
    assert_close(wg.max_pool2d(t, 3, stride=2, padding=1), pool_ref(X, 3, 2, 1, "max"), dtype)
    assert_close(wg.avg_pool2d(t, 3, stride=1, padding=1), pool_ref(X, 3, 1, 1, "avg"), dtype)
    assert_close(wg.avg_pool2d(t, 3, stride=2, padding=1, count_include_pad=False),
                 pool_ref(X, 3, 2, 1, "avg", count_include_pad=False), dtype)
    assert_close(wg.global_avg_pool2d(t), X.mean(axis=(2, 3), keepdims=True), dtype)
