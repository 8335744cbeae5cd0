//! Layer norm and RMS norm over the trailing dims: one workgroup per row,
//! rows cached in registers when contiguous and short enough, very long rows
//! cut into chunks of one workgroup each (see shaders/norm.wgsl); short
//! rows take the kernels of rows.rs.

use super::common::{check_param, check_rowwise};
use crate::bail;
use crate::error::Result;
use crate::ops::reduce::kernels::{row_grid, row_workgroup, strategy, ROW_WGS};
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{
    self, check_output, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot,
};
use crate::ops::split::{CHUNK_LEN, MAX_ITERS, SPLIT_WG};
use crate::ops::tensor::{coalesce, contiguous_strides, DType, Tensor};
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

const ENTRIES: &[&str] =
    &["norm_cached", "norm_vec4", "norm_strided", "norm_split_stats", "norm_split_write", "norm_cached_residual"];
const TYPES: &[TypeSlot] = &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }];
const FLAG: &[f64] = &[0.0, 1.0];
const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "WG", values: ROW_WGS },
    OverrideSlot { name: "CACHE", values: &[1.0, 2.0, 4.0, 8.0, 16.0] },
    OverrideSlot { name: "RMS", values: FLAG },
    OverrideSlot { name: "HAS_W", values: FLAG },
    OverrideSlot { name: "HAS_B", values: FLAG },
    // Compiled value by value offline (spec::SAMPLED_OVERRIDES).
    OverrideSlot { name: "LANES", values: &[0.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0] },
];

/// norm.wgsl with the workgroup reductions in workgroup memory only.
pub static FAMILY: Family = Family {
    file: "norm.wgsl",
    source: concat!(
        include_str!("../../../shaders/norm.wgsl"),
        include_str!("../../../shaders/reduce_wg_allreduce.wgsl"),
        include_str!("../../../shaders/reduce_wg_shared.wgsl")
    ),
    entries: ENTRIES,
    types: TYPES,
    overrides: OVERRIDES,
    uniform: <NormParams as spec::Uniform>::layout,
};

/// norm.wgsl with subgroup operations (adapters with subgroups only).
pub static FAMILY_SUBGROUPS: Family = Family {
    file: "norm.wgsl+subgroups",
    source: concat!(
        include_str!("../../../shaders/norm.wgsl"),
        include_str!("../../../shaders/reduce_wg_allreduce.wgsl"),
        include_str!("../../../shaders/reduce_wg_subgroups.wgsl")
    ),
    ..FAMILY
};

uniform! {
    /// The uniform of norm.wgsl.
    pub struct NormParams = "Params" {
        pub len: u32,
        pub rows: u32,
        pub rows_per_y: u32,
        pub outer_rank: u32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub w_offset: u32,
        pub b_offset: u32,
        pub inner_rank: u32,
        pub eps: f32,
        pub inv_len: f32,
        pub chunk_len: u32,
        pub chunks: u32,
        pub zero: u32,
        pub r_offset: u32,
        pub s_offset: u32,
        pub outer_shape: [[u32; 4]; 2],
        pub outer_in: [[i32; 4]; 2],
        pub outer_out: [[i32; 4]; 2],
        pub inner_shape: [[u32; 4]; 2],
        pub inner_in: [[i32; 4]; 2],
        pub inner_out: [[i32; 4]; 2],
        pub inner_w: [[i32; 4]; 2],
        pub inner_b: [[i32; 4]; 2],
    }
}

/// Most vec4 slots per invocation kept in registers.
pub(crate) const MAX_CACHE: usize = 16;

