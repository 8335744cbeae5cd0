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
mod plan_tests;

pub use direct::{ConvDirectParams, DIRECT_FAMILY};
pub use implicit::{ConvInitParams, ConvParams, FAMILY, INIT_FAMILY};
pub use problem::{out_size, Conv2dParams, Geometry};

use crate::error::Result;
use crate::ops::tensor::Tensor;
use crate::runtime::stream::StreamShared;
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
    let ops = Operands { input, weight, bias, out };
    let problem = Problem::new(&stream.device, params, &ops)?;
    let plan = plan::plan(&problem, &Target::of(&stream.device))?;
    launch(stream, &problem, plan.route, &ops)
}

/// A convolution followed by the activation `act` (a `WgcActivation`
/// code): true where the route applied it in its store (the depthwise
/// route), false where the caller still has to.
pub fn conv2d_act(
    stream: &StreamShared,
    params: &Conv2dParams,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    out: &Tensor,
    act: u32,
) -> Result<bool> {
    let ops = Operands { input, weight, bias, out };
    let problem = Problem::new(&stream.device, params, &ops)?;
    let plan = plan::plan(&problem, &Target::of(&stream.device))?;
    match plan.route {
        Route::Depthwise(d) if act < depthwise::FUSED_ACTIVATIONS => {
            depthwise::record(stream, &problem, d, &ops, act).map(|()| true)
        }
        route => launch(stream, &problem, route, &ops).map(|()| false),
    }
}

/// The one place a planned convolution is recorded.
fn launch(stream: &StreamShared, p: &Problem, route: Route, ops: &Operands) -> Result<()> {
    match route {
        Route::Empty => Ok(()),
        Route::Gemm1x1 => gemm1x1::record(stream, p, ops),
        Route::Direct(d) => direct::record(stream, p, d, ops),
        Route::Depthwise(d) => depthwise::record(stream, p, d, ops, 0),
        Route::Implicit(i) => implicit::record(stream, p, i, ops),
        Route::Khr(k) => khr::record(stream, p, k, ops),
        Route::Coop(c) => coop::record(stream, p, c, ops),
        Route::Im2col(i) => im2col::record(stream, p, i, ops),
    }
}
