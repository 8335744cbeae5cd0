//! Last-axis reductions of contiguous rows in one launch (shaders/reduce_rows.wgsl
//! appended to reduce.wgsl): several invocations per row and several rows per
//! workgroup, sized by the row length, with vec4 loads whatever the rows'
//! alignment. One workgroup per row with a 256-wide reduction left most of a
//! large GPU's bandwidth unused on rows of 32 to 4096 elements.

use crate::error::Result;
use crate::ops::gemm::tuned::{self, bucket, Candidate, Choice};
use crate::ops::reduce::common::{FusedInput, ReduceParams};
use crate::ops::reduce::kernels::{row_grid, strategy, WG};
use crate::ops::spec::{self, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::tensor::DType;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

/// reduce.wgsl's OP codes this kernel runs (all but OP_SHIFT), and every LANES value `lanes` can give.
const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "OP", values: &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0] },
    OverrideSlot { name: "LANES", values: &[4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0] },
];
const SOURCE_SHARED: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_rows.wgsl"),
    include_str!("../../../shaders/reduce_input.wgsl"),
    include_str!("../../../shaders/reduce_wg_shared.wgsl")
);
const SOURCE_SUBGROUPS: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_rows.wgsl"),
    include_str!("../../../shaders/reduce_input.wgsl"),
    include_str!("../../../shaders/reduce_wg_subgroups.wgsl")
);
// bf16 inputs read as words (T = f32).
const SOURCE_BF16_SHARED: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_rows.wgsl"),
    include_str!("../../../shaders/reduce_input_bf16.wgsl"),
    include_str!("../../../shaders/reduce_wg_shared.wgsl")
);
const SOURCE_BF16_SUBGROUPS: &str = concat!(
    include_str!("../../../shaders/reduce.wgsl"),
    include_str!("../../../shaders/reduce_params.wgsl"),
    include_str!("../../../shaders/reduce_rows.wgsl"),
    include_str!("../../../shaders/reduce_input_bf16.wgsl"),
    include_str!("../../../shaders/reduce_wg_subgroups.wgsl")
);

/// One family per accumulator type and workgroup-reduction strategy, with
/// the type slots of reduce.rs's families.
macro_rules! rows_family {
    ($name:ident, $file:literal, $source:expr, [$($t:ident),*], $acc:ident, [$($out:ident),*]) => {
        pub static $name: Family = Family {
            file: $file,
            source: $source,
            // reduce.wgsl's entry points are in the module too.
            entries: &["reduce_rows", "reduce_strided", "reduce_columns", "reduce_vec4", "reduce_finish"],
            types: &[
                TypeSlot { alias: "T", dtypes: &[$(DType::$t),*] },
                TypeSlot { alias: "ACC", dtypes: &[DType::$acc] },
                TypeSlot { alias: "OUT", dtypes: &[$(DType::$out),*] },
            ],
            overrides: OVERRIDES,
            uniform: <ReduceParams as spec::Uniform>::layout,
        };
    };
}
rows_family!(FAMILY_F32, "reduce_rows.wgsl", SOURCE_SHARED, [F32, F16], F32, [F32, F16, I32]);
rows_family!(FAMILY_I32, "reduce_rows.wgsl:i32", SOURCE_SHARED, [I32], I32, [I32]);
rows_family!(FAMILY_U32, "reduce_rows.wgsl:u32", SOURCE_SHARED, [U32], U32, [U32, I32]);
rows_family!(FAMILY_F32_SUBGROUPS, "reduce_rows.wgsl+subgroups", SOURCE_SUBGROUPS, [F32, F16], F32, [F32, F16, I32]);
rows_family!(FAMILY_I32_SUBGROUPS, "reduce_rows.wgsl:i32+subgroups", SOURCE_SUBGROUPS, [I32], I32, [I32]);
rows_family!(FAMILY_U32_SUBGROUPS, "reduce_rows.wgsl:u32+subgroups", SOURCE_SUBGROUPS, [U32], U32, [U32, I32]);
rows_family!(FAMILY_BF16, "reduce_rows.wgsl:bf16", SOURCE_BF16_SHARED, [F32], F32, [F32, I32]);
rows_family!(FAMILY_BF16_SUBGROUPS, "reduce_rows.wgsl:bf16+subgroups", SOURCE_BF16_SUBGROUPS, [F32], F32, [F32, I32]);

/// vec4 loads each invocation makes per row, by default: fewer means more
/// invocations per row, more means more rows per workgroup and more loads
/// in flight per invocation.
const LOADS: usize = 8;
/// The tuner's candidates for it (LOADS first).
const TUNED_LOADS: &[(&str, usize)] = &[("l8", LOADS), ("l2", 2), ("l4", 4), ("l16", 16)];

/// Invocations per row of `k_total` elements (the LANES override) for
/// `loads` vec4 loads per invocation.
pub fn lanes(k_total: usize, loads: usize) -> u32 {
    (k_total.div_ceil(4).div_ceil(loads).next_power_of_two()).clamp(4, WG as usize) as u32
}

