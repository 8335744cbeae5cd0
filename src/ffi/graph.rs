//! Graphs: capture what a stream records, replay it with new buffers and
//! new parameters.

use super::boundary::{self, borrow, out, run, to_handle, Handle};
use super::buffer::WgcBuffer;
use super::sized::{read_sized, sized_struct};
use super::status::WgcStatus;
use super::stream::WgcStream;
use crate::error::Error;
use crate::runtime::graph::{Graph, Rebind, ScalarPatch, ValuePatch};
use std::sync::Arc;

/// A captured sequence of GPU work, replayable onto any stream of its device.
///
/// **Capture.** `wgc_stream_begin_capture(s)` turns a stream into a
/// recorder: launches of users' kernels (`wgc_stream_launch`), built-in
/// operators, copies and fills recorded on `s` are checked as usual (a bad
/// call fails with its usual status and is not captured) but not run; they
/// are kept, fully resolved (pipelines, bind groups, the launch parameters'
/// bytes, workgroup counts, the library's choice of kernel variant), until
/// `wgc_stream_end_capture(s, &graph)` returns them as a graph. A replay,
/// `wgc_graph_replay(graph, stream, ...)`, adds the captured commands to a
/// stream as if they were recorded there again, with no argument checks,
/// kernel lookup or planning repeated (only the bind groups a binding table
/// changes are made, once per table). The autotuner does not time
/// candidates during a capture: it uses a stored choice or the heuristic's.
///
/// **What cannot be captured.** Calls that need the GPU's results on the
/// host, or that wait, fail with `WGC_ERROR_INVALID_OPERATION` while
/// capturing and leave the capture as it was (usable; nothing is recorded
/// for the call): `wgc_stream_synchronize` and `wgc_stream_record_event` on
/// the capturing stream, and `wgc_buffer_read` and `wgc_buffer_write` of a
/// buffer the capture uses (on any thread). A capture holds at most
/// 1 MiB of launch parameters (each launch's rounded up to the adapter's
/// `min_uniform_buffer_offset_alignment`, e.g. 4096 launches at 256 bytes):
/// past that, `WGC_ERROR_LIMIT_EXCEEDED`. `wgc_stream_flush` submits
/// nothing while capturing (`WGC_OK`). Host reads and writes of buffers the
/// capture does not use, and `wgc_device_synchronize` (which waits for
/// submitted work only), stay allowed. A second begin on a capturing
/// stream, an end without a begin, and a replay onto a capturing stream fail
/// with `WGC_ERROR_INVALID_OPERATION`. Releasing a capturing stream drops
/// its capture.
///
/// **Ownership.** A graph holds references to everything it uses: the
/// buffers it captured (releasing them after the capture is fine; their
/// memory stays with the graph and is not reused), the scratch space that
/// operators allocated while recording (kept for the graph's lifetime, used
/// by no other work), the pipelines of the kernels it launched, and its
/// device. Work a replay recorded keeps what it uses alive until it has run,
/// even if the graph is released first. `*out_graph` of
/// `wgc_stream_end_capture` holds one reference.
///
/// **New inputs.** A replay reads and writes the captured buffers, so
/// writing new data into them (`wgc_buffer_write`, or work recorded before
/// the replay) is one way. A binding table is the other: each captured
/// buffer (and scratch) is a *slot*, numbered in order of first use;
/// `wgc_graph_buffer_slot` finds a buffer's slot, and a replay's
/// `WgcGraphRebind` entries put other buffers in place of slots for that
/// replay only. A replacement must belong to the graph's device, be at
/// least as large as the captured buffer (the captured views, offsets and
/// sizes are kept) and have uniform (indirect) usage where the slot was
/// bound as a uniform buffer (gave a launch's indirect counts, which each
/// replay reads and checks on the GPU again); a table that would bind one buffer both writable and in
/// another way in one launch, or copy a buffer onto itself, is refused
/// (`WGC_ERROR_BINDING_MISMATCH`, `WGC_ERROR_INVALID_ARGUMENT`). The bind
/// groups made for a table are cached with the graph (the 16 most recently
/// used tables and streams), so alternating between a few tables costs
/// nothing after their first replay.
///
/// **New scalars.** Each launch a capture records has an index, in capture
/// order (`wgc_stream_capture_launch_count` before a launch gives its index;
/// built-in operators may record several launches, a fill one per storage
/// binding it needs).
/// A replay's `WgcGraphScalar` entries overwrite bytes of a launch's
/// parameters (the `params` of its `WgcLaunch`) for that replay only: e.g. a
/// decoding position or a RoPE offset in a user kernel's uniform. Only
/// launches of the caller's own kernels (`wgc_stream_launch` with `params`)
/// can be patched: built-in operators' parameters are the library's own
/// layout, which its kernels trust for their indexing, and a launch whose
/// uniform was bound as a buffer has none (write into that buffer instead);
/// patching those fails with `WGC_ERROR_INVALID_ARGUMENT` (their arguments
/// change through replay values, below). A patch is not
/// checked against the kernel: it must keep the caller's kernel in bounds
/// as its own `params` would.
///
/// **New operator arguments.** Built-in operators' scalar arguments that
/// do not choose the kernel are *replay values*: each call below declares
/// them while capturing, in this order, and each gets an index in capture
/// order (`wgc_stream_capture_value_count` before the call gives the first
/// one's; a call that fails takes its indices too, and its values then
/// change nothing). A replay's `WgcGraphValue` entries give them new values, for that
/// replay only, converted as the operator converts its argument and written
/// into every launch the call recorded that takes it:
///
/// | call | values (in order) | a replay may give |
/// | --- | --- | --- |
/// | `wgc_op_binary_scalar` | `scalar` | any double (converted to the dtype as the call does) |
/// | `wgc_op_leaky_relu` | `slope` | any double (used as f32) |
/// | `wgc_op_rope` | `position_offset` | integers 0 .. 2^32 - the positions along `seq_axis` |
/// | `wgc_op_attention` | `kv_len` | integers 0 .. Skv (0: every key, as `WgcAttentionDesc.kv_len`) |
///
/// Integer values out of range, or not whole, fail with
/// `WGC_ERROR_OUT_OF_RANGE`; a NaN or infinite count with
/// `WGC_ERROR_INVALID_ARGUMENT`. Arguments that choose the kernel stay as
/// captured: shapes, views, dtypes, GEMM's alpha and beta (alpha 1 and
/// beta 0 select kernels without those terms), clamp's bounds. A value the
/// capture could not place safely (the operator's kernel did not take it
/// as a parameter) is refused at replay with `WGC_ERROR_INVALID_ARGUMENT`
/// and the reason; `wgc_graph_value_info` tells in advance.
///
/// **Threads.** A graph is immutable after capture and may be replayed from
/// any thread, onto any stream of its device (used by one thread at a time,
/// as every stream), several at once. Each replay takes its parameters in
/// the replaying stream's own uniform memory, and all of one replay's
/// commands are submitted together, so concurrent replays with different
/// scalars do not mix. Concurrent replays still share the captured buffers
/// and scratch (one queue runs them one after another): replays that must
/// not share outputs need their own through a binding table.
///
/// **Invalidation.** Nothing the caller does later invalidates a graph:
/// it holds what it uses. A destroyed or lost device makes replays fail with
/// `WGC_ERROR_DEVICE_LOST`.
pub struct WgcGraph {
    _private: [u8; 0],
}

