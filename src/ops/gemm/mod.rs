//! Matrix products: batched GEMM with NumPy broadcasting of batch dims, and
//! NumPy `matmul` on top of it. Any strides work directly in the kernel (no
//! copies); unit strides in the two inner dims select a variant where the
//! stride is a compile-time 1 and the loads are coalesced.

pub mod coop;
pub mod coopmat2;
pub mod gemv;
pub mod khr_wide;
pub mod rows;
pub mod skinny;
pub mod spirv;
pub mod staged;
pub mod tuned;

use crate::bail;
use crate::error::Result;
use crate::ops::elementwise::{bf16, bf16_route};
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot};
use crate::ops::split::{runs_to_fill, scratch, K_CHUNK};
use crate::ops::tensor::{
    broadcast_shapes, broadcast_strides, check_kernel_counts, contiguous_strides, expect_shape, numel, same_device,
    DType, Tensor,
};
use crate::runtime::buffer::Buffer;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;
use coop::{CoopKernel, CoopOut};
use gemv::AxpyMode;
use std::sync::OnceLock;

const FLOATS: &[DType] = &[DType::F32, DType::F16];

/// The tiled GEMM (shaders/matmul.wgsl with the micro-kernel of
/// shaders/gemm_tile.wgsl, which conv.wgsl shares). RM and RN: blocks of 64
/// rows and columns per workgroup; A_LAYOUT, B_LAYOUT, C_LAYOUT: which
/// strides are a compile-time 1 (see `Layouts`); BIAS: a per-row addend.
pub static FAMILY: Family = Family {
    file: "matmul.wgsl",
    source: concat!(
        include_str!("../../../shaders/matmul.wgsl"),
        include_str!("../../../shaders/matmul_operands.wgsl"),
        include_str!("../../../shaders/gemm_tile.wgsl")
    ),
    entries: &["gemm", "gemm_c4", "gemm_split"],
    types: &[TypeSlot { alias: "IN", dtypes: FLOATS }, TypeSlot { alias: "OUT", dtypes: FLOATS }],
    overrides: OVERRIDES,
    uniform: <GemmParams as spec::Uniform>::layout,
};

/// The tiled kernels for bf16 A and B (read as words and widened to f32 as
/// the tiles are staged) and an f32 C; IN and OUT are f32.
pub static FAMILY_BF16: Family = Family {
    file: "matmul.wgsl+bf16",
    source: concat!(
        include_str!("../../../shaders/matmul.wgsl"),
        include_str!("../../../shaders/matmul_operands_bf16.wgsl"),
        include_str!("../../../shaders/gemm_tile.wgsl")
    ),
    entries: &["gemm", "gemm_c4", "gemm_split"],
    types: &[TypeSlot { alias: "IN", dtypes: &[DType::F32] }, TypeSlot { alias: "OUT", dtypes: &[DType::F32] }],
    overrides: OVERRIDES,
    uniform: <GemmParams as spec::Uniform>::layout,
};

const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "RM", values: &[1.0, 2.0] },
    OverrideSlot { name: "RN", values: &[1.0, 2.0] },
    OverrideSlot { name: "A_LAYOUT", values: &[0.0, 1.0, 2.0, 3.0] },
    OverrideSlot { name: "B_LAYOUT", values: &[0.0, 1.0, 2.0, 3.0] },
    OverrideSlot { name: "C_LAYOUT", values: &[0.0, 1.0, 2.0] },
    OverrideSlot { name: "BIAS", values: &[0.0, 1.0] },
];

/// The second pass of a split-K GEMM: the slabs' sum into C.
pub static SUM_FAMILY: Family = Family {
    file: "gemm_split_sum.wgsl",
    source: include_str!("../../../shaders/gemm_split_sum.wgsl"),
    entries: &["gemm_split_sum"],
    types: &[TypeSlot { alias: "OUT", dtypes: FLOATS }],
    overrides: &[OverrideSlot { name: "BIAS", values: &[0.0, 1.0] }],
    uniform: <GemmSumParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of matmul.wgsl.
    pub struct GemmParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub k: u32,
        pub batch_rank: u32,
        pub alpha: f32,
        pub beta: f32,
        pub a_sm: i32,
        pub a_sk: i32,
        pub b_sk: i32,
        pub b_sn: i32,
        pub c_sm: i32,
        pub c_sn: i32,
        pub a_off: u32,
        pub b_off: u32,
        pub c_off: u32,
        pub bias_off: u32,
        pub batch_shape: [[u32; 4]; 2],
        pub a_bstride: [[i32; 4]; 2],
        pub b_bstride: [[i32; 4]; 2],
        pub c_bstride: [[i32; 4]; 2],
        pub bias_stride: i32,
        pub k_chunk: u32,
        pub parts: u32,
        pub split0: u32,
        pub accumulate: u32,
        pub batches: u32,
        pub _pad0: [u32; 2],
    }
}

