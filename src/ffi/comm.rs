//! Communicators and the collectives over their devices.

use super::boundary::{self, arc, borrow, out, run, to_handle, Handle};
use super::device::WgcDevice;
use super::status::WgcStatus;
use super::stream::WgcStream;
use super::tensor::{tensor, WgcTensor};
use crate::error::{Error, Result};
use crate::ops::multi::collective::{self, CollectiveOp};
use crate::ops::tensor::Tensor;
use crate::runtime::comm::Comm;
use crate::runtime::stream::StreamShared;

/// Most devices one communicator takes.
pub const WGC_MAX_COMM_DEVICES: u32 = 64;
const _: () = assert!(WGC_MAX_COMM_DEVICES as usize == crate::runtime::comm::MAX_COMM_DEVICES);

/// An ordered set of distinct devices of this process, for collectives.
/// Rank i is the i-th device given at creation; every collective takes one
/// stream and one tensor per rank, in rank order, each of that rank's
/// device. A communicator holds a reference to each device.
///
/// Rules for every collective:
/// - Ordering: rank i's part reads its inputs after all work recorded on
///   `streams[i]` before the call and writes its outputs before all work
///   recorded there after it. Nothing is ordered with other streams.
/// - Blocking: the call returns once every transfer has been read back and
///   handed to its destination's queue (see `wgc_buffer_copy_to_device`);
///   the last reductions and uploads may still run (wait with
///   `wgc_stream_synchronize` or an event, or just record more work).
/// - Threads: a communicator may be used from any thread, but one
///   collective at a time per set of streams; the call uses its own threads
///   (one per rank) internally. The streams are flushed by the call.
/// - Failure: arguments are all checked before anything is recorded. A
///   device lost (or destroyed) during the call gives
///   `WGC_ERROR_DEVICE_LOST` (a transfer that does not arrive within the
///   GPU timeout, 60 s when none is set: `WGC_ERROR_TIMEOUT`), never a
///   hang; the outputs of every rank are then unspecified.
/// - Tensors to reduce must be contiguous views (`WGC_ERROR_INVALID_ARGUMENT`
///   otherwise); the inputs of all-gather and broadcast may be any view.
///   Dtypes: f32, f16, bf16, i32, u32 (f16 where every device has shader
///   f16, `WGC_ERROR_UNSUPPORTED` otherwise).
pub struct WgcComm {
    _private: [u8; 0],
}

impl Handle for WgcComm {
    type Rust = Comm;
    const NAME: &'static str = "WgcComm";
}

/// Create a communicator over `devices[0..count]` (1 to
/// `WGC_MAX_COMM_DEVICES` distinct devices,
/// `WGC_ERROR_INVALID_ARGUMENT` otherwise, for the same device twice too;
/// `WGC_ERROR_NULL_POINTER` for a NULL array or entry;
/// `WGC_ERROR_DEVICE_LOST` for a destroyed device). `*out_comm` holds one
/// reference. Does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_create(
    devices: *const *const WgcDevice,
    count: u32,
    out_comm: *mut *mut WgcComm,
) -> WgcStatus {
    run(|| {
        let out = unsafe { out(out_comm, "out_comm") }?;
        if devices.is_null() {
            return Err(Error::NullPointer("devices is NULL".into()));
        }
        let list = unsafe { std::slice::from_raw_parts(devices, count as usize) };
        let devs = list.iter().map(|&d| unsafe { arc(d) }).collect::<Result<Vec<_>>>()?;
        *out = to_handle::<WgcComm>(Comm::create(devs)?);
        Ok(())
    })
}

/// The number of devices (ranks) of the communicator.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_size(comm: *const WgcComm, out_size: *mut u32) -> WgcStatus {
    run(|| {
        let c = unsafe { borrow(comm) }?;
        *unsafe { out(out_size, "out_size") }? = c.size() as u32;
        Ok(())
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_retain(comm: *mut WgcComm) {
    unsafe { boundary::retain(comm) }
}

/// Drop a reference (and, with the last, those it holds on its devices).
/// NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_release(comm: *mut WgcComm) {
    unsafe { boundary::release(comm) }
}

/// One stream per rank, checked for NULL.
unsafe fn streams<'a>(comm: &Comm, streams: *const *const WgcStream) -> Result<Vec<&'a StreamShared>> {
    if streams.is_null() {
        return Err(Error::NullPointer("streams is NULL".into()));
    }
    let list = unsafe { std::slice::from_raw_parts(streams, comm.size()) };
    list.iter().map(|&s| unsafe { borrow(s) }).collect()
}

/// One tensor view per rank (an array of `WgcTensor`).
unsafe fn tensors<'a>(comm: &Comm, ts: *const WgcTensor, what: &str) -> Result<Vec<Tensor<'a>>> {
    if ts.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    (0..comm.size()).map(|i| unsafe { tensor(ts.add(i), &format!("{what}[{i}]")) }).collect()
}

fn refs<'a, 'b>(v: &'b [Tensor<'a>]) -> Vec<&'b Tensor<'a>> {
    v.iter().collect()
}

