//! The process-wide wgpu instance, adapter enumeration and adapter choice
//! (by index, by preference, or by the `WGC_ADAPTER` / `WGC_BACKEND` variables).

use crate::error::{Error, Result};
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::Mutex;

/// What the caller asked for when choosing an adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preference {
    Default,
    HighPerformance,
    LowPower,
    Software,
}

/// Everything about an adapter that a caller may want to see before choosing it.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    /// Cooperative matrix shapes with f16 inputs (tensor cores), if any.
    pub coop_f16: bool,
}

pub struct Instance {
    /// Adapters found per set of backends, enumerated once.
    adapters: Mutex<HashMap<wgpu::Backends, Vec<wgpu::Adapter>>>,
}

/// An environment variable: `None` if unset; an error if it is not UTF-8
/// (ignoring it would silently pick another adapter than asked for).
fn env_var(name: &str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => {
            Err(Error::InvalidArgument(format!("{name}={v:?} is not valid UTF-8")))
        }
    }
}

/// Parse `WGC_BACKEND` (vulkan, metal, dx12, gl); unset means every backend.
pub fn backends_from_env() -> Result<wgpu::Backends> {
    match env_var("WGC_BACKEND")? {
        None => Ok(wgpu::Backends::all()),
        Some(v) => parse_backend(&v),
    }
}

fn parse_backend(v: &str) -> Result<wgpu::Backends> {
    Ok(match v.trim().to_ascii_lowercase().as_str() {
        "" | "any" | "all" => wgpu::Backends::all(),
        "vulkan" | "vk" => wgpu::Backends::VULKAN,
        "metal" => wgpu::Backends::METAL,
        "dx12" | "d3d12" => wgpu::Backends::DX12,
        "gl" | "gles" | "opengl" => wgpu::Backends::GL,
        other => {
            return Err(Error::InvalidArgument(format!("WGC_BACKEND={other:?}: expected vulkan, metal, dx12 or gl")))
        }
    })
}

static INSTANCE: Lazy<Instance> = Lazy::new(|| Instance { adapters: Mutex::new(HashMap::new()) });

pub fn instance() -> &'static Instance {
    &INSTANCE
}

fn enumerate(backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
    let vulkan = backends.contains(wgpu::Backends::VULKAN);
    let others = backends - wgpu::Backends::VULKAN;
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = others;
    desc.flags = wgpu::InstanceFlags::empty();
    let inst = wgpu::Instance::new(desc);
    let mut list =
        if others.is_empty() { Vec::new() } else { super::block_on::block_on(inst.enumerate_adapters(others)) };
    if vulkan {
        #[cfg(not(target_arch = "wasm32"))]
        list.extend(vulkan_compute_adapters(&inst));
    }
    list.sort_by_key(|a| backend_rank(a.get_info().backend));
    list
}

/// Window-system surface extensions, useless to a compute library. Enabling
/// them makes Mesa's device-select layer connect to a Wayland/X11 display
/// while listing devices, and libwayland then prints "error: XDG_RUNTIME_DIR
/// is invalid or not set" to stderr on machines without a desktop session.
#[cfg(not(target_arch = "wasm32"))]
const WSI_EXTENSIONS: [&std::ffi::CStr; 3] = [c"VK_KHR_wayland_surface", c"VK_KHR_xcb_surface", c"VK_KHR_xlib_surface"];

/// The Vulkan adapters of an instance created without `WSI_EXTENSIONS`,
/// wrapped by `inst` (whose flags, and so device behaviour, stay ours).
/// wgpu-hal only uses those extensions to create surfaces, and checks that
/// they were enabled before it does, so leaving them out is safe.
#[cfg(not(target_arch = "wasm32"))]
fn vulkan_compute_adapters(inst: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    use wgpu::hal::{self, Instance as _};
    let desc = hal::InstanceDescriptor {
        name: "wgcompute",
        flags: wgpu::InstanceFlags::empty(),
        memory_budget_thresholds: Default::default(),
        backend_options: Default::default(),
        telemetry: None,
        display: None,
    };
    let drop_wsi: Box<hal::vulkan::CreateInstanceCallback> =
        Box::new(|args| args.extensions.retain(|e| !WSI_EXTENSIONS.contains(e)));
    // SAFETY: the callback only removes extensions wgpu-hal checks for before use.
    let Ok(vk) = (unsafe { hal::vulkan::Instance::init_with_callback(&desc, Some(drop_wsi)) }) else {
        return Vec::new(); // no Vulkan loader or driver: as wgpu::Instance::new would find
    };
    // SAFETY: the adapters keep their Vulkan instance alive (wgpu-hal shares it by
    // reference count); wgcompute never creates surfaces, the only use of the
    // wrapping instance's own handles.
    unsafe { vk.enumerate_adapters(None) }.into_iter().map(|a| unsafe { inst.create_adapter_from_hal(a) }).collect()
}

