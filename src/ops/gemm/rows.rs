//! Skinny f32 products of 9 to 32 rows (shaders/gemm_rows.wgsl): a decode
//! step over a few sequences, times a weight stored (K, N) or (N, K). The
//! matrix-vector kernels (gemv.rs) keep tiles of up to 8 rows and read the
//! weight once per tile, and the tiled GEMM spends half or more of its
//! 64-row tiles on padding; this kernel takes all rows at once and reads the
//! weight once, in tiles of 128 or 256 columns over runs of K whose f32
//! sums the split-K pass adds into C (with alpha and beta).
//!
//! Where it runs: f32 A, B and C, no bias, one matrix (every batch dim 1),
//! 9..=32 rows on either side (a product with few columns is the transposed
//! one, C^T = B^T A^T, views only), and a weight whose dense dim's size, the
//! other stride and the offset are multiples of 4 (vec4 loads). Elsewhere
//! `plan` gives None and the GEMM takes its other kernels. The `rows`
//! setting (WGC_GEMM_ROWS=0) turns it off, for comparisons.

use crate::error::Result;
use crate::ops::gemm::problem::Problem;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::route::RowsRoute;
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::sum_slabs_into;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, view_arg, Arg, Family, Launch, OverrideSlot};
use crate::ops::split::runs_to_fill;
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::stream::StreamShared;

pub static FAMILY: Family = Family {
    file: "gemm_rows.wgsl",
    source: include_str!("../../../shaders/gemm_rows.wgsl"),
    entries: &["gemm_rows"],
    types: &[],
    overrides: &[OverrideSlot { name: "RT", values: &[16.0, 32.0] }, OverrideSlot { name: "WL", values: &[0.0, 1.0] }],
    uniform: <RowsParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of gemm_rows.wgsl.
    pub struct RowsParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub k: u32,
        pub k_chunk: u32,
        pub a_sm: i32,
        pub a_sk: i32,
        pub w_sk: i32,
        pub w_sn: i32,
        pub a_off: u32,
        pub w_off: u32,
        pub _pad0: [u32; 2],
    }
}

/// Rows this kernel takes (fewer run the matrix-vector kernels, which read
/// the weight once for up to 8 rows).
const MIN_ROWS: usize = 9;
const MAX_ROWS: usize = 32;
/// K runs are a multiple of the kernel's K step (RT: 16 or 32).
const BK: usize = 32;
/// Longest K run per workgroup: k_chunk / BK steps keep a software
/// driver's loop budget (split.rs) with room to spare.
const MAX_CHUNK: usize = 4096;
/// Shortest K run a split for filling the GPU makes, and most runs it
/// makes: the split-K pass adds an output's runs one after another, so
/// many runs of few outputs make it slow (H100, 16 rows by 4096 columns:
/// 56 runs took 13% longer in all than 33).
const MIN_CHUNK: usize = 256;
const MAX_FILL_SPLITS: usize = 32;
/// Most bytes of f32 slabs.
const MAX_SLAB_BYTES: usize = 256 << 20;

/// The last two dims of `t` as a matrix, transposed where `flip`.
fn matrix<'a>(t: &Tensor<'a>, flip: bool) -> Tensor<'a> {
    let r = t.rank();
    let (mut shape, mut strides) = (t.shape[r - 2..].to_vec(), t.strides[r - 2..].to_vec());
    if flip {
        shape.swap(0, 1);
        strides.swap(0, 1);
    }
    Tensor { shape, strides, ..t.clone() }
}

/// How K is cut: (splits, k_chunk), runs a multiple of BK and at most
/// MAX_CHUNK, more of them (of at least MIN_CHUNK) while the column tiles
/// alone cannot fill the GPU.
fn split_k(k: usize, tiles: usize, fill: usize) -> (usize, usize) {
    let needed = k.div_ceil(MAX_CHUNK);
    let to_fill = runs_to_fill(tiles, k, fill, MIN_CHUNK).min(MAX_FILL_SPLITS);
    let splits = needed.max(to_fill).max(1);
    let k_chunk = k.div_ceil(splits).next_multiple_of(BK);
    (k.div_ceil(k_chunk), k_chunk)
}

