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
//! The device setting `WGC_GEMM_STAGE`: `0` never stages (the tiled kernel, for
//! comparisons); `always` stages every f16/bf16 product the tensor-core
//! kernels reject for alignment, whatever its size and even without tensor
//! cores (the tiled kernel then runs on the copies), so that the copies are
//! tested on any driver.

use crate::error::Result;
use crate::ops::split::scratch;
use crate::ops::tensor::{contiguous_strides, numel, DType, Tensor};
use crate::ops::{elementwise::bf16, gemm::coop as gemm_coop, movement};
use crate::runtime::buffer::Buffer;
use crate::runtime::device::Device;
use crate::runtime::settings::StageMode as Mode;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// FLOPs from which staging pays: the two copies and the zero padding are
/// about four small passes (3-4 us each on an H200), while the tiled kernel
/// takes 30 us for 2^30 FLOPs.
const MIN_FLOPS: f64 = (1u64 << 30) as f64;
/// Rows and columns from which staging pays (fewer go to the matrix-vector
/// kernels, which read the operands as they are).
const MIN_SIDE: usize = 64;

/// The device's setting `WGC_GEMM_STAGE`.
fn mode(dev: &Device) -> Mode {
    dev.settings().gemm.stage
}

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

/// Whether a product of a (.., M, K) and b (.., K, N) over `batch` matrices,
/// which the tensor-core kernels rejected for alignment, should be staged.
fn wanted(stream: &StreamShared, a: &Tensor, (m, n, k): (usize, usize, usize), batch: usize) -> bool {
    match mode(&stream.device) {
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
    let a_copy =
        OperandCopy { buffer: scratch(&stream.device, bytes(a))?, shape: a.shape.clone(), rows_dense: rows_dense(a) };
    let bt_copy = OperandCopy {
        buffer: scratch(&stream.device, bytes(&bt))?,
        shape: bt.shape.clone(),
        rows_dense: rows_dense(&bt),
    };
    copy_padded(stream, a, &a_copy, kp)?;
    copy_padded(stream, &bt, &bt_copy, kp)?;
    Ok(Some(Staged { a: a_copy, bt: bt_copy, dtype: a.dtype, k: kp }))
}

/// True if `x` (.., R, K) is dense along R (and not along K) and R is a
/// multiple of 8: its copy keeps that layout, a plain copy.
fn rows_dense(x: &Tensor) -> bool {
    let r = x.rank();
    x.strides[r - 2] == 1 && x.strides[r - 1] != 1 && x.shape[r - 2].is_multiple_of(8)
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
