//! The committed header must be exactly what cbindgen generates from the
//! sources. Set WGC_REGENERATE_HEADER=1 to rewrite it.

use std::path::Path;

#[test]
fn header_matches_sources() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new().with_crate(root).with_config(config).generate().expect("cbindgen failed");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = root.join("include/wgcompute.h");
    if std::env::var_os("WGC_REGENERATE_HEADER").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/wgcompute.h differs from what cbindgen generates; run WGC_REGENERATE_HEADER=1 cargo test --test header"
    );
}

/// Every name the header defines carries the library's prefix, so nothing
/// internal leaks into C (a bare `#define WG 256` once did).
#[test]
fn header_names_are_prefixed() {
    let header = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/wgcompute.h")).unwrap();
    for line in header.lines() {
        let line = line.trim();
        let name = if let Some(rest) = line.strip_prefix("#define ") {
            rest.split_whitespace().next().unwrap_or("")
        } else if let Some(rest) = line.strip_prefix("typedef struct ") {
            rest.split_whitespace().next().unwrap_or("")
        } else if let Some(rest) = line.strip_prefix("enum ") {
            rest.split_whitespace().next().unwrap_or("")
        } else {
            continue;
        };
        assert!(
            name.starts_with("WGC") || name.starts_with("Wgc") || name == "WGCOMPUTE_H",
            "header defines {name:?} without the WGC/Wgc prefix"
        );
    }
}
