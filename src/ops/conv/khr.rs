//! f16 convolution on the VK_KHR_cooperative_matrix GEMM kernel
//! (shaders/spirv/gemm_coop_khr.comp with CONV): per image, out[n]
//! (O x OH*OW) = W (O x KH*KW*C) times the columns of x[n] (or, for a
//! channels-last output, its transpose), with K ordered (kh, kw, c), so
//! that the kernel gathers each column's 8 channels of one tap as one
//! 16-byte load from a channels-last image (`Form`). The
//! image is copied channels-last into scratch unless it is already laid out
//! so, and the weight (O, C, KH, KW) into (O, KH, KW, C) unless it is; then
//! one launch, or, where the tiles are too few to fill the GPU, K runs into
//! f32 slabs summed (with the bias) by the GEMM's second pass. Ungrouped
//! convolutions with a multiple of 8 channels; the others keep the WGSL
//! implicit GEMM (conv_coop.rs).

use super::problem::{Operands, Problem, View};
use super::route::{Fit, Form, Khr};
use super::target::Target;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::gemm::coop::CoopParams;
use crate::ops::gemm::epilogue::{Epilogue, RESIDUAL_BEFORE as EPI_RESIDUAL_BEFORE};
use crate::ops::gemm::spirv::{EPILOGUE_F16, EPILOGUE_F32};
use crate::ops::gemm::sum_slabs_epilogue;
use crate::ops::movement;
use crate::ops::spec::uniform::{uniform, Uniform, UniformLayout};
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg};
use crate::ops::split::K_CHUNK;
use crate::ops::tensor::{contiguous_strides, DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::kernel::BindingKind;
use crate::runtime::spirv_kernel::{SpirvBinding, SpirvModule};
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// The kernel's block: output channels x pixels, K per step.
const BLOCK_M: usize = 128;
const BLOCK_N: usize = 128;
const BK: usize = 32;

uniform! {
    /// The convolution's geometry, after the GEMM's fields in the kernel's
    /// uniform (gemm_khr_common.glsl under CONV).
    pub struct ConvGather = "Params" {
        pub in_h: i32,
        pub in_w: i32,
        pub out_w: u32,
        pub cg: u32,
        pub kw: u32,
        pub stride_h: i32,
        pub stride_w: i32,
        pub pad_h: i32,
        pub pad_w: i32,
        pub dil_h: i32,
        pub dil_w: i32,
        /// Input rows and pixels apart, in 16-byte words.
        pub row8: i32,
        pub pix8: i32,
        /// Pixels per image where the images are folded into the GEMM's
        /// rows (image-as-A forms), else 0; then images img8 words apart.
        pub fold_pixels: u32,
        pub img8: i32,
        pub _pad0: u32,
    }
}

/// The kernel's uniform: the GEMM's, then the gather's.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ConvKhrParams {
    pub gemm: CoopParams,
    pub conv: ConvGather,
}

impl Uniform for ConvKhrParams {
    fn layout() -> UniformLayout {
        let mut fields = CoopParams::layout().fields;
        let base = std::mem::size_of::<CoopParams>();
        fields.extend(ConvGather::layout().fields.into_iter().map(|(name, at, size)| (name, base + at, size)));
        UniformLayout { wgsl_struct: "Params", size: std::mem::size_of::<ConvKhrParams>(), fields }
    }
}

const PARAMS_SIZE: u64 = std::mem::size_of::<ConvKhrParams>() as u64;

/// The GEMM's bindings with this kernel's uniform size.
const fn with_params<const N: usize>(mut b: [SpirvBinding; N]) -> [SpirvBinding; N] {
    let mut i = 0;
    while i < N {
        if matches!(b[i].kind, BindingKind::Uniform) {
            b[i].min_size = PARAMS_SIZE;
        }
        i += 1;
    }
    b
}

const EPI_F32: [SpirvBinding; 7] = with_params(EPILOGUE_F32);
const EPI_F16: [SpirvBinding; 7] = with_params(EPILOGUE_F16);
const DIRECT_F32: [SpirvBinding; 4] = with_params(first4(EPILOGUE_F32));
const DIRECT_F16: [SpirvBinding; 4] = with_params(first4(EPILOGUE_F16));

