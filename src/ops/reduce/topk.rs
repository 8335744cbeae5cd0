//! topk along the last dim (shaders/topk.wgsl): rows of up to 2048 entries
//! are sorted by one workgroup each; longer rows are cut into chunks whose
//! best k survive, and those lists are merged in rounds until one per row
//! remains. Round r + 1 reads the lists round r wrote (two temporaries, used
//! in turn). For k <= 256 each workgroup orders only its best k (radix
//! select, then a sort of k: the SELECT override) instead of all 2048;
//! The device setting `WGC_TOPK=sort` keeps the full sort for timing against it.

use crate::bail;
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{
    self, check_output, pack_i32, pack_u32, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot,
};
use crate::ops::split::scratch;
use crate::ops::tensor::{check_kernel_counts, coalesce, expect_shape, same_device, DType, Tensor};
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

/// Entries one workgroup sorts (C in the shader).
const CHUNK: usize = 2048;
/// Largest k: a merge must take at least two lists of k.
pub(crate) const MAX_K: usize = CHUNK / 2;
/// Bytes per list entry (key, index).
const ENTRY: u64 = 8;
/// Largest k the select path orders (K_MAX in the shader).
const SELECT_MAX_K: usize = 256;

/// Whether k entries are found by radix select rather than a full sort:
/// unless the device's setting `WGC_TOPK=sort`.
fn use_select(dev: &Device, k: usize) -> bool {
    k <= SELECT_MAX_K && !dev.settings().reduce.topk_sort
}

pub static FAMILY: Family = Family {
    file: "topk.wgsl",
    source: include_str!("../../../shaders/topk.wgsl"),
    entries: &["chunk_to_out", "chunk_to_scratch", "merge_to_scratch", "merge_to_out"],
    types: &[
        TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16, DType::I32, DType::U32] },
        TypeSlot { alias: "I", dtypes: &[DType::I32, DType::U32] },
    ],
    overrides: &[
        OverrideSlot { name: "LARGEST", values: &[0.0, 1.0] },
        OverrideSlot { name: "SELECT", values: &[0.0, 1.0] },
    ],
    uniform: <TopkParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of topk.wgsl.
    pub struct TopkParams = "Params" {
        pub rows: u32,
        pub len: u32,
        pub k: u32,
        pub lists: u32,
        pub per_group: u32,
        pub out_lists: u32,
        pub row: u32,
        pub rank: u32,
        pub kind: u32,
        pub x_offset: u32,
        pub v_offset: u32,
        pub i_offset: u32,
        pub x_stride: i32,
        pub v_stride: i32,
        pub i_stride: i32,
        pub _pad0: u32,
        pub shape: [[u32; 4]; 2],
        pub x_strides: [[i32; 4]; 2],
        pub v_strides: [[i32; 4]; 2],
        pub i_strides: [[i32; 4]; 2],
    }
}

/// How the kernel orders a dtype's bits (Params.kind).
fn kind(d: DType) -> u32 {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => 0,
        DType::I32 => 1,
        DType::U32 => 2,
    }
}

