//! The WGSL implicit GEMM (shaders/conv.wgsl with the micro-kernel of
//! shaders/gemm_tile.wgsl, which matmul.wgsl shares): output pixels x
//! output channels in 64x64 tiles (register blocks of 2 where there are
//! many), K split over workgroups that add into the output where the tiles
//! are too few or K too long.

use super::direct::{BIAS, SPECIALIZED_SIZES};
use super::problem::{compiled_window, ivec4, Operands, Problem};
use super::route::Implicit;
use super::target::Target;
use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot};
use crate::ops::split::K_CHUNK;
use crate::runtime::stream::StreamShared;

/// The implicit GEMM.
pub static FAMILY: Family = Family {
    file: "conv.wgsl",
    source: concat!(include_str!("../../../shaders/conv.wgsl"), include_str!("../../../shaders/gemm_tile.wgsl")),
    entries: &["conv_gemm"],
    types: &[],
    overrides: &[
        OverrideSlot { name: "RM", values: &[1.0, 2.0] },
        OverrideSlot { name: "RN", values: &[1.0, 2.0] },
        OverrideSlot { name: "KH", values: SPECIALIZED_SIZES },
        OverrideSlot { name: "KW", values: SPECIALIZED_SIZES },
        BIAS,
        OverrideSlot { name: "SPLIT", values: &[0.0, 1.0] },
    ],
    uniform: <ConvParams as spec::Uniform>::layout,
};

/// The first pass of a split-K implicit GEMM: the output set to the bias.
pub static INIT_FAMILY: Family = Family {
    file: "conv_init.wgsl",
    source: include_str!("../../../shaders/conv_init.wgsl"),
    entries: &["conv_init"],
    types: &[],
    overrides: &[BIAS],
    uniform: <ConvInitParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv.wgsl.
    pub struct ConvParams = "Params" {
        pub m: u32,
        pub o_per_group: u32,
        pub k: u32,
        pub c_per_group: u32,
        pub h: i32,
        pub w: i32,
        pub oh: u32,
        pub ow: u32,
        pub stride_h: i32,
        pub stride_w: i32,
        pub pad_h: i32,
        pub pad_w: i32,
        pub dil_h: i32,
        pub dil_w: i32,
        pub in_off: u32,
        pub w_off: u32,
        pub out_off: u32,
        pub bias_off: u32,
        pub bias_stride: i32,
        pub splits: u32,
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
        pub out_s: [i32; 4],
        pub k_chunk: u32,
        pub kw: u32,
        pub taps: u32,
        pub _pad0: u32,
    }
}

uniform! {
    /// The uniform of conv_init.wgsl.
    pub struct ConvInitParams = "Params" {
        pub total: u32,
        pub channels: u32,
        pub ohw: u32,
        pub ow: u32,
        pub out_off: u32,
        pub bias_off: u32,
        pub bias_stride: i32,
        pub row: u32,
        pub out_s: [i32; 4],
    }
}

/// Every problem the other routes leave (the f32 ones): its blocking and K
/// split; an error where the grid exceeds the adapter's limits.
pub fn supports(p: &Problem, t: &Target) -> Result<Implicit> {
    let g = &p.geo;
    let m = g.n * g.oh * g.ow;
    let k = g.k();
    let tiles64 = m.div_ceil(64) * g.og.div_ceil(64) * g.groups;
    // K is always split into runs of at most K_CHUNK (see split.rs).
    let min_splits = k.div_ceil(K_CHUNK);
    let big = tiles64 >= 1024 && min_splits == 1;
    let rm = if big && m > 64 { 2 } else { 1 };
    let rn = if big && g.og > 64 { 2 } else { 1 };
    // gemm_tile.wgsl's BK for these blocks.
    let bk = if rm * rn == 4 { 8 } else { 16 };
    // Too few output tiles to fill a large GPU (about two per multiprocessor
    // on an H200) and a long K: split K over workgroups that add partial sums
    // into the output, set to the bias first. Only with 64x64 tiles: measured
    // on an H200, larger tiles with the adding epilogue run far slower.
    let splits = if tiles64 < 320 && k >= 1024 { (1024 / tiles64).clamp(1, k / 512) } else { 1 }.max(min_splits);
    let k_chunk = k.div_ceil(splits).div_ceil(bk) * bk;
    let splits = k.div_ceil(k_chunk).max(1);
    let groups_xy = [g.og.div_ceil(64 * rn), m.div_ceil(64 * rm)];
    if groups_xy.iter().any(|&d| d > t.max_workgroups) || g.groups * splits > t.max_workgroups {
        bail!(TooLarge, "conv2d: the output needs more workgroups than this adapter allows per dimension");
    }
    let window = compiled_window(g.kh, g.kw, SPECIALIZED_SIZES);
    Ok(Implicit { rm, rn, splits, k_chunk, window })
}

