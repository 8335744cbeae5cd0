//! 2-D max, average and global average pooling over NCHW f32 or f16
//! tensors (f16 summed in f32). Small windows take one invocation per
//! output, large ones a workgroup per output (chunked when very large).

use super::common::whole;
use super::common::{kernel, launch, Params};
use super::grid::grid_1d;
use super::matmul::check_output;
use super::reduce_kernels::{launch as launch_slots, row_grid};
use super::split::{scratch, CHUNK_LEN, MAX_ITERS};
use super::tensor::{check_kernel_counts, expect_shape, numel, same_device, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

/// Windows of more elements than this take a workgroup each instead of one
/// invocation (whose loop would be long: see split.rs).
const WINDOW_MAX: usize = 4096;

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
    Params::new().u32(total as u32).u32(input.shape[1] as u32).i32(input.shape[2] as i32).i32(input.shape[3] as i32)
}

fn push_strides(mut p: Params, input: &Tensor, out: &Tensor) -> Params {
    for s in [&input.strides, &out.strides] {
        for &v in s.iter() {
            p = p.i32(v as i32);
        }
    }
    p
}

pub fn pool2d(
    stream: &StreamShared,
    kind: PoolKind,
    params: &Pool2dParams,
    input: &Tensor,
    out: &Tensor,
) -> Result<()> {
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
    let params = |row: u32, chunks: usize| {
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
        push_strides(p, input, out).u32(CHUNK_LEN as u32).u32(chunks as u32).align16()
    };
    let max = kind == PoolKind::Max;
    let values = [("T", input.dtype.wgsl()), ("ENABLE", input.dtype.enable())];
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    if kh * kw > WINDOW_MAX {
        return pool_windows(stream, max, input, out, total, kh * kw, &values, &params);
    }
    let (grid, row) = grid_1d(total, 256, max_dim);
    let entry = if max { "max_pool2d" } else { "avg_pool2d" };
    let kern = kernel(dev, "pool.wgsl", entry, &values)?;
    launch(stream, &kern, &[input, out], params(row, 1).bytes(), grid)
}

/// Windows of more than WINDOW_MAX elements: a workgroup per output element,
/// or beyond CHUNK_LEN elements per (chunk of the window, output element)
/// and a pass that folds the chunks.
#[allow(clippy::too_many_arguments)]
fn pool_windows(
    stream: &StreamShared,
    max: bool,
    input: &Tensor,
    out: &Tensor,
    total: u64,
    window_len: usize,
    values: &[(&str, &str)],
    params: &dyn Fn(u32, usize) -> Params,
) -> Result<()> {
    let dev = &stream.device;
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let chunks = window_len.div_ceil(CHUNK_LEN);
    let (groups, per_y) = row_grid(chunks as u32, total as usize, max_dim);
    let name = if max { "max_pool2d" } else { "avg_pool2d" };
    // Entry names as constants: kernel lookups on this path allocate nothing.
    let [window, chunked, finish_entry] = if max {
        ["max_pool2d_window", "max_pool2d_chunks", "max_pool2d_finish"]
    } else {
        ["avg_pool2d_window", "avg_pool2d_chunks", "avg_pool2d_finish"]
    };
    if chunks == 1 {
        let kern = kernel(dev, "pool.wgsl", window, values)?;
        return launch_slots(stream, &kern, &[input.bind(0), out.bind(1)], &params(per_y, chunks), groups);
    }
    let bytes = total * chunks as u64 * 4;
    if bytes > dev.limits.max_storage_buffer_binding_size {
        bail!(
            TooLarge,
            "{name}: {total} windows of {window_len} elements need {bytes} bytes of partial results; the adapter binds at most {}",
            dev.limits.max_storage_buffer_binding_size
        );
    }
    let parts = scratch(dev, bytes)?;
    let kern = kernel(dev, "pool.wgsl", chunked, values)?;
    launch_slots(stream, &kern, &[input.bind(0), whole(3, &parts)], &params(per_y, chunks), groups)?;
    let (grid, row) = grid_1d(total, 256, max_dim);
    let finish = kernel(dev, "pool.wgsl", finish_entry, values)?;
    launch_slots(stream, &finish, &[out.bind(1), whole(3, &parts)], &params(row, chunks), grid)
}

pub fn global_avg_pool2d(stream: &StreamShared, input: &Tensor, out: &Tensor) -> Result<()> {
    let what = "global_avg_pool2d";
    check_io(stream, input, out, what)?;
    let [n, c, h, w] = [input.shape[0], input.shape[1], input.shape[2], input.shape[3]];
    expect_shape(out, &[n, c, 1, 1], &format!("{what}: out"))?;
    check_output(out, &[input], what)?;
    check_kernel_counts(what, &[("the plane (H * W)", numel(&[h, w]))])?;
    if (h == 0 || w == 0) && n * c > 0 {
        bail!(ShapeMismatch, "{what}: the input has no spatial elements to average");
    }
    let dev = &stream.device;
    dev.check_alive()?;
    let planes = (n * c) as u64;
    if planes == 0 {
        return Ok(());
    }
    // Planes that would take each of the 64 invocations more than MAX_ITERS
    // loads: average pooling with the whole plane as the window.
    if h * w > 64 * MAX_ITERS {
        let whole = Pool2dParams { kernel: [h as u32, w as u32], stride: [1, 1], pad: [0, 0], count_include_pad: true };
        return pool2d(stream, PoolKind::Avg, &whole, input, out);
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
    let p = push_strides(p, input, out).u32(0).u32(1).align16();
    let kern =
        kernel(dev, "pool.wgsl", "global_avg_pool2d", &[("T", input.dtype.wgsl()), ("ENABLE", input.dtype.enable())])?;
    launch(stream, &kern, &[input, out], p.bytes(), grid)
}