/// The loads-per-row choice for rows of `k_total` elements of `types[0]`;
/// the device's setting `WGC_REDUCE_ROW_LOADS` (`set`) fixes it.
fn loads_choice(
    input: DType,
    op_code: u32,
    k_total: usize,
    rows: usize,
    rerunnable: bool,
    set: Option<usize>,
) -> Choice<usize> {
    let candidates = match set {
        Some(loads) => vec![Candidate { name: "env", value: loads, plan: 0 }],
        None => TUNED_LOADS
            .iter()
            .map(|&(name, loads)| Candidate { name, value: loads, plan: lanes(k_total, loads) as u64 })
            .collect(),
    };
    Choice {
        name: "reduce_rows.loads",
        class: format!("{}.op{op_code}.k{}.r{}", input.wgsl(), bucket(k_total), bucket(rows)),
        candidates,
        fixed: set.is_some(),
        rerunnable,
    }
}

fn family_of(dev: &Device, dtype: DType) -> &'static Family {
    match dtype {
        DType::F32 | DType::F16 => strategy(dev, &FAMILY_F32, &FAMILY_F32_SUBGROUPS),
        DType::BF16 => strategy(dev, &FAMILY_BF16, &FAMILY_BF16_SUBGROUPS),
        DType::I32 => strategy(dev, &FAMILY_I32, &FAMILY_I32_SUBGROUPS),
        DType::U32 => strategy(dev, &FAMILY_U32, &FAMILY_U32_SUBGROUPS),
    }
}

/// Whether the kernel can take the view bound as `xa` with elements of
/// `esize` bytes: its `xv` binding needs room for one vec4.
pub fn fits(xa: &Arg, esize: u64) -> bool {
    xa.bound_bytes() >= 4 * esize
}

/// Record the reduction of the rows of contiguous elements bound as `xa`
/// into `out` (bound as `oa`). `params` gives the uniform (with the row
/// count and length) for a grid of `rows_per_y` workgroups per y; `types` are
/// (T, ACC, OUT) and `input` the input's dtype (bf16: T is f32, the family
/// reads the words). The output must not share the input's buffer.
pub fn record(
    stream: &StreamShared,
    op_code: u32,
    input: DType,
    types: [DType; 3],
    xa: Arg,
    oa: Arg,
    params: impl Fn(u32) -> ReduceParams,
) -> Result<()> {
    let (k_total, rows) = {
        let p = params(0);
        (p.k_total as usize, p.rows as usize)
    };
    // One launch that writes `out` only: safe to time where out is apart from the input.
    let rerunnable = !std::ptr::eq(xa.buffer, oa.buffer) && xa.buffer.alloc_id() != oa.buffer.alloc_id();
    let set = stream.device.settings().reduce.row_loads;
    let choice = || loads_choice(input, op_code, k_total, rows, rerunnable, set);
    let launch = |loads| record_with(stream, op_code, input, types, xa, oa, &params, lanes(k_total, loads));
    let loads = tuned::pick(stream, set.unwrap_or(LOADS), choice, launch)?;
    launch(loads)
}

/// `record` with `lanes` invocations per row.
#[allow(clippy::too_many_arguments)]
fn record_with(
    stream: &StreamShared,
    op_code: u32,
    input: DType,
    types: [DType; 3],
    xa: Arg,
    oa: Arg,
    params: &impl Fn(u32) -> ReduceParams,
    lanes: u32,
) -> Result<()> {
    let dev = &stream.device;
    let rows = params(0).rows as usize;
    let family = family_of(dev, input);
    let variant = family.variant("reduce_rows", &types, &[op_code as f64, lanes as f64]);
    let row_groups = rows.div_ceil((WG / lanes) as usize);
    let (groups, rows_per_y) = row_grid(1, row_groups, dev.limits.max_compute_workgroups_per_dimension);
    let args = [xa, Arg { name: "xv", ..xa }, oa];
    spec::record(stream, &Launch { variant, params: params(rows_per_y), args, groups })
}

/// `record` for an input generated from an expression (`fused`): the
/// default loads per invocation (or the device's setting), not tuned.
pub fn record_fused(
    stream: &StreamShared,
    fused: &dyn FusedInput,
    op_code: u32,
    types: [DType; 3],
    oa: Arg,
    params: impl Fn(u32) -> ReduceParams,
) -> Result<()> {
    let dev = &stream.device;
    let p0 = params(0);
    let lanes = lanes(p0.k_total as usize, dev.settings().reduce.row_loads.unwrap_or(LOADS));
    let row_groups = (p0.rows as usize).div_ceil((WG / lanes) as usize);
    let (groups, rows_per_y) = row_grid(1, row_groups, dev.limits.max_compute_workgroups_per_dimension);
    fused.record(stream, "reduce_rows", types, op_code, lanes, &params(rows_per_y), &[oa], groups)
}
