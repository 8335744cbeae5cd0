//! Which routes fuse a GEMM's epilogue, by table without a GPU: the tiled
//! kernel and the tensor-core kernels in their store, the split-K routes in
//! their sum pass, the others through f32 scratch and one pass.

use super::epilogue::{fusion, Epilogue, Fusion, Residual};
use super::plan::plan;
use super::problem::{Matrix, Problem};
use super::profile::DeviceProfile;
use super::route::{CoopEngine, Plan, Route, TiledEntry};
use super::settings::GemmSettings;
use crate::ops::conv::bn_act::Activation;
use crate::ops::tensor::DType::{self, BF16, F16, F32};

/// `F.gelu(F.linear(x, w, b))` with a residual added after: x (m, k), w (n, k).
fn linear(m: usize, n: usize, k: usize, dtype: DType) -> Problem {
    let mut q = Problem::dense(m, n, k, dtype);
    q.b = Matrix::row_major(n, k, &[]).t();
    q.epilogue = Epilogue {
        activation: Activation::Gelu,
        col_bias: Some(1),
        scale: None,
        residual: Some(Residual { matrix: Matrix::row_major(m, n, &[]), after: true }),
    };
    q
}

fn planned(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> Plan {
    plan(q, p, s).unwrap()
}

fn wgsl_coop() -> GemmSettings {
    GemmSettings { spirv: Some(0), ..GemmSettings::default() }
}

#[test]
fn the_tiled_kernel_leaves_the_epilogue_to_one_pass() {
    for dtype in [F32, F16, BF16] {
        let plan = planned(&linear(300, 200, 100, dtype), &DeviceProfile::lavapipe_like(), &GemmSettings::default());
        let Route::Tiled(t) = &plan.route else { panic!("{plan}") };
        assert_ne!(t.entry, TiledEntry::Split, "{plan}");
        assert_eq!(fusion(&plan.route), Fusion::ExtraPass);
        assert!(plan.epilogue_pass && plan.because.ends_with("one pass over the product in f32 scratch"), "{plan}");
    }
}

#[test]
fn split_k_applies_the_epilogue_in_its_sum_pass() {
    let plan = planned(&linear(40, 50, 16401, F32), &DeviceProfile::lavapipe_like(), &GemmSettings::default());
    let Route::Tiled(t) = &plan.route else { panic!("{plan}") };
    assert_eq!(t.entry, TiledEntry::Split);
    assert!(!plan.epilogue_pass && plan.because.ends_with("fused in the split-K pass"), "{plan}");
}

#[test]
fn the_khr_and_wgsl_tensor_core_kernels_fuse_it_in_their_epilogue_store() {
    let q = linear(2048, 4096, 4096, F16);
    // By the planner's rule an (N, K) weight of this size takes the wide block.
    let wide = planned(&q, &DeviceProfile::h100_khr_only(), &GemmSettings::default());
    let Route::Coop(c) = &wide.route else { panic!("{wide}") };
    assert!(matches!(c.engine, CoopEngine::Wide(v) if !v.direct), "{wide}");
    assert!(!c.via_slab && !wide.epilogue_pass && c.store.epilogue, "{wide}");
    assert!(wide.because.ends_with("epilogue fused in the route's kernel"), "{wide}");
    let no_wide = GemmSettings { wide: Some(false), ..GemmSettings::default() };
    let khr = planned(&q, &DeviceProfile::h100_khr_only(), &no_wide);
    let Route::Coop(c) = &khr.route else { panic!("{khr}") };
    assert!(matches!(c.engine, CoopEngine::Khr(v) if !v.direct), "{khr}");
    assert!(!c.via_slab && !khr.epilogue_pass && c.store.epilogue, "{khr}");
    assert!(khr.because.ends_with("epilogue fused in the route's kernel"), "{khr}");
    // The bare product of the same shape stores its fragments directly.
    let bare = planned(
        &Problem { epilogue: Epilogue::default(), ..q.clone() },
        &DeviceProfile::h100_khr_only(),
        &GemmSettings::default(),
    );
    let Route::Coop(b) = &bare.route else { panic!("{bare}") };
    assert!(!b.store.epilogue);

    let wgsl = planned(&q, &DeviceProfile::h100_khr_only(), &wgsl_coop());
    let Route::Coop(c) = &wgsl.route else { panic!("{wgsl}") };
    assert!(matches!(c.engine, CoopEngine::Wgsl { direct: false, entry } if entry != "gemm_coop_f16"), "{wgsl}");
    assert_eq!(fusion(&wgsl.route), Fusion::Kernel);

    let bf16 = planned(&linear(2048, 2048, 1024, BF16), &DeviceProfile::h100_khr_only(), &GemmSettings::default());
    assert_eq!(fusion(&bf16.route), Fusion::Kernel, "{bf16}");
}

#[test]
fn few_rows_take_the_matrix_vector_kernels_into_scratch_then_one_pass() {
    for (m, dtype) in [(1, F32), (4, F16), (1, F16)] {
        let plan = planned(&linear(m, 4096, 4096, dtype), &DeviceProfile::lavapipe_like(), &GemmSettings::default());
        assert!(matches!(plan.route, Route::Gemv(_)), "{plan}");
        assert!(plan.epilogue_pass, "{plan}");
        assert!(plan.to_string().contains("into f32 scratch, then the epilogue pass"), "{plan}");
    }
    // gemm_rows (f32, 9 to 32 rows) likewise.
    let plan = planned(&linear(20, 4096, 4096, F32), &DeviceProfile::lavapipe_like(), &GemmSettings::default());
    assert!(matches!(plan.route, Route::Rows(_)) && plan.epilogue_pass, "{plan}");
}

#[test]
fn a_plain_problem_plans_as_before() {
    let q = Problem::dense(300, 200, 100, F32);
    assert!(q.epilogue.is_none());
    let plan = planned(&q, &DeviceProfile::lavapipe_like(), &GemmSettings::default());
    assert!(!plan.epilogue_pass && !plan.because.contains("epilogue"), "{plan}");
}

#[test]
fn the_scratch_problem_is_the_bare_product_into_dense_f32() {
    let mut q = linear(5, 6, 7, F16);
    q.c = Matrix { strides: [1, 5], ..q.c };
    let s = q.into_scratch();
    assert!(s.epilogue.is_none() && s.out == F32 && s.c == Matrix::row_major(5, 6, &[]));
    assert_eq!((s.alpha, s.beta, s.bias), (1.0, 0.0, None));
}
