//! Splitting work that one invocation would otherwise loop over for too
//! long. A software driver (lavapipe, the CI driver and the no-GPU fallback)
//! stops an invocation's loops after 65,535 iterations counted over all its
//! loops and nesting levels, and the results are then silently wrong. So no
//! kernel lets one invocation's trip count grow with the input: work past
//! these bounds is cut into chunks over more workgroups, whose partial
//! results a second pass combines.

use crate::error::Result;
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::device::Device;
use std::sync::Arc;

/// Most iterations an invocation's main loop runs in one pass over its data.
/// Index decoding in the loop body costs up to 9 more (a rank-8 decode) and
/// a kernel makes up to 3 passes: 3 * 10 * 1024 stays well under 65,535.
pub(crate) const MAX_ITERS: usize = 1024;

/// Workgroup size of the kernels that take one chunk of a long row each.
pub(crate) const SPLIT_WG: usize = 256;

/// Elements one workgroup of `SPLIT_WG` invocations takes per chunk.
pub(crate) const CHUNK_LEN: usize = SPLIT_WG * MAX_ITERS;

/// Longest run of a product's K dim one workgroup accumulates (GEMM and
/// implicit-GEMM convolution). Longer K is split over workgroups whose
/// partial sums are added afterwards. It bounds the loop (16384 / 8 tile
/// steps) and the rounding error: a sum of n terms in one f32 accumulator
/// drifts with n (K = 600,000 same-sign terms lost 11 units in 150,000).
pub(crate) const K_CHUNK: usize = 16384;

/// Compute units (SMs) of the GPUs the split targets were measured on
/// (H100 and H200). Targets measured per SM take the device's own count
/// (`Device::profile`); totals measured there scale with it (`scaled`).
pub(crate) const MEASURED_UNITS: usize = 132;

/// `target`, a workgroup count measured on MEASURED_UNITS compute units,
/// for a device of `units` (at least 1).
pub(crate) fn scaled(units: usize, target: usize) -> usize {
    (target * units / MEASURED_UNITS).max(1)
}

/// How many runs K is cut into so that about `target` workgroups run over
/// `tiles` output tiles (each run's f32 sums added by a second pass): runs
/// of at least `min_run`; 1 where there are no tiles or K is too short.
/// The products and convolutions that fill the GPU this way share it.
pub(crate) fn runs_to_fill(tiles: usize, k: usize, target: usize, min_run: usize) -> usize {
    if tiles == 0 {
        return 1;
    }
    target.div_ceil(tiles).min(k / min_run).max(1)
}

/// How many runs K is cut into so that `tiles` output tiles make as many
/// workgroups as one wave of `resident` holds (a partial second wave costs
/// more than the SMs it fills): runs of at least `min_run`; 1 where there
/// are no tiles, they fill more than half the wave, or K is too short.
pub(crate) fn runs_for_one_wave(tiles: usize, k: usize, resident: usize, min_run: usize) -> usize {
    if tiles == 0 {
        return 1;
    }
    (resident / tiles).min(k / min_run).max(1)
}

/// Scratch space for partial results (contents unspecified until written).
pub fn scratch(dev: &Arc<Device>, bytes: u64) -> Result<Arc<Buffer>> {
    let usage = Usage { storage: true, uniform: false, indirect: false };
    Ok(Buffer::create_uninit(dev, bytes.max(4), usage)?.buffer)
}
