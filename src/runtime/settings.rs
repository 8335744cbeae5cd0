//! The library's settings: every `WGC_*` environment variable that steers a
//! device, read once when the device is created and kept on it
//! (`Device::settings`), so that two devices of one process may differ and
//! a test can build any setting without touching the environment
//! (`Settings::from_lookup`). docs/TUNING.md says what each one does.
//!
//! Values are kept as the user gave them, parsed; `None` means "not set",
//! and the code that uses a setting applies its default (often derived
//! from the device profile). Adapter selection (`WGC_ADAPTER`,
//! `WGC_BACKEND`) happens before any device exists and stays with the
//! instance (runtime/instance.rs).

use super::autotune::TuneMode;

/// Every setting of one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub device: DeviceSettings,
    pub gemm: GemmSettings,
    pub gemv: GemvSettings,
    pub conv: ConvSettings,
    pub reduce: ReduceSettings,
    pub norm: NormSettings,
    pub movement: MovementSettings,
    pub random: RandomSettings,
    pub multi: MultiSettings,
    pub attention: AttentionSettings,
}

/// Waits, the tuner and the device profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSettings {
    /// `WGC_AUTOTUNE`: unset, empty, `0` or `off`: Off; `1` or `on`: On;
    /// `cached`: Cached (any case, spaces trimmed); anything else is an
    /// error, reported when a device that does not choose its mode in its
    /// options is created.
    pub autotune: Result<TuneMode, String>,
    /// `WGC_AUTOTUNE_LOG` set and not `0`: every timed class is printed.
    pub autotune_log: bool,
    /// `WGC_WAIT_SPIN_US`: the spin phase of waits, in microseconds.
    pub wait_spin_us: Option<u64>,
    /// `WGC_COMPUTE_UNITS` (positive): the compute units the device
    /// profile assumes, whatever the adapter reports.
    pub compute_units: Option<usize>,
}

/// Which f16 GEMM kernel `WGC_GEMM_SPIRV` fixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpirvRoute {
    /// `0`: the WGSL kernel.
    Wgsl,
    /// `1`: the VK_KHR_cooperative_matrix kernel wherever it runs.
    Khr,
    /// `2`: the VK_NV_cooperative_matrix2 kernel wherever it runs.
    Coopmat2,
}

/// `WGC_GEMM_STAGE`: when products copy misaligned operands first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageMode {
    /// `0`: never.
    Off,
    /// Unset (or any other value): where it pays.
    Auto,
    /// `always`: every product that can.
    Always,
}

/// General matrix products.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemmSettings {
    /// `WGC_GEMM_SPIRV`: `0`, `1` or `2` fix the f16 kernel; unset (or any
    /// other value): chosen by size.
    pub spirv: Option<SpirvRoute>,
    /// `WGC_GEMM_SPIRV_STAGES=2`: the VK_KHR kernel double-buffers K tiles.
    pub spirv_two_stages: bool,
    /// `WGC_GEMM_WIDE`: `0` never, `1` wherever it can run, the wide-block
    /// VK_KHR kernel; unset (or any other value): by the planner's rule.
    pub wide: Option<bool>,
    /// `WGC_GEMM_CM2_BLOCK`: the VK_NV_cooperative_matrix2 block to use,
    /// by name (`BMxBNxBK`).
    pub coopmat2_block: Option<String>,
    /// `WGC_COOPMAT2_LOG` set: print the driver's cooperative_matrix2 shapes.
    pub coopmat2_log: bool,
    /// `WGC_GEMM_BF16_COOP` not `0`: open VK_KHR_shader_bfloat16 where offered.
    pub bf16_coop: bool,
    /// `WGC_GEMM_STAGE`.
    pub stage: StageMode,
    /// `WGC_GEMM_TILED_FILL`: workgroups a split of the tiled kernel aims for.
    pub tiled_fill: Option<usize>,
    /// `WGC_GEMM_TILED_BLOCKS=RMxRN` (each 1 or 2): the tiled kernel's blocks.
    pub tiled_blocks: Option<(usize, usize)>,
    /// `WGC_GEMM_SCRATCH_BYTES`: most scratch a split-K product takes.
    pub scratch_bytes: Option<u64>,
    /// `WGC_GEMM_SKINNY` not `0`: few-row products may take the skinny kernels.
    pub skinny: bool,
    /// `WGC_GEMM_SKINNY_TILE`: a skinny tile by name (`n1k64`).
    pub skinny_tile: Option<String>,
    /// `WGC_GEMM_SKINNY_FILL`: workgroups a skinny split aims for.
    pub skinny_fill: Option<usize>,
    /// `WGC_GEMM_COOP` not `0`: f16 and bf16 products may use tensor cores.
    pub coop: bool,
    /// `WGC_GEMM_COOP_SPLIT` not `0`: tensor-core products may split K.
    pub coop_split: bool,
    /// `WGC_GEMM_COOP_FILL` (positive): workgroups a tensor-core split aims for.
    pub coop_fill: Option<usize>,
    /// `WGC_GEMM_ROWS` not `0`: the row-block kernel may run.
    pub rows: bool,
    /// `WGC_GEMM_ROWS_FILL`: workgroups the row-block kernel aims for.
    pub rows_fill: Option<usize>,
}

