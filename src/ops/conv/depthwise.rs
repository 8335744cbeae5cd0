//! Depthwise convolution at the memory bandwidth (one input and one output
//! channel per group), by conv_depthwise.wgsl, with the bias and an
//! activation in its store: channels-last operands in 16-byte words of
//! channels (`Depthwise::Words`, or `Depthwise::Rows` with several outputs
//! along a row per invocation for f32 3x3 and 5x5 windows), other 3x3 and
//! 5x5 windows of stride 1 or 2 by strips of outputs along rows
//! (`Depthwise::Strips`), anything else by tiles of output pixels
//! whose input is staged in workgroup memory (`Depthwise::Tiles`). Channel
//! multipliers above 1 and windows whose tile does not fit take the direct
//! kernel instead.

use super::problem::{ivec4, Operands, Problem, View};
use super::route::{Depthwise, Fit, Route};
use super::target::Target;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::reduce::kernels::row_grid;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::tensor::DType;
use crate::runtime::stream::StreamShared;

/// Invocations per workgroup (every entry).
const WG: usize = 256;
/// Staged filter vec4s per workgroup (the shader's W_CAP).
const W_CAP: usize = 1024;
/// Staged input values per workgroup (the shader's TILE_CAP).
const TILE_CAP: usize = 4096;
/// Most channel words one workgroup of the words entry covers.
const MAX_CVW: usize = 16;
/// Outputs along a row per invocation of dw_rows (the shader's OUT_W).
const OUT_W: usize = 4;
/// Channels per word of the rows entries: 16 bytes of f32 (dw_rows), 8 of
/// f16 (dw_rows8).
const ROW_LANES: usize = 4;
/// f16 takes the rows entry (dw_rows8) where its window does.
const F16_ROWS: bool = true;

/// Depthwise convolution with bias and activation.
pub static FAMILY: Family = Family {
    file: "conv_depthwise.wgsl",
    source: include_str!("../../../shaders/conv_depthwise.wgsl"),
    entries: &["dw_words", "dw_rows", "dw_rows8", "dw_strips", "dw_tiles"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        OverrideSlot { name: "BIAS", values: &[0.0, 1.0] },
        OverrideSlot { name: "K", values: &[0.0, 3.0, 5.0] },
        OverrideSlot { name: "S", values: &[1.0, 2.0] },
    ],
    uniform: <DepthwiseParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_depthwise.wgsl.
    pub struct DepthwiseParams = "Params" {
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
        pub out_s: [i32; 4],
        pub n: u32,
        pub c: u32,
        pub h: i32,
        pub w: i32,
        pub oh: u32,
        pub ow: u32,
        pub kh: u32,
        pub kw: u32,
        pub sh: i32,
        pub sw: i32,
        pub ph: i32,
        pub pw: i32,
        pub dh: i32,
        pub dw: i32,
        pub in_off: u32,
        pub w_off: u32,
        pub out_off: u32,
        pub bias_off: u32,
        pub bias_stride: i32,
        pub act: u32,
        pub tw: u32,
        pub th: u32,
        pub planes: u32,
        pub tiles_w: u32,
        pub rh: u32,
        pub rw: u32,
        pub row: u32,
        pub cvw: u32,
        pub words: u32,
        pub pixels: u32,
        pub blocks: u32,
        pub reps: u32,
    }
}

/// Channels per 16-byte word.
fn lanes(dtype: DType) -> usize {
    16 / dtype.size()
}

/// True if `v` (N, C, H, W) lies channels-last in whole words of `lanes`
/// channels: channels at unit stride, the other strides (of dims longer
/// than 1) and the bound offset non-negative multiples of `lanes`.
fn channels_last_words(shape: [usize; 4], v: &View, lanes: usize) -> bool {
    let whole = |s: isize| s >= 0 && (s as usize).is_multiple_of(lanes);
    shape[1].is_multiple_of(lanes)
        && v.strides[1] == 1
        && [0, 2, 3].into_iter().all(|d| shape[d] == 1 || whole(v.strides[d]))
        && (v.bound_offset as usize).is_multiple_of(lanes)
}

