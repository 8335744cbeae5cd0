//! Opening a device in the browser, and `Device::scoped` there. A child of
//! runtime/device.rs (it sets the device's private state). WebGPU answers
//! device requests and error scopes with promises, which resolve only once
//! control returns to the browser's event loop: nothing may wait for them.

use super::*;

impl Device {
    /// The browser's `Device::create`: the adapter's portable features only
    /// (f16 where `shader-f16` is offered, subgroups where offered; no
    /// pipeline cache, tuning files or Vulkan extensions), opened with an
    /// awaited request.
    pub async fn create_web(adapter: &wgpu::Adapter, options: DeviceOptions) -> Result<Arc<Device>> {
        let summary = summarize(adapter);
        let device_type = summary.info.device_type;
        let summary_name = summary.info.name.clone();
        // The browser has no process environment: settings come from the options.
        let settings = options.settings.unwrap_or_default();
        let mode = settings.device.autotune.clone().map_err(Error::InvalidArgument)?;
        let tuner = Tuner::new(mode, None, &summary, settings.device.autotune_log)?;
        let web_features = wgpu::Features::SHADER_F16 | wgpu::Features::SUBGROUP | wgpu::Features::TIMESTAMP_QUERY;
        let features = adapter.features() & wanted_features() & web_features;
        let desc = wgpu::DeviceDescriptor {
            label: Some("wgcompute"),
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) = adapter
            .request_device(&desc)
            .await
            .map_err(|e| Error::Internal(format!("could not open the device: {e}")))?;
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let uncaptured_count = Arc::new(AtomicU64::new(0));
        let (sink, count) = (uncaptured.clone(), uncaptured_count.clone());
        // Errors outside any call (see `scoped` below) land here and are
        // reported by the next read.
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
        let limits = device.limits();
        Ok(Arc::new(Device {
            id: next_id(),
            features: device.features(),
            coopmat2_blocks: 0,
            coop_bf16: false,
            host_import: None,
            limits,
            wgpu: device,
            queue,
            adapter: summary,
            pool: Arc::new(BufferPool::new(options.pool_limit)),
            kernels: KernelCache::default(),
            bind_groups: Default::default(),
            in_flight: InFlight::default(),
            gpu_timeout: None,
            spin_wait: spin_wait(&device_type, &settings),
            gate: SubmitGate::default(),
            lost,
            is_lost,
            uncaptured_count,
            destroyed: AtomicBool::new(false),
            uncaptured,
            streams: Mutex::new(Vec::new()),
            pipeline_cache: None,
            tuner,
            profile: DeviceProfile::resolve(settings.device.compute_units, None, &summary_name, device_type, 1),
            settings,
        }))
    }

    /// The browser's `scoped`: an error scope's result is a promise that
    /// cannot be awaited inside a synchronous call, so `f` runs without
    /// scopes and what WebGPU rejects reaches the uncaptured-error list,
    /// which every read checks (`wasm::read`). Everything the library can
    /// check itself is still checked before recording.
    pub fn scoped<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        self.check_alive()?;
        Ok(f())
    }
}
