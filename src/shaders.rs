//! The WGSL sources, compiled into the library, and the one substitution
//! mechanism that makes their variants: `{{NAME}}` in a source is replaced by
//! the value given for NAME (a dtype, a workgroup size, a tile size). A name
//! left unreplaced is a bug, caught here rather than by the WGSL compiler.

/// Every shader file, by name (used by the naga validation test).
pub const ALL: &[(&str, &str)] = &[
    ("fill.wgsl", include_str!("../shaders/fill.wgsl")),
    ("indirect_counts.wgsl", include_str!("../shaders/indirect_counts.wgsl")),
    // Fragments joined to kernel families' sources.
    ("gemm_tile.wgsl", include_str!("../shaders/gemm_tile.wgsl")),
    ("reduce_wg_allreduce.wgsl", include_str!("../shaders/reduce_wg_allreduce.wgsl")),
    ("reduce_wg_shared.wgsl", include_str!("../shaders/reduce_wg_shared.wgsl")),
    ("reduce_wg_subgroups.wgsl", include_str!("../shaders/reduce_wg_subgroups.wgsl")),
    ("random.wgsl", include_str!("../shaders/random.wgsl")),
];

pub fn source(name: &str) -> &'static str {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, s)| *s).unwrap_or_else(|| panic!("no shader named {name}"))
}

/// Replace every `{{KEY}}` by its value.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (k, v) in values {
        out = out.replace(&format!("{{{{{k}}}}}"), v);
    }
    if let Some(pos) = out.find("{{") {
        let end = out[pos..].find("}}").map_or(out.len(), |e| pos + e + 2);
        panic!("shader template placeholder {} was not given a value", &out[pos..end]);
    }
    out
}
