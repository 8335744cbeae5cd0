//! 1x1 stride-1 unpadded ungrouped convolutions whose input and output are
//! channels-last with packed pixels (channel stride 1, one stride over
//! every (image, row, column)): out (N*H*W, O) = x (N*H*W, C) W^T, one GEMM
//! with the batch folded into M. Where the GEMM's plan applies an epilogue
//! in its kernel or split-K pass (the tensor-core kernels), the bias, the
//! activation and the residual go there; where it would apply it through
//! f32 scratch (the tiled kernel), the product runs transposed, out^T =
//! W x^T, with the bias as the tiled kernel's row bias, and the caller
//! applies the activation in place (a scratch pass made MobileNetV2 f32
//! 4.9x slower on an H100).
//!
//! By default (`GEMM_MIN_OUT_CHANNELS`, `GEMM_MIN_IN_CHANNELS`) f16
//! convolutions of at least 128 input and 128 output channels take it on
//! the VK_KHR_cooperative_matrix GEMM for every K. On an H200 at batch 256 (ResNet-50's and MobileNetV2's 1x1 layers)
//! it ran them 1.1-4.1x faster than the tensor-core gather (most where an
//! image has few pixels: 7 x 7), while at 24-64 output channels its
//! 128-column blocks were half empty or worse and the gather's 64-column
//! block was 1.2-2x faster; the WGSL kernel that the GEMM planner gives K
//! under 512 ran them 1.1-2.1x slower than the KHR one.

use super::problem::{Operands, Problem, View};
use super::route::{Fit, Nhwc1x1};
use super::target::Target;
use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::gemm::epilogue::{Epilogue, EpilogueViews, Residual};
use crate::ops::gemm::plan::plan as gemm_plan;
use crate::ops::gemm::problem::{Matrix, Problem as GemmProblem};
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::with_epilogue::{gemm_epilogue_with, GemmEpilogue};
use crate::ops::gemm::{gemm_views, RowBias};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

/// The one stride of dims (size, stride), outermost first, that are one
/// run of rows (size-1 dims do not count; `lone` where all are size 1).
fn fold(dims: &[(usize, isize)], lone: isize) -> Option<isize> {
    let mut first = None;
    let mut expect = 0isize;
    for &(size, stride) in dims.iter().rev().filter(|d| d.0 > 1) {
        match first {
            None => first = Some(stride),
            Some(_) if stride != expect => return None,
            Some(_) => {}
        }
        expect = stride.checked_mul(size as isize)?;
    }
    Some(first.unwrap_or(lone))
}

/// A (N, C, H, W) view's pixels as GEMM rows: over all images (rows
/// stride) or per image ((image stride, pixel stride)).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rows {
    All(isize),
    PerImage(isize, isize),
}

fn rows(shape: [usize; 4], s: [isize; 4]) -> Option<Rows> {
    let [n, c, h, w] = shape;
    let lone = c as isize;
    if let Some(r) = fold(&[(n, s[0]), (h, s[2]), (w, s[3])], lone) {
        return Some(Rows::All(r));
    }
    fold(&[(h, s[2]), (w, s[3])], lone).map(|p| Rows::PerImage(s[0], p))
}

/// The shape prefix and strides of `rows` as a GEMM operand's rows (and
/// batch): (N*H*W) or (N, H*W).
fn as_rows(r: Rows, per_image: bool, n: usize, pixels: usize) -> (Vec<usize>, Vec<isize>) {
    match (r, per_image) {
        (Rows::All(s), false) => (vec![n * pixels], vec![s]),
        (Rows::All(s), true) => (vec![n, pixels], vec![s * pixels as isize, s]),
        (Rows::PerImage(i, p), _) => (vec![n, pixels], vec![i, p]),
    }
}

/// The operands' (shape, strides) as the direct form multiplies them:
/// A = x (rows, C), B = W^T (C, O), C = out (rows, O), and the residual's.
struct Views {
    a: (Vec<usize>, Vec<isize>),
    b: (Vec<usize>, Vec<isize>),
    c: (Vec<usize>, Vec<isize>),
    residual: Option<(Vec<usize>, Vec<isize>)>,
}

