//! Devices: open an adapter, query it, synchronize, memory statistics.

use super::boundary::{self, arc, borrow, c_str, out, run, to_handle, Handle};
use super::instance::{adapter_info, WgcAdapterInfo, WgcInstance};
use super::sized::{read_sized, sized_struct, write_sized};
use super::status::WgcStatus;
use crate::runtime::autotune::TuneMode;
use crate::runtime::device::{Device, DeviceOptions};
use crate::runtime::instance::{choose, Preference};
use std::ffi::c_char;

/// A GPU device opened on one adapter. Safe to use from many threads at once.
pub struct WgcDevice {
    _private: [u8; 0],
}

impl Handle for WgcDevice {
    type Rust = Device;
    const NAME: &'static str = "WgcDevice";
}

/// How to choose an adapter when `adapter_index` is negative.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WgcPowerPreference {
    /// `WGC_ADAPTER` if set (an index or part of the adapter's name), else the
    /// fastest kind of adapter present (discrete, integrated, virtual, software).
    #[default]
    Default = 0,
    HighPerformance = 1,
    LowPower = 2,
    /// Only a software driver (e.g. lavapipe).
    Software = 3,
}

/// What the autotuner does on a device (`WgcDeviceOptions.autotune`).
///
/// Some operators have several kernel variants for a shape (loads per
/// invocation, a split into more workgroups, a staged or plain kernel)
/// and pick one by heuristics measured on one GPU. With the tuner on, the
/// first call of each *shape class* (sizes rounded to powers of two,
/// dtype, layout) times the candidate variants on the call's own operands
/// on the device (its stream's pending work is finished first, then each
/// candidate runs twice to warm up and five times timed, by GPU timestamps
/// where the adapter has them, else by host time around a wait) and keeps
/// the fastest for that class; the call then records it as usual. That
/// first call therefore blocks until the timing runs have finished and
/// costs tens of kernel runs; later calls of the class cost nothing extra.
///
/// Tuned now: last-axis reductions of contiguous rows (invocations per
/// row), skinny matrix products (plain, staged or wide kernels, or the
/// tiled GEMM), and softmax over long rows (how far rows are cut into
/// chunks). A choice that an environment variable fixes
/// (`WGC_REDUCE_ROW_LOADS`, `WGC_GEMV_AXPY`, `WGC_SOFTMAX_SPLIT_GROUPS`,
/// read when the device is created; docs/TUNING.md) is never tuned. Calls whose output is also read (a GEMM with `beta != 0`)
/// or shares a buffer with an input are never timed: running them
/// repeatedly would change the result; they use the stored choice if any,
/// else the heuristic. Every candidate computes the same result up to the
/// summation order of floating-point sums.
///
/// **Warming it**: run the workload once with `WGC_AUTOTUNE_ON` (or
/// `WGC_AUTOTUNE=1`) and a `tuning_cache_path`; the choices are written when
/// the device is released (or by `wgc_device_save_tuning`). Later processes
/// on the same adapter, driver and library version load them at device
/// creation, with `WGC_AUTOTUNE_CACHED` to time nothing new, or
/// `WGC_AUTOTUNE_ON` to tune classes the file lacks.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WgcAutotune {
    /// As the environment variable `WGC_AUTOTUNE` says: `1` or `on`: On;
    /// `cached`: Cached; unset, `0` or `off`: Off; any other value makes
    /// `wgc_device_create` fail with `WGC_ERROR_INVALID_ARGUMENT`.
    #[default]
    Default = 0,
    /// Heuristics only; no tuning cache file is read or written.
    Off = 1,
    /// Time each new shape class once, keep and reuse the fastest variant.
    On = 2,
    /// Use the choices loaded from `tuning_cache_path`; time nothing
    /// (heuristics for classes the file lacks). No first-call cost.
    Cached = 3,
}

