//! concat: each input copied into its slice of the output along one axis
//! (one launch per non-empty input, all planned before any is recorded),
//! with the strided copy of shaders/concat.wgsl. Split and slice need no
//! kernel: they are views (`slice_view`). 2-byte rows that are not 4-aligned
//! (odd widths) are copied a 4-byte word at a time (`copy_pairs`) unless
//! the device setting `WGC_CONCAT=scalar`, which keeps one element per invocation.

use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{
    self, check_output, pack_i32, pack_u32, view_arg, Family, Launch, OverrideSlot, Sharing, TypeSlot,
};
use crate::ops::tensor::{coalesce, same_device, DType, Tensor};
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

/// Workgroup sizes: 64 for small copies (more workgroups to spread), else 256.
const WG_SMALL: f64 = 64.0;
const WG_LARGE: f64 = 256.0;

pub static FAMILY: Family = Family {
    file: "concat.wgsl",
    source: include_str!("../../../shaders/concat.wgsl"),
    entries: &["copy", "copy_vec4", "copy_pairs"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16, DType::I32, DType::U32] }],
    overrides: &[OverrideSlot { name: "WG", values: &[WG_SMALL, WG_LARGE] }],
    uniform: <CopyParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of concat.wgsl.
    pub struct CopyParams = "Params" {
        pub n: u32,
        pub row: u32,
        pub rank: u32,
        pub x_offset: u32,
        pub y_offset: u32,
        pub width: u32,
        pub blocks: u32,
        pub _pad0: u32,
        pub shape: [[u32; 4]; 2],
        pub x_strides: [[i32; 4]; 2],
        pub y_strides: [[i32; 4]; 2],
    }
}

/// Destination words each copy_pairs invocation writes (PAIR_WORDS in the shader).
const PAIR_WORDS: usize = 2;

/// Whether unaligned 2-byte rows take copy_pairs: unless the device's
/// setting `WGC_CONCAT=scalar`.
fn pairs_enabled(dev: &Device) -> bool {
    !dev.settings().movement.concat_scalar
}

/// A planned copy: the element-wise kernels bind x and y, copy_pairs also their words.
enum Planned<'a> {
    Elements(Launch<'a, CopyParams, 2>),
    Pairs(Launch<'a, CopyParams, 4>),
}

impl Planned<'_> {
    fn record(&self, stream: &StreamShared) -> Result<()> {
        match self {
            Planned::Elements(l) => spec::record(stream, l),
            Planned::Pairs(l) => spec::record(stream, l),
        }
    }
}

/// The launch that copies `x` into `y` (same shape and dtype, checked).
fn plan_copy<'a>(stream: &StreamShared, x: &Tensor<'a>, y: &Tensor<'a>) -> Planned<'a> {
    let dev = &stream.device;
    let (xa, x_off) = view_arg("x", x);
    let (ya, y_off) = view_arg("y", y);
    let (mut shape, strides) = coalesce(&x.shape, &[x.strides.clone(), y.strides.clone()]);
    let (mut xs, mut ys) = (strides[0].clone(), strides[1].clone());
    if shape.is_empty() {
        (shape, xs, ys) = (vec![1], vec![0], vec![0]);
    }
    let last = shape.len() - 1;
    let vec4 = shape[last] % 4 == 0
        && xs[last] == 1
        && ys[last] == 1
        && xs[..last].iter().chain(&ys[..last]).all(|s| s % 4 == 0)
        && x_off % 4 == 0
        && y_off % 4 == 0;
    if !vec4 && x.dtype.size() == 2 && xs[last] == 1 && ys[last] == 1 && shape[last] >= 2 && pairs_enabled(dev) {
        return plan_pairs(stream, x, y, &shape, &xs, &ys);
    }
    let (mut x_offset, mut y_offset, mut units) = (x_off, y_off, x.numel());
    if vec4 {
        // The last dim steps one vec4 at a time; the others in whole vec4s.
        shape[last] /= 4;
        for s in xs[..last].iter_mut().chain(ys[..last].iter_mut()) {
            *s /= 4;
        }
        (x_offset, y_offset, units) = (x_off / 4, y_off / 4, units / 4);
    }
    let wg = if units < 1 << 14 { WG_SMALL } else { WG_LARGE };
    let (groups, row) = grid_1d(units as u64, wg as u32, dev.limits.max_compute_workgroups_per_dimension);
    let params = CopyParams {
        n: units as u32,
        row,
        rank: shape.len() as u32,
        x_offset,
        y_offset,
        width: 0,
        blocks: 0,
        _pad0: 0,
        shape: pack_u32(&shape, 1),
        x_strides: pack_i32(&xs),
        y_strides: pack_i32(&ys),
    };
    let (entry, xa, ya) = if vec4 {
        ("copy_vec4", spec::Arg { name: "x4", ..xa }, spec::Arg { name: "y4", ..ya })
    } else {
        ("copy", xa, ya)
    };
    Planned::Elements(Launch { variant: FAMILY.variant(entry, &[x.dtype], &[wg]), params, args: [xa, ya], groups })
}

