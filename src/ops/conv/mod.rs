//! 2-D convolution (NCHW input, OIHW weight): 1x1 stride-1 convolutions run
//! as a batched GEMM, one-input-channel-per-group (depthwise) convolutions
//! a direct kernel, everything else an implicit GEMM.

pub mod bn_act;
pub mod coop;
pub mod fold_bn;
pub mod im2col;
pub mod khr;

use crate::bail;
use crate::error::Result;
use crate::ops::gemm::{gemm_views, RowBias};
use crate::ops::grid::grid_1d;
use crate::ops::reduce::kernels::row_grid;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, check_output, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot};
use crate::ops::split::{scratch, CHUNK_LEN, K_CHUNK};
use crate::ops::tensor::{check_kernel_counts, expect_shape, numel, same_device, DType, Tensor};
use crate::runtime::stream::StreamShared;
use std::sync::OnceLock;

/// Most kernel taps (KH * KW) a depthwise convolution computes with one
/// invocation per output; larger kernels take a workgroup per output.
const DIRECT_MAX_TAPS: usize = 4096;

const BIAS: OverrideSlot = OverrideSlot { name: "BIAS", values: &[0.0, 1.0] };
/// Kernel heights and widths the implicit GEMM compiles in (its k decode then
/// divides by constants); 0 stands for any other size, read from the uniform.
const SPECIALIZED_SIZES: &[f64] = &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0];

/// The implicit GEMM (shaders/conv.wgsl with the micro-kernel of
/// shaders/gemm_tile.wgsl, which matmul.wgsl shares).
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

/// Strides, padding, dilation and groups. Zero strides, dilations and
/// groups mean 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct Conv2dParams {
    pub stride: [u32; 2],
    pub pad: [u32; 2],
    pub dilation: [u32; 2],
    pub groups: u32,
}

/// A validated convolution's sizes: input (n, c, h, w), weight (o, cg, kh,
/// kw), output (oh, ow), og output channels per group, strides, padding and
/// dilations (at least 1 where they must be).
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub o: usize,
    pub cg: usize,
    pub og: usize,
    pub kh: usize,
    pub kw: usize,
    pub oh: usize,
    pub ow: usize,
    pub sh: usize,
    pub sw: usize,
    pub ph: usize,
    pub pw: usize,
    pub dh: usize,
    pub dw: usize,
    pub groups: usize,
}

/// The first kernel tried for f16 convolutions that are neither 1x1 GEMMs
/// nor depthwise (each falls back to the next where it does not apply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum F16Route {
    /// The SPIR-V tensor-core kernel's channels-last gather (conv_khr.rs).
    Gather,
    /// The WGSL implicit GEMM on tensor cores (conv_coop.rs).
    Implicit,
    /// im2col into scratch and the f16 GEMM (conv_im2col.rs).
    Im2col,
}

/// WGC_CONV_F16, read once: `implicit` or `im2col` starts there, for
/// comparisons; anything else (or unset) at the gather.
fn f16_route() -> F16Route {
    static ROUTE: OnceLock<F16Route> = OnceLock::new();
    *ROUTE.get_or_init(|| match std::env::var("WGC_CONV_F16").as_deref() {
        Ok("implicit") => F16Route::Implicit,
        Ok("im2col") => F16Route::Im2col,
        _ => F16Route::Gather,
    })
}

/// Output size of one spatial dim, or None when the input is too small.
pub fn out_size(input: usize, kernel: usize, stride: usize, pad: usize, dilation: usize) -> Option<usize> {
    let span = dilated(kernel, dilation);
    let padded = input + 2 * pad;
    if padded < span {
        return None;
    }
    Some((padded - span) / stride + 1)
}

/// Input rows (or columns) one window spans, saturating.
fn dilated(kernel: usize, dilation: usize) -> usize {
    dilation.saturating_mul(kernel.max(1) - 1).saturating_add(1)
}

/// A 4-d view's strides as the kernels' uniforms hold them.
pub(crate) fn ivec4(s: &[isize]) -> [i32; 4] {
    [s[0] as i32, s[1] as i32, s[2] as i32, s[3] as i32]
}

