//! cumsum: inclusive prefix sums along one axis (shaders/cumsum.wgsl).
//! Contiguous axes (or few rows) are scanned by workgroups in tiles; strided
//! axes with many rows by one invocation per row and chunk, neighbours
//! reading neighbouring memory. Long rows are split into tiles or chunks
//! whose sums are scanned in a second pass and added in a third, so no
//! invocation runs more than about 60,000 loop iterations in all.

use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, check_output, pack_i32, pack_u32, view_arg, Arg, Family, Launch, Sharing, TypeSlot};
use crate::ops::split::scratch;
use crate::ops::tensor::{coalesce, expect_shape, same_device, DType, Tensor};
use crate::runtime::buffer::Buffer;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

const WG: u32 = 256;
/// Elements one workgroup scans at a time (WG * ITEMS in the shader).
const TILE: usize = 1024;
/// Most loop iterations one invocation may run, all its loops counted
/// together (lavapipe silently stops an invocation's loops at 65,535).
const MAX_LOOP: usize = 60_000;
/// Loop iterations per tile in `scan_rows` (two loops of 4 items, 8 scan
/// steps, the tile loop itself), with room to spare.
const LOOPS_PER_TILE: usize = 20;
/// Elements per chunk of the columns kind, at least.
const CHUNK: usize = 256;

pub static FAMILY: Family = Family {
    file: "cumsum.wgsl",
    source: include_str!("../../../shaders/cumsum.wgsl"),
    entries: &["scan_rows", "tile_sums", "scan_partials", "scan_tiles", "cols_direct", "cols_sums", "cols_apply"],
    types: &[
        TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16, DType::I32, DType::U32] },
        TypeSlot { alias: "A", dtypes: &[DType::F32, DType::I32, DType::U32] },
    ],
    overrides: &[],
    uniform: <ScanParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of cumsum.wgsl.
    pub struct ScanParams = "Params" {
        pub rows: u32,
        pub len: u32,
        pub count: u32,
        pub chunk: u32,
        pub row: u32,
        pub rank: u32,
        pub x_offset: u32,
        pub y_offset: u32,
        pub x_stride: i32,
        pub y_stride: i32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub shape: [[u32; 4]; 2],
        pub x_strides: [[i32; 4]; 2],
        pub y_strides: [[i32; 4]; 2],
    }
}

/// The accumulator: floats sum in f32, integers in their own type (wrapping).
fn accumulator(d: DType) -> DType {
    match d {
        DType::F16 => DType::F32,
        d => d,
    }
}

