//! Scaled dot-product attention as C sees it.

use super::boundary::{borrow, run};
use super::sized::{read_sized, sized_struct};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Result;
use crate::ops::attention::{self, Attention, AttentionArgs, AttentionCausal};
use crate::ops::tensor::Tensor;

/// Settings of `wgc_op_attention`. Zero-initialise (no causal mask, scale
/// 1/sqrt(D), no window, every key), set `struct_size` to
/// `sizeof(WgcAttentionDesc)`, then what differs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WgcAttentionDesc {
    pub struct_size: u32,
    /// A `WgcAttentionCausal` value.
    pub causal: u32,
    /// Multiplies q.k; 0: 1/sqrt(D). Finite.
    pub scale: f32,
    /// Sliding window: 0 for none; else the query at position i sees only
    /// keys j > i - window (with a causal mask: the `window` keys ending at
    /// its own position). Positions as for the causal mask.
    pub window: u32,
    /// Valid keys: 0 for all Skv; else only keys below `kv_len` (at most
    /// Skv) take part, as if k and v were cut to that length: a KV cache
    /// allocated for Skv tokens and filled with `kv_len` needs no copy.
    pub kv_len: u32,
}

sized_struct!(WgcAttentionDesc { causal, scale, window, kv_len });

unsafe fn optional<'a>(t: *const WgcTensor, what: &str) -> Result<Option<Tensor<'a>>> {
    if t.is_null() {
        Ok(None)
    } else {
        unsafe { tensor(t, what) }.map(Some)
    }
}

