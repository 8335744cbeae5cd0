//! What the convolution planner reads of the device and of its settings:
//! gathered once per call by `Target::of`, or written out by a test.

use crate::ops::gemm::coop as gemm_coop;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::spirv as gemm_spirv;
use crate::runtime::device::Device;
/// Where f16 convolutions that are neither 1x1 GEMMs nor depthwise start
/// (each route declining passes to the next: KHR gather, WGSL
/// cooperative-matrix implicit GEMM, im2col): the device's WGC_CONV_F16.
pub use crate::runtime::settings::ConvF16Start as F16Start;
/// How f16 convolutions under 8 input channels run: the device's
/// WGC_CONV_STEM.
pub use crate::runtime::settings::ConvStem as StemForm;

/// K runs for a tensor-core product of (m, n, k) over a batch, to fill the
/// GPU.
#[derive(Clone, Copy)]
pub enum Fill<'d> {
    /// The tensor-core GEMM's rule on this device, under its settings
    /// (`gemm::coop::fill_splits`).
    Device(&'d Device),
    /// A rule given as is (routing tests).
    Rule(fn((usize, usize, usize), usize) -> usize),
}

/// What the GEMM planner reads, for routes that are a GEMM (its plan
/// decides whether the GEMM applies the convolution's epilogue).
#[derive(Clone, Copy)]
pub enum GemmOn<'d> {
    /// The device's profile, under its settings.
    Device(&'d Device),
    /// A profile given as is, under the default settings (routing tests).
    Profile(fn() -> DeviceProfile),
}

#[derive(Clone, Copy)]
pub struct Target<'d> {
    /// Workgroups per grid dimension.
    pub max_workgroups: usize,
    /// Bytes one storage binding may cover.
    pub max_binding: u64,
    /// The VK_KHR_cooperative_matrix convolution kernels run here (and are
    /// not switched off).
    pub khr: bool,
    /// The WGSL cooperative-matrix kernels run here.
    pub coop: bool,
    pub fill: Fill<'d>,
    pub f16_start: F16Start,
    /// Most bytes of columns one im2col pass writes (at least one image):
    /// 128 MiB, or the device's WGC_CONV_COLS_BYTES.
    pub cols_budget: u64,
    /// WGC_CONV_WINOGRAD: Some(true) forces Winograd on every f32 3x3
    /// stride-1 convolution it can take, Some(false) off; None: its rule
    /// (the device default).
    /// Its scratch (transformed input and products) shares `cols_budget`.
    pub winograd: Option<bool>,
    /// WGC_CONV_WINOGRAD_LAYOUT: Some(true) tiles fastest in the transformed
    /// matrices, Some(false) channels fastest; None: by the input's layout.
    pub winograd_tiles_fastest: Option<bool>,
    /// How first layers run: WGC_CONV_STEM.
    pub stem: StemForm,
    pub gemm: GemmOn<'d>,
    /// Channels-last 1x1 convolutions as one GEMM: always, never, or by
    /// rule (None; `WGC_CONV_1X1_NHWC`).
    pub gemm_1x1_nhwc: Option<bool>,
    /// Channels-last outputs on the KHR gather's 64 x 64 block of 4
    /// subgroups: always, never, or by rule (None; `WGC_CONV_KHR_SMALL`).
    pub khr_small: Option<bool>,
    /// Workgroups the f32 implicit GEMM's K splits aim for (0: none beyond
    /// the longest run): SPLIT_FILL_PER_UNIT per compute unit, or the
    /// device's WGC_CONV_SPLIT_FILL.
    pub split_fill: usize,
    /// Most bytes of its slabs at once (at least one slab, at most a
    /// binding): unbounded, or the device's WGC_CONV_SCRATCH_BYTES.
    pub split_scratch: u64,
}

/// Implicit-GEMM workgroups per compute unit a K split aims for (2112 on a
/// 132-SM H100: implicit.rs's `fill_runs` has the measurements).
pub(crate) const SPLIT_FILL_PER_UNIT: usize = 16;

impl<'d> Target<'d> {
    pub fn of(dev: &'d Device) -> Target<'d> {
        let conv = &dev.settings().conv;
        Target {
            max_workgroups: dev.limits.max_compute_workgroups_per_dimension as usize,
            max_binding: dev.limits.max_storage_buffer_binding_size,
            khr: gemm_spirv::khr_allowed(dev),
            coop: gemm_coop::available(dev),
            fill: Fill::Device(dev),
            f16_start: conv.f16_start,
            cols_budget: conv.cols_bytes.unwrap_or(128 << 20),
            winograd: conv.winograd,
            winograd_tiles_fastest: conv.winograd_tiles_fastest,
            stem: conv.stem,
            gemm: GemmOn::Device(dev),
            gemm_1x1_nhwc: conv.gemm_1x1_nhwc,
            khr_small: conv.khr_small,
            split_fill: conv.split_fill.unwrap_or(SPLIT_FILL_PER_UNIT * dev.profile().compute_units),
            split_scratch: conv.scratch_bytes.unwrap_or(u64::MAX),
        }
    }

    /// K runs for a tensor-core product of (m, n, k) over `batch`.
    pub fn fill_splits(&self, mnk: (usize, usize, usize), batch: usize) -> usize {
        match self.fill {
            Fill::Device(dev) => gemm_coop::fill_splits(dev, mnk, batch),
            Fill::Rule(rule) => rule(mnk, batch),
        }
    }

    /// The GEMM planner's device profile and settings on this target.
    pub fn gemm(&self) -> (DeviceProfile, GemmSettings) {
        match self.gemm {
            GemmOn::Device(dev) => (DeviceProfile::of(dev), GemmSettings::of(dev)),
            GemmOn::Profile(profile) => (profile(), GemmSettings::default()),
        }
    }
}