/// `WGC_GEMV_AXPY`: the kernels of a weight stored (K, N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxpySetting {
    /// `plain`.
    Plain,
    /// `staged`.
    Staged,
    /// Any other value.
    Wide,
}

/// Matrix-vector products.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemvSettings {
    /// `WGC_GEMV_AXPY`.
    pub axpy: Option<AxpySetting>,
    /// `WGC_GEMV_F16_LOAD` not `8`: f16 and bf16 weights load 16 bytes at once.
    pub f16_wide_loads: bool,
    /// `WGC_GEMV_FILL` (positive): workgroups a split aims for.
    pub fill: Option<usize>,
    /// `WGC_GEMV_NARROW` not `0`: the narrow axpy kernel may run.
    pub narrow: bool,
    /// `WGC_GEMV_NARROW_TILE=1`: one row per narrow tile, else 2.
    pub narrow_tile_rows: usize,
}

/// `WGC_CONV_F16`: where f16 convolutions start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvF16Start {
    /// Unset (or any other value): the SPIR-V gather.
    Gather,
    /// `implicit`.
    Implicit,
    /// `im2col`.
    Im2col,
}

/// How f16 convolutions under 8 input channels (first layers) run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ConvStem {
    /// Unset (or any other value): by shape (conv/im2col_stem.rs).
    #[default]
    Auto,
    /// `pad8`: channels padded to 8 for the SPIR-V gather where it runs.
    Pad8,
    /// `pairs`: the same, in pixel pairs where they apply
    /// (conv/stem_pad.rs), else channels padded to 8.
    Pairs,
    /// `columns`: im2col columns and the f16 GEMM.
    Columns,
}

/// Convolutions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvSettings {
    /// `WGC_CONV_F16`.
    pub f16_start: ConvF16Start,
    /// `WGC_CONV_COLS_BYTES`: most bytes of im2col columns per chunk.
    pub cols_bytes: Option<u64>,
    /// `WGC_CONV_WINOGRAD`: `1` Winograd for every f32 3x3 stride-1
    /// convolution it takes, `0` never; unset (`rule`, or other): where
    /// the planner's rule says (None).
    pub winograd: Option<bool>,
    /// `WGC_CONV_WINOGRAD_LAYOUT`: `tiles` (transformed matrices with the
    /// tiles fastest) or `channels` (channels fastest) for every image,
    /// for measuring both; unset (or other): by the input's layout.
    pub winograd_tiles_fastest: Option<bool>,
    /// `WGC_CONV_STEM`.
    pub stem: ConvStem,
    /// `WGC_CONV_1X1_NHWC`: channels-last 1x1 convolutions run as one GEMM
    /// over all images wherever they can (`1`), never (`0`), or by the
    /// planner's rule (None: gemm1x1_nhwc.rs).
    pub gemm_1x1_nhwc: Option<bool>,
    /// `WGC_CONV_KHR_SMALL`: channels-last outputs on the KHR gather take
    /// its 64 x 64 block of 4 subgroups (`1`), never (`0`), or by rule.
    pub khr_small: Option<bool>,
    /// `WGC_CONV_SPLIT_FILL`: workgroups the f32 implicit GEMM's K splits
    /// aim for (0: K is split only where it is longer than one run may be).
    pub split_fill: Option<usize>,
    /// `WGC_CONV_SCRATCH_BYTES`: most bytes of those runs' slabs at once
    /// (at least one slab; for testing the passes).
    pub scratch_bytes: Option<u64>,
}

