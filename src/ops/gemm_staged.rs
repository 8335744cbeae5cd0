//! f16 and bf16 products whose operands the tensor-core kernels cannot read
//! with 16-byte loads (K or N not a multiple of 8, odd strides or offsets)
//! reach them through aligned copies: A into (.., M, Kp) and B into
//! (.., N, Kp) scratch, Kp = K rounded up to 8, the padding zeros. The
//! product is then taken over Kp, which adds only 0 * 0 terms, so C is the
//! same as over K (NaN and inf included). The copies cost two passes over A
//! and B; on an H200 the f32-unit tiled kernel that these products took
//! before ran at about 35 TFLOP/s against 220 on the tensor cores.
//!
//! `WGC_GEMM_STAGE` (read once): `0` never stages (the tiled kernel, for
//! comparisons); `always` stages every f16/bf16 product the tensor-core
//! kernels reject for alignment, whatever its size and even without tensor
//! cores (the tiled kernel then runs on the copies), so that the copies are
//! tested on any driver.

use super::split::scratch;
use super::tensor::{contiguous_strides, numel, DType, Tensor};
use super::{bf16, gemm_coop, movement};
use crate::error::Result;
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::{Arc, OnceLock};

/// FLOPs from which staging pays: the two copies and the zero padding are
/// about four small passes (3-4 us each on an H200), while the tiled kernel
/// takes 30 us for 2^30 FLOPs.
const MIN_FLOPS: f64 = (1u64 << 30) as f64;
/// Rows and columns from which staging pays (fewer go to the matrix-vector
/// kernels, which read the operands as they are).
const MIN_SIDE: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    Auto,
    Always,
}

fn mode() -> Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("WGC_GEMM_STAGE").as_deref() {
        Ok("0") => Mode::Off,
        Ok("always") => Mode::Always,
        _ => Mode::Auto,
    })
}

/// Aligned copies of a GEMM's operands (see the module comment).
pub struct Staged {
    a: Arc<Buffer>,
    b: Arc<Buffer>,
    a_shape: Vec<usize>,
    b_shape: Vec<usize>,
    dtype: DType,
    /// K rounded up to a multiple of 8.
    pub k: usize,
}

impl Staged {
    /// op(A) as (.., M, Kp), dense along K.
    pub fn a(&self) -> Tensor<'_> {
        let shape = padded(&self.a_shape, self.k);
        let strides = contiguous_strides(&shape);
        Tensor { buffer: &self.a, dtype: self.dtype, shape, strides, offset: 0 }
    }

    /// op(B) as (.., Kp, N): a transposed view of the (.., N, Kp) copy.
    pub fn b(&self) -> Tensor<'_> {
        let shape = padded(&self.b_shape, self.k);
        let strides = contiguous_strides(&shape);
        let t = Tensor { buffer: &self.b, dtype: self.dtype, shape, strides, offset: 0 };
        swap_last(&t)
    }
}

/// `shape` (.., X, K) with K replaced by `k`.
fn padded(shape: &[usize], k: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    *s.last_mut().expect("GEMM operands have rank >= 2") = k;
    s
}

/// The view with its last two dims swapped.
fn swap_last<'a>(t: &Tensor<'a>) -> Tensor<'a> {
    let r = t.rank();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    t.permuted(&perm)
}

/// Whether a product of a (.., M, K) and b (.., K, N) over `batch` matrices,
/// which the tensor-core kernels rejected for alignment, should be staged.
fn wanted(stream: &StreamShared, a: &Tensor, (m, n, k): (usize, usize, usize), batch: usize) -> bool {
    match mode() {
        Mode::Off => false,
        Mode::Always => matches!(a.dtype, DType::F16 | DType::BF16),
        Mode::Auto => {
            let flops = 2.0 * m as f64 * n as f64 * k as f64 * batch as f64;
            gemm_coop::takes_dtype(&stream.device, a.dtype) && m >= MIN_SIDE && n >= MIN_SIDE && flops >= MIN_FLOPS
        }
    }
}

/// Aligned copies of a (.., M, K) and b (.., K, N) where `wanted` (each
/// keeps its own batch dims; broadcasting is left to the GEMM), recorded on
/// `stream`; None where the product should run on the views as they are.
pub fn stage(
    stream: &StreamShared,
    a: &Tensor,
    b: &Tensor,
    (m, n, k): (usize, usize, usize),
    batch: usize,
) -> Result<Option<Staged>> {
    if !wanted(stream, a, (m, n, k), batch) {
        return Ok(None);
    }
    let kp = k.next_multiple_of(8);
    let bt = swap_last(b);
    let bytes = |x: &Tensor| (numel(&padded(&x.shape, kp)) * x.dtype.size()) as u64;
    // Copies past what one binding can cover stay with the tiled kernel.
    let binding = stream.device.limits.max_storage_buffer_binding_size;
    if bytes(a) > binding || bytes(&bt) > binding {
        return Ok(None);
    }
    // Both allocations before anything is recorded.
    let a_buf = scratch(&stream.device, bytes(a))?;
    let b_buf = scratch(&stream.device, bytes(&bt))?;
    copy_padded(stream, a, &a_buf, kp)?;
    copy_padded(stream, &bt, &b_buf, kp)?;
    Ok(Some(Staged { a: a_buf, b: b_buf, a_shape: a.shape.clone(), b_shape: bt.shape, dtype: a.dtype, k: kp }))
}

/// `x` (.., R, K) copied into `buffer` laid out as (.., R, kp), the columns
/// past K zero.
fn copy_padded(stream: &StreamShared, x: &Tensor, buffer: &Buffer, kp: usize) -> Result<()> {
    let strides = contiguous_strides(&padded(&x.shape, kp));
    let k = *x.shape.last().expect("rank >= 2");
    let dst = Tensor { buffer, dtype: x.dtype, shape: x.shape.clone(), strides, offset: 0 };
    if x.dtype == DType::BF16 {
        bf16::convert(stream, x, &dst)?;
    } else {
        movement::copy(stream, x, &dst)?;
    }
    if kp > k {
        let pad = Tensor { shape: padded(&x.shape, kp - k), offset: k, ..dst };
        movement::fill(stream, &pad, 0.0)?;
    }
    Ok(())
}
