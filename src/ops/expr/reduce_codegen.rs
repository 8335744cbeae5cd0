//! WGSL for a reduction with an elementwise prologue and epilogue: the
//! reduce family's kernels (shaders/reduce.wgsl with reduce_rows.wgsl, so
//! one module holds every entry point the reduce planner may launch) with a
//! generated input stage in place of reduce_input.wgsl. The prologue
//! expression computes the value of the virtual (dense, row-major) tensor
//! the reduction reads at element `i` of the inputs' broadcast shape
//! (`x_at`, and `xv_at` for four elements at once); the epilogue expression
//! maps each reduced value before it is stored (`epilogue`). Each op is a
//! call of a function of shaders/expr.wgsl, as in the elementwise kernels
//! (codegen.rs), so the text depends only on the structure, the layout
//! class and the type slots: scalar values and sizes come from the uniform
//! (shaders/reduce_expr_params.wgsl).

use super::codegen::{held, node_expr, offset_expr, slot_value, storage, HELPERS, HELPERS_F16};
use super::ir::{Expr, NodeId, Op, MAX_INPUTS};
use crate::ops::spec::prelude;
use crate::ops::tensor::DType;
use crate::shaders::source;
use std::fmt::Write;

const REDUCE: &str = include_str!("../../../shaders/reduce.wgsl");
const REDUCE_ROWS: &str = include_str!("../../../shaders/reduce_rows.wgsl");
/// The binding of input 0 (input k: `in<k>` at `INPUT_BINDING + k`).
pub(crate) const INPUT_BINDING: u32 = 5;

/// How the prologue's inputs are indexed: part of the cache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReduceLayout {
    /// Dims of the (merged) broadcast shape the inputs are indexed over, 1
    /// to `MAX_RANK`.
    pub rank: usize,
    /// `xv_at` loads four elements at once: the innermost dim is a multiple
    /// of 4 and every input read is dense along it with 4-aligned offset and
    /// outer strides, or `splat`.
    pub vec4: bool,
    /// Per input: laid out row-major over the broadcast shape from its
    /// offset, so its element offset is the index plus its offset (no
    /// index decoding).
    pub dense: [bool; MAX_INPUTS],
    /// Per input (vec4 only): constant along the innermost dim, read once
    /// for all four elements.
    pub splat: [bool; MAX_INPUTS],
}

/// The reduce kernels' type slots and workgroup-reduction strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReduceKind {
    /// T (the prologue's value), ACC (accumulator), OUT (the reduced value).
    pub types: [DType; 3],
    /// reduce_wg_subgroups.wgsl (else reduce_wg_shared.wgsl).
    pub subgroups: bool,
}

/// A generated module and how the host fills its uniform.
#[derive(Clone, Debug)]
pub struct ReduceGenerated {
    pub source: String,
    /// The scalar and parameter nodes of the prologue, then those of the
    /// epilogue (`epilogue_from` on), in uniform slot order.
    pub slots: Vec<NodeId>,
    pub epilogue_from: usize,
    /// The inputs the prologue reads (bound as `in<k>`), in input order.
    pub inputs: Vec<u32>,
}

/// Canonical names of the live nodes (numbered in order), so that the same
/// live structure gives the same text whatever else the expression holds.
fn names(live: &[bool]) -> Vec<u32> {
    let mut name = vec![u32::MAX; live.len()];
    let mut next = 0;
    for (id, &l) in live.iter().enumerate() {
        if l {
            name[id] = next;
            next += 1;
        }
    }
    name
}

/// The live nodes of `e` but its inputs, one `let` per node and lane, the
/// inputs' values given by `input(k, lane index)`; scalar slots are
/// numbered from `slots.len()` on, and pushed to `slots`.
fn emit_nodes(
    out: &mut String,
    e: &Expr,
    lanes: &[&str],
    slots: &mut Vec<NodeId>,
    input: &dyn Fn(u32, usize) -> String,
) {
    let live = e.live();
    let name = names(&live);
    for (id, n) in e.nodes.iter().enumerate() {
        if !live[id] {
            continue;
        }
        let slot = matches!(n.op, Op::Scalar(_) | Op::Param(_)).then(|| {
            slots.push(id as NodeId);
            slots.len() - 1
        });
        for (li, lane) in lanes.iter().enumerate() {
            let var = |x: NodeId| format!("v{}{lane}", name[x as usize]);
            let rhs = match n.op {
                Op::Input(k) => input(k, li),
                Op::Scalar(_) | Op::Param(_) => slot_value(n.dtype, slot.unwrap()),
                ref op => node_expr(e, op, n.dtype, &var),
            };
            let _ = writeln!(out, "    let {} = {rhs};", var(id as NodeId));
        }
    }
}

/// The variable holding output 0 of `e` in lane `lane`.
fn result_var(e: &Expr, lane: &str) -> String {
    let name = names(&e.live());
    format!("v{}{lane}", name[e.outputs[0] as usize])
}

