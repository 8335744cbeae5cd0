//! `wgc_op_gemm_epilogue`: a GEMM whose epilogue (epilogue.rs: per-column
//! scale and bias, a residual before or after an activation, the cast to
//! C's dtype) is part of the product, and its explain.

use crate::bail;
use crate::error::Result;
use crate::ops::gemm::epilogue::EpilogueViews;
use crate::ops::gemm::problem::Problem;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::{gemm_operands, launch, plan};
use crate::ops::spec::{check_output, Sharing};
use crate::ops::tensor::{same_device, DType, Tensor};
use crate::runtime::stream::StreamShared;

/// One GEMM with an epilogue: `c = epilogue(alpha * op(a) op(b))`.
pub struct GemmEpilogue<'x, 'a> {
    pub alpha: f32,
    pub a: &'x Tensor<'a>,
    pub transpose_a: bool,
    pub b: &'x Tensor<'a>,
    pub transpose_b: bool,
    pub epilogue: EpilogueViews<'x, 'a>,
    pub c: &'x Tensor<'a>,
}

/// The problem of `g` on op(A) and op(B) (`a`, `b`), validated as
/// `wgc_op_gemm` validates (`check_dtypes`, shapes, sharing) and the
/// epilogue's tensors: C's dtype, bias and scale (N), the residual C's
/// shape, none overlapping C. None where C is empty.
fn problem(stream: &StreamShared, g: &GemmEpilogue, a: &Tensor, b: &Tensor) -> Result<Option<Problem>> {
    let e = &g.epilogue;
    let inputs = e.inputs();
    let tensors: Vec<&Tensor> = inputs.iter().map(|(_, t)| *t).collect();
    same_device(&stream.device, &tensors)?;
    if g.c.dtype == DType::BF16 {
        bail!(Unsupported, "gemm_epilogue: a bf16 c is not supported (f32 c for bf16 operands)");
    }
    for (name, t) in &inputs {
        if t.dtype != g.c.dtype {
            bail!(DtypeMismatch, "gemm_epilogue: {name} is {} but c is {}", t.dtype.wgsl(), g.c.dtype.wgsl());
        }
    }
    let q = Problem::of(stream, (g.alpha, 0.0), a, b, g.c, None)?;
    let epilogue = e.decode(g.c)?;
    check_output("gemm_epilogue", g.c, &inputs, Sharing::Separate)?;
    Ok(q.map(|q| Problem { epilogue, ..q }))
}

/// Record `g` (nothing where C is empty).
pub fn gemm_epilogue(stream: &StreamShared, g: &GemmEpilogue) -> Result<()> {
    gemm_epilogue_with(stream, g, &GemmSettings::of(&stream.device))
}

/// `gemm_epilogue` planned under `settings` (launch::run_with).
pub fn gemm_epilogue_with(stream: &StreamShared, g: &GemmEpilogue, settings: &GemmSettings) -> Result<()> {
    let (a, b) = gemm_operands(stream, (g.a, g.transpose_a), (g.b, g.transpose_b), g.c)?;
    let Some(q) = problem(stream, g, &a, &b)? else {
        return Ok(());
    };
    let ops = launch::Operands { a: &a, b: &b, c: g.c, bias: None, epi: Some(&g.epilogue) };
    launch::run_with(stream, &q, ops, settings)
}

/// One line: the route `gemm_epilogue` would take for `g` and where it
/// applies the epilogue (in its kernel, its split-K pass, or one extra
/// pass), without recording anything; its errors are `gemm_epilogue`'s.
pub fn explain_gemm_epilogue(stream: &StreamShared, g: &GemmEpilogue) -> Result<String> {
    let (a, b) = gemm_operands(stream, (g.a, g.transpose_a), (g.b, g.transpose_b), g.c)?;
    let Some(q) = problem(stream, g, &a, &b)? else {
        return Ok("route none because C is empty: nothing is recorded".into());
    };
    let dev = &stream.device;
    let plan = plan::plan(&q, &DeviceProfile::of(dev), &GemmSettings::of(dev))?;
    Ok(format!("{plan} (m={} n={} k={} batch={})", q.m, q.n, q.k, q.batch_count))
}