const fn first4(b: [SpirvBinding; 7]) -> [SpirvBinding; 4] {
    [b[0], b[1], b[2], b[3]]
}

macro_rules! conv_modules {
    ($($form:literal $threads:literal $out:ident $store:ident $binds:ident),* $(,)?) => {
        /// The modules: the image as B (c1; c1m64 with a 64-row block) or
        /// A (c2; c2n64 with a 64-column block), C f32 (K split into slabs:
        /// c1 forms only) or f16, stored directly or through the epilogue
        /// (`module_index`).
        pub static MODULES: &[SpirvModule] = &[$(SpirvModule {
            file: concat!("gemm_conv_khr_", $form, "_", stringify!($out), "_", stringify!($store), ".spv"),
            bytes: include_bytes!(concat!(
                "../../../shaders/spirv/generated/gemm_conv_khr_", $form, "_", stringify!($out), "_",
                stringify!($store), ".spv"
            )),
            entry: "main",
            workgroup_size: [$threads, 1, 1],
            bindings: &$binds,
        }),*];
    };
}

conv_modules! {
    "c1" 128 f32 epilogue EPI_F32, "c1" 128 f32 direct DIRECT_F32,
    "c1" 128 f16 epilogue EPI_F16, "c1" 128 f16 direct DIRECT_F16,
    "c1m64" 64 f32 epilogue EPI_F32, "c1m64" 64 f32 direct DIRECT_F32,
    "c1m64" 64 f16 epilogue EPI_F16, "c1m64" 64 f16 direct DIRECT_F16,
    "c2" 128 f16 epilogue EPI_F16, "c2" 128 f16 direct DIRECT_F16,
    "c2n64" 64 f16 epilogue EPI_F16, "c2n64" 64 f16 direct DIRECT_F16,
    "c2s" 128 f16 epilogue EPI_F16, "c2s" 128 f16 direct DIRECT_F16,
}

impl Form {
    fn image_a(self) -> bool {
        matches!(self, Form::ImageA | Form::ImageA64 | Form::ImageASmall)
    }
    fn block_m(self) -> usize {
        match self {
            Form::ImageB64 | Form::ImageASmall => 64,
            _ => BLOCK_M,
        }
    }
    fn block_n(self) -> usize {
        match self {
            Form::ImageA64 | Form::ImageASmall => 64,
            _ => BLOCK_N,
        }
    }
}

/// The module of a form, C dtype (f16, else f32: ImageB forms only) and
/// store.
fn module_index(form: Form, out_f16: bool, direct: bool) -> usize {
    debug_assert!(out_f16 || !form.image_a(), "channels-last outputs are never split into slabs");
    let first = match form {
        Form::ImageB => out_f16 as usize * 2,
        Form::ImageB64 => 4 + out_f16 as usize * 2,
        Form::ImageA => 8,
        Form::ImageA64 => 10,
        Form::ImageASmall => 12,
    };
    first + direct as usize
}

/// True if a 4-dim view (N, C, H, W) can be read as channels-last 16-byte
/// words: channels at unit stride, the other strides (of dims longer than
/// 1) and the offset multiples of 8 halves.
fn channels_last_words(shape: [usize; 4], v: &View) -> bool {
    let fits = |d: usize, ok: fn(isize) -> bool| shape[d] == 1 || ok(v.strides[d]);
    fits(1, |s| s == 1)
        && [0, 2, 3].into_iter().all(|d| fits(d, |s| s >= 0 && s % 8 == 0))
        && v.offset.is_multiple_of(8)
}

/// True if a weight (O, C, KH, KW) lies as rows of (KH, KW, C), each row
/// contiguous: what the kernel reads as A (K ordered (kh, kw, c)).
fn weight_rows(shape: [usize; 4], w: &View) -> bool {
    let [c, kw] = [shape[1], shape[3]];
    let at = |d: usize, stride: usize| shape[d] == 1 || w.strides[d] == stride as isize;
    channels_last_words(shape, w) && at(1, 1) && at(3, c) && at(2, kw * c)
}