uniform! {
    /// The uniform of gemm_split_sum.wgsl.
    pub struct GemmSumParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub batch_rank: u32,
        pub batches: u32,
        pub alpha: f32,
        pub beta: f32,
        pub c_sm: i32,
        pub c_sn: i32,
        pub c_off: u32,
        pub bias_off: u32,
        pub bias_stride: i32,
        pub parts: u32,
        pub row: u32,
        pub _pad0: [u32; 3],
        pub batch_shape: [[u32; 4]; 2],
        pub c_bstride: [[i32; 4]; 2],
    }
}

/// An optional per-row addend (used by 1x1 convolutions).
pub struct RowBias<'a, 'b> {
    pub tensor: &'b Tensor<'a>,
    pub stride: isize,
}

/// Check dtypes: (input dtype, output dtype).
pub fn check_dtypes(stream: &StreamShared, a: &Tensor, b: &Tensor, c: &Tensor) -> Result<()> {
    if a.dtype != b.dtype {
        bail!(DtypeMismatch, "gemm: a is {} and b is {}", a.dtype.wgsl(), b.dtype.wgsl());
    }
    if !a.dtype.is_float() {
        bail!(Unsupported, "gemm: {} inputs are not supported (f32, f16 or bf16)", a.dtype.wgsl());
    }
    let ok_out = c.dtype == DType::F32 || (c.dtype == a.dtype);
    if !ok_out {
        if !c.dtype.is_float() {
            bail!(Unsupported, "gemm: {} output is not supported", c.dtype.wgsl());
        }
        bail!(DtypeMismatch, "gemm: {} inputs cannot write a {} output", a.dtype.wgsl(), c.dtype.wgsl());
    }
    a.dtype.check_device_bf16(&stream.device)?;
    Ok(())
}

/// The view with its last two dims swapped.
fn transposed<'a>(t: &Tensor<'a>) -> Tensor<'a> {
    let r = t.rank();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    t.permuted(&perm)
}

/// `C = alpha * op(A) op(B) + beta * C` for views of rank >= 2.
#[allow(clippy::too_many_arguments)]
pub fn gemm(
    stream: &StreamShared,
    alpha: f32,
    a: &Tensor,
    transpose_a: bool,
    b: &Tensor,
    transpose_b: bool,
    beta: f32,
    c: &Tensor,
) -> Result<()> {
    check_dtypes(stream, a, b, c)?;
    same_device(&stream.device, &[a, b, c])?;
    for (t, n) in [(a, "a"), (b, "b"), (c, "c")] {
        if t.rank() < 2 {
            bail!(
                ShapeMismatch,
                "gemm: {n} has rank {}; it needs at least 2 (use wgc_op_matmul for vectors)",
                t.rank()
            );
        }
    }
    let a = if transpose_a { transposed(a) } else { a.clone() };
    let b = if transpose_b { transposed(b) } else { b.clone() };
    gemm_views(stream, alpha, &a, &b, beta, c, None)
}

/// NumPy matmul: 1-D operands become a row (a) or a column (b) vector whose
/// extra dim is dropped from the result.
pub fn matmul(stream: &StreamShared, a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    check_dtypes(stream, a, b, out)?;
    same_device(&stream.device, &[a, b, out])?;
    if a.rank() == 0 || b.rank() == 0 {
        bail!(ShapeMismatch, "matmul: operands must have at least one dimension");
    }
    let a2 = if a.rank() == 1 { with_dim(a, 0, 1) } else { a.clone() };
    let b2 = if b.rank() == 1 { with_dim(b, 1, 1) } else { b.clone() };
    // The output as the full (..., M, N) view.
    let mut c2 = out.clone();
    if a.rank() == 1 || b.rank() == 1 {
        let batch_a = &a2.shape[..a2.rank() - 2];
        let batch_b = &b2.shape[..b2.rank() - 2];
        let batch = broadcast_shapes(&[batch_a, batch_b])?;
        let mut expected = batch.clone();
        if a.rank() != 1 {
            expected.push(a2.shape[a2.rank() - 2]);
        }
        if b.rank() != 1 {
            expected.push(b2.shape[b2.rank() - 1]);
        }
        expect_shape(out, &expected, "matmul: out")?;
        let r = batch.len();
        if a.rank() == 1 {
            c2 = with_dim(&c2, r, 1);
        }
        if b.rank() == 1 {
            c2 = with_dim(&c2, r + 1, 1);
        }
    }
    gemm_views(stream, 1.0, &a2, &b2, 0.0, &c2, None)
}

/// The view with a size-1 dim inserted at `at`.
fn with_dim<'a>(t: &Tensor<'a>, at: usize, stride: isize) -> Tensor<'a> {
    let mut v = t.clone();
    v.shape.insert(at, 1);
    v.strides.insert(at, stride);
    v
}

/// True if a dim's stride can be compiled in as 1.
fn unit(dim: usize, stride: isize) -> bool {
    dim <= 1 || stride == 1
}

/// An operand's layout override (matmul.wgsl's A_LAYOUT and B_LAYOUT) from
/// the dim its threads prefer to walk (`fast`: k of A, n of B) and the
/// other (`slow`), each (size, stride): 2 the fast stride is 1, 3 the slow
/// one is, else 0 or 1 as the fast dim's stride is the smaller or not.
fn operand_layout(fast: (usize, isize), slow: (usize, isize)) -> f64 {
    if unit(fast.0, fast.1) {
        2.0
    } else if unit(slow.0, slow.1) {
        3.0
    } else if fast.1.abs() <= slow.1.abs() {
        0.0
    } else {
        1.0
    }
}

