//! Every kernel variant the library can ask for, compiled offline: for each
//! family on the kernel spec and each point on its declared axes (entry
//! points x element types x override values; operators can only ask for
//! these, see `Variant::check_declared`), the prelude is applied, naga
//! parses and validates the module with only the capabilities the variant
//! needs (those of the `enable` lines its prelude adds: f16, cooperative
//! matrices), the override values are applied as pipeline constants, and the
//! entry point is translated to SPIR-V. A broken kernel fails here, on a
//! machine without a GPU.

use naga::valid::{Capabilities, ValidationFlags, Validator};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use wgcompute::ops::spec::Family;
use wgcompute::ops::{FAMILIES, INT64_FAMILIES, SUBGROUP_FAMILIES};

/// A variant's source parsed and validated: shared by every variant that
/// differs only in its entry point and override values.
type Validated = Result<(naga::Module, naga::valid::ModuleInfo), String>;

/// The capabilities a variant's `enable` lines ask for, subgroup operations
/// in the subgroup strategy families only, 64-bit integers in the int64 ones.
fn capabilities(family: &Family, source: &str) -> Capabilities {
    let mut caps = Capabilities::empty();
    if source.contains("enable f16;") {
        caps |= Capabilities::SHADER_FLOAT16;
    }
    if source.contains("enable wgpu_cooperative_matrix;") {
        caps |= Capabilities::COOPERATIVE_MATRIX;
    }
    // f16 conversions in f32 code (a downlevel capability every Vulkan adapter has).
    if source.contains("pack2x16float") {
        caps |= Capabilities::SHADER_FLOAT16_IN_FLOAT32;
    }
    if SUBGROUP_FAMILIES.iter().any(|f| std::ptr::eq(*f, family)) {
        caps |= Capabilities::SUBGROUP;
    }
    // Kernels chosen only where the adapter has subgroup barriers.
    if source.contains("subgroupBarrier()") {
        caps |= Capabilities::SUBGROUP_BARRIER;
    }
    if INT64_FAMILIES.iter().any(|f| std::ptr::eq(*f, family)) {
        caps |= Capabilities::SHADER_INT64;
    }
    caps
}

fn validate(source: &str, caps: Capabilities) -> Validated {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = Validator::new(ValidationFlags::all(), caps).validate(&module).map_err(|e| e.emit_to_string(source))?;
    Ok((module, info))
}

fn compile_offline(validated: &Validated, entry: &str, constants: &[(&str, f64)]) -> Result<usize, String> {
    let (module, info) = validated.as_ref().map_err(|e| e.clone())?;
    let mut pc = naga::back::PipelineConstants::default();
    for &(name, value) in constants {
        pc.insert(name.to_owned(), value);
    }
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(module, info, Some((naga::ShaderStage::Compute, entry)), &pc)
            .map_err(|e| format!("overrides {constants:?}: {e}"))?;
    let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
    let pipeline =
        naga::back::spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: entry.to_owned() };
    let words =
        naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| format!("SPIR-V: {e}"))?;
    Ok(words.len())
}

/// The variants of one family compiled, with the failures (a family's
/// variants share their sources, so each is parsed and validated once).
fn compile_family(family: &'static Family) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut validated: HashMap<String, Validated> = HashMap::new();
    let variants = family.all_variants();
    assert!(!variants.is_empty(), "{} declares no variants", family.file);
    for v in &variants {
        v.check_declared().unwrap();
        let source = v.source();
        let caps = capabilities(family, &source);
        let checked = validated.entry(source).or_insert_with_key(|s| validate(s, caps));
        match compile_offline(checked, v.entry, &v.constants()) {
            Ok(words) => assert!(words > 0),
            Err(e) => failures.push(format!("{} {} {:?} {:?}:\n{e}", family.file, v.entry, v.types, v.constants())),
        }
    }
    (variants.len(), failures)
}