/// Options for `wgc_device_create`. Zero-initialise, then set `struct_size`
/// to `sizeof(WgcDeviceOptions)`; fields a smaller (older) struct lacks take
/// their defaults.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WgcDeviceOptions {
    pub struct_size: u32,
    /// Index into the instance's adapters; negative: choose by `preference`.
    pub adapter_index: i32,
    /// A `WgcPowerPreference` (read as an integer so that an unknown value
    /// is reported, not undefined behaviour).
    pub preference: u32,
    /// If not NULL and the adapter supports it, the driver's pipeline cache
    /// is loaded from this file and saved to it when the device is released
    /// (or by `wgc_device_save_pipeline_cache`). Copied; need not outlive the call.
    ///
    /// The path must name a regular file or nothing yet (it is then created).
    /// Anything else (a symbolic link, a directory, a device such as
    /// /dev/null, a FIFO, a socket) is refused: `wgc_device_create` and
    /// `wgc_device_save_pipeline_cache` return `WGC_ERROR_INVALID_ARGUMENT`
    /// and the path is neither followed, read, replaced nor blocked on. A
    /// save writes a new file named `.NAME.PID.N.tmp` in the same directory
    /// and renames it over the path, so readers see the old or the new
    /// contents, never a partial file; if writing or renaming fails, that
    /// file is removed and the status is `WGC_ERROR_INVALID_ARGUMENT`. The
    /// save when the device is released is skipped silently if refused. A
    /// file whose contents do not match the adapter and driver is ignored.
    pub pipeline_cache_path: *const c_char,
    /// Most bytes kept in the buffer pool for reuse (0: 1 GiB). When a freed
    /// buffer would exceed it, the pooled memory freed longest ago goes back
    /// to the driver first. Each stream also keeps up to this many bytes of
    /// operators' scratch for its next calls.
    pub pool_limit_bytes: u64,
    /// Longest, in milliseconds, that a call blocks waiting for the GPU (0:
    /// no limit): `wgc_buffer_read`, `wgc_stream_synchronize`,
    /// `wgc_device_synchronize`, `wgc_event_wait` and `wgc_event_elapsed_ms`
    /// return `WGC_ERROR_TIMEOUT` when the GPU has not finished the work they
    /// wait for by then (the read's output is left untouched). The device is
    /// not lost: the work keeps running, later calls may be made as usual,
    /// and a later wait succeeds once the work has finished. A kernel that
    /// never finishes keeps the GPU busy: on GPUs the driver may then reset
    /// it (the device is lost, `WGC_ERROR_DEVICE_LOST`); a software driver
    /// keeps running it until the process exits. Calls that only submit work
    /// do not wait for the GPU, except where the driver itself makes a
    /// submission wait for running work it depends on (lavapipe does).
    pub gpu_timeout_ms: u64,
    /// If not NULL and the tuner is not off, the tuner's choices are loaded
    /// from this file at creation and saved to it when the device is
    /// released if any were added (or by `wgc_device_save_tuning`). Copied.
    /// A small text file of its own rather than a suffix of
    /// `pipeline_cache_path`: it works on adapters without a pipeline
    /// cache, and either can be kept or deleted alone. The same rules as
    /// for `pipeline_cache_path` apply (regular files only, else
    /// `WGC_ERROR_INVALID_ARGUMENT`; atomic replacement; the save at release
    /// skipped silently if refused). The file records the adapter's name,
    /// vendor and device ids, driver, driver info, backend and the library
    /// version: a file made for any other, or one that is corrupt or larger
    /// than 1 MiB, is ignored as a whole (the tuner starts empty and the
    /// next save replaces it).
    pub tuning_cache_path: *const c_char,
    /// A `WgcAutotune` (read as an integer so that an unknown value is
    /// reported); 0: `WGC_AUTOTUNE_DEFAULT`.
    pub autotune: u32,
}