/// The kernel a GEMM of this shape and these views runs.
enum GemmKernel {
    /// f16 on tensor cores (gemm_coop.rs).
    Coop(CoopKernel),
    /// The tiled kernel with RM x RN blocks of 64x64 per workgroup.
    Tiled { rm: usize, rn: usize },
}

/// Where a GEMM chooses its kernel: every f16 product on tensor cores where
/// the adapter has them, else the tiled kernel by shape.
fn choose_kernel(
    dev: &Device,
    a: &Tensor,
    b: &Tensor,
    (m, n, k): (usize, usize, usize),
    batch_count: usize,
    bs: [&[isize]; 2],
) -> GemmKernel {
    match coop::choose(dev, a, b, (m, n, k), batch_count, bs) {
        Some(kernel) => GemmKernel::Coop(kernel),
        None => tiled(m, n, batch_count),
    }
}

/// The tiled kernel's blocks: 128-wide tiles where there are enough of them
/// to fill a large GPU.
fn tiled(m: usize, n: usize, batch_count: usize) -> GemmKernel {
    let tiles64 = m.div_ceil(64) * n.div_ceil(64) * batch_count;
    let big = tiles64 >= 1024;
    GemmKernel::Tiled { rm: if big && m > 64 { 2 } else { 1 }, rn: if big && n > 64 { 2 } else { 1 } }
}

/// Workgroups of the tiled kernel that fill a large GPU (four per SM of an
/// H200's 132); `WGC_GEMM_TILED_FILL`, read once, sets another count (0:
/// no splits for filling, for comparisons).
fn tiled_fill_workgroups() -> usize {
    static FILL: OnceLock<usize> = OnceLock::new();
    *FILL.get_or_init(|| std::env::var("WGC_GEMM_TILED_FILL").ok().and_then(|v| v.parse().ok()).unwrap_or(528))
}

/// The shortest K run a split for filling makes: 16 steps of the tile's K
/// (shorter runs cost more in slab traffic than the SMs they fill).
const TILED_MIN_SPLIT_K: usize = 256;

/// How many K runs (summed by the second pass) a tiled product of `tiles`
/// workgroups takes so that about `tiled_fill_workgroups` run: 1 where the
/// tiles alone are a quarter of them (one per SM) or K is short. A 3000 x
/// 50 output is 47 tiles of 64 x 64, which leave most of a 132-SM GPU idle
/// (H100: 0.241 -> 0.090 ms in 12 runs; 512 x 512 x 8192, 64 tiles: 0.386
/// -> 0.181 ms), while 256 tiles (1000^3) ran as fast or 8% slower in 3.
fn tiled_fill_splits(tiles: usize, k: usize) -> usize {
    fill_splits_for(tiles, k, tiled_fill_workgroups())
}

/// The tiled kernel's blocks (rm, rn) and runs of K for an m x n x k
/// product over `batch` matrices, given the blocks `tiled` chose. Where
/// too few 64 x 64 tiles fill the GPU and K is long enough to split, tiles
/// 128 wide (where m or n exceed 64) over runs of K, aiming for half as
/// many workgroups (each has two or four times the work). Measured on an
/// H200 against 64 x 64 tiles aiming for 528: 512 x 512 x 8192 0.180 ->
/// 0.142 ms, 3000 x 50 x 5000 0.089 -> 0.077 (128-wide tiles aiming for
/// 528 or 1056: 0.160-0.161 and 0.091-0.092). One or two 64 x 64 tiles
/// per SM: `one_or_two_per_sm`.
fn split_tiles(m: usize, n: usize, k: usize, batch: usize, (rm, rn): (usize, usize)) -> (usize, usize, usize) {
    if let Some((rm, rn)) = named_blocks() {
        let tiles = m.div_ceil(64 * rm) * n.div_ceil(64 * rn) * batch;
        return (rm, rn, runs_to_fill(tiles, k, tiled_fill_workgroups(), TILED_MIN_SPLIT_K));
    }
    let tiles64 = m.div_ceil(64) * n.div_ceil(64) * batch;
    let fill = tiled_fill_splits(tiles64, k);
    if rm * rn > 1 {
        return (rm, rn, fill);
    }
    if fill <= 1 {
        return one_or_two_per_sm(m, n, k, batch, tiles64).unwrap_or((rm, rn, fill));
    }
    let (wide_m, wide_n) = (if m > 64 { 2 } else { 1 }, if n > 64 { 2 } else { 1 });
    if wide_m * wide_n == 1 {
        return (rm, rn, fill);
    }
    let tiles = m.div_ceil(64 * wide_m) * n.div_ceil(64 * wide_n) * batch;
    match fill_splits_for(tiles, k, tiled_fill_workgroups() / 2) {
        wide_fill if wide_fill > 1 => (wide_m, wide_n, wide_fill),
        _ => (rm, rn, fill),
    }
}

