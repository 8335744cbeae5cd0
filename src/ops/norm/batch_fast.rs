//! Batch norm's fast routes: inputs laid out as NCHW planes (each (n, c)
//! plane contiguous) or as NHWC rows (channels contiguous), the layouts of
//! networks. They skip the per-element index decoding of the general kernel
//! and load vec4s where strides and offsets allow. Other views take the
//! general kernel (norm_batch.rs).

use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::tensor::DType;
use crate::ops::tensor::Tensor;
use crate::runtime::stream::StreamShared;

pub static FAMILY: Family = Family {
    file: "norm_batch_fast.wgsl",
    source: include_str!("../../../shaders/norm_batch_fast.wgsl"),
    entries: &["flat4", "planes4", "planes1", "rows4", "rows1"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[
        OverrideSlot { name: "HAS_W", values: &[0.0, 1.0] },
        OverrideSlot { name: "HAS_B", values: &[0.0, 1.0] },
    ],
    uniform: <BatchNormFastParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of norm_batch_fast.wgsl.
    pub struct BatchNormFastParams = "Params" {
        pub inner: u32,
        pub count: u32,
        pub chans: u32,
        pub eps: f32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub grid_y: u32,
        pub _pad0: u32,
        pub in_strides: [i32; 2],
        pub out_strides: [i32; 2],
        /// Offsets of mean, var, w, b.
        pub chan_offset: [u32; 4],
        pub chan_stride: [i32; 4],
    }
}

/// Invocations per workgroup of the planes entries (the shader's).
const PLANE_GROUP: u64 = 64;
/// Rows per invocation of the rows entries (the shader's ROWS).
const ROWS: u64 = 4;
/// Vec4s per invocation of the flat4 entry (the shader's FLAT).
const FLAT: u64 = 4;

/// Whether a planes walk of a (n, c, inner) view is one dense run.
fn dense(walk: Walk, n: usize, c: usize, inner: usize) -> bool {
    matches!(walk, Walk::Planes { outer, chan } if (n == 1 || outer == c * inner) && (c == 1 || chan == inner))
}

/// How one view (input or output) walks the tensor.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Walk {
    /// (outer, C, inner) with inner contiguous: strides of outer and C.
    Planes { outer: usize, chan: usize },
    /// (rows, C) with C contiguous: the row stride.
    Rows { row: usize },
}

/// Walk a view of shape (N, C, rest...) as planes: the rest contiguous.
fn planes(t: &Tensor) -> Option<Walk> {
    let inner: usize = t.shape[2..].iter().product();
    let mut expect = 1isize;
    for d in (2..t.rank()).rev() {
        if t.shape[d] > 1 && t.strides[d] != expect {
            return None;
        }
        expect *= t.shape[d] as isize;
    }
    let stride = |d: usize| if t.shape[d] > 1 { t.strides[d] } else { 0 };
    let (outer, chan) = (stride(0), stride(1));
    // Plane inner of length 1 is the rows layout's business.
    (inner > 1 && outer >= 0 && chan >= 0).then_some(Walk::Planes { outer: outer as usize, chan: chan as usize })
}

/// Walk a view of shape (N, C, rest...) as rows: C contiguous, and (N, rest...)
/// one evenly strided run of rows, row-major.
fn rows(t: &Tensor) -> Option<Walk> {
    if t.shape[1] > 1 && t.strides[1] != 1 {
        return None;
    }
    let dims: Vec<usize> = std::iter::once(0).chain(2..t.rank()).filter(|&d| t.shape[d] > 1).collect();
    let Some(&last) = dims.last() else {
        return Some(Walk::Rows { row: t.shape[1] });
    };
    for pair in dims.windows(2) {
        if t.strides[pair[0]] != t.strides[pair[1]] * t.shape[pair[1]] as isize {
            return None;
        }
    }
    let row = t.strides[last];
    (row >= t.shape[1] as isize).then_some(Walk::Rows { row: row as usize })
}