/// A copy of `t` (N, C, H, W) into contiguous channels-last scratch. The
/// copy is given in the order of its output, (N, H, W, C), so that the
/// strided copy sees a batched transpose and stages it through workgroup
/// memory (elementwise_map's tiled kernel) instead of writing one element
/// per 16-byte word.
fn channels_last_copy(stream: &StreamShared, t: &Tensor) -> Result<Arc<Buffer>> {
    let [n, c, h, w] = [t.shape[0], t.shape[1], t.shape[2], t.shape[3]];
    let buffer = stream.ordered_scratch((n * h * w * c * 2) as u64)?;
    let nhwc = [n, h, w, c];
    let into = Tensor {
        buffer: &buffer,
        dtype: DType::F16,
        shape: nhwc.to_vec(),
        strides: contiguous_strides(&nhwc),
        offset: 0,
    };
    movement::copy(stream, &t.permuted(&[0, 2, 3, 1]), &into)?;
    Ok(buffer)
}

/// Ungrouped f16 convolutions with a multiple of 8 channels, where the
/// device runs these kernels, the output's pixels are one strided dim, and
/// the grid, the image's copy and the slabs fit the adapter's limits.
pub fn supports(p: &Problem, t: &Target) -> Fit<Khr> {
    let g = &p.geo;
    let os = &p.out.strides;
    if !t.khr {
        return Err("the device does not run the VK_KHR_cooperative_matrix kernels".into());
    }
    if g.groups != 1 {
        return Err(format!("{} groups", g.groups));
    }
    if !g.c.is_multiple_of(8) {
        return Err(format!("{} input channels, not a multiple of 8", g.c));
    }
    if !(g.oh == 1 || os[2] == g.ow as isize * os[3]) {
        return Err("the output's pixels are not one strided dim".into());
    }
    let (pixels, k) = (g.oh * g.ow, g.kh * g.kw * g.c);
    let outputs = g.outputs();
    // A channels-last output (channels at unit stride) is stored along its
    // rows with the output channels along N, and where its images are rows
    // of one stride, the images fold into M: blocks then span images, and
    // short images (7 x 7 pixels: 49 of a block's 128 rows) no longer leave
    // most of each block empty. Slabs (their bias per row) and other
    // outputs take the output channels along M, one product per image.
    let rows_out = os[1] == 1 || g.o == 1;
    let foldable =
        rows_out && g.n > 1 && os[3] >= 0 && os[0] == pixels as isize * os[3] && g.n * pixels <= u32::MAX as usize;
    let fill = match foldable {
        true => t.fill_splits((g.n * pixels, g.o, k), 1),
        false => t.fill_splits((g.o, pixels, k), g.n),
    };
    let splits = k.div_ceil(K_CHUNK).max(fill).max(1);
    let k_chunk = k.div_ceil(splits).next_multiple_of(BK);
    let splits = k.div_ceil(k_chunk);
    let few = g.o <= 64;
    let form = match (splits == 1 && rows_out, few) {
        (true, _) if small_block(t) => Form::ImageASmall,
        (true, false) => Form::ImageA,
        (true, true) => Form::ImageA64,
        (false, false) => Form::ImageB,
        (false, true) => Form::ImageB64,
    };
    // Folded, the rows' blocks must fit the grid's dimension (else one
    // product per image).
    let fold_images = foldable && form.image_a() && (g.n * pixels).div_ceil(form.block_m()) <= t.max_workgroups;
    let (m, n) = form_mn(form, g.o, pixels, g.n, fold_images);
    let grid = [n.div_ceil(form.block_n()), m.div_ceil(form.block_m()), images(g.n, fold_images) * splits];
    let slab_bytes = (splits * outputs * 4) as u64;
    // A channels-last copy of the image must fit one binding too (the
    // implicit GEMM needs none).
    let copy_input = !channels_last_words(g.input_shape(), &p.input);
    let copy_bytes = if copy_input { (g.n * g.h * g.w * g.c * 2) as u64 } else { 0 };
    if grid.iter().any(|&d| d > t.max_workgroups) {
        return Err(format!("a grid of {grid:?} workgroups exceeds the adapter's {} per dimension", t.max_workgroups));
    }
    if copy_bytes > t.max_binding {
        return Err(format!("the image's channels-last copy ({copy_bytes} bytes) exceeds the binding size"));
    }
    if splits > 1 && (slab_bytes > t.max_binding || splits * outputs > u32::MAX as usize) {
        return Err(format!("{splits} slabs of {outputs} f32 sums exceed the binding size"));
    }
    let whole = m.is_multiple_of(form.block_m()) && n.is_multiple_of(form.block_n());
    // One run stores f16 straight into the output where it is aligned and
    // takes no bias or activation: C (image, m, n) strides as the form sees
    // the output.
    let y_s = [os[0], os[1], os[3]];
    let c_s = if form.image_a() { [y_s[0], y_s[2], y_s[1]] } else { y_s };
    let residual = p.residual.is_some_and(|r| residual_fits(p, &r, fold_images, splits));
    let direct_store = splits == 1
        && whole
        && p.bias.is_none()
        && p.activation == Activation::None
        && p.residual.is_none()
        && c_s[2] == 1
        && c_s.iter().all(|s| *s >= 0 && s % 8 == 0)
        && p.out.bound_offset.is_multiple_of(8);
    let copy_weight = !weight_rows(g.weight_shape(), &p.weight);
    Ok(Khr { form, splits, k_chunk, copy_input, copy_weight, whole, direct_store, fold_images, residual })
}

