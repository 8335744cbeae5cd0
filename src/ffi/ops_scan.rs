//! Scans as C sees them.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::ops::reduce::cumsum;

/// Inclusive prefix sum along `axis` (torch.cumsum with out's dtype equal
/// to in's): `out[.., j, ..] = sum(in[.., 0..=j, ..])`. f32, f16, i32, u32;
/// out has in's shape and dtype. f32 and f16 accumulate in f32; i32 and u32
/// in their own type, wrapping modulo 2^32 (torch would widen to int64).
/// NaN and infinities propagate as in IEEE addition. `axis` in
/// [-rank, rank) (a rank-0 tensor is copied); else `WGC_ERROR_OUT_OF_RANGE`.
///
/// Any layout and any length: rows along a contiguous axis are scanned by
/// workgroups in tiles of 1024 elements; rows along a strided axis by one
/// invocation per row and chunk; long rows take three passes (chunk sums,
/// their scan, the final scan) with a temporary of 4 bytes per chunk. No
/// invocation runs more than about 60,000 loop iterations, so software
/// drivers that cut long loops short give exact results too.
///
/// Accuracy (floats): summation order is blocked, not sequential; the
/// error is within about 1e-6 * (number of terms)^0.5 * sum(|in|) of the
/// exact prefix for f32, plus f16 rounding of the result for f16.
/// out must have its own buffer (sharing one with in, or elements that
/// share memory: `WGC_ERROR_INVALID_ARGUMENT`). Statuses also
/// `WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`,
/// `WGC_ERROR_UNSUPPORTED` (f16 without adapter support),
/// `WGC_ERROR_TOO_LARGE` (a temporary the adapter cannot bind),
/// `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_DEVICE_MISMATCH`. Checked before
/// anything is recorded. Records work on `stream`; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_cumsum(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axis: i32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (x, y) = unsafe { (tensor(input, "in")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "cumsum", [&x], [&y], 0);
        cumsum::cumsum(s, &x, axis, &y)
    })
}
