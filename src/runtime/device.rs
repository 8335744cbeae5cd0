//! A device: the wgpu device and queue of one adapter, plus everything that is
//! shared by its children: the buffer pool, the kernel and bind group caches,
//! the list of streams (so that host reads and writes see all recorded work),
//! the optional on-disk pipeline cache, the autotuner's choices, and the
//! device-lost state.

use super::autotune::{TuneMode, Tuner};
use super::bind_cache::BindGroupCache;
use super::block_on::block_on;
use super::coopmat2::Block;
use super::deferred_clear::SubmitGate;
use super::hal_open::Extension;
use super::in_flight::InFlight;
use super::instance::{summarize, AdapterSummary};
use super::kernel::KernelCache;
use super::pipeline_cache_file;
use super::pool::BufferPool;
use super::profile::DeviceProfile;
use super::settings::Settings;
use super::stream::{Extra, StreamShared};
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

// The browser's device creation and `scoped` (promises instead of waits).
#[cfg(target_arch = "wasm32")]
#[path = "../wasm/web_runtime/device_open.rs"]
mod web;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A process-unique id for devices, allocations and kernels; cache keys use it.
pub fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

pub struct DeviceOptions {
    pub pipeline_cache_path: Option<PathBuf>,
    /// Most bytes the buffer pool keeps for reuse.
    pub pool_limit: u64,
    /// Longest a blocking call waits for the GPU; `None`: no limit.
    pub gpu_timeout: Option<Duration>,
    /// `None`: as `WGC_AUTOTUNE` says (off when unset).
    pub autotune: Option<TuneMode>,
    /// Where the tuner's choices are loaded from and saved to.
    pub tuning_cache_path: Option<PathBuf>,
    /// The VK_NV_cooperative_matrix2 workgroup blocks the caller's kernels
    /// use: the device opens with the extension where the driver lists one
    /// of them (and it is asked for, runtime/coopmat2.rs). Empty: never.
    pub coopmat2_blocks: Vec<Block>,
    /// `None`: read from the environment (`Settings::from_env`) at creation.
    pub settings: Option<Settings>,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            pipeline_cache_path: None,
            pool_limit: 1 << 30,
            gpu_timeout: None,
            autotune: None,
            tuning_cache_path: None,
            coopmat2_blocks: Vec::new(),
            settings: None,
        }
    }
}

pub struct Device {
    pub id: u64,
    pub wgpu: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    /// Limits and features actually enabled on the device.
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    /// VK_NV_cooperative_matrix2 is enabled (runtime/coopmat2.rs) where
    /// nonzero: bit i set where the driver lists the block
    /// `DeviceOptions::coopmat2_blocks[i]`.
    pub coopmat2_blocks: u32,
    /// VK_KHR_shader_bfloat16 is enabled with bf16 cooperative matrices
    /// (runtime/bf16_coop.rs).
    pub coop_bf16: bool,
    /// VK_EXT_external_memory_host is enabled: copies between devices go
    /// through host memory both import (runtime/host_import.rs).
    pub host_import: Option<super::host_import::HostImport>,
    pub pool: Arc<BufferPool>,
    pub kernels: KernelCache,
    pub bind_groups: Arc<BindGroupCache>,
    /// Leases of allocations that submitted work still uses.
    pub in_flight: InFlight,
    /// Every queue submission goes through it, after the deferred clears.
    gate: SubmitGate,
    gpu_timeout: Option<Duration>,
    /// How long a wait checks for completion without blocking first (see `spin_wait`).
    spin_wait: Duration,
    lost: Arc<Mutex<Option<String>>>,
    /// Set with `lost`, so that the check on every call takes no lock.
    is_lost: Arc<AtomicBool>,
    destroyed: AtomicBool,
    /// Errors that escaped every error scope (the default handler would panic).
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// How many errors escaped every scope so far (see `unscoped`).
    uncaptured_count: Arc<AtomicU64>,
    streams: Mutex<Vec<Weak<StreamShared>>>,
    pipeline_cache: Option<(wgpu::PipelineCache, PathBuf)>,
    /// Measured kernel choices (see `ops::gemm::tuned`).
    pub tuner: Tuner,
    /// The settings, read once at creation.
    settings: Settings,
    /// Compute units and residency (runtime/profile.rs).
    profile: DeviceProfile,
}