/// Blocks and runs for products of one or two 64 x 64 tiles per SM (too
/// many for `tiled_fill_splits` to split, too few to keep the SMs busy):
/// tiles 128 rows high over runs of K at least ONE_OR_TWO_MIN_RUN long,
/// aiming for half the fill's workgroups. A sweep of blocks and fills on
/// an H200 (8192 x 100 x 2048, 256 tiles; bench/results/2026-11-26e/call4 at 317f233)
/// found this fastest: 0.161 -> 0.155 ms (128 x 128 over runs for 528:
/// 0.160; 64 x 64 over runs for 1056 or 2112: 0.171-0.176).
fn one_or_two_per_sm(m: usize, n: usize, k: usize, batch: usize, tiles64: usize) -> Option<(usize, usize, usize)> {
    let fill = tiled_fill_workgroups();
    if m <= 64 || tiles64 * 2 > fill {
        return None;
    }
    let tiles = m.div_ceil(128) * n.div_ceil(64) * batch;
    let runs = runs_to_fill(tiles, k, fill / 2, ONE_OR_TWO_MIN_RUN);
    (runs > 1).then_some((2, 1, runs))
}

/// The shortest run `one_or_two_per_sm` makes. On an H100, 3 runs of 683
/// (8192 x 100 x 2048) were 4-5% faster than none, 3 runs of 333 (1000^3)
/// 10% slower: each run writes and reads an f32 slab the size of C, so
/// the shorter the run, the more that traffic weighs against its FMAs
/// (bench/results/2026-11-26e/call5 at 317f233).
const ONE_OR_TWO_MIN_RUN: usize = 512;

/// The environment variable WGC_GEMM_TILED_BLOCKS, read once, for
/// comparisons: `RMxRN` (each 1 or 2) fixes the tiled kernel's blocks, K
/// then cut into runs for about `tiled_fill_workgroups` workgroups.
fn named_blocks() -> Option<(usize, usize)> {
    static BLOCKS: OnceLock<Option<(usize, usize)>> = OnceLock::new();
    *BLOCKS.get_or_init(|| {
        let v = std::env::var("WGC_GEMM_TILED_BLOCKS").ok()?;
        let (rm, rn) = v.split_once('x')?;
        let (rm, rn) = (rm.parse().ok()?, rn.parse().ok()?);
        ((1..=2).contains(&rm) && (1..=2).contains(&rn)).then_some((rm, rn))
    })
}

fn fill_splits_for(tiles: usize, k: usize, fill: usize) -> usize {
    if tiles * 4 > fill {
        return 1;
    }
    runs_to_fill(tiles, k, fill, TILED_MIN_SPLIT_K)
}

/// The GEMM on prepared views a (..., M, K), b (..., K, N), c (..., M, N),
/// dtypes already checked.
pub fn gemm_views(
    stream: &StreamShared,
    alpha: f32,
    a: &Tensor,
    b: &Tensor,
    beta: f32,
    c: &Tensor,
    bias: Option<RowBias>,
) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    let (ra, rb) = (a.rank(), b.rank());
    let (m, k) = (a.shape[ra - 2], a.shape[ra - 1]);
    let (kb, n) = (b.shape[rb - 2], b.shape[rb - 1]);
    if k != kb {
        bail!(ShapeMismatch, "gemm: inner dims differ: op(a) is {:?} and op(b) is {:?}", a.shape, b.shape);
    }
    let batch = broadcast_shapes(&[&a.shape[..ra - 2], &b.shape[..rb - 2]])?;
    let mut expected = batch.clone();
    expected.extend([m, n]);
    expect_shape(c, &expected, "gemm: c")?;
    // beta != 0 reads C through the output's own binding, so C is no input here.
    let mut inputs = vec![("a", a), ("b", b)];
    if let Some(bb) = &bias {
        inputs.push(("the bias", bb.tensor));
    }
    spec::check_output("gemm", c, &inputs, Sharing::Separate)?;
    // M and N are dims of c, which has no zero strides; K may be broadcast.
    check_kernel_counts("gemm", &[("the inner dim K", k)])?;
    let batch_count = numel(&batch);
    if m == 0 || n == 0 || batch_count == 0 {
        return Ok(());
    }
    let max_dim = dev.limits.max_compute_workgroups_per_dimension as usize;
    if batch_count > max_dim {
        bail!(TooLarge, "gemm: {batch_count} batch matrices exceed this adapter's {max_dim} workgroups per dimension");
    }
    if c.dtype == DType::BF16 {
        return gemm_bf16_out(stream, alpha, a, b, beta, c, bias);
    }
    // Which kernels take a skinny product: measured where the tuner is on
    // (not for f16 rows on the skinny tensor-core tile, which no mode changes).
    let has_bias = bias.is_some();
    let run = |mode| gemm_kernels(stream, alpha, a, b, beta, c, &bias, &batch, mode);
    let choice = || {
        let mut choice = gemv::mode_choice(dev, alpha, a, b, beta, c, &batch, has_bias);
        choice.fixed |= skinny_coop(dev, a, b, &batch);
        choice
    };
    let mode = tuned::pick(stream, gemv::default_mode(), choice, run)?;
    run(mode)
}