/// Scaled dot-product attention, as PyTorch's
/// `scaled_dot_product_attention`, without materialising the scores:
/// `out = softmax(scale * q k^T + mask) v` per batch entry and query head.
///
/// Shapes: q (..., Hq, Sq, D), k and v (..., Hkv, Skv, D) with the same
/// leading (batch) dims, out shaped as q. Grouped-query attention: Hq a
/// multiple of Hkv, query head h reads key/value head h / (Hq / Hkv)
/// (PyTorch's `enable_gqa=True`; Hq == Hkv is ordinary attention).
/// D from 1 to 256. Any strides: heads-first (B, H, S, D) or tokens-first
/// (B, S, H, D) storage is passed as a permuted view.
///
/// Dtypes: q, k, v and out all f32, f16 or bf16 (bf16 goes through f32
/// copies of q, k and v, except in decode, which reads a bf16 K/V cache as
/// it is and copies only q and out); products and sums in f32, out rounded
/// once.
///
/// Which keys a query sees: key j (of Skv) takes part for query i (of Sq)
/// unless it is at or past the valid length L (`desc->kv_len`, and the
/// batch entry's `kv_lens` value when given), the causal mask excludes it,
/// it is outside the sliding window, or a boolean mask is false there.
/// Causal masks (`desc->causal`): `WGC_ATTENTION_CAUSAL_BOTTOM_RIGHT` puts
/// query i at position i + L - Sq and lets it see keys j <= that position
/// (FlashAttention, PyTorch's `causal_lower_right`: decode and chunked
/// prefill); `WGC_ATTENTION_CAUSAL_TOP_LEFT` puts it at position i
/// (PyTorch's `is_causal=True`). The two agree when Sq == L.
///
/// `mask` (NULL for none) broadcasts to (..., Hq, Sq, Skv) (NumPy rules,
/// any strides): of q's dtype it is added to the scaled scores (-inf
/// excludes a key); i32 or u32 it is boolean, nonzero where the key takes
/// part (PyTorch's `True`). `kv_lens` (NULL for none): i32 or u32, shaped
/// as the batch dims, each entry's number of valid keys (clamped to
/// Skv; read on the GPU). `lse` (NULL for none): f32 (..., Hq, Sq), gets
/// each row's natural log-sum-exp of its scaled, masked scores.
///
/// Rows that no key reaches (all masked, all outside the window or the
/// valid length, or a score of -inf everywhere) give 0 and lse -inf: what
/// PyTorch 2.5 and later return from SDPA (its math backend's
/// `_safe_softmax`, and the fused kernels), not the NaN of a plain softmax.
/// NaN and infinities follow IEEE arithmetic as in PyTorch's math backend:
/// a NaN score (from q, k or the mask) makes its row NaN; a +inf score
/// makes its row NaN (exp(inf - inf)); NaN or inf in v reaches every row
/// that sees that key, also with weight 0 (0 * NaN), except keys that no
/// row of the kernel's block of query rows may see (8 rows, 64 or 128 on
/// tensor cores, 4 in decode), which are never read.
///
/// Accuracy: within (2e-5 + 1.2e-7 * D * a) * sum_j p_j |v_j| + 1e-6 of a
/// float64 evaluation on the same inputs, p the softmax weights and a the
/// largest scale * sum_d |q_d k_d| over the keys the row sees (the f32
/// rounding of a score moves its weight by as much); for f16 and bf16
/// outputs add the output's rounding (2^-11 or 2^-8 relative), and for f16
/// add 2^-11 * sum_j p_j |v_j| (the tensor-core kernel rounds the weights
/// to f16 before they meet v). lse within 1e-5 * (|lse| + 1) for moderate
/// scores.
///
/// Work: f16 prefill (Sq above 16, D 64, 80, 96, 128, 160, 192 or 256) on
/// adapters with cooperative matrices (tensor cores) runs FlashAttention-2
/// on them: workgroups of 128 query rows of one key/value head (64 where Sq
/// is not a multiple of 16, q's rows are not 16-byte words or D is above
/// 128), tiles of 32 or 64 keys, causal tiles above the diagonal skipped. f16 decode (Sq up to 16,
/// D a multiple of 8 up to 128) runs flash-decoding: the KV cache is cut
/// into chunks over enough workgroups to fill the GPU, each reading its
/// chunk once for all the query heads of a group. Both read K and V rows
/// as 16-byte words, so they take views whose head dim is dense and whose
/// other strides and offset are multiples of 8 elements. Everything else
/// (f32, bf16, other views) takes a portable kernel: keys in tiles of 64 by
/// workgroups of 8 query rows of one key/value head, long key ranges cut
/// into chunks whose partial results a second pass merges. bf16 prefill
/// runs in f32 on widened copies of q, k and v: the tensor-core fragments
/// WGSL offers are f16 (and f32 accumulators), and bf16 values do not all
/// fit f16 (its range ends at 65504 and its normal numbers at 6.1e-5), so
/// no conversion to them is exact.
///
/// Statuses: `WGC_ERROR_SHAPE_MISMATCH` (shapes, heads not a multiple,
/// mask not broadcastable), `WGC_ERROR_DTYPE_MISMATCH`,
/// `WGC_ERROR_INVALID_ARGUMENT` (rank below 3, D outside 1..256, scale not
/// finite, unknown causal value, `desc->struct_size` below 4, out or lse
/// sharing a buffer with an input or each other, or overlapping itself),
/// `WGC_ERROR_UNSUPPORTED` (integer q, f16 without adapter support),
/// `WGC_ERROR_TOO_LARGE` (more workgroups than a grid dim holds, or the
/// key chunks' partial results, about B * Hq * Sq * chunks * (D + 2) * 4
/// bytes, past one storage binding: split the batch),
/// `WGC_ERROR_OUT_OF_RANGE` (views), `WGC_ERROR_NULL_POINTER` (stream, q,
/// k, v, desc or out NULL), `WGC_ERROR_DEVICE_MISMATCH`. Checked before
/// anything is recorded. Records work on `stream`; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_attention(
    stream: *const WgcStream,
    q: *const WgcTensor,
    k: *const WgcTensor,
    v: *const WgcTensor,
    mask: *const WgcTensor,
    kv_lens: *const WgcTensor,
    desc: *const WgcAttentionDesc,
    out: *const WgcTensor,
    lse: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let d = unsafe { read_sized(desc, "desc") }?;
        let (q, k, v, o) = unsafe { (tensor(q, "q")?, tensor(k, "k")?, tensor(v, "v")?, tensor(out, "out")?) };
        let (m, l, e) = unsafe { (optional(mask, "mask")?, optional(kv_lens, "kv_lens")?, optional(lse, "lse")?) };
        let cfg = Attention {
            causal: AttentionCausal::from_u32(d.causal)?,
            scale: d.scale,
            window: d.window,
            kv_len: d.kv_len,
        };
        let args =
            AttentionArgs { q: &q, k: &k, v: &v, mask: m.as_ref(), kv_lens: l.as_ref(), out: &o, lse: e.as_ref() };
        attention::attention(s, &args, &cfg)
    })
}