/// True if the epilogue can add residual `r` (the output's shape) as it
/// stores: one K run (slabs are summed by a pass without one), its pixels
/// one strided dim as the output's, folded with the images where the
/// output's are, and no negative stride. Elsewhere the caller adds it in a
/// pass of its own.
fn residual_fits(p: &Problem, r: &View, fold_images: bool, splits: usize) -> bool {
    let g = &p.geo;
    let s = &r.strides;
    let pixels_one_dim = g.oh == 1 || s[2] == g.ow as isize * s[3];
    let images_fold = !fold_images || s[0] == (g.oh * g.ow) as isize * s[3];
    splits == 1 && pixels_one_dim && images_fold && s.iter().all(|&d| d >= 0)
}

/// True if a channels-last output takes the small block (ImageASmall):
/// by default every one (WGC_CONV_KHR_SMALL=0 keeps the 128-row blocks).
/// On an H100 it ran ResNet-50's and MobileNetV2's channels-last layers
/// 1.0-4.4x faster than the 128-row blocks (at batch 256: 3x3 at 64
/// channels 0.86 -> 0.51 ms, 1x1 256 -> 64 1.06 -> 0.35), the 3x3 at 256
/// channels (K 2304) 0.87x, and the networks 1.13-1.26x.
fn small_block(t: &Target) -> bool {
    t.khr_small.unwrap_or(true)
}

/// The GEMM's (M, N) for a form: (pixels, O) with the image as A (all
/// images' pixels where folded), else (O, pixels).
fn form_mn(form: Form, o: usize, pixels: usize, images: usize, fold: bool) -> (usize, usize) {
    match (form.image_a(), fold) {
        (true, true) => (images * pixels, o),
        (true, false) => (pixels, o),
        _ => (o, pixels),
    }
}

/// The GEMM's batch: one product where the images are folded into M.
fn images(n: usize, fold: bool) -> usize {
    if fold {
        1
    } else {
        n
    }
}