/// Depthwise convolution (conv_direct.wgsl): one invocation per output
/// element, or for kernels of more than DIRECT_MAX_TAPS taps a workgroup per
/// output element (and per chunk of CHUNK_LEN taps, with a pass adding the
/// chunks). `base` has the fields shared with conv.wgsl filled in.
fn depthwise(
    stream: &StreamShared,
    base: ConvDirectParams,
    [x, wt, bias, y]: [Arg; 4],
    total: usize,
    has_bias: f64,
    dtype: DType,
) -> Result<()> {
    let dev = &stream.device;
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let taps = (base.kh * base.kw) as usize;
    let chunks = if taps > DIRECT_MAX_TAPS { taps.div_ceil(CHUNK_LEN) } else { 1 };
    let params = |row: u32| ConvDirectParams { row, chunk_len: CHUNK_LEN as u32, chunks: chunks as u32, ..base };
    let variant = |entry| DIRECT_FAMILY.variant(entry, &[dtype], &[has_bias, 0.0, 0.0]);
    if taps <= DIRECT_MAX_TAPS {
        // The window compiled in where both its sizes are among SPECIALIZED_SIZES.
        let specialized = |v: u32| SPECIALIZED_SIZES.contains(&(v as f64));
        let window = if specialized(base.kh) && specialized(base.kw) { [base.kh, base.kw] } else { [0, 0] };
        let variant = DIRECT_FAMILY.variant("conv_direct", &[dtype], &[has_bias, window[0] as f64, window[1] as f64]);
        let (groups, row) = grid_1d(total as u64, 256, max_dim);
        let launch = Launch { variant, params: params(row), args: [x, wt, bias, y], groups };
        return spec::record(stream, &launch);
    }
    let (groups, per_y) = row_grid(chunks as u32, total, max_dim);
    if chunks == 1 {
        let launch =
            Launch { variant: variant("conv_direct_taps"), params: params(per_y), args: [x, wt, bias, y], groups };
        return spec::record(stream, &launch);
    }
    let bytes = total as u64 * chunks as u64 * 4;
    if bytes > dev.limits.max_storage_buffer_binding_size {
        bail!(
            TooLarge,
            "conv2d: {total} outputs of {taps} taps need {bytes} bytes of partial sums; the adapter binds at most {}",
            dev.limits.max_storage_buffer_binding_size
        );
    }
    let parts = scratch(dev, bytes)?;
    let parts_arg = Arg::whole("parts", &parts);
    let launch =
        Launch { variant: variant("conv_direct_chunks"), params: params(per_y), args: [x, wt, parts_arg], groups };
    spec::record(stream, &launch)?;
    let (groups, row) = grid_1d(total as u64, 256, max_dim);
    let launch =
        Launch { variant: variant("conv_direct_finish"), params: params(row), args: [bias, y, parts_arg], groups };
    spec::record(stream, &launch)
}

