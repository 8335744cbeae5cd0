//! The profiler from C: turning it on for a stream, its records as an array
//! of structs, and the per-operator summary table.

use super::boundary::{borrow, out, run};
use super::status::WgcStatus;
use super::stream::WgcStream;
use crate::error::Error;
use crate::runtime::profiler::{Profile, TimeStatus};
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::Mutex;

/// Describe an operator call to the stream's profiler for as long as the
/// returned scope lives. Everything after the stream is evaluated only while
/// the stream is profiled: a call on an unprofiled stream pays one branch.
macro_rules! profile_op {
    ($s:expr, $name:expr, [$($i:expr),*], [$($o:expr),*], $flops:expr) => {
        $s.profile_call(|| {
            let ins: &[&$crate::ops::tensor::Tensor] = &[$($i),*];
            let outs: &[&$crate::ops::tensor::Tensor] = &[$($o),*];
            $crate::ops::profile_call::call($name, ins, outs, $flops)
        })
    };
}
pub(crate) use profile_op;

/// An op enum's name as the profiler shows it (`Mul` -> `mul`).
pub(crate) fn lower(op: impl std::fmt::Debug) -> String {
    format!("{op:?}").to_lowercase()
}

/// Whether a `WgcProfileRecord`'s GPU time was measured.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgcProfileTime {
    /// `gpu_ns` holds the time between GPU timestamps written just before
    /// and just after the command.
    Measured = 0,
    /// The adapter has no timestamp queries inside passes or encoders
    /// (`WgcAdapterInfo.has_timestamps` is 0): `gpu_ns` is 0, not a time.
    NoTimestamps = 1,
    /// The command never ran (its batch was rejected as a whole, or the
    /// records were cleared before its timestamps were read): `gpu_ns` is 0.
    NotRun = 2,
}

/// Rows of `wgc_profile_table`: one per operator name, or one per kernel variant.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgcProfileGroup {
    ByOperator = 0,
    ByKernel = 1,
}

/// One GPU command a profiled stream recorded: a kernel launch or a buffer
/// copy. Strings are NUL-terminated UTF-8, owned by the array the record
/// belongs to (valid until `wgc_profile_records_free`), never NULL.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcProfileRecord {
    /// The operator call the command belongs to: the C function's name
    /// without `wgc_op_` (`matmul`, `rms_norm`, `softmax`), with the op for
    /// elementwise families (`binary.mul`, `unary.silu`); `launch:<entry>`
    /// for a kernel of yours (`wgc_stream_launch`), `copy_buffer`,
    /// `fill_buffer`; `(library)` for work the library recorded outside any
    /// call.
    pub op: *const c_char,
    /// The kernel variant: `<shader file>:<entry><dtypes>{overrides}` for a
    /// library kernel (`softmax.wgsl:rows<f16>{WG=256}`), the entry point for
    /// a SPIR-V or user kernel, `copy_buffer` for a copy.
    pub kernel: *const c_char,
    /// The call's operands, `f16[512,4096], f16[4096,4096] -> f16[512,4096]`
    /// (inputs, then outputs; `-> f32[64]` for a fill); empty where the call
    /// has no tensors. Optional operands (norm weights, a convolution's bias)
    /// are not listed.
    pub shapes: *const c_char,
    /// Index of the call on this stream since profiling started or was
    /// cleared; the commands of one call (a split GEMM and its reduction,
    /// say) share it. `UINT64_MAX` for `(library)` work.
    pub call: u64,
    /// Floating-point operations of the whole call where known (products:
    /// 2 M N K; convolutions: 2 per multiply-add; elementwise: one per
    /// output element, fma two), else 0. Repeated on each command of a call.
    pub flops: u64,
    /// Bytes of the call's operands, each counted once (a broadcast dim
    /// once): what the call must at least read and write. Repeated on each
    /// command of a call; 0 where the call has no tensors.
    pub bytes: u64,
    /// Host time the call took to validate and record (not to run).
    pub host_ns: u64,
    /// GPU time of this command in nanoseconds where `time_status` is
    /// `WGC_PROFILE_TIME_MEASURED`, else 0.
    pub gpu_ns: u64,
    /// A `WgcProfileTime`.
    pub time_status: u32,
    /// Workgroup counts of a direct launch; 0 for copies and indirect launches.
    pub groups: [u32; 3],
}

struct Owned {
    records: Box<[WgcProfileRecord]>,
    _strings: Vec<CString>,
}

// SAFETY: the raw pointers in `records` point into `_strings`, owned alongside.
unsafe impl Send for Owned {}

/// Arrays handed to C, by address: freeing checks the address, so a wrong
/// or repeated free is an error, not a crash.
static HANDED_OUT: Lazy<Mutex<HashMap<usize, Owned>>> = Lazy::new(Default::default);

