//! How much code a kernel becomes once drivers inline its calls, from
//! naga's IR in one pass. Drivers inline every call, each function into its
//! callers after its own calls are inlined, so a chain of functions each
//! calling the one before costs them time quadratic in its length (4,000
//! small functions took lavapipe two minutes) and functions calling the one
//! before twice grow exponentially. Neither shows in the source's size or
//! nesting, so kernels are held to `MAX_INLINED_EXPRESSIONS`.

use super::private_memory::callees;
use naga::Module;

/// Most expressions the driver may handle when it inlines an entry point's
/// calls (`WGC_MAX_KERNEL_INLINED_EXPRESSIONS`): about a second on lavapipe.
pub(crate) const MAX_INLINED_EXPRESSIONS: u64 = 1 << 20;

/// Expressions of entry point `ep_index` and of every function it reaches,
/// each counted with its calls inlined (the callee's inlined count again at
/// every call), summed as the driver builds them. Saturates.
pub fn inlined_expressions(module: &Module, ep_index: usize) -> u64 {
    // naga's validator requires a function to come after the functions it
    // calls, so their counts are known when it is reached.
    let mut inlined: Vec<u64> = Vec::with_capacity(module.functions.len());
    let with_calls = |own: usize, calls: &[naga::Handle<naga::Function>], inlined: &[u64]| {
        calls.iter().fold(own as u64, |n, c| n.saturating_add(inlined.get(c.index()).copied().unwrap_or(0)))
    };
    for (_, f) in module.functions.iter() {
        let n = with_calls(f.expressions.len(), &callees(&f.body), &inlined);
        inlined.push(n);
    }
    let ep = &module.entry_points[ep_index].function;
    let mut stack = callees(&ep.body);
    let mut total = with_calls(ep.expressions.len(), &stack, &inlined);
    let mut reached = vec![false; module.functions.len()];
    while let Some(f) = stack.pop() {
        if std::mem::replace(&mut reached[f.index()], true) {
            continue;
        }
        total = total.saturating_add(inlined[f.index()]);
        stack.extend(callees(&module.functions[f].body));
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::kernel::parse_and_validate;

    fn inlined(src: &str) -> u64 {
        let (module, _) = parse_and_validate(src).unwrap();
        inlined_expressions(&module, 0)
    }

    /// `n` functions, each calling the one before `calls` times.
    fn chain(n: usize, calls: usize) -> String {
        let mut s = String::from("fn g0(x: f32) -> f32 { return x; }\n");
        for i in 1..n {
            let body = vec![format!("g{}(x)", i - 1); calls].join(" + ");
            s += &format!("fn g{i}(x: f32) -> f32 {{ return {body}; }}\n");
        }
        s + &format!("@compute @workgroup_size(1) fn main() {{ let v = g{}(1.0); }}\n", n - 1)
    }

    #[test]
    fn chains_count_every_inlined_copy() {
        // g0 has 1 expression (x), g1 2 (x, the call's result) plus g0's: 3;
        // g2 2 plus g1's: 5. main: the literal and the call's result plus g2's: 7;
        // then g2, g1 and g0 once each.
        assert_eq!(inlined(&chain(3, 1)), 7 + 5 + 3 + 1);
        assert!(inlined(&chain(300, 1)) < MAX_INLINED_EXPRESSIONS);
        assert!(inlined(&chain(2000, 1)) > MAX_INLINED_EXPRESSIONS);
        // Doubling at every level saturates instead of overflowing.
        assert!(inlined(&chain(80, 2)) > MAX_INLINED_EXPRESSIONS);
    }
}
