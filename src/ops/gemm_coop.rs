//! f16 GEMM on cooperative matrices (tensor cores), for adapters that offer
//! 16x16x16 f16 fragments with f32 accumulation and 32-wide subgroups. The
//! shader's fragment loops are unrolled here, from the tile shape.

use super::common::Params;
use super::reduce_kernels::launch;
use super::tensor::{DType, Tensor};
use crate::error::Result;
use crate::runtime::device::Device;
use crate::runtime::stream::{Bind, StreamShared};

/// A tile shape: fragments per subgroup (rows x cols of 16x16) and
/// subgroups per workgroup (rows x cols).
#[derive(Clone, Copy, Debug)]
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
    fn name(self) -> String {
        format!("{}x{}x{}x{}x{}{}", self.fm, self.fn_, self.sgm, self.sgn, self.bk, if self.double { "d" } else { "" })
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

pub fn source(t: Tile) -> String {
    let Tile { fm, fn_, sgm, sgn, bk, double } = t;
    let (bm, bn) = (t.block_m() as u32, t.block_n() as u32);
    let threads = 32 * sgm * sgn;
    // 16-byte vectors per tile, and how many each invocation moves.
    let a_vecs = bm * bk / 8;
    let b_vecs = bk * bn / 8;
    assert!(a_vecs % threads == 0 && b_vecs % threads == 0, "tile {t:?} does not divide among its invocations");
    let (a_per, b_per) = (a_vecs / threads, b_vecs / threads);
    let mut decl = String::new();
    let mut body = String::new();
    let mut store = String::new();
    let mut prefetch_decl = String::new();
    let mut prefetch = String::new();
    let mut stage = String::new();
    // A tile: BM rows of bk/8 vectors; B tile: bk rows of BN/8 vectors.
    let a_fetch = |i: u32, t: &str| {
        let v = format!("(lid + {}u)", i * threads);
        format!("a[a_base + ({v} / {row}u) * a_row_vecs + {t} * {bkv}u + {v} % {row}u]", row = bk / 8, bkv = bk / 8)
    };
    let b_fetch = |i: u32, t: &str| {
        let v = format!("(lid + {}u)", i * threads);
        format!("b[b_base + ({t} * {bk}u + {v} / {row}u) * b_row_vecs + {v} % {row}u]", bk = bk, row = bn / 8)
    };
    for i in 0..a_per {
        prefetch_decl += &format!("    var ra{i} = {};\n", a_fetch(i, "0u"));
        prefetch += &format!("            ra{i} = {};\n", a_fetch(i, "(t + 1u)"));
        let v = format!("(lid + {}u)", i * threads);
        stage +=
            &format!("        store8(true, sa + ({v} / {row}u) * AS + ({v} % {row}u) * 8u, ra{i});\n", row = bk / 8);
    }
    for i in 0..b_per {
        prefetch_decl += &format!("    var rb{i} = {};\n", b_fetch(i, "0u"));
        prefetch += &format!("            rb{i} = {};\n", b_fetch(i, "(t + 1u)"));
        let v = format!("(lid + {}u)", i * threads);
        stage +=
            &format!("        store8(false, sb + ({v} / {row}u) * BS + ({v} % {row}u) * 8u, rb{i});\n", row = bn / 8);
    }
    for i in 0..fm {
        body += &format!(
            "            let fa{i} = coopLoadT<coop_mat16x16<f16, A>>(&ta[ca + (sub_row + {}u) * AS + kk], AS);\n",
            i * 16
        );
    }
    for j in 0..fn_ {
        body += &format!(
            "            let fb{j} = coopLoadT<coop_mat16x16<f16, B>>(&tb[cb + kk * BS + sub_col + {}u], BS);\n",
            j * 16
        );
    }
    for i in 0..fm {
        for j in 0..fn_ {
            decl += &format!("    var c{i}{j} = coop_mat16x16<f32, C>();\n");
            body += &format!("            c{i}{j} = coopMultiplyAdd(fa{i}, fb{j}, c{i}{j});\n");
            store += &format!(
                "    let ic{i}{j} = oc + {}u * ns + {}u;\n    coopStoreT(c{i}{j}, &c[ic{i}{j}], ns);\n",
                i * 16,
                j * 16
            );
        }
    }
    crate::shaders::render(
        crate::shaders::source("gemm_coop_f16.wgsl"),
        &[
            ("THREADS", &threads.to_string()),
            ("BM", &bm.to_string()),
            ("BN", &bn.to_string()),
            ("BK", &bk.to_string()),
            ("BUFS", if double { "2" } else { "1" }),
            (
                "LOOP",
                &if double { loop_double(&stage, &prefetch, &body) } else { loop_single(&stage, &prefetch, &body) },
            ),
            ("SM", &(16 * fm).to_string()),
            ("SN", &(16 * fn_).to_string()),
            ("SGN", &sgn.to_string()),
            ("DECL", &decl),
            ("PREFETCH_DECL", &prefetch_decl),
            ("STORE", &store),
        ],
    )
}

/// Stage, then multiply: two barriers a step.
fn loop_single(stage: &str, prefetch: &str, body: &str) -> String {
    format!(
        "    let sa = 0u;\n    let sb = 0u;\n    let ca = 0u;\n    let cb = 0u;\n    for (var t = 0u; t < steps; t++) {{\n        workgroupBarrier();\n{stage}        workgroupBarrier();\n        if (t + 1u < steps) {{\n{prefetch}        }}\n        for (var kk = 0u; kk < BK; kk += 16u) {{\n{body}        }}\n    }}\n"
    )
}

/// Multiply from one buffer while staging the next tile into the other:
/// one barrier a step.
fn loop_double(stage: &str, prefetch: &str, body: &str) -> String {
    format!(
        "    {{\n        let sa = 0u;\n        let sb = 0u;\n{stage}    }}\n    workgroupBarrier();\n    for (var t = 0u; t < steps; t++) {{\n        let ca = (t % 2u) * A_TILE;\n        let cb = (t % 2u) * B_TILE;\n        let more = t + 1u < steps;\n        if (more) {{\n{prefetch}        }}\n        for (var kk = 0u; kk < BK; kk += 16u) {{\n{body}        }}\n        if (more) {{\n            let sa = A_TILE - ca;\n            let sb = B_TILE - cb;\n{stage}        }}\n        workgroupBarrier();\n    }}\n"
    )
}

/// Where a product goes: the range `target` binds (at binding 2) from
/// element `offset` of that range, batch matrices
/// `batch_c` elements apart; K is cut into `splits` runs of `k_chunk` (a
/// multiple of the tile's K step), the products of run s stored
/// `s * split_c` elements further (split_c 0 when there is one run).
pub struct CoopOut<'a> {
    pub target: Bind<'a>,
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
    let dev = &stream.device;
    let kern =
        dev.kernels
            .get_variant(dev, "gemm_coop_f16.wgsl", "gemm_coop_f16", &[("TILE", &TILE.name())], || source(TILE))?;
    let params = Params::new()
        .u32(m as u32)
        .u32(n as u32)
        .u32(k as u32)
        .u32(batch_ab[0] as u32)
        .u32(batch_ab[1] as u32)
        .u32(out.batch_c as u32)
        .u32(a.bound_offset())
        .u32(b.bound_offset())
        .u32(out.offset)
        .u32(out.k_chunk as u32)
        .u32(out.splits as u32)
        .u32(out.split_c as u32);
    let groups = [(n / TILE.block_n()) as u32, (m / TILE.block_m()) as u32, (batch * out.splits) as u32];
    launch(stream, &kern, &[a.bind(0), b.bind(1), out.target], &params, groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROBES: [Tile; 6] = [
        Tile { fm: 4, fn_: 4, sgm: 2, sgn: 2, bk: 32, double: true },
        Tile { fm: 4, fn_: 4, sgm: 2, sgn: 2, bk: 64, double: true },
        TILE,
        Tile { fm: 4, fn_: 4, sgm: 4, sgn: 2, bk: 32, double: false },
        Tile { fm: 4, fn_: 4, sgm: 2, sgn: 4, bk: 32, double: false },
        Tile { fm: 4, fn_: 4, sgm: 2, sgn: 2, bk: 64, double: false },
    ];

    #[test]
    fn the_generated_shaders_validate() {
        for t in PROBES {
            crate::runtime::kernel::parse_and_validate(&source(t)).unwrap();
        }
    }

    /// The SPIR-V backend must accept them too (it is what Vulkan drivers get).
    #[test]
    fn the_generated_shaders_translate_to_spirv() {
        for t in PROBES {
            let (module, info) = crate::runtime::kernel::parse_and_validate(&source(t)).unwrap();
            let opts = naga::back::spv::Options::default();
            naga::back::spv::write_vec(&module, &info, &opts, None).unwrap();
        }
    }

    /// Write the probe variants to $WGC_DUMP_DIR (for timing them on a GPU
    /// through the user-kernel API: bench/coop_probe.c).
    #[test]
    fn dump_probe_variants() {
        let Some(dir) = std::env::var_os("WGC_DUMP_DIR") else {
            return;
        };
        for t in PROBES {
            let path = std::path::Path::new(&dir).join(format!("coop_{}.wgsl", t.name()));
            std::fs::write(path, source(t)).unwrap();
        }
    }
}
