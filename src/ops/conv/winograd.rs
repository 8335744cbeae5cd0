//! f32 3x3 stride-1 convolutions by Winograd F(2x2, 3x3) (shaders/
//! conv_winograd.wgsl): the weight transformed into 16 (C x O) matrices
//! U_k, each chunk of images' 4x4 input patches into 16 (tiles x C)
//! matrices V_k, the 16 products M_k = V_k U_k by the library's f32 GEMM
//! (`gemm_views` over a batch of 16, so the GEMM planner picks its route),
//! and the output transform adding the bias and the ReLU family of
//! activations as it stores. 16 products per 2x2 outputs against 36
//! multiply-adds per output of the direct sum: 2.25x fewer, for scratch
//! traffic of 4x the input and output per chunk.

use super::direct::BIAS;
use super::problem::{ivec4, Operands, Problem};
use super::route::{Fit, Route, Winograd};
use super::target::Target;
use crate::error::Result;
use crate::ops::gemm::gemm_views;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

/// The three transforms.
pub static FAMILY: Family = Family {
    file: "conv_winograd.wgsl",
    source: include_str!("../../../shaders/conv_winograd.wgsl"),
    entries: &["wino_weight", "wino_input", "wino_output"],
    types: &[],
    overrides: &[BIAS, OverrideSlot { name: "CF", values: &[0.0, 1.0] }],
    uniform: <WinogradParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_winograd.wgsl.
    pub struct WinogradParams = "Params" {
        pub total: u32,
        pub row: u32,
        pub c: u32,
        pub o: u32,
        pub h: i32,
        pub w: i32,
        pub oh: u32,
        pub ow: u32,
        pub tw: u32,
        pub tiles: u32,
        pub ptiles: u32,
        pub pad_h: i32,
        pub pad_w: i32,
        pub in_off: u32,
        pub w_off: u32,
        pub out_off: u32,
        pub bias_off: u32,
        pub bias_stride: i32,
        pub act: u32,
        pub ld: u32,
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
        pub out_s: [i32; 4],
    }
}

/// Transformed elements per tile: the 16 GEMMs.
const ELEMENTS: usize = 16;
/// Invocations per workgroup of every entry.
const WG: usize = 256;
/// Fewer input or output channels than this keep the implicit GEMM: the
/// products' K or N would leave the GEMM's tiles mostly empty.
const MIN_CHANNELS: usize = 32;
/// Fewer output pixels (all images) than this keep the implicit GEMM: the
/// weight transform (16/9 of the weight written, then read by the GEMM)
/// is not paid back.
const MIN_PIXELS: usize = 1024;

/// (tiles along a row, tiles per image) of 2x2 output tiles.
fn tiling(p: &Problem) -> (usize, usize) {
    let g = &p.geo;
    let tw = g.ow.div_ceil(2);
    (tw, tw * g.oh.div_ceil(2))
}

/// Whether Winograd takes `p` on `t`: f32 3x3 stride-1 undilated ungrouped
/// convolutions, where the planner's rule (`wins`) or WGC_CONV_WINOGRAD=1
/// says so, and its scratch fits the adapter's bindings.
pub fn supports(p: &Problem, t: &Target) -> Fit<Winograd> {
    let g = &p.geo;
    if t.winograd == Some(false) {
        return Err("WGC_CONV_WINOGRAD=0".into());
    }
    if p.dtype != DType::F32 {
        return Err(format!("{} is not f32", p.dtype.wgsl()));
    }
    if !(g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.groups == 1) {
        return Err(format!(
            "not a 3x3 stride-1 undilated ungrouped convolution ({}x{} kernel, stride {}x{}, dilation {}x{}, {} group(s))",
            g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.groups
        ));
    }
    if t.winograd != Some(true) {
        wins(p)?;
    }
    let (_, tiles) = tiling(p);
    let f32s = |n: usize| (n * 4) as u64;
    let weight = f32s(ELEMENTS * g.c * g.o);
    let v_image = f32s(ELEMENTS * tiles * g.c);
    let m_image = f32s(ELEMENTS * tiles * g.o);
    // Channels-first rows of tiles are padded by up to 3 (`record`).
    let margin = f32s(ELEMENTS * 3 * g.c.max(g.o));
    let largest = weight.max(v_image.max(m_image) + margin);
    if largest > t.max_binding {
        return Err(format!("its scratch ({largest} bytes for one image or the weight) exceeds the binding size"));
    }
    let by_budget = t.cols_budget / (v_image + m_image);
    let by_binding = (t.max_binding - margin) / v_image.max(m_image);
    let chunk = (by_budget.min(by_binding) as usize).clamp(1, g.n);
    // The transforms' layout follows the input's (unless the setting fixes
    // it): channels at unit stride read and write channels fastest, else
    // tiles along image rows.
    let by_input = p.input.strides[1] != 1 || g.c == 1;
    let channels_first = t.winograd_tiles_fastest.unwrap_or(by_input);
    // Each entry's 1-D grid: the largest is a chunk's tiles times channels.
    let invocations = (chunk * tiles * g.c.max(g.o)).max(g.c * g.o);
    let groups = invocations.div_ceil(WG);
    if groups.div_ceil(t.max_workgroups) > t.max_workgroups {
        return Err(format!("{groups} workgroups exceed the grid"));
    }
    Ok(Winograd { chunk, channels_first })
}

