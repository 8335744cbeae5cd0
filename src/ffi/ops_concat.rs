//! concat, and slicing a view (split and slice need no copy).

use super::boundary::{borrow, out, run};
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor, WGC_MAX_RANK};
use crate::error::Error;
use crate::ops::movement::concat;

/// Join `count` tensors along `axis` into `out` (torch.cat): `inputs` is an
/// array of `count` views (count >= 1) with out's rank and dtype (any of
/// f32, f16, i32, u32) and out's shape except along `axis`, where their
/// lengths sum to out's. Inputs may be empty along `axis` (they add
/// nothing) and may be any views; out must not share a buffer with any of
/// them, nor have elements that share memory (`WGC_ERROR_INVALID_ARGUMENT`).
/// `axis` in [-rank, rank) (else `WGC_ERROR_OUT_OF_RANGE`). One copy per
/// non-empty input is recorded (four elements at a time where the layouts
/// allow); everything is checked first, so a failed call records nothing.
///
/// Splitting and slicing need no copy: use `wgc_tensor_slice` to make a
/// view of a part of a tensor, and `wgc_op_copy` if it must be contiguous.
/// Statuses: `WGC_ERROR_SHAPE_MISMATCH`, `WGC_ERROR_DTYPE_MISMATCH`,
/// `WGC_ERROR_INVALID_ARGUMENT` (count 0, rank 0, aliasing),
/// `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_UNSUPPORTED` (f16 without adapter
/// support), `WGC_ERROR_NULL_POINTER`, `WGC_ERROR_DEVICE_MISMATCH`. Exact.
/// Records work on `stream`; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_concat(
    stream: *const WgcStream,
    inputs: *const WgcTensor,
    count: u32,
    axis: i32,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        if count > 0 && inputs.is_null() {
            return Err(Error::NullPointer("inputs is NULL".into()));
        }
        // Grown as read: `count` is the caller's word, not a size to reserve.
        let mut views = Vec::new();
        for i in 0..count as usize {
            views.push(unsafe { tensor(inputs.add(i), &format!("inputs[{i}]")) }?);
        }
        let y = unsafe { tensor(out, "out") }?;
        let _call = s.profile_call(|| {
            let ins: Vec<&crate::ops::tensor::Tensor> = views.iter().collect();
            crate::ops::profile_call::call("concat", &ins, &[&y], 0)
        });
        concat::concat(s, &views, axis, &y)
    })
}

/// Make `*out_view` the part of `*view` with entries start, start + step,
/// ... (below stop) along `axis`: the same buffer and dtype, no copy, no
/// GPU work. Negative `start` and `stop` count from the end (as in Python,
/// but without clamping): after that 0 <= start <= stop <= shape[axis] must
/// hold (else `WGC_ERROR_OUT_OF_RANGE`), and `step` >= 1
/// (`WGC_ERROR_INVALID_ARGUMENT`). `axis` in [-rank, rank). Split a tensor
/// by slicing it once per part. `out_view` may be `view`. Statuses also
/// `WGC_ERROR_NULL_POINTER` and `WGC_ERROR_INVALID_ARGUMENT` (rank above
/// `WGC_MAX_RANK`, negative dims). Does not check the buffer (operators
/// do); does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_tensor_slice(
    view: *const WgcTensor,
    axis: i32,
    start: i64,
    stop: i64,
    step: i64,
    out_view: *mut WgcTensor,
) -> WgcStatus {
    run(|| {
        if view.is_null() {
            return Err(Error::NullPointer("view is NULL".into()));
        }
        let v = unsafe { *view };
        let o = unsafe { out(out_view, "out_view") }?;
        if v.rank > WGC_MAX_RANK {
            return Err(Error::InvalidArgument(format!("rank {} exceeds {WGC_MAX_RANK}", v.rank)));
        }
        let r = v.rank as usize;
        if v.shape[..r].iter().any(|&d| d < 0) || v.offset < 0 {
            return Err(Error::InvalidArgument("the view has a negative dimension or offset".into()));
        }
        let shape: Vec<usize> = v.shape[..r].iter().map(|&d| d as usize).collect();
        let strides: Vec<isize> = v.strides[..r].iter().map(|&s| s as isize).collect();
        let (len, stride, offset) = concat::slice_view(&shape, &strides, v.offset as usize, axis, start, stop, step)?;
        let a = if axis < 0 { axis + v.rank as i32 } else { axis } as usize;
        let mut result = v;
        result.shape[a] = len as i64;
        result.strides[a] = stride as i64;
        result.offset = offset as i64;
        *o = result;
        Ok(())
    })
}
