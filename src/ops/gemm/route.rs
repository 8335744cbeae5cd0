//! Every route a GEMM can take, as a value: which kernel runs with which
//! parameters (tiles, split-K runs, store variant), decided by plan.rs and
//! launched by `launch::record`. A `Plan` is a route and, where the
//! tensor cores need aligned operands, the copies made first.

use crate::ops::gemm::coop::{CoopKernel, CoopStore, Split};
use crate::ops::gemm::coopmat2::Coopmat2Variant;
use crate::ops::gemm::gemv::GemvParams;
use crate::ops::gemm::skinny::SkinnyVariant;
use crate::ops::gemm::spirv::SpirvVariant;
use crate::ops::gemm::wide::WideVariant;
use crate::ops::tensor::DType;
use std::fmt;

/// The kernel a GEMM runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// 9 to 32 rows of f32 against a weight (rows.rs, gemm_rows.wgsl).
    Rows(RowsRoute),
    /// Up to 32 rows against a weight: the matrix-vector kernels (gemv.rs).
    Gemv(GemvRoute),
    /// f16 or bf16 on cooperative matrices (coop.rs and the SPIR-V kernels).
    Coop(CoopRoute),
    /// The tiled kernel (tiled.rs, matmul.wgsl).
    Tiled(TiledRoute),
}

/// gemm_rows: `transposed` computes C^T = B^T A^T (the few rows are N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowsRoute {
    pub transposed: bool,
    /// Rows per tile (16 or 32; the tile is 256 or 128 columns).
    pub rt: u32,
    /// The weight is dense along K (else along N).
    pub weight_k_dense: bool,
    /// Column tiles, K runs (summed by the split-K pass) and their length.
    pub tiles: usize,
    pub splits: usize,
    pub k_chunk: usize,
}

/// A matrix-vector kernel (`entry` of gemv.wgsl), its uniform and grid.
#[derive(Clone, Copy, Debug)]
pub struct GemvRoute {
    pub transposed: bool,
    pub entry: &'static str,
    /// Rows per tile (MT) and rows per dot-product group (ROWS; 1 for axpy).
    pub mt: u32,
    pub dot_rows: u32,
    pub params: GemvParams,
    pub groups: [u32; 3],
    /// Elements of C over the batch (the slabs' size where K is split).
    pub outputs: usize,
}

impl PartialEq for GemvRoute {
    fn eq(&self, other: &GemvRoute) -> bool {
        (self.transposed, self.entry, self.mt, self.dot_rows, self.groups, self.outputs)
            == (other.transposed, other.entry, other.mt, other.dot_rows, other.groups, other.outputs)
            && bytemuck::bytes_of(&self.params) == bytemuck::bytes_of(&other.params)
    }
}

/// Which tensor-core kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoopEngine {
    /// shaders/gemm_coop_f16.wgsl (`direct`: stored straight to C).
    Wgsl { entry: &'static str, direct: bool },
    /// shaders/spirv/gemm_coop_khr.comp on VK_KHR_cooperative_matrix.
    Khr(SpirvVariant),
    /// shaders/spirv/gemm_khr_wide.comp on VK_KHR_cooperative_matrix (wide.rs).
    Wide(WideVariant),
    /// shaders/spirv/gemm_coopmat2.comp on VK_NV_cooperative_matrix2.
    Coopmat2(Coopmat2Variant),
    /// shaders/spirv/gemm_skinny_khr.comp (few rows).
    SkinnyKhr(SkinnyVariant),
    /// gemm_coopmat2.comp's skinny block `block` (few rows).
    SkinnyCoopmat2 { block: usize, b_t: bool, out: DType },
}

/// A tensor-core product: the kernel variant, the engine, where it stores
/// (C, or f32 slabs summed by the split-K pass where `via_slab`) and its grid.
#[derive(Clone, Debug, PartialEq)]
pub struct CoopRoute {
    pub kernel: CoopKernel,
    pub engine: CoopEngine,
    pub store: CoopStore,
    pub via_slab: bool,
    pub groups: [u32; 3],
}

/// Which entry of the tiled kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TiledEntry {
    /// `gemm`: scalar stores to C.
    Gemm,
    /// `gemm_c4`: C stored four columns at a time.
    GemmC4,
    /// `gemm_split`: K runs into f32 slabs (in waves of `split.parts`), summed into C.
    Split,
}