/// Channel words per workgroup: the widest power of 2 up to MAX_CVW that
/// leaves at most 1/8 of the last chunk's invocations idle, and whose
/// filters fit the stage.
fn words_per_group(words: usize, taps: usize, halves: usize) -> Option<usize> {
    let fits = |cvw: usize| taps * cvw * halves <= W_CAP;
    let tight = |cvw: usize| words.div_ceil(cvw) * cvw * 8 <= words * 9;
    let mut cvw = MAX_CVW;
    while cvw > 1 && !(fits(cvw) && tight(cvw)) {
        cvw /= 2;
    }
    fits(cvw).then_some(cvw)
}

/// The output tile: tw columns (8, 16 or 32, the fewest covering the
/// output's width up to 32), th rows, and as many planes as fill WG.
fn tile_shape(oh: usize, ow: usize) -> (usize, usize, usize) {
    let tw = ow.next_power_of_two().clamp(8, 32);
    let th = oh.next_power_of_two().clamp(1, WG / tw);
    (tw, th, WG / (tw * th))
}

/// Workgroups past which each channels-last workgroup computes several
/// pixel groups in turn (staging its filters once for them).
const REPS_FROM: usize = 4096;
/// Pixel groups per workgroup then.
const REPS: usize = 4;

/// Pixel groups per workgroup for a grid of `workgroups` of one each.
fn reps_for(workgroups: usize) -> usize {
    if workgroups >= REPS_FROM {
        REPS
    } else {
        1
    }
}

/// Input rows (or columns) `out` outputs read.
fn span(out: usize, k: usize, s: usize, d: usize) -> usize {
    (out - 1) * s + (k - 1) * d + 1
}

/// A square 3x3 or 5x5 window of stride 1 or 2 and dilation 1: the rows
/// and strips entries compile it in.
fn row_window(g: &super::problem::Geometry) -> bool {
    g.kh == g.kw && matches!(g.kh, 3 | 5) && g.sh == g.sw && g.sh <= 2 && g.dh == 1 && g.dw == 1
}

/// Depthwise convolutions of channel multiplier 1 take this route where
/// their grid and staging fit.
pub fn supports(p: &Problem, t: &Target) -> Fit<Depthwise> {
    let g = &p.geo;
    if !(g.cg == 1 && g.og == 1 && g.groups > 1) {
        return Err(format!(
            "{} input and {} output channels per group in {} group(s): not depthwise of multiplier 1",
            g.cg, g.og, g.groups
        ));
    }
    let taps = g.kh * g.kw;
    let fits_grid = |words: usize, cvw: usize, per_row: usize| {
        let pixel_groups = (g.n * g.oh * per_row).div_ceil(WG / cvw);
        words.div_ceil(cvw) <= t.max_workgroups && pixel_groups.div_ceil(t.max_workgroups) <= t.max_workgroups
    };
    let channels_last = |lanes| {
        channels_last_words(g.input_shape(), &p.input, lanes) && channels_last_words(g.out_shape(), &p.out, lanes)
    };
    // Square 3x3 or 5x5 windows of stride 1 or 2: several outputs per row,
    // in words of 4 channels (16 bytes of f32, 8 of f16).
    if row_window(g) && (p.dtype == DType::F32 || F16_ROWS) && channels_last(ROW_LANES) {
        let words = g.c / ROW_LANES;
        if let Some(cvw) = words_per_group(words, taps, 1).filter(|&cvw| fits_grid(words, cvw, g.ow.div_ceil(OUT_W))) {
            return Ok(Depthwise::Rows { cvw });
        }
    }
    let lanes = lanes(p.dtype);
    if channels_last(lanes) {
        let words = g.c / lanes;
        if let Some(cvw) = words_per_group(words, taps, lanes / 4).filter(|&cvw| fits_grid(words, cvw, g.ow)) {
            return Ok(Depthwise::Words { cvw });
        }
    }
    if row_window(g) {
        let strips = g.n * g.c * g.oh * g.ow.div_ceil(OUT_W);
        if strips.div_ceil(WG).div_ceil(t.max_workgroups) <= t.max_workgroups {
            return Ok(Depthwise::Strips);
        }
    }
    let (tw, th, planes) = tile_shape(g.oh, g.ow);
    let (rh, rw) = (span(th, g.kh, g.sh, g.dh), span(tw, g.kw, g.sw, g.dw));
    if rw > WG || planes * rh * rw > TILE_CAP {
        return Err(format!(
            "the input a {th}x{tw} output tile reads ({rh}x{rw} per plane, {planes} plane(s)) does not fit workgroup memory"
        ));
    }
    let tiles = g.oh.div_ceil(th) * g.ow.div_ceil(tw);
    let plane_groups = (g.n * g.c).div_ceil(planes);
    if tiles > t.max_workgroups || plane_groups.div_ceil(t.max_workgroups) > t.max_workgroups {
        return Err(format!("{tiles} tiles per plane or {plane_groups} groups of planes exceed the grid"));
    }
    Ok(Depthwise::Tiles { tw, th, planes })
}

