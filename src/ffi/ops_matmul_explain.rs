//! Which route a matrix product takes, without recording it.

use super::boundary::{borrow, out, run};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Error;
use crate::ops::gemm::explain::explain_gemm;
use std::ffi::c_char;

/// Describe how `wgc_op_gemm` with the same arguments would run, without
/// recording anything: one line, "route <kernel and its parameters>
/// because <the decision that picked it> (m=.. n=.. k=.. batch=..)", e.g.
/// `route tiled gemm_c4 rm=1 rn=1 ... because f32 operands, ...`. The
/// route is the one planned with the device's settings; where the device's
/// autotuner is on, a stored measurement for the shape class may choose
/// another matrix-vector mode. The text is for people and logs: its wording
/// may change between versions.
///
/// Writes the line, NUL-terminated, into `text` if it fits in `capacity`
/// bytes, and its length without the NUL into `*out_length` either way
/// (`text` NULL with `capacity` 0 asks for the length: `WGC_OK`); with a
/// nonzero `capacity` that is too small it returns `WGC_ERROR_TOO_LARGE`
/// and writes nothing into `text`.
///
/// Statuses: every status `wgc_op_gemm` returns for these operands, for
/// the same reasons (checked the same way: NULLs, dtypes, shapes, views,
/// sharing, sizes); `WGC_ERROR_NULL_POINTER` also for a NULL `out_length`,
/// or NULL `text` with a nonzero capacity; `WGC_ERROR_TOO_LARGE` also for
/// a capacity too small. Does not block; any thread.
///
/// # Safety
/// `text` must be valid for `capacity` bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn wgc_op_gemm_explain(
    stream: *const WgcStream,
    alpha: f32,
    a: *const WgcTensor,
    transpose_a: u32,
    b: *const WgcTensor,
    transpose_b: u32,
    beta: f32,
    c: *const WgcTensor,
    text: *mut c_char,
    capacity: usize,
    out_length: *mut usize,
) -> WgcStatus {
    run(|| {
        let length = unsafe { out(out_length, "out_length") }?;
        if capacity > 0 && text.is_null() {
            return Err(Error::NullPointer("text is NULL but capacity is not 0".into()));
        }
        let s = unsafe { borrow(stream) }?;
        let a = unsafe { tensor(a, "a") }?;
        let b = unsafe { tensor(b, "b") }?;
        let c = unsafe { tensor(c, "c") }?;
        let line = explain_gemm(s, alpha, &a, transpose_a != 0, &b, transpose_b != 0, beta, &c)?;
        *length = line.len();
        if line.len() + 1 > capacity {
            if capacity == 0 {
                return Ok(());
            }
            return Err(Error::TooLarge(format!(
                "the explanation needs {} bytes, capacity is {capacity}",
                line.len() + 1
            )));
        }
        unsafe {
            std::ptr::copy_nonoverlapping(line.as_ptr(), text as *mut u8, line.len());
            *text.add(line.len()) = 0;
        }
        Ok(())
    })
}