/// Batch strides of a (..., M, K) and b (..., K, N) over the broadcast batch
/// shape `batch`.
fn operand_batch_strides(a: &Tensor, b: &Tensor, batch: &[usize]) -> [Vec<isize>; 2] {
    let strides = |t: &Tensor| {
        let r = t.rank() - 2;
        broadcast_strides(
            &Tensor { shape: t.shape[..r].to_vec(), strides: t.strides[..r].to_vec(), ..t.clone() },
            batch,
        )
    };
    [strides(a), strides(b)]
}

/// True if the skinny tensor-core tile takes this product.
fn skinny_coop(dev: &Device, a: &Tensor, b: &Tensor, batch: &[usize]) -> bool {
    let (ra, rb) = (a.rank(), b.rank());
    let (m, k, n) = (a.shape[ra - 2], a.shape[ra - 1], b.shape[rb - 1]);
    let [a_bs, b_bs] = operand_batch_strides(a, b, batch);
    let kernel = coop::choose(dev, a, b, (m, n, k), numel(batch), [&a_bs, &b_bs]);
    kernel.is_some_and(|kernel| kernel.skinny)
}

/// The GEMM's kernels for checked views of the broadcast batch shape
/// `batch` (nothing empty): the skinny-product kernels where they take it
/// in `mode`, else the tensor-core or tiled GEMM. Records every pass, and
/// writes only `c` (reading it where `beta != 0`).
#[allow(clippy::too_many_arguments)]
fn gemm_kernels(
    stream: &StreamShared,
    alpha: f32,
    a: &Tensor,
    b: &Tensor,
    beta: f32,
    c: &Tensor,
    bias: &Option<RowBias>,
    batch: &[usize],
    mode: AxpyMode,
) -> Result<()> {
    let dev = &stream.device;
    let (ra, rb) = (a.rank(), b.rank());
    let (m, k, n) = (a.shape[ra - 2], a.shape[ra - 1], b.shape[rb - 1]);
    let batch_count = numel(batch);
    let [a_bs, b_bs] = operand_batch_strides(a, b, batch);
    let choice = choose_kernel(dev, a, b, (m, n, k), batch_count, [&a_bs, &b_bs]);

    // Skinny products (few rows or columns) have kernels of their own: the
    // matrix-vector kernels (f32: up to 8 rows; 9-32 take gemm_rows), or for
    // f16 rows the skinny tensor-core tile.
    let skinny_coop = matches!(choice, GemmKernel::Coop(kernel) if kernel.skinny);
    if !skinny_coop {
        if rows::record(stream, alpha, a, b, beta, c, batch, bias.is_some())? {
            return Ok(());
        }
        if let Some(plan) = gemv::plan(dev, mode, alpha, a, b, beta, c, batch, bias.is_some())? {
            return gemv::record(stream, &plan);
        }
    }
    // f16 and bf16 operands that the tensor cores cannot read as they are:
    // aligned copies where the product is large enough to pay for them.
    if matches!(choice, GemmKernel::Tiled { .. }) {
        if let Some(staged) = staged::stage(stream, a, b, (m, n, k), batch_count)? {
            let (a, b) = (staged.a(), staged.b());
            let [a_bs, b_bs] = operand_batch_strides(&a, &b, batch);
            let choice = choose_kernel(dev, &a, &b, (m, n, staged.k), batch_count, [&a_bs, &b_bs]);
            return gemm_tiles(stream, alpha, &a, &b, beta, c, bias, batch, choice);
        }
    }
    gemm_tiles(stream, alpha, a, b, beta, c, bias, batch, choice)
}

