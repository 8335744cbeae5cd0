//! Collectives over the devices of a communicator: all-reduce, all-gather,
//! reduce-scatter, broadcast. Rank i's tensor lives on device i and its
//! work is ordered on stream i. Transfers go through `ops::multi::peer` (host
//! memory); reductions are the library's elementwise ADD / MAXIMUM kernels on
//! the receiving device.
//!
//! Schedule (every step runs one thread per rank, so each device's link
//! carries one download and one upload at a time):
//! - reduce-scatter: rank i owns segment i; in step k = 1..N-1 it receives
//!   segment i of rank (i + k) mod N into scratch and reduces it into its
//!   own (the reduction runs on the GPU while the next step transfers);
//! - all-gather: each rank sends its segment to every other rank with one
//!   read-back and N-1 uploads;
//! - all-reduce: reduce-scatter of the tensor's segments in place, then
//!   all-gather of the reduced segments. Each device sends and receives
//!   2(N-1)/N of the tensor, as a ring does. Every rank gets bit-identical
//!   results (each segment is reduced once, by its owner, then copied).
//!   Small tensors instead go to every rank at once and each rank reduces
//!   all N in rank order (one transfer step instead of two). Where every
//!   device imports host memory that step is two phases of one submission
//!   per device (`peer_copy_imported::all_gather`): every tensor into one
//!   host block, one wait, then the block into each rank's scratch and the
//!   reductions, with no thread per rank and no wait between them.

use crate::bail;
use crate::error::{Error, Result};
use crate::ops::elementwise::{binary, BinaryOp};
use crate::ops::movement;
use crate::ops::multi::peer;
use crate::ops::spec::{check_output, Sharing};
use crate::ops::split::scratch;
use crate::ops::tensor::{contiguous_strides, DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::comm::Comm;
use crate::runtime::peer_copy::Endpoint;
use crate::runtime::peer_copy_imported::{self, Outcome};
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

/// How a reducing collective combines the ranks' elements.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveOp {
    /// Sum (in f32 for f16 and bf16, rounded once per received segment).
    Sum = 0,
    /// Maximum; NaN propagates (as WGC_BINARY_OP_MAXIMUM).
    Max = 1,
}

impl CollectiveOp {
    pub fn from_u32(v: u32) -> Result<Self> {
        Ok(match v {
            0 => CollectiveOp::Sum,
            1 => CollectiveOp::Max,
            _ => bail!(InvalidArgument, "unknown collective op {v}"),
        })
    }

    fn binary(self) -> BinaryOp {
        match self {
            CollectiveOp::Sum => BinaryOp::Add,
            CollectiveOp::Max => BinaryOp::Maximum,
        }
    }
}

/// Run `f(rank)` for every rank on its own thread; the first error wins.
fn each_rank(n: usize, f: impl Fn(usize) -> Result<()> + Sync) -> Result<()> {
    if n == 1 {
        return f(0);
    }
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n).map(|i| scope.spawn(move || f(i))).collect();
        let results: Vec<Result<()>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("a collective's thread panicked".into()))))
            .collect();
        results.into_iter().collect()
    })
}

/// Streams and tensors: one per rank, each on the rank's device.
fn check_ranks(comm: &Comm, streams: &[&StreamShared], tensors: &[&Tensor], what: &str) -> Result<()> {
    let n = comm.size();
    if streams.len() != n || tensors.len() != n {
        bail!(InvalidArgument, "{what}: {} streams and {} tensors for {n} devices", streams.len(), tensors.len());
    }
    for (i, (s, t)) in streams.iter().zip(tensors).enumerate() {
        s.device.check_alive()?;
        if !s.device.same(&comm.devices[i]) {
            bail!(DeviceMismatch, "{what}: stream {i} is not on the communicator's device {i}");
        }
        if !t.buffer.device.same(&comm.devices[i]) {
            bail!(DeviceMismatch, "{what}: tensor {i} is not on the communicator's device {i}");
        }
    }
    Ok(())
}

