//! The generator's tests: what it writes for small expressions, that the
//! text depends on the structure and not on scalar values or dead nodes,
//! and that every kernel of a broad set of expressions and layouts passes
//! naga's validation and translates to SPIR-V offline.

use super::*;
use crate::ops::elementwise::{WGC_NUM_BINARY_OPS, WGC_NUM_UNARY_OPS};
use naga::valid::{Capabilities, ValidationFlags, Validator};

const DTYPES: [DType; 5] = [DType::F32, DType::F16, DType::BF16, DType::I32, DType::U32];

fn flat() -> Layout {
    Layout { rank: 1, vec4: false, splat: [false; MAX_INPUTS] }
}
fn vec4() -> Layout {
    Layout { rank: 1, vec4: true, splat: [false; MAX_INPUTS] }
}

/// Parse, validate and translate to SPIR-V, as the offline spec test does.
fn compile(source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let caps = Capabilities::SHADER_FLOAT16;
    let info = Validator::new(ValidationFlags::all(), caps).validate(&module).map_err(|e| e.emit_to_string(source))?;
    let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
    let pipeline =
        naga::back::spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: "main".into() };
    naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| format!("SPIR-V: {e}"))?;
    Ok(())
}

fn check(e: &Expr, layout: &Layout) {
    let g = generate(e, layout);
    if let Err(msg) = compile(&g.source) {
        panic!("{msg}\n--- expression {e:?}, layout {layout:?}\n{}", g.source);
    }
}

/// a * b + c, relu, sqrt, * 0.5, + sigmoid(c): the benchmark's chain.
fn chain(d: DType) -> Expr {
    let mut e = Expr::default();
    let (a, b, c) = (e.input(d).unwrap(), e.input(d).unwrap(), e.input(d).unwrap());
    let ab = e.binary(BinaryOp::Mul, a, b).unwrap();
    let s = e.binary(BinaryOp::Add, ab, c).unwrap();
    let r = e.unary(UnaryOp::Relu, s).unwrap();
    let q = e.unary(UnaryOp::Sqrt, r).unwrap();
    let half = e.scalar(d, 0.5).unwrap();
    let h = e.binary(BinaryOp::Mul, q, half).unwrap();
    let sg = e.unary(UnaryOp::Sigmoid, c).unwrap();
    let y = e.binary(BinaryOp::Add, h, sg).unwrap();
    e.output(y).unwrap();
    e
}

#[test]
fn f16_ops_round_after_each_op_and_read_slots() {
    let g = generate(&chain(DType::F16), &flat());
    assert!(g.source.starts_with("enable f16;\n"));
    assert!(g.source.contains("let v3 = rf16(mul_f(v0, v1));"), "{}", g.source);
    assert!(g.source.contains("let v7 = bitcast<f32>(slot(0u));"), "{}", g.source);
    assert!(g.source.contains("sigmoid_h(v2)"), "f16 sigmoid takes the f16 operator's form");
    assert!(g.source.contains("out0[q0] = f16(v10);"));
    assert_eq!(g.slots, vec![7]);
    assert_eq!(g.inputs, vec![0, 1, 2]);
    let g32 = generate(&chain(DType::F32), &flat());
    assert!(!g32.source.contains("enable f16") && !g32.source.contains("rf16("));
    assert!(g32.source.contains("sigmoid_f(v2)"));
}

#[test]
fn text_depends_on_structure_not_values_or_dead_nodes() {
    let mut a = Expr::default();
    let x = a.input(DType::F32).unwrap();
    let k = a.scalar(DType::F32, 2.0).unwrap();
    let y = a.binary(BinaryOp::Mul, x, k).unwrap();
    a.output(y).unwrap();

    let mut b = Expr::default();
    let x = b.input(DType::F32).unwrap();
    let _dead = b.unary(UnaryOp::Exp, x).unwrap();
    let k = b.scalar(DType::F32, -7.5).unwrap();
    let y = b.binary(BinaryOp::Mul, x, k).unwrap();
    b.output(y).unwrap();
    assert_eq!(generate(&a, &flat()).source, generate(&b, &flat()).source);

    let mut c = a.clone();
    c.nodes[1].op = Op::Param(0);
    c.params.push(DType::F32);
    assert_eq!(generate(&a, &flat()).source, generate(&c, &flat()).source, "constants and parameters share slots");
    assert_ne!(generate(&a, &flat()).source, generate(&a, &vec4()).source);
}

