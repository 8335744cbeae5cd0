//! WGSL for one expression and one layout class: a kernel of one entry
//! point, `main`, in which each invocation computes one element (or, where
//! every view allows, one vec4 unit of four) of every output. The text is
//! generated from the IR; every op is a call of a function of
//! shaders/expr.wgsl (which wraps the separate operators' scalar functions
//! of shaders/elementwise_scalar.wgsl), so the generator writes only names,
//! variables and index arithmetic. Scalar values and sizes are read from the
//! uniform, never written into the text: the text is the cache key.

use super::ir::{Expr, NodeId, Op, MAX_INPUTS, MAX_OUTPUTS, MAX_SCALARS};
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::tensor::{DType, MAX_RANK};
use crate::shaders::source;
use std::fmt::Write;

/// The helper files every generated kernel includes, in order.
pub(super) const HELPERS: [&str; 2] = ["elementwise_scalar.wgsl", "expr.wgsl"];
/// The f16 helpers, included where the kernel enables f16.
pub(super) const HELPERS_F16: &str = "expr_f16.wgsl";

/// Workgroup size of generated kernels.
pub(crate) const WG: u32 = 256;
/// Operand slots of the uniform: inputs at their index, outputs after
/// `MAX_INPUTS`.
pub(crate) const OPERANDS: usize = MAX_INPUTS + MAX_OUTPUTS;
const _: () = assert!((OPERANDS * MAX_RANK).is_multiple_of(4) && MAX_SCALARS.is_multiple_of(4));

/// How the launch's views are indexed: part of the cache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Dims of the (coalesced) iteration space, 1 to `MAX_RANK`.
    pub rank: usize,
    /// Each invocation handles four elements along the innermost dim:
    /// every output and every input that is not `splat` is dense along it
    /// with 4-aligned offsets and outer strides.
    pub vec4: bool,
    /// Per input (vec4 only): constant along the innermost dim, read as one
    /// element and used for all four.
    pub splat: [bool; MAX_INPUTS],
}

/// A generated kernel and how the host fills its uniform.
#[derive(Clone, Debug)]
pub struct Generated {
    pub source: String,
    /// The scalar and parameter nodes, in uniform slot order.
    pub slots: Vec<NodeId>,
    /// The inputs the kernel reads (bound as `in<k>`), in input order.
    pub inputs: Vec<u32>,
}

/// The storage element of a dtype: bf16 is held two to a u32 word.
pub(super) fn storage(d: DType) -> &'static str {
    match d {
        DType::BF16 => "u32",
        d => d.wgsl(),
    }
}

/// The type a value of dtype `d` is held in: floats in f32.
pub(super) fn held(d: DType) -> &'static str {
    match d {
        DType::I32 => "i32",
        DType::U32 => "u32",
        _ => "f32",
    }
}

/// `x` (a held float) rounded to `d`.
fn round(d: DType, x: String) -> String {
    match d {
        DType::F16 => format!("rf16({x})"),
        DType::BF16 => format!("rbf16({x})"),
        _ => x,
    }
}

/// The helper suffix of an operand dtype.
fn suffix(d: DType) -> &'static str {
    match d {
        DType::I32 => "_i",
        DType::U32 => "_u",
        _ => "_f",
    }
}

fn binary_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Pow => "pow",
        BinaryOp::Maximum => "maximum",
        BinaryOp::Minimum => "minimum",
        BinaryOp::Eq => "eq",
        BinaryOp::Ne => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::Le => "le",
        BinaryOp::Gt => "gt",
        BinaryOp::Ge => "ge",
    }
}

fn unary_name(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Abs => "abs",
        UnaryOp::Exp => "exp",
        UnaryOp::Log => "log",
        UnaryOp::Sqrt => "sqrt",
        UnaryOp::Rsqrt => "rsqrt",
        UnaryOp::Sin => "sin",
        UnaryOp::Cos => "cos",
        UnaryOp::Tanh => "tanh",
        UnaryOp::Sigmoid => "sigmoid",
        UnaryOp::Relu => "relu",
        UnaryOp::GeluErf => "gelu_erf",
        UnaryOp::GeluTanh => "gelu_tanh",
        UnaryOp::Silu => "silu",
        UnaryOp::Relu6 => "relu6",
        UnaryOp::Hardswish => "hardswish",
    }
}

/// The expression computing a cast of `x` from `from` to `to`.
fn cast(from: DType, to: DType, x: String) -> String {
    match (from.is_float(), to) {
        (true, DType::I32) => format!("f_to_i({x})"),
        (true, DType::U32) => format!("f_to_u({x})"),
        (true, _) => round(to, x),
        (false, DType::I32) if from == DType::U32 => format!("u_to_i({x})"),
        (false, DType::U32) if from == DType::I32 => format!("i_to_u({x})"),
        (false, DType::I32 | DType::U32) => x,
        (false, _) => round(to, format!("{}_to_f({x})", if from == DType::I32 { "i" } else { "u" })),
    }
}