sized_struct!(WgcDeviceOptions {
    adapter_index,
    preference,
    pipeline_cache_path,
    pool_limit_bytes,
    gpu_timeout_ms,
    tuning_cache_path,
    autotune
});

impl Default for WgcDeviceOptions {
    fn default() -> Self {
        WgcDeviceOptions {
            struct_size: std::mem::size_of::<Self>() as u32,
            adapter_index: -1,
            preference: WgcPowerPreference::Default as u32,
            pipeline_cache_path: std::ptr::null(),
            pool_limit_bytes: 0,
            gpu_timeout_ms: 0,
            tuning_cache_path: std::ptr::null(),
            autotune: WgcAutotune::Default as u32,
        }
    }
}

/// The autotuner's counters on one device (see `WgcAutotune`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WgcTuningStats {
    pub struct_size: u32,
    /// The tuner's mode after `WGC_AUTOTUNE_DEFAULT` was resolved:
    /// `WGC_AUTOTUNE_OFF`, `WGC_AUTOTUNE_ON` or `WGC_AUTOTUNE_CACHED`.
    pub mode: u32,
    /// Choices stored (loaded and measured), one per tunable choice and shape class.
    pub entries: u64,
    /// Choices loaded from `tuning_cache_path` when the device was created.
    pub loaded: u64,
    /// Shape classes whose candidates were timed (each class once).
    pub timed: u64,
    /// Operator calls that used a stored choice without timing.
    pub reused: u64,
}

sized_struct!(WgcTuningStats { mode, entries, loaded, timed, reused });

/// Memory accounting of one device, in bytes (allocation sizes, which are
/// rounded up from the requested sizes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WgcMemoryStats {
    pub struct_size: u32,
    /// Bytes in buffers that are alive now, including released buffers and
    /// operators' scratch that recorded or running work still uses, and
    /// the scratch streams keep for their next calls (`wgc_device_trim_pool`
    /// lets go of it).
    pub live_bytes: u64,
    /// Highest `live_bytes` so far.
    pub peak_bytes: u64,
    /// Bytes of freed buffers kept for reuse.
    pub pooled_bytes: u64,
    /// Allocations made from the driver, and requests served from the pool.
    pub driver_allocations: u64,
    pub pool_hits: u64,
    /// Compiled kernels the device keeps: the library's own, and callers'
    /// kernels while a handle to them is alive (a released kernel leaves).
    pub cached_kernels: u64,
    /// Cached bind groups (at most 8192): entries leave with the buffer
    /// memory, stream or kernel they refer to.
    pub cached_bind_groups: u64,
}

sized_struct!(WgcMemoryStats {
    live_bytes,
    peak_bytes,
    pooled_bytes,
    driver_allocations,
    pool_hits,
    cached_kernels,
    cached_bind_groups
});

