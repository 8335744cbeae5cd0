//! index_select, gather and embedding: one kernel family (shaders/gather.wgsl)
//! that reads `x` at a position one index tensor supplies along one axis.
//! Each operator only describes its strides; `launch` plans the rest.

use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{
    self, check_output, pack_i32, pack_u32, view_arg, Family, Launch, OverrideSlot, Sharing, TypeSlot,
};
use crate::ops::tensor::{check_kernel_counts, coalesce, expect_shape, same_device, DType, Tensor};
use crate::runtime::stream::StreamShared;

const ALL_DTYPES: &[DType] = &[DType::F32, DType::F16, DType::I32, DType::U32];
/// Workgroup sizes: 64 for small outputs (more workgroups to spread), else 256.
const WG_SMALL: f64 = 64.0;
const WG_LARGE: f64 = 256.0;

pub static FAMILY: Family = Family {
    file: "gather.wgsl",
    source: include_str!("../../../shaders/gather.wgsl"),
    entries: &["gather", "gather_vec4"],
    types: &[TypeSlot { alias: "T", dtypes: ALL_DTYPES }, TypeSlot { alias: "I", dtypes: &[DType::I32, DType::U32] }],
    overrides: &[OverrideSlot { name: "WG", values: &[WG_SMALL, WG_LARGE] }],
    uniform: <GatherParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of gather.wgsl.
    pub struct GatherParams = "Params" {
        pub n: u32,
        pub row: u32,
        pub rank: u32,
        pub axis_len: u32,
        pub x_offset: u32,
        pub y_offset: u32,
        pub index_offset: u32,
        pub axis_stride: i32,
        pub shape: [[u32; 4]; 2],
        pub x_strides: [[i32; 4]; 2],
        pub y_strides: [[i32; 4]; 2],
        pub index_strides: [[i32; 4]; 2],
    }
}

/// A gather described by strides over out's dims: x's strides (0 along the
/// gathered axis), the index's strides (0 where it does not vary), and the
/// gathered axis's length and stride in x.
struct Gather<'t, 'a> {
    what: &'static str,
    x: &'t Tensor<'a>,
    index: &'t Tensor<'a>,
    out: &'t Tensor<'a>,
    x_strides: Vec<isize>,
    index_strides: Vec<isize>,
    axis_len: usize,
    axis_stride: isize,
}

/// Checks every gathering operator shares: devices, dtypes, the output.
fn check_common(stream: &StreamShared, what: &str, x: &Tensor, index: &Tensor, out: &Tensor) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[x, index, out])?;
    if !matches!(index.dtype, DType::I32 | DType::U32) {
        bail!(Unsupported, "{what}: indices must be i32 or u32, not {}", index.dtype.wgsl());
    }
    if out.dtype != x.dtype {
        bail!(DtypeMismatch, "{what}: out is {}, the source is {}", out.dtype.wgsl(), x.dtype.wgsl());
    }
    x.dtype.check_device(dev)?;
    check_output(what, out, &[("the source", x), ("the indices", index)], Sharing::Separate)?;
    Ok(())
}

fn launch(stream: &StreamShared, g: &Gather) -> Result<()> {
    let (x, index, out) = (g.x, g.index, g.out);
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    // A broadcast (zero-stride) source dim may be longer than kernels count.
    check_kernel_counts(g.what, &[("the gathered axis", g.axis_len)])?;
    if g.axis_len == 0 {
        bail!(OutOfRange, "{}: every index is out of range: the gathered axis has length 0", g.what);
    }
    let dev = &stream.device;
    let (xa, x_off) = view_arg("x", x);
    let (ia, i_off) = view_arg("index", index);
    let (ya, y_off) = view_arg("y", out);
    let (mut shape, strides) =
        coalesce(&out.shape, &[g.x_strides.clone(), out.strides.clone(), g.index_strides.clone()]);
    let (mut xs, mut ys, is) = (strides[0].clone(), strides[1].clone(), strides[2].clone());
    if shape.is_empty() {
        shape.push(1);
        xs.push(0);
        ys.push(0);
    }
    let is = if is.is_empty() { vec![0] } else { is };
    let last = shape.len() - 1;
    // Runs of `per` elements along the last dim, moved as one 16-byte word
    // (a vec4 of the dtype, or of u32 holding eight f16: a gather only
    // copies bits).
    let runs_of = |per: usize| {
        let per_i = per as isize;
        shape[last].is_multiple_of(per)
            && xs[last] == 1
            && ys[last] == 1
            && is[last] == 0
            && g.axis_stride % per_i == 0
            && xs[..last].iter().chain(&ys[..last]).all(|s| s % per_i == 0)
            && (x_off as usize).is_multiple_of(per)
            && (y_off as usize).is_multiple_of(per)
    };
    let per = if x.dtype == DType::F16 && runs_of(8) {
        8
    } else if runs_of(4) {
        4
    } else {
        1
    };
    let vec4 = per > 1;
    let (mut x_offset, mut y_offset, mut axis_stride, mut units) = (x_off, y_off, g.axis_stride, n);
    if vec4 {
        // The last dim steps one word at a time; the others in whole words.
        shape[last] /= per;
        for s in xs[..last].iter_mut().chain(ys[..last].iter_mut()) {
            *s /= per as isize;
        }
        let per32 = per as u32;
        (x_offset, y_offset, axis_stride, units) = (x_off / per32, y_off / per32, axis_stride / per as isize, n / per);
    }
    let wg = if units < 1 << 14 { WG_SMALL } else { WG_LARGE };
    let (groups, row) = grid_1d(units as u64, wg as u32, dev.limits.max_compute_workgroups_per_dimension);
    let params = GatherParams {
        n: units as u32,
        row,
        rank: shape.len() as u32,
        axis_len: g.axis_len as u32,
        x_offset,
        y_offset,
        index_offset: i_off,
        axis_stride: axis_stride as i32,
        shape: pack_u32(&shape, 1),
        x_strides: pack_i32(&xs),
        y_strides: pack_i32(&ys),
        index_strides: pack_i32(&is),
    };
    let word = if per == 8 { DType::U32 } else { x.dtype };
    let types = [word, index.dtype];
    if vec4 {
        let xa = spec::Arg { name: "x4", ..xa };
        let ya = spec::Arg { name: "y4", ..ya };
        let variant = FAMILY.variant("gather_vec4", &types, &[wg]);
        spec::record(stream, &Launch { variant, params, args: [xa, ia, ya], groups })
    } else {
        let variant = FAMILY.variant("gather", &types, &[wg]);
        spec::record(stream, &Launch { variant, params, args: [xa, ia, ya], groups })
    }
}

