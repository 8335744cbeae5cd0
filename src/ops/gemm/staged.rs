//! f16 and bf16 products whose operands the tensor-core kernels cannot read
//! with 16-byte loads (K or N not a multiple of 8, odd strides or offsets)
//! reach them through aligned copies. Each operand, seen as (.., R, K) (R =
//! M for A, N for B^T), is copied dense along R where it already is and R
//! is a multiple of 8, else dense along K, so that a copy transposes only
//! where it must; K is rounded up to 8 (Kp) and the padding is zero. The
//! product is then taken over Kp, which adds only 0 * 0 terms, so C is the
//! same as over K (NaN and inf included). The copies cost a pass over A and
//! B; on an H200 the f32-unit tiled kernel that these products took before
//! ran at about 35 TFLOP/s against 220 on the tensor cores.
//!
//! The `stage` setting (`WGC_GEMM_STAGE`): `0` never stages (the tiled
//! kernel, for comparisons); `always` stages every f16/bf16 product the
//! tensor-core kernels reject for alignment, whatever its size and even
//! without tensor cores (the tiled kernel then runs on the copies), so that
//! the copies are tested on any driver.

use crate::error::Result;
use crate::ops::gemm::coop;
use crate::ops::gemm::problem::{broadcast_own, Matrix, Problem};
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::route::Staging;
use crate::ops::gemm::settings::{GemmSettings, StageMode};
use crate::ops::tensor::{contiguous_strides, numel, DType, Tensor};
use crate::ops::{elementwise::bf16, movement};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// FLOPs from which staging pays: the two copies and the zero padding are
/// about four small passes (3-4 us each on an H200), while the tiled kernel
/// takes 30 us for 2^30 FLOPs.
const MIN_FLOPS: f64 = (1u64 << 30) as f64;
/// Rows and columns from which staging pays (fewer go to the matrix-vector
/// kernels, which read the operands as they are).
const MIN_SIDE: usize = 64;

/// One operand's aligned copy: `shape` is the operand as (.., R, K);
/// the copy holds (.., R, Kp), or (.., Kp, R) where `rows_dense`.
struct OperandCopy {
    buffer: Arc<Buffer>,
    shape: Vec<usize>,
    rows_dense: bool,
}

impl OperandCopy {
    /// The copy's memory as a contiguous view, with K padded to `kp`.
    fn storage(&self, dtype: DType, kp: usize) -> Tensor<'_> {
        let mut shape = padded(&self.shape, kp);
        if self.rows_dense {
            shape = swap_last_dims(&shape);
        }
        let strides = contiguous_strides(&shape);
        Tensor { buffer: &self.buffer, dtype, shape, strides, offset: 0 }
    }

    /// The copy as an (.., R, Kp) view.
    fn view(&self, dtype: DType, kp: usize) -> Tensor<'_> {
        let t = self.storage(dtype, kp);
        if self.rows_dense {
            swap_last(&t)
        } else {
            t
        }
    }
}

/// Aligned copies of a GEMM's operands (see the module comment).
pub struct Staged {
    a: OperandCopy,
    /// B^T, (.., N, K).
    bt: OperandCopy,
    dtype: DType,
    /// K rounded up to a multiple of 8.
    pub k: usize,
}

impl Staged {
    /// op(A) as (.., M, Kp).
    pub fn a(&self) -> Tensor<'_> {
        self.a.view(self.dtype, self.k)
    }

    /// op(B) as (.., Kp, N).
    pub fn b(&self) -> Tensor<'_> {
        swap_last(&self.bt.view(self.dtype, self.k))
    }
}

