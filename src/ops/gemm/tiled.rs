//! The tiled GEMM (shaders/matmul.wgsl with the micro-kernel of
//! shaders/gemm_tile.wgsl, which conv.wgsl shares): any dtype the GEMM
//! takes, any strides, RM x RN blocks of 64 x 64 per workgroup, K split
//! into runs summed by the split-K pass where it is long or where too few
//! tiles would leave the GPU idle. The route every product can take.

use crate::bail;
use crate::error::Result;
use crate::ops::gemm::coop::Split;
use crate::ops::gemm::epilogue::EpilogueViews;
use crate::ops::gemm::problem::Problem;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::route::{TiledEntry, TiledRoute};
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::{sum_slabs_epilogue, FLOATS};
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, Arg, Family, Launch, OverrideSlot, TypeSlot};
use crate::ops::split::runs_to_fill;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

/// The tiled GEMM (shaders/matmul.wgsl with the micro-kernel of
/// shaders/gemm_tile.wgsl, which conv.wgsl shares). RM and RN: blocks of 64
/// rows and columns per workgroup; A_LAYOUT, B_LAYOUT, C_LAYOUT: which
/// strides are a compile-time 1 (see `Layouts`); BIAS: a per-row addend.
pub static FAMILY: Family = Family {
    file: "matmul.wgsl",
    source: concat!(
        include_str!("../../../shaders/matmul.wgsl"),
        include_str!("../../../shaders/matmul_operands.wgsl"),
        include_str!("../../../shaders/gemm_tile.wgsl")
    ),
    entries: &["gemm", "gemm_c4", "gemm_split"],
    types: &[TypeSlot { alias: "IN", dtypes: FLOATS }, TypeSlot { alias: "OUT", dtypes: FLOATS }],
    overrides: OVERRIDES,
    uniform: <GemmParams as spec::Uniform>::layout,
};

/// The tiled kernels for bf16 A and B (read as words and widened to f32 as
/// the tiles are staged) and an f32 C; IN and OUT are f32.
pub static FAMILY_BF16: Family = Family {
    file: "matmul.wgsl+bf16",
    source: concat!(
        include_str!("../../../shaders/matmul.wgsl"),
        include_str!("../../../shaders/matmul_operands_bf16.wgsl"),
        include_str!("../../../shaders/gemm_tile.wgsl")
    ),
    entries: &["gemm", "gemm_c4", "gemm_split"],
    types: &[TypeSlot { alias: "IN", dtypes: &[DType::F32] }, TypeSlot { alias: "OUT", dtypes: &[DType::F32] }],
    overrides: OVERRIDES,
    uniform: <GemmParams as spec::Uniform>::layout,
};

const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "RM", values: &[1.0, 2.0] },
    OverrideSlot { name: "RN", values: &[1.0, 2.0] },
    OverrideSlot { name: "A_LAYOUT", values: &[0.0, 1.0, 2.0, 3.0] },
    OverrideSlot { name: "B_LAYOUT", values: &[0.0, 1.0, 2.0, 3.0] },
    OverrideSlot { name: "C_LAYOUT", values: &[0.0, 1.0, 2.0] },
    OverrideSlot { name: "BIAS", values: &[0.0, 1.0] },
];

uniform! {
    /// The uniform of matmul.wgsl.
    pub struct GemmParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub k: u32,
        pub batch_rank: u32,
        pub alpha: f32,
        pub beta: f32,
        pub a_sm: i32,
        pub a_sk: i32,
        pub b_sk: i32,
        pub b_sn: i32,
        pub c_sm: i32,
        pub c_sn: i32,
        pub a_off: u32,
        pub b_off: u32,
        pub c_off: u32,
        pub bias_off: u32,
        pub batch_shape: [[u32; 4]; 2],
        pub a_bstride: [[i32; 4]; 2],
        pub b_bstride: [[i32; 4]; 2],
        pub c_bstride: [[i32; 4]; 2],
        pub bias_stride: i32,
        pub k_chunk: u32,
        pub parts: u32,
        pub split0: u32,
        pub accumulate: u32,
        pub batches: u32,
        pub _pad0: [u32; 2],
    }
}

