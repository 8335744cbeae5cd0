//! f16 convolution as im2col + GEMM: a chunk of images' columns (pixels x
//! K, K padded to whole 8s) are written to scratch by conv_im2col.wgsl,
//! then `gemm_views` multiplies each group's weight rows by them (on tensor
//! cores where the adapter has them, else the tiled f16 kernel), f32
//! accumulation, the bias added and the f16 output rounded once in its
//! epilogue.

use super::problem::{ivec4, weight_k_rows, Operands, Problem};
use super::route::Im2col;
use super::target::Target;
use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::gemm::{gemm_views_act, RowBias};
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, TypeSlot};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

pub static FAMILY: Family = Family {
    file: "conv_im2col.wgsl",
    source: include_str!("../../../shaders/conv_im2col.wgsl"),
    entries: &["conv_im2col8", "conv_pack_weight"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F16] }],
    overrides: &[],
    uniform: <Im2colParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of conv_im2col.wgsl.
    pub struct Im2colParams = "Params" {
        pub total: u32,
        pub row: u32,
        pub kp: u32,
        pub k: u32,
        pub ohw: u32,
        pub ow: u32,
        pub kw: u32,
        pub taps: u32,
        pub h: i32,
        pub w: i32,
        pub stride_h: i32,
        pub stride_w: i32,
        pub pad_h: i32,
        pub pad_w: i32,
        pub dil_h: i32,
        pub dil_w: i32,
        pub in_off: u32,
        pub w_off: u32,
        pub _pad0: [u32; 2],
        pub in_s: [i32; 4],
        pub w_s: [i32; 4],
    }
}

/// Every f16 convolution the other routes leave: its chunking; an error
/// where one image's columns or the packed weight exceed the adapter's
/// binding size.
pub fn supports(p: &Problem, t: &Target) -> Result<Im2col> {
    let g = &p.geo;
    let k = g.k();
    let ohw = g.oh * g.ow;
    // Weight rows usable as they are: unit K stride and whole 16-byte rows
    // for the tensor-core GEMM's loads; else packed into (O, kp) scratch.
    let pack_weight = !(weight_k_rows(g.weight_shape(), &p.weight) && k.is_multiple_of(8));
    let kp = k.next_multiple_of(8);
    let binding = t.max_binding;
    let per_image = bytes_of(ohw * kp);
    if per_image > binding {
        bail!(TooLarge, "conv2d: one image's f16 columns ({per_image} bytes) exceed the adapter's binding size");
    }
    if pack_weight {
        let elements = g.o * kp;
        if bytes_of(elements) > binding {
            bail!(TooLarge, "conv2d: the packed f16 weight ({elements} elements) exceeds the adapter's binding size");
        }
    }
    let chunk = ((t.cols_budget.min(binding) / per_image) as usize).clamp(1, g.n);
    // A flat output (pixels at one stride) is one N = OH*OW product per
    // image; any other view takes a product per output row (N = OW).
    let flat = g.oh <= 1 || p.out.strides[2] == g.ow as isize * p.out.strides[3];
    Ok(Im2col { pack_weight, kp, chunk, flat })
}

/// f16 scratch bytes of `elements`, whole words.
fn bytes_of(elements: usize) -> u64 {
    (elements as u64 * 2).next_multiple_of(4)
}

/// The uniform of one im2col launch over `plan`'s problem, the input at
/// `input`'s strides (fields set per launch left 0).
fn base_params(p: &Problem, kp: usize, input: &Tensor, weight: &Tensor) -> Im2colParams {
    let g = &p.geo;
    Im2colParams {
        total: 0,
        row: 0,
        kp: kp as u32,
        k: g.k() as u32,
        ohw: (g.oh * g.ow) as u32,
        ow: g.ow as u32,
        kw: g.kw as u32,
        taps: (g.kh * g.kw) as u32,
        h: g.h as i32,
        w: g.w as i32,
        stride_h: g.sh as i32,
        stride_w: g.sw as i32,
        pad_h: g.ph as i32,
        pad_w: g.pw as i32,
        dil_h: g.dh as i32,
        dil_w: g.dw as i32,
        in_off: 0,
        w_off: 0,
        _pad0: [0; 2],
        in_s: ivec4(&input.strides),
        w_s: ivec4(&weight.strides),
    }
}

/// The weight packed into (O, kp) f16 scratch, K ordered (c, kh, kw), zero
/// past K.
pub(super) fn pack_weight(stream: &StreamShared, p: &Problem, kp: usize, weight: &Tensor) -> Result<Arc<Buffer>> {
    let dev = &stream.device;
    let elements = p.geo.o * kp;
    let packed = stream.ordered_scratch(bytes_of(elements))?;
    let (w_arg, w_off) = view_arg("wt", weight);
    let (groups, row) = grid_1d(elements as u64, 256, dev.limits.max_compute_workgroups_per_dimension);
    let params = Im2colParams { total: elements as u32, row, w_off, ..base_params(p, kp, weight, weight) };
    let variant = FAMILY.variant("conv_pack_weight", &[DType::F16], &[]);
    let args = [w_arg, Arg::whole("packed", &packed)];
    spec::record(stream, &Launch { variant, params, args, groups })?;
    Ok(packed)
}

