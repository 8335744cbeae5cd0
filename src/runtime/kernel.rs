//! Kernels: WGSL compiled into compute pipelines. naga parses and validates
//! the source first, so errors carry line and column, and reflection gives the
//! bindings the entry point uses; the bind group layout is built from that,
//! with uniforms at dynamic offsets so per-launch parameters need no new bind
//! group. Compiled kernels are cached per device by (source, entry point).

use super::compile_stack::on_compile_stack;
use super::device::{next_id, Device};
use super::kernel_variant::{pipeline_for, VariantKey, MAX_OVERRIDES, MAX_TYPES};
pub use super::reflect::parse_and_validate;
use super::reflect::reflect;
use crate::error::{Error, Result};
use std::sync::Arc;

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

#[derive(Default)]
pub struct KernelCache {
    /// Callers' kernels, kept while a handle to them is alive.
    pub user: super::user_kernels::UserKernels,
    /// The library's own kernels: every variant of the kernel spec
    /// (src/ops/spec) and the plain runtime shaders, one key scheme.
    pub spec: super::kernel_variant::VariantCache,
    /// Kernels generated from elementwise expressions, by source text.
    pub generated: super::generated_kernels::GeneratedKernels,
}

impl KernelCache {
    /// A caller's kernel: compiled once while handles to it are alive. Each
    /// successful call must be matched by one `KernelRef` (whose drop lets go).
    pub fn get(&self, device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Arc<Kernel>> {
        self.user.get(source, entry, trusted, || compile(device, source, entry, trusted))
    }

    /// One of the library's plain shaders (no type slots, no overrides),
    /// cached under the spec's key.
    pub fn get_builtin(&self, device: &Device, file: &'static str, entry: &'static str) -> Result<Arc<Kernel>> {
        let key = VariantKey { file, entry, types: [0; MAX_TYPES], overrides: [0; MAX_OVERRIDES] };
        self.spec.get(device, &key, || Ok((crate::shaders::source(file).to_owned(), Vec::new())))
    }

    /// Kernels cached now (the library's and callers').
    pub fn cached_count(&self) -> usize {
        self.spec.count() + self.user.count() + self.generated.count()
    }
}

/// Compile on the compiler's stack: naga and wgpu recurse over the source's nesting.
fn compile(device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Kernel> {
    on_compile_stack(|| compile_here(device, source, entry, trusted))
}

fn compile_here(device: &Device, source: &str, entry: &str, trusted: bool) -> Result<Kernel> {
    device.check_alive()?;
    let (bindings, workgroup_size) = reflect(device, source, entry)?;
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
            let options =
                wgpu::PipelineCompilationOptions { zero_initialize_workgroup_memory: !trusted, ..Default::default() };
            pipeline_for(device, &module, entry, &bindings, options)
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