/// Open a device. `options` may be NULL for the defaults. Returns
/// `WGC_ERROR_NOT_FOUND` if no adapter matches (none at all, a bad index, no
/// software driver when asked for one, or no name matching `WGC_ADAPTER`),
/// `WGC_ERROR_INVALID_ARGUMENT` if `WGC_ADAPTER` is consulted and is not UTF-8.
/// The device enables the adapter's full limits and the optional features
/// wgcompute uses where the adapter offers them (f16, subgroups, timestamps,
/// pipeline cache, cooperative matrices, 64-bit integers, SPIR-V passthrough
/// on Vulkan; VK_NV_cooperative_matrix2 and VK_KHR_shader_bfloat16 where
/// offered, see `wgc_op_gemm`); a missing one never fails the call. The
/// device reads the library's environment variables (README,
/// docs/TUNING.md) now and keeps them for its life. `*out_device` holds
/// one reference. Blocks while the driver opens the device.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_create(
    instance: *const WgcInstance,
    options: *const WgcDeviceOptions,
    out_device: *mut *mut WgcDevice,
) -> WgcStatus {
    run(|| {
        let inst = unsafe { borrow(instance) }?;
        let out = unsafe { out(out_device, "out_device") }?;
        let opts =
            if options.is_null() { WgcDeviceOptions::default() } else { unsafe { read_sized(options, "options") }? };
        let preference = match opts.preference {
            0 => Preference::Default,
            1 => Preference::HighPerformance,
            2 => Preference::LowPower,
            3 => Preference::Software,
            v => return Err(crate::Error::InvalidArgument(format!("unknown power preference {v}"))),
        };
        let index = (opts.adapter_index >= 0).then_some(opts.adapter_index as usize);
        let adapter = choose(&inst.adapters, index, preference)?;
        let path = if opts.pipeline_cache_path.is_null() {
            None
        } else {
            Some(std::path::PathBuf::from(unsafe { c_str(opts.pipeline_cache_path, "pipeline_cache_path") }?))
        };
        let tuning_path = if opts.tuning_cache_path.is_null() {
            None
        } else {
            Some(std::path::PathBuf::from(unsafe { c_str(opts.tuning_cache_path, "tuning_cache_path") }?))
        };
        let autotune = match opts.autotune {
            0 => None,
            1 => Some(TuneMode::Off),
            2 => Some(TuneMode::On),
            3 => Some(TuneMode::Cached),
            v => return Err(crate::Error::InvalidArgument(format!("unknown autotune mode {v}"))),
        };
        let device = Device::create(
            &adapter,
            DeviceOptions {
                pipeline_cache_path: path,
                pool_limit: if opts.pool_limit_bytes == 0 { 1 << 30 } else { opts.pool_limit_bytes },
                gpu_timeout: (opts.gpu_timeout_ms != 0).then(|| std::time::Duration::from_millis(opts.gpu_timeout_ms)),
                autotune,
                tuning_cache_path: tuning_path,
                coopmat2_blocks: crate::ops::gemm::coopmat2::all_blocks(),
                settings: None,
            },
        )?;
        *out = to_handle::<WgcDevice>(device);
        Ok(())
    })
}

/// Add a reference. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_retain(device: *mut WgcDevice) {
    unsafe { boundary::retain(device) }
}

/// Drop a reference. NULL is ignored. Buffers, kernels, streams and events
/// keep their device alive; it closes when the last of them is released
/// (saving the pipeline cache if one was configured).
#[no_mangle]
pub unsafe extern "C" fn wgc_device_release(device: *mut WgcDevice) {
    unsafe { boundary::release(device) }
}

/// Describe the device's adapter, with the limits and features enabled on
/// the device. Set `info->struct_size` first.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_info(device: *const WgcDevice, info: *mut WgcAdapterInfo) -> WgcStatus {
    run(|| {
        let dev = unsafe { borrow(device) }?;
        let value = adapter_info(&dev.adapter, dev.features, &dev.limits);
        unsafe { write_sized(info, &value, "info") }
    })
}

/// Submit the recorded work of every stream of the device and block until
/// the GPU has finished all of it (at most `WgcDeviceOptions.gpu_timeout_ms`,
/// then `WGC_ERROR_TIMEOUT`). Returns the first error a stream's batch hit
/// that no `wgc_stream_flush` or `wgc_stream_synchronize` has reported yet,
/// or one the GPU layer reported outside any call.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_synchronize(device: *const WgcDevice) -> WgcStatus {
    run(|| unsafe { borrow(device) }?.synchronize())
}

/// Memory statistics. Set `stats->struct_size` first.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_memory_stats(device: *const WgcDevice, stats: *mut WgcMemoryStats) -> WgcStatus {
    run(|| {
        let dev = unsafe { borrow(device) }?;
        let s = dev.pool.stats();
        let value = WgcMemoryStats {
            struct_size: std::mem::size_of::<WgcMemoryStats>() as u32,
            live_bytes: s.live_bytes,
            peak_bytes: s.peak_bytes,
            pooled_bytes: s.pooled_bytes,
            driver_allocations: s.allocations,
            pool_hits: s.pool_hits,
            cached_kernels: dev.kernels.cached_count() as u64,
            cached_bind_groups: dev.bind_groups.count() as u64,
        };
        unsafe { write_sized(stats, &value, "stats") }
    })
}

