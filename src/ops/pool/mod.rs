//! 2-D max, average and global average pooling over NCHW f32 or f16
//! tensors (f16 summed in f32). Small windows take one invocation per
//! output (per four channels where channels-last views allow vec4s), large
//! ones a workgroup per output (chunked when very large); plan.rs chooses.

mod plan;
#[cfg(test)]
mod plan_tests;

use super::grid::grid_1d;
use super::reduce::common::Layout;
use super::reduce::kernels::row_grid;
use super::reduce::runs as reduce_runs;
use super::reduce::ReduceOp;
use super::spec::uniform::uniform;
use super::spec::{self, check_output, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot};
use super::split::{scratch, CHUNK_LEN, MAX_ITERS};
use super::tensor::{check_kernel_counts, coalesce, expect_shape, numel, same_device, DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;
use plan::{plan, Problem, Route, View, LANES, SPECIALIZED_SIZES};

pub static FAMILY: Family = Family {
    file: "pool.wgsl",
    source: include_str!("../../../shaders/pool.wgsl"),
    entries: &[
        "max_pool2d",
        "avg_pool2d",
        "global_avg_pool2d",
        "global_avg_pool2d_cl",
        "max_pool2d_window",
        "avg_pool2d_window",
        "max_pool2d_chunks",
        "avg_pool2d_chunks",
        "max_pool2d_finish",
        "avg_pool2d_finish",
        "max_pool2d_vec4",
        "avg_pool2d_vec4",
    ],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        OverrideSlot { name: "CHANNELS_LAST", values: &[0.0, 1.0] },
        OverrideSlot { name: "KH", values: SPECIALIZED_SIZES },
        OverrideSlot { name: "KW", values: SPECIALIZED_SIZES },
    ],
    uniform: <PoolParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of pool.wgsl (global pooling: a 1x1 window over the
    /// plane, `include_pad` meaning "the plane is contiguous").
    pub struct PoolParams = "Params" {
        pub total: u32,
        pub channels: u32,
        pub h: i32,
        pub w: i32,
        pub oh: u32,
        pub ow: u32,
        pub kh: i32,
        pub kw: i32,
        pub stride_h: i32,
        pub stride_w: i32,
        pub pad_h: i32,
        pub pad_w: i32,
        pub in_off: u32,
        pub out_off: u32,
        pub row: u32,
        pub include_pad: u32,
        pub in_s: [i32; 4],
        pub out_s: [i32; 4],
        pub chunk_len: u32,
        pub chunks: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// A rank-4 view's strides for the uniform.
fn strides4(t: &Tensor) -> [i32; 4] {
    std::array::from_fn(|d| t.strides[d] as i32)
}

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
    check_output(what, out, &[("the input", input)], Sharing::Separate)?;
    let dev = &stream.device;
    dev.check_alive()?;
    let total = out.numel() as u64;
    if total == 0 {
        return Ok(());
    }
    let (xa, in_off) = view_arg("x", input);
    let (ya, out_off) = view_arg("y", out);
    let view = |t: &Tensor, offset: u32| View {
        shape: std::array::from_fn(|d| t.shape[d]),
        strides: std::array::from_fn(|d| t.strides[d]),
        offset,
    };
    let planned =
        plan(&Problem { dtype: input.dtype, window: [kh, kw], input: view(input, in_off), out: view(out, out_off) });
    let params = |row: u32, chunks: usize| PoolParams {
        total: total as u32,
        channels: input.shape[1] as u32,
        h: h as i32,
        w: w as i32,
        oh: oh as u32,
        ow: ow as u32,
        kh: kh as i32,
        kw: kw as i32,
        stride_h: sh as i32,
        stride_w: sw as i32,
        pad_h: ph as i32,
        pad_w: pw as i32,
        in_off,
        out_off,
        row,
        include_pad: params.count_include_pad as u32,
        in_s: strides4(input),
        out_s: strides4(out),
        chunk_len: CHUNK_LEN as u32,
        chunks: chunks as u32,
        _pad0: 0,
        _pad1: 0,
    };
    let max = kind == PoolKind::Max;
    let types = [input.dtype];
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    match planned.route {
        Route::Vec4 { window: [skh, skw] } => {
            // The same walk over vec4s: channels, offsets and strides in vec4s.
            let lanes = LANES as u32;
            let (groups, row) = grid_1d(total / LANES as u64, 256, max_dim);
            let p = params(row, 1);
            let p = PoolParams {
                total: p.total / lanes,
                channels: p.channels / lanes,
                in_off: in_off / lanes,
                out_off: out_off / lanes,
                in_s: strides_in_vec4s(&view(input, in_off)),
                out_s: strides_in_vec4s(&view(out, out_off)),
                ..p
            };
            let entry = if max { "max_pool2d_vec4" } else { "avg_pool2d_vec4" };
            let variant = FAMILY.variant(entry, &types, &[1.0, skh as f64, skw as f64]);
            let args = [Arg { name: "x4", ..xa }, Arg { name: "y4", ..ya }];
            spec::record(stream, &Launch { variant, params: p, args, groups })
        }
        Route::Scalar => {
            let overrides = [if planned.channels_last { 1.0 } else { 0.0 }, 0.0, 0.0];
            let (groups, row) = grid_1d(total, 256, max_dim);
            let entry = if max { "max_pool2d" } else { "avg_pool2d" };
            let variant = FAMILY.variant(entry, &types, &overrides);
            spec::record(stream, &Launch { variant, params: params(row, 1), args: [xa, ya], groups })
        }
        Route::Window | Route::Chunks { .. } => {
            let chunks = if let Route::Chunks { chunks } = planned.route { chunks } else { 1 };
            let overrides = [if planned.channels_last { 1.0 } else { 0.0 }, 0.0, 0.0];
            pool_windows(stream, max, [xa, ya], total, (kh * kw, chunks), (&types, &overrides), &params)
        }
    }
}

/// A view's strides counted in vec4s of LANES channels (the plan checked
/// that they divide): the channel stride is one vec4.
fn strides_in_vec4s(v: &View) -> [i32; 4] {
    let s = v.used_strides();
    let lanes = LANES as isize;
    [(s[0] / lanes) as i32, 1, (s[2] / lanes) as i32, (s[3] / lanes) as i32]
}

/// Windows of more than plan::WINDOW_MAX elements: a workgroup per output element,
/// or beyond CHUNK_LEN elements per (chunk of the window, output element)
/// and a pass that folds the chunks.
fn pool_windows(
    stream: &StreamShared,
    max: bool,
    [xa, ya]: [Arg; 2],
    total: u64,
    (window_len, chunks): (usize, usize),
    (types, overrides): (&[DType], &[f64]),
    params: &dyn Fn(u32, usize) -> PoolParams,
) -> Result<()> {
    let dev = &stream.device;
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let (groups, per_y) = row_grid(chunks as u32, total as usize, max_dim);
    let name = if max { "max_pool2d" } else { "avg_pool2d" };
    // Entry names as constants: kernel lookups on this path allocate nothing.
    let [window, chunked, finish_entry] = if max {
        ["max_pool2d_window", "max_pool2d_chunks", "max_pool2d_finish"]
    } else {
        ["avg_pool2d_window", "avg_pool2d_chunks", "avg_pool2d_finish"]
    };
    if chunks == 1 {
        let variant = FAMILY.variant(window, types, overrides);
        return spec::record(stream, &Launch { variant, params: params(per_y, chunks), args: [xa, ya], groups });
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
    let pa = Arg::whole("parts", &parts);
    let variant = FAMILY.variant(chunked, types, overrides);
    spec::record(stream, &Launch { variant, params: params(per_y, chunks), args: [xa, pa], groups })?;
    let (grid, row) = grid_1d(total, 256, max_dim);
    let variant = FAMILY.variant(finish_entry, types, overrides);
    spec::record(stream, &Launch { variant, params: params(row, chunks), args: [ya, pa], groups: grid })
}

pub fn global_avg_pool2d(stream: &StreamShared, input: &Tensor, out: &Tensor) -> Result<()> {
    let what = "global_avg_pool2d";
    check_io(stream, input, out, what)?;
    let [n, c, h, w] = [input.shape[0], input.shape[1], input.shape[2], input.shape[3]];
    expect_shape(out, &[n, c, 1, 1], &format!("{what}: out"))?;
    check_output(what, out, &[("the input", input)], Sharing::Separate)?;
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
    // Contiguous planes (e.g. 7x7 of a ResNet head): the run reduction's
    // teams of lanes read neighbouring planes coalesced, where one
    // workgroup per plane left most of its invocations idle.
    let (red_shape, red_in) = coalesce(&[h, w], &[vec![input.strides[2], input.strides[3]]]);
    let kept_strides = [vec![input.strides[0], input.strides[1]], vec![out.strides[0], out.strides[1]]];
    let (kept_shape, kept) = coalesce(&[n, c], &kept_strides);
    let layout = Layout {
        kept_shape: &kept_shape,
        kept_in: &kept[0],
        kept_out: &kept[1],
        red_shape: &red_shape,
        red_in: &red_in[0],
    };
    if let Some(plan) = reduce_runs::plan(stream, ReduceOp::Mean, input, out, &layout) {
        return plan.record(stream, input, out);
    }
    // Channels-last planes of at most MAX_ITERS pixels: an invocation per
    // (n, c), neighbouring invocations reading neighbouring channels.
    if c > 1 && input.strides[1] == 1 && h * w <= MAX_ITERS {
        let (xa, in_off) = view_arg("x", input);
        let (ya, out_off) = view_arg("y", out);
        let (groups, row) = grid_1d(planes, 256, dev.limits.max_compute_workgroups_per_dimension);
        let params = whole_plane_params(input, out, (in_off, out_off), row, 1);
        let variant = FAMILY.variant("global_avg_pool2d_cl", &[input.dtype], &[1.0, 0.0, 0.0]);
        return spec::record(stream, &Launch { variant, params, args: [xa, ya], groups });
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
    let (xa, in_off) = view_arg("x", input);
    let (ya, out_off) = view_arg("y", out);
    let params = whole_plane_params(input, out, (in_off, out_off), row, flat as u32);
    let variant = FAMILY.variant("global_avg_pool2d", &[input.dtype], &[0.0, 0.0, 0.0]);
    spec::record(stream, &Launch { variant, params, args: [xa, ya], groups: grid })
}

/// The uniform of a pooling kernel whose window is the whole (H, W) plane
/// of `input` (N, C, H, W), one output per plane.
fn whole_plane_params(
    input: &Tensor,
    out: &Tensor,
    (in_off, out_off): (u32, u32),
    row: u32,
    include_pad: u32,
) -> PoolParams {
    let (c, h, w) = (input.shape[1], input.shape[2], input.shape[3]);
    PoolParams {
        total: (input.shape[0] * c) as u32,
        channels: c as u32,
        h: h as i32,
        w: w as i32,
        oh: 1,
        ow: 1,
        kh: h as i32,
        kw: w as i32,
        stride_h: 1,
        stride_w: 1,
        pad_h: 0,
        pad_w: 0,
        in_off,
        out_off,
        row,
        include_pad,
        in_s: strides4(input),
        out_s: strides4(out),
        chunk_len: 0,
        chunks: 1,
        _pad0: 0,
        _pad1: 0,
    }
}