/// Record a planned depthwise convolution followed by `act` (a
/// `WgcActivation` code, 0 for none).
pub fn record(stream: &StreamShared, p: &Problem, plan: Depthwise, ops: &Operands) -> Result<()> {
    // The store applies the problem's activation where it knows it
    // (`Route::applies`); the caller applies the others.
    let act = if Route::Depthwise(plan).applies(p.activation) { p.activation as u32 } else { 0 };
    let g = &p.geo;
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (x, in_off) = view_arg("x", ops.input);
    let (wt, w_off) = view_arg("wt", ops.weight);
    let (y, out_off) = view_arg("y", ops.out);
    // Without a bias the kernel's bias binding still needs a buffer: the weight's.
    let (bias, bias_off) = match ops.bias {
        Some(b) => view_arg("bias", b),
        None => (Arg { name: "bias", ..wt }, 0),
    };
    let has_bias = if p.bias.is_some() { 1.0 } else { 0.0 };
    let square = if g.kh == g.kw && (g.kh == 3 || g.kh == 5) { g.kh as f64 } else { 0.0 };
    let mut params = DepthwiseParams {
        in_s: ivec4(&p.input.strides),
        w_s: ivec4(&p.weight.strides),
        out_s: ivec4(&p.out.strides),
        n: g.n as u32,
        c: g.c as u32,
        h: g.h as i32,
        w: g.w as i32,
        oh: g.oh as u32,
        ow: g.ow as u32,
        kh: g.kh as u32,
        kw: g.kw as u32,
        sh: g.sh as i32,
        sw: g.sw as i32,
        ph: g.ph as i32,
        pw: g.pw as i32,
        dh: g.dh as i32,
        dw: g.dw as i32,
        in_off,
        w_off,
        out_off,
        bias_off,
        bias_stride: p.bias.unwrap_or(0) as i32,
        act,
        tw: 0,
        th: 0,
        planes: 0,
        tiles_w: 0,
        rh: 0,
        rw: 0,
        row: 0,
        cvw: 0,
        words: 0,
        pixels: 0,
        blocks: 0,
        reps: 1,
    };
    match plan {
        Depthwise::Words { cvw } | Depthwise::Rows { cvw } => {
            let rows = matches!(plan, Depthwise::Rows { .. });
            let lanes = if rows { ROW_LANES } else { lanes(p.dtype) };
            let in_words = p.input.strides.map(|s| (s / lanes as isize) as i32);
            let out_words = p.out.strides.map(|s| (s / lanes as isize) as i32);
            let words = g.c / lanes;
            let blocks = if rows { g.ow.div_ceil(OUT_W) } else { g.ow };
            let pixels = g.n * g.oh * blocks;
            let pixel_groups = pixels.div_ceil(WG / cvw);
            let reps = reps_for(words.div_ceil(cvw) * pixel_groups);
            let (groups, row) = row_grid(words.div_ceil(cvw) as u32, pixel_groups.div_ceil(reps), max_dim);
            params = DepthwiseParams {
                in_s: in_words,
                out_s: out_words,
                in_off: in_off / lanes as u32,
                out_off: out_off / lanes as u32,
                cvw: cvw as u32,
                words: words as u32,
                pixels: pixels as u32,
                blocks: blocks as u32,
                reps: reps as u32,
                row,
                ..params
            };
            let half_words = rows && p.dtype == DType::F16;
            let (entry, stride) = match (rows, half_words) {
                (true, true) => ("dw_rows8", g.sh as f64),
                (true, false) => ("dw_rows", g.sh as f64),
                _ => ("dw_words", 1.0),
            };
            let variant = FAMILY.variant(entry, &[p.dtype], &[has_bias, square, stride]);
            let (xn, yn) = if half_words { ("x2", "y2") } else { ("x4", "y4") };
            let args = [Arg { name: xn, ..x }, wt, bias, Arg { name: yn, ..y }];
            spec::record(stream, &Launch { variant, params, args, groups })
        }
        Depthwise::Strips => {
            let blocks = g.ow.div_ceil(OUT_W);
            let strips = g.n * g.c * g.oh * blocks;
            let (groups, row) = grid_1d(strips as u64, WG as u32, max_dim);
            params = DepthwiseParams { blocks: blocks as u32, pixels: strips as u32, row, ..params };
            let variant = FAMILY.variant("dw_strips", &[p.dtype], &[has_bias, square, g.sh as f64]);
            spec::record(stream, &Launch { variant, params, args: [x, wt, bias, y], groups })
        }
        Depthwise::Tiles { tw, th, planes } => {
            let tiles_w = g.ow.div_ceil(tw);
            let tiles = g.oh.div_ceil(th) * tiles_w;
            let (groups, row) = row_grid(tiles as u32, (g.n * g.c).div_ceil(planes), max_dim);
            params = DepthwiseParams {
                tw: tw as u32,
                th: th as u32,
                planes: planes as u32,
                tiles_w: tiles_w as u32,
                rh: span(th, g.kh, g.sh, g.dh) as u32,
                rw: span(tw, g.kw, g.sw, g.dw) as u32,
                row,
                ..params
            };
            let variant = FAMILY.variant("dw_tiles", &[p.dtype], &[has_bias, square, 1.0]);
            spec::record(stream, &Launch { variant, params, args: [x, wt, bias, y], groups })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_per_group_keeps_the_last_chunk_busy() {
        // MobileNetV2's channels in f32 words (C / 4), 3x3.
        assert_eq!(words_per_group(8, 9, 1), Some(8));
        assert_eq!(words_per_group(36, 9, 1), Some(8));
        assert_eq!(words_per_group(240, 9, 1), Some(16));
        // f16 words (C / 8): 18 words in chunks of 4.
        assert_eq!(words_per_group(18, 9, 2), Some(4));
        assert_eq!(words_per_group(120, 25, 2), Some(16));
        // A 33x33 window in f16 stages 2178 vec4s per word: none fits.
        assert_eq!(words_per_group(4, 33 * 33, 2), None);
    }

    #[test]
    fn tiles_cover_small_planes_several_at_once() {
        assert_eq!(tile_shape(7, 7), (8, 8, 4));
        assert_eq!(tile_shape(14, 14), (16, 16, 1));
        assert_eq!(tile_shape(56, 56), (32, 8, 1));
        assert_eq!(tile_shape(1, 3), (8, 1, 32));
    }
}