/// Record the plan `supports` made; `residual` (the problem's) is added in
/// the epilogue where the plan says so, else never read.
pub fn record(stream: &StreamShared, p: &Problem, plan: Khr, ops: &Operands, residual: Option<&Tensor>) -> Result<()> {
    let dev = &stream.device;
    let g = &p.geo;
    let Operands { input, weight, bias, out } = *ops;
    let os = &p.out.strides;
    let Khr { form, splits, k_chunk, whole, fold_images, .. } = plan;
    let residual = residual.filter(|_| plan.residual);
    let (pixels, k) = (g.oh * g.ow, g.kh * g.kw * g.c);
    let outputs = g.outputs();
    let (m, n) = form_mn(form, g.o, pixels, g.n, fold_images);
    let batch = images(g.n, fold_images);
    let grid = [n.div_ceil(form.block_n()), m.div_ceil(form.block_m()), batch * splits];
    let slab_bytes = (splits * outputs * 4) as u64;

    // The image channels-last, as (N, H, W, C) strides in halves.
    let copied_input;
    let (x_arg, x_off, x_s) = if !plan.copy_input {
        let (arg, off) = view_arg("x", input);
        (arg, off, [input.strides[0], input.strides[2], input.strides[3]])
    } else {
        copied_input = channels_last_copy(stream, input)?;
        let s = contiguous_strides(&[g.n, g.h, g.w, g.c]);
        (Arg::whole("x", &copied_input), 0, [s[0], s[1], s[2]])
    };
    // The weight as (O, KH*KW*C), K ordered (kh, kw, c).
    let copied_weight;
    let (w_arg, w_off, w_row) = if !plan.copy_weight {
        let (arg, off) = view_arg("w", weight);
        (arg, off, weight.strides[0])
    } else {
        copied_weight = channels_last_copy(stream, weight)?;
        (Arg::whole("w", &copied_weight), 0, k as isize)
    };
    let (bias_arg, bias_off, bias_stride) = match bias {
        Some(b) => {
            let (arg, off) = view_arg("bias", b);
            (arg, off, b.strides[0] as i32)
        }
        None => (Arg { name: "bias", ..w_arg }, 0, 0),
    };

    // The residual as C (image, m, n), read where the output is stored.
    let residual_arg = residual.map(|r| {
        let (arg, off) = view_arg("residual", r);
        let r_s = [r.strides[0], r.strides[1], r.strides[3]];
        let r_s = if form.image_a() { [r_s[0], r_s[2], r_s[1]] } else { r_s };
        (arg, off, r_s)
    });
    // C (n, m, n) at `c_s`; the image's operand gathered, the weight's read
    // K-dense (A row-major, or B as (N, K)).
    let params = |c_off: u32, c_s: [isize; 3], split_c: usize, with_bias: bool| {
        let image_a = form.image_a();
        let gemm = CoopParams {
            m: m as u32,
            n: n as u32,
            k: k as u32,
            batch_rank: 1,
            alpha: 1.0,
            beta: 0.0,
            has_bias: with_bias as u32,
            bias_stride,
            a_sm: if image_a { 0 } else { w_row as i32 },
            a_sk: 1,
            b_sk: 1,
            b_sn: if image_a { w_row as i32 } else { 0 },
            c_sm: c_s[1] as i32,
            c_sn: c_s[2] as i32,
            bias_off,
            k_chunk: k_chunk as u32,
            a_off: if image_a { x_off } else { w_off },
            b_off: if image_a { w_off } else { x_off },
            c_off,
            splits: splits as u32,
            split_c: split_c as u32,
            _pad0: [0; 3],
            batch_shape: pack_u32(&[batch], 1),
            a_bstride: pack_i32(&[if image_a && !fold_images { x_s[0] } else { 0 }]),
            b_bstride: pack_i32(&[if image_a { 0 } else { x_s[0] }]),
            c_bstride: pack_i32(&[if fold_images { 0 } else { c_s[0] }]),
            // The activation where this launch stores the output (the
            // slabs of a split K get it in the sum pass).
            epi_act: if split_c == 0 { p.activation as u32 } else { 0 },
            epi_flags: if residual_arg.is_some() { EPI_RESIDUAL_BEFORE } else { 0 },
            res_off: residual_arg.as_ref().map_or(0, |r| r.1),
            res_sm: residual_arg.as_ref().map_or(0, |r| r.2[1] as i32),
            res_sn: residual_arg.as_ref().map_or(0, |r| r.2[2] as i32),
            res_bstride: pack_i32(&[residual_arg.as_ref().map_or(0, |r| if fold_images { 0 } else { r.2[0] })]),
            nan: f32::NAN.to_bits(),
            inf: f32::INFINITY.to_bits(),
            ..bytemuck::Zeroable::zeroed()
        };
        let conv = ConvGather {
            in_h: g.h as i32,
            in_w: g.w as i32,
            out_w: g.ow as u32,
            cg: g.c as u32,
            kw: g.kw as u32,
            stride_h: g.sh as i32,
            stride_w: g.sw as i32,
            pad_h: g.ph as i32,
            pad_w: g.pw as i32,
            dil_h: g.dh as i32,
            dil_w: g.dw as i32,
            row8: (x_s[1] / 8) as i32,
            pix8: (x_s[2] / 8) as i32,
            fold_pixels: if fold_images { pixels as u32 } else { 0 },
            img8: if fold_images { (x_s[0] / 8) as i32 } else { 0 },
            _pad0: 0,
        };
        ConvKhrParams { gemm, conv }
    };
    let (a, b) = if form.image_a() {
        (Arg { name: "a", ..x_arg }, Arg { name: "b", ..w_arg })
    } else {
        (Arg { name: "a", ..w_arg }, Arg { name: "b", ..x_arg })
    };
    let groups = grid.map(|d| d as u32);
    // `bias`: the epilogue's bias binding (any buffer where has_bias is 0).
    let launch = |out_f16: bool, direct: bool, params: ConvKhrParams, c: Arg, bias: Arg| -> Result<()> {
        let kernel = MODULES[module_index(form, out_f16, direct)].kernel(dev)?;
        let c = Arg { name: "c", ..c };
        if direct {
            spec::record_kernel(stream, &kernel, &params, &[a, b, c], groups)
        } else {
            // The epilogue's scale: unread (its flag is 0); the residual
            // too where there is none.
            let scale = Arg { name: "scale", ..a };
            let residual = residual_arg.as_ref().map_or(Arg { name: "residual", ..a }, |r| r.0);
            let args = [a, b, c, Arg { name: "bias", ..bias }, scale, residual];
            spec::record_kernel(stream, &kernel, &params, &args, groups)
        }
    };

    let (y_arg, y_off) = view_arg("c", out);
    // out as (image, channel, pixel) strides, and as C (image, m, n).
    let y_s = [os[0], os[1], os[3]];
    if splits == 1 {
        let c_s = if form.image_a() { [y_s[0], y_s[2], y_s[1]] } else { y_s };
        return launch(true, plan.direct_store, params(y_off, c_s, 0, bias.is_some()), y_arg, bias_arg);
    }
    // K runs into f32 slabs (N, O, OH*OW), summed with the bias into out.
    // Each K run writes its whole slab: reusable in stream order.
    let parts = stream.ordered_scratch(slab_bytes)?;
    let slab_s = [(m * n) as isize, n as isize, 1];
    launch(false, whole, params(0, slab_s, outputs, false), Arg::whole("c", &parts), w_arg)?;
    let out_as_c = Tensor { shape: vec![g.n, m, n], strides: y_s.to_vec(), ..out.clone() };
    let bias = bias.map(|_| (bias_arg, bias_off, bias_stride));
    let epilogue = Epilogue { activation: p.activation, ..Epilogue::default() };
    let unread = (Arg { name: "bias", ..w_arg }, None);
    sum_slabs_epilogue(stream, &parts, splits, (1.0, 0.0), &out_as_c, unread, bias, &epilogue)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uniform_is_the_gemms_then_the_gathers() {
        let layout = ConvKhrParams::layout();
        let gemm = CoopParams::layout();
        assert_eq!(&layout.fields[..gemm.fields.len()], &gemm.fields[..]);
        let (name, at, _) = layout.fields[gemm.fields.len()];
        assert_eq!((name, at), ("in_h", gemm.size));
        assert_eq!(layout.size, gemm.size + 64);
    }

    #[test]
    fn every_module_names_its_variant() {
        assert_eq!(MODULES.len(), 14);
        let forms = [
            (Form::ImageB, "c1", 128),
            (Form::ImageA, "c2", 128),
            (Form::ImageB64, "c1m64", 64),
            (Form::ImageA64, "c2n64", 64),
            (Form::ImageASmall, "c2s", 128),
        ];
        for (form, name, threads) in forms {
            for (out_f16, direct) in [(false, false), (false, true), (true, false), (true, true)] {
                if form.image_a() && !out_f16 {
                    continue;
                }
                let m = &MODULES[module_index(form, out_f16, direct)];
                let out = if out_f16 { "f16" } else { "f32" };
                let store = if direct { "direct" } else { "epilogue" };
                assert_eq!(m.file, format!("gemm_conv_khr_{name}_{out}_{store}.spv"));
                assert_eq!(m.workgroup_size, [threads, 1, 1]);
                assert_eq!(m.bindings.len(), if direct { 4 } else { 7 });
                let c_binding = m.bindings.iter().find(|b| b.name == "c").unwrap();
                assert_eq!(c_binding.min_size, if out_f16 { 2 } else { 4 });
            }
        }
    }
}