pub fn record(stream: &StreamShared, p: &Problem, plan: Implicit, ops: &Operands) -> Result<()> {
    let g = &p.geo;
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (x_arg, in_off) = view_arg("x", ops.input);
    let (w_arg, w_off) = view_arg("wt", ops.weight);
    let (y_arg, out_off) = view_arg("y", ops.out);
    // Without a bias the kernel's bias binding still needs a buffer: the weight's.
    let (bias_arg, bias_off) = match ops.bias {
        Some(b) => view_arg("bias", b),
        None => (Arg { name: "bias", ..w_arg }, 0),
    };
    let bias_stride = p.bias.unwrap_or(0) as i32;
    let has_bias = if p.bias.is_some() { 1.0 } else { 0.0 };
    let out_s = ivec4(&p.out.strides);
    let Implicit { rm, rn, splits, k_chunk, window } = plan;
    let m = g.n * g.oh * g.ow;
    let split = splits > 1;
    if split {
        let total = g.outputs() as u64;
        let (grid, row) = grid_1d(total, 256, max_dim);
        let params = ConvInitParams {
            total: total as u32,
            channels: g.o as u32,
            ohw: (g.oh * g.ow) as u32,
            ow: g.ow as u32,
            out_off,
            bias_off,
            bias_stride,
            row,
            out_s,
        };
        let variant = INIT_FAMILY.variant("conv_init", &[], &[has_bias]);
        spec::record(stream, &Launch { variant, params, args: [bias_arg, y_arg], groups: grid })?;
    }
    let params = ConvParams {
        m: m as u32,
        o_per_group: g.og as u32,
        k: g.k() as u32,
        c_per_group: g.cg as u32,
        h: g.h as i32,
        w: g.w as i32,
        oh: g.oh as u32,
        ow: g.ow as u32,
        stride_h: g.sh as i32,
        stride_w: g.sw as i32,
        pad_h: g.ph as i32,
        pad_w: g.pw as i32,
        dil_h: g.dh as i32,
        dil_w: g.dw as i32,
        in_off,
        w_off,
        out_off,
        bias_off,
        bias_stride,
        splits: splits as u32,
        in_s: ivec4(&p.input.strides),
        w_s: ivec4(&p.weight.strides),
        out_s,
        k_chunk: k_chunk as u32,
        kw: g.kw as u32,
        taps: (g.kh * g.kw) as u32,
        _pad0: 0,
    };
    // Split: the bias is in the output already (conv_init).
    let overrides = [
        rm as f64,
        rn as f64,
        window[0] as f64,
        window[1] as f64,
        if split { 0.0 } else { has_bias },
        split as u32 as f64,
    ];
    let variant = FAMILY.variant("conv_gemm", &[], &overrides);
    let grid = [g.og.div_ceil(64 * rn) as u32, m.div_ceil(64 * rm) as u32, (g.groups * splits) as u32];
    spec::record(stream, &Launch { variant, params, args: [x_arg, w_arg, bias_arg, y_arg], groups: grid })
}