/// Record the fast route for batch norm if `input` and `out` both fit one of
/// its layouts; false (nothing recorded) otherwise. Arguments already
/// checked by the caller; `count` elements, nonzero.
#[allow(clippy::too_many_arguments)]
pub fn try_record<'a>(
    stream: &StreamShared,
    input: &Tensor<'a>,
    params: [&Tensor<'a>; 4],
    has: [bool; 2],
    eps: f32,
    out: &Tensor<'a>,
) -> Result<bool> {
    let (n, c) = (input.shape[0], input.shape[1]);
    let inner: usize = input.shape[2..].iter().product();
    let (x_off, y_off) = (input.bound_offset() as usize, out.bound_offset() as usize);
    // Element offsets are computed in u32 in the shader.
    let fits = |t: &Tensor| t.element_span().1 < u32::MAX as i128 / 2;
    if !fits(input) || !fits(out) {
        return Ok(false);
    }
    let dev = &stream.device;
    let max = dev.limits.max_compute_workgroups_per_dimension;
    let aligned = |v: &[usize]| v.iter().all(|s| s % 4 == 0);
    let plan = match (planes(input), planes(out), rows(input), rows(out)) {
        (Some(Walk::Planes { outer: io, chan: ic }), Some(Walk::Planes { outer: oo, chan: oc }), ..) => {
            let vec4 = aligned(&[inner, io, ic, oo, oc, x_off, y_off]);
            let per = if vec4 { inner / 4 } else { inner };
            let flat = [Walk::Planes { outer: io, chan: ic }, Walk::Planes { outer: oo, chan: oc }];
            if vec4 && flat.iter().all(|&w| dense(w, n, c, inner)) {
                let total = (n * c * per) as u64;
                let (groups, row) = grid_1d(total.div_ceil(FLAT), 256, max);
                if total > u32::MAX as u64 / 2 {
                    return Ok(false);
                }
                let plan = ("flat4", per, total as usize, [io, ic], [oo, oc], row, groups, vec4);
                return record(stream, plan, input, params, has, eps, out).map(|()| true);
            }
            let planes = (n * c) as u64;
            let gy = planes.min(max as u64);
            let gz = planes.div_ceil(gy);
            let gx = (per as u64).div_ceil(PLANE_GROUP);
            // Planes past 64 * 65535 vec4s (or a grid too large): the general kernel.
            if gz > max as u64 || gx > max as u64 {
                return Ok(false);
            }
            let groups = [gx as u32, gy as u32, gz as u32];
            (if vec4 { "planes4" } else { "planes1" }, per, n * c, [io, ic], [oo, oc], gy as u32, groups, vec4)
        }
        (.., Some(Walk::Rows { row: ir }), Some(Walk::Rows { row: or })) => {
            let vec4 = aligned(&[c, ir, or, x_off, y_off]);
            let per = if vec4 { c / 4 } else { c };
            let rows = n * inner;
            let threads = per as u64 * (rows as u64).div_ceil(ROWS);
            let (groups, row) = grid_1d(threads, 256, max);
            if threads > u32::MAX as u64 {
                return Ok(false);
            }
            (if vec4 { "rows4" } else { "rows1" }, per, rows, [ir, 0], [or, 0], row, groups, vec4)
        }
        _ => return Ok(false),
    };
    record(stream, plan, input, params, has, eps, out)?;
    Ok(true)
}

/// (entry, per, count, in strides, out strides, grid_y, groups, vec4).
type Plan = (&'static str, usize, usize, [usize; 2], [usize; 2], u32, [u32; 3], bool);

fn record<'a>(
    stream: &StreamShared,
    plan: Plan,
    input: &Tensor<'a>,
    params: [&Tensor<'a>; 4],
    has: [bool; 2],
    eps: f32,
    out: &Tensor<'a>,
) -> Result<()> {
    let c = input.shape[1];
    let (x_off, y_off) = (input.bound_offset() as usize, out.bound_offset() as usize);
    let (entry, per, count, in_strides, out_strides, grid_y, groups, vec4) = plan;
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let variant = FAMILY.variant(entry, &[input.dtype], &[flag(has[0]), flag(has[1])]);
    let wide = |scalar: &'static str, wide: &'static str, t: &Tensor<'a>| -> Arg<'a> {
        let (arg, _) = view_arg(scalar, t);
        Arg { name: if vec4 { wide } else { scalar }, ..arg }
    };
    let [m, v, w, b] = params;
    let (ma, m_off) = view_arg("mean", m);
    let (va, v_off) = view_arg("variance", v);
    let (wa, w_off) = view_arg("w", w);
    let (ba, b_off) = view_arg("b", b);
    let p = BatchNormFastParams {
        inner: per as u32,
        count: count as u32,
        chans: c as u32,
        eps,
        in_offset: x_off as u32,
        out_offset: y_off as u32,
        grid_y,
        _pad0: 0,
        in_strides: in_strides.map(|s| s as i32),
        out_strides: out_strides.map(|s| s as i32),
        chan_offset: [m_off, v_off, w_off, b_off],
        chan_stride: [m.strides[0], v.strides[0], w.strides[0], b.strides[0]].map(|s| s as i32),
    };
    let args = [wide("x", "x4", input), wide("y", "y4", out), ma, va, wa, ba];
    spec::record(stream, &Launch { variant, params: p, args, groups })
}