fn c_string(s: &str, strings: &mut Vec<CString>) -> *const c_char {
    let c = CString::new(s.replace('\0', " ")).unwrap_or_default();
    let p = c.as_ptr();
    strings.push(c);
    p
}

fn to_records(profile: &Profile) -> Owned {
    let mut strings = Vec::with_capacity(profile.launches.len() * 3);
    let records = profile
        .launches
        .iter()
        .map(|l| {
            let call = l.call.map(|i| &profile.calls[i]);
            let status = match l.status {
                TimeStatus::Measured => WgcProfileTime::Measured,
                TimeStatus::NoTimestamps => WgcProfileTime::NoTimestamps,
                TimeStatus::NotRun => WgcProfileTime::NotRun,
            };
            WgcProfileRecord {
                op: c_string(call.map_or("(library)", |c| c.name.as_str()), &mut strings),
                kernel: c_string(&l.kernel, &mut strings),
                shapes: c_string(call.map_or("", |c| c.shapes.as_str()), &mut strings),
                call: l.call.map_or(u64::MAX, |i| i as u64),
                flops: call.map_or(0, |c| c.flops),
                bytes: call.map_or(0, |c| c.bytes),
                host_ns: call.map_or(0, |c| c.host_ns),
                gpu_ns: l.gpu_ns,
                time_status: status as u32,
                groups: l.groups,
            }
        })
        .collect();
    Owned { records, _strings: strings }
}

/// Turn the profiler of `stream` on (`enabled` 1) or off (0). While on,
/// every launch and copy recorded on the stream (by operators, by
/// `wgc_stream_launch`, `wgc_stream_copy_buffer`, `wgc_stream_fill_buffer`)
/// gets a `WgcProfileRecord`, with GPU timestamps written just before and
/// after it where the adapter has timestamp queries
/// (`WgcAdapterInfo.has_timestamps`); elsewhere the records carry names,
/// shapes and sizes and say `WGC_PROFILE_TIME_NO_TIMESTAMPS`. Off by default;
/// while off, recording costs one branch and nothing is allocated.
/// Turning it off keeps the records made so far; turning it on again adds
/// to them (`wgc_stream_profile_clear` forgets them).
///
/// Timing changes what is timed a little: each command gets two timestamp
/// writes (on most GPUs a few hundred nanoseconds), the GPU may not overlap
/// consecutive commands across them, and a batch flushes after 256 timed
/// commands. Times are per command, so work that overlaps on the GPU is
/// counted in each. Records grow until cleared (about 200 bytes a command).
/// With the autotuner on, the first call of a shape class also records the
/// runs of the candidates it times, under that call.
///
/// `WGC_ERROR_NULL_POINTER` (stream), `WGC_ERROR_INVALID_ARGUMENT`
/// (`enabled` not 0 or 1), `WGC_ERROR_DEVICE_LOST`. Does not block.
///
/// # Safety
/// `stream` must be NULL or a live stream handle.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_set_profiling(stream: *const WgcStream, enabled: u32) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        if enabled > 1 {
            return Err(Error::InvalidArgument(format!("enabled must be 0 or 1, not {enabled}")));
        }
        s.set_profiling(enabled == 1)
    })
}

/// Forget the stream's profile records (the profiler stays on or off as it
/// was). Arrays already returned by `wgc_stream_profile_records` are not
/// affected. `WGC_ERROR_NULL_POINTER`. Does not block.
///
/// # Safety
/// `stream` must be NULL or a live stream handle.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_profile_clear(stream: *const WgcStream) -> WgcStatus {
    run(|| {
        unsafe { borrow(stream) }?.profile_clear();
        Ok(())
    })
}

/// The profile records of `stream`, one per command, in recorded order,
/// since profiling was first turned on or last cleared (none if it never
/// was). Submits what the stream has recorded and **blocks** until it has
/// run, then reads the GPU timestamps back; an error of that work is kept
/// for the stream's next flush or synchronize, as a host read does.
///
/// On success `*out_records` points to an array of `*out_count` records
/// that the caller owns and must free with `wgc_profile_records_free` (it
/// stays valid after the stream is released or cleared); with no records
/// it is NULL and the count 0. Taking the records does not clear them.
///
/// `WGC_ERROR_NULL_POINTER` (stream or an out-parameter),
/// `WGC_ERROR_DEVICE_LOST`, `WGC_ERROR_TIMEOUT`.
///
/// # Safety
/// `stream` must be NULL or a live stream handle; the out-parameters NULL
/// or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn wgc_stream_profile_records(
    stream: *const WgcStream,
    out_records: *mut *mut WgcProfileRecord,
    out_count: *mut usize,
) -> WgcStatus {
    run(|| {
        let s = unsafe { borrow(stream) }?;
        let records_out = unsafe { out(out_records, "out_records") }?;
        let count_out = unsafe { out(out_count, "out_count") }?;
        let owned = to_records(&s.profile_records()?);
        let count = owned.records.len();
        if count == 0 {
            *records_out = std::ptr::null_mut();
        } else {
            let ptr = owned.records.as_ptr() as *mut WgcProfileRecord;
            HANDED_OUT.lock().unwrap().insert(ptr as usize, owned);
            *records_out = ptr;
        }
        *count_out = count;
        Ok(())
    })
}

