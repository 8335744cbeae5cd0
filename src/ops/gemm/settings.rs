//! The knobs that steer GEMM routes, as one plain value (`GemmSettings`)
//! that the planner takes as a parameter: a route decision is a function
//! of the problem, the device and these settings only, so tests can plan
//! under any setting without a process of their own. `GemmSettings::of`
//! gives the settings a device's products run under, from the settings it
//! read once at creation (runtime/settings.rs; the variables are
//! documented in docs/TUNING.md), with each knob's default applied.

use crate::ops::gemm::coopmat2::BLOCKS as CM2_BLOCKS;
use crate::ops::gemm::gemv::AxpyMode;
use crate::ops::gemm::skinny::{SkinnyTile, TILES as SKINNY_TILES};
use crate::ops::gemm::wide::WideShape;
use crate::runtime::device::Device;
use crate::runtime::settings::{AxpySetting, Settings, SpirvRoute, StageMode as RuntimeStage};

/// How f16 and bf16 operands the tensor cores cannot read are staged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageMode {
    /// Never: the tiled kernel on the views as they are.
    Off,
    /// Where the product is large enough to pay for the copies.
    Auto,
    /// Every f16/bf16 product the tensor-core kernels reject for alignment.
    Always,
}

/// Every setting that changes which route a GEMM takes or its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmSettings {
    /// The tensor-core kernels may run (`WGC_GEMM_COOP` not `0`).
    pub coop: bool,
    /// Tensor-core products with few tiles split K to fill the GPU (`WGC_GEMM_COOP_SPLIT`).
    pub coop_split: bool,
    /// Workgroups a tensor-core split aims for instead of one wave (`WGC_GEMM_COOP_FILL`).
    pub coop_fill: Option<usize>,
    /// `WGC_GEMM_SPIRV`: None by measurement, else 0 (WGSL), 1 (KHR), 2 (coopmat2).
    pub spirv: Option<u8>,
    /// The KHR kernel stages K in two buffers (`WGC_GEMM_SPIRV_STAGES=2`).
    pub spirv_double_buffered: bool,
    /// `WGC_GEMM_WIDE`: the wide-block VK_KHR kernel never (false), wherever
    /// it can run (true), or by the planner's rule (None; wide.rs).
    pub wide: Option<bool>,
    /// The wide block's shape (`WGC_GEMM_WIDE_SHAPE`, by name; else the default).
    pub wide_shape: WideShape,
    /// The skinny tensor-core tile may run (`WGC_GEMM_SKINNY` not `0`).
    pub skinny: bool,
    /// A skinny tile named for both weight layouts (`WGC_GEMM_SKINNY_TILE`).
    pub skinny_tile: Option<SkinnyTile>,
    /// Workgroups a skinny split aims for instead of one wave (`WGC_GEMM_SKINNY_FILL`).
    pub skinny_fill: Option<usize>,
    /// The VK_NV_cooperative_matrix2 block named (`WGC_GEMM_CM2_BLOCK`, index into its BLOCKS).
    pub cm2_block: Option<usize>,
    /// Workgroups the tiled kernel's splits aim for (`WGC_GEMM_TILED_FILL`, 528).
    pub tiled_fill: usize,
    /// Blocks fixed for the tiled kernel (`WGC_GEMM_TILED_BLOCKS`, `RMxRN`).
    pub tiled_blocks: Option<(usize, usize)>,
    /// Most bytes of split-K slabs at once (`WGC_GEMM_SCRATCH_BYTES`, 256 MiB).
    pub scratch_bytes: usize,
    /// Aligned copies for the tensor cores (`WGC_GEMM_STAGE`).
    pub stage: StageMode,
    /// gemm_rows may run (`WGC_GEMM_ROWS` not `0`).
    pub rows: bool,
    /// Workgroups gemm_rows' splits aim for (`WGC_GEMM_ROWS_FILL`, 1056).
    pub rows_fill: usize,
    /// The matrix-vector kernels' mode fixed (`WGC_GEMV_AXPY`); None: tuned, by default wide.
    pub axpy: Option<AxpyMode>,
    /// 16-byte loads of f16/bf16 weights (`WGC_GEMV_F16_LOAD` not `8`).
    pub gemv_wide_loads: bool,
    /// Workgroups the matrix-vector splits aim for (`WGC_GEMV_FILL`).
    pub gemv_fill: Option<usize>,
    /// One or two rows against a (K, N) weight take axpy_unit_narrow (`WGC_GEMV_NARROW` not `0`).
    pub gemv_narrow: bool,
    /// Most rows in one axpy_unit_narrow tile (`WGC_GEMV_NARROW_TILE`: 1, else 2).
    pub gemv_narrow_tile: usize,
}

