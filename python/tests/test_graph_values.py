"""Replay values from Python: built-in operators' scalar arguments (the
scalar of ``x * s``, RoPE's position offset) changed per replay, checked
against the eager call and float64 references; misuse raises."""

import numpy as np
import pytest

import wgcompute as wg


def rope_ref(x, pos0):
    """Half-split RoPE of x (S, H, D) with positions pos0, pos0 + 1, ..."""
    s, _, d = x.shape
    i = np.arange(d // 2)
    ang = (pos0 + np.arange(s))[:, None, None] * 10000.0 ** (-2.0 * i / d)
    a, b = x[..., : d // 2].astype(np.float64), x[..., d // 2:].astype(np.float64)
    return np.concatenate([a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)], axis=-1)


def test_scalar_and_position_per_replay():
    rng = np.random.default_rng(3)
    xs = rng.uniform(-2, 2, 1031).astype(np.float32)
    qs = rng.uniform(-1, 1, (3, 2, 16)).astype(np.float32)
    x, q = wg.asarray(xs), wg.asarray(qs)
    with wg.capture() as g:
        first = g.next_value()
        y = x * 3.0
        at = g.next_value()
        r = wg.rope(q, seq_axis=0, position_offset=5)
    assert (first, at) == (0, 1)
    assert g.counts()["values"] == 2
    assert g.value_info(at) == (5.0, 0.0, 2.0 ** 32 - 3)

    g.replay()
    np.testing.assert_array_equal(y.numpy(), (x * 3.0).numpy())
    np.testing.assert_allclose(r.numpy(), rope_ref(qs, 5), rtol=1e-5, atol=2e-5)
    for s, pos in ((-0.25, 0), (7.5, 77), (3.0, 5)):
        g.replay(values={first: s, at: pos})
        np.testing.assert_array_equal(y.numpy(), (x * s).numpy())
        np.testing.assert_allclose(y.numpy(), xs.astype(np.float64) * s, rtol=1e-6)
        np.testing.assert_allclose(r.numpy(), rope_ref(qs, pos), rtol=1e-5, atol=2e-5)

    with pytest.raises(wg.OutOfRangeError):
        g.replay(values={at: 2.5})
    with pytest.raises(wg.OutOfRangeError):
        g.replay(values={at: -1})
    with pytest.raises(wg.InvalidArgumentError):
        g.replay(values={at: float("nan")})
    with pytest.raises(wg.OutOfRangeError):
        g.replay(values={2: 1.0})
    with pytest.raises(wg.OutOfRangeError):
        g.value_info(2)
    # Refused replays recorded nothing: the last good one stands.
    np.testing.assert_allclose(r.numpy(), rope_ref(qs, 5), rtol=1e-5, atol=2e-5)
    g.close()


def test_next_value_outside_a_capture():
    with pytest.raises(wg.InvalidOperationError):
        wg.Graph(wg.current_stream(), None).next_value()
