//! f16 convolution as an implicit GEMM on cooperative matrices (tensor
//! cores): shaders/conv_coop_f16.wgsl, generated with the tensor-core GEMM's
//! tile and K loop by tools/gen_gemm_coop_wgsl.py --conv (see its header).
//! The input's columns are gathered into workgroup memory on the fly, so no
//! scratch holds them; K split over workgroups (few output tiles, or a K
//! past K_CHUNK) stores f32 slabs that a second pass adds into the output.

use super::problem::{compiled_window, ivec4, weight_k_rows, Operands, Problem};
use super::route::{Coop, Fit};
use super::target::Target;
use crate::error::Result;
use crate::ops::gemm::epilogue::Epilogue;
use crate::ops::gemm::sum_slabs_epilogue;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::split::{scratch, K_CHUNK};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

/// Kernel heights and widths compiled in (the k decode then divides by
/// constants); 0 stands for any other size, read from the uniform.
const SIZES: &[f64] = &[0.0, 1.0, 3.0, 5.0, 7.0];
/// The generated tile: output channels x pixels per workgroup, K per step.
const BLOCK_M: usize = 128;
const BLOCK_N: usize = 128;
const BK: usize = 32;

pub static FAMILY: Family = Family {
    file: "conv_coop_f16.wgsl",
    source: concat!(
        include_str!("../../../shaders/conv_coop_f16.wgsl"),
        include_str!("../../../shaders/elementwise_scalar.wgsl"),
        include_str!("../../../shaders/epilogue_activation.wgsl")
    ),
    entries: &["conv_coop_f16", "conv_coop_f16_split"],
    types: &[TypeSlot { alias: "H", dtypes: &[DType::F16] }],
    overrides: &[
        OverrideSlot { name: "W_VEC", values: &[0.0, 1.0] },
        OverrideSlot { name: "KH", values: SIZES },
        OverrideSlot { name: "KW", values: SIZES },
    ],
    uniform: <ConvCoopParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_coop_f16.wgsl.
    pub struct ConvCoopParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub k: u32,
        pub c_per_group: u32,
        pub h: i32,
        pub w: i32,
        pub ohw: u32,
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
        pub has_bias: u32,
        pub k_chunk: u32,
        pub splits: u32,
        pub kw: u32,
        pub taps: u32,
        pub groups: u32,
        pub part_stride: u32,
        pub epi_act: u32,
        pub nan: u32,
        pub inf: u32,
        pub _pad0: [u32; 3],
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
        pub out_s: [i32; 4],
    }
}

/// f16 convolutions on devices with cooperative matrices, where the grid
/// and the slabs fit the adapter's limits and the operands' bindings hold
/// at least one of the words the kernel reads.
pub fn supports(p: &Problem, t: &Target) -> Fit<Coop> {
    let g = &p.geo;
    if !t.coop {
        return Err("the device has no cooperative matrices for the WGSL kernels".into());
    }
    let k = g.k();
    let pixels = g.n * g.oh * g.ow;
    let outputs = g.outputs();
    let fill = t.fill_splits((g.og, pixels, k), g.groups);
    let splits = k.div_ceil(K_CHUNK).max(fill).max(1);
    let k_chunk = k.div_ceil(splits).next_multiple_of(BK);
    let splits = k.div_ceil(k_chunk);
    let grid = [pixels.div_ceil(BLOCK_N), g.og.div_ceil(BLOCK_M), g.groups * splits];
    let slab_bytes = (splits * outputs * 4) as u64;
    if grid.iter().any(|&d| d > t.max_workgroups) {
        return Err(format!("a grid of {grid:?} workgroups exceeds the adapter's {} per dimension", t.max_workgroups));
    }
    if splits > 1 && (slab_bytes > t.max_binding || splits * outputs > u32::MAX as usize) {
        return Err(format!("{splits} slabs of {outputs} f32 sums exceed the binding size"));
    }
    // The kernel reads the weight as 16-byte words and the input as 4-byte
    // ones (in unused code too): buffers smaller than one such word (a
    // weight of a few elements) take im2col.
    if p.weight.bound_bytes < 16 || p.input.bound_bytes < 4 {
        return Err("the weight binds under 16 bytes or the input under 4".into());
    }
    let w = &p.weight;
    let w_vec = weight_k_rows(g.weight_shape(), w)
        && k.is_multiple_of(8)
        && w.strides[0] >= 0
        && w.strides[0] % 8 == 0
        && w.bound_offset.is_multiple_of(8);
    Ok(Coop { splits, k_chunk, w_vec, window: compiled_window(g.kh, g.kw, SIZES) })
}