/// The tensor-core or tiled GEMM `choice` for checked views of the
/// broadcast batch shape `batch` (nothing empty).
#[allow(clippy::too_many_arguments)]
fn gemm_tiles(
    stream: &StreamShared,
    alpha: f32,
    a: &Tensor,
    b: &Tensor,
    beta: f32,
    c: &Tensor,
    bias: &Option<RowBias>,
    batch: &[usize],
    mut choice: GemmKernel,
) -> Result<()> {
    let dev = &stream.device;
    let (ra, rb) = (a.rank(), b.rank());
    let (m, k, n) = (a.shape[ra - 2], a.shape[ra - 1], b.shape[rb - 1]);
    let batch = batch.to_vec();
    let batch_count = numel(&batch);
    let max_dim = dev.limits.max_compute_workgroups_per_dimension as usize;
    // Batch strides of each operand over the broadcast batch shape.
    let rank_b = batch.len();
    let [a_bs, b_bs] = operand_batch_strides(a, b, &batch);
    let c_bs: Vec<isize> = c.strides[..rank_b].to_vec();
    let bs = [a_bs.as_slice(), b_bs.as_slice()];

    let (a_sm, a_sk) = (a.strides[ra - 2], a.strides[ra - 1]);
    let (b_sk, b_sn) = (b.strides[rb - 2], b.strides[rb - 1]);
    let (c_sm, c_sn) = (c.strides[rank_b], c.strides[rank_b + 1]);
    let (a_arg, a_off) = view_arg("a", a);
    let (b_arg, b_off) = view_arg("b", b);
    let (c_arg, c_off) = view_arg("c", c);
    // Without a bias the kernel's bias binding still needs a buffer: a's.
    let (bias_arg, bias_off) = match &bias {
        Some(bb) => view_arg("bias", bb.tensor),
        None => (Arg { name: "bias", ..a_arg }, 0),
    };
    let bias_stride = bias.as_ref().map_or(0, |bb| bb.stride) as i32;
    let has_bias = if bias.is_some() { 1.0 } else { 0.0 };
    let params = |split: Split, split0: usize, accumulate: bool| GemmParams {
        m: m as u32,
        n: n as u32,
        k: k as u32,
        batch_rank: rank_b as u32,
        alpha,
        beta,
        a_sm: a_sm as i32,
        a_sk: a_sk as i32,
        b_sk: b_sk as i32,
        b_sn: b_sn as i32,
        c_sm: c_sm as i32,
        c_sn: c_sn as i32,
        a_off,
        b_off,
        c_off,
        bias_off,
        batch_shape: pack_u32(&batch, 1),
        a_bstride: pack_i32(&a_bs),
        b_bstride: pack_i32(&b_bs),
        c_bstride: pack_i32(&c_bs),
        bias_stride,
        k_chunk: split.k_chunk as u32,
        parts: split.parts as u32,
        split0: split0 as u32,
        accumulate: accumulate as u32,
        batches: batch_count as u32,
        _pad0: [0; 2],
    };
    let outputs = batch_count * m * n;
    // The second pass of a split K: the slabs' sum into C (with the bias).
    debug_assert!(c.rank() == rank_b + 2 && c.shape[..rank_b] == batch[..], "c has the broadcast batch shape");
    let slab_bias = bias.as_ref().map(|_| (bias_arg, bias_off, bias_stride));
    let sum_slabs =
        |parts: &Buffer, split: Split| sum_slabs_into(stream, parts, split.parts, (alpha, beta), c, a_arg, slab_bias);

    if let GemmKernel::Coop(kernel) = choice {
        let bk = kernel.bk();
        let mut split = Split::plan(dev, k, outputs, batch_count, bk)?;
        // Too few tiles to fill the GPU: K in runs summed by the second pass.
        let fill = coop::kernel_fill_splits(dev, kernel, (m, n, k), batch_count);
        if split.splits == 1 && fill > 1 {
            if let Ok(more) = Split::into(dev, k, fill, outputs, batch_count, bk) {
                if more.parts == more.splits {
                    split = more;
                }
            }
        }
        let bias = match &bias {
            Some(bb) => {
                let (arg, off) = view_arg("bias", bb.tensor);
                Some((arg, off, bb.stride))
            }
            None => None,
        };
        let out = CoopOut {
            target: c_arg,
            dtype: c.dtype,
            offset: c_off,
            strides: [c_sm, c_sn],
            batch_strides: c_bs.clone(),
            alpha,
            beta,
            bias,
            k_chunk: split.k_chunk,
            splits: split.splits,
            split_c: 0,
        };
        if split.splits == 1 && !coop::needs_slab(dev, kernel, (m, k), &out) {
            return coop::record(stream, kernel, a, b, out, (m, n, k), &batch, bs);
        }
        // All splits at once into f32 slabs (the fragments cannot add to a
        // slab), then the second pass applies the epilogue (also for one
        // split, where the kernel stores plain products only).
        // (A slab past the binding limit, which only a single run can ask
        // for here, takes the tiled kernel too.)
        let slab_fits = outputs * 4 <= dev.limits.max_storage_buffer_binding_size as usize;
        if split.parts == split.splits && slab_fits {
            let parts = scratch(dev, (split.parts * outputs * 4) as u64)?;
            let slab_bs: Vec<isize> = contiguous_strides(&batch).iter().map(|s| s * (m * n) as isize).collect();
            let out = CoopOut {
                target: Arg::whole("c", &parts),
                dtype: DType::F32,
                offset: 0,
                strides: [n as isize, 1],
                batch_strides: slab_bs,
                alpha: 1.0,
                beta: 0.0,
                bias: None,
                split_c: outputs,
                ..out
            };
            coop::record(stream, kernel, a, b, out, (m, n, k), &batch, bs)?;
            return sum_slabs(&parts, split);
        }
        // Too many splits for one pass: the tiled kernel's waves.
        choice = tiled(m, n, batch_count);
    }
    let GemmKernel::Tiled { rm, rn } = choice else { unreachable!("the tensor-core path returned above") };
    let (rm, rn, fill) = split_tiles(m, n, k, batch_count, (rm, rn));
    let layouts = [
        operand_layout((k, a_sk), (m, a_sm)),
        operand_layout((n, b_sn), (k, b_sk)),
        if unit(n, c_sn) {
            1.0
        } else if unit(m, c_sm) {
            2.0
        } else {
            0.0
        },
    ];
    let overrides = [rm as f64, rn as f64, layouts[0], layouts[1], layouts[2], has_bias];
    let (family, types) =
        if a.dtype == DType::BF16 { (&FAMILY_BF16, [DType::F32; 2]) } else { (&FAMILY, [a.dtype, c.dtype]) };

    let groups = [n.div_ceil(64 * rn) as u32, m.div_ceil(64 * rm) as u32, batch_count as u32];
    if groups[0] as usize > max_dim || groups[1] as usize > max_dim {
        bail!(TooLarge, "gemm: {m}x{n} output needs more workgroups than this adapter allows per dimension");
    }
    let mut split = Split::plan(dev, k, outputs, batch_count, 16)?;
    if split.splits == 1 && fill > 1 {
        if let Ok(more) = Split::into(dev, k, fill, outputs, batch_count, 16) {
            if more.parts == more.splits {
                split = more;
            }
        }
    }
    if split.splits == 1 {
        let params = params(split, 0, false);
        if vec4_stores() && k <= TILED_C4_MAX_K && c_in_vec4s(n, c_sn, c_sm, c_off, &c_bs) {
            let variant = family.variant("gemm_c4", &types, &overrides);
            let args = [a_arg, b_arg, Arg { name: "c4", ..c_arg }, bias_arg];
            return spec::record(stream, &Launch { variant, params, args, groups });
        }
        let variant = family.variant("gemm", &types, &overrides);
        let args = [a_arg, b_arg, c_arg, bias_arg];
        return spec::record(stream, &Launch { variant, params, args, groups });
    }
    // Split K: waves of `parts` splits, each adding into its slab, then a
    // pass that sums the slabs into C.
    let parts = scratch(dev, (split.parts * outputs * 4) as u64)?;
    let variant = family.variant("gemm_split", &types, &overrides);
    let groups = [groups[0], groups[1], (batch_count * split.parts) as u32];
    for split0 in (0..split.splits).step_by(split.parts) {
        let params = params(split, split0, split0 > 0);
        let args = [a_arg, b_arg, Arg::whole("parts", &parts)];
        spec::record(stream, &Launch { variant, params, args, groups })?;
    }
    sum_slabs(&parts, split)
}