/// Return pooled memory to the driver until at most `keep_bytes` stay pooled.
/// First the scratch each stream keeps for its next operator calls (up to
/// `pool_limit_bytes` a stream, handed out again in stream order) goes back
/// to the pool, except what recorded or running work still uses.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_trim_pool(device: *const WgcDevice, keep_bytes: u64) -> WgcStatus {
    run(|| {
        let dev = unsafe { borrow(device) }?;
        dev.give_back_memory(keep_bytes);
        Ok(())
    })
}

/// Save the driver's pipeline cache to the path given in the options now.
/// `*out_saved` (may be NULL) is 1 if a file was written, 0 if the device has
/// no pipeline cache (no path given, or the adapter does not support one).
/// `WGC_ERROR_INVALID_ARGUMENT` if the path is no longer a regular file (or
/// absent) or the file cannot be written; see
/// `WgcDeviceOptions.pipeline_cache_path`.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_save_pipeline_cache(device: *const WgcDevice, out_saved: *mut u32) -> WgcStatus {
    run(|| {
        let dev = unsafe { borrow(device) }?;
        dev.check_alive()?;
        let saved = dev.save_pipeline_cache()?;
        if !out_saved.is_null() {
            unsafe { *out_saved = saved as u32 };
        }
        Ok(())
    })
}

/// The autotuner's counters (see `WgcAutotune`). Set `stats->struct_size`
/// first. Does not block.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_tuning_stats(device: *const WgcDevice, stats: *mut WgcTuningStats) -> WgcStatus {
    run(|| {
        let dev = unsafe { borrow(device) }?;
        let t = dev.tuner.stats();
        let mode = match dev.tuner.mode {
            TuneMode::Off => WgcAutotune::Off,
            TuneMode::On => WgcAutotune::On,
            TuneMode::Cached => WgcAutotune::Cached,
        };
        let value = WgcTuningStats {
            struct_size: std::mem::size_of::<WgcTuningStats>() as u32,
            mode: mode as u32,
            entries: t.entries,
            loaded: t.loaded,
            timed: t.timed,
            reused: t.reused,
        };
        unsafe { write_sized(stats, &value, "stats") }
    })
}

/// Save the tuner's choices (every stored one) to `tuning_cache_path` now.
/// `*out_saved` (may be NULL) is 1 if the file was written, 0 if the device
/// has no tuning cache (no path given, or the tuner is off).
/// `WGC_ERROR_INVALID_ARGUMENT` if the path is no longer a regular file (or
/// absent) or the file cannot be written; see
/// `WgcDeviceOptions.tuning_cache_path`. Blocks while the file is written.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_save_tuning(device: *const WgcDevice, out_saved: *mut u32) -> WgcStatus {
    run(|| {
        let dev = unsafe { borrow(device) }?;
        dev.check_alive()?;
        let saved = dev.tuner.save()?;
        if !out_saved.is_null() {
            unsafe { *out_saved = saved as u32 };
        }
        Ok(())
    })
}

/// Destroy the device's GPU resources now, as if the device were lost. The
/// handle stays valid (release it as usual), but every later call on it or
/// its children fails with `WGC_ERROR_DEVICE_LOST`, a second
/// `wgc_device_destroy` included.
#[no_mangle]
pub unsafe extern "C" fn wgc_device_destroy(device: *const WgcDevice) -> WgcStatus {
    run(|| {
        let dev = unsafe { arc(device) }?;
        if !dev.destroy() {
            return Err(crate::Error::DeviceLost("the device was already destroyed".into()));
        }
        Ok(())
    })
}
