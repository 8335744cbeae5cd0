//! The reduce generator's tests: what it writes for small expressions, that
//! the text depends on the structure and not on scalar values, and that
//! every entry point of the modules of a broad set of prologues, epilogues,
//! layouts and type slots passes naga's validation and translates to
//! SPIR-V offline with every OP (and LANES) value the planner may set.

use super::*;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::tensor::MAX_RANK;
use naga::valid::{Capabilities, ValidationFlags, Validator};

const ENTRIES: [&str; 5] = ["reduce_rows", "reduce_strided", "reduce_columns", "reduce_vec4", "reduce_finish"];

fn layout(rank: usize, vec4: bool) -> ReduceLayout {
    ReduceLayout { rank, vec4, dense: [false; MAX_INPUTS], splat: [false; MAX_INPUTS] }
}

/// The type slots the launch uses for values of `d` into `out`.
fn kind(d: DType, out: DType, subgroups: bool) -> ReduceKind {
    let acc = match d {
        DType::I32 => DType::I32,
        DType::U32 => DType::U32,
        _ => DType::F32,
    };
    ReduceKind { types: [d, acc, out], subgroups }
}

/// Validate once, then translate every entry with the op codes `codes`.
fn compile(source: &str, codes: &[u32], subgroups: bool) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let mut caps = Capabilities::SHADER_FLOAT16;
    if subgroups {
        caps |= Capabilities::SUBGROUP;
    }
    let info = Validator::new(ValidationFlags::all(), caps).validate(&module).map_err(|e| e.emit_to_string(source))?;
    for entry in ENTRIES {
        for &op in codes {
            // reduce_rows runs every op but OP_SHIFT (9).
            if entry == "reduce_rows" && op == 9 {
                continue;
            }
            let mut pc = naga::back::PipelineConstants::default();
            pc.insert("OP".into(), op as f64);
            pc.insert("LANES".into(), if entry == "reduce_rows" { 32.0 } else { 4.0 });
            let (m, i) = naga::back::pipeline_constants::process_overrides(
                &module,
                &info,
                Some((naga::ShaderStage::Compute, entry)),
                &pc,
            )
            .map_err(|e| format!("{entry} OP {op}: {e}"))?;
            let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
            let pipeline = naga::back::spv::PipelineOptions {
                shader_stage: naga::ShaderStage::Compute,
                entry_point: entry.into(),
            };
            naga::back::spv::write_vec(&m, &i, &options, Some(&pipeline))
                .map_err(|e| format!("{entry} OP {op}: SPIR-V: {e}"))?;
        }
    }
    Ok(())
}

fn check(pro: &Expr, epi: Option<&Expr>, layout: &ReduceLayout, kind: &ReduceKind, codes: &[u32]) {
    let g = generate_reduce(pro, epi, layout, kind);
    if let Err(msg) = compile(&g.source, codes, kind.subgroups) {
        panic!("{msg}\n--- prologue {pro:?}\nepilogue {epi:?}\nlayout {layout:?}, kind {kind:?}");
    }
}

/// x * y
fn product(d: DType) -> Expr {
    let mut e = Expr::default();
    let (x, y) = (e.input(d).unwrap(), e.input(d).unwrap());
    let p = e.binary(BinaryOp::Mul, x, y).unwrap();
    e.output(p).unwrap();
    e
}

/// (x - m)^2 with m a second input
fn squared_deviation(d: DType) -> Expr {
    let mut e = Expr::default();
    let (x, m) = (e.input(d).unwrap(), e.input(d).unwrap());
    let dev = e.binary(BinaryOp::Sub, x, m).unwrap();
    let sq = e.binary(BinaryOp::Mul, dev, dev).unwrap();
    e.output(sq).unwrap();
    e
}

/// sqrt(v + eps), eps a parameter
fn sqrt_eps(d: DType) -> Expr {
    let mut e = Expr::default();
    let v = e.input(d).unwrap();
    let eps = e.param(d).unwrap();
    let s = e.binary(BinaryOp::Add, v, eps).unwrap();
    let r = e.unary(UnaryOp::Sqrt, s).unwrap();
    e.output(r).unwrap();
    e
}

#[test]
fn input_stage_reads_dense_inputs_without_decoding() {
    let mut l = layout(2, false);
    l.dense[0] = true;
    l.dense[1] = true;
    let g = generate_reduce(&product(DType::F32), None, &l, &kind(DType::F32, DType::F32, false));
    assert!(g.source.contains("let o0 = p.off[0][0] + i;"), "{}", g.source);
    assert!(!g.source.contains("r % p.shape"), "dense inputs need no index decoding");
    assert!(g.source.contains("return v;"), "no epilogue: the identity");
    assert_eq!(g.inputs, vec![0, 1]);
    let mut l = layout(2, true);
    l.splat[1] = true;
    let g = generate_reduce(&squared_deviation(DType::F16), None, &l, &kind(DType::F16, DType::F16, false));
    assert!(g.source.starts_with("enable f16;\n"));
    assert!(g.source.contains("var<storage, read> in0: array<vec4<f16>>;"), "{}", g.source);
    assert!(g.source.contains("var<storage, read> in1: array<f16>;"), "the splat input is read as scalars");
    assert!(g.source.contains("let c1 = r % p.shape[0][1];"));
}

