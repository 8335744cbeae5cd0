//! The library's own kernels are far below the runtime's bound on inlined
//! expressions (runtime/inline_size.rs), which exists for users' kernels.

use crate::runtime::inline_size::{inlined_expressions, MAX_INLINED_EXPRESSIONS};
use crate::runtime::kernel::parse_and_validate;

#[test]
fn library_kernels_fit() {
    for family in crate::ops::FAMILIES {
        for v in family.all_variants().into_iter().take(4) {
            let source = v.source();
            let (module, _) = parse_and_validate(&source).unwrap();
            let ep = module.entry_points.iter().position(|e| e.name == v.entry).unwrap();
            let n = inlined_expressions(&module, ep);
            assert!(n < MAX_INLINED_EXPRESSIONS / 16, "{} {}: {n}", family.file, v.entry);
        }
    }
}