/// The planner's rule: Winograd where the GEMMs have the channels to fill
/// their tiles and the pixels to pay for the weight transform.
pub fn wins(p: &Problem) -> Fit<()> {
    let g = &p.geo;
    if g.c < MIN_CHANNELS || g.o < MIN_CHANNELS {
        return Err(format!("{} input and {} output channels: under {MIN_CHANNELS}", g.c, g.o));
    }
    let pixels = g.n * g.oh * g.ow;
    if pixels < MIN_PIXELS {
        return Err(format!("{pixels} output pixels in all: under {MIN_PIXELS}"));
    }
    Ok(())
}

/// Record the plan `supports` made.
pub fn record(stream: &StreamShared, p: &Problem, plan: Winograd, ops: &Operands) -> Result<()> {
    let dev = &stream.device;
    let g = &p.geo;
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    // The output transform applies the activations it knows (`Route::applies`).
    let act = if Route::Winograd(plan).applies(p.activation) { p.activation as u32 } else { 0 };
    let (tw, tiles) = tiling(p);
    let f32s = |n: usize| (n * 4) as u64;
    let u_buf = stream.ordered_scratch(f32s(ELEMENTS * g.c * g.o))?;
    // Channels-first rows of tiles padded to whole 16 bytes for the GEMM.
    let row_len = |ptiles: usize| if plan.channels_first { ptiles.next_multiple_of(4) } else { ptiles };
    let v_buf = stream.ordered_scratch(f32s(ELEMENTS * row_len(plan.chunk * tiles) * g.c))?;
    let m_buf = stream.ordered_scratch(f32s(ELEMENTS * row_len(plan.chunk * tiles) * g.o))?;
    let (x_arg, in_off) = view_arg("x", ops.input);
    let (w_arg, w_off) = view_arg("wt", ops.weight);
    let (y_arg, out_off) = view_arg("y", ops.out);
    // Without a bias the binding still needs a buffer that this pass does not write.
    let (bias_arg, bias_off) = match ops.bias {
        Some(b) => view_arg("bias", b),
        None => (Arg::whole("bias", &u_buf), 0),
    };
    let has_bias = if p.bias.is_some() { 1.0 } else { 0.0 };
    let base = WinogradParams {
        total: 0,
        row: 0,
        c: g.c as u32,
        o: g.o as u32,
        h: g.h as i32,
        w: g.w as i32,
        oh: g.oh as u32,
        ow: g.ow as u32,
        tw: tw as u32,
        tiles: tiles as u32,
        ptiles: 0,
        pad_h: g.ph as i32,
        pad_w: g.pw as i32,
        in_off: 0,
        w_off,
        out_off: 0,
        bias_off,
        bias_stride: p.bias.unwrap_or(0) as i32,
        act,
        ld: 0,
        in_s: ivec4(&p.input.strides),
        w_s: ivec4(&p.weight.strides),
        out_s: ivec4(&p.out.strides),
    };

    let total = g.c * g.o;
    let (groups, row) = grid_1d(total as u64, WG as u32, max_dim);
    let params = WinogradParams { total: total as u32, row, ..base };
    let cf = if plan.channels_first { 1.0 } else { 0.0 };
    let variant = FAMILY.variant("wino_weight", &[], &[0.0, cf]);
    spec::record(stream, &Launch { variant, params, args: [w_arg, Arg::whole("u", &u_buf)], groups })?;
    // Row-major (rows, cols) matrices, one per transformed element.
    let matrices = |buffer, rows: usize, cols: usize, ld: usize| Tensor {
        buffer,
        dtype: DType::F32,
        shape: vec![ELEMENTS, rows, cols],
        strides: vec![(rows * ld) as isize, ld as isize, 1],
        offset: 0,
    };

    for n0 in (0..g.n).step_by(plan.chunk) {
        let nb = plan.chunk.min(g.n - n0);
        let ptiles = nb * tiles;
        let in_off = (in_off as isize + n0 as isize * p.input.strides[0]) as u32;
        let out_off = (out_off as isize + n0 as isize * p.out.strides[0]) as u32;
        let ld = row_len(ptiles);
        let chunk = WinogradParams { ptiles: ptiles as u32, ld: ld as u32, in_off, out_off, ..base };

        let total = ptiles * g.c;
        let (groups, row) = grid_1d(total as u64, WG as u32, max_dim);
        let params = WinogradParams { total: total as u32, row, ..chunk };
        let variant = FAMILY.variant("wino_input", &[], &[0.0, cf]);
        spec::record(stream, &Launch { variant, params, args: [x_arg, Arg::whole("v", &v_buf)], groups })?;

        if plan.channels_first {
            // M_k (O x tiles) = U_k (O x C) V_k (C x tiles).
            let (u, v) = (matrices(&u_buf, g.o, g.c, g.c), matrices(&v_buf, g.c, ptiles, ld));
            gemm_views(stream, 1.0, &u, &v, 0.0, &matrices(&m_buf, g.o, ptiles, ld), None)?;
        } else {
            // M_k (tiles x O) = V_k (tiles x C) U_k (C x O).
            let (v, u) = (matrices(&v_buf, ptiles, g.c, g.c), matrices(&u_buf, g.c, g.o, g.o));
            gemm_views(stream, 1.0, &v, &u, 0.0, &matrices(&m_buf, ptiles, g.o, g.o), None)?;
        }

        let total = ptiles * g.o;
        let (groups, row) = grid_1d(total as u64, WG as u32, max_dim);
        let params = WinogradParams { total: total as u32, row, ..chunk };
        let variant = FAMILY.variant("wino_output", &[], &[has_bias, cf]);
        let args = [Arg::whole("m", &m_buf), bias_arg, y_arg];
        spec::record(stream, &Launch { variant, params, args, groups })?;
    }
    Ok(())
}