/// True if a dim's stride can be compiled in as 1.
fn unit(dim: usize, stride: isize) -> bool {
    dim <= 1 || stride == 1
}

/// An operand's layout override (matmul.wgsl's A_LAYOUT and B_LAYOUT) from
/// the dim its threads prefer to walk (`fast`: k of A, n of B) and the
/// other (`slow`), each (size, stride): 2 the fast stride is 1, 3 the slow
/// one is, else 0 or 1 as the fast dim's stride is the smaller or not.
fn operand_layout(fast: (usize, isize), slow: (usize, isize)) -> u8 {
    if unit(fast.0, fast.1) {
        2
    } else if unit(slow.0, slow.1) {
        3
    } else if fast.1.abs() <= slow.1.abs() {
        0
    } else {
        1
    }
}

/// The tiled kernel's blocks: 128-wide tiles where there are enough of them
/// to fill a large GPU.
fn blocks(m: usize, n: usize, batch_count: usize) -> (usize, usize) {
    let tiles64 = m.div_ceil(64) * n.div_ceil(64) * batch_count;
    let big = tiles64 >= 1024;
    (if big && m > 64 { 2 } else { 1 }, if big && n > 64 { 2 } else { 1 })
}

/// The shortest K run a split for filling makes: 16 steps of the tile's K
/// (shorter runs cost more in slab traffic than the SMs they fill).
const TILED_MIN_SPLIT_K: usize = 256;

/// How many K runs (summed by the second pass) a tiled product of `tiles`
/// workgroups takes so that about `fill` (the `tiled_fill` setting: four
/// per SM of an H200's 132; 0: no splits for filling) run: 1 where the
/// tiles alone are a quarter of them (one per SM) or K is short. A 3000 x
/// 50 output is 47 tiles of 64 x 64, which leave most of a 132-SM GPU idle
/// (H100: 0.241 -> 0.090 ms in 12 runs; 512 x 512 x 8192, 64 tiles: 0.386
/// -> 0.181 ms), while 256 tiles (1000^3) ran as fast or 8% slower in 3.
fn fill_splits_for(tiles: usize, k: usize, fill: usize) -> usize {
    if tiles * 4 > fill {
        return 1;
    }
    runs_to_fill(tiles, k, fill, TILED_MIN_SPLIT_K)
}

/// The tiled kernel's blocks (rm, rn) and runs of K for an m x n x k
/// product over `batch` matrices, given the blocks `blocks` chose. Where
/// too few 64 x 64 tiles fill the GPU and K is long enough to split, tiles
/// 128 wide (where m or n exceed 64) over runs of K, aiming for half as
/// many workgroups (each has two or four times the work). Measured on an
/// H200 against 64 x 64 tiles aiming for 528: 512 x 512 x 8192 0.180 ->
/// 0.142 ms, 3000 x 50 x 5000 0.089 -> 0.077 (128-wide tiles aiming for
/// 528 or 1056: 0.160-0.161 and 0.091-0.092). One or two 64 x 64 tiles
/// per SM: `one_or_two_per_sm`. The `tiled_blocks` setting
/// (WGC_GEMM_TILED_BLOCKS, `RMxRN`) fixes the blocks, for comparisons.
fn split_tiles(
    s: &GemmSettings,
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    (rm, rn): (usize, usize),
) -> (usize, usize, usize) {
    let fill_target = s.tiled_fill;
    if let Some((rm, rn)) = s.tiled_blocks {
        let tiles = m.div_ceil(64 * rm) * n.div_ceil(64 * rn) * batch;
        return (rm, rn, runs_to_fill(tiles, k, fill_target, TILED_MIN_SPLIT_K));
    }
    let tiles64 = m.div_ceil(64) * n.div_ceil(64) * batch;
    let fill = fill_splits_for(tiles64, k, fill_target);
    if rm * rn > 1 {
        return (rm, rn, fill);
    }
    if fill <= 1 {
        return one_or_two_per_sm(fill_target, m, n, k, batch, tiles64).unwrap_or((rm, rn, fill));
    }
    let (wide_m, wide_n) = (if m > 64 { 2 } else { 1 }, if n > 64 { 2 } else { 1 });
    if wide_m * wide_n == 1 {
        return (rm, rn, fill);
    }
    let tiles = m.div_ceil(64 * wide_m) * n.div_ceil(64 * wide_n) * batch;
    match fill_splits_for(tiles, k, fill_target / 2) {
        wide_fill if wide_fill > 1 => (wide_m, wide_n, wide_fill),
        _ => (rm, rn, fill),
    }
}

