//! What the convolution planner reads of the device and of the settings:
//! gathered once per call by `Target::of`, or written out by a test.

use crate::ops::gemm::coop as gemm_coop;
use crate::ops::gemm::spirv as gemm_spirv;
use crate::runtime::device::Device;
use std::sync::OnceLock;

/// Where f16 convolutions that are neither 1x1 GEMMs nor depthwise start
/// (each route declining passes to the next: KHR gather, WGSL
/// cooperative-matrix implicit GEMM, im2col).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F16Start {
    /// The SPIR-V tensor-core kernel's channels-last gather (khr.rs).
    Gather,
    /// The WGSL implicit GEMM on tensor cores (coop.rs).
    Implicit,
    /// im2col into scratch and the f16 GEMM (im2col.rs).
    Im2col,
}

#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Workgroups per grid dimension.
    pub max_workgroups: usize,
    /// Bytes one storage binding may cover.
    pub max_binding: u64,
    /// The VK_KHR_cooperative_matrix convolution kernels run here (and are
    /// not switched off).
    pub khr: bool,
    /// The WGSL cooperative-matrix kernels run here.
    pub coop: bool,
    /// K runs for a tensor-core product of (m, n, k) over a batch to fill
    /// the GPU (the GEMM's rule, `gemm::coop::fill_splits`).
    pub fill_splits: fn((usize, usize, usize), usize) -> usize,
    pub f16_start: F16Start,
    /// Most bytes of columns one im2col pass writes.
    pub cols_budget: u64,
}

impl Target {
    pub fn of(dev: &Device) -> Target {
        Target {
            max_workgroups: dev.limits.max_compute_workgroups_per_dimension as usize,
            max_binding: dev.limits.max_storage_buffer_binding_size,
            khr: gemm_spirv::khr_allowed(dev),
            coop: gemm_coop::available(dev),
            fill_splits: gemm_coop::fill_splits,
            f16_start: f16_start(),
            cols_budget: cols_budget(),
        }
    }
}

/// WGC_CONV_F16, read once: `implicit` or `im2col` starts there, for
/// comparisons; anything else (or unset) at the gather.
fn f16_start() -> F16Start {
    static START: OnceLock<F16Start> = OnceLock::new();
    *START.get_or_init(|| match std::env::var("WGC_CONV_F16").as_deref() {
        Ok("implicit") => F16Start::Implicit,
        Ok("im2col") => F16Start::Im2col,
        _ => F16Start::Gather,
    })
}

/// Most bytes of columns one im2col chunk of images writes (at least one
/// image each): 128 MiB, or the environment variable WGC_CONV_COLS_BYTES
/// (read at each call, so that tests can cut small convolutions into
/// chunks).
fn cols_budget() -> u64 {
    std::env::var("WGC_CONV_COLS_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(128 << 20)
}