pub fn conv2d(
    stream: &StreamShared,
    params: &Conv2dParams,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &Tensor,
) -> Result<()> {
    let dev = &stream.device;
    let mut all = vec![input, weight, out];
    if let Some(b) = bias {
        all.push(b);
    }
    same_device(dev, &all)?;
    for t in &all {
        if t.dtype != input.dtype {
            bail!(DtypeMismatch, "conv2d: input is {} but another operand is {}", input.dtype.wgsl(), t.dtype.wgsl());
        }
    }
    if !input.dtype.is_float() {
        bail!(Unsupported, "conv2d: {} is not supported (f32 or f16)", input.dtype.wgsl());
    }
    input.dtype.check_device(dev)?;
    for (t, name) in [(input, "input"), (weight, "weight"), (out, "out")] {
        if t.rank() != 4 {
            bail!(ShapeMismatch, "conv2d: {name} has rank {}; expected 4", t.rank());
        }
    }
    let (sh, sw) = (params.stride[0].max(1) as usize, params.stride[1].max(1) as usize);
    let (dh, dw) = (params.dilation[0].max(1) as usize, params.dilation[1].max(1) as usize);
    let (ph, pw) = (params.pad[0] as usize, params.pad[1] as usize);
    let groups = params.groups.max(1) as usize;
    let [n, c, h, w] = [input.shape[0], input.shape[1], input.shape[2], input.shape[3]];
    let [o, cg, kh, kw] = [weight.shape[0], weight.shape[1], weight.shape[2], weight.shape[3]];
    if c % groups != 0 || o % groups != 0 {
        bail!(ShapeMismatch, "conv2d: {c} input and {o} output channels are not both divisible by {groups} groups");
    }
    if cg != c / groups {
        bail!(ShapeMismatch, "conv2d: weight has {cg} input channels per group; input gives {}", c / groups);
    }
    if kh == 0 || kw == 0 {
        bail!(ShapeMismatch, "conv2d: the kernel is empty ({kh}x{kw})");
    }
    if let Some(b) = bias {
        expect_shape(b, &[o], "conv2d: bias")?;
    }
    let (Some(oh), Some(ow)) = (out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)) else {
        bail!(ShapeMismatch, "conv2d: the padded input {h}x{w} is smaller than the dilated {kh}x{kw} kernel");
    };
    expect_shape(out, &[n, o, oh, ow], "conv2d: out")?;
    // Dims of out are bounded by its buffer; those of input and weight may
    // be broadcast (zero strides) far past what the kernels count.
    check_kernel_counts(
        "conv2d",
        &[
            ("the padded input height", h + 2 * ph),
            ("the padded input width", w + 2 * pw),
            ("the input channels", c),
            ("the dilated kernel height", dilated(kh, dh)),
            ("the dilated kernel width", dilated(kw, dw)),
            ("a stride", sh.max(sw)),
            ("C/groups * KH * KW", numel(&[cg, kh, kw])),
        ],
    )?;
    let mut inputs = vec![("the input", input), ("the weight", weight)];
    if let Some(b) = bias {
        inputs.push(("the bias", b));
    }
    check_output("conv2d", out, &inputs, Sharing::Separate)?;
    dev.check_alive()?;
    if out.numel() == 0 {
        return Ok(());
    }

    // 1x1 stride-1 unpadded convolution over flat spatial dims: a GEMM per image.
    let flat_in = input.strides[3] == 1 && (h <= 1 || input.strides[2] == w as isize);
    let flat_out = out.strides[3] == 1 && (oh <= 1 || out.strides[2] == ow as isize);
    // Small images run better through the implicit GEMM, which folds the batch into M.
    if kh == 1
        && kw == 1
        && sh == 1
        && sw == 1
        && ph == 0
        && pw == 0
        && groups == 1
        && flat_in
        && flat_out
        && oh * ow >= 256
    {
        let a = Tensor { shape: vec![o, c], strides: vec![weight.strides[0], weight.strides[1]], ..weight.clone() };
        let b =
            Tensor { shape: vec![n, c, h * w], strides: vec![input.strides[0], input.strides[1], 1], ..input.clone() };
        let cv = Tensor { shape: vec![n, o, oh * ow], strides: vec![out.strides[0], out.strides[1], 1], ..out.clone() };
        let rb = bias.map(|t| RowBias { tensor: t, stride: t.strides[0] });
        return gemm_views(stream, 1.0, &a, &b, 0.0, &cv, rb);
    }

    let og = o / groups;
    let m = n * oh * ow;
    let k = cg * kh * kw;
    let (x_arg, in_off) = view_arg("x", input);
    let (w_arg, w_off) = view_arg("wt", weight);
    let (y_arg, out_off) = view_arg("y", out);
    // Without a bias the kernels' bias binding still needs a buffer: the weight's.
    let (bias_arg, bias_off) = match bias {
        Some(b) => view_arg("bias", b),
        None => (Arg { name: "bias", ..w_arg }, 0),
    };
    let bias_stride = bias.map_or(0, |b| b.strides[0] as i32);
    let has_bias = if bias.is_some() { 1.0 } else { 0.0 };
    let [in_s, w_s, out_s] = [&input.strides, &weight.strides, &out.strides].map(|s| ivec4(s));
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;

    if cg == 1 && groups > 1 {
        let base = ConvDirectParams {
            m: m as u32,
            o_per_group: og as u32,
            k: k as u32,
            c_per_group: cg as u32,
            h: h as i32,
            w: w as i32,
            oh: oh as u32,
            ow: ow as u32,
            stride_h: sh as i32,
            stride_w: sw as i32,
            pad_h: ph as i32,
            pad_w: pw as i32,
            dil_h: dh as i32,
            dil_w: dw as i32,
            in_off,
            w_off,
            out_off,
            bias_off,
            bias_stride,
            row: 0,
            in_s,
            w_s,
            out_s,
            total: out.numel() as u32,
            channels: o as u32,
            kh: kh as u32,
            kw: kw as u32,
            chunk_len: 0,
            chunks: 0,
            _pad0: [0; 2],
        };
        return depthwise(stream, base, [x_arg, w_arg, bias_arg, y_arg], out.numel(), has_bias, input.dtype);
    }

    if input.dtype == DType::F16 {
        let geo = Geometry { n, c, h, w, o, cg, og, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, groups };
        // Each kernel returns false where it does not apply: the next takes it.
        let route = f16_route();
        if route == F16Route::Gather && crate::ops::conv::khr::conv2d(stream, &geo, input, weight, bias, out)? {
            return Ok(());
        }
        if route != F16Route::Im2col && crate::ops::conv::coop::conv2d(stream, &geo, input, weight, bias, out)? {
            return Ok(());
        }
        return crate::ops::conv::im2col::conv2d(stream, &geo, input, weight, bias, out);
    }

    let tiles64 = m.div_ceil(64) * og.div_ceil(64) * groups;
    // K is always split into runs of at most K_CHUNK (see split.rs).
    let min_splits = k.div_ceil(K_CHUNK);
    let big = tiles64 >= 1024 && min_splits == 1;
    let rm = if big && m > 64 { 2 } else { 1 };
    let rn = if big && og > 64 { 2 } else { 1 };
    // gemm_tile.wgsl's BK for these blocks.
    let bk = if rm * rn == 4 { 8 } else { 16 };
    // Too few output tiles to fill a large GPU (about two per multiprocessor
    // on an H200) and a long K: split K over workgroups that add partial sums
    // into the output, set to the bias first. Only with 64x64 tiles: measured
    // on an H200, larger tiles with the adding epilogue run far slower.
    let mut splits = if tiles64 < 320 && k >= 1024 { (1024 / tiles64).clamp(1, k / 512) } else { 1 }.max(min_splits);
    let k_chunk = k.div_ceil(splits).div_ceil(bk) * bk;
    splits = k.div_ceil(k_chunk).max(1);
    let groups_xy = [og.div_ceil(64 * rn), m.div_ceil(64 * rm)];
    if groups_xy.iter().any(|&g| g > max_dim as usize) || groups * splits > max_dim as usize {
        bail!(TooLarge, "conv2d: the output needs more workgroups than this adapter allows per dimension");
    }
    let split = splits > 1;
    if split {
        let total = out.numel() as u64;
        let (grid, row) = grid_1d(total, 256, max_dim);
        let params = ConvInitParams {
            total: total as u32,
            channels: o as u32,
            ohw: (oh * ow) as u32,
            ow: ow as u32,
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
        o_per_group: og as u32,
        k: k as u32,
        c_per_group: cg as u32,
        h: h as i32,
        w: w as i32,
        oh: oh as u32,
        ow: ow as u32,
        stride_h: sh as i32,
        stride_w: sw as i32,
        pad_h: ph as i32,
        pad_w: pw as i32,
        dil_h: dh as i32,
        dil_w: dw as i32,
        in_off,
        w_off,
        out_off,
        bias_off,
        bias_stride,
        splits: splits as u32,
        in_s,
        w_s,
        out_s,
        k_chunk: k_chunk as u32,
        kw: kw as u32,
        taps: (kh * kw) as u32,
        _pad0: 0,
    };
    // The kernel's size compiled in where it is one of SPECIALIZED_SIZES (both dims), else read from params.
    let specialized = |v: usize| SPECIALIZED_SIZES.contains(&(v as f64));
    let (kh_c, kw_c) = if specialized(kh) && specialized(kw) { (kh as f64, kw as f64) } else { (0.0, 0.0) };
    // Split: the bias is in the output already (conv_init).
    let overrides = [rm as f64, rn as f64, kh_c, kw_c, if split { 0.0 } else { has_bias }, split as u32 as f64];
    let variant = FAMILY.variant("conv_gemm", &[], &overrides);
    let grid = [groups_xy[0] as u32, groups_xy[1] as u32, (groups * splits) as u32];
    spec::record(stream, &Launch { variant, params, args: [x_arg, w_arg, bias_arg, y_arg], groups: grid })
}
