//! 2-D max, average and global average pooling over NCHW f32 or f16
//! tensors (f16 summed in f32).

use super::common::{kernel, launch, Params};
use super::grid::grid_1d;
use super::matmul::check_output;
use super::tensor::{check_kernel_counts, expect_shape, numel, same_device, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

/// Window, strides (0 means the window size, as in PyTorch) and padding.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pool2dParams {
    pub kernel: [u32; 2],
    pub stride: [u32; 2],
    pub pad: [u32; 2],
    pub count_include_pad: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PoolKind {
    Max,
    Avg,
}

fn check_io(stream: &StreamShared, input: &Tensor, out: &Tensor, what: &str) -> Result<()> {
    same_device(&stream.device, &[input, out])?;
    if input.dtype != out.dtype {
        bail!(DtypeMismatch, "{what}: input is {} and out is {}", input.dtype.wgsl(), out.dtype.wgsl());
    }
    if !input.dtype.is_float() {
        bail!(Unsupported, "{what}: {} is not supported (f32 or f16)", input.dtype.wgsl());
    }
    input.dtype.check_device(&stream.device)?;
    if input.rank() != 4 {
        bail!(ShapeMismatch, "{what}: input has rank {}; expected 4 (N, C, H, W)", input.rank());
    }
    Ok(())
}

fn base_params(input: &Tensor, total: u64) -> Params {
    Params::new()
        .u32(total as u32)
        .u32(input.shape[1] as u32)
        .i32(input.shape[2] as i32)
        .i32(input.shape[3] as i32)
}

fn push_strides(mut p: Params, input: &Tensor, out: &Tensor) -> Params {
    for s in [&input.strides, &out.strides] {
        for &v in s.iter() {
            p = p.i32(v as i32);
        }
    }
    p
}

pub fn pool2d(stream: &StreamShared, kind: PoolKind, params: &Pool2dParams, input: &Tensor, out: &Tensor) -> Result<()> {
    let what = if kind == PoolKind::Max { "max_pool2d" } else { "avg_pool2d" };
    check_io(stream, input, out, what)?;
    let [kh, kw] = params.kernel.map(|v| v as usize);
    if kh == 0 || kw == 0 {
        bail!(InvalidArgument, "{what}: kernel size {kh}x{kw} must be positive");
    }
    let sh = if params.stride[0] == 0 { kh } else { params.stride[0] as usize };
    let sw = if params.stride[1] == 0 { kw } else { params.stride[1] as usize };
    let [ph, pw] = params.pad.map(|v| v as usize);
    if 2 * ph > kh || 2 * pw > kw {
        bail!(InvalidArgument, "{what}: padding {ph}x{pw} must be at most half the kernel {kh}x{kw}");
    }
    let [n, c, h, w] = [input.shape[0], input.shape[1], input.shape[2], input.shape[3]];
    if h + 2 * ph < kh || w + 2 * pw < kw {
        bail!(ShapeMismatch, "{what}: the padded input {h}x{w} is smaller than the {kh}x{kw} window");
    }
    let (oh, ow) = ((h + 2 * ph - kh) / sh + 1, (w + 2 * pw - kw) / sw + 1);
    expect_shape(out, &[n, c, oh, ow], &format!("{what}: out"))?;
    // Input dims may be broadcast (zero strides) far past what the kernel counts.
    check_kernel_counts(
        what,
        &[
            ("the padded input height", h + 2 * ph),
            ("the padded input width", w + 2 * pw),
            ("a stride", sh.max(sw)),
            ("the window", kh * kw),
        ],
    )?;
    check_output(out, &[input], what)?;
    let dev = &stream.device;
    dev.check_alive()?;
    let total = out.numel() as u64;
    if total == 0 {
        return Ok(());
    }
    let (grid, row) = grid_1d(total, 256, dev.limits.max_compute_workgroups_per_dimension);
    let p = base_params(input, total)
        .u32(oh as u32)
        .u32(ow as u32)
        .i32(kh as i32)
        .i32(kw as i32)
        .i32(sh as i32)
        .i32(sw as i32)
        .i32(ph as i32)
        .i32(pw as i32)
        .u32(input.bound_offset())
        .u32(out.bound_offset())
        .u32(row)
        .u32(params.count_include_pad as u32);
    let p = push_strides(p, input, out);
    let entry = if kind == PoolKind::Max { "max_pool2d" } else { "avg_pool2d" };
    let kern = kernel(dev, "pool.wgsl", entry, &[("T", input.dtype.wgsl()), ("ENABLE", input.dtype.enable())])?;
    launch(stream, &kern, &[input, out], p.bytes(), grid)
}

pub fn global_avg_pool2d(stream: &StreamShared, input: &Tensor, out: &Tensor) -> Result<()> {
    let what = "global_avg_pool2d";
    check_io(stream, input, out, what)?;
    let [n, c, h, w] = [input.shape[0], input.shape[1], input.shape[2], input.shape[3]];
    expect_shape(out, &[n, c, 1, 1], &format!("{what}: out"))?;
    check_output(out, &[input], what)?;
    check_kernel_counts(what, &[("the plane (H * W)", numel(&[h, w]))])?;
    if h == 0 || w == 0 {
        if n * c > 0 {
            bail!(ShapeMismatch, "{what}: the input has no spatial elements to average");
        }
    }
    let dev = &stream.device;
    dev.check_alive()?;
    let planes = (n * c) as u64;
    if planes == 0 {
        return Ok(());
    }
    // One workgroup per plane: a 1-D grid of workgroups of size 1 as grid_1d sees it.
    let (grid, row) = grid_1d(planes, 1, dev.limits.max_compute_workgroups_per_dimension);
    let flat = h <= 1 || input.strides[2] == w as isize * input.strides[3];
    let p = base_params(input, planes)
        .u32(1)
        .u32(1)
        .i32(h as i32)
        .i32(w as i32)
        .i32(1)
        .i32(1)
        .i32(0)
        .i32(0)
        .u32(input.bound_offset())
        .u32(out.bound_offset())
        .u32(row)
        .u32(flat as u32);
    let p = push_strides(p, input, out);
    let kern = kernel(dev, "pool.wgsl", "global_avg_pool2d", &[("T", input.dtype.wgsl()), ("ENABLE", input.dtype.enable())])?;
    launch(stream, &kern, &[input, out], p.bytes(), grid)
}