/// The right-hand side of node `op` of dtype `d` with operands named by `v`.
pub(super) fn node_expr(e: &Expr, op: &Op, d: DType, v: &dyn Fn(NodeId) -> String) -> String {
    let dt = |id: NodeId| e.nodes[id as usize].dtype;
    match *op {
        Op::Unary(u, a) => {
            let f16_form = d == DType::F16 && matches!(u, UnaryOp::Sigmoid | UnaryOp::Silu);
            let s = if f16_form { "_h" } else { suffix(d) };
            let call = format!("{}{s}({})", unary_name(u), v(a));
            if d.is_float() {
                round(d, call)
            } else {
                call
            }
        }
        Op::Binary(b, x, y) => {
            let call = format!("{}{}({}, {})", binary_name(b), suffix(dt(x)), v(x), v(y));
            if d.is_float() {
                round(d, call)
            } else {
                call
            }
        }
        Op::Where(m, a, b) => format!("where{}({}, {}, {})", suffix(d), v(m), v(a), v(b)),
        Op::Fma(a, b, c) => {
            let call = format!("fma{}({}, {}, {})", suffix(d), v(a), v(b), v(c));
            if d.is_float() {
                round(d, call)
            } else {
                call
            }
        }
        Op::Cast(a) => cast(dt(a), d, v(a)),
        Op::Input(_) | Op::Scalar(_) | Op::Param(_) => unreachable!("leaves are loaded, not computed"),
    }
}

/// A scalar slot read as a held value of dtype `d`.
pub(super) fn slot_value(d: DType, k: usize) -> String {
    match held(d) {
        "u32" => format!("slot({k}u)"),
        t => format!("bitcast<{t}>(slot({k}u))"),
    }
}

fn uniform_decl(out: &mut String) {
    let _ = writeln!(
        out,
        "struct Params {{\n    n: u32,\n    row: u32,\n    nan: u32,\n    inf: u32,\n    shape: array<vec4<u32>, {}>,\n    off: array<vec4<u32>, {}>,\n    st: array<vec4<i32>, {}>,\n    s: array<vec4<u32>, {}>,\n}}\n@group(0) @binding(0) var<uniform> p: Params;",
        MAX_RANK / 4,
        OPERANDS / 4,
        OPERANDS * MAX_RANK / 4,
        MAX_SCALARS / 4
    );
}

/// Operand `k`'s element offset for the coalesced index `c0..c<rank-1>`.
pub(super) fn offset_expr(k: usize, rank: usize) -> String {
    let mut s = format!("i32(p.off[{}][{}])", k / 4, k % 4);
    for d in 0..rank {
        let at = k * MAX_RANK + d;
        let _ = write!(s, " + i32(c{d}) * p.st[{}][{}]", at / 4, at % 4);
    }
    s
}

