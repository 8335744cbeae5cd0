//! Built-in kernel variants: a library shader compiled with its WGSL
//! `override` values passed as pipeline constants, cached under a fixed-size
//! key. Operators look a variant up on every launch, so the key is `Copy`,
//! built without allocating, and hashed word by word; only a miss renders
//! source text and compiles. The ops layer's kernel spec (src/ops/spec) is
//! the one caller and makes sure a key names every choice that changes the
//! compiled code.
//!
//! Workgroup sizes may be `override`s: reflection resolves them with naga's
//! override processing from the same values the pipeline gets, so the size
//! checked against the adapter's limits and stored in `Kernel` is the size
//! the driver runs.

use super::compile_stack::on_compile_stack;
use super::device::{next_id, Device};
use super::kernel::{BindingInfo, BindingKind, Kernel};
use super::reflect::reflect_with;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

/// Most element-type substitutions one variant may make.
pub(crate) const MAX_TYPES: usize = 4;
/// Most `override` constants one variant may set.
pub(crate) const MAX_OVERRIDES: usize = 8;

/// Everything that determines a built-in variant's compiled code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VariantKey {
    /// The shader file's name (one source per name).
    pub file: &'static str,
    pub entry: &'static str,
    /// The text substitutions, as the caller's nonzero codes (0: unused slot).
    pub types: [u8; MAX_TYPES],
    /// The override values as `f64` bits, in the order the caller declares
    /// them; unused slots are 0.
    pub overrides: [u64; MAX_OVERRIDES],
}

/// A multiply-rotate hash over whole words: the key is a few dozen bytes
/// hashed on every launch, where SipHash's strength buys nothing.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let mut tail = 0u64;
        for (i, &b) in chunks.remainder().iter().enumerate() {
            tail |= (b as u64) << (8 * i);
        }
        self.write_u64(tail ^ bytes.len() as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

type Map = HashMap<VariantKey, Arc<Kernel>, BuildHasherDefault<WordHasher>>;

/// Compiled variants of one device.
#[derive(Default)]
pub struct VariantCache {
    map: Mutex<Map>,
}

impl VariantCache {
    /// Variants compiled so far.
    pub fn count(&self) -> usize {
        self.map.lock().unwrap().len()
    }

    /// The variant `key`; on a miss `make` gives its WGSL source and the
    /// values of its `override` constants (which `key` must encode), or
    /// the reason it cannot.
    pub fn get(
        &self,
        device: &Device,
        key: &VariantKey,
        make: impl FnOnce() -> Result<(String, Vec<(&'static str, f64)>)>,
    ) -> Result<Arc<Kernel>> {
        self.get_built(key, || {
            let (source, constants) = make()?;
            compile_with_constants(device, &source, key.entry, &constants)
        })
    }

    /// The kernel `key`, built by `build` on a miss (kernels that are not
    /// WGSL, such as SPIR-V modules, share the cache this way).
    pub fn get_built(&self, key: &VariantKey, build: impl FnOnce() -> Result<Kernel>) -> Result<Arc<Kernel>> {
        if let Some(k) = self.map.lock().unwrap().get(key) {
            return Ok(k.clone());
        }
        // Build outside the lock: other threads may use other kernels meanwhile.
        let kernel = Arc::new(build()?);
        Ok(self.map.lock().unwrap().entry(*key).or_insert(kernel).clone())
    }
}

/// Compile a library kernel (trusted: its indexing is checked on the host,
/// and its workgroup memory is not zeroed) with pipeline constants, on the
/// compiler's stack. Sizes are checked with the constants applied.
pub fn compile_with_constants(device: &Device, source: &str, entry: &str, constants: &[(&str, f64)]) -> Result<Kernel> {
    on_compile_stack(|| {
        device.check_alive()?;
        let mut pc = naga::back::PipelineConstants::default();
        for &(name, value) in constants {
            pc.insert(name.to_owned(), value);
        }
        let (bindings, workgroup_size) = reflect_with(device, source, entry, &pc)?;
        let (pipeline, layout) = build_pipeline(device, source, entry, &bindings, constants)?;
        Ok(Kernel {
            id: next_id(),
            device_id: device.id,
            entry_point: entry.to_owned(),
            pipeline,
            layout,
            bindings,
            workgroup_size,
        })
    })
}

/// The bind group layout's entries of a library kernel: uniforms at
/// dynamic offsets, storage as the kernel declares it.
pub(crate) fn layout_entries(bindings: &[BindingInfo]) -> Vec<wgpu::BindGroupLayoutEntry> {
    bindings
        .iter()
        .map(|b| wgpu::BindGroupLayoutEntry {
            binding: b.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match b.kind {
                    BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
                    k => wgpu::BufferBindingType::Storage { read_only: k == BindingKind::StorageRead },
                },
                has_dynamic_offset: b.kind == BindingKind::Uniform,
                min_binding_size: None,
            },
            count: None,
        })
        .collect()
}

/// The bind group layout of `bindings` (uniforms at dynamic offsets) and
/// the pipeline of `entry` in `module`: what every kernel, WGSL or SPIR-V,
/// builds once it has its module. Call inside `Device::scoped`.
pub(crate) fn pipeline_for(
    device: &Device,
    module: &wgpu::ShaderModule,
    entry: &str,
    bindings: &[BindingInfo],
    compilation_options: wgpu::PipelineCompilationOptions,
) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    let dev = &device.wgpu;
    let entries = layout_entries(bindings);
    let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries: &entries });
    let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&pl),
        module,
        entry_point: Some(entry),
        compilation_options,
        cache: device.pipeline_cache(),
    });
    (pipeline, layout)
}

/// The bind group layout and the pipeline of a library kernel.
fn build_pipeline(
    device: &Device,
    source: &str,
    entry: &str,
    bindings: &[BindingInfo],
    constants: &[(&str, f64)],
) -> Result<(wgpu::ComputePipeline, wgpu::BindGroupLayout)> {
    let dev = &device.wgpu;
    device
        .scoped(|| {
            let desc =
                wgpu::ShaderModuleDescriptor { label: Some(entry), source: wgpu::ShaderSource::Wgsl(source.into()) };
            // SAFETY: library kernels guard every index against sizes the
            // host has checked against the bound ranges.
            let module = unsafe { dev.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) };
            let options = wgpu::PipelineCompilationOptions { constants, zero_initialize_workgroup_memory: false };
            pipeline_for(device, &module, entry, bindings, options)
        })
        .map_err(|e| match e {
            Error::Validation(m) => Error::ShaderCompilation(m),
            e => e,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn key(entry: &'static str, t: u8, o: f64) -> VariantKey {
        VariantKey { file: "f.wgsl", entry, types: [t, 0, 0, 0], overrides: [o.to_bits(), 0, 0, 0, 0, 0, 0, 0] }
    }

    fn hash(k: &VariantKey) -> u64 {
        BuildHasherDefault::<WordHasher>::default().hash_one(k)
    }

    /// Keys that differ in any choice differ, and hash apart.
    #[test]
    fn keys_tell_variants_apart() {
        let base = key("a", 1, 64.0);
        for other in [key("b", 1, 64.0), key("a", 2, 64.0), key("a", 1, 128.0)] {
            assert_ne!(base, other);
            assert_ne!(hash(&base), hash(&other));
        }
        assert_eq!(hash(&base), hash(&key("a", 1, 64.0)));
    }
}