/// The k largest (or smallest) entries of each row of `x` along its last
/// dim, best first, ties by lower index, NaN above every number.
pub fn topk(
    stream: &StreamShared,
    x: &Tensor,
    k: usize,
    largest: bool,
    values: &Tensor,
    indices: &Tensor,
) -> Result<()> {
    let what = "topk";
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[x, values, indices])?;
    if x.rank() == 0 {
        bail!(InvalidArgument, "{what}: in must have rank 1 or more");
    }
    if values.dtype != x.dtype {
        bail!(DtypeMismatch, "{what}: values is {}, in is {}", values.dtype.wgsl(), x.dtype.wgsl());
    }
    if !matches!(indices.dtype, DType::I32 | DType::U32) {
        bail!(Unsupported, "{what}: indices must be i32 or u32, not {}", indices.dtype.wgsl());
    }
    x.dtype.check_device(dev)?;
    let rank = x.rank();
    let len = x.shape[rank - 1];
    // A broadcast (zero-stride) last dim may be longer than kernels count.
    check_kernel_counts(what, &[("the last dim", len)])?;
    if k > len {
        bail!(OutOfRange, "{what}: k = {k} exceeds the last dim's {len} entries");
    }
    if k > MAX_K {
        bail!(Unsupported, "{what}: k = {k}; at most {MAX_K} is supported");
    }
    let mut shape = x.shape.clone();
    shape[rank - 1] = k;
    expect_shape(values, &shape, "values")?;
    expect_shape(indices, &shape, "indices")?;
    check_output(what, values, &[("in", x), ("indices", indices)], Sharing::Separate)?;
    check_output(what, indices, &[("in", x)], Sharing::Separate)?;
    let rows: usize = x.shape[..rank - 1].iter().product();
    if rows == 0 || k == 0 {
        return Ok(());
    }

    let (mut oshape, strides) = coalesce(
        &x.shape[..rank - 1],
        &[x.strides[..rank - 1].to_vec(), values.strides[..rank - 1].to_vec(), indices.strides[..rank - 1].to_vec()],
    );
    let (mut xs, mut vs, mut is) = (strides[0].clone(), strides[1].clone(), strides[2].clone());
    if oshape.is_empty() {
        (oshape, xs, vs, is) = (vec![1], vec![0], vec![0], vec![0]);
    }
    let (xa, x_off) = view_arg("x", x);
    let (va, v_off) = view_arg("values", values);
    let (ia, i_off) = view_arg("indices", indices);
    let max_dim = dev.limits.max_compute_workgroups_per_dimension;
    let grid = |groups: usize| grid_1d(groups as u64, 1, max_dim);
    let params = |lists: usize, per_group: usize, out_lists: usize, row: u32| TopkParams {
        rows: rows as u32,
        len: len as u32,
        k: k as u32,
        lists: lists as u32,
        per_group: per_group as u32,
        out_lists: out_lists as u32,
        row,
        rank: oshape.len() as u32,
        kind: kind(x.dtype),
        x_offset: x_off,
        v_offset: v_off,
        i_offset: i_off,
        x_stride: x.strides[rank - 1] as i32,
        v_stride: values.strides[rank - 1] as i32,
        i_stride: indices.strides[rank - 1] as i32,
        _pad0: 0,
        shape: pack_u32(&oshape, 1),
        x_strides: pack_i32(&xs),
        v_strides: pack_i32(&vs),
        i_strides: pack_i32(&is),
    };
    let types = [x.dtype, indices.dtype];
    let select = use_select(&stream.device, k);
    let variant = |entry| FAMILY.variant(entry, &types, &[largest as u32 as f64, select as u32 as f64]);

    let chunks = len.div_ceil(CHUNK);
    if chunks == 1 {
        let (groups, row) = grid(rows);
        let l = Launch { variant: variant("chunk_to_out"), params: params(1, 1, 1, row), args: [xa, va, ia], groups };
        return spec::record(stream, &l);
    }
    // Rounds: chunks -> lists of k; then groups of `per_group` lists -> one
    // list each, until one group per row is left for the final merge.
    let per_group = CHUNK / k;
    let mut rounds = vec![chunks];
    while *rounds.last().unwrap() > per_group {
        rounds.push(rounds.last().unwrap().div_ceil(per_group));
    }
    let bytes = |lists: usize| (rows * lists) as u64 * k as u64 * ENTRY;
    let max = dev.limits.max_storage_buffer_binding_size;
    if bytes(chunks) > max {
        bail!(TooLarge, "{what}: {} bytes of candidate lists; the adapter binds at most {max}", bytes(chunks));
    }
    let first = scratch(dev, bytes(chunks))?;
    let second = scratch(dev, bytes(rounds.get(1).copied().unwrap_or(1)))?;
    let bufs = [&first, &second];
    let (groups, row) = grid(rows * chunks);
    let l = Launch {
        variant: variant("chunk_to_scratch"),
        params: params(1, 1, chunks, row),
        args: [xa, Arg::whole("lists_out", bufs[0])],
        groups,
    };
    spec::record(stream, &l)?;
    for (r, w) in rounds.windows(2).enumerate() {
        let (lists, out_lists) = (w[0], w[1]);
        let (groups, row) = grid(rows * out_lists);
        let l = Launch {
            variant: variant("merge_to_scratch"),
            params: params(lists, per_group, out_lists, row),
            args: [Arg::whole("lists_in", bufs[r % 2]), Arg::whole("lists_out", bufs[(r + 1) % 2])],
            groups,
        };
        spec::record(stream, &l)?;
    }
    let last = rounds.len() - 1;
    let (groups, row) = grid(rows);
    let l = Launch {
        variant: variant("merge_to_out"),
        params: params(rounds[last], per_group, 1, row),
        args: [xa, Arg::whole("lists_in", bufs[last % 2]), va, ia],
        groups,
    };
    spec::record(stream, &l)
}
