"""Scaled dot-product attention (``wgc_op_attention``), as PyTorch's
``torch.nn.functional.scaled_dot_product_attention``."""

from __future__ import annotations

from typing import Optional, Tuple, Union

from ._ffi import lib
from ._structs import enum_values, new_sized
from .errors import check
from .ops import _c, _out, _stream
from .tensor import Tensor, empty

CAUSAL: dict = enum_values("WGC_ATTENTION_CAUSAL_")

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Optional[Tensor] = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False, *, causal_alignment: str = "top_left",
                                 window: int = 0, kv_len: int = 0, kv_lens: Optional[Tensor] = None,
                                 return_lse: bool = False, out: Optional[Tensor] = None
                                 ) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """``softmax(scale * q k^T + mask) v`` without materialising the scores.

    q (..., Hq, Sq, D), k and v (..., Hkv, Skv, D). As PyTorch: ``is_causal``
    aligns the causal mask to the top-left (query i sees keys j <= i);
    ``causal_alignment="bottom_right"`` aligns it to the last valid key
    (decode, chunked prefill). ``attn_mask``: of q's dtype (added) or
    int32/uint32 (boolean, nonzero takes part), broadcast to (..., Hq, Sq, Skv).
    ``enable_gqa`` must be set when Hq != Hkv (as PyTorch). Extras:
    ``window`` (sliding window), ``kv_len`` (valid keys of a longer cache),
    ``kv_lens`` (int32 per batch entry), ``return_lse`` (also the f32
    log-sum-exp, shaped (..., Hq, Sq)). Rows no key reaches give 0 (as
    PyTorch 2.5+). Dropout is not supported."""
    if dropout_p != 0.0:
        raise ValueError("scaled_dot_product_attention: dropout is not supported")
    if q.ndim >= 3 and k.ndim >= 3 and q.shape[-3] != k.shape[-3] and not enable_gqa:
        raise ValueError(f"q has {q.shape[-3]} heads and k {k.shape[-3]}: pass enable_gqa=True")
    d = new_sized("WgcAttentionDesc")
    if is_causal:
        d.causal = CAUSAL["top_left" if causal_alignment == "top_left" else "bottom_right"]
    d.scale = 0.0 if scale is None else float(scale)
    d.window, d.kv_len = window, kv_len
    o = _out(out, q.shape, q.dtype, q)
    lse = empty(tuple(q.shape[:-1]), "float32", q.device) if return_lse else None
    check(lib.wgc_op_attention(_stream(q), _c(q), _c(k), _c(v), _c(attn_mask), _c(kv_lens), d, _c(o), _c(lse)))
    return (o, lse) if return_lse else o