/// Tiled-kernel workgroups per compute unit its splits aim for (528 on 132).
const TILED_FILL_PER_UNIT: usize = 4;
/// gemm_rows workgroups per compute unit (1056 on 132: on an H100, 1056 ran
/// 2-10% faster than 528 and 264 slower).
const ROWS_FILL_PER_UNIT: usize = 8;

impl Default for GemmSettings {
    /// The settings with no variable set: every route by measurement.
    fn default() -> GemmSettings {
        GemmSettings {
            coop: true,
            coop_split: true,
            coop_fill: None,
            spirv: None,
            spirv_double_buffered: false,
            wide: None,
            wide_shape: WideShape::default(),
            skinny: true,
            skinny_tile: None,
            skinny_fill: None,
            cm2_block: None,
            tiled_fill: 528,
            tiled_blocks: None,
            scratch_bytes: 256 << 20,
            stage: StageMode::Auto,
            rows: true,
            rows_fill: 1056,
            axpy: None,
            gemv_wide_loads: true,
            gemv_fill: None,
            gemv_narrow: true,
            gemv_narrow_tile: 2,
        }
    }
}

impl GemmSettings {
    /// The settings `dev`'s products run under: the device's settings,
    /// read once when it was created (runtime/settings.rs), with the
    /// defaults of the knobs left unset.
    pub fn of(dev: &Device) -> GemmSettings {
        let mut s = GemmSettings::from_device_settings(dev.settings());
        // The fill targets not set are stated per compute unit (the defaults
        // are those of a 132-SM H100 or H200).
        let units = dev.profile().compute_units;
        let g = &dev.settings().gemm;
        if g.tiled_fill.is_none() {
            s.tiled_fill = TILED_FILL_PER_UNIT * units;
        }
        if g.rows_fill.is_none() {
            s.rows_fill = ROWS_FILL_PER_UNIT * units;
        }
        s
    }

    /// The planner's settings from a device's settings.
    pub fn from_device_settings(all: &Settings) -> GemmSettings {
        let (g, v, d) = (&all.gemm, &all.gemv, GemmSettings::default());
        GemmSettings {
            coop: g.coop,
            coop_split: g.coop_split,
            coop_fill: g.coop_fill,
            spirv: g.spirv.map(|r| match r {
                SpirvRoute::Wgsl => 0,
                SpirvRoute::Khr => 1,
                SpirvRoute::Coopmat2 => 2,
            }),
            spirv_double_buffered: g.spirv_two_stages,
            wide: g.wide,
            wide_shape: g.wide_shape.as_deref().and_then(WideShape::named).unwrap_or_default(),
            skinny: g.skinny,
            skinny_tile: g
                .skinny_tile
                .as_ref()
                .and_then(|name| SKINNY_TILES.into_iter().find(|t| *name == format!("n{}k{}", t.fn_, t.bk))),
            skinny_fill: g.skinny_fill,
            cm2_block: g
                .coopmat2_block
                .as_ref()
                .and_then(|v| CM2_BLOCKS.iter().position(|b| format!("{}x{}x{}", b.m, b.n, b.k) == *v)),
            tiled_fill: g.tiled_fill.unwrap_or(d.tiled_fill),
            tiled_blocks: g.tiled_blocks,
            scratch_bytes: g.scratch_bytes.map_or(d.scratch_bytes, |b| b as usize),
            stage: match g.stage {
                RuntimeStage::Off => StageMode::Off,
                RuntimeStage::Auto => StageMode::Auto,
                RuntimeStage::Always => StageMode::Always,
            },
            rows: g.rows,
            rows_fill: g.rows_fill.unwrap_or(d.rows_fill),
            axpy: v.axpy.map(|m| match m {
                AxpySetting::Plain => AxpyMode::Plain,
                AxpySetting::Staged => AxpyMode::Staged,
                AxpySetting::Wide => AxpyMode::Wide,
            }),
            gemv_wide_loads: v.f16_wide_loads,
            gemv_fill: v.fill,
            gemv_narrow: v.narrow,
            gemv_narrow_tile: v.narrow_tile_rows,
        }
    }

    /// The settings from variables looked up by `var` (unset: None).
    pub fn parse(var: &dyn Fn(&str) -> Option<String>) -> GemmSettings {
        GemmSettings::from_device_settings(&Settings::from_lookup(var))
    }

    /// The matrix-vector mode where nothing was measured.
    pub fn default_mode(&self) -> AxpyMode {
        self.axpy.unwrap_or(AxpyMode::Wide)
    }
}