fn views(p: &Problem, per_image: bool, with_residual: bool) -> Option<Views> {
    let g = &p.geo;
    let pixels = g.h * g.w;
    let matrix = |shape: [usize; 4], v: &View, cols: usize| -> Option<(Vec<usize>, Vec<isize>)> {
        let (mut sh, mut st) = as_rows(rows(shape, v.strides)?, per_image, g.n, pixels);
        sh.push(cols);
        st.push(v.strides[1]);
        Some((sh, st))
    };
    let (w0, w1) = (p.weight.strides[0], p.weight.strides[1]);
    let residual = match (p.residual, with_residual) {
        (Some(r), true) => Some(matrix(g.out_shape(), &r, g.o)?),
        _ => None,
    };
    Some(Views {
        a: matrix(g.input_shape(), &p.input, g.c)?,
        b: (vec![g.c, g.o], vec![w1, w0]),
        c: matrix(g.out_shape(), &p.out, g.o)?,
        residual,
    })
}

/// The GEMM problem of `v` (offsets from the views), with an epilogue so
/// that the planner says where it would apply one.
fn gemm_problem(p: &Problem, v: &Views) -> GemmProblem {
    let batched = v.a.0.len() == 3;
    let mat = |(sh, st): &(Vec<usize>, Vec<isize>), offset: u32| {
        let r = sh.len();
        Matrix {
            rows: sh[r - 2],
            cols: sh[r - 1],
            strides: [st[r - 2], st[r - 1]],
            offset,
            batch_strides: st[..r - 2].to_vec(),
        }
    };
    let batch: Vec<usize> = if batched { vec![p.geo.n] } else { Vec::new() };
    let mut b = mat(&v.b, p.weight.bound_offset);
    b.batch_strides = vec![0; batch.len()];
    let residual = v
        .residual
        .as_ref()
        .zip(p.residual)
        .map(|(r, view)| Residual { matrix: mat(r, view.bound_offset), after: false });
    let c = mat(&v.c, p.out.bound_offset);
    GemmProblem {
        m: c.rows,
        n: c.cols,
        k: p.geo.c,
        batch_count: batch.iter().product(),
        a_batch: batch.clone(),
        b_batch: Vec::new(),
        a: mat(&v.a, p.input.bound_offset),
        b,
        c,
        batch,
        dtype: p.dtype,
        out: p.dtype,
        c_bf16: false,
        alpha: 1.0,
        beta: 0.0,
        bias: None,
        epilogue: Epilogue { activation: Activation::Relu, col_bias: p.bias, scale: None, residual },
    }
}

/// Output channels from which an f16 channels-last 1x1 convolution is one
/// GEMM by default (the module's measurements): the KHR GEMM's blocks are
/// 128 columns wide.
pub(crate) const GEMM_MIN_OUT_CHANNELS: usize = 128;
/// Input channels (K) from which it is: below, the gather's small block
/// ran faster on an H100 (24, 32, 64 -> 144, 192, 256 at batch 256: 0.46,
/// 0.16, 0.71 ms against 0.69, 0.32, 0.86), at 128 they tied.
pub(crate) const GEMM_MIN_IN_CHANNELS: usize = 128;

/// The GEMM settings the route plans and records under: the KHR kernel for
/// every K where it may run (`khr_every_k`), else the device's.
fn settings(base: GemmSettings, khr_every_k: bool) -> GemmSettings {
    match khr_every_k {
        true => GemmSettings { spirv: base.spirv.or(Some(1)), ..base },
        false => base,
    }
}

