//! Each kernel family's Rust uniform struct has exactly the layout of the
//! WGSL struct its shader binds as a uniform: every WGSL member has a Rust
//! field of the same name, offset and size; Rust fields WGSL lacks are
//! `_pad*` padding; the sizes agree. Checked through naga's reflection.

use naga::{AddressSpace, TypeInner};
use wgcompute::ops::FAMILIES;

#[test]
fn uniform_structs_match_their_wgsl() {
    for family in FAMILIES {
        let layout = (family.uniform)();
        // Any variant: the uniform's layout does not depend on the types.
        let v = family.all_variants()[0];
        let module = naga::front::wgsl::parse_str(&v.source()).unwrap();
        let uniforms: Vec<_> =
            module.global_variables.iter().filter(|(_, g)| g.space == AddressSpace::Uniform).collect();
        assert_eq!(uniforms.len(), 1, "{}: one uniform per family", family.file);
        let ty = &module.types[uniforms[0].1.ty];
        assert_eq!(ty.name.as_deref(), Some(layout.wgsl_struct), "{}: the uniform's struct", family.file);
        let TypeInner::Struct { members, span } = &ty.inner else {
            panic!("{}: the uniform is not a struct", family.file)
        };
        assert_eq!(*span as usize, layout.size, "{}: size of {}", family.file, layout.wgsl_struct);
        for m in members {
            let name = m.name.as_deref().unwrap();
            let size = module.types[m.ty].inner.size(module.to_ctx()) as usize;
            let rust = layout.fields.iter().find(|f| f.0 == name);
            assert_eq!(
                rust.map(|f| (f.1, f.2)),
                Some((m.offset as usize, size)),
                "{}: field {name}: Rust (offset, size) vs WGSL",
                family.file
            );
        }
        for (name, _, _) in &layout.fields {
            assert!(
                name.starts_with("_pad") || members.iter().any(|m| m.name.as_deref() == Some(*name)),
                "{}: Rust field {name} is not in the WGSL struct",
                family.file
            );
        }
    }
}
