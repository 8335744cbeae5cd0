//! Where a planned GEMM is recorded: the one place that launches a route
//! (`record`), and `run`, which plans a validated problem, lets the tuner
//! choose among candidate plans where it is on, and records the choice.

use crate::error::Result;
use crate::ops::elementwise::{bf16, bf16_route};
use crate::ops::gemm::epilogue::EpilogueViews;
use crate::ops::gemm::plan::{self, tuning_class};
use crate::ops::gemm::problem::Problem;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::route::{Plan, Route};
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::tuned::{self, Candidate, Choice};
use crate::ops::gemm::{coop, gemv, rows, staged, sum_slabs_epilogue, tiled, RowBias};
use crate::ops::spec::{view_arg, Arg};
use crate::ops::tensor::Tensor;
use crate::runtime::autotune::TuneMode;
use crate::runtime::stream::StreamShared;

/// The views a problem was made from.
#[derive(Clone, Copy)]
pub struct Operands<'x, 'a, 'b> {
    pub a: &'x Tensor<'a>,
    pub b: &'x Tensor<'a>,
    pub c: &'x Tensor<'a>,
    pub bias: Option<&'x RowBias<'a, 'b>>,
    /// The epilogue's tensors (where `Problem::epilogue` has one).
    pub epi: Option<&'x EpilogueViews<'x, 'a>>,
}

/// Plan `q` (made from `ops`) and record it; with the device's tuner on,
/// the plan is the fastest candidate measured for its shape class.
pub fn run(stream: &StreamShared, q: &Problem, ops: Operands) -> Result<()> {
    run_with(stream, q, ops, &GemmSettings::of(&stream.device))
}

/// `run` under `settings` instead of the device's (a caller that fixes a
/// route, as the 1x1 convolutions fix the KHR kernel for every K).
pub fn run_with(stream: &StreamShared, q: &Problem, ops: Operands, settings: &GemmSettings) -> Result<()> {
    let dev = &stream.device;
    let (profile, settings) = (DeviceProfile::of(dev), *settings);
    let heuristic = plan::plan(q, &profile, &settings)?;
    // A bf16 C: into contiguous f32 scratch (holding C's values where beta
    // reads them), rounded once into C.
    let c32 = match q.c_bf16 {
        true if q.beta != 0.0 => Some(bf16_route::widen(stream, ops.c, true)?),
        true => Some(bf16_route::uninit(stream, &ops.c.shape)?),
        false => None,
    };
    let c32_view = c32.as_ref().map(|c| c.view());
    let into = Operands { c: c32_view.as_ref().unwrap_or(ops.c), ..ops };
    if dev.tuner.mode == TuneMode::Off {
        record(stream, q, &heuristic, into)?;
    } else {
        let candidates = plan::candidates(q, &profile, &settings)?;
        let (name, class) = tuning_class(q);
        let choice = || Choice {
            name,
            class,
            candidates: candidates
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    // Candidates that plan the same work are one.
                    let same = candidates.iter().position(|d| d.plan == c.plan).unwrap_or(i);
                    Candidate { name: c.name, value: i, plan: same as u64 }
                })
                .collect(),
            fixed: settings.axpy.is_some(),
            rerunnable: q.beta == 0.0,
        };
        let chosen = tuned::pick(stream, 0, choice, |i| record(stream, q, &candidates[i].plan, into))?;
        record(stream, q, &candidates[chosen].plan, into)?;
    }
    match &c32_view {
        Some(c32) => bf16::convert(stream, c32, ops.c),
        None => Ok(()),
    }
}

/// Record `plan` for the views `q` describes: the aligned copies where it
/// stages, then its route (into f32 scratch, then the epilogue's pass,
/// where the plan says so). Writes only C (reading it where beta != 0).
pub fn record(stream: &StreamShared, q: &Problem, plan: &Plan, ops: Operands) -> Result<()> {
    if plan.epilogue_pass {
        return record_then_epilogue(stream, q, plan, ops);
    }
    let Some(staging) = plan.staging else {
        return record_route(stream, q, &plan.route, ops);
    };
    let copies = staged::stage(stream, &staging, ops.a, ops.b)?;
    let (a, b) = (copies.a(), copies.b());
    record_route(stream, &staged::problem(q, &staging), &plan.route, Operands { a: &a, b: &b, ..ops })
}

/// The product of `q` without its epilogue into f32 scratch (`plan` was
/// made for `q.into_scratch()`), then the split-K pass over that one slab
/// applies alpha, beta, the row bias and the epilogue into C.
fn record_then_epilogue(stream: &StreamShared, q: &Problem, plan: &Plan, ops: Operands) -> Result<()> {
    let bare = q.into_scratch();
    let scratch = bf16_route::uninit(stream, &ops.c.shape)?;
    let view = scratch.view();
    let plain = Plan { epilogue_pass: false, ..plan.clone() };
    record(stream, &bare, &plain, Operands { c: &view, bias: None, epi: None, ..ops })?;
    let (unread, _) = view_arg("a", ops.a);
    let bias = bias_of(&ops).map(|(arg, offset, stride)| (arg, offset, stride as i32));
    sum_slabs_epilogue(stream, scratch.buffer(), 1, (q.alpha, q.beta), ops.c, (unread, ops.epi), bias, &q.epilogue)
}

/// The binding, offset and stride of the row bias or the epilogue's column
/// bias (the kernels' `bias`, which `Problem::bias` or the epilogue's
/// flags say how to read).
fn bias_of<'a>(ops: &Operands<'_, 'a, '_>) -> Option<(Arg<'a>, u32, isize)> {
    let row = ops.bias.map(|bb| (bb.tensor, bb.stride));
    let col = ops.epi.and_then(|e| e.bias).map(|t| (t, t.strides[0]));
    row.or(col).map(|(t, stride)| {
        let (arg, offset) = view_arg("bias", t);
        (arg, offset, stride)
    })
}

/// Record one route on the views `q` describes.
fn record_route(stream: &StreamShared, q: &Problem, route: &Route, ops: Operands) -> Result<()> {
    let bias = bias_of(&ops);
    match route {
        Route::Rows(r) => rows::record(stream, q, r, (ops.a, ops.b, ops.c)),
        Route::Gemv(g) => gemv::record(stream, q, g, (ops.a, ops.b, ops.c)),
        Route::Tiled(t) => tiled::record(stream, q, t, (ops.a, ops.b, ops.c), bias, ops.epi),
        Route::Coop(r) if !r.via_slab => {
            let (c_arg, _) = view_arg("c", ops.c);
            coop::record(stream, q, r, (ops.a, ops.b), c_arg, bias, ops.epi)
        }
        Route::Coop(r) => {
            // All runs at once into f32 slabs, then the second pass applies
            // the epilogue.
            let splits = r.store.splits;
            let parts = stream.ordered_scratch((splits * q.outputs() * 4) as u64)?;
            coop::record(stream, q, r, (ops.a, ops.b), Arg::whole("c", &parts), None, None)?;
            let (unread, _) = view_arg("a", ops.a);
            let slab_bias = bias.map(|(arg, offset, stride)| (arg, offset, stride as i32));
            let unread = (unread, ops.epi);
            sum_slabs_epilogue(stream, &parts, splits, (q.alpha, q.beta), ops.c, unread, slab_bias, &q.epilogue)
        }
    }
}