/// Blocks and runs for products of one or two 64 x 64 tiles per SM (too
/// many for `fill_splits_for` to split, too few to keep the SMs busy):
/// tiles 128 rows high over runs of K at least ONE_OR_TWO_MIN_RUN long,
/// aiming for half the fill's workgroups. A sweep of blocks and fills on
/// an H200 (8192 x 100 x 2048, 256 tiles; bench/results/2026-11-26e/call4 at 317f233)
/// found this fastest: 0.161 -> 0.155 ms (128 x 128 over runs for 528:
/// 0.160; 64 x 64 over runs for 1056 or 2112: 0.171-0.176).
fn one_or_two_per_sm(
    fill: usize,
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    tiles64: usize,
) -> Option<(usize, usize, usize)> {
    if m <= 64 || tiles64 * 2 > fill {
        return None;
    }
    let tiles = m.div_ceil(128) * n.div_ceil(64) * batch;
    let runs = runs_to_fill(tiles, k, fill / 2, ONE_OR_TWO_MIN_RUN);
    (runs > 1).then_some((2, 1, runs))
}

/// The shortest run `one_or_two_per_sm` makes. On an H100, 3 runs of 683
/// (8192 x 100 x 2048) were 4-5% faster than none, 3 runs of 333 (1000^3)
/// 10% slower: each run writes and reads an f32 slab the size of C, so
/// the shorter the run, the more that traffic weighs against its FMAs
/// (bench/results/2026-11-26e/call5 at 317f233).
const ONE_OR_TWO_MIN_RUN: usize = 512;

/// The longest K for which the tiled kernel stores C as vec4s. The
/// stores' share of the time falls as K grows: measured on an H200, vec4
/// stores took attention scores (K 64 and 128) 15-34% faster, bmm 512 x
/// 128^3 26%, a 65536 x 64 x 64 product 32% and 1000^3 5%, while at K 4096
/// they made an f32 linear layer with its weight stored (N, K) 4% slower
/// (squares 1% faster).
const TILED_C4_MAX_K: usize = 2048;

/// True if every group of four columns 4j..4j+3 of C (n columns, column
/// stride `c_sn`, row stride `c_sm`, element offset `c_off` from its
/// binding, batch strides `c_bs`) is one aligned vec4 inside a row: the
/// tiled kernel then stores C four columns at a time (gemm_c4).
fn c_in_vec4s(n: usize, c_sn: isize, c_sm: isize, c_off: u32, c_bs: &[isize]) -> bool {
    c_sn == 1 && n.is_multiple_of(4) && c_sm % 4 == 0 && c_off.is_multiple_of(4) && c_bs.iter().all(|s| s % 4 == 0)
}

