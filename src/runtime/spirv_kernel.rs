//! Library kernels shipped as SPIR-V modules and handed to the driver as
//! they are (wgpu's `PASSTHROUGH_SHADERS`, Vulkan only): for what WGSL
//! cannot say (Vulkan cooperative-matrix loads from any workgroup layout,
//! 16-byte workgroup stores). The modules are compiled from GLSL under
//! shaders/spirv/ by tools/gen_gemm_spirv.py and embedded; naga cannot
//! reflect them, so each declares its bindings here, and
//! tests/gemm_spirv.rs checks those against the modules' own decorations.
//! They share the device's kernel cache with the WGSL variants.

use super::compile_stack::on_compile_stack;
use super::device::{next_id, Device};
use super::kernel::{BindingInfo, BindingKind, Kernel};
use super::kernel_variant::{pipeline_for, VariantKey, MAX_OVERRIDES, MAX_TYPES};
use crate::bail;
use crate::error::{Error, Result};
use std::sync::Arc;

/// A binding a module declares (descriptor set 0).
#[derive(Clone, Copy, Debug)]
pub struct SpirvBinding {
    pub binding: u32,
    /// The GLSL block instance's name (the `OpName` of its variable).
    pub name: &'static str,
    pub kind: BindingKind,
    /// Smallest range that may be bound: the uniform struct's size, or one
    /// element of a storage array.
    pub min_size: u64,
}

/// One embedded SPIR-V module with a single compute entry point.
#[derive(Debug)]
pub struct SpirvModule {
    /// The file's name under shaders/spirv/generated/ (the cache key).
    pub file: &'static str,
    /// Its bytes, from `include_bytes!` (little-endian words).
    pub bytes: &'static [u8],
    pub entry: &'static str,
    pub workgroup_size: [u32; 3],
    pub bindings: &'static [SpirvBinding],
}

/// True if the device can create kernels from SPIR-V modules: a Vulkan
/// device with `PASSTHROUGH_SHADERS` enabled.
pub fn supported(dev: &Device) -> bool {
    dev.adapter.info.backend == wgpu::Backend::Vulkan && dev.features.contains(wgpu::Features::PASSTHROUGH_SHADERS)
}

impl SpirvModule {
    /// The module's words, or why they are not a SPIR-V module.
    pub fn words(&self) -> Result<Vec<u32>> {
        if !self.bytes.len().is_multiple_of(4) || self.bytes.len() < 20 {
            bail!(Internal, "{}: {} bytes is no SPIR-V module", self.file, self.bytes.len());
        }
        let words: Vec<u32> = self.bytes.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
        if words[0] != 0x0723_0203 {
            bail!(Internal, "{}: no SPIR-V magic number", self.file);
        }
        Ok(words)
    }

    /// The compiled kernel, from the device's cache.
    pub fn kernel(&'static self, dev: &Device) -> Result<Arc<Kernel>> {
        let key =
            VariantKey { file: self.file, entry: self.entry, types: [0; MAX_TYPES], overrides: [0; MAX_OVERRIDES] };
        dev.kernels.spec.get_built(&key, || on_compile_stack(|| self.compile(dev)))
    }

    fn compile(&self, device: &Device) -> Result<Kernel> {
        device.check_alive()?;
        if !supported(device) {
            bail!(
                Unsupported,
                "{}: this device cannot run SPIR-V modules (Vulkan with passthrough shaders)",
                self.file
            );
        }
        let words = self.words()?;
        let mut bindings: Vec<BindingInfo> = self
            .bindings
            .iter()
            .map(|b| BindingInfo { binding: b.binding, name: b.name.to_owned(), kind: b.kind, min_size: b.min_size })
            .collect();
        bindings.sort_by_key(|b| b.binding);
        let [x, y, z] = self.workgroup_size;
        let dev = &device.wgpu;
        let (pipeline, layout) = device
            .scoped(|| {
                let desc = wgpu::ShaderModuleDescriptorPassthrough {
                    label: Some(self.file),
                    entry_points: vec![wgpu::PassthroughShaderEntryPoint {
                        name: self.entry.into(),
                        workgroup_size: (x, y, z),
                    }]
                    .into(),
                    spirv: Some(words.into()),
                    ..Default::default()
                };
                // SAFETY: the modules are the library's own, validated by
                // spirv-val in the tests; the host checks every launch's ranges
                // against the sizes the kernels guard their indices with, and
                // asks for a module only where the adapter offers the
                // capabilities it declares (see the callers' `available`).
                let module = unsafe { dev.create_shader_module_passthrough(desc) };
                let options =
                    wgpu::PipelineCompilationOptions { constants: &[], zero_initialize_workgroup_memory: false };
                pipeline_for(device, &module, self.entry, &bindings, options)
            })
            .map_err(|e| match e {
                Error::Validation(m) => Error::ShaderCompilation(format!("{}: {m}", self.file)),
                e => e,
            })?;
        Ok(Kernel {
            id: next_id(),
            device_id: device.id,
            entry_point: self.entry.to_owned(),
            pipeline,
            layout,
            bindings,
            workgroup_size: self.workgroup_size,
        })
    }
}

#[cfg(test)]
#[path = "spirv_kernel_test.rs"]
mod tests;