pub fn cumsum(stream: &StreamShared, x: &Tensor, axis: i32, out: &Tensor) -> Result<()> {
    let what = "cumsum";
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[x, out])?;
    if out.dtype != x.dtype {
        bail!(DtypeMismatch, "{what}: out is {}, in is {}", out.dtype.wgsl(), x.dtype.wgsl());
    }
    x.dtype.check_device(dev)?;
    expect_shape(out, &x.shape, "out")?;
    let r = x.rank().max(1) as i64;
    let a = if axis < 0 { axis as i64 + r } else { axis as i64 };
    if a < 0 || a >= r {
        bail!(OutOfRange, "{what}: axis {axis} is out of range for rank {}", x.rank());
    }
    check_output(what, out, &[("in", x)], Sharing::Separate)?;
    if x.numel() == 0 {
        return Ok(());
    }
    // A rank-0 tensor is one row of one element.
    let (shape, xs, ys, axis) = if x.rank() == 0 {
        (vec![1], vec![1], vec![1], 0)
    } else {
        (x.shape.clone(), x.strides.clone(), out.strides.clone(), a as usize)
    };
    let len = shape[axis];
    let others: Vec<usize> = (0..shape.len()).filter(|&d| d != axis).collect();
    let outer: Vec<usize> = others.iter().map(|&d| shape[d]).collect();
    let rows: usize = outer.iter().product();
    let (mut oshape, ostrides) =
        coalesce(&outer, &[others.iter().map(|&d| xs[d]).collect(), others.iter().map(|&d| ys[d]).collect()]);
    let (mut oxs, mut oys) = (ostrides[0].clone(), ostrides[1].clone());
    if oshape.is_empty() {
        (oshape, oxs, oys) = (vec![1], vec![0], vec![0]);
    }
    let (xa, x_off) = view_arg("x", x);
    let (ya, y_off) = view_arg("y", out);
    let params = |count: usize, chunk: usize, row: u32| ScanParams {
        rows: rows as u32,
        len: len as u32,
        count: count as u32,
        chunk: chunk as u32,
        row,
        rank: oshape.len() as u32,
        x_offset: x_off,
        y_offset: y_off,
        x_stride: xs[axis] as i32,
        y_stride: ys[axis] as i32,
        _pad0: 0,
        _pad1: 0,
        shape: pack_u32(&oshape, 1),
        x_strides: pack_i32(&oxs),
        y_strides: pack_i32(&oys),
    };
    let types = [x.dtype, accumulator(x.dtype)];
    let variant = |entry: &'static str| FAMILY.variant(entry, &types, &[]);
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    // Grids of one workgroup per item, and of one invocation per item.
    let per_group = |n: usize| grid_1d(n as u64, 1, max_dim);
    let per_invocation = |n: usize| grid_1d(n as u64, WG, max_dim);

    // Long rows: each piece's sum into `partials`, a scan of those sums per
    // row, then each piece scanned from its prefix; `items` is the grid of
    // the first and last passes (one item per piece).
    let three_passes = |[sums, scan, apply]: [&'static str; 3], count: usize, chunk: usize, items: ([u32; 3], u32)| {
        let parts = partials(stream, rows * count)?;
        let pa = Arg::whole("partials", &parts);
        let (g_items, row_items) = items;
        let (g_rows, row_rows) = per_group(rows);
        let first =
            Launch { variant: variant(sums), params: params(count, chunk, row_items), args: [xa, pa], groups: g_items };
        let middle =
            Launch { variant: variant(scan), params: params(count, chunk, row_rows), args: [pa], groups: g_rows };
        let last = Launch {
            variant: variant(apply),
            params: params(count, chunk, row_items),
            args: [xa, pa, ya],
            groups: g_items,
        };
        spec::record(stream, &first)?;
        spec::record(stream, &middle)?;
        spec::record(stream, &last)
    };

    let rows_kind = xs[axis].unsigned_abs() == 1 || rows < 64;
    if rows_kind {
        let tiles = len.div_ceil(TILE);
        if tiles <= 8 || (rows >= 512 && tiles * LOOPS_PER_TILE <= MAX_LOOP) {
            let (groups, row) = per_group(rows);
            let l = Launch { variant: variant("scan_rows"), params: params(tiles, TILE, row), args: [xa, ya], groups };
            return spec::record(stream, &l);
        }
        return three_passes(["tile_sums", "scan_partials", "scan_tiles"], tiles, TILE, per_group(rows * tiles));
    }
    if len <= CHUNK || (rows >= 1 << 16 && len <= MAX_LOOP) {
        let (groups, row) = per_invocation(rows);
        let l = Launch { variant: variant("cols_direct"), params: params(1, len, row), args: [xa, ya], groups };
        return spec::record(stream, &l);
    }
    let chunk = CHUNK.max(len.div_ceil(MAX_LOOP));
    let count = len.div_ceil(chunk);
    three_passes(["cols_sums", "scan_partials", "cols_apply"], count, chunk, per_invocation(rows * count))
}

fn partials(stream: &StreamShared, n: usize) -> Result<Arc<Buffer>> {
    let bytes = n as u64 * 4;
    let max = stream.device.limits.max_storage_buffer_binding_size;
    if bytes > max {
        bail!(TooLarge, "cumsum: {bytes} bytes of partial sums; the adapter binds at most {max}");
    }
    scratch(&stream.device, bytes)
}