/// Layer norm (`rms` false) or RMS norm (`rms` true, `bias` must be None)
/// over the last `normalized_dims` dims of `input`.
#[allow(clippy::too_many_arguments)]
pub fn norm(
    stream: &StreamShared,
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    normalized_dims: u32,
    eps: f32,
    rms: bool,
    out: &Tensor,
) -> Result<()> {
    let what = if rms { "rms_norm" } else { "layer_norm" };
    check_rowwise(stream, input, out, what)?;
    let rank = input.rank();
    let nd = normalized_dims as usize;
    if nd == 0 || nd > rank {
        bail!(
            InvalidArgument,
            "{what}: normalized_dims {normalized_dims} must be in [1, {rank}] for a rank-{rank} input"
        );
    }
    if !eps.is_finite() || eps < 0.0 {
        bail!(InvalidArgument, "{what}: eps {eps} must be finite and >= 0");
    }
    let split = rank - nd;
    let inner: Vec<usize> = input.shape[split..].to_vec();
    check_param(stream, weight, input, &inner, "weight")?;
    check_param(stream, bias, input, &inner, "bias")?;
    let mut inputs = vec![("in", input)];
    inputs.extend(weight.map(|w| ("weight", w)));
    inputs.extend(bias.map(|b| ("bias", b)));
    check_output(what, out, &inputs, Sharing::Separate)?;
    let rows: usize = input.shape[..split].iter().product();
    let len: usize = inner.iter().product();
    if rows == 0 || len == 0 {
        return Ok(());
    }
    let args = super::rows::NormArgs { input, weight, bias, out, split };
    if let Some(plan) = super::rows::plan(stream, &args, eps, rms) {
        return plan.record(stream, &args);
    }
    let (outer_shape, outer) =
        coalesce(&input.shape[..split], &[input.strides[..split].to_vec(), out.strides[..split].to_vec()]);
    let dense = contiguous_strides(&inner);
    let w_strides = weight.map_or(dense.clone(), |w| w.strides.clone());
    let b_strides = bias.map_or(dense.clone(), |b| b.strides.clone());
    let (inner_shape, inner_s) =
        coalesce(&inner, &[input.strides[split..].to_vec(), out.strides[split..].to_vec(), w_strides, b_strides]);
    let aligned = |t: Option<&Tensor>| t.is_none_or(|t| t.offset % 4 == 0);
    let vec4 = inner_shape.len() == 1
        && inner_s.iter().all(|s| s[0] == 1)
        && len.is_multiple_of(4)
        && input.offset.is_multiple_of(4)
        && out.offset.is_multiple_of(4)
        && aligned(weight)
        && aligned(bias)
        && outer.iter().flatten().all(|s| s % 4 == 0);
    let wg = row_workgroup(if vec4 { len / 4 } else { len });
    let slots = (len / 4).div_ceil(wg).next_power_of_two();
    // Rows whose loads would take one invocation more than MAX_ITERS
    // iterations a pass are cut into chunks, one workgroup each.
    let iters = if vec4 { len / 4 } else { len }.div_ceil(wg);
    let chunks = if iters > MAX_ITERS { len.div_ceil(CHUNK_LEN) } else { 1 };
    let (entry, cache, wg) = match (vec4, slots <= MAX_CACHE) {
        _ if chunks > 1 => ("norm_split_stats", 1, SPLIT_WG),
        (true, true) => ("norm_cached", slots, wg),
        (true, false) => ("norm_vec4", 1, wg),
        (false, _) => ("norm_strided", 1, wg),
    };
    let dev = &stream.device;
    let family = strategy(dev, &FAMILY, &FAMILY_SUBGROUPS);
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let overrides =
        [wg as f64, cache as f64, flag(rms), flag(weight.is_some()), flag(bias.is_some()), lanes(dev, family)];
    let (groups, rows_per_y) = row_grid(chunks as u32, rows, dev.limits.max_compute_workgroups_per_dimension);
    // Absent parameters bind the input in their place (unread).
    let (w, b) = (weight.unwrap_or(input), bias.unwrap_or(input));
    let (xa, in_offset) = view_arg("x", input);
    let (ya, out_offset) = view_arg("y", out);
    let (wa, w_offset) = view_arg("w", w);
    let (ba, b_offset) = view_arg("b", b);
    let params = NormParams {
        len: len as u32,
        rows: rows as u32,
        rows_per_y,
        outer_rank: outer_shape.len() as u32,
        in_offset,
        out_offset,
        // Absent parameters are not read: their offsets are 0.
        w_offset: if weight.is_some() { w_offset } else { 0 },
        b_offset: if bias.is_some() { b_offset } else { 0 },
        inner_rank: inner_shape.len() as u32,
        eps,
        inv_len: 1.0 / len as f32,
        chunk_len: CHUNK_LEN as u32,
        chunks: chunks as u32,
        zero: 0,
        r_offset: 0,
        s_offset: 0,
        outer_shape: pack_u32(&outer_shape, 1),
        outer_in: pack_i32(&outer[0]),
        outer_out: pack_i32(&outer[1]),
        inner_shape: pack_u32(&inner_shape, 1),
        inner_in: pack_i32(&inner_s[0]),
        inner_out: pack_i32(&inner_s[1]),
        inner_w: pack_i32(&inner_s[2]),
        inner_b: pack_i32(&inner_s[3]),
    };
    let types = [input.dtype];
    if chunks > 1 {
        let stats = stream.ordered_scratch((rows * chunks * 8) as u64)?;
        let sa = Arg::whole("stats", &stats);
        let variant = family.variant(entry, &types, &overrides);
        spec::record(stream, &Launch { variant, params, args: [xa, sa], groups })?;
        let variant = family.variant("norm_split_write", &types, &overrides);
        return spec::record(stream, &Launch { variant, params, args: [xa, ya, wa, ba, sa], groups });
    }
    let variant = family.variant(entry, &types, &overrides);
    let args = if vec4 {
        [Arg { name: "xv", ..xa }, Arg { name: "yv", ..ya }, Arg { name: "wv", ..wa }, Arg { name: "bv", ..ba }]
    } else {
        [xa, ya, wa, ba]
    };
    spec::record(stream, &Launch { variant, params, args, groups })
}

/// The `LANES` override: the adapter's subgroup size for the subgroup
/// family where the adapter has only one size, else 0 (the kernel asks).
pub(crate) fn lanes(dev: &Device, family: &Family) -> f64 {
    let info = &dev.adapter.info;
    let fixed = info.subgroup_min_size == info.subgroup_max_size && (4..=128).contains(&info.subgroup_min_size);
    if std::ptr::eq(family, &FAMILY_SUBGROUPS) && fixed {
        info.subgroup_min_size as f64
    } else {
        0.0
    }
}