/// The tiled route for `q`: blocks by shape (`blocks`), widened and K
/// split where too few tiles fill the GPU (`split_tiles`), C stored as
/// vec4s where every group of four columns is one aligned vec4; TooLarge where the grid or the slabs exceed the adapter.
pub fn plan(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> Result<TiledRoute> {
    let (m, n, k) = (q.m, q.n, q.k);
    let batch_count = q.batch_count;
    let (rm, rn, fill) = split_tiles(s, m, n, k, batch_count, blocks(m, n, batch_count));
    let [a_sm, a_sk] = q.a.strides;
    let [b_sk, b_sn] = q.b.strides;
    let [c_sm, c_sn] = q.c.strides;
    let layouts = [
        operand_layout((k, a_sk), (m, a_sm)),
        operand_layout((n, b_sn), (k, b_sk)),
        if unit(n, c_sn) {
            1
        } else if unit(m, c_sm) {
            2
        } else {
            0
        },
    ];
    let groups = [n.div_ceil(64 * rn) as u32, m.div_ceil(64 * rm) as u32, batch_count as u32];
    let max_dim = p.max_workgroups_per_dim;
    if groups[0] as usize > max_dim || groups[1] as usize > max_dim {
        bail!(TooLarge, "gemm: {m}x{n} output needs more workgroups than this adapter allows per dimension");
    }
    let outputs = q.outputs();
    let mut split = Split::plan(p, s, k, outputs, batch_count, 16)?;
    if split.splits == 1 && fill > 1 {
        if let Ok(more) = Split::into(p, s, k, fill, outputs, batch_count, 16) {
            if more.parts == more.splits {
                split = more;
            }
        }
    }
    let entry = if split.splits > 1 {
        TiledEntry::Split
    } else if k <= TILED_C4_MAX_K && c_in_vec4s(n, c_sn, c_sm, q.c.offset, &q.c.batch_strides) {
        TiledEntry::GemmC4
    } else {
        TiledEntry::Gemm
    };
    let groups =
        if entry == TiledEntry::Split { [groups[0], groups[1], (batch_count * split.parts) as u32] } else { groups };
    Ok(TiledRoute { rm, rn, layouts, entry, split, groups })
}

/// Record a planned tiled product of the views `q` describes (`bias`: the
/// row or column bias's binding, offset and stride; `epi`: the epilogue's
/// tensors). The kernel applies no epilogue: a problem with one comes here
/// only split over K (the planner sends the others through f32 scratch and
/// one pass), and the split-K pass applies it.
pub fn record(
    stream: &StreamShared,
    q: &Problem,
    route: &TiledRoute,
    (a, b, c): (&Tensor, &Tensor, &Tensor),
    bias: Option<(Arg, u32, isize)>,
    epi: Option<&EpilogueViews>,
) -> Result<()> {
    let (a_arg, a_off) = spec::view_arg("a", a);
    let (b_arg, b_off) = spec::view_arg("b", b);
    let (c_arg, c_off) = spec::view_arg("c", c);
    // Without a bias the kernel's bias binding still needs a buffer: a's.
    let (bias_arg, bias_off, bias_stride) = bias.unwrap_or((Arg { name: "bias", ..a_arg }, 0, 0));
    let bias_arg = Arg { name: "bias", ..bias_arg };
    debug_assert!(route.entry == TiledEntry::Split || q.epilogue.is_none(), "the tiled kernel applies no epilogue");
    let split = route.split;
    let params = |split0: usize, accumulate: bool| GemmParams {
        m: q.m as u32,
        n: q.n as u32,
        k: q.k as u32,
        batch_rank: q.batch.len() as u32,
        alpha: q.alpha,
        beta: q.beta,
        a_sm: q.a.strides[0] as i32,
        a_sk: q.a.strides[1] as i32,
        b_sk: q.b.strides[0] as i32,
        b_sn: q.b.strides[1] as i32,
        c_sm: q.c.strides[0] as i32,
        c_sn: q.c.strides[1] as i32,
        a_off,
        b_off,
        c_off,
        bias_off,
        batch_shape: pack_u32(&q.batch, 1),
        a_bstride: pack_i32(&q.a.batch_strides),
        b_bstride: pack_i32(&q.b.batch_strides),
        c_bstride: pack_i32(&q.c.batch_strides),
        bias_stride: bias_stride as i32,
        k_chunk: split.k_chunk as u32,
        parts: split.parts as u32,
        split0: split0 as u32,
        accumulate: accumulate as u32,
        batches: q.batch_count as u32,
        _pad0: [0; 2],
    };
    let has_bias = if q.bias.is_some() { 1.0 } else { 0.0 };
    let [la, lb, lc] = route.layouts.map(f64::from);
    let overrides = [route.rm as f64, route.rn as f64, la, lb, lc, has_bias];
    let (family, types) =
        if q.dtype == DType::BF16 { (&FAMILY_BF16, [DType::F32; 2]) } else { (&FAMILY, [q.dtype, q.out]) };
    let groups = route.groups;
    match route.entry {
        TiledEntry::GemmC4 => {
            let variant = family.variant("gemm_c4", &types, &overrides);
            let args = [a_arg, b_arg, Arg { name: "c4", ..c_arg }, bias_arg];
            spec::record(stream, &Launch { variant, params: params(0, false), args, groups })
        }
        TiledEntry::Gemm => {
            let variant = family.variant("gemm", &types, &overrides);
            let args = [a_arg, b_arg, c_arg, bias_arg];
            spec::record(stream, &Launch { variant, params: params(0, false), args, groups })
        }
        TiledEntry::Split => {
            // Waves of `parts` splits, each adding into its slab, then a
            // pass that sums the slabs into C.
            let parts = stream.ordered_scratch((split.parts * q.outputs() * 4) as u64)?;
            let variant = family.variant("gemm_split", &types, &overrides);
            for split0 in (0..split.splits).step_by(split.parts) {
                let args = [a_arg, b_arg, Arg::whole("parts", &parts)];
                spec::record(stream, &Launch { variant, params: params(split0, split0 > 0), args, groups })?;
            }
            let slab_bias = bias.map(|(arg, off, stride)| (arg, off, stride as i32));
            let unread = (a_arg, epi);
            sum_slabs_epilogue(stream, &parts, split.parts, (q.alpha, q.beta), c, unread, slab_bias, &q.epilogue)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{fill_splits_for, GemmSettings};

    fn split_tiles(m: usize, n: usize, k: usize, batch: usize, blocks: (usize, usize)) -> (usize, usize, usize) {
        super::split_tiles(&GemmSettings::default(), m, n, k, batch, blocks)
    }

    #[test]
    fn few_tiles_split_k_into_runs_of_at_least_256() {
        assert_eq!(fill_splits_for(47, 5000, 528), 12, "3000 x 50: 47 tiles of 64 x 64");
        assert_eq!(fill_splits_for(64, 8192, 528), 9, "512 x 512");
        assert_eq!(fill_splits_for(132, 1000, 528), 3, "one tile per SM");
        assert_eq!(fill_splits_for(256, 1000, 528), 1, "1000 x 1000: two tiles per SM");
        assert_eq!(fill_splits_for(47, 300, 528), 1, "K too short for two runs of 256");
        assert_eq!(fill_splits_for(10, 4096, 0), 1, "filling off");
    }

    #[test]
    fn split_products_take_wide_tiles_aiming_at_half_the_workgroups() {
        assert_eq!(split_tiles(512, 512, 8192, 1, (1, 1)), (2, 2, 17), "16 tiles of 128 x 128");
        assert_eq!(split_tiles(3000, 50, 5000, 1, (1, 1)), (2, 1, 11), "24 tiles of 128 x 64");
        assert_eq!(split_tiles(1000, 1000, 1000, 1, (1, 1)), (1, 1, 1), "runs of 333 would be too short");
        assert_eq!(split_tiles(8192, 100, 2048, 1, (1, 1)), (2, 1, 3), "256 tiles of 64 x 64: 128 of 128 x 64");
        assert_eq!(split_tiles(2000, 2000, 1000, 1, (1, 1)), (1, 1, 1), "enough tiles: no split");
        assert_eq!(split_tiles(64, 16000, 4096, 1, (1, 1)), (1, 1, 1), "64 rows: not 128 high");
        assert_eq!(split_tiles(40, 50, 16401, 1, (1, 1)), (1, 1, 64), "one 64 x 64 tile: as before");
        assert_eq!(split_tiles(4096, 4096, 4096, 1, (2, 2)), (2, 2, 1));
    }
}
