//! The convolution planner: a pure function of the problem and the target
//! (device facts and settings) to one route, with the reasons, so that
//! "which kernel would run, and why" is answered without recording work.
//! The order of the questions is the routing policy:
//!
//! 1. an empty output records nothing;
//! 2. a 1x1 stride-1 unpadded ungrouped convolution over flat pixels of at
//!    least 256 per image is a GEMM per image; one over channels-last
//!    packed pixels is one GEMM over all images (the GEMM's plan says
//!    whether it applies the bias, activation and residual): by default
//!    f16 with 128 or more output channels on the KHR GEMM
//!    (WGC_CONV_1X1_NHWC turns it on or off for all);
//! 3. a depthwise one of multiplier 1 (one input and one output channel per
//!    group) runs the bandwidth kernel, other depthwise ones (or windows
//!    too large for its tiles) the direct kernel;
//! 4. f16: the KHR gather, then (under 8 input channels, by shape) the
//!    channels padded to 8 for the KHR gather or im2col + GEMM with the
//!    epilogue, then the WGSL cooperative-matrix implicit GEMM, then
//!    im2col + GEMM (WGC_CONV_F16 may start later in that list);
//! 5. f32: Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions where its
//!    rule (`winograd::wins`, the default) or WGC_CONV_WINOGRAD says so,
//!    else the WGSL implicit GEMM.

use super::problem::Problem;
use super::route::Route;
use super::target::{F16Start, Target};
use super::{coop, depthwise, direct, gemm1x1, gemm1x1_nhwc, im2col, im2col_stem, implicit, khr, winograd};
use crate::error::Result;
use crate::ops::tensor::DType;
use std::fmt;

/// The route chosen, why, and why the routes asked before it declined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub route: Route,
    pub reason: String,
    /// (route name, reason) of each route that declined, in order.
    pub declined: Vec<(&'static str, String)>,
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "route {} because {}", self.route, self.reason)?;
        for (i, (name, why)) in self.declined.iter().enumerate() {
            f.write_str(if i == 0 { "; declined: " } else { "; " })?;
            write!(f, "{name}: {why}")?;
        }
        Ok(())
    }
}

/// The route of `p` on `t`, or the error the call would fail with (a grid
/// or scratch past the adapter's limits where no route is left).
pub fn plan(p: &Problem, t: &Target) -> Result<Plan> {
    let g = &p.geo;
    let mut declined: Vec<(&'static str, String)> = Vec::new();
    let chosen = |route: Route, reason: String, declined| Ok(Plan { route, reason, declined });
    if g.outputs() == 0 {
        return chosen(Route::Empty, "the output is empty".into(), declined);
    }
    match gemm1x1::supports(p) {
        Ok(()) => {
            let why = format!("a 1x1 convolution over {} flat pixels per image is one GEMM per image", g.oh * g.ow);
            return chosen(Route::Gemm1x1, why, declined);
        }
        Err(why) => declined.push(("gemm_1x1", why)),
    }
    match gemm1x1_nhwc::supports(p, t) {
        Ok(r) => {
            let why =
                format!("a 1x1 convolution over channels-last packed pixels is one GEMM of {} rows", g.n * g.oh * g.ow);
            return chosen(Route::Gemm1x1Nhwc(r), why, declined);
        }
        Err(why) => declined.push(("gemm_1x1_nhwc", why)),
    }
    match depthwise::supports(p, t) {
        Ok(d) => {
            let why = format!("one input and one output channel per group ({} groups) is depthwise", g.groups);
            return chosen(Route::Depthwise(d), why, declined);
        }
        Err(why) => declined.push(("depthwise", why)),
    }
    match direct::supports(p, t)? {
        Ok(d) => {
            let why = format!("one input channel per group ({} groups) is depthwise", g.groups);
            return chosen(Route::Direct(d), why, declined);
        }
        Err(why) => declined.push(("direct", why)),
    }
    if p.dtype == DType::F16 {
        let first = |start: F16Start| format!("WGC_CONV_F16 starts f16 convolutions at {start:?}");
        if t.f16_start == F16Start::Gather {
            match khr::supports(p, t) {
                Ok(k) => return chosen(Route::Khr(k), f16_reason(p, "the KHR tensor-core gather applies"), declined),
                Err(why) => declined.push(("khr_gather", why)),
            }
        } else {
            declined.push(("khr_gather", first(t.f16_start)));
        }
        if t.f16_start == F16Start::Gather {
            match im2col_stem::supports(p, t) {
                Ok(s) => {
                    let why = f16_reason(p, "few input channels: im2col columns and the GEMM");
                    return chosen(Route::Stem(s), why, declined);
                }
                Err(why) => declined.push(("im2col_stem", why)),
            }
        } else {
            declined.push(("im2col_stem", first(t.f16_start)));
        }
        if t.f16_start != F16Start::Im2col {
            match coop::supports(p, t) {
                Ok(c) => return chosen(Route::Coop(c), f16_reason(p, "the WGSL tensor-core kernel applies"), declined),
                Err(why) => declined.push(("coop_implicit", why)),
            }
        } else {
            declined.push(("coop_implicit", first(t.f16_start)));
        }
        let route = Route::Im2col(im2col::supports(p, t)?);
        return chosen(route, f16_reason(p, "no tensor-core route took it"), declined);
    }
    match winograd::supports(p, t) {
        Ok(w) => return chosen(Route::Winograd(w), winograd_reason(p, t), declined),
        Err(why) => declined.push(("winograd", why)),
    }
    let route = Route::Implicit(implicit::supports(p, t)?);
    chosen(route, "f32, neither a 1x1 GEMM nor depthwise".into(), declined)
}

fn f16_reason(p: &Problem, what: &str) -> String {
    let g = &p.geo;
    format!("f16, {} group(s) of {} channels, neither a 1x1 GEMM nor depthwise: {what}", g.groups, g.cg)
}

fn winograd_reason(p: &Problem, t: &Target) -> String {
    let g = &p.geo;
    if t.winograd == Some(true) {
        return "f32 3x3 stride 1 with WGC_CONV_WINOGRAD=1".into();
    }
    format!("f32 3x3 stride 1, {} -> {} channels over {} output pixels", g.c, g.o, g.n * g.oh * g.ow)
}