/// Families compile on every core: thousands of variants, minutes on one.
#[test]
fn every_variant_compiles_to_spirv() {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(family) = FAMILIES.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let result = compile_family(family);
                    results.lock().unwrap().push(result);
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    assert_eq!(results.len(), FAMILIES.len(), "a family's compile panicked");
    let count: usize = results.iter().map(|r| r.0).sum();
    let failures: Vec<String> = results.into_iter().flat_map(|r| r.1).collect();
    assert!(failures.is_empty(), "{} of {count} variants fail:\n{}", failures.len(), failures.join("\n"));
    assert!(count > 100, "only {count} variants enumerated");
}

/// Every override a family declares exists in its shader, and every
/// `override` in the shader is declared (so the cache key names them all),
/// except derived ones: overrides whose initializer reads other overrides
/// (tile sizes computed from the declared blocking) are functions of the
/// declared values, which the library never sets itself.
#[test]
fn declared_overrides_match_the_shaders() {
    for family in FAMILIES {
        let v = family.all_variants()[0];
        let module = naga::front::wgsl::parse_str(&v.source()).unwrap();
        let derived = |o: &naga::Override| {
            let mut stack: Vec<_> = o.init.into_iter().collect();
            while let Some(e) = stack.pop() {
                match &module.global_expressions[e] {
                    naga::Expression::Override(_) => return true,
                    naga::Expression::Binary { left, right, .. } => stack.extend([*left, *right]),
                    naga::Expression::Unary { expr, .. } | naga::Expression::As { expr, .. } => stack.push(*expr),
                    naga::Expression::Select { condition, accept, reject } => {
                        stack.extend([*condition, *accept, *reject])
                    }
                    naga::Expression::Math { arg, arg1, arg2, arg3, .. } => {
                        stack.extend([Some(*arg), *arg1, *arg2, *arg3].into_iter().flatten())
                    }
                    _ => {}
                }
            }
            false
        };
        let in_shader: HashSet<&str> =
            module.overrides.iter().filter(|(_, o)| !derived(o)).filter_map(|(_, o)| o.name.as_deref()).collect();
        let declared: HashSet<&str> = family.overrides.iter().map(|o| o.name).collect();
        assert_eq!(in_shader, declared, "{}: overrides in the shader vs declared", family.file);
        let entries: HashSet<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
        let declared: HashSet<&str> = family.entries.iter().copied().collect();
        assert_eq!(entries, declared, "{}: entry points in the shader vs declared", family.file);
    }
}

/// Shader files use only the prelude's substitution: no `{{...}}`
/// placeholders, no `enable` or `alias` of a type slot of their own.
#[test]
fn spec_shaders_have_no_placeholders() {
    for family in FAMILIES {
        assert!(!family.source.contains("{{"), "{} has a template placeholder", family.file);
        for slot in family.types {
            let alias = format!("alias {} ", slot.alias);
            assert!(!family.source.contains(&alias), "{} declares its type slot {}", family.file, slot.alias);
        }
        assert!(!family.source.contains("enable "), "{} has an enable directive", family.file);
    }
}

/// Every file in shaders/ is compiled into the library: listed in
/// `shaders::ALL` or owned by a kernel family.
#[test]
fn every_shader_file_is_used() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let known: HashSet<&str> =
        wgcompute::shaders::ALL.iter().map(|(n, _)| *n).chain(FAMILIES.iter().map(|f| f.file)).collect();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if entry.file_type().unwrap().is_dir() {
            // The GLSL of the SPIR-V kernels: tests/gemm_spirv.rs checks it is used.
            assert_eq!(name, "spirv", "shaders/{name}/: an unknown folder");
            continue;
        }
        assert!(known.contains(name.as_str()), "shaders/{name} is neither in shaders::ALL nor a kernel family");
    }
    let mut files: Vec<&str> = FAMILIES.iter().map(|f| f.file).collect();
    files.sort_unstable();
    files.dedup();
    assert_eq!(files.len(), FAMILIES.len(), "two families share a file name (the cache key needs one per file)");
}
