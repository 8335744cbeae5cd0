//! A few f16 channels (under 8) padded with zeros to 8, channels-last, in
//! one pass (conv_pad_channels.wgsl): an (N, C, H, W) view with any strides
//! into contiguous (N, H, WQ, 8) scratch, one 16-byte word at a time:
//! each pixel's 8 channels (`Padding::Channels8`), or two adjacent pixels
//! of 4 channels (`Padding::Pairs`, up to 4 channels: half the words, and
//! a stride-2 window over pixels becomes a stride-1 window over pairs). The padded first layer's image and weight
//! (stem_pad.rs): one read of the image and one write of the scratch,
//! where zeroing the scratch and then copying the real channels through a
//! strided view wrote it twice. Values move as bits (NaN, infinities and
//! -0.0 unchanged).

use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;

/// Channels after padding: one 16-byte word of f16.
pub(crate) const PADDED: usize = 8;
/// Invocations per workgroup (the shader's WG).
const WG: u32 = 256;

/// The padding kernel, one variant per count of real channels.
pub static FAMILY: Family = Family {
    file: "conv_pad_channels.wgsl",
    source: include_str!("../../../shaders/conv_pad_channels.wgsl"),
    entries: &["pad_channels"],
    types: &[],
    overrides: &[
        OverrideSlot { name: "C", values: &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] },
        OverrideSlot { name: "PAIRS", values: &[0.0, 1.0] },
    ],
    uniform: <PadParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_pad_channels.wgsl.
    pub struct PadParams = "Params" {
        pub in_s: [i32; 4],
        pub in_off: u32,
        pub h: u32,
        pub w: u32,
        pub words: u32,
        pub row: u32,
        pub wq: u32,
        pub lpad: u32,
        pub _pad0: u32,
    }
}

/// What one 16-byte word of the padded scratch holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// One pixel's channels, then zeros: (N, H, W, 8).
    Channels8,
    /// Two adjacent pixels' 4 channels each, `lpad` zero pixels before each
    /// row and `words` words per row: word q holds pixels 2q - lpad and
    /// 2q - lpad + 1 (zero outside the row), (N, H, words, 8).
    Pairs { lpad: usize, words: usize },
}

impl Padding {
    /// Words per row of an image `w` pixels wide.
    pub fn words(self, w: usize) -> usize {
        match self {
            Padding::Channels8 => w,
            Padding::Pairs { words, .. } => words,
        }
    }
}

/// The uniform and grid for an input of `shape` (N, C, H, W) and `strides`
/// whose first element is `in_off` into its binding, padded as `padding`,
/// on an adapter of at most `max_dim` workgroups per grid dimension.
fn plan(shape: [usize; 4], strides: [isize; 4], in_off: u32, padding: Padding, max_dim: u32) -> (PadParams, [u32; 3]) {
    let [n, _, h, w] = shape;
    let wq = padding.words(w);
    let words = n * h * wq;
    let (groups, row) = grid_1d(words as u64, WG, max_dim);
    let lpad = match padding {
        Padding::Channels8 => 0,
        Padding::Pairs { lpad, .. } => lpad as u32,
    };
    let params = PadParams {
        in_s: strides.map(|s| s as i32),
        in_off,
        h: h as u32,
        w: w as u32,
        words: words as u32,
        row,
        wq: wq as u32,
        lpad,
        _pad0: 0,
    };
    (params, groups)
}

/// Record `t` (N, C, H, W) f16, 1 <= C < 8 (up to 4 for pairs), padded
/// as `padding` into `out` as contiguous (N, H, WQ, 8) f16 from its start
/// (16 bytes a word, every one written).
pub fn pad_channels(stream: &StreamShared, t: &Tensor, padding: Padding, out: &Buffer) -> Result<()> {
    let Ok(shape) = <[usize; 4]>::try_from(t.shape.as_slice()) else {
        bail!(Internal, "pad_channels: a rank-{} view, not (N, C, H, W)", t.rank());
    };
    let c = shape[1];
    let most = if matches!(padding, Padding::Pairs { .. }) { PADDED / 2 } else { PADDED - 1 };
    if t.dtype != DType::F16 || !(1..=most).contains(&c) {
        bail!(Internal, "pad_channels: {c} {} channels, not 1 to {most} f16", t.dtype.wgsl());
    }
    let words = shape[0] * shape[2] * padding.words(shape[3]);
    let bytes = (words * PADDED * 2) as u64;
    if words > u32::MAX as usize || bytes > out.size || t.strides.iter().any(|&s| i32::try_from(s).is_err()) {
        bail!(
            Internal,
            "pad_channels: {words} padded words or strides {:?} do not fit a {}-byte buffer and 32 bits",
            t.strides,
            out.size
        );
    }
    if words == 0 {
        return Ok(());
    }
    let (x, in_off) = view_arg("xw", t);
    let strides = std::array::from_fn(|d| t.strides[d]);
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (params, groups) = plan(shape, strides, in_off, padding, max_dim);
    let y = Arg { name: "y4", buffer: out, offset: 0, size: Some(bytes) };
    let pairs = matches!(padding, Padding::Pairs { .. });
    let variant = FAMILY.variant("pad_channels", &[], &[c as f64, pairs as u32 as f64]);
    spec::record(stream, &Launch { variant, params, args: [x, y], groups })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_invocation_per_pixel_over_a_grid_of_rows() {
        // Batch 256 at 224 x 224: 12.8M pixels in 50176 workgroups, one row.
        let (p, groups) = plan([256, 3, 224, 224], [150528, 50176, 224, 1], 5, Padding::Channels8, 65535);
        assert_eq!((p.words, p.h, p.w, p.wq, p.in_off, p.row), (12_845_056, 224, 224, 224, 5, 50176 * 256));
        assert_eq!(p.in_s, [150528, 50176, 224, 1]);
        assert_eq!(groups, [50176, 1, 1]);
        // More workgroups than a dimension holds: rows of max_dim.
        let (p, groups) = plan([3, 2, 5, 7], [-70, 1, 14, 2], 0, Padding::Channels8, 4);
        assert_eq!((p.words, p.row), (105, 256));
        assert_eq!(groups, [1, 1, 1]);
        let (p, groups) = plan([64, 3, 111, 7], [1, 7, 3, 1], 0, Padding::Channels8, 4);
        assert_eq!((p.words, p.row), (49728, 1024));
        assert_eq!(groups, [4, 49, 1]);
        assert!(groups[0] as usize * groups[1] as usize * WG as usize >= p.words as usize);
        assert_eq!(p.in_s, [1, 7, 3, 1]);
    }

    #[test]
    fn pairs_take_one_invocation_per_word_of_two_pixels() {
        // ResNet-50's first layer at batch 256: 115 words a row (pixels -3
        // to 226), 3 zero pixels before each row.
        let padding = Padding::Pairs { lpad: 3, words: 115 };
        let (p, groups) = plan([256, 3, 224, 224], [150528, 50176, 224, 1], 0, padding, 65535);
        assert_eq!((p.words, p.wq, p.lpad, p.w), (256 * 224 * 115, 115, 3, 224));
        assert_eq!(groups, [(256 * 224 * 115u32).div_ceil(WG), 1, 1]);
        assert_eq!(Padding::Channels8.words(224), 224);
    }
}