/// The features wgcompute enables when the adapter offers them.
pub(crate) fn wanted_features() -> wgpu::Features {
    wgpu::Features::SHADER_F16
        | wgpu::Features::SUBGROUP
        | wgpu::Features::SUBGROUP_BARRIER
        | wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
        | wgpu::Features::PIPELINE_CACHE
        | wgpu::Features::IMMEDIATES
        | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
        | wgpu::Features::SHADER_INT64
        // SPIR-V kernels (runtime/spirv_kernel.rs), used only where they are
        // asked for and the adapter has what they declare.
        | wgpu::Features::PASSTHROUGH_SHADERS
}

impl Device {
    pub fn create(adapter: &wgpu::Adapter, options: DeviceOptions) -> Result<Arc<Device>> {
        if let Some(path) = &options.pipeline_cache_path {
            pipeline_cache_file::check(pipeline_cache_file::PIPELINE, path)?;
        }
        let summary = summarize(adapter);
        let settings = options.settings.unwrap_or_else(Settings::from_env);
        let mode = match options.autotune {
            Some(m) => m,
            None => settings.device.autotune.clone().map_err(Error::InvalidArgument)?,
        };
        let tuner = Tuner::new(mode, options.tuning_cache_path, &summary, settings.device.autotune_log)?;
        let device_type = summary.info.device_type;
        let features = adapter.features() & wanted_features();
        let experimental = if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: only the cooperative-matrix feature is experimental, and only
            // kernels that check `features` use it.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let desc = wgpu::DeviceDescriptor {
            label: Some("wgcompute"),
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: experimental,
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        // Vulkan extensions wgpu does not enable, opened through wgpu-hal
        // where the adapter has them (and, for VK_NV_cooperative_matrix2,
        // where asked for).
        let coopmat2_blocks = if super::coopmat2::requested(&settings) {
            super::coopmat2::supported(adapter, &options.coopmat2_blocks, &settings)
        } else {
            0
        };
        let coopmat2 = coopmat2_blocks != 0;
        let coop_bf16 = settings.gemm.bf16_coop && super::bf16_coop::supported(adapter);
        let profile = DeviceProfile::resolve(
            settings.device.compute_units,
            super::profile_query::reported(adapter),
            &summary.info.name,
            device_type,
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        );
        let mut coopmat2_features = super::coopmat2::Features::enabled();
        let mut bf16_features = super::bf16_coop::Features::enabled();
        let mut extensions = Vec::new();
        if coopmat2 {
            extensions.push(Extension::new(super::coopmat2::EXTENSION, &mut coopmat2_features));
        }
        if coop_bf16 {
            extensions.push(Extension::new(super::bf16_coop::EXTENSION, &mut bf16_features));
        }
        let host_import = super::host_import::supported(adapter);
        if host_import {
            extensions.push(Extension::plain(super::host_import::EXTENSION));
        }
        let (device, queue) = if extensions.is_empty() {
            block_on(adapter.request_device(&desc)).map_err(|e| e.to_string())
        } else {
            super::hal_open::open(adapter, &desc, extensions)
        }
        .map_err(|e| Error::Internal(format!("could not open the device: {e}")))?;

        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let uncaptured_count = Arc::new(AtomicU64::new(0));
        let sink = uncaptured.clone();
        let count = uncaptured_count.clone();
        // Replace wgpu's default handler, which panics.
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            count.fetch_add(1, Ordering::AcqRel);
            let mut v = sink.lock().unwrap();
            if v.len() < 16 {
                v.push(e.to_string());
            }
        }));
        let lost = Arc::new(Mutex::new(None));
        let is_lost = Arc::new(AtomicBool::new(false));
        let (lost_sink, lost_flag) = (lost.clone(), is_lost.clone());
        device.set_device_lost_callback(move |reason, msg| {
            *lost_sink.lock().unwrap() = Some(format!("{reason:?}: {msg}"));
            lost_flag.store(true, Ordering::Release);
        });

        let pipeline_cache = match options.pipeline_cache_path {
            Some(path) if features.contains(wgpu::Features::PIPELINE_CACHE) => {
                let data = pipeline_cache_file::load(pipeline_cache_file::PIPELINE, &path)?;
                // SAFETY: the data is only used by wgpu if its header matches this
                // adapter and driver (wgpu checks the key); otherwise it is ignored.
                let cache = unsafe {
                    device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                        label: Some("wgcompute pipeline cache"),
                        data: data.as_deref(),
                        fallback: true,
                    })
                };
                Some((cache, path))
            }
            _ => None,
        };

        let limits = device.limits();
        let host_import = if host_import { super::host_import::HostImport::new(&device) } else { None };
        Ok(Arc::new(Device {
            id: next_id(),
            features: device.features(),
            coopmat2_blocks,
            coop_bf16,
            host_import,
            limits,
            wgpu: device,
            queue,
            adapter: summary,
            pool: Arc::new(BufferPool::new(options.pool_limit)),
            kernels: KernelCache::default(),
            bind_groups: Default::default(),
            in_flight: InFlight::default(),
            gate: SubmitGate::default(),
            gpu_timeout: options.gpu_timeout,
            spin_wait: spin_wait(&device_type, &settings),
            lost,
            is_lost,
            destroyed: AtomicBool::new(false),
            uncaptured,
            uncaptured_count,
            streams: Mutex::new(Vec::new()),
            pipeline_cache,
            tuner,
            settings,
            profile,
        }))
    }

    /// Fails with `DeviceLost` once the device is lost or destroyed.
    pub fn check_alive(&self) -> Result<()> {
        if self.destroyed.load(Ordering::Acquire) {
            return Err(Error::DeviceLost("the device was destroyed".into()));
        }
        if !self.is_lost.load(Ordering::Acquire) {
            return Ok(());
        }
        if let Some(reason) = self.lost.lock().unwrap().as_ref() {
            return Err(Error::DeviceLost(reason.clone()));
        }
        Ok(())
    }

    /// Release the GPU resources now; every later call on this device or
    /// its children fails with `DeviceLost`. False if it already was destroyed.
    pub fn destroy(&self) -> bool {
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.in_flight.release_all();
        self.gate.drop_pending();
        self.pool.close(&self.bind_groups);
        self.wgpu.destroy();
        true
    }

    pub fn pipeline_cache(&self) -> Option<&wgpu::PipelineCache> {
        self.pipeline_cache.as_ref().map(|(c, _)| c)
    }

    /// Write the driver's pipeline cache to the path given at creation
    /// (see `pipeline_cache_file` for what is refused).
    pub fn save_pipeline_cache(&self) -> Result<bool> {
        let Some((cache, path)) = &self.pipeline_cache else {
            return Ok(false);
        };
        let Some(data) = cache.get_data() else {
            return Ok(false);
        };
        pipeline_cache_file::save(pipeline_cache_file::PIPELINE, path, &data)?;
        Ok(true)
    }

    /// Run `f` inside out-of-memory and validation error scopes and turn what
    /// they catch into an `Error`. Scopes are per thread, so this is safe to
    /// call from many threads at once.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn scoped<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        let oom = self.wgpu.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.wgpu.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = self.wgpu.push_error_scope(wgpu::ErrorFilter::Internal);
        let value = f();
        let e3 = block_on(internal.pop());
        let e2 = block_on(validation.pop());
        let e1 = block_on(oom.pop());
        match e1.or(e2).or(e3) {
            Some(e) => Err(Error::from_wgpu(e)),
            None => Ok(value),
        }
    }

    /// Run `f`, which the caller has validated so that the GPU layer is not
    /// expected to reject it, without error scopes (pushing and popping
    /// three scopes costs about as much as creating a bind group). Errors
    /// the GPU layer reports anyway (out of memory) reach the uncaptured
    /// handler synchronously; any reported while `f` ran fails the call
    /// with their messages (another thread's error at the same moment
    /// would be reported here instead of by a later synchronize).
    pub fn unscoped<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        let before = self.uncaptured_count.load(Ordering::Acquire);
        let value = f();
        if self.uncaptured_count.load(Ordering::Acquire) == before {
            return Ok(value);
        }
        let msg = self.take_uncaptured().unwrap_or_else(|| "the GPU layer reported an error".into());
        Err(if msg.to_ascii_lowercase().contains("out of memory") {
            Error::OutOfMemory(msg)
        } else {
            Error::Validation(msg)
        })
    }

    /// Take the errors that no scope caught since the last call.
    pub fn take_uncaptured(&self) -> Option<String> {
        let mut v = self.uncaptured.lock().unwrap();
        if v.is_empty() {
            None
        } else {
            Some(std::mem::take(&mut *v).join("; "))
        }
    }

    pub(crate) fn register_stream(&self, s: &Arc<StreamShared>) {
        let mut list = self.streams.lock().unwrap();
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(s));
    }

    fn live_streams(&self) -> Vec<Arc<StreamShared>> {
        self.streams.lock().unwrap().iter().filter_map(|w| w.upgrade()).collect()
    }

    /// Give memory back to the driver until at most `keep_bytes` stay
    /// pooled: first every stream's kept scratch that no call holds and the
    /// buffers finished work released go to the pool, then the pool is
    /// trimmed (out of memory, `wgc_device_trim_pool`).
    pub(crate) fn give_back_memory(&self, keep_bytes: u64) {
        for s in self.live_streams() {
            s.release_kept_scratch();
        }
        self.in_flight.release_finished();
        self.pool.trim(keep_bytes, &self.bind_groups);
    }

    /// Fails when a capturing stream of this device uses the allocation: a
    /// host read or write of it cannot be part of a graph, and would not see
    /// (or be seen by) the captured work, which has not run.
    pub(crate) fn refuse_if_captured(&self, alloc_id: u64, what: &str) -> Result<()> {
        if self.live_streams().iter().any(|s| s.capture_uses(alloc_id)) {
            crate::bail!(
                InvalidOperation,
                "{what} of a buffer that a capturing stream uses (end the capture first; a graph cannot hold host transfers)"
            );
        }
        Ok(())
    }

    /// Submit the recorded work of every stream of this device, so that what
    /// happens next on the queue comes after everything recorded so far. A
    /// stream's batch error stays with that stream (its next flush or
    /// synchronize reports it); only a lost device is returned here.
    pub fn flush_all(&self) -> Result<()> {
        for s in self.live_streams() {
            s.flush_for_other()?;
        }
        Ok(())
    }

    /// `flush_all`, then submit `extra` after everything it submitted:
    /// in the same queue submission as the last stream's batch when there
    /// is one (one submission instead of two), else on its own. Returns the
    /// submission that carries `extra`; an error of submitting it alone (its
    /// own failure) or a lost device.
    pub fn flush_all_then(&self, extra: Extra) -> Result<wgpu::SubmissionIndex> {
        let with_work: Vec<_> = self.live_streams().into_iter().filter(|s| s.has_work()).collect();
        if let Some((last, first)) = with_work.split_last() {
            for s in first {
                s.flush_for_other()?;
            }
            if let Some(index) = last.flush_for_other_with(extra)? {
                return Ok(index);
            }
        }
        self.scoped(|| self.submit([extra()]))
    }

    /// Submit command buffers to the queue, after any deferred clears (see
    /// `deferred_clear`). The only way the library submits work.
    pub fn submit<I: IntoIterator<Item = wgpu::CommandBuffer>>(&self, cmds: I) -> wgpu::SubmissionIndex {
        self.gate.submit(&self.wgpu, &self.queue, cmds)
    }

    /// Clear a reused allocation before any later work of the device
    /// touches it, without submitting anything now.
    pub fn defer_clear(&self, raw: wgpu::Buffer) {
        self.gate.defer_clear(raw);
    }

    /// Submit the deferred clears now: a staged host write runs before the
    /// command buffers of the next submission, so it must not be staged
    /// while a clear of its buffer waits.
    pub fn submit_deferred_clears(&self) {
        self.gate.submit_pending(&self.wgpu, &self.queue);
    }

    pub fn has_gpu_timeout(&self) -> bool {
        self.gpu_timeout.is_some()
    }

    /// Block until the GPU has finished every submission so far.
    pub fn wait_idle(&self) -> Result<()> {
        self.wait(None)
    }

    /// Block until one submission has finished.
    pub fn wait_for(&self, index: wgpu::SubmissionIndex) -> Result<()> {
        self.wait(Some(index))
    }

    /// Block until submission `index` has run, where `done` is set by an
    /// `on_submitted_work_done` callback registered right after it was
    /// submitted: the spin phase watches that flag instead of the whole
    /// queue, so work queued behind the submission does not hold the wait
    /// (copies between devices queue chunks behind the one they wait for).
    pub fn wait_for_flag(&self, index: wgpu::SubmissionIndex, done: &AtomicBool) -> Result<()> {
        let deadline = std::time::Instant::now() + self.spin_wait;
        while !self.spin_wait.is_zero() && self.wgpu.poll(wgpu::PollType::Poll).is_ok() {
            if done.load(Ordering::Acquire) {
                self.check_alive()?;
                self.in_flight.release_finished();
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
            std::hint::spin_loop();
        }
        self.wait_spun(Some(index), done.load(Ordering::Acquire))
    }

    /// Wait for the GPU, at most the device's timeout. A timeout leaves the
    /// device as it was: the work runs on, and a later wait may succeed.
    fn wait(&self, submission_index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        let done = self.spin_until_done();
        self.wait_spun(submission_index, done)
    }

    /// `wait` after its spin phase (`done`: that found the work finished).
    fn wait_spun(&self, submission_index: Option<wgpu::SubmissionIndex>, done: bool) -> Result<()> {
        let poll = wgpu::PollType::Wait { submission_index, timeout: self.gpu_timeout };
        match if done { Ok(wgpu::PollStatus::WaitSucceeded) } else { self.wgpu.poll(poll) } {
            Ok(_) => {}
            Err(wgpu::PollError::Timeout) => {
                self.check_alive()?;
                let ms = self.gpu_timeout.unwrap_or_default().as_millis();
                return Err(Error::Timeout(format!(
                    "the GPU did not finish within the device's timeout of {ms} ms; the work continues and the device stays usable"
                )));
            }
            Err(e) => return Err(Error::DeviceLost(format!("waiting for the GPU failed: {e}"))),
        }
        self.check_alive()?;
        // Allocations whose work has now finished can be reused.
        self.in_flight.release_finished();
        Ok(())
    }

    /// Check for completion without blocking, for at most `spin_wait`: a
    /// blocking wait wakes up tens of microseconds after short work has
    /// finished. True once everything submitted so far has run. (Polls
    /// without a submission index: wgpu 30 asserts on a zero-timeout wait
    /// for one while another thread polls.)
    fn spin_until_done(&self) -> bool {
        if self.spin_wait.is_zero() {
            return false;
        }
        let deadline = std::time::Instant::now() + self.spin_wait;
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        self.queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        loop {
            if self.wgpu.poll(wgpu::PollType::Poll).is_err() {
                return false; // the blocking wait reports it
            }
            if done.load(Ordering::Acquire) {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::hint::spin_loop();
        }
    }

    /// Wait for a wgpu callback's result. Another thread's poll may be the
    /// one that runs the callback, and it may not have run it yet when our
    /// own wait returns: keep polling until the result arrives.
    pub fn wait_callback<T>(&self, rx: &std::sync::mpsc::Receiver<T>, what: &str) -> Result<T> {
        let limit = self.gpu_timeout.unwrap_or(Duration::from_secs(60));
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Ok(v) = rx.try_recv() {
                return Ok(v);
            }
            self.check_alive()?;
            let _ = self.wgpu.poll(wgpu::PollType::Poll);
            if let Ok(v) = rx.recv_timeout(std::time::Duration::from_micros(200)) {
                return Ok(v);
            }
            if std::time::Instant::now() > deadline {
                return Err(Error::Timeout(format!("{what} did not complete within {} ms", limit.as_millis())));
            }
        }
    }

    /// Flush every stream and wait for the GPU to finish. Returns the first
    /// error a stream's batch hit, or one the GPU layer reported outside any call.
    pub fn synchronize(&self) -> Result<()> {
        self.check_alive()?;
        let mut first_err = None;
        for s in self.live_streams() {
            if let Err(e) = s.flush() {
                first_err.get_or_insert(e);
            }
        }
        if self.gpu_timeout.is_some() {
            // Some drivers (lavapipe) block the submission below until the
            // running work has finished: wait for it first, within the timeout.
            self.wait_idle()?;
        }
        // Push any pending host writes even when no stream had work.
        self.submit(std::iter::empty());
        self.wait_idle()?;
        if let Some(msg) = self.take_uncaptured() {
            first_err.get_or_insert(Error::Validation(msg));
        }
        first_err.map_or(Ok(()), Err)
    }

    /// The settings this device was created with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// What the device is made of: compute units and residency.
    pub fn profile(&self) -> &DeviceProfile {
        &self.profile
    }

    pub fn same(&self, other: &Device) -> bool {
        self.id == other.id
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let _ = self.save_pipeline_cache();
        let _ = self.tuner.save_if_changed();
    }
}

/// The spin phase of waits: `WGC_WAIT_SPIN_US` (settings) microseconds if set, else
/// 2000 on GPUs and none on CPU adapters (spinning would take a core from
/// the driver's own threads).
fn spin_wait(device_type: &wgpu::DeviceType, settings: &Settings) -> Duration {
    let us = settings.device.wait_spin_us;
    let default = if *device_type == wgpu::DeviceType::Cpu { 0 } else { 2000 };
    Duration::from_micros(us.unwrap_or(default).min(100_000))
}

#[cfg(test)]
#[path = "device_profile_test.rs"]
mod profile_test;
