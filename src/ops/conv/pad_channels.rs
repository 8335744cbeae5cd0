//! A few f16 channels (under 8) padded with zeros to 8, channels-last, in
//! one pass (conv_pad_channels.wgsl): an (N, C, H, W) view with any strides
//! into contiguous (N, H, W, 8) scratch, each pixel's 8 channels written as
//! one 16-byte word. The padded first layer's image and weight
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
    overrides: &[OverrideSlot { name: "C", values: &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] }],
    uniform: <PadParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_pad_channels.wgsl.
    pub struct PadParams = "Params" {
        pub in_s: [i32; 4],
        pub in_off: u32,
        pub h: u32,
        pub w: u32,
        pub pixels: u32,
        pub row: u32,
        pub _pad0: [u32; 3],
    }
}

/// The uniform and grid for an input of `shape` (N, C, H, W) and `strides`
/// whose first element is `in_off` into its binding, on an adapter of at
/// most `max_dim` workgroups per grid dimension.
fn plan(shape: [usize; 4], strides: [isize; 4], in_off: u32, max_dim: u32) -> (PadParams, [u32; 3]) {
    let [n, _, h, w] = shape;
    let pixels = n * h * w;
    let (groups, row) = grid_1d(pixels as u64, WG, max_dim);
    let params = PadParams {
        in_s: strides.map(|s| s as i32),
        in_off,
        h: h as u32,
        w: w as u32,
        pixels: pixels as u32,
        row,
        _pad0: [0; 3],
    };
    (params, groups)
}

/// Record `t` (N, C, H, W) f16, 1 <= C < 8, padded into `out` as
/// contiguous (N, H, W, 8) f16 from its start (N*H*W*16 bytes, every one
/// written).
pub fn pad_channels(stream: &StreamShared, t: &Tensor, out: &Buffer) -> Result<()> {
    let Ok(shape) = <[usize; 4]>::try_from(t.shape.as_slice()) else {
        bail!(Internal, "pad_channels: a rank-{} view, not (N, C, H, W)", t.rank());
    };
    let c = shape[1];
    if t.dtype != DType::F16 || !(1..PADDED).contains(&c) {
        bail!(Internal, "pad_channels: {c} {} channels, not 1 to 7 f16", t.dtype.wgsl());
    }
    let pixels = shape[0] * shape[2] * shape[3];
    let bytes = (pixels * PADDED * 2) as u64;
    if pixels > u32::MAX as usize || bytes > out.size || t.strides.iter().any(|&s| i32::try_from(s).is_err()) {
        bail!(
            Internal,
            "pad_channels: {pixels} padded pixels or strides {:?} do not fit a {}-byte buffer and 32 bits",
            t.strides,
            out.size
        );
    }
    if pixels == 0 {
        return Ok(());
    }
    let (x, in_off) = view_arg("xw", t);
    let strides = std::array::from_fn(|d| t.strides[d]);
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (params, groups) = plan(shape, strides, in_off, max_dim);
    let y = Arg { name: "y4", buffer: out, offset: 0, size: Some(bytes) };
    let variant = FAMILY.variant("pad_channels", &[], &[c as f64]);
    spec::record(stream, &Launch { variant, params, args: [x, y], groups })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_invocation_per_pixel_over_a_grid_of_rows() {
        // Batch 256 at 224 x 224: 12.8M pixels in 50176 workgroups, one row.
        let (p, groups) = plan([256, 3, 224, 224], [150528, 50176, 224, 1], 5, 65535);
        assert_eq!((p.pixels, p.h, p.w, p.in_off, p.row), (12_845_056, 224, 224, 5, 50176 * 256));
        assert_eq!(p.in_s, [150528, 50176, 224, 1]);
        assert_eq!(groups, [50176, 1, 1]);
        // More workgroups than a dimension holds: rows of max_dim.
        let (p, groups) = plan([3, 2, 5, 7], [-70, 1, 14, 2], 0, 4);
        assert_eq!((p.pixels, p.row), (105, 256));
        assert_eq!(groups, [1, 1, 1]);
        let (p, groups) = plan([64, 3, 111, 7], [1, 7, 3, 1], 0, 4);
        assert_eq!((p.pixels, p.row), (49728, 1024));
        assert_eq!(groups, [4, 49, 1]);
        assert!(groups[0] as usize * groups[1] as usize * WG as usize >= p.pixels as usize);
        assert_eq!(p.in_s, [1, 7, 3, 1]);
    }
}
