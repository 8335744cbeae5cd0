//! What a kernel needs, read from its WGSL by naga before wgpu sees it: the
//! bindings its entry point uses, and its workgroup size, workgroup memory,
//! private memory and inlined size checked against the limits. Sizes are read after
//! `override` declarations take their values, as the pipeline will see them.
//! Runs on the compiler's stack (`compile_stack`).

use super::device::Device;
use super::inline_size::{inlined_expressions, MAX_INLINED_EXPRESSIONS};
use super::kernel::{BindingInfo, BindingKind};
use super::private_memory::{private_bytes, MAX_PRIVATE_BYTES};
use super::{wgsl_nesting, wgsl_size};
use crate::bail;
use crate::error::{Error, Result};

/// Parse and validate WGSL with naga, so diagnostics name line and column.
/// Sources nesting deeper than `wgsl_nesting::MAX_NESTING` are refused first,
/// then sources past `wgsl_size`'s bounds (where naga's time grows faster
/// than the source).
pub fn parse_and_validate(source: &str) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
    wgsl_nesting::check(source)?;
    wgsl_size::check(source)?;
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

/// The bindings `entry` uses and its workgroup size, after checking the
/// entry point's sizes against the adapter's limits and `MAX_PRIVATE_BYTES`.
pub fn reflect(device: &Device, source: &str, entry: &str) -> Result<(Vec<BindingInfo>, [u32; 3])> {
    reflect_with(device, source, entry, &Default::default())
}

/// `reflect` with `override`s set to `constants` (the pipeline constants
/// the kernel will be compiled with); the others take their declared values.
pub fn reflect_with(
    device: &Device,
    source: &str,
    entry: &str,
    constants: &naga::back::PipelineConstants,
) -> Result<(Vec<BindingInfo>, [u32; 3])> {
    let (module, info) = parse_and_validate(source)?;
    let Some(ep) = module.entry_points.iter().find(|ep| ep.name == entry) else {
        let names: Vec<_> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
        bail!(NotFound, "entry point {entry:?} not found in the module (it has: {names:?})");
    };
    if ep.stage != naga::ShaderStage::Compute {
        bail!(InvalidArgument, "entry point {entry:?} is not a compute entry point");
    }
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((naga::ShaderStage::Compute, entry)),
        constants,
    )
    .map_err(|e| Error::ShaderCompilation(format!("entry point {entry:?}: {e}")))?;
    let ep_index = module
        .entry_points
        .iter()
        .position(|ep| ep.name == entry)
        .ok_or_else(|| Error::Internal(format!("entry point {entry:?} disappeared when overrides were applied")))?;
    let ep = &module.entry_points[ep_index];
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
    let private = private_bytes(&module, &info, ep_index, device.adapter.info.subgroup_min_size as u64);
    if private > MAX_PRIVATE_BYTES {
        bail!(
            LimitExceeded,
            "entry point {entry:?} uses {private} bytes of private memory per invocation (private and function \
             variables); kernels may use at most {MAX_PRIVATE_BYTES}"
        );
    }
    let inlined = inlined_expressions(&module, ep_index);
    if inlined > MAX_INLINED_EXPRESSIONS {
        bail!(
            LimitExceeded,
            "entry point {entry:?} becomes {inlined} expressions once its calls are inlined (every call counts \
             the callee again, for the entry point and each function it reaches); kernels may have at most \
             {MAX_INLINED_EXPRESSIONS}"
        );
    }
    bindings.sort_by_key(|b| b.binding);
    if bindings.iter().filter(|b| b.kind == BindingKind::Uniform).count() > 1 {
        bail!(Unsupported, "a kernel may declare at most one uniform binding");
    }
    let storage = bindings.iter().filter(|b| b.kind != BindingKind::Uniform).count() as u32;
    if storage > l.max_storage_buffers_per_shader_stage {
        bail!(
            LimitExceeded,
            "{storage} storage buffers; this adapter allows {}",
            l.max_storage_buffers_per_shader_stage
        );
    }
    Ok((bindings, wg))
}