/// The kernel of `e` for `layout`. Only nodes some output depends on are
/// computed, and only the inputs among them are bound.
pub fn generate(e: &Expr, layout: &Layout) -> Generated {
    let live = e.live();
    let lanes: &[&str] = if layout.vec4 { &["x", "y", "z", "w"] } else { &[""] };
    let uses_f16 = e.nodes.iter().zip(&live).any(|(n, &l)| l && n.dtype == DType::F16);

    // Canonical names: live nodes numbered in order, so that the same live
    // structure gives the same text whatever else the expression holds.
    let mut name = vec![u32::MAX; e.nodes.len()];
    let mut next = 0;
    for (id, &l) in live.iter().enumerate() {
        if l {
            name[id] = next;
            next += 1;
        }
    }
    let inputs: Vec<u32> = e
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

    let mut out = String::new();
    if uses_f16 {
        out.push_str("enable f16;\n");
    }
    uniform_decl(&mut out);
    for &k in &inputs {
        let d = e.inputs[k as usize];
        let elem = match (layout.vec4 && !layout.splat[k as usize], d) {
            (true, DType::BF16) => "vec2<u32>".to_string(),
            (true, d) => format!("vec4<{}>", storage(d)),
            (false, d) => storage(d).to_string(),
        };
        let _ = writeln!(out, "@group(0) @binding({}) var<storage, read> in{k}: array<{elem}>;", 1 + k);
    }
    for (j, &o) in e.outputs.iter().enumerate() {
        let d = e.nodes[o as usize].dtype;
        let elem = match (layout.vec4, d) {
            (true, DType::BF16) => "vec2<u32>".to_string(),
            (true, d) => format!("vec4<{}>", storage(d)),
            (false, DType::BF16) => "atomic<u32>".to_string(),
            (false, d) => storage(d).to_string(),
        };
        let _ =
            writeln!(out, "@group(0) @binding({}) var<storage, read_write> out{j}: array<{elem}>;", 1 + MAX_INPUTS + j);
    }
    for file in HELPERS {
        out.push_str(source(file));
    }
    if uses_f16 {
        out.push_str(source(HELPERS_F16));
    }

    // The entry: decode the index, load, compute, store.
    let _ = writeln!(out, "@compute @workgroup_size({WG})\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{");
    out.push_str("    let i = gid.y * p.row + gid.x;\n    if (i >= p.n) {\n        return;\n    }\n");
    let rank = layout.rank;
    if rank == 1 {
        out.push_str("    let c0 = i;\n");
    } else {
        out.push_str("    var r = i;\n");
        for d in (1..rank).rev() {
            let _ = writeln!(
                out,
                "    let c{d} = r % p.shape[{}][{}];\n    r = r / p.shape[{}][{}];",
                d / 4,
                d % 4,
                d / 4,
                d % 4
            );
        }
        out.push_str("    let c0 = r;\n");
    }
    for &k in &inputs {
        let _ = writeln!(out, "    let o{k} = u32({});", offset_expr(k as usize, rank));
    }
    for j in 0..e.outputs.len() {
        let _ = writeln!(out, "    let q{j} = u32({});", offset_expr(MAX_INPUTS + j, rank));
    }
    // Loads, one per bound input, into per-lane values.
    for &k in &inputs {
        let d = e.inputs[k as usize];
        let vec = layout.vec4 && !layout.splat[k as usize];
        if vec {
            match d {
                DType::BF16 => {
                    let _ = writeln!(out, "    let w{k} = in{k}[o{k} >> 2u];");
                    let _ = writeln!(
                        out,
                        "    let l{k} = vec4<f32>(bf16_lo(w{k}.x), bf16_hi(w{k}.x), bf16_lo(w{k}.y), bf16_hi(w{k}.y));"
                    );
                }
                d => {
                    let _ = writeln!(out, "    let l{k} = vec4<{}>(in{k}[o{k} >> 2u]);", held(d));
                }
            }
        } else {
            let one = match d {
                DType::BF16 => format!("bf16_at(in{k}[o{k} >> 1u], o{k})"),
                DType::F16 => format!("f32(in{k}[o{k}])"),
                _ => format!("in{k}[o{k}]"),
            };
            if layout.vec4 {
                let _ = writeln!(out, "    let l{k} = vec4<{}>({one});", held(d));
            } else {
                let _ = writeln!(out, "    let l{k} = {one};");
            }
        }
    }
    // The nodes, lane by lane.
    let mut slots = Vec::new();
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
                Op::Input(k) if layout.vec4 => format!("l{k}[{li}]"),
                Op::Input(k) => format!("l{k}"),
                Op::Scalar(_) | Op::Param(_) => slot_value(n.dtype, slot.unwrap()),
                ref op => node_expr(e, op, n.dtype, &var),
            };
            let _ = writeln!(out, "    let {} = {rhs};", var(id as NodeId));
        }
    }
    // Stores.
    for (j, &o) in e.outputs.iter().enumerate() {
        let d = e.nodes[o as usize].dtype;
        let v = |lane: &str| format!("v{}{lane}", name[o as usize]);
        if layout.vec4 {
            let value = match d {
                DType::BF16 => format!(
                    "vec2<u32>(bf16_bits_x({}) | (bf16_bits_x({}) << 16u), bf16_bits_x({}) | (bf16_bits_x({}) << 16u))",
                    v("x"),
                    v("y"),
                    v("z"),
                    v("w")
                ),
                d => format!("vec4<{}>(vec4<{}>({}, {}, {}, {}))", storage(d), held(d), v("x"), v("y"), v("z"), v("w")),
            };
            let _ = writeln!(out, "    out{j}[q{j} >> 2u] = {value};");
        } else {
            match d {
                DType::BF16 => {
                    let _ = writeln!(
                        out,
                        "    let h{j} = (q{j} & 1u) * 16u;\n    atomicAnd(&out{j}[q{j} >> 1u], ~(0xffffu << h{j}));\n    atomicOr(&out{j}[q{j} >> 1u], bf16_bits_x({}) << h{j});",
                        v("")
                    );
                }
                DType::F16 => {
                    let _ = writeln!(out, "    out{j}[q{j}] = f16({});", v(""));
                }
                _ => {
                    let _ = writeln!(out, "    out{j}[q{j}] = {};", v(""));
                }
            }
        }
    }
    out.push_str("}\n");
    Generated { source: out, slots, inputs }
}

#[cfg(test)]
#[path = "codegen_tests.rs"]
mod tests;