#[test]
fn unused_inputs_are_not_bound() {
    let mut e = Expr::default();
    let _a = e.input(DType::F32).unwrap();
    let b = e.input(DType::F32).unwrap();
    e.output(b).unwrap();
    let g = generate(&e, &flat());
    assert_eq!(g.inputs, vec![1]);
    assert!(!g.source.contains("in0"));
    check(&e, &flat());
}

#[test]
fn every_unary_op_validates() {
    for d in DTYPES {
        for op in 0..WGC_NUM_UNARY_OPS {
            let op = UnaryOp::from_u32(op).unwrap();
            let mut e = Expr::default();
            let a = e.input(d).unwrap();
            let Ok(y) = e.unary(op, a) else { continue };
            e.output(y).unwrap();
            check(&e, &flat());
            check(&e, &vec4());
        }
    }
}

#[test]
fn every_binary_op_fma_and_where_validate() {
    for d in DTYPES {
        for op in 0..WGC_NUM_BINARY_OPS {
            let op = BinaryOp::from_u32(op).unwrap();
            let mut e = Expr::default();
            let a = e.input(d).unwrap();
            let b = e.param(d).unwrap();
            let Ok(y) = e.binary(op, a, b) else { continue };
            e.output(y).unwrap();
            check(&e, &flat());
            check(&e, &vec4());
        }
        let mut e = Expr::default();
        let (a, b, c) = (e.input(d).unwrap(), e.input(d).unwrap(), e.input(d).unwrap());
        let f = e.fma(a, b, c).unwrap();
        let m = e.binary(BinaryOp::Gt, a, b).unwrap();
        let w = e.where_(m, f, c).unwrap();
        e.output(w).unwrap();
        e.output(m).unwrap();
        check(&e, &flat());
        let mut splat = vec4();
        splat.splat[1] = true;
        check(&e, &splat);
    }
}

#[test]
fn every_cast_validates() {
    for from in DTYPES {
        for to in DTYPES {
            let mut e = Expr::default();
            let a = e.input(from).unwrap();
            let y = e.cast(a, to).unwrap();
            e.output(y).unwrap();
            check(&e, &flat());
            check(&e, &vec4());
        }
    }
}

#[test]
fn every_rank_and_several_outputs_validate() {
    for rank in 1..=MAX_RANK {
        for vec in [false, true] {
            let mut layout = Layout { rank, vec4: vec, splat: [false; MAX_INPUTS] };
            layout.splat[0] = vec;
            let mut e = chain(DType::BF16);
            let x = e.nodes.len() as NodeId - 1;
            let c = e.cast(x, DType::F16).unwrap();
            e.output(c).unwrap();
            e.output(0).unwrap();
            check(&e, &layout);
        }
    }
}

#[test]
fn largest_expression_validates() {
    let mut e = Expr::default();
    let mut ins = Vec::new();
    for k in 0..MAX_INPUTS {
        ins.push(e.input(if k % 2 == 0 { DType::F32 } else { DType::F16 }).unwrap());
    }
    let mut acc = e.cast(ins[1], DType::F32).unwrap();
    for k in 0..MAX_SCALARS {
        let s = if k % 2 == 0 { e.scalar(DType::F32, k as f64).unwrap() } else { e.param(DType::F32).unwrap() };
        acc = e.fma(acc, s, ins[(2 * k) % MAX_INPUTS]).unwrap();
    }
    while e.nodes.len() < crate::ops::expr::ir::MAX_NODES - 2 {
        acc = e.unary(UnaryOp::Tanh, acc).unwrap();
    }
    for _ in 0..MAX_OUTPUTS {
        e.output(acc).unwrap();
    }
    check(&e, &Layout { rank: MAX_RANK, vec4: true, splat: [false; MAX_INPUTS] });
}