/// Free an array from `wgc_stream_profile_records` (its strings included).
/// NULL does nothing. A pointer that is not such an array, or one already
/// freed, fails with `WGC_ERROR_INVALID_ARGUMENT` and frees nothing. Any
/// thread.
///
/// # Safety
/// None beyond passing a pointer value; it is not dereferenced.
#[no_mangle]
pub unsafe extern "C" fn wgc_profile_records_free(records: *mut WgcProfileRecord) -> WgcStatus {
    run(|| {
        if records.is_null() {
            return Ok(());
        }
        match HANDED_OUT.lock().unwrap().remove(&(records as usize)) {
            Some(_) => Ok(()),
            None => Err(Error::InvalidArgument(
                "records is not an array from wgc_stream_profile_records, or was already freed".into(),
            )),
        }
    })
}

/// Summarise `count` records (from `wgc_stream_profile_records`, or any
/// array of them the caller made) as a text table like torch.profiler's:
/// one row per operator name (`WGC_PROFILE_GROUP_BY_OPERATOR`) or per
/// kernel variant (`WGC_PROFILE_GROUP_BY_KERNEL`), with calls, commands,
/// total, share and mean GPU time, mean host time per call, and achieved
/// GFLOP/s and GB/s (from the calls' FLOPs and bytes over their GPU time),
/// sorted by total GPU time (by command count where no time was measured),
/// at most `max_rows` rows (0: all), then a total row. A row whose
/// commands were not all measured shows `-` for its times and says why
/// below the table; no time is ever estimated.
///
/// Writes the table, NUL-terminated, into `text` if it fits in `capacity`
/// bytes, and its length without the NUL into `*out_length` either way
/// (`text` NULL with `capacity` 0 asks for the length: `WGC_OK`); with a
/// nonzero `capacity` that is too small it returns `WGC_ERROR_TOO_LARGE`
/// and writes nothing into `text`. `WGC_ERROR_NULL_POINTER` (`records` NULL with a
/// nonzero count, a NULL `out_length`, NULL `text` with a nonzero
/// capacity), `WGC_ERROR_INVALID_ARGUMENT` (an unknown group). Does not
/// block; any thread.
///
/// # Safety
/// `records` must point to `count` records whose strings are NULL or
/// NUL-terminated; `text` must be valid for `capacity` bytes.
#[no_mangle]
pub unsafe extern "C" fn wgc_profile_table(
    records: *const WgcProfileRecord,
    count: usize,
    group: u32,
    max_rows: u32,
    text: *mut c_char,
    capacity: usize,
    out_length: *mut usize,
) -> WgcStatus {
    run(|| {
        let length = unsafe { out(out_length, "out_length") }?;
        if count > 0 && records.is_null() {
            return Err(Error::NullPointer("records is NULL".into()));
        }
        if capacity > 0 && text.is_null() {
            return Err(Error::NullPointer("text is NULL but capacity is not 0".into()));
        }
        let by_kernel = match group {
            0 => false,
            1 => true,
            _ => return Err(Error::InvalidArgument(format!("unknown profile group {group}"))),
        };
        let slice = if count == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(records, count) } };
        let table = super::profile_table::render(&rows_of(slice), by_kernel, max_rows as usize);
        *length = table.len();
        if table.len() + 1 > capacity {
            if capacity == 0 {
                return Ok(());
            }
            return Err(Error::TooLarge(format!("the table needs {} bytes, capacity is {capacity}", table.len() + 1)));
        }
        unsafe {
            std::ptr::copy_nonoverlapping(table.as_ptr(), text as *mut u8, table.len());
            *text.add(table.len()) = 0;
        }
        Ok(())
    })
}

fn text_of(p: *const c_char) -> String {
    if p.is_null() {
        return "?".into();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn rows_of(records: &[WgcProfileRecord]) -> Vec<super::profile_table::Row> {
    records
        .iter()
        .map(|r| super::profile_table::Row {
            op: text_of(r.op),
            kernel: text_of(r.kernel),
            call: r.call,
            flops: r.flops,
            bytes: r.bytes,
            host_ns: r.host_ns,
            gpu_ns: (r.time_status == WgcProfileTime::Measured as u32).then_some(r.gpu_ns),
            status: r.time_status,
        })
        .collect()
}
