//! Matrix products: batched GEMM with NumPy broadcasting of batch dims, and
//! NumPy `matmul` on top of it. Any strides work directly in the kernel (no
//! copies); unit strides in the two inner dims select a variant where the
//! stride is a compile-time 1 and the loads are coalesced.

use super::common::whole;
use super::common::{kernel, launch, Params};
use super::gemm_coop::{self, CoopOut};
use super::grid::grid_1d;
use super::reduce_kernels::launch as launch_slots;
use super::split::{scratch, K_CHUNK};
use super::tensor::{
    broadcast_shapes, broadcast_strides, check_kernel_counts, expect_shape, numel, same_device, DType, Tensor,
};
use crate::bail;
use crate::error::Result;
use crate::runtime::buffer::Buffer;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

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
        bail!(Unsupported, "gemm: {} inputs are not supported (f32 or f16)", a.dtype.wgsl());
    }
    let ok_out = c.dtype == DType::F32 || (c.dtype == DType::F16 && a.dtype == DType::F16);
    if !ok_out {
        if !c.dtype.is_float() {
            bail!(Unsupported, "gemm: {} output is not supported", c.dtype.wgsl());
        }
        bail!(DtypeMismatch, "gemm: {} inputs cannot write a {} output", a.dtype.wgsl(), c.dtype.wgsl());
    }
    a.dtype.check_device(&stream.device)?;
    Ok(())
}

