//! Kernels: WGSL compiled into compute pipelines. naga parses and validates
//! the source first, so errors carry line and column, and reflection gives the
//! bindings the entry point uses; the bind group layout is built from that,
//! with uniforms at dynamic offsets so per-launch parameters need no new bind
//! group. Compiled kernels are cached per device by (source, entry point).

use super::compile_stack::on_compile_stack;
use super::device::{next_id, Device};
pub use super::reflect::parse_and_validate;
use super::reflect::reflect;
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

/// Built-in kernel variants by key hash, each with its full key.
type VariantMap = HashMap<u64, Vec<(VariantKey, Arc<Kernel>)>>;

#[derive(Default)]
pub struct KernelCache {
    /// The library's own kernels, kept for the device's lifetime.
    map: Mutex<HashMap<Key, Arc<Kernel>>>,
    /// Callers' kernels, kept while a handle to them is alive.
    pub user: super::user_kernels::UserKernels,
    /// Built-in kernel variants by a hash of (file, entry, substitutions): a
    /// lookup that allocates nothing and renders nothing (operators call it
    /// on every launch). The full key is kept to rule out collisions.
    variants: Mutex<VariantMap>,
    /// Variants described by the kernel spec (src/ops/spec).
    pub spec: super::kernel_variant::VariantCache,
}

impl KernelCache {
    /// A caller's kernel: compiled once while handles to it are alive. Each
    /// successful call must be matched by one `KernelRef` (whose drop lets go).
    pub fn get(&self, device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Arc<Kernel>> {
        self.user.get(source, entry, trusted, || compile(device, source, entry, trusted))
    }

    /// One of the library's own plain (untemplated) shaders.
    pub fn get_builtin(&self, device: &Device, file: &'static str, entry: &str) -> Result<Arc<Kernel>> {
        self.get_variant(device, file, entry, &[], || crate::shaders::source(file).to_owned())
    }

    /// Kernels cached now (the library's and callers').
    pub fn cached_count(&self) -> usize {
        self.map.lock().unwrap().len() + self.user.count()
    }

    /// Compile (or find in the cache) `entry` of `source`.
    /// `trusted` drops the shader's runtime bounds checks: only for the
    /// library's own kernels whose indexing is checked on the host.
    fn get_cached(&self, device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Arc<Kernel>> {
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
        let k = self.get_cached(device, &render(), entry, true)?;
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
        let k = self.get_cached(device, &render(), entry, true)?;
        let owned = (file, entry.to_owned(), vec![(String::new(), String::from_utf8_lossy(key).into_owned())]);
        self.variants.lock().unwrap().entry(hash).or_default().push((owned, k.clone()));
        Ok(k)
    }
}

/// Compile on the compiler's stack: naga and wgpu recurse over the source's nesting.
fn compile(device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Kernel> {
    on_compile_stack(|| compile_here(device, source, entry, trusted))
}

fn compile_here(device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Kernel> {
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
    let (pipeline, layout) = device
        .scoped(|| {
            let desc =
                wgpu::ShaderModuleDescriptor { label: Some(entry), source: wgpu::ShaderSource::Wgsl(source.into()) };
            let module = if trusted {
                // SAFETY: the library's own kernels guard every index against sizes
                // the host has checked against the bound ranges.
                unsafe { dev.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
            } else {
                dev.create_shader_module(desc)
            };
            let layout =
                dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries: &entries });
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
