//! Private memory of one invocation: `var<private>` globals plus function
//! variables, from naga's types. No adapter limit covers it, and drivers
//! choke on large amounts (lavapipe took over a minute to compile a 256 KiB
//! array and crashed on larger ones; 16 KiB compiles in about two seconds),
//! so kernels are held to `MAX_PRIVATE_BYTES`.

use naga::{Block, Expression, Function, Handle, Module, Statement, TypeInner};

/// Most private memory one invocation may use (`WGC_MAX_PRIVATE_MEMORY_BYTES`).
pub const MAX_PRIVATE_BYTES: u64 = 16 << 10;

/// Bytes of a value of type `ty` held by one invocation. A cooperative
/// matrix is spread over a subgroup, so each invocation holds `1/lanes` of it.
fn bytes_of(module: &Module, ty: Handle<naga::Type>, lanes: u64) -> u64 {
    match &module.types[ty].inner {
        TypeInner::CooperativeMatrix { .. } => module.types[ty].inner.size(module.to_ctx()) as u64 / lanes,
        TypeInner::Array { base, size: naga::ArraySize::Constant(n), .. }
            if matches!(module.types[*base].inner, TypeInner::CooperativeMatrix { .. }) =>
        {
            n.get() as u64 * bytes_of(module, *base, lanes)
        }
        inner => inner.size(module.to_ctx()) as u64,
    }
}

/// The functions `body` calls directly (walked without recursion: blocks
/// may nest deeply).
pub(crate) fn callees(body: &Block) -> Vec<Handle<Function>> {
    let mut out = Vec::new();
    let mut blocks = vec![body];
    while let Some(block) = blocks.pop() {
        for statement in block.iter() {
            match statement {
                Statement::Call { function, .. } => out.push(*function),
                Statement::Block(b) => blocks.push(b),
                Statement::If { accept, reject, .. } => blocks.extend([accept, reject]),
                Statement::Switch { cases, .. } => blocks.extend(cases.iter().map(|c| &c.body)),
                Statement::Loop { body, continuing, .. } => blocks.extend([body, continuing]),
                _ => {}
            }
        }
    }
    out
}

/// A function's own variables, plus the arrays it indexes by value with a
/// dynamic index (the SPIR-V writer copies those into a variable).
fn own_bytes(module: &Module, info: &naga::valid::FunctionInfo, f: &Function, lanes: u64) -> u64 {
    let locals: u64 = f.local_variables.iter().map(|(_, v)| bytes_of(module, v.ty, lanes)).sum();
    let copies: u64 = f
        .expressions
        .iter()
        .filter_map(|(_, e)| match e {
            Expression::Access { base, .. } => match info[*base].ty.inner_with(&module.types) {
                TypeInner::Array { .. } => Some(info[*base].ty.inner_with(&module.types).size(module.to_ctx()) as u64),
                _ => None,
            },
            _ => None,
        })
        .sum();
    locals + copies
}

/// Private bytes of one invocation of entry point `ep_index`: the private
/// globals it uses, and its variables plus those of the deepest chain of
/// calls below it.
pub fn private_bytes(module: &Module, info: &naga::valid::ModuleInfo, ep_index: usize, lanes: u64) -> u64 {
    let lanes = lanes.max(1);
    // Deepest frame of each function, in one pass: naga's validator requires
    // every function to come after the functions it calls (WGSL has no
    // recursion), so their frames are known when it is reached.
    let mut frame: Vec<u64> = Vec::with_capacity(module.functions.len());
    for (h, f) in module.functions.iter() {
        let deepest = callees(&f.body).iter().filter_map(|c| frame.get(c.index()).copied()).max().unwrap_or(0);
        frame.push(own_bytes(module, &info[h], f, lanes) + deepest);
    }
    let ep = &module.entry_points[ep_index];
    let ep_info = info.get_entry_point(ep_index);
    let ep_frame = own_bytes(module, ep_info, &ep.function, lanes)
        + callees(&ep.function.body).iter().map(|c| frame[c.index()]).max().unwrap_or(0);
    let globals: u64 = module
        .global_variables
        .iter()
        .filter(|(h, v)| v.space == naga::AddressSpace::Private && !ep_info[*h].is_empty())
        .map(|(_, v)| bytes_of(module, v.ty, lanes))
        .sum();
    globals + ep_frame
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::kernel::parse_and_validate;

    fn bytes(src: &str, lanes: u64) -> u64 {
        let (module, info) = parse_and_validate(src).unwrap();
        private_bytes(&module, &info, 0, lanes)
    }

    #[test]
    fn counts_globals_variables_and_the_deepest_call_chain() {
        let src = "var<private> p: array<f32, 10>;
            fn h(i: u32) -> f32 { var a: array<f32, 300>; a[i] = 1.0; return a[0]; }
            fn g(i: u32) -> f32 { var b: array<f32, 200>; b[i] = h(i); return b[1]; }
            fn unused() { var c: array<f32, 5000>; c[0] = 1.0; }
            @compute @workgroup_size(1) fn main() { var i = 0u; p[i] = g(i) + h(2u); }";
        // p (40) + i (4) + g's b (800) + h's a (1200); h called directly adds less.
        assert_eq!(bytes(src, 32), 40 + 4 + 800 + 1200);
    }

    #[test]
    fn counts_arrays_indexed_by_value() {
        let src = "@group(0) @binding(0) var<storage, read_write> y: array<f32>;
            @compute @workgroup_size(1) fn main() { let a = array<f32, 64>(); y[0] = a[u32(y[0])]; }";
        assert_eq!(bytes(src, 32), 256);
    }
}
