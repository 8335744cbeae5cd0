//! Depthwise convolution (one input channel per group), computed directly
//! by conv_direct.wgsl: one invocation per output element, or for kernels
//! of more than DIRECT_MAX_TAPS taps a workgroup per output element (and
//! per chunk of CHUNK_LEN taps, with a pass adding the chunks).

use super::problem::{compiled_window, ivec4, Operands, Problem};
use super::route::{Direct, Fit};
use super::target::Target;
use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::reduce::kernels::row_grid;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::split::{scratch, CHUNK_LEN};
use crate::ops::tensor::DType;
use crate::runtime::stream::StreamShared;

/// Most kernel taps (KH * KW) a depthwise convolution computes with one
/// invocation per output; larger kernels take a workgroup per output.
const DIRECT_MAX_TAPS: usize = 4096;

pub(crate) const BIAS: OverrideSlot = OverrideSlot { name: "BIAS", values: &[0.0, 1.0] };
/// Kernel heights and widths the direct kernel and the implicit GEMM
/// compile in (their k decode then divides by constants); 0 stands for any
/// other size, read from the uniform.
pub(crate) const SPECIALIZED_SIZES: &[f64] = &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0];

/// Depthwise convolution, computed directly.
pub static DIRECT_FAMILY: Family = Family {
    file: "conv_direct.wgsl",
    source: include_str!("../../../shaders/conv_direct.wgsl"),
    entries: &["conv_direct", "conv_direct_taps", "conv_direct_chunks", "conv_direct_finish"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        BIAS,
        OverrideSlot { name: "KH", values: SPECIALIZED_SIZES },
        OverrideSlot { name: "KW", values: SPECIALIZED_SIZES },
    ],
    uniform: <ConvDirectParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_direct.wgsl.
    pub struct ConvDirectParams = "Params" {
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
        pub row: u32,
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
        pub out_s: [i32; 4],
        pub total: u32,
        pub channels: u32,
        pub kh: u32,
        pub kw: u32,
        pub chunk_len: u32,
        pub chunks: u32,
        pub _pad0: [u32; 2],
    }
}

/// Depthwise convolutions (one input channel per group, several groups)
/// take this route; an error where their partial sums cannot be bound.
pub fn supports(p: &Problem, t: &Target) -> Result<Fit<Direct>> {
    let g = &p.geo;
    if !(g.cg == 1 && g.groups > 1) {
        return Ok(Err(format!("{} input channels per group in {} group(s): not depthwise", g.cg, g.groups)));
    }
    let taps = g.kh * g.kw;
    if taps <= DIRECT_MAX_TAPS {
        return Ok(Ok(Direct::PerOutput { window: compiled_window(g.kh, g.kw, SPECIALIZED_SIZES) }));
    }
    let chunks = taps.div_ceil(CHUNK_LEN);
    if chunks == 1 {
        return Ok(Ok(Direct::PerWorkgroup));
    }
    let total = g.outputs();
    let bytes = total as u64 * chunks as u64 * 4;
    if bytes > t.max_binding {
        bail!(
            TooLarge,
            "conv2d: {total} outputs of {taps} taps need {bytes} bytes of partial sums; the adapter binds at most {}",
            t.max_binding
        );
    }
    Ok(Ok(Direct::Chunked { chunks }))
}

pub fn record(stream: &StreamShared, p: &Problem, plan: Direct, ops: &Operands) -> Result<()> {
    let dev = &stream.device;
    let g = &p.geo;
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let (x, in_off) = view_arg("x", ops.input);
    let (wt, w_off) = view_arg("wt", ops.weight);
    let (y, out_off) = view_arg("y", ops.out);
    // Without a bias the kernel's bias binding still needs a buffer: the weight's.
    let (bias, bias_off) = match ops.bias {
        Some(b) => view_arg("bias", b),
        None => (Arg { name: "bias", ..wt }, 0),
    };
    let has_bias = if p.bias.is_some() { 1.0 } else { 0.0 };
    let total = g.outputs();
    let chunks = match plan {
        Direct::Chunked { chunks } => chunks,
        _ => 1,
    };
    let base = ConvDirectParams {
        m: (g.n * g.oh * g.ow) as u32,
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
        bias_stride: p.bias.unwrap_or(0) as i32,
        row: 0,
        in_s: ivec4(&p.input.strides),
        w_s: ivec4(&p.weight.strides),
        out_s: ivec4(&p.out.strides),
        total: total as u32,
        channels: g.o as u32,
        kh: g.kh as u32,
        kw: g.kw as u32,
        chunk_len: CHUNK_LEN as u32,
        chunks: chunks as u32,
        _pad0: [0; 2],
    };
    let params = |row: u32| ConvDirectParams { row, ..base };
    let variant = |entry| DIRECT_FAMILY.variant(entry, &[p.dtype], &[has_bias, 0.0, 0.0]);
    match plan {
        Direct::PerOutput { window } => {
            let overrides = [has_bias, window[0] as f64, window[1] as f64];
            let variant = DIRECT_FAMILY.variant("conv_direct", &[p.dtype], &overrides);
            let (groups, row) = grid_1d(total as u64, 256, max_dim);
            spec::record(stream, &Launch { variant, params: params(row), args: [x, wt, bias, y], groups })
        }
        Direct::PerWorkgroup => {
            let (groups, per_y) = row_grid(1, total, max_dim);
            let launch =
                Launch { variant: variant("conv_direct_taps"), params: params(per_y), args: [x, wt, bias, y], groups };
            spec::record(stream, &launch)
        }
        Direct::Chunked { chunks } => {
            let (groups, per_y) = row_grid(chunks as u32, total, max_dim);
            let parts = scratch(dev, total as u64 * chunks as u64 * 4)?;
            let parts_arg = Arg::whole("parts", &parts);
            let launch = Launch {
                variant: variant("conv_direct_chunks"),
                params: params(per_y),
                args: [x, wt, parts_arg],
                groups,
            };
            spec::record(stream, &launch)?;
            let (groups, row) = grid_1d(total as u64, 256, max_dim);
            let launch = Launch {
                variant: variant("conv_direct_finish"),
                params: params(row),
                args: [bias, y, parts_arg],
                groups,
            };
            spec::record(stream, &launch)
        }
    }
}
