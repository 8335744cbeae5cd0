//! Random tensors from Philox4x32-10 (see `shaders/random.wgsl`): element i
//! of the output (row-major logical order) is output word i % 4 of counter
//! offset + i / 4 under key seed.

use super::grid::grid_1d;
use super::spec::uniform::uniform;
use super::spec::{self, check_output, pack_i32, pack_u32, view_arg, Arg, Family, Launch, Sharing, TypeSlot};
use super::tensor::{coalesce, same_device, DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

const ENTRIES: &[&str] = &["random_uniform", "random_uniform4", "random_normal", "random_normal4"];
const TYPES: &[TypeSlot] = &[TypeSlot { alias: "TE", dtypes: &[DType::F32, DType::F16] }];

/// The generator with Philox's products from 16-bit halves (every adapter).
pub static FAMILY: Family = Family {
    file: "random.wgsl",
    source: concat!(include_str!("../../shaders/random.wgsl"), include_str!("../../shaders/random_mulhi_u16.wgsl")),
    entries: ENTRIES,
    types: TYPES,
    overrides: &[],
    uniform: <RandomParams as spec::Uniform>::layout,
};

/// The same generator with one 64-bit multiply per product (adapters with
/// 64-bit integers; listed in `ops::INT64_FAMILIES`). Same bits.
pub static FAMILY_INT64: Family = Family {
    file: "random.wgsl+int64",
    source: concat!(include_str!("../../shaders/random.wgsl"), include_str!("../../shaders/random_mulhi_u64.wgsl")),
    entries: ENTRIES,
    types: TYPES,
    overrides: &[],
    uniform: <RandomParams as spec::Uniform>::layout,
};

/// The family for this device: 64-bit products where the device has 64-bit
/// integers, unless the device's setting WGC_RANDOM_INT64 is `0` (for
/// comparisons and for testing the portable kernels there).
fn family(dev: &Device) -> &'static Family {
    if dev.settings().random.int64 && dev.features.contains(wgpu::Features::SHADER_INT64) {
        &FAMILY_INT64
    } else {
        &FAMILY
    }
}

uniform! {
    /// The uniform of random.wgsl.
    pub struct RandomParams = "Params" {
        pub n: u32,
        pub row: u32,
        pub rank: u32,
        pub contiguous: u32,
        pub key: [u32; 2],
        pub ctr: [u32; 2],
        pub a: f32,
        pub b: f32,
        pub off: u32,
        pub pad: u32,
        pub shape: [[u32; 4]; 2],
        pub strides: [[i32; 4]; 2],
    }
}

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
    let entries = match dist {
        Distribution::Uniform => ["random_uniform4", "random_uniform"],
        Distribution::Normal => ["random_normal4", "random_normal"],
    };
    let scale = if dist == Distribution::Uniform { b - a } else { b };
    let seed_words = (seed as u32, (seed >> 32) as u32);
    let first = out.bound_offset() as usize;
    let dense_blocks = if contiguous && first.is_multiple_of(4) { n / 4 } else { 0 };
    if dense_blocks > 0 {
        launch_blocks(
            stream,
            out,
            entries[0],
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
            entries[1],
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
    entry: &'static str,
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
    let (groups, row) = grid_1d(n.div_ceil(4) as u64, 256, dev.limits.max_compute_workgroups_per_dimension);
    // Strided views keep their logical order; the dense tail starts at `first`.
    let contiguous = vec || shape.len() <= 1 && strides.iter().all(|&s| s == 1);
    let params = RandomParams {
        n: n as u32,
        row,
        rank: shape.len() as u32,
        contiguous: contiguous as u32,
        key: [seed.0, seed.1],
        ctr: [counter as u32, (counter >> 32) as u32],
        a: a as f32,
        b: b as f32,
        off: first as u32,
        pad: 0,
        shape: pack_u32(shape, 1),
        strides: pack_i32(strides),
    };
    // The `*4` entries write whole vec4s through `outv`, the others `out`.
    let (o, _) = view_arg("out", out);
    let variant = family(dev).variant(entry, &[out.dtype], &[]);
    let o = if vec { Arg { name: "outv", ..o } } else { o };
    spec::record(stream, &Launch { variant, params, args: [o], groups })
}
