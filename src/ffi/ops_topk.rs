//! topk as C sees it.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::Error;
use crate::ops::reduce::topk;

/// The `k` largest (`largest` = 1) or smallest (`largest` = 0) entries of
/// every row of `in` along its last dim, as torch.topk(sorted=True):
/// `values` gets them best first (descending for largest, ascending for
/// smallest) and `indices` their positions along the last dim. Ties go to
/// the lower index. NaN counts as larger than every number, +inf included
/// (first when largest, last when smallest); -0.0 and +0.0 are equal.
/// Values are copied bit for bit from `in`.
///
/// `in`: f32, f16, i32 or u32, rank >= 1 (else
/// `WGC_ERROR_INVALID_ARGUMENT`). `values`: in's dtype
/// (`WGC_ERROR_DTYPE_MISMATCH`); `indices`: i32 or u32
/// (`WGC_ERROR_UNSUPPORTED`); both of in's shape with the last dim k
/// (`WGC_ERROR_SHAPE_MISMATCH`). k <= the last dim
/// (`WGC_ERROR_OUT_OF_RANGE`) and k <= 1024 (`WGC_ERROR_UNSUPPORTED`);
/// `largest` 0 or 1 (`WGC_ERROR_INVALID_ARGUMENT`). k = 0 or no rows:
/// nothing is launched. Views of any layout; values and indices must have
/// their own buffers, apart from in and from each other, and no elements
/// that share memory (`WGC_ERROR_INVALID_ARGUMENT`).
///
/// Rows of up to 2048 entries take one launch; longer rows (any length)
/// take a few, with temporaries of 8 * k bytes per 2048 entries.
/// Statuses also `WGC_ERROR_TOO_LARGE` (temporaries the adapter cannot
/// bind), `WGC_ERROR_OUT_OF_RANGE` (views), `WGC_ERROR_NULL_POINTER`,
/// `WGC_ERROR_DEVICE_MISMATCH`. Exact. Checked before anything is recorded.
/// Records work on `stream`; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_topk(
    stream: *const WgcStream,
    input: *const WgcTensor,
    k: u32,
    largest: u32,
    values: *const WgcTensor,
    indices: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (x, v, i) = unsafe { (tensor(input, "in")?, tensor(values, "values")?, tensor(indices, "indices")?) };
        if largest > 1 {
            return Err(Error::InvalidArgument(format!("topk: largest must be 0 or 1, not {largest}")));
        }
        let _call = profile_op!(s, "topk", [&x], [&v, &i], 0);
        topk::topk(s, &x, k as usize, largest == 1, &v, &i)
    })
}
