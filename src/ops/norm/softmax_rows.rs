//! Softmax and log-softmax over short rows (shaders/softmax_rows.wgsl):
//! where one workgroup per row would leave most of it idle (rows of up to
//! `MAX_LEN` elements), a workgroup takes many rows, a team of a few
//! invocations each, the row read once into registers. Contiguous 4-aligned
//! rows load vec4s; any other layout loads scalars.

use crate::error::Result;
use crate::ops::norm::common::RowLayout;
use crate::ops::reduce::kernels::row_grid;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

/// Invocations per workgroup (the shader's WG).
pub(crate) const WG: usize = 256;
/// Longest row this path takes: up to here a row fits its team's registers.
pub(crate) const MAX_LEN: usize = 256;
/// Elements (or vec4s) one invocation holds at most (the shader's MAX_PER).
const MAX_PER: usize = 8;
/// Largest team: vec4 rows of MAX_LEN take 16 invocations of 4 vec4s.
const MAX_TEAM_VEC4: usize = 16;
const MAX_TEAM_SCALAR: usize = 32;

pub static FAMILY: Family = Family {
    file: "softmax_rows.wgsl",
    source: concat!(
        include_str!("../../../shaders/softmax_rows.wgsl"),
        include_str!("../../../shaders/row_teams.wgsl")
    ),
    entries: &["rows4", "rows1"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        OverrideSlot { name: "TEAM", values: &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0] },
        OverrideSlot { name: "PER", values: &[1.0, 2.0, 4.0, 8.0] },
        OverrideSlot { name: "LOG", values: &[0.0, 1.0] },
    ],
    uniform: <SoftmaxRowsParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of softmax_rows.wgsl.
    pub struct SoftmaxRowsParams = "Params" {
        pub rows: u32,
        pub len: u32,
        pub blocks_per_y: u32,
        pub outer_rank: u32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub in_stride: i32,
        pub out_stride: i32,
        pub outer_shape: [[u32; 4]; 2],
        pub outer_in: [[i32; 4]; 2],
        pub outer_out: [[i32; 4]; 2],
    }
}

/// How a row of `units` loads (elements or vec4s) is spread over a team:
/// the team size (a power of two up to `max_team`) and the loads per
/// invocation, rounded up to a power of two (the loop skips the ones past
/// the row). `None` if the row does not fit a team's registers.
pub fn team_shape(units: usize, max_team: usize) -> Option<(usize, usize)> {
    let team = units.next_power_of_two().clamp(1, max_team);
    let per = units.div_ceil(team).next_power_of_two();
    (per <= MAX_PER).then_some((team, per))
}

/// A softmax over short rows, planned.
pub struct Plan {
    entry: &'static str,
    overrides: [f64; 3],
    params: SoftmaxRowsParams,
    groups: [u32; 3],
}

/// The short-row plan for a softmax whose rows are `layout` (validated, no
/// empty rows), or `None` where rows are too long for it (the row kernels
/// take those).
pub fn plan(stream: &StreamShared, input: &Tensor, out: &Tensor, layout: &RowLayout, log: bool) -> Option<Plan> {
    if layout.len > MAX_LEN || layout.outer_shape.len() > 8 || layout.rows > u32::MAX as usize {
        return None;
    }
    let (in_offset, out_offset) = (input.bound_offset(), out.bound_offset());
    let vec4 = layout.vec4_ok(in_offset as usize, out_offset as usize);
    let (entry, units, max_team) =
        if vec4 { ("rows4", layout.len / 4, MAX_TEAM_VEC4) } else { ("rows1", layout.len, MAX_TEAM_SCALAR) };
    let (team, per) = team_shape(units, max_team)?;
    let blocks = layout.rows.div_ceil(WG / team);
    let (groups, blocks_per_y) = row_grid(1, blocks, stream.device.limits.max_compute_workgroups_per_dimension);
    let params = SoftmaxRowsParams {
        rows: layout.rows as u32,
        len: layout.len as u32,
        blocks_per_y,
        outer_rank: layout.outer_shape.len() as u32,
        in_offset,
        out_offset,
        in_stride: layout.in_stride as i32,
        out_stride: layout.out_stride as i32,
        outer_shape: pack_u32(&layout.outer_shape, 1),
        outer_in: pack_i32(&layout.outer_in),
        outer_out: pack_i32(&layout.outer_out),
    };
    Some(Plan { entry, overrides: [team as f64, per as f64, log as u8 as f64], params, groups })
}

impl Plan {
    /// Record the one launch; writes `out` only.
    pub fn record(&self, stream: &StreamShared, input: &Tensor, out: &Tensor) -> Result<()> {
        let variant = FAMILY.variant(self.entry, &[input.dtype], &self.overrides);
        let (xa, _) = view_arg("x", input);
        let (ya, _) = view_arg("y", out);
        let (xa, ya) =
            if self.entry == "rows4" { (Arg { name: "x4", ..xa }, Arg { name: "y4", ..ya }) } else { (xa, ya) };
        spec::record(stream, &Launch { variant, params: self.params, args: [xa, ya], groups: self.groups })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_short_row_fits_a_team() {
        for len in 1..=MAX_LEN {
            let (team, per) = team_shape(len, MAX_TEAM_SCALAR).unwrap();
            assert!(team * per >= len && per <= MAX_PER && team <= MAX_TEAM_SCALAR, "{len}");
            let (team, per) = team_shape(len.div_ceil(4), MAX_TEAM_VEC4).unwrap();
            assert!(team * per * 4 >= len && per <= MAX_PER, "{len}");
        }
    }
}