impl Instance {
    /// The adapters of the backends `WGC_BACKEND` names. Unset, the native
    /// APIs (Vulkan, Metal, DX12) are used, and OpenGL only if they find none:
    /// GL adapters duplicate native ones and their start-up is noisy.
    pub fn adapters(&self) -> Result<Vec<wgpu::Adapter>> {
        let backends = backends_from_env()?;
        let explicit = std::env::var_os("WGC_BACKEND").is_some();
        let mut cache = self.adapters.lock().unwrap();
        let mut get = |b: wgpu::Backends| cache.entry(b).or_insert_with(|| enumerate(b)).clone();
        if explicit {
            return Ok(get(backends));
        }
        let native = get(wgpu::Backends::PRIMARY);
        Ok(if native.is_empty() { get(wgpu::Backends::GL) } else { native })
    }
}

/// Choose an adapter: an explicit index wins; otherwise `WGC_ADAPTER`
/// (an index or part of the name); otherwise the preference.
pub fn choose(list: &[wgpu::Adapter], index: Option<usize>, preference: Preference) -> Result<wgpu::Adapter> {
    if list.is_empty() {
        return Err(Error::NotFound(
            "no GPU adapter found (for a software driver on Linux install mesa-vulkan-drivers)".into(),
        ));
    }
    if let Some(i) = index {
        return list
            .get(i)
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("adapter index {i} out of range: {} adapter(s)", list.len())));
    }
    if let Some(sel) = env_var("WGC_ADAPTER")? {
        let sel = sel.trim();
        if let Ok(i) = sel.parse::<usize>() {
            return list
                .get(i)
                .cloned()
                .ok_or_else(|| Error::NotFound(format!("WGC_ADAPTER={i} out of range: {} adapter(s)", list.len())));
        }
        let needle = sel.to_ascii_lowercase();
        return list
            .iter()
            .find(|a| a.get_info().name.to_ascii_lowercase().contains(&needle))
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("no adapter name contains WGC_ADAPTER={sel:?}")));
    }
    let rank = |a: &wgpu::Adapter| -> (u32, u32) {
        let info = a.get_info();
        let kind = match (preference, info.device_type) {
            (Preference::Software, wgpu::DeviceType::Cpu) => 0,
            (Preference::Software, _) => 1,
            (Preference::LowPower, wgpu::DeviceType::IntegratedGpu) => 0,
            (Preference::LowPower, wgpu::DeviceType::DiscreteGpu) => 1,
            (_, wgpu::DeviceType::DiscreteGpu) => 0,
            (_, wgpu::DeviceType::IntegratedGpu) => 1,
            (_, wgpu::DeviceType::VirtualGpu) => 2,
            (_, wgpu::DeviceType::Other) => 3,
            (_, wgpu::DeviceType::Cpu) => 4,
        };
        (kind, backend_rank(info.backend))
    };
    let best = list.iter().min_by_key(|a| rank(a)).unwrap();
    if preference == Preference::Software && best.get_info().device_type != wgpu::DeviceType::Cpu {
        return Err(Error::NotFound("no software adapter found".into()));
    }
    Ok(best.clone())
}

fn backend_rank(b: wgpu::Backend) -> u32 {
    match b {
        wgpu::Backend::Vulkan => 0,
        wgpu::Backend::Metal => 0,
        wgpu::Backend::Dx12 => 1,
        wgpu::Backend::Gl => 2,
        _ => 3,
    }
}

pub fn summarize(a: &wgpu::Adapter) -> AdapterSummary {
    let features = a.features();
    let coop_f16 = features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        && a.cooperative_matrix_properties().iter().any(|p| {
            p.ab_type == wgpu::CooperativeScalarType::F16 && p.m_size == 16 && p.n_size == 16 && p.k_size == 16
        });
    AdapterSummary { info: a.get_info(), limits: a.limits(), features, coop_f16 }
}
