//! Data movement operators: copy between views, permute, transpose, cast,
//! fill, arange. The same rules as the elementwise operators hold: views on
//! the stream's device, everything checked before anything is recorded, an
//! output that overlaps its input without being the same view fails with
//! `WGC_ERROR_INVALID_ARGUMENT`, empty tensors launch nothing, nothing blocks.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Error;
use crate::ops::movement;

/// Copy any view into any view of the same shape and dtype (for example to
/// make a strided view contiguous). `WGC_ERROR_SHAPE_MISMATCH`,
/// `WGC_ERROR_DTYPE_MISMATCH` (use `wgc_op_cast` to convert).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_copy(
    stream: *const WgcStream,
    input: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (a, out) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "copy", [&a], [&out], 0);
        movement::copy(s, &a, &out)
    })
}

/// out[i_0, ..., i_{r-1}] = in[...] with out's dim k being in's dim
/// perm[k], materialised. `rank` must equal in's rank and perm must be a
/// permutation of 0..rank-1 (`WGC_ERROR_INVALID_ARGUMENT`); out's shape
/// must be the permuted shape (`WGC_ERROR_SHAPE_MISMATCH`).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_permute(
    stream: *const WgcStream,
    input: *const WgcTensor,
    perm: *const u32,
    rank: u32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        if rank > 8 {
            return Err(Error::InvalidArgument(format!("permute: rank {rank} exceeds 8")));
        }
        if rank > 0 && perm.is_null() {
            return Err(Error::NullPointer("perm is NULL".into()));
        }
        let p: Vec<usize> = if rank == 0 {
            vec![]
        } else {
            unsafe { std::slice::from_raw_parts(perm, rank as usize) }.iter().map(|&v| v as usize).collect()
        };
        let (a, out) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "permute", [&a], [&out], 0);
        movement::permute(s, &a, &p, &out)
    })
}

/// out = in with dims dim0 and dim1 swapped, materialised. Negative dims
/// count from the end; out of range: `WGC_ERROR_OUT_OF_RANGE`.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_transpose(
    stream: *const WgcStream,
    input: *const WgcTensor,
    dim0: i32,
    dim1: i32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (a, out) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "transpose", [&a], [&out], 0);
        movement::transpose(s, &a, dim0, dim1, &out)
    })
}

/// Convert in's elements to out's dtype (any of f32, f16, bf16, i32, u32; same
/// shape). Float -> integer truncates toward zero and saturates at the
/// integer range as f32 sees it (NaN -> 0; above the range gives the
/// largest f32 below 2^31, 2147483520, for i32 and the largest below 2^32,
/// 4294967040, for u32; below gives INT32_MIN or 0). i32 <-> u32 reinterpret
/// the bits. Integer -> float and f32 -> f16 round once to nearest even
/// (integers are exact up to 2^24 in f32, 2048 in f16); beyond the f16 range
/// (|x| >= 65520) the result is +-inf. bf16: to and from every dtype, as
/// the header's Numerics section describes (bf16 -> f32 exact; f32, f16
/// and integers -> bf16 rounded once to nearest even, NaN -> 0x7fc0, past
/// the range +-inf; bf16 -> f16 rounded to nearest even; bf16 -> integers
/// as float -> integer above; bf16 -> bf16 copies the bits), dense views in
/// vector units, other views element by element. Common rules: see
/// `wgc_op_binary`.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_cast(
    stream: *const WgcStream,
    input: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (a, out) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "cast", [&a], [&out], 0);
        movement::cast(s, &a, &out)
    })
}

/// Set every element of the view `out` (any dtype) to `value`, converted
/// as in `wgc_op_binary_scalar` (floats rounded once; f16 directly from the
/// double).
#[no_mangle]
pub unsafe extern "C" fn wgc_op_fill(stream: *const WgcStream, out: *const WgcTensor, value: f64) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let out = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "fill", [], [&out], 0);
        movement::fill(s, &out, value)
    })
}

/// out[i] = start + i * step for a 1-D out (else `WGC_ERROR_INVALID_ARGUMENT`).
/// f32/f16 compute start + f32(i) * step in f32 (exact while i < 2^24);
/// i32/u32 truncate start and step toward zero, reduce them modulo 2^32
/// (so an i32 start of 3e9 wraps to -1294967296, as the arithmetic that
/// follows does) and use wrapping integer arithmetic (a negative step works
/// for u32). Non-finite start or step: `WGC_ERROR_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_arange(
    stream: *const WgcStream,
    out: *const WgcTensor,
    start: f64,
    step: f64,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let out = unsafe { tensor(out, "out") }?;
        let _call = profile_op!(s, "arange", [], [&out], 0);
        movement::arange(s, &out, start, step)
    })
}
