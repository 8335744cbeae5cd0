//! The GEMM planner: a pure function of the problem, the device profile
//! and the settings that names the route a product takes and its
//! parameters (`plan`), and the candidates the tuner may time instead
//! (`candidates`). Nothing here records work or reads the environment.
//!
//! The order of the decisions: a product of f16 or bf16 operands that
//! 16-byte loads can read, on a device with cooperative matrices, is a
//! tensor-core product (coop::choose; few rows take the skinny tile there).
//! Other products with few rows or columns take gemm_rows (f32, 9-32 rows)
//! or the matrix-vector kernels (up to 32 rows) where those read them well.
//! f16/bf16 products the tensor cores reject for alignment are copied into
//! aligned scratch where large enough (staged.rs). Everything else, and
//! tensor-core products whose K runs would need more slabs than one pass
//! holds, takes the tiled kernel.

use crate::error::Result;
use crate::ops::gemm::coop::{self, CoopKernel};
use crate::ops::gemm::epilogue::{self, Fusion};
use crate::ops::gemm::gemv::{self, AxpyMode, MODES};
use crate::ops::gemm::problem::Problem;
use crate::ops::gemm::profile::DeviceProfile;
use crate::ops::gemm::route::{CoopEngine, Plan, Route, Staging};
use crate::ops::gemm::settings::GemmSettings;
use crate::ops::gemm::tuned::bucket;
use crate::ops::gemm::{rows, staged, tiled, wide};
use crate::ops::tensor::DType;

