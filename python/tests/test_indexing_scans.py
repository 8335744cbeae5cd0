"""index_select, gather, embedding, concat, rope, topk and cumsum against NumPy."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_index_select_gather_embedding(rng, dtype):
    x = rand(rng, (5, 6, 7), dtype)
    idx = np.array([4, 0, -1, 2, 9], np.int32)  # -1 and 9 are out of range: 0
    t, ti = wg.asarray(x), wg.asarray(idx)
    ok = (idx >= 0) & (idx < 6)
    expected = np.where(ok[None, :, None], x[:, np.clip(idx, 0, 5), :], 0)
    np.testing.assert_array_equal(wg.index_select(t, 1, ti).numpy(), expected)
    g = rng.integers(0, 7, size=(5, 6, 3)).astype(np.int32)
    np.testing.assert_array_equal(wg.gather(t, 2, wg.asarray(g)).numpy(), np.take_along_axis(x, g, 2))
    table = rand(rng, (10, 8), dtype)
    rows = rng.integers(0, 10, size=(2, 3)).astype(np.uint32)
    np.testing.assert_array_equal(wg.embedding(wg.asarray(rows), wg.asarray(table)).numpy(), table[rows])


def test_concat_and_slices(rng):
    a, b = rand(rng, (3, 4)), rand(rng, (3, 2))
    np.testing.assert_array_equal(wg.concat([wg.asarray(a), wg.asarray(b)], axis=1).numpy(), np.concatenate([a, b], 1))
    t = wg.asarray(a)
    np.testing.assert_array_equal(wg.concat([t[1:], t[:1]], axis=-2).numpy(), np.concatenate([a[1:], a[:1]], 0))
    with pytest.raises(wg.WgcError):
        wg.concat([wg.asarray(a), wg.asarray(b)], axis=0)


def _rope_reference(x, seq_axis, base, offset, interleaved):
    d = x.shape[-1]
    pos = offset + np.arange(x.shape[seq_axis], dtype=np.float64)
    shape = [1] * (x.ndim - 1)
    shape[seq_axis] = -1
    ang = pos.reshape(shape)[..., None] * base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    c, s = np.cos(ang), np.sin(ang)
    x = x.astype(np.float64)
    a, b = (x[..., 0::2], x[..., 1::2]) if interleaved else (x[..., : d // 2], x[..., d // 2:])
    ra, rb = a * c - b * s, a * s + b * c
    out = np.empty_like(x)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = ra, rb
    else:
        out[..., : d // 2], out[..., d // 2:] = ra, rb
    return out


@pytest.mark.parametrize("layout", ["half_split", "interleaved"])
def test_rope(rng, layout):
    x = rand(rng, (2, 5, 3, 8))
    got = wg.rope(wg.asarray(x), seq_axis=1, base=10000.0, layout=layout, position_offset=7)
    assert_close(got, _rope_reference(x, 1, 10000.0, 7, layout == "interleaved"), scale=2)
    t = wg.asarray(x)
    wg.rope(t, seq_axis=1, layout=layout, position_offset=7, out=t)  # in place
    assert_close(t, _rope_reference(x, 1, 10000.0, 7, layout == "interleaved"), scale=2)


@pytest.mark.parametrize("largest", [True, False])
def test_topk(rng, largest):
    x = rand(rng, (3, 3000))
    x[1, 17] = np.nan
    values, indices = wg.topk(wg.asarray(x), 5, largest=largest)
    # NaN is the largest value; a stable sort breaks ties by the lower index.
    key = np.where(np.isnan(x), -np.inf, -x) if largest else np.where(np.isnan(x), np.inf, x)
    order = np.argsort(key, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(indices.numpy(), order)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, order, 1))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_cumsum(rng, dtype):
    x = rand(rng, (4, 3000), dtype)
    for axis in (0, 1):
        expected = np.cumsum(x.astype(np.float64), axis=axis)
        got = wg.cumsum(wg.asarray(x), axis).numpy().astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-3)