/// Reject an output that shares a buffer with an input (inputs are bound
/// read-only and the output read-write, so they must be distinct buffers)
/// or whose view writes one element twice.
pub fn check_output(c: &Tensor, inputs: &[&Tensor], what: &str) -> Result<()> {
    for t in inputs {
        if c.may_overlap(t) {
            bail!(InvalidArgument, "{what}: the output overlaps an input");
        }
        if c.same_buffer(t) && c.numel() > 0 && t.numel() > 0 {
            bail!(InvalidArgument, "{what}: the output must not share a buffer with an input");
        }
    }
    if c.shape.iter().zip(&c.strides).any(|(&d, &s)| d > 1 && s == 0) {
        bail!(InvalidArgument, "{what}: the output view has a zero stride (it would write elements twice)");
    }
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

/// The inner-dim strides as the kernel sees them: the literal "1" where the
/// stride is 1 (or the dim has one element), else the uniform's field.
fn stride_expr(dim: usize, stride: isize, field: &'static str) -> (&'static str, isize) {
    if dim <= 1 || stride == 1 {
        ("1", 1)
    } else {
        (field, stride)
    }
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
    let mut inputs = vec![a, b];
    if let Some(bb) = &bias {
        inputs.push(bb.tensor);
    }
    check_output(c, &inputs, "gemm")?;
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
    // Skinny products (few rows or columns) have kernels of their own.
    if let Some(plan) = super::gemv::plan(dev, alpha, a, b, beta, c, &batch, bias.is_some())? {
        return super::gemv::record(stream, &plan);
    }

    // Batch strides of each operand over the broadcast batch shape.
    let rank_b = batch.len();
    let a_batch = Tensor { shape: a.shape[..ra - 2].to_vec(), strides: a.strides[..ra - 2].to_vec(), ..a.clone() };
    let b_batch = Tensor { shape: b.shape[..rb - 2].to_vec(), strides: b.strides[..rb - 2].to_vec(), ..b.clone() };
    let a_bs = broadcast_strides(&a_batch, &batch);
    let b_bs = broadcast_strides(&b_batch, &batch);
    let c_bs: Vec<isize> = c.strides[..rank_b].to_vec();

    let (a_sm_e, a_sm) = stride_expr(m, a.strides[ra - 2], "p.a_sm");
    let (a_sk_e, a_sk) = stride_expr(k, a.strides[ra - 1], "p.a_sk");
    let (b_sk_e, b_sk) = stride_expr(k, b.strides[rb - 2], "p.b_sk");
    let (b_sn_e, b_sn) = stride_expr(n, b.strides[rb - 1], "p.b_sn");
    let (c_sm_e, c_sm) = stride_expr(m, c.strides[rank_b], "p.c_sm");
    let (c_sn_e, c_sn) = stride_expr(n, c.strides[rank_b + 1], "p.c_sn");
    let a_k_fast = a_sk_e == "1" || (a_sm_e != "1" && a_sk.abs() <= a_sm.abs());
    let b_n_fast = b_sn_e == "1" || (b_sk_e != "1" && b_sn.abs() <= b_sk.abs());

    // 128-wide tiles where there are enough of them to fill a large GPU.
    let tiles64 = m.div_ceil(64) * n.div_ceil(64) * batch_count;
    let big = tiles64 >= 1024;
    let rm = if big && m > 64 { 2 } else { 1 };
    let rn = if big && n > 64 { 2 } else { 1 };
    // Measured on an H200: BK 8 suits 128x128 tiles, 16 the smaller ones.
    let bk = if rm * rn == 4 { 8 } else { 16 };

    let out_t = c.dtype.wgsl();
    let enable = if a.dtype == DType::F16 || c.dtype == DType::F16 { "enable f16;" } else { "" };
    let digit = |v: usize| if v == 2 { "2" } else { "1" };
    let bk_s = if bk == 8 { "8" } else { "16" };
    let bias_flag = if bias.is_some() { "true" } else { "false" };
    let values = [
        ("ENABLE", enable),
        ("IN", a.dtype.wgsl()),
        ("OUT", out_t),
        ("RM", digit(rm)),
        ("RN", digit(rn)),
        ("BK", bk_s),
        ("A_SM", a_sm_e),
        ("A_SK", a_sk_e),
        ("B_SK", b_sk_e),
        ("B_SN", b_sn_e),
        ("C_SM", c_sm_e),
        ("C_SN", c_sn_e),
        ("A_K_FAST", if a_k_fast { "true" } else { "false" }),
        ("B_N_FAST", if b_n_fast { "true" } else { "false" }),
        ("BIAS", bias_flag),
    ];
    let (bias_off, bias_stride) = bias.as_ref().map_or((0, 0), |bb| (bb.tensor.bound_offset(), bb.stride));
    let params = |split: Split, split0: usize, accumulate: bool, row: u32| {
        Params::new()
            .u32(m as u32)
            .u32(n as u32)
            .u32(k as u32)
            .u32(rank_b as u32)
            .f32(alpha)
            .f32(beta)
            .i32(a_sm as i32)
            .i32(a_sk as i32)
            .i32(b_sk as i32)
            .i32(b_sn as i32)
            .i32(c_sm as i32)
            .i32(c_sn as i32)
            .u32(a.bound_offset())
            .u32(b.bound_offset())
            .u32(c.bound_offset())
            .u32(bias_off)
            .array8_u32(&batch, 1)
            .array8_i32(&a_bs)
            .array8_i32(&b_bs)
            .array8_i32(&c_bs)
            .i32(bias_stride as i32)
            .u32(split.k_chunk as u32)
            .u32(split.parts as u32)
            .u32(split0 as u32)
            .u32(accumulate as u32)
            .u32(batch_count as u32)
            .u32(row)
            .align16()
    };
    let bias_t = bias.as_ref().map_or(a, |bb| bb.tensor);
    let outputs = batch_count * m * n;
    // The second pass of a split K: the slabs' sum into C.
    let sum_slabs = |parts: &Buffer, split: Split| {
        let sum_values = [("ENABLE", enable), ("OUT", out_t), ("BIAS", bias_flag)];
        let sum = kernel(dev, "gemm_split_sum.wgsl", "gemm_split_sum", &sum_values)?;
        let (grid, row) = grid_1d(outputs as u64, 256, max_dim as u32);
        let binds = [c.bind(2), bias_t.bind(3), whole(5, parts)];
        launch_slots(stream, &sum, &binds, &params(split, 0, false, row), grid)
    };

    if let Some([sa, sb, sc]) = coop_batch_strides(dev, alpha, a, b, beta, c, &bias, (m, n, k), &a_bs, &b_bs, &c_bs) {
        let split = Split::plan(dev, k, outputs, batch_count, gemm_coop::TILE.bk as usize)?;
        let mut out = CoopOut {
            target: c.bind(2),
            offset: c.bound_offset(),
            batch_c: sc,
            k_chunk: split.k_chunk,
            splits: split.splits,
            split_c: 0,
        };
        if split.splits == 1 {
            return gemm_coop::record(stream, a, b, out, (m, n, k), batch_count, [sa, sb]);
        }
        // All splits at once (the fragments cannot add to a slab).
        if split.parts == split.splits {
            let parts = scratch(dev, (split.parts * outputs * 4) as u64)?;
            (out.target, out.offset, out.batch_c, out.split_c) = (whole(2, &parts), 0, m * n, outputs);
            gemm_coop::record(stream, a, b, out, (m, n, k), batch_count, [sa, sb])?;
            return sum_slabs(&parts, split);
        }
    }

    let groups = [n.div_ceil(64 * rn) as u32, m.div_ceil(64 * rm) as u32, batch_count as u32];
    if groups[0] as usize > max_dim || groups[1] as usize > max_dim {
        bail!(TooLarge, "gemm: {m}x{n} output needs more workgroups than this adapter allows per dimension");
    }
    let split = Split::plan(dev, k, outputs, batch_count, 16)?;
    if split.splits == 1 {
        let kern = kernel(dev, "matmul.wgsl", "gemm", &values)?;
        return launch(stream, &kern, &[a, b, c, bias_t], params(split, 0, false, 0).bytes(), groups);
    }
    // Split K: waves of `parts` splits, each adding into its slab, then a
    // pass that sums the slabs into C.
    let parts = scratch(dev, (split.parts * outputs * 4) as u64)?;
    let kern = kernel(dev, "matmul.wgsl", "gemm_split", &values)?;
    let grid = [groups[0], groups[1], (batch_count * split.parts) as u32];
    for split0 in (0..split.splits).step_by(split.parts) {
        let p = params(split, split0, split0 > 0, 0);
        launch_slots(stream, &kern, &[a.bind(0), b.bind(1), whole(5, &parts)], &p, grid)?;
    }
    sum_slabs(&parts, split)
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
        let splits = k.div_ceil(K_CHUNK).max(1);
        if splits == 1 {
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

/// The tensor-core path takes plain f16 products into f32: row-major
/// operands whose sizes fit its tiles, at most one batch dim, alpha 1,
/// beta 0, no bias. Returns the batch strides when it applies.
#[allow(clippy::too_many_arguments)]
fn coop_batch_strides(
    dev: &Device,
    alpha: f32,
    a: &Tensor,
    b: &Tensor,
    beta: f32,
    c: &Tensor,
    bias: &Option<RowBias>,
    (m, n, k): (usize, usize, usize),
    a_bs: &[isize],
    b_bs: &[isize],
    c_bs: &[isize],
) -> Option<[usize; 3]> {
    let row_major = |t: &Tensor, cols: usize| {
        let r = t.rank();
        t.strides[r - 1] == 1 && t.strides[r - 2] == cols as isize && t.offset.is_multiple_of(8)
    };
    let simple = a.dtype == DType::F16
        && b.dtype == DType::F16
        && c.dtype == DType::F32
        && alpha == 1.0
        && beta == 0.0
        && bias.is_none()
        && a_bs.len() <= 1
        && row_major(a, k)
        && row_major(b, n)
        && row_major(c, n)
        && gemm_coop::fits(m, n, k)
        && gemm_coop::available(dev);
    if !simple {
        return None;
    }
    let stride = |s: &[isize]| s.first().copied().unwrap_or(0);
    let strides = [stride(a_bs), stride(b_bs), stride(c_bs)];
    if strides.iter().any(|&s| s < 0 || s % 8 != 0) {
        return None;
    }
    Some(strides.map(|s| s as usize))
}