fn swap_last_dims(shape: &[usize]) -> Vec<usize> {
    let mut s = shape.to_vec();
    let r = s.len();
    s.swap(r - 2, r - 1);
    s
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

/// Whether a product the tensor-core kernels rejected for alignment
/// should be staged.
fn wanted(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> bool {
    match s.stage {
        StageMode::Off => false,
        StageMode::Always => matches!(q.dtype, DType::F16 | DType::BF16),
        StageMode::Auto => {
            coop::takes_dtype(p, s, q.dtype) && q.m >= MIN_SIDE && q.n >= MIN_SIDE && q.flops() >= MIN_FLOPS
        }
    }
}

/// The copies for `q` where `wanted` (each operand keeps its own batch
/// dims; broadcasting is left to the GEMM); None where the product should
/// run on the views as they are (also where a copy would not fit one
/// binding).
pub fn plan(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> Option<Staging> {
    if !wanted(q, p, s) {
        return None;
    }
    let kp = q.k.next_multiple_of(8);
    let bytes = |own: &[usize], rows: usize| numel(own) * rows * kp * q.dtype.size();
    if bytes(&q.a_batch, q.m) > p.max_binding || bytes(&q.b_batch, q.n) > p.max_binding {
        return None;
    }
    // Dense along R (and not along K) with R a multiple of 8: the copy keeps that layout.
    let rows_dense = |x: &Matrix| x.strides[0] == 1 && x.strides[1] != 1 && x.rows.is_multiple_of(8);
    Some(Staging { kp, a_rows_dense: rows_dense(&q.a), bt_rows_dense: rows_dense(&q.b.t()) })
}

/// The problem on the copies `staging` describes.
pub fn problem(q: &Problem, staging: &Staging) -> Problem {
    let kp = staging.kp;
    // (.., R, Kp) over `own`, stored (.., Kp, R) where `rows_dense`.
    let copy = |own: &[usize], rows: usize, rows_dense: bool| {
        let x = if rows_dense { Matrix::row_major(kp, rows, own).t() } else { Matrix::row_major(rows, kp, own) };
        Matrix { batch_strides: broadcast_own(own, &x.batch_strides, &q.batch), ..x }
    };
    Problem {
        k: kp,
        a: copy(&q.a_batch, q.m, staging.a_rows_dense),
        b: copy(&q.b_batch, q.n, staging.bt_rows_dense).t(),
        ..q.clone()
    }
}

/// Record the copies `staging` describes of a (.., M, K) and b (.., K, N).
pub fn stage(stream: &StreamShared, staging: &Staging, a: &Tensor, b: &Tensor) -> Result<Staged> {
    let kp = staging.kp;
    let bt = swap_last(b);
    let bytes = |x: &Tensor| (numel(&padded(&x.shape, kp)) * x.dtype.size()) as u64;
    // Both allocations before anything is recorded.
    let a_copy = OperandCopy {
        buffer: stream.ordered_scratch(bytes(a))?,
        shape: a.shape.clone(),
        rows_dense: staging.a_rows_dense,
    };
    let bt_copy = OperandCopy {
        buffer: stream.ordered_scratch(bytes(&bt))?,
        shape: bt.shape.clone(),
        rows_dense: staging.bt_rows_dense,
    };
    copy_padded(stream, a, &a_copy, kp)?;
    copy_padded(stream, &bt, &bt_copy, kp)?;
    Ok(Staged { a: a_copy, bt: bt_copy, dtype: a.dtype, k: kp })
}

/// `x` (.., R, K) copied into `dst`'s buffer in its layout, the K past x's
/// zero.
fn copy_padded(stream: &StreamShared, x: &Tensor, dst: &OperandCopy, kp: usize) -> Result<()> {
    let r = x.rank();
    let k = x.shape[r - 1];
    // The copy as (.., R, Kp), restricted to x's K.
    let all = dst.view(x.dtype, kp);
    let into = Tensor { shape: x.shape.clone(), ..all.clone() };
    if x.dtype == DType::BF16 {
        bf16::convert(stream, x, &into)?;
    } else {
        movement::copy(stream, x, &into)?;
    }
    if kp > k {
        let pad = Tensor { shape: padded(&x.shape, kp - k), offset: k * all.strides[r - 1] as usize, ..all };
        movement::fill(stream, &pad, 0.0)?;
    }
    Ok(())
}