/// Write the columns (nb images from n0, pixels, kp) of input channels
/// c0.. into `cols`, 8 of a row per invocation.
pub(super) fn write_columns(
    stream: &StreamShared,
    p: &Problem,
    kp: usize,
    input: &Tensor,
    cols: &Buffer,
    (n0, nb, c0): (usize, usize, usize),
) -> Result<()> {
    let g = &p.geo;
    let (x_arg, x_off) = view_arg("x", input);
    let in_off = x_off as i64 + n0 as i64 * input.strides[0] as i64 + c0 as i64 * input.strides[1] as i64;
    let words = nb * g.oh * g.ow * kp / 8;
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (groups, row) = grid_1d(words as u64, 256, max_dim);
    let base = base_params(p, kp, input, input);
    let params = Im2colParams { total: words as u32, row, in_off: in_off as u32, ..base };
    let variant = FAMILY.variant("conv_im2col8", &[DType::F16], &[]);
    let args = [x_arg, Arg::whole("cols", cols)];
    spec::record(stream, &Launch { variant, params, args, groups })
}

/// f16 scratch for `elements` columns.
pub(super) fn columns_scratch(stream: &StreamShared, elements: usize) -> Result<Arc<Buffer>> {
    stream.ordered_scratch(bytes_of(elements))
}

/// Record the plan `supports` made.
pub fn record(stream: &StreamShared, p: &Problem, plan: Im2col, ops: &Operands) -> Result<()> {
    record_with(stream, p, plan, ops, Activation::None)
}

/// `record` with `activation` after the bias in the GEMM's epilogue.
pub(super) fn record_with(
    stream: &StreamShared,
    p: &Problem,
    plan: Im2col,
    ops: &Operands,
    activation: Activation,
) -> Result<()> {
    let g = &p.geo;
    let Operands { input, weight, bias, out } = *ops;
    let Im2col { pack_weight: pack, kp, chunk, flat } = plan;
    let k = g.k();
    let ohw = g.oh * g.ow;
    let packed_buf;
    let a_full = if !pack {
        Tensor { shape: vec![g.o, k], strides: vec![weight.strides[0], 1], offset: weight.offset, ..weight.clone() }
    } else {
        packed_buf = pack_weight(stream, p, kp, weight)?;
        Tensor {
            buffer: &packed_buf,
            dtype: DType::F16,
            shape: vec![g.o, kp],
            strides: vec![kp as isize, 1],
            offset: 0,
        }
    };

    let cols_buf = columns_scratch(stream, chunk * ohw * kp)?;
    for n0 in (0..g.n).step_by(chunk) {
        let nb = chunk.min(g.n - n0);
        for grp in 0..g.groups {
            let c0 = grp * g.cg;
            write_columns(stream, p, kp, input, &cols_buf, (n0, nb, c0))?;

            let o0 = grp * g.og;
            let a_off = (a_full.offset as isize + o0 as isize * a_full.strides[0]) as usize;
            let out_off = (out.offset as isize + n0 as isize * out.strides[0] + o0 as isize * out.strides[1]) as usize;
            let cols_t = |shape: Vec<usize>, strides: Vec<isize>| Tensor {
                buffer: &cols_buf,
                dtype: DType::F16,
                shape,
                strides,
                offset: 0,
            };
            let (b, c, a) = if flat {
                let b = cols_t(vec![nb, kp, ohw], vec![(ohw * kp) as isize, 1, kp as isize]);
                let c = Tensor {
                    shape: vec![nb, g.og, ohw],
                    strides: vec![out.strides[0], out.strides[1], out.strides[3]],
                    offset: out_off,
                    ..out.clone()
                };
                let a = Tensor {
                    shape: vec![1, g.og, kp],
                    strides: vec![0, a_full.strides[0], 1],
                    offset: a_off,
                    ..a_full.clone()
                };
                (b, c, a)
            } else {
                let b =
                    cols_t(vec![nb, g.oh, kp, g.ow], vec![(ohw * kp) as isize, (g.ow * kp) as isize, 1, kp as isize]);
                let c = Tensor {
                    shape: vec![nb, g.oh, g.og, g.ow],
                    strides: vec![out.strides[0], out.strides[2], out.strides[1], out.strides[3]],
                    offset: out_off,
                    ..out.clone()
                };
                let a = Tensor {
                    shape: vec![1, 1, g.og, kp],
                    strides: vec![0, 0, a_full.strides[0], 1],
                    offset: a_off,
                    ..a_full.clone()
                };
                (b, c, a)
            };
            let group_bias = bias.map(|t| Tensor {
                shape: vec![g.og],
                offset: (t.offset as isize + o0 as isize * t.strides[0]) as usize,
                ..t.clone()
            });
            let rb = group_bias.as_ref().map(|t| RowBias { tensor: t, stride: t.strides[0] });
            gemm_views_act(stream, (1.0, 0.0), &a, &b, &c, rb, activation)?;
        }
    }
    Ok(())
}
