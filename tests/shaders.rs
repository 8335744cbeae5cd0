//! Every shader file compiled into the library parses and validates with
//! naga. Templates (with `{{NAME}}` placeholders) are checked at run time
//! when their variants compile (the C tests exercise them); here only files
//! without placeholders are checked, so a WGSL mistake in them fails fast.
//! Files that start with `// Fragment:` are pieces appended to other
//! shaders and are checked inside those.

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
        // Templates are checked through their variants; fragments only
        // inside the shaders they are appended to.
        if source.contains("{{") || source.starts_with("// Fragment:") {
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