/// The route for `q` on this kernel where it runs (see the module
/// comment); None where it does not. Workgroups aim for the `rows_fill`
/// setting (1056, eight per SM of an H200's 132: on an H100, 1056 ran
/// 2-10% faster than 528 and 264 slower).
pub fn plan(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> Option<RowsRoute> {
    let f32_only = q.dtype == DType::F32 && q.out == DType::F32;
    if !s.rows || q.bias.is_some() || !f32_only || q.batch_count != 1 {
        return None;
    }
    let (m, k, n) = (q.m, q.k, q.n);
    let rows_ok = |r: usize| (MIN_ROWS..=MAX_ROWS).contains(&r);
    // The few rows as the activations; C^T = B^T A^T where they are columns.
    let (transposed, wt) = if rows_ok(m) {
        (false, q.b.clone())
    } else if rows_ok(n) {
        (true, q.a.t())
    } else {
        return None;
    };
    let (rows, n) = if transposed { (n, m) } else { (m, n) };
    let [w_sk, w_sn] = wt.strides;
    let weight_k_dense = if w_sn == 1 && n % 4 == 0 && w_sk % 4 == 0 {
        false
    } else if w_sk == 1 && k % 4 == 0 && w_sn % 4 == 0 {
        true
    } else {
        return None;
    };
    if k == 0 || wt.offset % 4 != 0 {
        return None;
    }
    // Rows per tile and the tile's columns (the shader's RT and BN).
    let (rt, bn) = if rows <= 16 { (16, 256) } else { (32, 128) };
    let tiles = n.div_ceil(bn);
    let (splits, k_chunk) = split_k(k, tiles, s.rows_fill);
    let slab = splits * rows * n * 4;
    let max_dim = p.max_workgroups_per_dim;
    if slab > MAX_SLAB_BYTES.min(p.max_binding) || tiles > max_dim || splits > max_dim {
        return None;
    }
    Some(RowsRoute { transposed, rt, weight_k_dense, tiles, splits, k_chunk })
}

/// Record `c = alpha * a b + beta * c` (the views `q` describes) as
/// `route` planned it: the kernel into f32 slabs, then their sum into C.
pub fn record(
    stream: &StreamShared,
    q: &Problem,
    route: &RowsRoute,
    (a, b, c): (&Tensor, &Tensor, &Tensor),
) -> Result<()> {
    let flip = route.transposed;
    let (act, wt, out) = if flip {
        (matrix(b, true), matrix(a, true), matrix(c, true))
    } else {
        (matrix(a, false), matrix(b, false), matrix(c, false))
    };
    let (rows, n) = (act.shape[0], wt.shape[1]);
    let parts = stream.ordered_scratch((route.splits * rows * n * 4) as u64)?;
    let (a_arg, a_off) = view_arg("a", &act);
    let (w_arg, w_off) = view_arg("w", &wt);
    let params = RowsParams {
        m: rows as u32,
        n: n as u32,
        k: q.k as u32,
        k_chunk: route.k_chunk as u32,
        a_sm: act.strides[0] as i32,
        a_sk: act.strides[1] as i32,
        w_sk: wt.strides[0] as i32,
        w_sn: wt.strides[1] as i32,
        a_off,
        w_off,
        _pad0: [0; 2],
    };
    let layout = if route.weight_k_dense { 1.0 } else { 0.0 };
    let variant = FAMILY.variant("gemm_rows", &[], &[route.rt as f64, layout]);
    let args = [a_arg, w_arg, Arg::whole("parts", &parts)];
    let groups = [route.tiles as u32, route.splits as u32, 1];
    spec::record(stream, &Launch { variant, params, args, groups })?;
    sum_slabs_into(stream, &parts, route.splits, (q.alpha, q.beta), &out, a_arg, None)
}

#[cfg(test)]
mod tests {
    use super::split_k;

    #[test]
    fn k_runs_fill_the_gpu_and_stay_within_the_loop_budget() {
        assert_eq!(split_k(4096, 112, 1056), (10, 416), "N 14336: 112 column tiles");
        assert_eq!(split_k(14336, 32, 1056), (32, 448), "N 4096: 32 column tiles");
        assert_eq!(split_k(14336, 16, 1056), (32, 448), "at most 32 runs for filling");
        assert_eq!(split_k(100, 4, 528), (1, 128), "K too short to split");
        assert_eq!(split_k(100_000, 1000, 528), (25, 4000), "long K: runs of at most 4096");
    }
}
