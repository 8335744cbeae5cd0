"""scaled_dot_product_attention against a float64 NumPy evaluation of PyTorch's formula."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import rand


def _sdpa(q, k, v, mask=None, causal=None, scale=None):
    """float64 SDPA; causal: None, "top_left" or "bottom_right"; rows with no key give 0."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    g = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, g, axis=-3), np.repeat(v, g, axis=-3)
    sq, skv = q.shape[-2], k.shape[-2]
    s = q @ np.swapaxes(k, -1, -2) * (scale if scale is not None else 1 / np.sqrt(q.shape[-1]))
    if mask is not None:
        s = s + (np.where(mask != 0, 0.0, -np.inf) if mask.dtype.kind in "iu" else mask.astype(np.float64))
    if causal:
        shift = 0 if causal == "top_left" else skv - sq
        allowed = np.arange(skv)[None, :] <= np.arange(sq)[:, None] + shift
        s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.where(np.isneginf(s), 0.0, np.exp(s - np.where(np.isneginf(m), 0, m)))
    l = p.sum(-1, keepdims=True)
    return np.where(l == 0, 0.0, (p @ v) / np.where(l == 0, 1, l)), np.where(l[..., 0] == 0, -np.inf, np.log(np.where(l[..., 0] == 0, 1, l[..., 0])) + m[..., 0])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_sdpa_gqa_causal_and_lse(rng, dtype):
    q, k, v = rand(rng, (2, 6, 7, 40), dtype, -1, 1), rand(rng, (2, 2, 19, 40), dtype, -1, 1), rand(rng, (2, 2, 19, 40), dtype, -1, 1)
    for align in ("top_left", "bottom_right"):
        out, lse = wg.scaled_dot_product_attention(wg.asarray(q), wg.asarray(k), wg.asarray(v), is_causal=True,
                                                   enable_gqa=True, causal_alignment=align, return_lse=True)
        ref, ref_lse = _sdpa(q, k, v, causal=align)
        tol = 1e-5 if dtype == "float32" else 2e-3
        np.testing.assert_allclose(out.numpy().astype(np.float64), ref, rtol=tol, atol=tol)
        np.testing.assert_allclose(lse.numpy(), ref_lse, rtol=1e-5, atol=1e-5)


def test_sdpa_masks_views_and_empty_rows(rng):
    # Tokens-first storage (B, S, H, D) passed as (B, H, S, D) views.
    q = rand(rng, (2, 9, 3, 16), "float32", -1, 1)
    k = rand(rng, (2, 30, 3, 16), "float32", -1, 1)
    v = rand(rng, (2, 30, 3, 16), "float32", -1, 1)
    qt, kt, vt = (wg.asarray(a).transpose(0, 2, 1, 3) for a in (q, k, v))
    qh, kh, vh = (a.transpose(0, 2, 1, 3) for a in (q, k, v))
    add = rand(rng, (9, 30), "float32", -2, 2)
    add[2] = -np.inf  # a row no key reaches: 0, as PyTorch 2.5+
    got = wg.scaled_dot_product_attention(qt, kt, vt, attn_mask=wg.asarray(add), scale=0.3)
    np.testing.assert_allclose(got.numpy(), _sdpa(qh, kh, vh, mask=add, scale=0.3)[0], rtol=1e-5, atol=1e-5)
    assert np.all(got.numpy()[:, :, 2] == 0)
    keep = (rng.uniform(size=(2, 1, 1, 30)) > 0.3).astype(np.uint32)
    got = wg.scaled_dot_product_attention(qt, kt, vt, attn_mask=wg.asarray(keep))
    np.testing.assert_allclose(got.numpy(), _sdpa(qh, kh, vh, mask=keep)[0], rtol=1e-5, atol=1e-5)


def test_sdpa_valid_length_and_errors(rng):
    q, k, v = rand(rng, (1, 2, 1, 32), "float32", -1, 1), rand(rng, (1, 2, 500, 32), "float32", -1, 1), rand(rng, (1, 2, 500, 32), "float32", -1, 1)
    got = wg.scaled_dot_product_attention(wg.asarray(q), wg.asarray(k), wg.asarray(v), kv_len=321)
    np.testing.assert_allclose(got.numpy(), _sdpa(q, k[:, :, :321], v[:, :, :321])[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        wg.scaled_dot_product_attention(wg.asarray(rand(rng, (1, 4, 1, 32))), wg.asarray(k), wg.asarray(v))
    with pytest.raises(wg.WgcError):
        wg.scaled_dot_product_attention(wg.asarray(q), wg.asarray(k[..., :16].copy()), wg.asarray(v))
