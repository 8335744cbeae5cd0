//! Indexing operators as C sees them: index_select, gather, embedding.

use super::boundary::{borrow, run};
use super::profile::profile_op;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::ops::movement::gather;

/// Select entries along one axis by index (torch.index_select):
/// `out[.., j, ..] = in[.., index[j], ..]`, where `j` is out's coordinate
/// along `axis`. `index` is a 1-D i32 or u32 tensor (any stride); out has
/// in's shape with dim `axis` replaced by index's length, and in's dtype
/// (f32, f16, i32 or u32). `axis` in [-rank, rank) (negative counts from
/// the end; else `WGC_ERROR_OUT_OF_RANGE`).
///
/// Out-of-range indices: the indices live on the GPU, so they are not
/// checked when the call is recorded. An index outside [0, in.shape[axis])
/// (negative, or past the end) gives 0 in out (+0.0 for floats), and
/// nothing outside `in` is read. When the check is possible before
/// recording, it is made: a non-empty out with `in.shape[axis] == 0`
/// (every index out of range) fails with `WGC_ERROR_OUT_OF_RANGE`.
///
/// Views of any layout (strided, offset, negative strides; `in` and `index`
/// may broadcast with 0 strides). out must have its own buffer (sharing one
/// with `in` or `index`: `WGC_ERROR_INVALID_ARGUMENT`), and no two of its
/// elements may share memory (`WGC_ERROR_INVALID_ARGUMENT`).
/// Statuses: `WGC_ERROR_SHAPE_MISMATCH` (out's shape),
/// `WGC_ERROR_DTYPE_MISMATCH` (out's dtype), `WGC_ERROR_UNSUPPORTED`
/// (index not i32/u32, f16 without adapter support),
/// `WGC_ERROR_INVALID_ARGUMENT` (index not 1-D, rank-0 in, aliasing),
/// `WGC_ERROR_OUT_OF_RANGE`, `WGC_ERROR_NULL_POINTER`,
/// `WGC_ERROR_DEVICE_MISMATCH`. Exact (a copy). Empty out: nothing is
/// launched. Everything is checked before anything is recorded. Records
/// work on `stream`; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_index_select(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axis: i32,
    index: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (x, i, y) = unsafe { (tensor(input, "in")?, tensor(index, "index")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "index_select", [&x, &i], [&y], 0);
        gather::index_select(s, &x, axis, &i, &y)
    })
}

/// Gather along one axis (torch.gather): `out[i_0, .., i_{r-1}] =
/// in[i_0, .., index[i_0, .., i_{r-1}], .., i_{r-1}]`, the index replacing
/// coordinate `axis`. `index` (i32 or u32) has in's rank and, along every
/// dim but `axis`, no more entries than in (`WGC_ERROR_SHAPE_MISMATCH`);
/// out has index's shape and in's dtype. Out-of-range indices give 0, and
/// the other rules, dtypes and statuses are those of
/// `wgc_op_index_select`. Records work; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_gather(
    stream: *const WgcStream,
    input: *const WgcTensor,
    axis: i32,
    index: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (x, i, y) = unsafe { (tensor(input, "in")?, tensor(index, "index")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "gather", [&x, &i], [&y], 0);
        gather::gather(s, &x, axis, &i, &y)
    })
}

/// Embedding lookup: rows of `table` (shape [V, ...], usually [V, D]) by
/// index. `index` (i32 or u32) has any shape S (rank 0 for one row); out has
/// shape S ++ table.shape[1..] and table's dtype (f32 or f16 typically; i32
/// and u32 work too), with `out[s.., ..] = table[index[s..], ..]`. An index
/// outside [0, V) gives a row of zeros (there is no padding index).
/// Contiguous rows whose length is a multiple of 4 are copied four elements
/// at a time. Other rules and statuses as for `wgc_op_index_select`
/// (rank-0 table: `WGC_ERROR_INVALID_ARGUMENT`; V == 0 with a non-empty
/// out: `WGC_ERROR_OUT_OF_RANGE`). Records work; does not block.
///
/// # Safety
/// Every pointer is NULL or valid for its type; tensors' buffers are NULL or
/// live handles.
#[no_mangle]
pub unsafe extern "C" fn wgc_op_embedding(
    stream: *const WgcStream,
    table: *const WgcTensor,
    index: *const WgcTensor,
    out: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let (t, i, y) = unsafe { (tensor(table, "table")?, tensor(index, "index")?, tensor(out, "out")?) };
        let _call = profile_op!(s, "embedding", [&t, &i], [&y], 0);
        gather::embedding(s, &t, &i, &y)
    })
}