/// All the same dtype and shape as the first, which the devices can reduce.
fn check_alike(tensors: &[&Tensor], what: &str) -> Result<()> {
    let first = tensors[0];
    for (i, t) in tensors.iter().enumerate() {
        if t.dtype != first.dtype {
            bail!(DtypeMismatch, "{what}: tensor {i} is {}, tensor 0 {}", t.dtype.wgsl(), first.dtype.wgsl());
        }
        if t.shape != first.shape {
            bail!(ShapeMismatch, "{what}: tensor {i} has shape {:?}, tensor 0 {:?}", t.shape, first.shape);
        }
    }
    Ok(())
}

fn check_reducible(comm: &Comm, dtype: DType, what: &str) -> Result<()> {
    if !matches!(dtype, DType::F32 | DType::F16 | DType::BF16 | DType::I32 | DType::U32) {
        bail!(Unsupported, "{what}: cannot reduce {}", dtype.wgsl());
    }
    comm.devices.iter().try_for_each(|d| dtype.check_device_bf16(d))
}

fn check_contiguous(t: &Tensor, i: usize, what: &str) -> Result<()> {
    if !t.is_contiguous() {
        bail!(InvalidArgument, "{what}: tensor {i} is not contiguous (make it so with wgc_op_copy)");
    }
    Ok(())
}

/// Elements [start, start + len) of a contiguous tensor, with `shape`
/// (numel `len`) or flat.
fn part<'a>(t: &Tensor<'a>, start: usize, shape: Vec<usize>) -> Tensor<'a> {
    Tensor { buffer: t.buffer, dtype: t.dtype, strides: contiguous_strides(&shape), shape, offset: t.offset + start }
}

fn flat_part<'a>(t: &Tensor<'a>, start: usize, len: usize) -> Tensor<'a> {
    part(t, start, vec![len])
}

fn whole<'a>(buf: &'a Buffer, dtype: DType, len: usize) -> Tensor<'a> {
    Tensor { buffer: buf, dtype, shape: vec![len], strides: vec![1], offset: 0 }
}

/// Segment boundaries of `elems` elements over `n` ranks, on 4-byte
/// multiples (from the tensor's start) so that aligned tensors give aligned
/// segments; segments of tiny tensors may be empty.
fn segments(elems: usize, n: usize, dtype: DType) -> Vec<(usize, usize)> {
    let unit = (4 / dtype.size()).max(1);
    let bound = |i: usize| if i == n { elems } else { elems * i / n / unit * unit };
    (0..n).map(|i| (bound(i), bound(i + 1) - bound(i))).collect()
}

/// Scratch of `elems` elements on each rank's device.
fn scratch_per_rank(comm: &Comm, dtype: DType, elems: usize) -> Result<Vec<Arc<Buffer>>> {
    let bytes = (elems * dtype.size()).div_ceil(4) as u64 * 4;
    comm.devices.iter().map(|d| scratch(d, bytes)).collect()
}

/// Every rank's tensor becomes the elementwise `op` of all of them, in place.
pub fn all_reduce(comm: &Comm, streams: &[&StreamShared], tensors: &[&Tensor], op: CollectiveOp) -> Result<()> {
    let what = "all_reduce";
    check_ranks(comm, streams, tensors, what)?;
    check_alike(tensors, what)?;
    for (i, t) in tensors.iter().enumerate() {
        check_contiguous(t, i, what)?;
        check_output(what, t, &[], Sharing::Separate)?;
    }
    let (n, dtype, elems) = (comm.size(), tensors[0].dtype, tensors[0].numel());
    check_reducible(comm, dtype, what)?;
    if n == 1 || elems == 0 {
        return Ok(());
    }
    if (elems * dtype.size()) as u64 <= direct_bytes(comm) {
        return all_reduce_direct(comm, streams, tensors, op);
    }
    let segs = segments(elems, n, dtype);
    let tmp = scratch_per_rank(comm, dtype, segs.iter().map(|s| s.1).max().unwrap())?;
    for k in 1..n {
        each_rank(n, |i| {
            let (start, len) = segs[i];
            if len == 0 {
                return Ok(());
            }
            let j = (i + k) % n;
            let mine = flat_part(tensors[i], start, len);
            let got = whole(&tmp[i], dtype, len);
            peer::copy(streams[j], &flat_part(tensors[j], start, len), streams[i], &got)?;
            binary(streams[i], op.binary(), &mine, &got, &mine)
        })?;
    }
    each_rank(n, |i| {
        let (start, len) = segs[i];
        if len == 0 {
            return Ok(());
        }
        let others: Vec<Tensor> = (0..n).filter(|&j| j != i).map(|j| flat_part(tensors[j], start, len)).collect();
        let dsts: Vec<(&StreamShared, &Tensor)> =
            (0..n).filter(|&j| j != i).zip(&others).map(|(j, t)| (streams[j], t)).collect();
        peer::copy_to_many(streams[i], &flat_part(tensors[i], start, len), &dsts)
    })
}

