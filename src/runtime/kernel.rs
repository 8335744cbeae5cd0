//! Kernels: WGSL compiled into compute pipelines. naga parses and validates
//! the source first, so errors carry line and column, and reflection gives the
//! bindings the entry point uses; the bind group layout is built from that,
//! with uniforms at dynamic offsets so per-launch parameters need no new bind
//! group. Compiled kernels are cached per device by (source, entry point).

use super::device::{next_id, Device};
use crate::bail;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    StorageRead,
    StorageReadWrite,
    Uniform,
}

#[derive(Clone, Debug)]
pub struct BindingInfo {
    pub binding: u32,
    pub name: String,
    pub kind: BindingKind,
    /// Smallest size a bound range may have (one element for runtime arrays).
    pub min_size: u64,
}

pub struct Kernel {
    pub id: u64,
    pub device_id: u64,
    pub entry_point: String,
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    /// Sorted by binding number.
    pub bindings: Vec<BindingInfo>,
    pub workgroup_size: [u32; 3],
}

impl Kernel {
    pub fn uniform_binding(&self) -> Option<&BindingInfo> {
        self.bindings.iter().find(|b| b.kind == BindingKind::Uniform)
    }
}

#[derive(Hash, PartialEq, Eq)]
struct Key {
    source: String,
    entry: String,
    trusted: bool,
}

type VariantKey = (&'static str, String, Vec<(String, String)>);

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: a fast hash for short keys looked up on every launch.
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[derive(Default)]
pub struct KernelCache {
    map: Mutex<HashMap<Key, Arc<Kernel>>>,
    /// Built-in kernel variants by a hash of (file, entry, substitutions): a
    /// lookup that allocates nothing and renders nothing (operators call it
    /// on every launch). The full key is kept to rule out collisions.
    variants: Mutex<HashMap<u64, Vec<(VariantKey, Arc<Kernel>)>>>,
    /// Variants described by the kernel spec (src/ops/spec).
    pub spec: super::kernel_variant::VariantCache,
}

impl KernelCache {
    /// Compile (or find in the cache) `entry` of `source`.
    /// `trusted` drops the shader's runtime bounds checks: only for the
    /// library's own kernels whose indexing is checked on the host.
    pub fn get(&self, device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Arc<Kernel>> {
        let key = Key { source: source.to_owned(), entry: entry.to_owned(), trusted };
        if let Some(k) = self.map.lock().unwrap().get(&key) {
            return Ok(k.clone());
        }
        // Compile outside the lock: other threads may use other kernels meanwhile.
        let kernel = Arc::new(compile(device, source, entry, trusted)?);
        let mut map = self.map.lock().unwrap();
        Ok(map.entry(key).or_insert(kernel).clone())
    }

    /// A built-in kernel variant; `render` makes its source on a miss.
    pub fn get_variant(
        &self,
        device: &Device,
        file: &'static str,
        entry: &str,
        values: &[(&str, &str)],
        render: impl FnOnce() -> String,
    ) -> Result<Arc<Kernel>> {
        let hash = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (file, entry, values).hash(&mut h);
            h.finish()
        };
        let matches = |k: &VariantKey| {
            k.0 == file
                && k.1 == entry
                && k.2.len() == values.len()
                && k.2.iter().zip(values).all(|(a, b)| a.0 == b.0 && a.1 == b.1)
        };
        if let Some(list) = self.variants.lock().unwrap().get(&hash) {
            if let Some((_, k)) = list.iter().find(|(key, _)| matches(key)) {
                return Ok(k.clone());
            }
        }
        let k = self.get(device, &render(), entry, true)?;
        let key = (file, entry.to_owned(), values.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect());
        self.variants.lock().unwrap().entry(hash).or_default().push((key, k.clone()));
        Ok(k)
    }

    /// A built-in kernel variant identified by caller-made `key` bytes (which
    /// must determine the rendered source) for hot paths that can describe a
    /// variant more cheaply than as substitution strings.
    pub fn get_keyed(
        &self,
        device: &Device,
        file: &'static str,
        entry: &str,
        key: &[u8],
        render: impl FnOnce() -> String,
    ) -> Result<Arc<Kernel>> {
        let hash = fnv1a(file.as_bytes(), fnv1a(entry.as_bytes(), fnv1a(key, FNV_OFFSET)));
        let matches = |k: &VariantKey| k.0 == file && k.1 == entry && k.2.len() == 1 && k.2[0].1.as_bytes() == key;
        if let Some(list) = self.variants.lock().unwrap().get(&hash) {
            if let Some((_, k)) = list.iter().find(|(k, _)| matches(k)) {
                return Ok(k.clone());
            }
        }
        let k = self.get(device, &render(), entry, true)?;
        let owned = (file, entry.to_owned(), vec![(String::new(), String::from_utf8_lossy(key).into_owned())]);
        self.variants.lock().unwrap().entry(hash).or_default().push((owned, k.clone()));
        Ok(k)
    }

}

/// Parse and validate WGSL with naga, so diagnostics name line and column.
pub fn parse_and_validate(source: &str) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| Error::ShaderCompilation(e.emit_to_string_with_path(source, "kernel.wgsl")))?;
    let mut validator =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    validator
        .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
        .subgroup_operations(naga::valid::SubgroupOperationSet::all());
    let info = validator
        .validate(&module)
        .map_err(|e| Error::ShaderCompilation(e.emit_to_string_with_path(source, "kernel.wgsl")))?;
    Ok((module, info))
}