impl Handle for WgcGraph {
    type Rust = Graph;
    const NAME: &'static str = "WgcGraph";
}

/// A buffer in place of a graph's slot for one replay.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcGraphRebind {
    /// The slot (from `wgc_graph_buffer_slot`).
    pub slot: u32,
    pub buffer: *const WgcBuffer,
}

/// New bytes over part of one captured launch's parameters, for one replay.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcGraphScalar {
    /// The launch's index in capture order.
    pub launch: u32,
    /// Byte offset inside the launch's parameters.
    pub offset: u32,
    /// `size` bytes to write there (copied at the call).
    pub data: *const std::ffi::c_void,
    pub size: u32,
}

/// A new value for one of a graph's replay values (a built-in operator's
/// scalar argument, see `WgcGraph`), for one replay.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcGraphValue {
    /// The value's index in capture order.
    pub index: u32,
    pub _reserved: u32,
    pub value: f64,
}

/// What one replay changes. Zero-initialise and set `struct_size`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcGraphReplay {
    pub struct_size: u32,
    pub rebinds: *const WgcGraphRebind,
    pub rebind_count: u32,
    pub scalars: *const WgcGraphScalar,
    pub scalar_count: u32,
    /// New values of built-in operators' arguments (callers built with an
    /// older header, whose struct ends before these fields, give none).
    pub values: *const WgcGraphValue,
    pub value_count: u32,
}