/// The longest K for which the tiled kernel stores C as vec4s. The
/// stores' share of the time falls as K grows: measured on an H200, vec4
/// stores took attention scores (K 64 and 128) 15-34% faster, bmm 512 x
/// 128^3 26%, a 65536 x 64 x 64 product 32% and 1000^3 5%, while at K 4096
/// they made an f32 linear layer with its weight stored (N, K) 4% slower
/// (squares 1% faster).
const TILED_C4_MAX_K: usize = 2048;

/// True if every group of four columns 4j..4j+3 of C (n columns, column
/// stride `c_sn`, row stride `c_sm`, element offset `c_off` from its
/// binding, batch strides `c_bs`) is one aligned vec4 inside a row: the
/// tiled kernel then stores C four columns at a time (gemm_c4).
fn c_in_vec4s(n: usize, c_sn: isize, c_sm: isize, c_off: u32, c_bs: &[isize]) -> bool {
    c_sn == 1 && n.is_multiple_of(4) && c_sm % 4 == 0 && c_off.is_multiple_of(4) && c_bs.iter().all(|s| s % 4 == 0)
}

/// Whether the tiled kernel may store C as vec4s: the environment
/// variable WGC_GEMM_TILED_C4, read once, set to `0` keeps scalar stores,
/// for comparisons.
fn vec4_stores() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("WGC_GEMM_TILED_C4").is_none_or(|v| v != "0"))
}

/// The second pass of a product split over K (the tiled and tensor-core
/// GEMMs, the f16 convolutions, gemm_rows): c = alpha * the sum of `parts` f32 slabs +
/// beta * c (+ bias[m]: its binding, offset and stride, in c's dtype),
/// each slab holding c's elements in row-major order of its shape (batch
/// dims, then m, n), at `parts_buf`'s start. Without a bias `unread` fills
/// the kernel's bias binding: any buffer the pass does not write.
pub(crate) fn sum_slabs_into(
    stream: &StreamShared,
    parts_buf: &Buffer,
    parts: usize,
    (alpha, beta): (f32, f32),
    c: &Tensor,
    unread: Arg,
    bias: Option<(Arg, u32, i32)>,
) -> Result<()> {
    let r = c.rank();
    let (m, n) = (c.shape[r - 2], c.shape[r - 1]);
    let batch = &c.shape[..r - 2];
    let batches = numel(batch);
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (groups, row) = grid_1d((batches * m * n) as u64, 256, max_dim);
    let (c_arg, c_off) = view_arg("c", c);
    let params = GemmSumParams {
        m: m as u32,
        n: n as u32,
        batch_rank: batch.len() as u32,
        batches: batches as u32,
        alpha,
        beta,
        c_sm: c.strides[r - 2] as i32,
        c_sn: c.strides[r - 1] as i32,
        c_off,
        bias_off: bias.map_or(0, |b| b.1),
        bias_stride: bias.map_or(0, |b| b.2),
        parts: parts as u32,
        row,
        _pad0: [0; 3],
        batch_shape: pack_u32(batch, 1),
        c_bstride: pack_i32(&c.strides[..r - 2]),
    };
    let has_bias = if bias.is_some() { 1.0 } else { 0.0 };
    let variant = SUM_FAMILY.variant("gemm_split_sum", &[c.dtype], &[has_bias]);
    let bias_arg = bias.map_or(unread, |b| b.0);
    let args = [c_arg, Arg { name: "bias", ..bias_arg }, Arg::whole("parts", parts_buf)];
    spec::record(stream, &Launch { variant, params, args, groups })
}