pub(crate) fn reflect(device: &Device, source: &str, entry: &str) -> Result<(Vec<BindingInfo>, [u32; 3])> {
    let (module, info) = parse_and_validate(source)?;
    let Some((ep_index, ep)) = module.entry_points.iter().enumerate().find(|(_, ep)| ep.name == entry) else {
        let names: Vec<_> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
        bail!(NotFound, "entry point {entry:?} not found in the module (it has: {names:?})");
    };
    if ep.stage != naga::ShaderStage::Compute {
        bail!(InvalidArgument, "entry point {entry:?} is not a compute entry point");
    }
    let wg = ep.workgroup_size;
    let l = &device.limits;
    if wg[0] > l.max_compute_workgroup_size_x
        || wg[1] > l.max_compute_workgroup_size_y
        || wg[2] > l.max_compute_workgroup_size_z
        || wg.iter().map(|&v| v as u64).product::<u64>() > l.max_compute_invocations_per_workgroup as u64
    {
        bail!(
            LimitExceeded,
            "workgroup size {wg:?} exceeds this adapter's limits ({}, {}, {}; {} invocations)",
            l.max_compute_workgroup_size_x,
            l.max_compute_workgroup_size_y,
            l.max_compute_workgroup_size_z,
            l.max_compute_invocations_per_workgroup
        );
    }
    let uses = info.get_entry_point(ep_index);
    let mut bindings = Vec::new();
    let mut workgroup_bytes = 0u64;
    for (handle, var) in module.global_variables.iter() {
        if uses[handle].is_empty() {
            continue;
        }
        let kind = match var.space {
            naga::AddressSpace::WorkGroup => {
                // wgpu does not check this at pipeline creation, and some
                // drivers hang on a dispatch that asks for too much.
                workgroup_bytes += module.types[var.ty].inner.size(module.to_ctx()) as u64;
                continue;
            }
            naga::AddressSpace::Storage { access } => {
                if access.contains(naga::StorageAccess::STORE) {
                    BindingKind::StorageReadWrite
                } else {
                    BindingKind::StorageRead
                }
            }
            naga::AddressSpace::Uniform => BindingKind::Uniform,
            naga::AddressSpace::Handle => bail!(Unsupported, "textures and samplers are not supported in kernels"),
            naga::AddressSpace::Immediate => bail!(Unsupported, "immediate data is not supported; use a uniform"),
            _ => continue,
        };
        let Some(rb) = &var.binding else { continue };
        if rb.group != 0 {
            bail!(Unsupported, "binding {} is in group {}; kernels use @group(0) only", rb.binding, rb.group);
        }
        let min_size = module.types[var.ty].inner.size(module.to_ctx()) as u64;
        bindings.push(BindingInfo {
            binding: rb.binding,
            name: var.name.clone().unwrap_or_default(),
            kind,
            min_size: min_size.max(4),
        });
    }
    if workgroup_bytes > l.max_compute_workgroup_storage_size as u64 {
        bail!(
            LimitExceeded,
            "entry point {entry:?} uses {workgroup_bytes} bytes of workgroup memory; this adapter allows {}",
            l.max_compute_workgroup_storage_size
        );
    }
    bindings.sort_by_key(|b| b.binding);
    if bindings.iter().filter(|b| b.kind == BindingKind::Uniform).count() > 1 {
        bail!(Unsupported, "a kernel may declare at most one uniform binding");
    }
    let storage = bindings.iter().filter(|b| b.kind != BindingKind::Uniform).count() as u32;
    if storage > l.max_storage_buffers_per_shader_stage {
        bail!(LimitExceeded, "{storage} storage buffers; this adapter allows {}", l.max_storage_buffers_per_shader_stage);
    }
    Ok((bindings, wg))
}

fn compile(device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Kernel> {
    device.check_alive()?;
    let (bindings, workgroup_size) = reflect(device, source, entry)?;
    let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
        .iter()
        .map(|b| wgpu::BindGroupLayoutEntry {
            binding: b.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match b.kind {
                BindingKind::Uniform => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: None,
                },
                k => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: k == BindingKind::StorageRead },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
            },
            count: None,
        })
        .collect();
    let dev = &device.wgpu;
    let (pipeline, layout) = device.scoped(|| {
        let desc = wgpu::ShaderModuleDescriptor { label: Some(entry), source: wgpu::ShaderSource::Wgsl(source.into()) };
        let module = if trusted {
            // SAFETY: the library's own kernels guard every index against sizes
            // the host has checked against the bound ranges.
            unsafe { dev.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
        } else {
            dev.create_shader_module(desc)
        };
        let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries: &entries });
        let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&pl),
            module: &module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                zero_initialize_workgroup_memory: !trusted,
                ..Default::default()
            },
            cache: device.pipeline_cache(),
        });
        (pipeline, layout)
    })
    .map_err(|e| match e {
        Error::Validation(m) => Error::ShaderCompilation(m),
        e => e,
    })?;
    Ok(Kernel {
        id: next_id(),
        device_id: device.id,
        entry_point: entry.to_owned(),
        pipeline,
        layout,
        bindings,
        workgroup_size,
    })
}

/// A kernel as handed to callers: it keeps its device alive (the cache in
/// the device holds the kernel, so the kernel itself cannot).
pub struct KernelRef {
    pub device: Arc<Device>,
    pub kernel: Arc<Kernel>,
}