/// copy_pairs for 2-byte rows contiguous in both views (coalesced `shape`
/// and strides, the last dim's stride 1): one row per `blocks` workgroups.
fn plan_pairs<'a>(
    stream: &StreamShared,
    x: &Tensor<'a>,
    y: &Tensor<'a>,
    shape: &[usize],
    xs: &[isize],
    ys: &[isize],
) -> Planned<'a> {
    let (xa, x_offset) = view_arg("x", x);
    let (ya, y_offset) = view_arg("y", y);
    let last = shape.len() - 1;
    let width = shape[last];
    let rows = x.numel() / width;
    // A row of w elements touches at most w / 2 + 1 destination words.
    let words = width / 2 + 1;
    let wg = if rows * words < 1 << 14 { WG_SMALL } else { WG_LARGE };
    let blocks = words.div_ceil(wg as usize * PAIR_WORDS);
    let max_dim = stream.device.limits.max_compute_workgroups_per_dimension;
    let (groups, row) = grid_1d((rows * blocks) as u64 * wg as u64, wg as u32, max_dim);
    let mut row_shape = shape.to_vec();
    row_shape[last] = 1;
    let params = CopyParams {
        n: rows as u32,
        row,
        rank: row_shape.len() as u32,
        x_offset,
        y_offset,
        width: width as u32,
        blocks: blocks as u32,
        _pad0: 0,
        shape: pack_u32(&row_shape, 1),
        x_strides: pack_i32(xs),
        y_strides: pack_i32(ys),
    };
    let args = [spec::Arg { name: "xw", ..xa }, xa, spec::Arg { name: "yw", ..ya }, ya];
    Planned::Pairs(Launch { variant: FAMILY.variant("copy_pairs", &[x.dtype], &[wg]), params, args, groups })
}

/// An axis in [-rank, rank) as an index.
fn axis_of(what: &str, axis: i32, rank: usize) -> Result<usize> {
    let a = if axis < 0 { axis as i64 + rank as i64 } else { axis as i64 };
    if a < 0 || a >= rank as i64 {
        bail!(OutOfRange, "{what}: axis {axis} is out of range for rank {rank}");
    }
    Ok(a as usize)
}

