//! Rotary position embedding as C sees it.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::sized::{read_sized, sized_struct};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::ops::rope::{self, Rope, RopeLayout};

/// Settings of `wgc_op_rope`. Zero-initialise, set `struct_size` to
/// `sizeof(WgcRopeDesc)`, then at least `base` and `seq_axis`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcRopeDesc {
    pub struct_size: u32,
    /// A `WgcRopeLayout` value: which elements are rotated together.
    pub layout: u32,
    /// The dim along which the position grows by one per entry (e.g. 1 for
    /// [batch, seq, heads, head_dim], -2 for [batch, heads, seq, head_dim]);
    /// any dim but the last; negative counts from the end.
    pub seq_axis: i32,
    /// How many leading elements of the last dim are rotated (even, at most
    /// the last dim and at most 512); the rest are copied unchanged
    /// (partial rotary embedding). 0: the whole last dim.
    pub rotary_dims: u32,
    /// theta_i = base^(-2i / rotary_dims), e.g. 10000. Finite and > 0.
    pub base: f32,
    /// The position of entry 0 along `seq_axis` (tokens already in the
    /// cache when decoding).
    pub position_offset: u32,
}

sized_struct!(WgcRopeDesc { layout, seq_axis, rotary_dims, base, position_offset });

impl Default for WgcRopeDesc {
    fn default() -> Self {
        WgcRopeDesc { struct_size: 0, layout: 0, seq_axis: 0, rotary_dims: 0, base: 0.0, position_offset: 0 }
    }
}

/// Rotary position embedding along the last dim of `in` (rank >= 2):
/// for every row, with p = `position_offset` + the row's coordinate along
/// `seq_axis` and r = the rotated dims, pair i in [0, r/2), made of
/// elements (a, b) = (2i, 2i+1) for `WGC_ROPE_LAYOUT_INTERLEAVED` or
/// (i, i + r/2) for `WGC_ROPE_LAYOUT_HALF_SPLIT`, becomes
/// `out[a] = x[a] cos(p theta_i) - x[b] sin(p theta_i)`,
/// `out[b] = x[a] sin(p theta_i) + x[b] cos(p theta_i)`, with
/// `theta_i = base^(-2i/r)`; elements r and after are copied. A NaN in a
/// pair gives NaN in both of its outputs; infinities follow IEEE
/// arithmetic (as in PyTorch).
/// f32 or f16 (computed in f32); out has in's shape and dtype. out may be
/// the very same view as in (in place); any other sharing of a buffer
/// between them, or out elements that share memory, is
/// `WGC_ERROR_INVALID_ARGUMENT`. Views of any layout.
///
/// Accuracy: angles are reduced exactly (theta_i / 2 pi is held as a 64-bit
/// fraction, so p theta_i mod 2 pi is exact for every position below
/// 2^32); the result is within about 2e-6 * (|x[a]| + |x[b]|) of a float64
/// evaluation of the formula for f32, and within f16 rounding for f16.
/// (Implementations that round p * theta_i to f32 first, as Hugging Face
/// does, differ from this by up to p * 6e-8 radians.)
///
/// Statuses: `WGC_ERROR_INVALID_ARGUMENT` (rank below 2, odd or too many
/// rotated dims, base not finite and positive, unknown layout, aliasing,
/// `desc->struct_size` below 4), `WGC_ERROR_OUT_OF_RANGE` (seq_axis,
/// positions past 2^32, views), `WGC_ERROR_SHAPE_MISMATCH`,
/// `WGC_ERROR_DTYPE_MISMATCH`, `WGC_ERROR_UNSUPPORTED` (integer dtypes, f16
/// without adapter support), `WGC_ERROR_NULL_POINTER`,
/// `WGC_ERROR_DEVICE_MISMATCH`. Checked before anything is recorded.
/// Records work on `stream`; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_rope(
    stream: *const WgcStream,
    input: *const WgcTensor,
    desc: *const WgcRopeDesc,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let d = unsafe { read_sized(desc, "desc") }?;
        let (x, y) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let cfg = Rope {
            layout: RopeLayout::from_u32(d.layout)?,
            seq_axis: d.seq_axis,
            rotary_dims: d.rotary_dims,
            base: d.base,
            position_offset: d.position_offset,
        };
        let _call = profile_op!(s, "rope", [&x], [&y], 0);
        rope::rope(s, &x, &cfg, &y)
    })
}