/// All-reduces of at most this many bytes (`WGC_ALLREDUCE_DIRECT_KIB` to
/// change) take one transfer step instead of two: latency rules there.
const DIRECT_BYTES: u64 = 256 << 10;

/// The direct all-reduce's limit: rank 0's device setting decides, so that
/// every rank takes the same route.
fn direct_bytes(comm: &Comm) -> u64 {
    let kib = comm.devices[0].settings().multi.allreduce_direct_kib;
    kib.map_or(DIRECT_BYTES, |k| k << 10)
}

/// Every rank sends its whole tensor to every rank's scratch (slot j holds
/// rank j's), then reduces the slots in rank order, so every rank computes
/// the same bits; N-1 times the ring's traffic, one step of latency.
fn all_reduce_direct(comm: &Comm, streams: &[&StreamShared], tensors: &[&Tensor], op: CollectiveOp) -> Result<()> {
    let (n, dtype, elems) = (comm.size(), tensors[0].dtype, tensors[0].numel());
    let unit = (4 / dtype.size()).max(1);
    let stride = elems.div_ceil(unit) * unit;
    let tmp = scratch_per_rank(comm, dtype, n * stride)?;
    let slot = |i: usize, j: usize| flat_part(&whole(&tmp[i], dtype, n * stride), j * stride, elems);
    let reduce = |i: usize| -> Result<()> {
        let out = flat_part(tensors[i], 0, elems);
        binary(streams[i], op.binary(), &slot(i, 0), &slot(i, 1), &out)?;
        for j in 2..n {
            binary(streams[i], op.binary(), &out, &slot(i, j), &out)?;
        }
        Ok(())
    };
    let (size, padded) = (elems * dtype.size(), stride * dtype.size());
    let aligned = tensors.iter().all(|t| {
        let start = t.offset * dtype.size();
        start.is_multiple_of(4) && (start + size).div_ceil(4) * 4 <= t.buffer.size as usize
    });
    if aligned && peer_copy_imported::usable(comm.devices.iter().map(|d| &**d)) {
        // Two phases of one submission per device: every tensor into one
        // host block, then every block into every rank's scratch, reduced there.
        let srcs: Vec<Endpoint> = (0..n)
            .map(|j| Endpoint {
                stream: streams[j],
                buffer: tensors[j].buffer,
                offset: (tensors[j].offset * dtype.size()) as u64,
            })
            .collect();
        let dsts: Vec<Endpoint> = (0..n).map(|i| Endpoint { stream: streams[i], buffer: &tmp[i], offset: 0 }).collect();
        let bytes = size.div_ceil(4) as u64 * 4;
        if peer_copy_imported::all_gather(&srcs, &dsts, bytes, padded as u64, reduce)? == Outcome::Done {
            return Ok(());
        }
    }
    each_rank(n, |j| {
        let slots: Vec<Tensor> = (0..n).map(|i| slot(i, j)).collect();
        let dsts: Vec<(&StreamShared, &Tensor)> = streams.iter().copied().zip(&slots).collect();
        peer::copy_to_many(streams[j], &flat_part(tensors[j], 0, elems), &dsts)
    })?;
    (0..n).try_for_each(reduce)
}

