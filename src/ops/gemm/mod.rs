//! Matrix products: batched GEMM with NumPy broadcasting of batch dims, and
//! NumPy `matmul` on top of it. Any strides work directly in the kernel (no
//! copies); unit strides in the two inner dims select a variant where the
//! stride is a compile-time 1 and the loads are coalesced.

pub mod coop;
pub mod coopmat2;
pub mod epilogue;
pub mod explain;
pub mod gemv;
pub mod launch;
pub mod plan;
pub mod problem;
pub mod profile;
pub mod route;
pub mod rows;
pub mod settings;
pub mod skinny;
pub mod spirv;
pub mod staged;
pub mod tiled;
pub mod tuned;
pub mod wide;
pub mod with_epilogue;

#[cfg(test)]
mod epilogue_tests;
#[cfg(test)]
mod plan_tests;

pub use tiled::{GemmParams, FAMILY, FAMILY_BF16};

use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::tensor::{broadcast_shapes, expect_shape, numel, same_device, DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use epilogue::{Epilogue, EpilogueViews};
use problem::Problem;

pub(crate) const FLOATS: &[DType] = &[DType::F32, DType::F16];

/// The second pass of a split-K GEMM: the slabs' sum into C.
pub static SUM_FAMILY: Family = Family {
    file: "gemm_split_sum.wgsl",
    source: concat!(
        include_str!("../../../shaders/gemm_split_sum.wgsl"),
        include_str!("../../../shaders/elementwise_scalar.wgsl"),
        include_str!("../../../shaders/epilogue_activation.wgsl"),
        include_str!("../../../shaders/gemm_epilogue.wgsl")
    ),
    entries: &["gemm_split_sum"],
    types: &[TypeSlot { alias: "OUT", dtypes: FLOATS }],
    overrides: &[OverrideSlot { name: "BIAS", values: &[0.0, 1.0] }],
    uniform: <GemmSumParams as spec::Uniform>::layout,
};

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
        pub epi_act: u32,
        pub epi_flags: u32,
        pub scale_off: u32,
        pub scale_stride: i32,
        pub res_off: u32,
        pub res_sm: i32,
        pub res_sn: i32,
        pub nan: u32,
        pub inf: u32,
        pub _pad1: [u32; 3],
        pub res_bstride: [[i32; 4]; 2],
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
    let (a, b) = gemm_operands(stream, (a, transpose_a), (b, transpose_b), c)?;
    gemm_views(stream, alpha, &a, &b, beta, c, None)
}

/// `gemm`'s checks of dtypes, devices and ranks; op(A) and op(B) as views.
pub(crate) fn gemm_operands<'a>(
    stream: &StreamShared,
    (a, transpose_a): (&Tensor<'a>, bool),
    (b, transpose_b): (&Tensor<'a>, bool),
    c: &Tensor<'a>,
) -> Result<(Tensor<'a>, Tensor<'a>)> {
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
    Ok((a, b))
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

/// The GEMM on prepared views a (..., M, K), b (..., K, N), c (..., M, N),
/// dtypes and devices checked: validated once into a `Problem`, planned
/// (plan.rs; the tuner may choose among candidate plans) and recorded
/// (launch.rs).
pub fn gemm_views(
    stream: &StreamShared,
    alpha: f32,
    a: &Tensor,
    b: &Tensor,
    beta: f32,
    c: &Tensor,
    bias: Option<RowBias>,
) -> Result<()> {
    gemm_views_act(stream, (alpha, beta), a, b, c, bias, Activation::None)
}

/// `gemm_views` with an activation after the row bias, in the route's
/// epilogue.
pub(crate) fn gemm_views_act(
    stream: &StreamShared,
    (alpha, beta): (f32, f32),
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    bias: Option<RowBias>,
    activation: Activation,
) -> Result<()> {
    let Some(mut problem) = Problem::of(stream, (alpha, beta), a, b, c, bias.as_ref())? else {
        return Ok(());
    };
    problem.epilogue.activation = activation;
    launch::run(stream, &problem, launch::Operands { a, b, c, bias: bias.as_ref(), epi: None })
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
    let none = Epilogue::default();
    sum_slabs_epilogue(stream, parts_buf, parts, (alpha, beta), c, (unread, None), bias, &none)
}

/// `sum_slabs_into` with the fused epilogue `e` over the views `epi`
/// (epilogue.rs); a column bias (in `e`) comes as `bias`, as a row bias does.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sum_slabs_epilogue(
    stream: &StreamShared,
    parts_buf: &Buffer,
    parts: usize,
    (alpha, beta): (f32, f32),
    c: &Tensor,
    (unread, epi): (Arg, Option<&EpilogueViews>),
    bias: Option<(Arg, u32, i32)>,
    e: &Epilogue,
) -> Result<()> {
    let r = c.rank();
    let (m, n) = (c.shape[r - 2], c.shape[r - 1]);
    let batch = &c.shape[..r - 2];
    let batches = numel(batch);
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (groups, row) = grid_1d((batches * m * n) as u64, 256, max_dim);
    let (c_arg, c_off) = view_arg("c", c);
    let (scale_arg, res_arg, u) = epilogue::bind(e, epi, unread);
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
        epi_act: u.act,
        epi_flags: u.flags,
        scale_off: u.scale_off,
        scale_stride: u.scale_stride,
        res_off: u.res_off,
        res_sm: u.res_sm,
        res_sn: u.res_sn,
        nan: f32::NAN.to_bits(),
        inf: f32::INFINITY.to_bits(),
        _pad1: [0; 3],
        res_bstride: u.res_bstride,
    };
    // The BIAS override is the row bias; a column bias is the epilogue's.
    let has_bias = if bias.is_some() && e.col_bias.is_none() { 1.0 } else { 0.0 };
    let variant = SUM_FAMILY.variant("gemm_split_sum", &[c.dtype], &[has_bias]);
    let bias_arg = bias.map_or(unread, |b| b.0);
    let args = [c_arg, Arg { name: "bias", ..bias_arg }, Arg::whole("parts", parts_buf), scale_arg, res_arg];
    spec::record(stream, &Launch { variant, params, args, groups })
}
