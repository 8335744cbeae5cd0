//! f16 convolution as an implicit GEMM on cooperative matrices (tensor
//! cores): shaders/conv_coop_f16.wgsl, generated with the tensor-core GEMM's
//! tile and K loop by tools/gen_gemm_coop_wgsl.py --conv (see its header).
//! The input's columns are gathered into workgroup memory on the fly, so no
//! scratch holds them; K split over workgroups (few output tiles, or a K
//! past K_CHUNK) stores f32 slabs that a second pass adds into the output.

use crate::error::Result;
use crate::ops::conv::{ivec4, Geometry};
use crate::ops::gemm::coop as gemm_coop;
use crate::ops::gemm::sum_slabs_into;
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
    source: include_str!("../../../shaders/conv_coop_f16.wgsl"),
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
        pub _pad0: [u32; 2],
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
        pub out_s: [i32; 4],
    }
}

/// True if the weight's (C/groups, KH, KW) dims are one K dim of unit
/// stride (size-1 dims do not count).
pub fn weight_rows(weight: &Tensor) -> bool {
    let mut expect = 1isize;
    for d in (1..4).rev() {
        if weight.shape[d] > 1 && weight.strides[d] != expect {
            return false;
        }
        expect = expect.saturating_mul(weight.shape[d] as isize);
    }
    true
}

/// The f16 convolution on tensor cores; shapes validated by `conv2d`, the
/// output not empty. Ok(false) where this path does not apply (no
/// cooperative matrices, a grid or slabs past the adapter's limits): the
/// caller takes im2col + GEMM.
pub fn conv2d(
    stream: &StreamShared,
    g: &Geometry,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &Tensor,
) -> Result<bool> {
    let dev = &stream.device;
    if !gemm_coop::available(dev) {
        return Ok(false);
    }
    let max_dim = dev.limits.max_compute_workgroups_per_dimension as usize;
    let k = g.cg * g.kh * g.kw;
    let pixels = g.n * g.oh * g.ow;
    let outputs = out.numel();
    let fill = gemm_coop::fill_splits(dev, (g.og, pixels, k), g.groups);
    let splits = k.div_ceil(K_CHUNK).max(fill).max(1);
    let k_chunk = k.div_ceil(splits).next_multiple_of(BK);
    let splits = k.div_ceil(k_chunk);
    let grid = [pixels.div_ceil(BLOCK_N), g.og.div_ceil(BLOCK_M), g.groups * splits];
    let slab_bytes = (splits * outputs * 4) as u64;
    if grid.iter().any(|&d| d > max_dim)
        || (splits > 1
            && (slab_bytes > dev.limits.max_storage_buffer_binding_size || splits * outputs > u32::MAX as usize))
    {
        return Ok(false);
    }

    let (x_arg, in_off) = view_arg("xw", input);
    let (w_arg, w_off) = view_arg("wv", weight);
    let (y_arg, out_off) = view_arg("y", out);
    let (bias_arg, bias_off) = match bias {
        Some(b) => view_arg("bias", b),
        None => (Arg { name: "bias", ..w_arg }, 0),
    };
    // The kernel reads the weight as 16-byte words and the input as 4-byte
    // ones (in unused code too): buffers smaller than one such word (a
    // weight of a few elements) take im2col.
    if w_arg.bound_bytes() < 16 || x_arg.bound_bytes() < 4 {
        return Ok(false);
    }
    let w_vec = weight_rows(weight)
        && k.is_multiple_of(8)
        && weight.strides[0] >= 0
        && weight.strides[0] % 8 == 0
        && w_off.is_multiple_of(8);
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
        _pad0: [0; 2],
        in_s: ivec4(&input.strides),
        w_s: ivec4(&weight.strides),
        out_s: ivec4(&out.strides),
    };
    let specialized = |v: usize| SIZES.contains(&(v as f64));
    let (kh_c, kw_c) = if specialized(g.kh) && specialized(g.kw) { (g.kh as f64, g.kw as f64) } else { (0.0, 0.0) };
    let overrides = [w_vec as u32 as f64, kh_c, kw_c];
    let groups = grid.map(|d| d as u32);
    if splits == 1 {
        let variant = FAMILY.variant("conv_coop_f16", &[DType::F16], &overrides);
        let args = [x_arg, w_arg, bias_arg, y_arg];
        spec::record(stream, &Launch { variant, params, args, groups })?;
        return Ok(true);
    }
    let parts = scratch(dev, slab_bytes)?;
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
    sum_slabs_into(stream, &parts, splits, (1.0, 0.0), &by_group, x_arg, None)?;
    Ok(true)
}
