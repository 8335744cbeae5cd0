//! 2-D convolution (NCHW input, OIHW weight): 1x1 stride-1 convolutions run
//! as a batched GEMM, one-input-channel-per-group (depthwise) convolutions
//! a direct kernel, everything else an implicit GEMM.

use super::common::whole;
use super::common::{kernel, launch, Params};
use super::grid::grid_1d;
use super::matmul::{check_output, gemm_views, RowBias};
use super::reduce_kernels::{launch as launch_slots, row_grid};
use super::split::{scratch, CHUNK_LEN, K_CHUNK};
use super::tensor::{check_kernel_counts, expect_shape, numel, same_device, DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

/// Most kernel taps (KH * KW) a depthwise convolution computes with one
/// invocation per output; larger kernels take a workgroup per output.
const DIRECT_MAX_TAPS: usize = 4096;

/// Strides, padding, dilation and groups. Zero strides, dilations and
/// groups mean 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct Conv2dParams {
    pub stride: [u32; 2],
    pub pad: [u32; 2],
    pub dilation: [u32; 2],
    pub groups: u32,
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

fn ivec4(s: &[isize]) -> [i32; 4] {
    [s[0] as i32, s[1] as i32, s[2] as i32, s[3] as i32]
}

/// Depthwise convolution (conv_direct.wgsl): one invocation per output
/// element, or for kernels of more than DIRECT_MAX_TAPS taps a workgroup per
/// output element (and per chunk of CHUNK_LEN taps, with a pass adding the
/// chunks). `base` gives the Params fields shared with conv.wgsl.
fn depthwise(
    stream: &StreamShared,
    base: &dyn Fn() -> Params,
    [input, weight, bias, out]: [&Tensor; 4],
    [channels, kh, kw]: [usize; 3],
    bias_flag: &str,
) -> Result<()> {
    let dev = &stream.device;
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let total = out.numel() as u64;
    let taps = kh * kw;
    let chunks = if taps > DIRECT_MAX_TAPS { taps.div_ceil(CHUNK_LEN) } else { 1 };
    let params = |row: u32| {
        let mut p = base().u32(row);
        for s in [&input.strides, &weight.strides, &out.strides] {
            for v in ivec4(s) {
                p = p.i32(v);
            }
        }
        p.u32(total as u32)
            .u32(channels as u32)
            .u32(kh as u32)
            .u32(kw as u32)
            .u32(CHUNK_LEN as u32)
            .u32(chunks as u32)
            .align16()
    };
    let values = [("BIAS", bias_flag)];
    if taps <= DIRECT_MAX_TAPS {
        let (grid, row) = grid_1d(total, 256, max_dim);
        let kern = kernel(dev, "conv_direct.wgsl", "conv_direct", &values)?;
        return launch(stream, &kern, &[input, weight, bias, out], params(row).bytes(), grid);
    }
    let (groups, per_y) = row_grid(chunks as u32, total as usize, max_dim);
    if chunks == 1 {
        let kern = kernel(dev, "conv_direct.wgsl", "conv_direct_taps", &values)?;
        return launch_slots(
            stream,
            &kern,
            &[input.bind(0), weight.bind(1), bias.bind(2), out.bind(3)],
            &params(per_y),
            groups,
        );
    }
    let bytes = total * chunks as u64 * 4;
    if bytes > dev.limits.max_storage_buffer_binding_size {
        bail!(
            TooLarge,
            "conv2d: {total} outputs of {taps} taps need {bytes} bytes of partial sums; the adapter binds at most {}",
            dev.limits.max_storage_buffer_binding_size
        );
    }
    let parts = scratch(dev, bytes)?;
    let kern = kernel(dev, "conv_direct.wgsl", "conv_direct_chunks", &values)?;
    launch_slots(stream, &kern, &[input.bind(0), weight.bind(1), whole(5, &parts)], &params(per_y), groups)?;
    let (grid, row) = grid_1d(total, 256, max_dim);
    let finish = kernel(dev, "conv_direct.wgsl", "conv_direct_finish", &values)?;
    launch_slots(stream, &finish, &[bias.bind(2), out.bind(3), whole(5, &parts)], &params(row), grid)
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
    if input.dtype != DType::F32 {
        bail!(Unsupported, "conv2d: {} is not supported (f32 only)", input.dtype.wgsl());
    }
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
    let mut inputs = vec![input, weight];
    if let Some(b) = bias {
        inputs.push(b);
    }
    check_output(out, &inputs, "conv2d")?;
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
    let bias_t = bias.unwrap_or(weight);
    let base = || {
        Params::new()
            .u32(m as u32)
            .u32(og as u32)
            .u32(k as u32)
            .u32(cg as u32)
            .i32(h as i32)
            .i32(w as i32)
            .u32(oh as u32)
            .u32(ow as u32)
            .i32(sh as i32)
            .i32(sw as i32)
            .i32(ph as i32)
            .i32(pw as i32)
            .i32(dh as i32)
            .i32(dw as i32)
            .u32(input.bound_offset())
            .u32(weight.bound_offset())
            .u32(out.bound_offset())
            .u32(bias.map_or(0, |b| b.bound_offset()))
            .i32(bias.map_or(0, |b| b.strides[0] as i32))
    };
    let bias_flag = if bias.is_some() { "true" } else { "false" };
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;

    if cg == 1 && groups > 1 {
        return depthwise(stream, &base, [input, weight, bias_t, out], [o, kh, kw], bias_flag);
    }
    let mut p = base();

    let tiles64 = m.div_ceil(64) * og.div_ceil(64) * groups;
    // K is always split into runs of at most K_CHUNK (see split.rs).
    let min_splits = k.div_ceil(K_CHUNK);
    let big = tiles64 >= 1024 && min_splits == 1;
    let rm = if big && m > 64 { 2 } else { 1 };
    let rn = if big && og > 64 { 2 } else { 1 };
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
    p = p.u32(splits as u32);
    for s in [&input.strides, &weight.strides, &out.strides] {
        for v in ivec4(s) {
            p = p.i32(v);
        }
    }
    p = p.u32(k_chunk as u32).align16();
    let split = splits > 1;
    if split {
        let total = out.numel() as u64;
        let (grid, row) = grid_1d(total, 256, max_dim);
        let mut ip = Params::new()
            .u32(total as u32)
            .u32(o as u32)
            .u32((oh * ow) as u32)
            .u32(ow as u32)
            .u32(out.bound_offset())
            .u32(bias.map_or(0, |b| b.bound_offset()))
            .i32(bias.map_or(0, |b| b.strides[0] as i32))
            .u32(row);
        for v in ivec4(&out.strides) {
            ip = ip.i32(v);
        }
        let init = kernel(dev, "conv_init.wgsl", "conv_init", &[("BIAS", bias_flag)])?;
        launch(stream, &init, &[bias_t, out], ip.bytes(), grid)?;
    }
    let (rm_s, rn_s, bk_s, kh_s, kw_s) =
        (rm.to_string(), rn.to_string(), bk.to_string(), kh.to_string(), kw.to_string());
    let kern = kernel(
        dev,
        "conv.wgsl",
        "conv_gemm",
        &[
            ("RM", &rm_s),
            ("RN", &rn_s),
            ("BK", &bk_s),
            ("KH", &kh_s),
            ("KW", &kw_s),
            ("BIAS", if split { "false" } else { bias_flag }),
            ("SPLIT", if split { "true" } else { "false" }),
        ],
    )?;
    let grid = [groups_xy[0] as u32, groups_xy[1] as u32, (groups * splits) as u32];
    launch(stream, &kern, &[input, weight, bias_t, out], p.bytes(), grid)
}