/// Decode element index `i` into `c0..c<rank-1>` and compute the offsets
/// `o<k>` of the inputs read.
fn emit_offsets(out: &mut String, layout: &ReduceLayout, inputs: &[u32]) {
    let rank = layout.rank;
    if inputs.iter().any(|&k| !layout.dense[k as usize]) {
        if rank == 1 {
            out.push_str("    let c0 = i;\n");
        } else {
            out.push_str("    var r = i;\n");
            for d in (1..rank).rev() {
                let (a, b) = (d / 4, d % 4);
                let _ = writeln!(out, "    let c{d} = r % p.shape[{a}][{b}];\n    r = r / p.shape[{a}][{b}];");
            }
            out.push_str("    let c0 = r;\n");
        }
    }
    for &k in inputs {
        let k = k as usize;
        if layout.dense[k] {
            let _ = writeln!(out, "    let o{k} = p.off[{}][{}] + i;", k / 4, k % 4);
        } else {
            let _ = writeln!(out, "    let o{k} = u32({});", offset_expr(k, rank));
        }
    }
}

/// Input `k` of dtype `d` at element offset `o<k>`, as a held scalar.
fn scalar_load(k: u32, d: DType, vec_bound: bool) -> String {
    match (vec_bound, d) {
        (false, DType::BF16) => format!("bf16_at(in{k}[o{k} >> 1u], o{k})"),
        (false, DType::F16) => format!("f32(in{k}[o{k}])"),
        (false, _) => format!("in{k}[o{k}]"),
        (true, DType::BF16) => format!("bf16_at(in{k}[o{k} >> 2u][(o{k} >> 1u) & 1u], o{k})"),
        (true, DType::F16) => format!("f32(in{k}[o{k} >> 2u][o{k} & 3u])"),
        (true, _) => format!("in{k}[o{k} >> 2u][o{k} & 3u]"),
    }
}

/// The prologue's input stage: bindings, `x_at` and `xv_at`.
fn input_stage(out: &mut String, pro: &Expr, layout: &ReduceLayout, t: DType, inputs: &[u32], slots: &mut Vec<NodeId>) {
    // Inputs read as vec4 units in xv_at (and by component in x_at).
    let vec_bound = |k: u32| layout.vec4 && !layout.splat[k as usize];
    for &k in inputs {
        let d = pro.inputs[k as usize];
        let elem = match (vec_bound(k), d) {
            (true, DType::BF16) => "vec2<u32>".to_string(),
            (true, d) => format!("vec4<{}>", storage(d)),
            (false, d) => storage(d).to_string(),
        };
        let _ = writeln!(out, "@group(0) @binding({}) var<storage, read> in{k}: array<{elem}>;", INPUT_BINDING + k);
    }
    let tw = t.wgsl();
    let _ = writeln!(out, "fn x_at(i: u32) -> T {{");
    emit_offsets(out, layout, inputs);
    for &k in inputs {
        let _ = writeln!(out, "    let l{k} = {};", scalar_load(k, pro.inputs[k as usize], vec_bound(k)));
    }
    let first = slots.len();
    emit_nodes(out, pro, &[""], slots, &|k, _| format!("l{k}"));
    let _ = writeln!(out, "    return {tw}({});\n}}", result_var(pro, ""));

    let _ = writeln!(out, "fn xv_at(q: u32) -> vec4<T> {{\n    let i = 4u * q;");
    if !layout.vec4 {
        let _ = writeln!(out, "    return vec4<T>(x_at(i), x_at(i + 1u), x_at(i + 2u), x_at(i + 3u));\n}}");
        return;
    }
    emit_offsets(out, layout, inputs);
    for &k in inputs {
        let d = pro.inputs[k as usize];
        if vec_bound(k) {
            if d == DType::BF16 {
                let _ = writeln!(out, "    let w{k} = in{k}[o{k} >> 2u];");
                let _ = writeln!(
                    out,
                    "    let l{k} = vec4<f32>(bf16_lo(w{k}.x), bf16_hi(w{k}.x), bf16_lo(w{k}.y), bf16_hi(w{k}.y));"
                );
            } else {
                let _ = writeln!(out, "    let l{k} = vec4<{}>(in{k}[o{k} >> 2u]);", held(d));
            }
        } else {
            let _ = writeln!(out, "    let l{k} = vec4<{}>({});", held(d), scalar_load(k, d, false));
        }
    }
    // The same slots as x_at's: emitted again, numbered from the same start.
    let mut again = slots[..first].to_vec();
    emit_nodes(out, pro, &["x", "y", "z", "w"], &mut again, &|k, li| format!("l{k}[{li}]"));
    let r = |lane: &str| result_var(pro, lane);
    let _ = writeln!(out, "    return vec4<T>(vec4<{}>({}, {}, {}, {}));\n}}", held(t), r("x"), r("y"), r("z"), r("w"));
}