#[test]
fn text_depends_on_structure_not_values() {
    let mut a = Expr::default();
    let x = a.input(DType::F32).unwrap();
    let k = a.scalar(DType::F32, 2.0).unwrap();
    let y = a.binary(BinaryOp::Mul, x, k).unwrap();
    a.output(y).unwrap();
    let mut b = a.clone();
    b.nodes[1].op = Op::Scalar(-3.5);
    let (l, kd) = (layout(1, false), kind(DType::F32, DType::F32, false));
    let epi = sqrt_eps(DType::F32);
    let ga = generate_reduce(&a, Some(&epi), &l, &kd);
    assert_eq!(ga.source, generate_reduce(&b, Some(&epi), &l, &kd).source);
    assert_eq!(ga.slots, vec![1, 1], "the prologue's constant, then the epilogue's parameter");
    assert_eq!(ga.epilogue_from, 1);
    assert!(ga.source.contains("bitcast<f32>(slot(1u))"), "the epilogue's slot follows the prologue's");
    assert_ne!(ga.source, generate_reduce(&a, None, &l, &kd).source);
}

#[test]
fn every_reduction_and_dtype_validates() {
    // Floats: every op code (arg ops write i32); integers: those they take.
    for d in [DType::F32, DType::F16] {
        check(&product(d), None, &layout(1, false), &kind(d, d, false), &[0, 1, 2, 3, 4, 7, 8, 9]);
        check(&product(d), None, &layout(1, false), &kind(d, DType::I32, false), &[5, 6]);
        check(&squared_deviation(d), Some(&sqrt_eps(d)), &layout(3, true), &kind(d, d, true), &[0, 1, 2]);
    }
    for d in [DType::I32, DType::U32] {
        check(&product(d), None, &layout(2, true), &kind(d, d, false), &[0, 2, 3, 4]);
        check(&product(d), None, &layout(2, false), &kind(d, DType::I32, true), &[5, 6]);
    }
}

#[test]
fn mixed_dtypes_casts_and_bf16_inputs_validate() {
    // sum(f32(x_bf16) * f32(y_f16)) with a splat input, then an f32 epilogue.
    let mut e = Expr::default();
    let x = e.input(DType::BF16).unwrap();
    let y = e.input(DType::F16).unwrap();
    let xf = e.cast(x, DType::F32).unwrap();
    let yf = e.cast(y, DType::F32).unwrap();
    let a = e.unary(UnaryOp::Abs, xf).unwrap();
    let p = e.binary(BinaryOp::Mul, a, yf).unwrap();
    e.output(p).unwrap();
    for vec4 in [false, true] {
        for rank in [1, 4, MAX_RANK] {
            let mut l = layout(rank, vec4);
            l.splat[1] = vec4;
            l.dense[0] = !vec4;
            check(&e, Some(&sqrt_eps(DType::F32)), &l, &kind(DType::F32, DType::F32, vec4), &[0, 2]);
        }
    }
    // Integers from a comparison: count of x > y as u32.
    let mut c = Expr::default();
    let (x, y) = (c.input(DType::F32).unwrap(), c.input(DType::F32).unwrap());
    let gt = c.binary(BinaryOp::Gt, x, y).unwrap();
    c.output(gt).unwrap();
    check(&c, None, &layout(2, true), &kind(DType::U32, DType::U32, false), &[0]);
}

#[test]
fn uniform_matches_the_wgsl_struct() {
    use crate::ops::spec::uniform::Uniform;
    let source = source("reduce_expr_params.wgsl");
    let module = naga::front::wgsl::parse_str(source).unwrap();
    let (_, ty) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some("Params")).unwrap();
    let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("Params is not a struct") };
    assert_eq!(*span as usize, std::mem::size_of::<super::super::reduce_launch::FusedParams>());
    let base = crate::ops::reduce::ReduceParams::layout();
    for (name, offset, _) in &base.fields {
        let m = members.iter().find(|m| m.name.as_deref() == Some(name)).unwrap();
        assert_eq!(m.offset as usize, *offset, "{name}");
    }
    for (name, offset) in super::super::reduce_launch::FusedParams::offsets() {
        let m = members.iter().find(|m| m.name.as_deref() == Some(name)).unwrap();
        assert_eq!(m.offset as usize, offset, "{name}");
    }
}

#[test]
fn structure_keys_tell_texts_apart_and_slots_follow_the_text() {
    let mut scaled = product(DType::F32);
    let k = scaled.scalar(DType::F32, 3.0).unwrap();
    let y = scaled.binary(BinaryOp::Mul, scaled.outputs[0], k).unwrap();
    scaled.outputs = vec![y];
    let mut other_value = scaled.clone();
    other_value.nodes[k as usize].op = Op::Param(0);
    other_value.params.push(DType::F32);
    let l1 = layout(1, false);
    let mut l2 = layout(2, true);
    l2.splat[1] = true;
    let kd = kind(DType::F32, DType::F32, false);
    let epi = sqrt_eps(DType::F32);
    let cases: Vec<(Expr, Option<&Expr>, ReduceLayout, ReduceKind)> = vec![
        (product(DType::F32), None, l1, kd),
        (product(DType::F32), Some(&epi), l1, kd),
        (product(DType::F32), None, l2, kd),
        (product(DType::F32), None, l1, kind(DType::F32, DType::F32, true)),
        (squared_deviation(DType::F32), None, l1, kd),
        (scaled.clone(), Some(&epi), l1, kd),
        (other_value, Some(&epi), l1, kd),
    ];
    for (i, a) in cases.iter().enumerate() {
        let ga = generate_reduce(&a.0, a.1, &a.2, &a.3);
        let mut slots = scalar_slots(&a.0);
        slots.extend(a.1.map(scalar_slots).unwrap_or_default());
        assert_eq!(slots, ga.slots, "case {i}");
        for (j, b) in cases.iter().enumerate() {
            let gb = generate_reduce(&b.0, b.1, &b.2, &b.3);
            let same_key = structure_key(&a.0, a.1, &a.2, &a.3) == structure_key(&b.0, b.1, &b.2, &b.3);
            assert_eq!(same_key, ga.source == gb.source, "cases {i} and {j}");
        }
    }
}
