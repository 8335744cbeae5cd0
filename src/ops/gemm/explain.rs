//! "Which route would this product take, and why?" without recording
//! anything: `wgc_op_gemm_explain` plans a GEMM exactly as `wgc_op_gemm`
//! would (the same checks, statuses and plan; where the tuner is on, its
//! stored choice for the shape class may differ) and describes the plan.

use crate::error::Result;
use crate::ops::gemm::plan;
use crate::ops::gemm::problem::Problem;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::{gemm_operands, Tensor};
use crate::runtime::stream::StreamShared;

/// One line describing the plan of `C = alpha * op(A) op(B) + beta * C`:
/// "route X because ..."; the errors `gemm` would return for these views.
#[allow(clippy::too_many_arguments)]
pub fn explain_gemm(
    stream: &StreamShared,
    alpha: f32,
    a: &Tensor,
    transpose_a: bool,
    b: &Tensor,
    transpose_b: bool,
    beta: f32,
    c: &Tensor,
) -> Result<String> {
    let (a, b) = gemm_operands(stream, (a, transpose_a), (b, transpose_b), c)?;
    let Some(q) = Problem::of(stream, (alpha, beta), &a, &b, c, None)? else {
        return Ok("route none because C is empty: nothing is recorded".into());
    };
    let dev = &stream.device;
    let plan = plan::plan(&q, &DeviceProfile::of(dev), &GemmSettings::of(dev))?;
    Ok(format!("{plan} (m={} n={} k={} batch={})", q.m, q.n, q.k, q.batch_count))
}