/// The route `q` takes with the matrix-vector kernels in the settings'
/// default mode (what runs where the tuner is off).
pub fn plan(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> Result<Plan> {
    plan_in_mode(q, p, s, s.default_mode())
}

/// A candidate plan and its name in the tuning file.
pub struct Candidate {
    pub name: &'static str,
    pub plan: Plan,
}

/// The plans the tuner may choose among for `q`, the default first: one
/// per matrix-vector mode (`MODES`), or only the mode the settings fix
/// (named `env`). Modes whose plan fails are left out; the default's
/// failure is returned.
pub fn candidates(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> Result<Vec<Candidate>> {
    if let Some(mode) = s.axpy {
        return Ok(vec![Candidate { name: "env", plan: plan_in_mode(q, p, s, mode)? }]);
    }
    let mut out = Vec::new();
    for (i, &(name, mode)) in MODES.iter().enumerate() {
        match plan_in_mode(q, p, s, mode) {
            Ok(plan) => out.push(Candidate { name, plan }),
            Err(e) if i == 0 => return Err(e),
            Err(_) => {}
        }
    }
    Ok(out)
}

/// The tuner's name for the choice among `candidates` and the shape class
/// that shares it.
pub fn tuning_class(q: &Problem) -> (&'static str, String) {
    let class = format!(
        "{}.m{}.n{}.k{}.b{}.{}{}",
        q.dtype.wgsl(),
        bucket(q.m),
        bucket(q.n),
        bucket(q.k),
        bucket(q.batch_count),
        q.a.unit_char(),
        q.b.unit_char()
    );
    ("gemv.axpy", class)
}

/// `plan` with the matrix-vector kernels in `mode`. A problem with an
/// epilogue takes its route where the route applies the epilogue in its
/// kernel or its split-K pass; elsewhere the product without it is
/// planned into f32 scratch and one pass applies it (epilogue.rs).
pub fn plan_in_mode(q: &Problem, p: &DeviceProfile, s: &GemmSettings, mode: AxpyMode) -> Result<Plan> {
    if q.epilogue.is_none() {
        return plan_product(q, p, s, mode);
    }
    let with = plan_product(q, p, s, mode)?;
    let fusion = epilogue::fusion(&with.route);
    if fusion != Fusion::ExtraPass {
        return Ok(Plan { because: format!("{}; {}", with.because, epilogue::describe(fusion)), ..with });
    }
    let bare = plan_product(&q.into_scratch(), p, s, mode)?;
    let because = format!("{}; {}", bare.because, epilogue::describe(fusion));
    Ok(Plan { epilogue_pass: true, because, ..bare })
}

/// The route of `q`'s product (its epilogue aside) in `mode`.
fn plan_product(q: &Problem, p: &DeviceProfile, s: &GemmSettings, mode: AxpyMode) -> Result<Plan> {
    let kernel = coop::choose(q, p, s);
    let done = |route: Route, staging: Option<Staging>, because: String| Plan {
        route,
        staging,
        c_bf16: q.c_bf16,
        epilogue_pass: false,
        because,
    };
    // Skinny products (few rows or columns) have kernels of their own: the
    // matrix-vector kernels (f32: up to 8 rows; 9-32 take gemm_rows), or
    // for f16 rows the skinny tensor-core tile.
    if !kernel.is_some_and(|k| k.skinny) {
        if let Some(r) = rows::plan(q, p, s) {
            let rows = if r.transposed { q.n } else { q.m };
            let because = format!("f32, one matrix, no bias, {rows} rows (9 to 32) against a weight read in vec4s");
            return Ok(done(Route::Rows(r), None, because));
        }
        if let Some(g) = gemv::plan(q, p, s, mode) {
            let rows = g.params.m;
            let because = format!(
                "{rows} row{} (at most 32{}) against a weight the matrix-vector kernels read coalesced (mode {mode:?}){}",
                if rows == 1 { "" } else { "s" },
                if g.params.batches == 1 && q.batch_count > 1 { ", the batch folded into rows" } else { "" },
                if kernel.is_some() { ", which the tensor cores' 128-row tiles would mostly pad" } else { "" }
            );
            return Ok(done(Route::Gemv(g), None, because));
        }
    }
    let Some(kernel) = kernel else {
        // f16 and bf16 operands that the tensor cores cannot read as they
        // are: aligned copies where the product is large enough to pay.
        if let Some(staging) = staged::plan(q, p, s) {
            let sq = staged::problem(q, &staging);
            let why = "operands the tensor cores cannot read with 16-byte loads, copied aligned (large enough to pay)";
            return tensor_or_tiled(&sq, p, s, coop::choose(&sq, p, s), Some(staging), why.into())
                .map(|(r, w)| done(r, Some(staging), w));
        }
        let why = no_tensor_cores(q, p, s);
        return tensor_or_tiled(q, p, s, None, None, why).map(|(r, w)| done(r, None, w));
    };
    tensor_or_tiled(q, p, s, Some(kernel), None, String::new()).map(|(r, w)| done(r, None, w))
}

/// The tensor-core route for `kernel`, or the tiled kernel where there is
/// none or its K runs need more slabs than one pass holds.
fn tensor_or_tiled(
    q: &Problem,
    p: &DeviceProfile,
    s: &GemmSettings,
    kernel: Option<CoopKernel>,
    staging: Option<Staging>,
    why: String,
) -> Result<(Route, String)> {
    if let Some(kernel) = kernel {
        if let Some(route) = coop::plan(q, p, s, kernel)? {
            let mut because = tensor_core_reason(q, &route.engine, kernel);
            if staging.is_some() {
                because = format!("{why}; {because}");
            }
            if route.via_slab {
                because += "; stored through f32 slabs and the split-K pass";
            }
            return Ok((Route::Coop(route), because));
        }
        let route = tiled::plan(q, p, s)?;
        let because = "a tensor-core product whose K runs need more slabs than one pass holds".to_string();
        return Ok((Route::Tiled(route), because));
    }
    Ok((Route::Tiled(tiled::plan(q, p, s)?), why))
}

/// Why a tensor-core product runs on its engine.
fn tensor_core_reason(q: &Problem, engine: &CoopEngine, kernel: CoopKernel) -> String {
    let dtype = if kernel.bf16 { "bf16" } else { "f16" };
    let base = format!("{dtype} operands readable with 16-byte loads on a device with cooperative matrices");
    let engine = match engine {
        CoopEngine::Wgsl { .. } => {
            format!("the WGSL kernel (K {} below the KHR kernel's 512, or the route fixed)", q.k)
        }
        CoopEngine::Khr(_) if kernel.bf16 => "bf16 runs on VK_KHR_cooperative_matrix only".into(),
        CoopEngine::Khr(_) => format!("the VK_KHR_cooperative_matrix kernel (K {} >= 512, or the route fixed)", q.k),
        CoopEngine::Wide(v) => wide::reason(q, v.shape),
        CoopEngine::Coopmat2(_) => "the VK_NV_cooperative_matrix2 kernel (the route fixed to it)".into(),
        CoopEngine::SkinnyKhr(_) => {
            format!("{} rows (3 to 32) with A row-major: the skinny tile on VK_KHR_cooperative_matrix", q.m)
        }
        CoopEngine::SkinnyCoopmat2 { .. } => {
            format!("{} rows (3 to 32) with A row-major: the skinny block on VK_NV_cooperative_matrix2", q.m)
        }
    };
    format!("{base}; {engine}")
}

/// Why a product has no tensor-core route.
fn no_tensor_cores(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> String {
    match q.dtype {
        DType::F16 | DType::BF16 if q.k == 0 => "K is 0".into(),
        DType::F16 | DType::BF16 if !coop::takes_dtype(p, s, q.dtype) => {
            format!("no tensor-core kernel for {} on this device (or under these settings)", q.dtype.wgsl())
        }
        DType::F16 | DType::BF16 => {
            "operands the tensor cores cannot read with 16-byte loads, too small (or not allowed) to stage".into()
        }
        _ => format!("{} operands, with more rows and columns than the skinny kernels take", q.dtype.wgsl()),
    }
}