/// Output i (contiguous, N times the input's elements) becomes the inputs of
/// ranks 0..N-1 one after another.
pub fn all_gather(comm: &Comm, streams: &[&StreamShared], inputs: &[&Tensor], outputs: &[&Tensor]) -> Result<()> {
    let what = "all_gather";
    check_ranks(comm, streams, inputs, what)?;
    check_ranks(comm, streams, outputs, what)?;
    check_alike(inputs, what)?;
    let n = comm.size();
    let (dtype, len, shape) = (inputs[0].dtype, inputs[0].numel(), inputs[0].shape.clone());
    for (i, o) in outputs.iter().enumerate() {
        if o.dtype != dtype {
            bail!(DtypeMismatch, "{what}: output {i} is {}, the inputs {}", o.dtype.wgsl(), dtype.wgsl());
        }
        if o.numel() != n * len {
            bail!(ShapeMismatch, "{what}: output {i} has {} elements, not {n} x {len}", o.numel());
        }
        check_contiguous(o, i, what)?;
        check_output(what, o, &[("input", inputs[i])], Sharing::Separate)?;
    }
    if len == 0 {
        return Ok(());
    }
    each_rank(n, |i| {
        let slots: Vec<Tensor> = outputs.iter().map(|o| part(o, i * len, shape.clone())).collect();
        let dsts: Vec<(&StreamShared, &Tensor)> = streams.iter().copied().zip(&slots).collect();
        peer::copy_to_many(streams[i], inputs[i], &dsts)
    })
}

/// Output i (N times fewer elements than each contiguous input) becomes the
/// elementwise `op` over ranks of the inputs' i-th part.
pub fn reduce_scatter(
    comm: &Comm,
    streams: &[&StreamShared],
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    op: CollectiveOp,
) -> Result<()> {
    let what = "reduce_scatter";
    check_ranks(comm, streams, inputs, what)?;
    check_ranks(comm, streams, outputs, what)?;
    check_alike(inputs, what)?;
    check_alike(outputs, what)?;
    let n = comm.size();
    let (dtype, len, shape) = (outputs[0].dtype, outputs[0].numel(), outputs[0].shape.clone());
    if inputs[0].dtype != dtype {
        bail!(DtypeMismatch, "{what}: the inputs are {}, the outputs {}", inputs[0].dtype.wgsl(), dtype.wgsl());
    }
    if inputs[0].numel() != n * len {
        bail!(ShapeMismatch, "{what}: inputs of {} elements, not {n} x the outputs' {len}", inputs[0].numel());
    }
    for (i, (x, o)) in inputs.iter().zip(outputs).enumerate() {
        check_contiguous(x, i, what)?;
        check_output(what, o, &[("input", x)], Sharing::Separate)?;
    }
    check_reducible(comm, dtype, what)?;
    if len == 0 {
        return Ok(());
    }
    each_rank(n, |i| movement::copy(streams[i], &part(inputs[i], i * len, shape.clone()), outputs[i]))?;
    if n == 1 {
        return Ok(());
    }
    let tmp = scratch_per_rank(comm, dtype, len)?;
    for k in 1..n {
        each_rank(n, |i| {
            let j = (i + k) % n;
            let got = part(&whole(&tmp[i], dtype, len), 0, shape.clone());
            peer::copy(streams[j], &part(inputs[j], i * len, shape.clone()), streams[i], &got)?;
            binary(streams[i], op.binary(), outputs[i], &got, outputs[i])
        })?;
    }
    Ok(())
}

/// Every rank's tensor becomes a copy of rank `root`'s.
pub fn broadcast(comm: &Comm, streams: &[&StreamShared], tensors: &[&Tensor], root: usize) -> Result<()> {
    let what = "broadcast";
    check_ranks(comm, streams, tensors, what)?;
    check_alike(tensors, what)?;
    let n = comm.size();
    if root >= n {
        bail!(InvalidArgument, "{what}: root {root} of a communicator of {n} devices");
    }
    let dsts: Vec<(&StreamShared, &Tensor)> = (0..n).filter(|&j| j != root).map(|j| (streams[j], tensors[j])).collect();
    peer::copy_to_many(streams[root], tensors[root], &dsts)
}
