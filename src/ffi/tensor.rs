//! Tensor views as C sees them, and their conversion to `ops::tensor::Tensor`.

use super::boundary::{borrow, out, run};
use super::buffer::WgcBuffer;
use super::status::WgcStatus;
use crate::error::{Error, Result};
use crate::ops::tensor::{checked_contiguous_strides, DType, Tensor};

/// Most dimensions a tensor view may have.
pub const WGC_MAX_RANK: u32 = 8;

/// Element types.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgcDtype {
    F32 = 0,
    F16 = 1,
    I32 = 2,
    U32 = 3,
    /// bfloat16 (8 exponent bits, 7 fraction bits), stored as the raw 16
    /// bits (the top half of the f32 with the same value), 2 bytes per
    /// element. Every adapter supports it (no shader-f16 needed). Taken by
    /// the elementwise operators (binary, binary_scalar, unary, leaky_relu,
    /// clamp, fma, where) and data movement through them (wgc_op_cast,
    /// copy, permute, transpose, fill, arange), the reductions
    /// (wgc_op_reduce, wgc_op_var, wgc_op_std) and wgc_op_gemm /
    /// wgc_op_matmul; every other operator returns WGC_ERROR_UNSUPPORTED
    /// (with a message naming bf16) for bf16 tensors. Computed in f32,
    /// rounded once to bf16 as the header's Numerics section describes.
    /// Kernels hold bf16 as 16-bit halves of u32 words: an element written
    /// alone (a strided or unaligned output) sets its half with atomic
    /// operations, leaving its neighbour intact.
    BF16 = 4,
}

/// A view of a buffer as a tensor: element `[i0, ..., i(rank-1)]` lives at
/// element index `offset + sum(ik * strides[k])` of `buffer`. Strides and
/// offset count elements, not bytes; strides may be 0 (broadcast) or
/// negative. Only the first `rank` entries of `shape` and `strides` are read.
/// Fill one with `wgc_tensor_contiguous`, then change what you need
/// (transpose by swapping shape and stride entries, slice by moving `offset`).
/// A view that reaches outside its buffer, or whose element count overflows
/// 64 bits, is rejected with `WGC_ERROR_OUT_OF_RANGE`.
///
/// Operators bind the part of a buffer a view touches, so views of buffers
/// larger than the adapter's `max_storage_buffer_binding_size` work as long
/// as the elements one view spans fit in one binding
/// (`WGC_ERROR_LIMIT_EXCEEDED` otherwise) and number at most 2^31
/// (`WGC_ERROR_TOO_LARGE`). Zero strides let a view's dims grow far past
/// its buffer; operators whose kernels count such dims in 32 bits (matmul's
/// K, conv2d's channels, kernel and padded input, pooling windows and
/// planes) refuse counts past 2^31-1 with `WGC_ERROR_TOO_LARGE`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcTensor {
    pub buffer: *const WgcBuffer,
    /// A `WgcDtype` (an integer so that an unknown value is reported).
    pub dtype: u32,
    pub rank: u32,
    pub shape: [i64; 8],
    pub strides: [i64; 8],
    pub offset: i64,
}

/// Fill `*out` with a row-major (C order) view of `buffer` from element 0.
/// Does not check that the buffer is large enough (operators do).
/// `WGC_ERROR_OUT_OF_RANGE` (and `*out` untouched) for a shape whose
/// element count or strides overflow `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn wgc_tensor_contiguous(
    buffer: *const WgcBuffer,
    dtype: u32,
    rank: u32,
    shape: *const i64,
    out_tensor: *mut WgcTensor,
) -> WgcStatus {
    run(|| {
        let out = unsafe { out(out_tensor, "out_tensor") }?;
        if buffer.is_null() {
            return Err(Error::NullPointer("buffer is NULL".into()));
        }
        if rank > WGC_MAX_RANK {
            return Err(Error::InvalidArgument(format!("rank {rank} exceeds WGC_MAX_RANK ({WGC_MAX_RANK})")));
        }
        if rank > 0 && shape.is_null() {
            return Err(Error::NullPointer("shape is NULL".into()));
        }
        let dims: &[i64] = if rank == 0 { &[] } else { unsafe { std::slice::from_raw_parts(shape, rank as usize) } };
        if let Some(d) = dims.iter().find(|&&d| d < 0) {
            return Err(Error::InvalidArgument(format!("negative dimension {d}")));
        }
        dtype_of(dtype)?;
        let dims_usize: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        let strides = checked_contiguous_strides(&dims_usize).ok_or_else(|| {
            Error::OutOfRange(format!("shape {dims:?}: its element count or strides overflow 63 bits"))
        })?;
        let mut t = WgcTensor { buffer, dtype, rank, shape: [0; 8], strides: [0; 8], offset: 0 };
        for i in 0..rank as usize {
            t.shape[i] = dims[i];
            t.strides[i] = strides[i] as i64;
        }
        *out = t;
        Ok(())
    })
}

pub(crate) fn dtype_of(v: u32) -> Result<DType> {
    Ok(match v {
        0 => DType::F32,
        1 => DType::F16,
        2 => DType::I32,
        3 => DType::U32,
        4 => DType::BF16,
        _ => return Err(Error::InvalidArgument(format!("unknown dtype {v}"))),
    })
}

/// Convert and validate a C tensor view.
///
/// # Safety
/// `t` must be NULL or point to a `WgcTensor` whose buffer is NULL or live.
pub(crate) unsafe fn tensor<'a>(t: *const WgcTensor, what: &str) -> Result<Tensor<'a>> {
    if t.is_null() {
        return Err(Error::NullPointer(format!("tensor {what} is NULL")));
    }
    let t = unsafe { &*t };
    let buffer =
        unsafe { borrow(t.buffer) }.map_err(|_| Error::NullPointer(format!("tensor {what}: buffer is NULL")))?;
    if t.rank > WGC_MAX_RANK {
        return Err(Error::InvalidArgument(format!("tensor {what}: rank {} exceeds {WGC_MAX_RANK}", t.rank)));
    }
    let dtype = dtype_of(t.dtype)?;
    let r = t.rank as usize;
    if let Some(d) = t.shape[..r].iter().find(|&&d| d < 0) {
        return Err(Error::InvalidArgument(format!("tensor {what}: negative dimension {d}")));
    }
    if t.offset < 0 {
        return Err(Error::OutOfRange(format!("tensor {what}: negative offset {}", t.offset)));
    }
    let view = Tensor {
        buffer,
        dtype,
        shape: t.shape[..r].iter().map(|&d| d as usize).collect(),
        strides: t.strides[..r].iter().map(|&s| s as isize).collect(),
        offset: t.offset as usize,
    };
    view.validate(format_args!("tensor {what}"))?;
    Ok(view)
}