/// Every rank's tensor becomes the elementwise `op` (a `WgcCollectiveOp`)
/// of all ranks' tensors, in place. `streams` and `tensors` are arrays of
/// the communicator's size. All tensors must have one shape
/// (`WGC_ERROR_SHAPE_MISMATCH`) and dtype (`WGC_ERROR_DTYPE_MISMATCH`), each
/// on its rank's device (`WGC_ERROR_DEVICE_MISMATCH`). Every rank gets the
/// same bits. Accuracy: each element is reduced in a rank order that
/// depends on its position; SUM of f16 and bf16 rounds after each of the
/// N-1 additions. Tensors of at most 256 KiB (rank 0's device's setting
/// `WGC_ALLREDUCE_DIRECT_KIB` changes it; docs/TUNING.md) go to every rank in one step and
/// are reduced there (lower latency); larger ones are reduce-scattered,
/// then all-gathered (each device sends and receives 2(N-1)/N of the
/// tensor). See `WgcComm` for ordering, blocking and failure.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_all_reduce(
    comm: *const WgcComm,
    streams: *const *const WgcStream,
    tensors: *const WgcTensor,
    op: u32,
) -> WgcStatus {
    run(|| {
        let c = unsafe { borrow(comm) }?;
        let op = CollectiveOp::from_u32(op)?;
        let (s, t) = unsafe { (self::streams(c, streams)?, self::tensors(c, tensors, "tensors")?) };
        collective::all_reduce(c, &s, &refs(&t), op)
    })
}

/// Every rank's `outputs[i]` (contiguous, with N times as many elements as
/// an input) becomes the inputs of ranks 0, 1, ..., N-1 one after another
/// (each input in its row-major order). Inputs: one shape and dtype, any
/// views. `WGC_ERROR_SHAPE_MISMATCH` / `WGC_ERROR_DTYPE_MISMATCH`;
/// `WGC_ERROR_INVALID_ARGUMENT` for an output that overlaps its input. See
/// `WgcComm` for the rest.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_all_gather(
    comm: *const WgcComm,
    streams: *const *const WgcStream,
    inputs: *const WgcTensor,
    outputs: *const WgcTensor,
) -> WgcStatus {
    run(|| {
        let c = unsafe { borrow(comm) }?;
        let s = unsafe { self::streams(c, streams) }?;
        let (x, y) = unsafe { (tensors(c, inputs, "inputs")?, tensors(c, outputs, "outputs")?) };
        collective::all_gather(c, &s, &refs(&x), &refs(&y))
    })
}

/// Rank i's `outputs[i]` becomes the elementwise `op` over all ranks of the
/// i-th of N equal contiguous parts of their `inputs` (contiguous, N times
/// as many elements as an output; outputs of one shape, any views). Statuses
/// as `wgc_comm_all_gather`. See `WgcComm` for the rest.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_reduce_scatter(
    comm: *const WgcComm,
    streams: *const *const WgcStream,
    inputs: *const WgcTensor,
    outputs: *const WgcTensor,
    op: u32,
) -> WgcStatus {
    run(|| {
        let c = unsafe { borrow(comm) }?;
        let op = CollectiveOp::from_u32(op)?;
        let s = unsafe { self::streams(c, streams) }?;
        let (x, y) = unsafe { (tensors(c, inputs, "inputs")?, tensors(c, outputs, "outputs")?) };
        collective::reduce_scatter(c, &s, &refs(&x), &refs(&y), op)
    })
}

/// Every rank's tensor becomes a copy of rank `root`'s (read back once,
/// uploaded to every other rank). One shape and dtype, any views;
/// `WGC_ERROR_INVALID_ARGUMENT` for a root past the last rank. See
/// `WgcComm` for the rest.
#[no_mangle]
pub unsafe extern "C" fn wgc_comm_broadcast(
    comm: *const WgcComm,
    streams: *const *const WgcStream,
    tensors: *const WgcTensor,
    root: u32,
) -> WgcStatus {
    run(|| {
        let c = unsafe { borrow(comm) }?;
        let (s, t) = unsafe { (self::streams(c, streams)?, self::tensors(c, tensors, "tensors")?) };
        collective::broadcast(c, &s, &refs(&t), root as usize)
    })
}
