//! f16 GEMM on cooperative matrices (tensor cores), for adapters that offer
//! 16x16x16 f16 fragments with f32 accumulation and 32-wide subgroups. The
//! shader is written out for one tile (`TILE`); see its header for why.

use super::spec::uniform::uniform;
use super::spec::{self, Arg, Family, Launch, TypeSlot, Variant};
use super::tensor::{DType, Tensor};
use crate::error::Result;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

/// A tile shape: fragments per subgroup (rows x cols of 16x16) and
/// subgroups per workgroup (rows x cols).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub fm: u32,
    pub fn_: u32,
    pub sgm: u32,
    pub sgn: u32,
    /// K consumed per staged tile.
    pub bk: u32,
    /// Two tile buffers in workgroup memory: one barrier per step instead of two.
    pub double: bool,
}

impl Tile {
    pub fn block_m(self) -> usize {
        (16 * self.fm * self.sgm) as usize
    }
    pub fn block_n(self) -> usize {
        (16 * self.fn_ * self.sgn) as usize
    }
    /// The kernel for this tile: the shader is written for `TILE` only.
    pub fn variant(self) -> Variant {
        debug_assert!(self == TILE, "gemm_coop_f16.wgsl is written for TILE");
        FAMILY.variant("gemm_coop_f16", &[DType::F16], &[])
    }
}

/// The tiled tensor-core GEMM for `TILE`. The adapter needs f16 and
/// cooperative matrices: the prelude enables the extension, and the offline
/// test validates the kernel with those capabilities.
pub static FAMILY: Family = Family {
    file: "gemm_coop_f16.wgsl",
    source: include_str!("../../shaders/gemm_coop_f16.wgsl"),
    entries: &["gemm_coop_f16"],
    types: &[TypeSlot { alias: "H", dtypes: &[DType::F16] }],
    overrides: &[],
    uniform: <CoopParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of gemm_coop_f16.wgsl.
    pub struct CoopParams = "Params" {
        pub m: u32,
        pub n: u32,
        pub k: u32,
        pub batch_a: u32,
        pub batch_b: u32,
        pub batch_c: u32,
        pub offset_a: u32,
        pub offset_b: u32,
        pub offset_c: u32,
        pub k_chunk: u32,
        pub splits: u32,
        pub split_c: u32,
    }
}

/// The tile used; chosen by measurement on an H200 (BENCHMARKS.md).
pub(crate) const TILE: Tile = Tile { fm: 4, fn_: 4, sgm: 2, sgn: 2, bk: 32, double: false };

/// True if the adapter can run this kernel at all.
pub fn available(dev: &Device) -> bool {
    dev.adapter.coop_f16
        && dev.features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16)
        && dev.adapter.info.subgroup_min_size == 32
        && dev.adapter.info.subgroup_max_size == 32
}

/// True if this problem fits the kernel's tiling exactly.
/// (Offsets must also be multiples of 8 elements.)
pub fn fits(m: usize, n: usize, k: usize) -> bool {
    m.is_multiple_of(TILE.block_m()) && n.is_multiple_of(TILE.block_n()) && k.is_multiple_of(TILE.bk as usize) && k > 0
}

/// Where a product goes: the range `target` binds (as `c`) from
/// element `offset` of that range, batch matrices
/// `batch_c` elements apart; K is cut into `splits` runs of `k_chunk` (a
/// multiple of the tile's K step), the products of run s stored
/// `s * split_c` elements further (split_c 0 when there is one run).
pub struct CoopOut<'a> {
    pub target: Arg<'a>,
    pub offset: u32,
    pub batch_c: usize,
    pub k_chunk: usize,
    pub splits: usize,
    pub split_c: usize,
}

/// C (f32, contiguous) = A (f16, row-major) x B (f16, row-major), batched over
/// `batch` with element strides `batch_ab` (0 broadcasts). The caller has
/// checked `available` and `fits` and validated the views.
pub fn record(
    stream: &StreamShared,
    a: &Tensor,
    b: &Tensor,
    out: CoopOut,
    (m, n, k): (usize, usize, usize),
    batch: usize,
    batch_ab: [usize; 2],
) -> Result<()> {
    debug_assert!(a.dtype == DType::F16 && b.dtype == DType::F16);
    debug_assert!(out.k_chunk.is_multiple_of(TILE.bk as usize) && out.splits == k.div_ceil(out.k_chunk));
    let (a_arg, offset_a) = spec::view_arg("a", a);
    let (b_arg, offset_b) = spec::view_arg("b", b);
    let params = CoopParams {
        m: m as u32,
        n: n as u32,
        k: k as u32,
        batch_a: batch_ab[0] as u32,
        batch_b: batch_ab[1] as u32,
        batch_c: out.batch_c as u32,
        offset_a,
        offset_b,
        offset_c: out.offset,
        k_chunk: out.k_chunk as u32,
        splits: out.splits as u32,
        split_c: out.split_c as u32,
    };
    let groups = [(n / TILE.block_n()) as u32, (m / TILE.block_m()) as u32, (batch * out.splits) as u32];
    let args = [a_arg, b_arg, Arg { name: "c", ..out.target }];
    spec::record(stream, &Launch { variant: TILE.variant(), params, args, groups })
}
