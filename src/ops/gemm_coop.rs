//! f16 GEMM on cooperative matrices (tensor cores), for adapters that offer
//! 16x16x16 f16 fragments with f32 accumulation and 32-wide subgroups. The
//! shader's fragment loops are unrolled here, from the tile shape.

use super::common::{launch, Params};
use super::tensor::{DType, Tensor};
use crate::error::Result;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

/// A tile shape: fragments per subgroup (rows x cols of 16x16) and
/// subgroups per workgroup (rows x cols).
#[derive(Clone, Copy, Debug)]
pub struct Tile {
    pub fm: u32,
    pub fn_: u32,
    pub sgm: u32,
    pub sgn: u32,
}

impl Tile {
    pub fn block_m(self) -> usize {
        (16 * self.fm * self.sgm) as usize
    }
    pub fn block_n(self) -> usize {
        (16 * self.fn_ * self.sgn) as usize
    }
    fn name(self) -> String {
        format!("{}x{}x{}x{}", self.fm, self.fn_, self.sgm, self.sgn)
    }
}

/// The tile used; chosen by measurement on an H200 (BENCHMARKS.md).
pub const TILE: Tile = Tile { fm: 4, fn_: 4, sgm: 2, sgn: 2 };

/// True if the adapter can run this kernel at all.
pub fn available(dev: &Device) -> bool {
    dev.adapter.coop_f16
        && dev.features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16)
        && dev.adapter.info.subgroup_min_size == 32
        && dev.adapter.info.subgroup_max_size == 32
}

/// True if this problem fits the kernel's tiling exactly.
pub fn fits(m: usize, n: usize, k: usize) -> bool {
    m % TILE.block_m() == 0 && n % TILE.block_n() == 0 && k % 16 == 0 && k > 0
}

pub fn source(t: Tile) -> String {
    let Tile { fm: FM, fn_: FN, sgm: SGM, sgn: SGN } = t;
    let mut decl = String::new();
    let mut body = String::new();
    let mut store = String::new();
    for i in 0..FM {
        body += &format!("        let ia{i} = oa + {}u * ks + kk;\n        let a{i} = coopLoadT<coop_mat16x16<f16, A>>(&a[ia{i}], ks);\n", i * 16);
    }
    for j in 0..FN {
        body += &format!("        let ib{j} = ob + kk * ns + {}u;\n        let b{j} = coopLoadT<coop_mat16x16<f16, B>>(&b[ib{j}], ns);\n", j * 16);
    }
    for i in 0..FM {
        for j in 0..FN {
            decl += &format!("    var c{i}{j} = coop_mat16x16<f32, C>();\n");
            body += &format!("        c{i}{j} = coopMultiplyAdd(a{i}, b{j}, c{i}{j});\n");
            store += &format!("    let ic{i}{j} = oc + {}u * ns + {}u;\n    coopStoreT(c{i}{j}, &c[ic{i}{j}], ns);\n", i * 16, j * 16);
        }
    }
    let threads = (32 * SGM * SGN).to_string();
    crate::shaders::render(
        crate::shaders::source("gemm_coop_f16.wgsl"),
        &[
            ("THREADS", &threads),
            ("SM", &(16 * FM).to_string()),
            ("SN", &(16 * FN).to_string()),
            ("SGM", &SGM.to_string()),
            ("SGN", &SGN.to_string()),
            ("DECL", &decl),
            ("BODY", &body),
            ("STORE", &store),
        ],
    )
}

/// C (f32, contiguous) = A (f16, row-major) x B (f16, row-major), batched over
/// `batch` with element strides (0 broadcasts). The caller has checked
/// `available` and `fits` and validated the views.
#[allow(clippy::too_many_arguments)]
pub fn record(
    stream: &StreamShared,
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    (m, n, k): (usize, usize, usize),
    batch: usize,
    batch_strides: [usize; 3],
) -> Result<()> {
    debug_assert!(a.dtype == DType::F16 && b.dtype == DType::F16 && c.dtype == DType::F32);
    let dev = &stream.device;
    let kern =
        dev.kernels.get_variant(dev, "gemm_coop_f16.wgsl", "gemm_coop_f16", &[("TILE", &TILE.name())], || source(TILE))?;
    let params = Params::new()
        .u32(m as u32)
        .u32(n as u32)
        .u32(k as u32)
        .u32(batch_strides[0] as u32)
        .u32(batch_strides[1] as u32)
        .u32(batch_strides[2] as u32)
        .u32(a.offset as u32)
        .u32(b.offset as u32)
        .u32(c.offset as u32);
    let groups = [(n / TILE.block_n()) as u32, (m / TILE.block_m()) as u32, batch as u32];
    launch(stream, &kern, &[a, b, c], params.bytes(), groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROBES: [Tile; 4] = [
        TILE,
        Tile { fm: 2, fn_: 4, sgm: 2, sgn: 2 },
        Tile { fm: 4, fn_: 2, sgm: 2, sgn: 4 },
        Tile { fm: 2, fn_: 2, sgm: 4, sgn: 2 },
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
        let Some(dir) = std::env::var_os("WGC_DUMP_DIR") else { return };
        for t in PROBES {
            let path = std::path::Path::new(&dir).join(format!("coop_{}.wgsl", t.name()));
            std::fs::write(path, source(t)).unwrap();
        }
    }
}