sized_struct!(WgcGraphReplay { rebinds, rebind_count, scalars, scalar_count, values, value_count });

impl Default for WgcGraphReplay {
    fn default() -> Self {
        WgcGraphReplay {
            struct_size: 0,
            rebinds: std::ptr::null(),
            rebind_count: 0,
            scalars: std::ptr::null(),
            scalar_count: 0,
            values: std::ptr::null(),
            value_count: 0,
        }
    }
}

/// Start capturing on `stream` (see `WgcGraph`): work recorded on it before
/// is submitted first; what is recorded from now on is captured, not run.
/// `WGC_ERROR_INVALID_OPERATION` if it is already capturing. Does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_begin_capture(stream: *const WgcStream) -> WgcStatus {
    run(|| unsafe { borrow(stream) }?.begin_capture())
}

/// End the capture begun on `stream` and return what it captured (possibly
/// nothing) as a new graph; the stream records normally again.
/// `WGC_ERROR_INVALID_OPERATION` if the stream is not capturing. Does not
/// block.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_end_capture(stream: *const WgcStream, out_graph: *mut *mut WgcGraph) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let out = unsafe { out(out_graph, "out_graph") }?;
        *out = to_handle::<WgcGraph>(Arc::new(s.end_capture()?));
        Ok(())
    })
}

/// `*out_capturing` = 1 while `stream` is capturing, else 0.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_is_capturing(stream: *const WgcStream, out_capturing: *mut u32) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        *unsafe { out(out_capturing, "out_capturing") }? = s.is_capturing() as u32;
        Ok(())
    })
}

/// The number of launches `stream`'s capture holds so far: the index the
/// next launch will have (for `WgcGraphScalar.launch`).
/// `WGC_ERROR_INVALID_OPERATION` if the stream is not capturing.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_capture_launch_count(stream: *const WgcStream, out_count: *mut u32) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let out = unsafe { out(out_count, "out_count") }?;
        *out = s.captured_launches().ok_or_else(|| Error::InvalidOperation("the stream is not capturing".into()))?;
        Ok(())
    })
}

/// The number of replay values `stream`'s capture holds so far: the index
/// the next built-in operator's first replay value will have (for
/// `WgcGraphValue.index`). `WGC_ERROR_INVALID_OPERATION` if the stream is
/// not capturing.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_capture_value_count(stream: *const WgcStream, out_count: *mut u32) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let out = unsafe { out(out_count, "out_count") }?;
        *out = s.captured_scalars().ok_or_else(|| Error::InvalidOperation("the stream is not capturing".into()))?;
        Ok(())
    })
}

/// The number of replay values (built-in operators' arguments) `graph` holds.
#[no_mangle]
pub unsafe extern "C" fn wgc_graph_value_count(graph: *const WgcGraph, out_count: *mut u32) -> WgcStatus {
    run(|| {
        let g = unsafe { borrow(graph) }?;
        *unsafe { out(out_count, "out_count") }? = g.op_scalar_count();
        Ok(())
    })
}

