//! Layer norm and RMS norm over short rows (shaders/norm_rows.wgsl): where
//! one workgroup per row would leave most of it idle (rows of up to
//! `softmax_rows::MAX_LEN` elements), a workgroup takes many rows, a team of
//! a few invocations each, the row read once into registers. Rows whose
//! normalised dims are contiguous and 4-aligned (weight and bias too) load
//! vec4s; any normalised dims that merge into one strided dim load scalars.

use crate::error::Result;
use crate::ops::norm::softmax_rows::{team_shape, MAX_LEN, WG};
use crate::ops::reduce::kernels::row_grid;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::tensor::{coalesce, DType, Tensor};
use crate::runtime::stream::StreamShared;

const MAX_TEAM_VEC4: usize = 16;
const MAX_TEAM_SCALAR: usize = 32;

pub static FAMILY: Family = Family {
    file: "norm_rows.wgsl",
    source: concat!(include_str!("../../../shaders/norm_rows.wgsl"), include_str!("../../../shaders/row_teams.wgsl")),
    entries: &["rows4", "rows1"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        OverrideSlot { name: "TEAM", values: &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0] },
        OverrideSlot { name: "PER", values: &[1.0, 2.0, 4.0, 8.0] },
        OverrideSlot { name: "RMS", values: &[0.0, 1.0] },
        OverrideSlot { name: "HAS_W", values: &[0.0, 1.0] },
        OverrideSlot { name: "HAS_B", values: &[0.0, 1.0] },
    ],
    uniform: <NormRowsParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of norm_rows.wgsl.
    pub struct NormRowsParams = "Params" {
        pub rows: u32,
        pub len: u32,
        pub blocks_per_y: u32,
        pub outer_rank: u32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub w_offset: u32,
        pub b_offset: u32,
        pub in_stride: i32,
        pub out_stride: i32,
        pub w_stride: i32,
        pub b_stride: i32,
        pub eps: f32,
        pub inv_len: f32,
        /// 0, unknown to the shader's compiler (see opaque() there).
        pub zero: u32,
        pub _pad0: u32,
        pub outer_shape: [[u32; 4]; 2],
        pub outer_in: [[i32; 4]; 2],
        pub outer_out: [[i32; 4]; 2],
    }
}

/// A norm over short rows, planned.
pub struct Plan {
    entry: &'static str,
    overrides: [f64; 5],
    params: NormRowsParams,
    groups: [u32; 3],
}

/// The inputs of a norm: `input`, `weight` and `bias` (validated by
/// `norm::norm`), normalised over the dims from `split` on.
pub struct NormArgs<'t, 'a> {
    pub input: &'t Tensor<'a>,
    pub weight: Option<&'t Tensor<'a>>,
    pub bias: Option<&'t Tensor<'a>>,
    pub out: &'t Tensor<'a>,
    pub split: usize,
}

/// The short-row plan for a norm (validated, no empty rows), or `None`
/// where rows are too long for it or their normalised dims do not merge
/// into one strided dim (the row kernels take those).
pub fn plan(stream: &StreamShared, a: &NormArgs, eps: f32, rms: bool) -> Option<Plan> {
    let (input, out, split) = (a.input, a.out, a.split);
    let rows: usize = input.shape[..split].iter().product();
    let len: usize = input.shape[split..].iter().product();
    if len > MAX_LEN || rows > u32::MAX as usize {
        return None;
    }
    let (outer_shape, outer) =
        coalesce(&input.shape[..split], &[input.strides[..split].to_vec(), out.strides[..split].to_vec()]);
    if outer_shape.len() > 8 {
        return None;
    }
    // Weight and bias have the normalised dims only; an absent one takes
    // the input's strides (it is never read).
    let param_strides = |t: Option<&Tensor>| t.map_or(input.strides[split..].to_vec(), |t| t.strides.clone());
    let all = [
        input.strides[split..].to_vec(),
        out.strides[split..].to_vec(),
        param_strides(a.weight),
        param_strides(a.bias),
    ];
    let (inner_shape, inner) = coalesce(&input.shape[split..], &all);
    let stride = |k: usize| match inner_shape.len() {
        0 => Some(1),
        1 => Some(inner[k][0]),
        _ => None,
    };
    let strides = [stride(0)?, stride(1)?, stride(2)?, stride(3)?];
    let offsets = [
        input.bound_offset(),
        out.bound_offset(),
        a.weight.map_or(0, |w| w.bound_offset()),
        a.bias.map_or(0, |b| b.bound_offset()),
    ];
    let vec4 = len.is_multiple_of(4)
        && strides.iter().all(|&s| s == 1)
        && offsets.iter().all(|o| o.is_multiple_of(4))
        && outer.iter().flatten().all(|s| s % 4 == 0);
    let (entry, units, max_team) =
        if vec4 { ("rows4", len / 4, MAX_TEAM_VEC4) } else { ("rows1", len, MAX_TEAM_SCALAR) };
    let (team, per) = team_shape(units, max_team)?;
    let blocks = rows.div_ceil(WG / team);
    let (groups, blocks_per_y) = row_grid(1, blocks, stream.device.limits.max_compute_workgroups_per_dimension);
    let params = NormRowsParams {
        rows: rows as u32,
        len: len as u32,
        blocks_per_y,
        outer_rank: outer_shape.len() as u32,
        in_offset: offsets[0],
        out_offset: offsets[1],
        w_offset: offsets[2],
        b_offset: offsets[3],
        in_stride: strides[0] as i32,
        out_stride: strides[1] as i32,
        w_stride: strides[2] as i32,
        b_stride: strides[3] as i32,
        eps,
        inv_len: 1.0 / len as f32,
        zero: 0,
        _pad0: 0,
        outer_shape: pack_u32(&outer_shape, 1),
        outer_in: pack_i32(&outer[0]),
        outer_out: pack_i32(&outer[1]),
    };
    let flag = |b: bool| b as u8 as f64;
    let overrides = [team as f64, per as f64, flag(rms), flag(a.weight.is_some()), flag(a.bias.is_some())];
    Some(Plan { entry, overrides, params, groups })
}

impl Plan {
    /// Record the one launch; writes `out` only. Absent parameters bind the
    /// input in their place (unread).
    pub fn record<'a>(&self, stream: &StreamShared, a: &NormArgs<'_, 'a>) -> Result<()> {
        let variant = FAMILY.variant(self.entry, &[a.input.dtype], &self.overrides);
        let vec4 = self.entry == "rows4";
        let arg = |scalar: &'static str, wide: &'static str, t: &Tensor<'a>| -> Arg<'a> {
            let (arg, _) = view_arg(scalar, t);
            Arg { name: if vec4 { wide } else { scalar }, ..arg }
        };
        let args = [
            arg("x", "x4", a.input),
            arg("y", "y4", a.out),
            arg("w", "w4", a.weight.unwrap_or(a.input)),
            arg("b", "b4", a.bias.unwrap_or(a.input)),
        ];
        spec::record(stream, &Launch { variant, params: self.params, args, groups: self.groups })
    }
}