/// Reductions and top-k.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceSettings {
    /// `WGC_DISABLE_SUBGROUPS` set and not `0`: the workgroup-memory kernels.
    pub disable_subgroups: bool,
    /// `WGC_REDUCE_ROW_LOADS` (positive): loads per row of a row reduction.
    pub row_loads: Option<usize>,
    /// `WGC_COLUMNS_INVOCATIONS` (positive): invocations a column split aims for.
    pub columns_invocations: Option<usize>,
    /// `WGC_COLUMNS_ROW_GROUPS` (1, 2 or 4): row groups per workgroup.
    pub columns_row_groups: Option<usize>,
    /// `WGC_TOPK=sort`: top-k always sorts the whole row.
    pub topk_sort: bool,
}

/// Row-wise normalisations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NormSettings {
    /// `WGC_SOFTMAX_SPLIT_GROUPS`: the workgroups a split softmax aims for.
    pub softmax_split_groups: Option<usize>,
}

/// Copies and concatenations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovementSettings {
    /// `WGC_CONCAT=scalar`: one element per invocation.
    pub concat_scalar: bool,
}

/// Random numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RandomSettings {
    /// `WGC_RANDOM_INT64` not `0`: 64-bit integer kernels where offered.
    pub int64: bool,
}

/// Fused attention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttentionSettings {
    /// `WGC_ATTENTION_COOP` not `0`: prefill on the tensor-core kernel where it applies.
    pub coop: bool,
    /// `WGC_ATTENTION_COOP_PREFETCH` not `0`: the entries that fetch the next tile early.
    pub coop_prefetch: bool,
    /// `WGC_ATTENTION_COOP_WIDE` not `0`: 128 query rows a workgroup where they apply.
    pub coop_wide: bool,
    /// `WGC_ATTENTION_COOP_SUBGROUP_BARRIERS` is `1`: the tensor-core entries
    /// with subgroup barriers where the adapter has them.
    pub coop_subgroup_barriers: bool,
    /// `WGC_ATTENTION_DECODE_GROUPS`: workgroups decode aims for (2048).
    pub decode_groups: Option<usize>,
    /// `WGC_ATTENTION_DECODE_MIN_CHUNK`: fewest keys of a decode chunk (256).
    pub decode_min_chunk: Option<usize>,
    /// `WGC_ATTENTION_DECODE_SPREAD` not `0`: decode tiles of 4 query rows
    /// spread a step's 16 sums one a lane (shaders/attention_decode.wgsl).
    pub decode_spread: bool,
}

/// Several devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiSettings {
    /// `WGC_PEER_CHUNK_KIB`: the chunk of a copy between devices.
    pub peer_chunk_kib: Option<u64>,
    /// `WGC_ALLREDUCE_DIRECT_KIB`: the largest all-reduce of one step.
    pub allreduce_direct_kib: Option<u64>,
}

/// The variables as `lookup` gives them, with the parsing every setting shares.
struct Vars<F: Fn(&str) -> Option<String>>(F);

impl<F: Fn(&str) -> Option<String>> Vars<F> {
    fn get(&self, name: &str) -> Option<String> {
        (self.0)(name)
    }
    /// Set to exactly `value`.
    fn is(&self, name: &str, value: &str) -> bool {
        self.get(name).is_some_and(|v| v == value)
    }
    /// On unless set to exactly `off`.
    fn on_unless(&self, name: &str, off: &str) -> bool {
        !self.is(name, off)
    }
    /// Set, and not to `0`.
    fn set_not_zero(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v != "0")
    }
    fn number<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.get(name)?.parse().ok()
    }
    fn positive(&self, name: &str) -> Option<usize> {
        self.number(name).filter(|&n: &usize| n > 0)
    }
}