/// Replay value `index` of `graph`: the value captured and the range a
/// replay may give (each out-pointer may be NULL). `WGC_ERROR_OUT_OF_RANGE`
/// past the graph's values; `WGC_ERROR_UNSUPPORTED` (with the reason) if a
/// replay cannot change this one; nothing is written then.
#[no_mangle]
pub unsafe extern "C" fn wgc_graph_value_info(
    graph: *const WgcGraph,
    index: u32,
    out_captured: *mut f64,
    out_min: *mut f64,
    out_max: *mut f64,
) -> WgcStatus {
    run(|| {
        let g = unsafe { borrow(graph) }?;
        let v = g.op_scalar(index)?;
        if let Some(why) = &v.refused {
            return Err(Error::Unsupported(format!("replay value {index} ({}): {why}", v.decl.name)));
        }
        for (p, x) in [(out_captured, v.decl.captured), (out_min, v.decl.min), (out_max, v.decl.max)] {
            if !p.is_null() {
                unsafe { *p = x };
            }
        }
        Ok(())
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_graph_retain(graph: *mut WgcGraph) {
    unsafe { boundary::retain(graph) }
}

/// Drop a reference. NULL is ignored. Replays already recorded still run.
#[no_mangle]
pub unsafe extern "C" fn wgc_graph_release(graph: *mut WgcGraph) {
    unsafe { boundary::release(graph) }
}

/// What a graph holds: GPU dispatches, launches (indices for
/// `WgcGraphScalar`), and slots (buffers and scratch, for
/// `WgcGraphRebind`). Each out-pointer may be NULL.
#[no_mangle]
pub unsafe extern "C" fn wgc_graph_counts(
    graph: *const WgcGraph,
    out_dispatches: *mut u32,
    out_launches: *mut u32,
    out_slots: *mut u32,
) -> WgcStatus {
    run(|| {
        let g = unsafe { borrow(graph) }?;
        for (p, v) in
            [(out_dispatches, g.dispatch_count()), (out_launches, g.launch_count()), (out_slots, g.slot_count())]
        {
            if !p.is_null() {
                unsafe { *p = v };
            }
        }
        Ok(())
    })
}

/// The slot of `buffer` in `graph`: what a `WgcGraphRebind` names to put
/// another buffer in its place. `WGC_ERROR_NOT_FOUND` if the graph does not
/// use the buffer.
#[no_mangle]
pub unsafe extern "C" fn wgc_graph_buffer_slot(
    graph: *const WgcGraph,
    buffer: *const WgcBuffer,
    out_slot: *mut u32,
) -> WgcStatus {
    run(|| {
        let g = unsafe { borrow(graph) }?;
        let b = unsafe { borrow(buffer) }?;
        let out = unsafe { out(out_slot, "out_slot") }?;
        *out = g.slot_of(b).ok_or_else(|| Error::NotFound("the graph does not use this buffer".into()))?;
        Ok(())
    })
}

/// Record `graph`'s commands on `stream`, in order after what the stream
/// recorded before. `replay` may be NULL (as captured) or give a binding
/// table and scalar patches for this replay (see `WgcGraph`). Everything is
/// checked before anything is recorded: `WGC_ERROR_DEVICE_MISMATCH` (stream
/// or a rebound buffer of another device), `WGC_ERROR_OUT_OF_RANGE` (a slot
/// or launch index past the graph's, a patch past a launch's parameters),
/// `WGC_ERROR_INVALID_ARGUMENT` (a slot given twice, a buffer smaller than
/// the captured one, a patch of a launch without parameters, a replay value
/// that cannot change or is NaN where a count is expected), an out-of-range
/// replay value `WGC_ERROR_OUT_OF_RANGE`,
/// `WGC_ERROR_BINDING_MISMATCH`, `WGC_ERROR_INVALID_OPERATION` (the stream
/// is capturing), `WGC_ERROR_NULL_POINTER`. Does not block; the replay is
/// submitted with the stream's batch (all of it in one submission).
#[no_mangle]
pub unsafe extern "C" fn wgc_graph_replay(
    graph: *const WgcGraph,
    stream: *const WgcStream,
    replay: *const WgcGraphReplay,
) -> WgcStatus {
    run(|| {
        let g = unsafe { borrow(graph) }?;
        let s = unsafe { borrow(stream) }?;
        if replay.is_null() {
            return s.replay(g, &[], &[]);
        }
        let r = unsafe { read_sized(replay, "replay") }?;
        let rebinds = unsafe { slice(r.rebinds, r.rebind_count, "replay->rebinds") }?;
        let scalars = unsafe { slice(r.scalars, r.scalar_count, "replay->scalars") }?;
        let mut table = Vec::with_capacity(rebinds.len());
        for e in rebinds {
            let buffer = unsafe { borrow(e.buffer) }
                .map_err(|_| Error::NullPointer(format!("rebind of slot {}: buffer is NULL", e.slot)))?;
            table.push(Rebind { slot: e.slot, buffer });
        }
        let mut patches = Vec::with_capacity(scalars.len());
        for p in scalars {
            let bytes = unsafe { boundary::bytes(p.data as *const u8, p.size as u64, "scalar data") }?;
            patches.push(ScalarPatch { launch: p.launch, offset: p.offset, bytes });
        }
        let values = unsafe { slice(r.values, r.value_count, "replay->values") }?;
        let values: Vec<ValuePatch> = values.iter().map(|v| ValuePatch { index: v.index, value: v.value }).collect();
        s.replay_with(g, &table, &patches, &values)
    })
}

/// A caller's array; NULL only with a count of 0.
unsafe fn slice<'a, T>(p: *const T, n: u32, what: &str) -> crate::error::Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL with a count of {n}")));
    }
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}
