//! The plain shaders outside the kernel spec (`shaders::ALL`) parse and
//! validate with naga (spec families are checked by tests/spec_variants.rs).
//! Files that start with `// Fragment:` are pieces joined to family sources
//! and are checked inside those.

use wgcompute::shaders::ALL;

fn validate(name: &str, source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string_with_path(source, name))?;
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| e.emit_to_string_with_path(source, name))?;
    Ok(())
}

#[test]
fn plain_shaders_validate() {
    let mut failures = Vec::new();
    for (name, source) in ALL {
        // Fragments are checked inside the families that join them.
        if source.starts_with("// Fragment:") {
            continue;
        }
        if let Err(e) = validate(name, source) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "invalid shaders:\n{}", failures.join("\n"));
}

#[test]
fn shader_names_are_unique_wgsl_files() {
    let mut names: Vec<&str> = ALL.iter().map(|(n, _)| *n).collect();
    assert!(names.iter().all(|n| n.ends_with(".wgsl")));
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "a shader file is listed twice in shaders::ALL");
}