impl Settings {
    /// Settings from the process environment (values that are not UTF-8
    /// are read lossily: they match no valid value).
    pub fn from_env() -> Settings {
        Settings::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Settings from `lookup`, which gives a variable's value or `None`
    /// where it is not set. Pure: the same lookup gives the same settings.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Settings {
        let v = Vars(lookup);
        Settings {
            device: DeviceSettings {
                autotune: parse_autotune(v.get("WGC_AUTOTUNE")),
                autotune_log: v.set_not_zero("WGC_AUTOTUNE_LOG"),
                wait_spin_us: v.number("WGC_WAIT_SPIN_US"),
                compute_units: v.positive("WGC_COMPUTE_UNITS"),
            },
            gemm: GemmSettings {
                spirv: match v.get("WGC_GEMM_SPIRV").as_deref() {
                    Some("0") => Some(SpirvRoute::Wgsl),
                    Some("1") => Some(SpirvRoute::Khr),
                    Some("2") => Some(SpirvRoute::Coopmat2),
                    _ => None,
                },
                spirv_two_stages: v.is("WGC_GEMM_SPIRV_STAGES", "2"),
                wide: match v.get("WGC_GEMM_WIDE").as_deref() {
                    Some("0") => Some(false),
                    Some("1") => Some(true),
                    _ => None,
                },
                coopmat2_block: v.get("WGC_GEMM_CM2_BLOCK"),
                coopmat2_log: v.get("WGC_COOPMAT2_LOG").is_some(),
                bf16_coop: v.on_unless("WGC_GEMM_BF16_COOP", "0"),
                stage: match v.get("WGC_GEMM_STAGE").as_deref() {
                    Some("0") => StageMode::Off,
                    Some("always") => StageMode::Always,
                    _ => StageMode::Auto,
                },
                tiled_fill: v.number("WGC_GEMM_TILED_FILL"),
                tiled_blocks: parse_tiled_blocks(v.get("WGC_GEMM_TILED_BLOCKS")),
                scratch_bytes: v.number("WGC_GEMM_SCRATCH_BYTES"),
                skinny: v.on_unless("WGC_GEMM_SKINNY", "0"),
                skinny_tile: v.get("WGC_GEMM_SKINNY_TILE"),
                skinny_fill: v.number("WGC_GEMM_SKINNY_FILL"),
                coop: v.on_unless("WGC_GEMM_COOP", "0"),
                coop_split: v.on_unless("WGC_GEMM_COOP_SPLIT", "0"),
                coop_fill: v.positive("WGC_GEMM_COOP_FILL"),
                rows: v.on_unless("WGC_GEMM_ROWS", "0"),
                rows_fill: v.number("WGC_GEMM_ROWS_FILL"),
            },
            gemv: GemvSettings {
                axpy: v.get("WGC_GEMV_AXPY").map(|m| match m.as_str() {
                    "plain" => AxpySetting::Plain,
                    "staged" => AxpySetting::Staged,
                    _ => AxpySetting::Wide,
                }),
                f16_wide_loads: v.on_unless("WGC_GEMV_F16_LOAD", "8"),
                fill: v.positive("WGC_GEMV_FILL"),
                narrow: v.on_unless("WGC_GEMV_NARROW", "0"),
                narrow_tile_rows: if v.is("WGC_GEMV_NARROW_TILE", "1") { 1 } else { 2 },
            },
            conv: ConvSettings {
                f16_start: match v.get("WGC_CONV_F16").as_deref() {
                    Some("implicit") => ConvF16Start::Implicit,
                    Some("im2col") => ConvF16Start::Im2col,
                    _ => ConvF16Start::Gather,
                },
                cols_bytes: v.number("WGC_CONV_COLS_BYTES"),
                winograd: match v.get("WGC_CONV_WINOGRAD").as_deref() {
                    Some("1") => Some(true),
                    Some("0") => Some(false),
                    _ => None,
                },
                winograd_tiles_fastest: match v.get("WGC_CONV_WINOGRAD_LAYOUT").as_deref() {
                    Some("tiles") => Some(true),
                    Some("channels") => Some(false),
                    _ => None,
                },
                stem: match v.get("WGC_CONV_STEM").as_deref() {
                    Some("pad8") => ConvStem::Pad8,
                    Some("pairs") => ConvStem::Pairs,
                    Some("columns") => ConvStem::Columns,
                    _ => ConvStem::Auto,
                },
                gemm_1x1_nhwc: match v.get("WGC_CONV_1X1_NHWC").as_deref() {
                    Some("1") => Some(true),
                    Some("0") => Some(false),
                    _ => None,
                },
                khr_small: match v.get("WGC_CONV_KHR_SMALL").as_deref() {
                    Some("1") => Some(true),
                    Some("0") => Some(false),
                    _ => None,
                },
                split_fill: v.number("WGC_CONV_SPLIT_FILL"),
                scratch_bytes: v.number("WGC_CONV_SCRATCH_BYTES"),
            },
            reduce: ReduceSettings {
                disable_subgroups: v.set_not_zero("WGC_DISABLE_SUBGROUPS"),
                row_loads: v.positive("WGC_REDUCE_ROW_LOADS"),
                columns_invocations: v.positive("WGC_COLUMNS_INVOCATIONS"),
                columns_row_groups: v.number("WGC_COLUMNS_ROW_GROUPS").filter(|n| [1, 2, 4].contains(n)),
                topk_sort: v.is("WGC_TOPK", "sort"),
            },
            norm: NormSettings { softmax_split_groups: v.number("WGC_SOFTMAX_SPLIT_GROUPS") },
            movement: MovementSettings { concat_scalar: v.is("WGC_CONCAT", "scalar") },
            random: RandomSettings { int64: v.on_unless("WGC_RANDOM_INT64", "0") },
            multi: MultiSettings {
                peer_chunk_kib: v.number("WGC_PEER_CHUNK_KIB"),
                allreduce_direct_kib: v.number("WGC_ALLREDUCE_DIRECT_KIB"),
            },
            attention: AttentionSettings {
                coop: v.on_unless("WGC_ATTENTION_COOP", "0"),
                coop_prefetch: v.on_unless("WGC_ATTENTION_COOP_PREFETCH", "0"),
                coop_wide: v.on_unless("WGC_ATTENTION_COOP_WIDE", "0"),
                coop_subgroup_barriers: v.is("WGC_ATTENTION_COOP_SUBGROUP_BARRIERS", "1"),
                decode_groups: v.positive("WGC_ATTENTION_DECODE_GROUPS"),
                decode_min_chunk: v.positive("WGC_ATTENTION_DECODE_MIN_CHUNK"),
                decode_spread: v.on_unless("WGC_ATTENTION_DECODE_SPREAD", "0"),
            },
        }
    }
}

impl Default for Settings {
    /// Every setting unset.
    fn default() -> Settings {
        Settings::from_lookup(|_| None)
    }
}

fn parse_autotune(value: Option<String>) -> Result<TuneMode, String> {
    let Some(v) = value else {
        return Ok(TuneMode::Off);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "off" => Ok(TuneMode::Off),
        "1" | "on" => Ok(TuneMode::On),
        "cached" => Ok(TuneMode::Cached),
        _ => Err(format!("WGC_AUTOTUNE={v:?}: expected 0, 1 or cached")),
    }
}

/// `RMxRN`, each 1 or 2; anything else is not a setting.
fn parse_tiled_blocks(value: Option<String>) -> Option<(usize, usize)> {
    let v = value?;
    let (rm, rn) = v.split_once('x')?;
    let (rm, rn) = (rm.parse().ok()?, rn.parse().ok()?);
    ((1..=2).contains(&rm) && (1..=2).contains(&rn)).then_some((rm, rn))
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