/// The tiled kernel: RM x RN blocks of 64 x 64 per workgroup, each
/// operand's layout override and the K runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledRoute {
    pub rm: usize,
    pub rn: usize,
    /// A_LAYOUT, B_LAYOUT, C_LAYOUT of matmul.wgsl.
    pub layouts: [u8; 3],
    pub entry: TiledEntry,
    pub split: Split,
    pub groups: [u32; 3],
}

/// Aligned copies of A and B with K padded to `kp` (staged.rs); a copy is
/// dense along its rows (M for A, N for B^T) where `*_rows_dense`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    pub kp: usize,
    pub a_rows_dense: bool,
    pub bt_rows_dense: bool,
}

/// What a GEMM records: copies first where `staging`, then `route`, into C
/// or (a bf16 C) into f32 scratch rounded once into C. Plans are equal
/// where they record the same work, whatever their reasons.
#[derive(Clone, Debug)]
pub struct Plan {
    pub route: Route,
    pub staging: Option<Staging>,
    pub c_bf16: bool,
    /// The route records the product without its epilogue into f32
    /// scratch, and one pass applies the epilogue into C (epilogue.rs).
    pub epilogue_pass: bool,
    /// Why this route: the decision that picked it, for `explain`.
    pub because: String,
}

impl PartialEq for Plan {
    fn eq(&self, other: &Plan) -> bool {
        (&self.route, self.staging, self.c_bf16, self.epilogue_pass)
            == (&other.route, other.staging, other.c_bf16, other.epilogue_pass)
    }
}

impl fmt::Display for Route {
    /// A short name with the parameters that matter, e.g.
    /// `coop khr a0b1 direct splits=1`.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let t = |transposed: bool| if transposed { " transposed" } else { "" };
        match self {
            Route::Rows(r) => write!(
                f,
                "rows rt={} weight={}{} tiles={} splits={} k_chunk={}",
                r.rt,
                if r.weight_k_dense { "NK" } else { "KN" },
                t(r.transposed),
                r.tiles,
                r.splits,
                r.k_chunk
            ),
            Route::Gemv(g) => write!(
                f,
                "gemv {}{} mt={} rows={} splits={} k_chunk={}",
                g.entry,
                t(g.transposed),
                g.mt,
                g.params.m,
                g.params.splits,
                g.params.k_chunk
            ),
            Route::Coop(c) => {
                let k = c.kernel;
                let engine = match c.engine {
                    CoopEngine::Wgsl { entry, .. } => format!("wgsl {entry}"),
                    CoopEngine::Khr(v) => {
                        format!(
                            "khr{}{}",
                            if v.direct { " direct" } else { " epilogue" },
                            if v.double_buffered { " s2" } else { "" }
                        )
                    }
                    CoopEngine::Wide(v) => format!("khr_wide{}", if v.direct { " direct" } else { " epilogue" }),
                    CoopEngine::Coopmat2(v) => format!("coopmat2 block={}", v.block),
                    CoopEngine::SkinnyKhr(v) => format!("skinny_khr n{}k{} fm={}", v.tile.fn_, v.tile.bk, v.fm),
                    CoopEngine::SkinnyCoopmat2 { block, .. } => format!("skinny_coopmat2 block={block}"),
                };
                write!(
                    f,
                    "coop {engine} {} a_t={} b_t={} edge={} splits={} k_chunk={}{}",
                    if k.bf16 { "bf16" } else { "f16" },
                    k.a_t as u8,
                    k.b_t as u8,
                    k.edge as u8,
                    c.store.splits,
                    c.store.k_chunk,
                    if c.via_slab { " via_slab" } else { "" }
                )
            }
            Route::Tiled(r) => write!(
                f,
                "tiled {} rm={} rn={} layouts={:?} splits={} parts={} k_chunk={}",
                match r.entry {
                    TiledEntry::Gemm => "gemm",
                    TiledEntry::GemmC4 => "gemm_c4",
                    TiledEntry::Split => "gemm_split",
                },
                r.rm,
                r.rn,
                r.layouts,
                r.split.splits,
                r.split.parts,
                r.split.k_chunk
            ),
        }
    }
}

impl fmt::Display for Plan {
    /// One line: "route X because ...".
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "route {}", self.route)?;
        if let Some(s) = self.staging {
            write!(f, " on aligned copies (K padded to {})", s.kp)?;
        }
        if self.c_bf16 {
            write!(f, " into f32 scratch rounded to bf16")?;
        }
        if self.epilogue_pass {
            write!(f, " into f32 scratch, then the epilogue pass")?;
        }
        write!(f, " because {}", self.because)
    }
}
