//! 2-D convolution (NCHW input, OIHW weight). A call is described once
//! (`problem`), planned by a pure function of that description and the
//! device (`plan`, `target`) into one of the routes (`route`), and recorded
//! by that route's file: 1x1 convolutions as a GEMM (`gemm1x1`), depthwise
//! ones at the memory bandwidth (`depthwise`) or directly (`direct`), f32 ones as an implicit GEMM (`implicit`), f16
//! ones on tensor cores (`khr`, `coop`) or through im2col (`im2col`).
//! The children share only `problem`, `route` and `target`; none imports
//! this file.

pub mod bn_act;
pub mod coop;
pub mod depthwise;
pub mod direct;
pub mod fold_bn;
pub mod gemm1x1;
pub mod im2col;
pub mod implicit;
pub mod khr;
pub mod plan;
pub mod problem;
pub mod route;
pub mod target;

#[cfg(test)]
mod activation_tests;
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
use problem::{Operands, Problem};
use route::Route;
use target::Target;

/// Validate and plan a convolution without recording it.
pub fn conv2d_plan(
    stream: &StreamShared,
    params: &Conv2dParams,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &Tensor,
) -> Result<Plan> {
    let ops = Operands { input, weight, bias, out };
    let problem = Problem::new(&stream.device, params, &ops)?;
    plan::plan(&problem, &Target::of(&stream.device))
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
    let ops = Operands { input, weight, bias, out };
    let problem = Problem { activation, ..Problem::new(&stream.device, params, &ops)? };
    let plan = plan::plan(&problem, &Target::of(&stream.device))?;
    let fused = plan.route.applies(activation);
    // Routes that do not apply it never read it; the caller applies it.
    launch(stream, &problem, plan.route, &ops)?;
    Ok(fused)
}

/// The one place a planned convolution is recorded.
fn launch(stream: &StreamShared, p: &Problem, route: Route, ops: &Operands) -> Result<()> {
    match route {
        Route::Empty => Ok(()),
        Route::Gemm1x1 => gemm1x1::record(stream, p, ops),
        Route::Direct(d) => direct::record(stream, p, d, ops),
        Route::Depthwise(d) => depthwise::record(stream, p, d, ops),
        Route::Implicit(i) => implicit::record(stream, p, i, ops),
        Route::Khr(k) => khr::record(stream, p, k, ops),
        Route::Coop(c) => coop::record(stream, p, c, ops),
        Route::Im2col(i) => im2col::record(stream, p, i, ops),
    }
}