/// out = the inputs joined along `axis`: same rank and dtype as out, equal
/// shapes except along `axis`, whose lengths sum to out's.
pub fn concat(stream: &StreamShared, inputs: &[Tensor], axis: i32, out: &Tensor) -> Result<()> {
    let what = "concat";
    let dev = &stream.device;
    dev.check_alive()?;
    if inputs.is_empty() {
        bail!(InvalidArgument, "{what}: no inputs");
    }
    if out.rank() == 0 {
        bail!(InvalidArgument, "{what}: out must have rank 1 or more");
    }
    let axis = axis_of(what, axis, out.rank())?;
    let mut total = 0usize;
    for (i, t) in inputs.iter().enumerate() {
        same_device(dev, &[t])?;
        if t.dtype != out.dtype {
            bail!(DtypeMismatch, "{what}: input {i} is {}, out is {}", t.dtype.wgsl(), out.dtype.wgsl());
        }
        if t.rank() != out.rank() {
            bail!(ShapeMismatch, "{what}: input {i} has rank {}, out {}", t.rank(), out.rank());
        }
        if let Some(d) = (0..t.rank()).find(|&d| d != axis && t.shape[d] != out.shape[d]) {
            bail!(ShapeMismatch, "{what}: input {i} has {} entries along dim {d}, out {}", t.shape[d], out.shape[d]);
        }
        total += t.shape[axis];
    }
    same_device(dev, &[out])?;
    if total != out.shape[axis] {
        bail!(
            ShapeMismatch,
            "{what}: the inputs' lengths along axis {axis} sum to {total}, out has {}",
            out.shape[axis]
        );
    }
    out.dtype.check_device(dev)?;
    let named: Vec<(&str, &Tensor)> = inputs.iter().map(|t| ("an input", t)).collect();
    check_output(what, out, &named, Sharing::Separate)?;
    let mut launches = Vec::with_capacity(inputs.len());
    let mut start = 0usize;
    let mut slices = Vec::with_capacity(inputs.len());
    for t in inputs {
        let mut slice = out.clone();
        slice.shape[axis] = t.shape[axis];
        slice.offset = (out.offset as isize + start as isize * out.strides[axis]) as usize;
        start += t.shape[axis];
        slices.push(slice);
    }
    for (t, slice) in inputs.iter().zip(&slices) {
        if t.numel() > 0 {
            launches.push(plan_copy(stream, t, slice));
        }
    }
    for l in &launches {
        l.record(stream)?;
    }
    Ok(())
}

/// The view of `shape`/`strides`/`offset` keeping entries start, start +
/// step, ... below stop along `axis`: its (length, stride, offset).
/// Negative start and stop count from the end; after that
/// 0 <= start <= stop <= shape[axis] must hold, and step >= 1.
pub fn slice_view(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    axis: i32,
    start: i64,
    stop: i64,
    step: i64,
) -> Result<(usize, isize, usize)> {
    let what = "slice";
    let axis = axis_of(what, axis, shape.len())?;
    let n = shape[axis] as i64;
    let norm = |v: i64| if v < 0 { v + n } else { v };
    let (a, b) = (norm(start), norm(stop));
    if !(0 <= a && a <= b && b <= n) {
        bail!(OutOfRange, "{what}: [{start}, {stop}) is not a range within [0, {n}] along axis {axis}");
    }
    if step < 1 {
        bail!(InvalidArgument, "{what}: step must be at least 1, not {step}");
    }
    let len = (b - a + step - 1) / step;
    let first = offset as i64 + if len > 0 { a * strides[axis] as i64 } else { 0 };
    let stride = strides[axis] as i64 * step;
    if first < 0 || isize::try_from(stride).is_err() {
        bail!(OutOfRange, "{what}: the resulting view's offset or stride is out of range");
    }
    Ok((len as usize, stride as isize, first as usize))
}

#[cfg(test)]
mod tests {
    use super::slice_view;

    #[test]
    fn slices_are_views() {
        // rows 1, 3 of a [5, 4] row-major tensor at offset 2
        assert_eq!(slice_view(&[5, 4], &[4, 1], 2, 0, 1, 4, 2).unwrap(), (2, 8, 6));
        // the last 3 columns
        assert_eq!(slice_view(&[5, 4], &[4, 1], 0, -1, -3, 4, 1).unwrap(), (3, 1, 1));
        // empty
        assert_eq!(slice_view(&[5, 4], &[4, 1], 0, 0, 5, 5, 1).unwrap(), (0, 4, 0));
        assert!(slice_view(&[5, 4], &[4, 1], 0, 0, 3, 2, 1).is_err());
        assert!(slice_view(&[5, 4], &[4, 1], 0, 0, 0, 6, 1).is_err());
        assert!(slice_view(&[5, 4], &[4, 1], 0, 2, 0, 1, 1).is_err());
        assert!(slice_view(&[5, 4], &[4, 1], 0, 0, 0, 1, 0).is_err());
    }
}