/// Record the plan `supports` made.
pub fn record(stream: &StreamShared, p: &Problem, plan: Coop, ops: &Operands) -> Result<()> {
    let dev = &stream.device;
    let g = &p.geo;
    let Operands { input, weight, bias, out } = *ops;
    let Coop { splits, k_chunk, w_vec, window } = plan;
    let k = g.k();
    let pixels = g.n * g.oh * g.ow;
    let outputs = g.outputs();
    let grid = [pixels.div_ceil(BLOCK_N), g.og.div_ceil(BLOCK_M), g.groups * splits];
    let (x_arg, in_off) = view_arg("xw", input);
    let (w_arg, w_off) = view_arg("wv", weight);
    let (y_arg, out_off) = view_arg("y", out);
    let (bias_arg, bias_off) = match bias {
        Some(b) => view_arg("bias", b),
        None => (Arg { name: "bias", ..w_arg }, 0),
    };
    let params = ConvCoopParams {
        m: g.og as u32,
        n: pixels as u32,
        k: k as u32,
        c_per_group: g.cg as u32,
        h: g.h as i32,
        w: g.w as i32,
        ohw: (g.oh * g.ow) as u32,
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
        bias_stride: bias.map_or(0, |b| b.strides[0] as i32),
        has_bias: bias.is_some() as u32,
        k_chunk: k_chunk as u32,
        splits: splits as u32,
        kw: g.kw as u32,
        taps: (g.kh * g.kw) as u32,
        groups: g.groups as u32,
        part_stride: outputs as u32,
        // The activation where this launch stores the output; split K
        // leaves it to the sum pass.
        epi_act: if splits == 1 { p.activation as u32 } else { 0 },
        nan: f32::NAN.to_bits(),
        inf: f32::INFINITY.to_bits(),
        _pad0: [0; 3],
        in_s: ivec4(&input.strides),
        w_s: ivec4(&weight.strides),
        out_s: ivec4(&out.strides),
    };
    let overrides = [w_vec as u32 as f64, window[0] as f64, window[1] as f64];
    let groups = grid.map(|d| d as u32);
    if splits == 1 {
        let variant = FAMILY.variant("conv_coop_f16", &[DType::F16], &overrides);
        let args = [x_arg, w_arg, bias_arg, y_arg];
        return spec::record(stream, &Launch { variant, params, args, groups });
    }
    let parts = scratch(dev, (splits * outputs * 4) as u64)?;
    let variant = FAMILY.variant("conv_coop_f16_split", &[DType::F16], &overrides);
    let args = [x_arg, w_arg, bias_arg, Arg::whole("parts", &parts)];
    spec::record(stream, &Launch { variant, params, args, groups })?;
    // The slabs are (n, group, channel, oh, ow): out seen with those dims.
    let s = &out.strides;
    let by_group = Tensor {
        shape: vec![g.n, g.groups, g.og, g.oh, g.ow],
        strides: vec![s[0], s[1] * g.og as isize, s[1], s[2], s[3]],
        ..out.clone()
    };
    let epilogue = Epilogue { activation: p.activation, ..Epilogue::default() };
    sum_slabs_epilogue(stream, &parts, splits, (1.0, 0.0), &by_group, (x_arg, None), None, &epilogue)
}