/// `epilogue`: the epilogue expression of the reduced value (its input 0),
/// or the identity.
fn epilogue(out: &mut String, epi: Option<&Expr>, o: DType, slots: &mut Vec<NodeId>) {
    let _ = writeln!(out, "fn epilogue(v: OUT) -> OUT {{");
    match epi {
        None => out.push_str("    return v;\n}\n"),
        Some(e) => {
            let _ = writeln!(out, "    let l0 = {}(v);", held(o));
            emit_nodes(out, e, &[""], slots, &|_, _| "l0".to_string());
            let _ = writeln!(out, "    return OUT({});\n}}", result_var(e, ""));
        }
    }
}

/// A key that determines `generate_reduce`'s text for these arguments:
/// the live nodes of both expressions (ops, dtypes, canonical operands,
/// input numbers; constants and parameters alike, as slots), their outputs,
/// the layout and the kind. Equal keys give equal texts, so kernels are
/// cached by it without generating the text.
pub fn structure_key(pro: &Expr, epi: Option<&Expr>, layout: &ReduceLayout, kind: &ReduceKind) -> Vec<u64> {
    let dt = |d: DType| d as u64;
    let mut key = vec![dt(kind.types[0]), dt(kind.types[1]), dt(kind.types[2]), kind.subgroups as u64];
    key.extend([layout.rank as u64, layout.vec4 as u64]);
    key.extend(layout.dense.iter().zip(&layout.splat).map(|(&d, &s)| d as u64 | (s as u64) << 1));
    for e in std::iter::once(pro).chain(epi) {
        let live = e.live();
        let name = names(&live);
        let n = |id: NodeId| name[id as usize] as u64;
        key.push(u64::MAX); // one expression's nodes follow
        for (node, _) in e.nodes.iter().zip(&live).filter(|(_, &l)| l) {
            key.push(dt(node.dtype));
            match node.op {
                Op::Input(k) => key.extend([1, k as u64]),
                Op::Scalar(_) | Op::Param(_) => key.push(2),
                Op::Unary(u, a) => key.extend([3, u as u64, n(a)]),
                Op::Binary(b, x, y) => key.extend([4, b as u64, n(x), n(y)]),
                Op::Where(m, a, b) => key.extend([5, n(m), n(a), n(b)]),
                Op::Fma(a, b, c) => key.extend([6, n(a), n(b), n(c)]),
                Op::Cast(a) => key.extend([7, n(a)]),
            }
        }
        key.push(n(e.outputs[0]));
    }
    key
}

/// The scalar and parameter nodes of `e` a kernel reads, in slot order
/// (as `generate_reduce` numbers them).
pub fn scalar_slots(e: &Expr) -> Vec<NodeId> {
    let live = e.live();
    (0..e.nodes.len() as NodeId)
        .filter(|&id| live[id as usize] && matches!(e.nodes[id as usize].op, Op::Scalar(_) | Op::Param(_)))
        .collect()
}

/// Whether a live node or input of `e` is f16.
fn uses_f16(e: &Expr) -> bool {
    e.nodes.iter().zip(e.live()).any(|(n, l)| l && n.dtype == DType::F16)
}

/// The module of the reduction of `pro`'s (one) output, mapped by `epi`
/// (one input: the reduced value, of dtype OUT; one output of that dtype),
/// for `layout` and `kind`.
pub fn generate_reduce(pro: &Expr, epi: Option<&Expr>, layout: &ReduceLayout, kind: &ReduceKind) -> ReduceGenerated {
    let [t, _, o] = kind.types;
    let live = pro.live();
    let inputs: Vec<u32> = pro
        .nodes
        .iter()
        .zip(&live)
        .filter_map(|(n, &l)| match n.op {
            Op::Input(k) if l => Some(k),
            _ => None,
        })
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .collect();
    let mut body = String::new();
    body.push_str(REDUCE);
    body.push_str(REDUCE_ROWS);
    body.push_str(source("reduce_expr_params.wgsl"));
    let mut slots = Vec::new();
    input_stage(&mut body, pro, layout, t, &inputs, &mut slots);
    let epilogue_from = slots.len();
    epilogue(&mut body, epi, o, &mut slots);
    for file in HELPERS {
        body.push_str(source(file));
    }
    let f16 = kind.types.contains(&DType::F16) || uses_f16(pro) || epi.is_some_and(uses_f16);
    if f16 {
        body.push_str(source(HELPERS_F16));
    }
    body.push_str(source(if kind.subgroups { "reduce_wg_subgroups.wgsl" } else { "reduce_wg_shared.wgsl" }));
    let mut text = prelude::render(&[("T", t), ("ACC", kind.types[1]), ("OUT", o)], &body);
    if f16 && !text.starts_with("enable f16;") {
        text.insert_str(0, "enable f16;\n");
    }
    ReduceGenerated { source: text, slots, epilogue_from, inputs }
}

#[cfg(test)]
#[path = "reduce_codegen_tests.rs"]
mod tests;