pub fn supports(p: &Problem, t: &Target) -> Fit<Nhwc1x1> {
    let g = &p.geo;
    if !(g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.groups == 1) {
        return Err("not a 1x1 stride-1 unpadded ungrouped convolution".into());
    }
    let khr_every_k = t.khr && matches!(p.dtype, DType::F16 | DType::BF16);
    match t.gemm_1x1_nhwc {
        Some(false) => return Err("off (WGC_CONV_1X1_NHWC=0)".into()),
        Some(true) => {}
        None if khr_every_k && g.o >= GEMM_MIN_OUT_CHANNELS && g.c >= GEMM_MIN_IN_CHANNELS => {}
        None => {
            return Err(format!(
                "by default f16 with at least {GEMM_MIN_IN_CHANNELS} input and {GEMM_MIN_OUT_CHANNELS} output \
                 channels on the KHR GEMM only ({} with {} and {}; WGC_CONV_1X1_NHWC=1 turns it on)",
                p.dtype.wgsl(),
                g.c,
                g.o
            ))
        }
    }
    let unit = |v: &View, c: usize| c == 1 || v.strides[1] == 1;
    let all = |shape, v: &View| matches!(rows(shape, v.strides), Some(Rows::All(_)));
    let packed = |shape, v: &View, c| unit(v, c) && all(shape, v);
    if !(packed(g.input_shape(), &p.input, g.c) && packed(g.out_shape(), &p.out, g.o)) {
        return Err("the input or output is not channels-last with packed pixels".into());
    }
    // The residual in the GEMM's epilogue where its pixels fold into rows
    // (over all images, else per image); else left to the caller's pass.
    let (residual, per_image) = match p.residual.map(|r| rows(g.out_shape(), r.strides)) {
        Some(Some(Rows::All(_))) => (true, false),
        Some(Some(Rows::PerImage(..))) => (true, true),
        _ => (false, false),
    };
    let v = views(p, per_image, residual).expect("packed operands fold");
    let (profile, base) = t.gemm();
    let plan = gemm_plan(&gemm_problem(p, &v), &profile, &settings(base, khr_every_k))
        .map_err(|e| format!("the GEMM declines: {e}"))?;
    let fused = !plan.epilogue_pass;
    // f16 where the tensor-core convolutions run: they store with the
    // activation, so a GEMM off the tensor cores (a matrix-vector kernel
    // for a few output channels, the tiled kernel) is left to them.
    if !fused && p.dtype == DType::F16 && (t.khr || t.coop) {
        return Err(format!(
            "its GEMM would not take an epilogue in its kernel ({}): the tensor-core convolutions do",
            plan.route
        ));
    }
    Ok(Nhwc1x1 { fused, residual: residual && fused, per_image, khr_every_k })
}

/// The view with its last two dims swapped.
fn t<'a>(x: &Tensor<'a>) -> Tensor<'a> {
    let r = x.rank();
    let mut x = x.clone();
    x.shape.swap(r - 2, r - 1);
    x.strides.swap(r - 2, r - 1);
    x
}

fn view<'a>(t: &Tensor<'a>, (shape, strides): (Vec<usize>, Vec<isize>)) -> Tensor<'a> {
    Tensor { shape, strides, ..t.clone() }
}

/// Record the convolution of `p` on route `r`; `residual` where
/// `r.residual` (the GEMM epilogue's), with the problem's activation where
/// `r.fused`.
pub fn record(stream: &StreamShared, p: &Problem, r: Nhwc1x1, ops: &Operands, residual: Option<&Tensor>) -> Result<()> {
    let Operands { input, weight, bias, out } = *ops;
    let Some(v) = views(p, r.per_image, r.residual) else {
        bail!(Internal, "conv2d: a planned channels-last 1x1 convolution's views do not fold");
    };
    let (a, b, c) = (view(input, v.a), view(weight, v.b), view(out, v.c));
    let plain = bias.is_none() && p.activation == Activation::None && !r.residual;
    if r.fused || plain {
        let res = match (v.residual, residual) {
            (Some(shape), Some(t)) => Some(view(t, shape)),
            _ => None,
        };
        let epilogue = EpilogueViews {
            bias,
            scale: None,
            residual: res.as_ref(),
            activation: if r.fused { p.activation } else { Activation::None },
            residual_after: false,
        };
        let call = GemmEpilogue { alpha: 1.0, a: &a, transpose_a: false, b: &b, transpose_b: false, epilogue, c: &c };
        return gemm_epilogue_with(stream, &call, &settings(GemmSettings::of(&stream.device), r.khr_every_k));
    }
    // out^T (O, rows) = W (O, C) x^T (C, rows), the bias per row.
    let rb = bias.map(|t| RowBias { tensor: t, stride: t.strides[0] });
    gemm_views(stream, 1.0, &t(&b), &t(&a), 0.0, &t(&c), rb)
}