/// An axis in [-rank, rank) as an index (rank 0 counts as rank 1).
fn axis_of(what: &str, axis: i32, rank: usize) -> Result<usize> {
    let r = rank.max(1) as i32;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        bail!(OutOfRange, "{what}: axis {axis} is out of range for rank {rank}");
    }
    Ok(a as usize)
}

/// `out = x` with dim `axis` replaced by the 1-D `index`'s entries:
/// out[.., j, ..] = x[.., index[j], ..] (torch.index_select).
pub fn index_select(stream: &StreamShared, x: &Tensor, axis: i32, index: &Tensor, out: &Tensor) -> Result<()> {
    let what = "index_select";
    check_common(stream, what, x, index, out)?;
    if x.rank() == 0 {
        bail!(InvalidArgument, "{what}: the source must have rank 1 or more");
    }
    let axis = axis_of(what, axis, x.rank())?;
    if index.rank() != 1 {
        bail!(InvalidArgument, "{what}: the indices must be 1-D, not rank {}", index.rank());
    }
    let mut shape = x.shape.clone();
    shape[axis] = index.shape[0];
    expect_shape(out, &shape, "out")?;
    let mut x_strides = x.strides.clone();
    x_strides[axis] = 0;
    let mut index_strides = vec![0; x.rank()];
    index_strides[axis] = index.strides[0];
    launch(
        stream,
        &Gather {
            what,
            x,
            index,
            out,
            x_strides,
            index_strides,
            axis_len: x.shape[axis],
            axis_stride: x.strides[axis],
        },
    )
}

/// out[i..] = x[i.. with coordinate `axis` replaced by index[i..]]
/// (torch.gather): index has x's rank, out has index's shape, and along
/// every other dim index is no longer than x.
pub fn gather(stream: &StreamShared, x: &Tensor, axis: i32, index: &Tensor, out: &Tensor) -> Result<()> {
    let what = "gather";
    check_common(stream, what, x, index, out)?;
    if x.rank() == 0 {
        bail!(InvalidArgument, "{what}: the source must have rank 1 or more");
    }
    let axis = axis_of(what, axis, x.rank())?;
    if index.rank() != x.rank() {
        bail!(ShapeMismatch, "{what}: the indices have rank {}, the source {}", index.rank(), x.rank());
    }
    if let Some(d) = (0..x.rank()).find(|&d| d != axis && index.shape[d] > x.shape[d]) {
        bail!(
            ShapeMismatch,
            "{what}: along dim {d} the indices ({}) are longer than the source ({})",
            index.shape[d],
            x.shape[d]
        );
    }
    expect_shape(out, &index.shape, "out")?;
    let mut x_strides = x.strides.clone();
    x_strides[axis] = 0;
    let g = Gather {
        what,
        x,
        index,
        out,
        x_strides,
        index_strides: index.strides.clone(),
        axis_len: x.shape[axis],
        axis_stride: x.strides[axis],
    };
    launch(stream, &g)
}

/// Rows of `table` (shape [V, ...]) by index: out has shape
/// index.shape ++ table.shape[1..] and out[i.., ..] = table[index[i..], ..].
pub fn embedding(stream: &StreamShared, table: &Tensor, index: &Tensor, out: &Tensor) -> Result<()> {
    let what = "embedding";
    check_common(stream, what, table, index, out)?;
    if table.rank() == 0 {
        bail!(InvalidArgument, "{what}: the table must have rank 1 or more");
    }
    let mut shape = index.shape.clone();
    shape.extend_from_slice(&table.shape[1..]);
    expect_shape(out, &shape, "out")?;
    let row_dims = table.rank() - 1;
    let mut x_strides = vec![0; index.rank()];
    x_strides.extend_from_slice(&table.strides[1..]);
    let mut index_strides = index.strides.clone();
    index_strides.extend(std::iter::repeat_n(0, row_dims));
    let g = Gather {
        what,
        x: table,
        index,
        out,
        x_strides,
        index_strides,
        axis_len: table.shape[0],
        axis_stride: table.strides[0],
    };
    launch(stream, &g)
}
