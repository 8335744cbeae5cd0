//! 2-D convolution (NCHW input, OIHW weight). A call is described once
//! (`problem`), planned by a pure function of that description and the
//! device (`plan`, `target`) into one of the routes (`route`), and recorded
//! by that route's file: 1x1 convolutions as a GEMM (`gemm1x1` over NCHW's
//! flat pixels, `gemm1x1_nhwc` over channels-last ones), depthwise
//! ones at the memory bandwidth (`depthwise`) or directly (`direct`), f32 3x3
//! stride-1 ones by Winograd F(2x2, 3x3) (`winograd`), other f32 ones as an implicit GEMM (`implicit`), f16
//! ones on tensor cores (`khr`, `coop`) or through im2col (`im2col`).
//! The children share only `problem`, `route` and `target`; none imports
//! this file.

pub mod bn_act;
pub mod coop;
pub mod depthwise;
pub mod direct;
pub mod fold_bn;
pub mod gemm1x1;
pub mod gemm1x1_nhwc;
pub mod im2col;
pub mod im2col_stem;
pub mod implicit;
pub mod khr;
pub mod pad_channels;
pub mod plan;
pub mod problem;
pub mod residual;
pub mod route;
pub mod stem_pad;
pub mod target;
pub mod winograd;

#[cfg(test)]
mod activation_tests;
#[cfg(test)]
mod pad_channels_test;
#[cfg(test)]
mod plan_tests;

pub use direct::{ConvDirectParams, DIRECT_FAMILY};
pub use implicit::{ConvParams, FAMILY};
pub use problem::{out_size, Conv2dParams, Geometry};

use crate::error::Result;
use crate::ops::tensor::Tensor;
use crate::runtime::stream::StreamShared;
use bn_act::Activation;
use plan::Plan;
use problem::View;
use problem::{Operands, Problem};
use route::Route;
use target::Target;

/// Validate and plan a convolution without recording it; with it, whether
/// that route adds a residual laid out as `out` in its epilogue, before the
/// activation (else `conv2d_fused` adds it in a pass of its own).
pub fn conv2d_plan(
    stream: &StreamShared,
    params: &Conv2dParams,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &Tensor,
) -> Result<(Plan, bool)> {
    let ops = Operands { input, weight, bias, out };
    let problem = Problem::new(&stream.device, params, &ops)?;
    let target = Target::of(&stream.device);
    let with_residual = Problem { residual: Some(problem.out), ..problem };
    let fuses_residual = plan::plan(&with_residual, &target)?.route.fuses_residual();
    Ok((plan::plan(&problem, &target)?, fuses_residual))
}

pub fn conv2d(
    stream: &StreamShared,
    params: &Conv2dParams,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &Tensor,
) -> Result<()> {
    conv2d_act(stream, params, input, weight, bias, out, Activation::None).map(|_| ())
}

/// `conv2d` followed by `activation`, which the route applies as it stores
/// where it can: returns false where it did not (the caller applies it).
pub fn conv2d_act(
    stream: &StreamShared,
    params: &Conv2dParams,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &Tensor,
    activation: Activation,
) -> Result<bool> {
    conv2d_fused(stream, params, &Operands { input, weight, bias, out }, activation, None).map(|f| f.activation)
}

/// What a fused convolution applied as it stored the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Applied {
    pub activation: bool,
    pub residual: bool,
}

/// `conv2d` + `residual` (the output's shape, checked by the caller:
/// residual::check) + `activation`. The route adds the residual as it
/// stores where it can, else one pass adds it to out in place and another
/// applies the activation; the activation is applied by the route where it
/// can, else (`Applied::activation` false) the caller applies it.
pub fn conv2d_fused(
    stream: &StreamShared,
    params: &Conv2dParams,
    ops: &Operands,
    activation: Activation,
    residual: Option<&Tensor>,
) -> Result<Applied> {
    let base = Problem::new(&stream.device, params, ops)?;
    let problem = Problem { activation, residual: residual.map(View::of), ..base };
    let plan = plan::plan(&problem, &Target::of(&stream.device))?;
    if let Some(r) = residual.filter(|_| !plan.route.fuses_residual()) {
        // The route does not add it as it stores: the convolution into
        // out, then out += r in place, then the activation in place. (Into
        // scratch and one pass act(conv + r) needed scratch of out's size
        // per call, past the buffer pool at batch 32: 8 ms more for
        // ResNet-50 f32 on an H100, 210 ms at batch 256.)
        let bare = Problem { activation: Activation::None, ..problem };
        launch(stream, &bare, plan.route, ops, None)?;
        residual::add_activate(stream, r, activation, ops.out)?;
        return Ok(Applied { activation: true, residual: true });
    }
    let fused = plan.route.applies(activation);
    // Routes that do not apply it never read it; the caller applies it.
    launch(stream, &problem, plan.route, ops, residual)?;
    Ok(Applied { activation: fused, residual: residual.is_some() })
}

/// The one place a planned convolution is recorded.
fn launch(stream: &StreamShared, p: &Problem, route: Route, ops: &Operands, residual: Option<&Tensor>) -> Result<()> {
    match route {
        Route::Empty => Ok(()),
        Route::Gemm1x1 => gemm1x1::record(stream, p, ops),
        Route::Gemm1x1Nhwc(r) => gemm1x1_nhwc::record(stream, p, r, ops, residual),
        Route::Direct(d) => direct::record(stream, p, d, ops),
        Route::Depthwise(d) => depthwise::record(stream, p, d, ops),
        Route::Implicit(i) => implicit::record(stream, p, i, ops),
        Route::Khr(k) => khr::record(stream, p, k, ops, residual),
        Route::Coop(c) => coop::record(stream, p, c, ops),
        Route::Im2col(i) => im2col::record(stream, p, i, ops),
        Route::Winograd(w) => winograd::record(stream, p, w, ops),
        Route::Stem(s) => im2col_stem::record(stream, p, s, ops),
    }
}
