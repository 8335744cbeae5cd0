//! Random tensors from Philox4x32-10 (see `shaders/random.wgsl`): element i
//! of the output (row-major logical order) is output word i % 4 of counter
//! offset + i / 4 under key seed.

use super::common::{kernel, launch, Params};
use super::grid::grid_1d;
use super::spec::{check_output, Sharing};
use super::tensor::{coalesce, same_device, DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    Uniform,
    Normal,
}

pub fn random(
    stream: &StreamShared,
    out: &Tensor,
    dist: Distribution,
    seed: u64,
    offset: u64,
    a: f64,
    b: f64,
) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[out])?;
    if !out.dtype.is_float() {
        bail!(Unsupported, "random numbers are generated as f32 or f16, not {}", out.dtype.wgsl());
    }
    out.dtype.check_device(dev)?;
    if !a.is_finite() || !b.is_finite() {
        bail!(InvalidArgument, "random: distribution parameters must be finite");
    }
    if dist == Distribution::Normal && b < 0.0 {
        bail!(InvalidArgument, "random_normal: std must be >= 0, not {b}");
    }
    if dist == Distribution::Uniform {
        check_uniform_range(out.dtype, a, b)?;
    }
    check_output("random", out, &[], Sharing::Separate)?;
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let (shape, strides) = coalesce(&out.shape, std::slice::from_ref(&out.strides));
    let contiguous = shape.len() <= 1 && strides[0].iter().all(|&s| s == 1);
    let entry = match dist {
        Distribution::Uniform => "random_uniform",
        Distribution::Normal => "random_normal",
    };
    let scale = if dist == Distribution::Uniform { b - a } else { b };
    let seed_words = (seed as u32, (seed >> 32) as u32);
    let first = out.bound_offset() as usize;
    let dense_blocks = if contiguous && first.is_multiple_of(4) { n / 4 } else { 0 };
    if dense_blocks > 0 {
        launch_blocks(
            stream,
            out,
            entry,
            true,
            dense_blocks * 4,
            seed_words,
            offset,
            first / 4,
            a,
            scale,
            &shape,
            &strides[0],
        )?;
    }
    let done = dense_blocks * 4;
    if done < n {
        // The rest (all of it for strided views): counters continue after the dense blocks.
        launch_blocks(
            stream,
            out,
            entry,
            false,
            n - done,
            seed_words,
            offset.wrapping_add(dense_blocks as u64),
            first + done,
            a,
            scale,
            &shape,
            &strides[0],
        )?;
    }
    Ok(())
}

/// As PyTorch's uniform_: lo <= hi, both within the dtype's finite range,
/// and hi - lo too (the kernel scales by it), else `InvalidArgument`.
fn check_uniform_range(dtype: DType, lo: f64, hi: f64) -> Result<()> {
    let max = if dtype == DType::F16 { 65504.0 } else { f32::MAX as f64 };
    if lo > hi {
        bail!(InvalidArgument, "random_uniform: lo ({lo}) is greater than hi ({hi})");
    }
    if lo < -max || hi > max || hi - lo > max {
        bail!(
            InvalidArgument,
            "random_uniform: [{lo}, {hi}) exceeds the range of {} (the bounds and hi - lo must be at most {max})",
            dtype.wgsl()
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn launch_blocks(
    stream: &StreamShared,
    out: &Tensor,
    entry: &str,
    vec: bool,
    n: usize,
    seed: (u32, u32),
    counter: u64,
    first: usize,
    a: f64,
    b: f64,
    shape: &[usize],
    strides: &[isize],
) -> Result<()> {
    let dev = &stream.device;
    let t = out.dtype.wgsl();
    let ts = if vec { format!("vec4<{t}>") } else { t.to_string() };
    let store = if vec { "out[p.off + t] = TS(v);" } else { "store_scalar(4u * t, v);" };
    let k =
        kernel(dev, "random.wgsl", entry, &[("ENABLE", out.dtype.enable()), ("TE", t), ("TS", &ts), ("STORE", store)])?;
    let (groups, row) = grid_1d(n.div_ceil(4) as u64, 256, dev.limits.max_compute_workgroups_per_dimension);
    // Strided views keep their logical order; the dense tail starts at `first`.
    let contiguous = vec || shape.len() <= 1 && strides.iter().all(|&s| s == 1);
    let params = Params::new()
        .u32(n as u32)
        .u32(row)
        .u32(shape.len() as u32)
        .u32(contiguous as u32)
        .u32(seed.0)
        .u32(seed.1)
        .u32(counter as u32)
        .u32((counter >> 32) as u32)
        .f32(a as f32)
        .f32(b as f32)
        .u32(first as u32)
        .u32(0)
        .array8_u32(shape, 1)
        .array8_i32(strides);
    launch(stream, &k, &[out], params.bytes(), groups)
}