/// A validated GEMM into a bf16 `c`: into contiguous f32 scratch (holding
/// C's values where beta reads them), rounded once into `c`. The kernels
/// read the bf16 operands themselves (FAMILY_BF16, gemv's bf16 family).
fn gemm_bf16_out(
    stream: &StreamShared,
    alpha: f32,
    a: &Tensor,
    b: &Tensor,
    beta: f32,
    c: &Tensor,
    bias: Option<RowBias>,
) -> Result<()> {
    let c32 = if beta != 0.0 { bf16_route::widen(stream, c, true)? } else { bf16_route::uninit(stream, &c.shape)? };
    gemm_views(stream, alpha, a, b, beta, &c32.view(), bias)?;
    bf16::convert(stream, &c32.view(), c)
}

/// How a GEMM's K is cut: `splits` runs of `k_chunk`, computed `parts` at a
/// time into as many f32 slabs of the output's size.
#[derive(Clone, Copy, Debug)]
struct Split {
    splits: usize,
    k_chunk: usize,
    parts: usize,
}

/// Most bytes of slabs a split-K GEMM allocates; past it, splits run in
/// waves. The environment variable WGC_GEMM_SCRATCH_BYTES overrides it (to
/// test the waves at small sizes).
fn slab_budget() -> usize {
    std::env::var("WGC_GEMM_SCRATCH_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(256 << 20)
}
/// Most slabs (each element's second pass loops over them).
const MAX_PARTS: usize = 4096;

impl Split {
    /// K in runs of at most K_CHUNK (see split.rs; runs a multiple of
    /// `align`, which divides K_CHUNK), for `outputs` elements of C over
    /// `batch` matrices.
    fn plan(dev: &Device, k: usize, outputs: usize, batch: usize, align: usize) -> Result<Split> {
        Split::into(dev, k, k.div_ceil(K_CHUNK).max(1), outputs, batch, align)
    }

    /// K in about `splits` runs (a multiple of `align` each), as `plan`.
    fn into(dev: &Device, k: usize, splits: usize, outputs: usize, batch: usize, align: usize) -> Result<Split> {
        if splits <= 1 {
            return Ok(Split { splits, k_chunk: k, parts: 1 });
        }
        let k_chunk = k.div_ceil(splits).next_multiple_of(align);
        let splits = k.div_ceil(k_chunk);
        let slab = outputs * 4;
        let binding = dev.limits.max_storage_buffer_binding_size as usize;
        if slab > binding {
            bail!(
                TooLarge,
                "gemm: K = {k} is summed in {splits} parts into f32 scratch the size of the output ({slab} bytes), over this adapter's binding limit of {binding}"
            );
        }
        let budget = slab_budget().min(binding).min(dev.limits.max_buffer_size as usize);
        let max_dim = dev.limits.max_compute_workgroups_per_dimension as usize;
        // At least one slab, even over the budget.
        let cap = (budget / slab).min(max_dim / batch).clamp(1, MAX_PARTS);
        let parts = splits.min(cap);
        Ok(Split { splits, k_chunk, parts })
    }
}

#[cfg(test)]
mod tests {
    use super::{fill_splits_for, split_tiles};

    #[test]
    fn few_tiles_split_k_into_runs_of_at_least_256() {
        assert_eq!(fill_splits_for(47, 5000, 528), 12, "3000 x 50: 47 tiles of 64 x 64");
        assert_eq!(fill_splits_for(64, 8192, 528), 9, "512 x 512");
        assert_eq!(fill_splits_for(132, 1000, 528), 3, "one tile per SM");
        assert_eq!(fill_splits_for(256, 1000, 528), 1, "1000 x 1000: two tiles per SM");
        assert_eq!(fill_splits_for(47, 300, 528), 1, "K too short for two runs of 256");
        assert_eq!(fill_splits_for(10, 4096, 0), 1, "filling off");
    }

    #[test]
    fn split_products_take_wide_tiles_aiming_at_half_the_workgroups() {
        assert_eq!(split_tiles(512, 512, 8192, 1, (1, 1)), (2, 2, 17), "16 tiles of 128 x 128");
        assert_eq!(split_tiles(3000, 50, 5000, 1, (1, 1)), (2, 1, 11), "24 tiles of 128 x 64");
        assert_eq!(split_tiles(1000, 1000, 1000, 1, (1, 1)), (1, 1, 1), "runs of 333 would be too short");
        assert_eq!(split_tiles(8192, 100, 2048, 1, (1, 1)), (2, 1, 3), "256 tiles of 64 x 64: 128 of 128 x 64");
        assert_eq!(split_tiles(2000, 2000, 1000, 1, (1, 1)), (1, 1, 1), "enough tiles: no split");
        assert_eq!(split_tiles(64, 16000, 4096, 1, (1, 1)), (1, 1, 1), "64 rows: not 128 high");
        assert_eq!(split_tiles(40, 50, 16401, 1, (1, 1)), (1, 1, 64), "one 64 x 64 tile: as before");
        assert_eq!(split_tiles(4096, 4096, 4096, 1, (2, 2)), (2, 2, 1));
    }
}
