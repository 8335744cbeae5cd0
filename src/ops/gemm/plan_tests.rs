//! Routes by table, without a GPU: shapes x dtypes x device profiles ->
//! the route and parameters the planner picks (each worked out from the
//! decision chain it replaced: the f16 tensor cores first, then the
//! skinny kernels, aligned copies, and the tiled kernel).

use super::coop::{CoopKernel, Split};
use super::coopmat2::Coopmat2Variant;
use super::gemv::AxpyMode;
use super::plan::{candidates, plan, plan_in_mode};
use super::problem::Problem;
use super::profile::DeviceProfile;
use super::route::{CoopEngine, Plan, Route, RowsRoute, Staging, TiledEntry, TiledRoute};
use super::settings::{GemmSettings, StageMode};
use super::skinny::{SkinnyVariant, TILES};
use super::spirv::SpirvVariant;
use super::wide::WideVariant;
use crate::ops::tensor::DType::{self, BF16, F16, F32};

fn h100() -> DeviceProfile {
    DeviceProfile::h100_like()
}

fn lavapipe() -> DeviceProfile {
    DeviceProfile::lavapipe_like()
}

fn planned(q: &Problem, p: &DeviceProfile) -> Plan {
    plan(q, p, &GemmSettings::default()).unwrap()
}

fn route(q: &Problem, p: &DeviceProfile) -> Route {
    planned(q, p).route
}

fn tiled(
    rm: usize,
    rn: usize,
    layouts: [u8; 3],
    entry: TiledEntry,
    split: (usize, usize, usize),
    groups: [u32; 3],
) -> Route {
    let split = Split { splits: split.0, k_chunk: split.1, parts: split.2 };
    Route::Tiled(TiledRoute { rm, rn, layouts, entry, split, groups })
}

/// (entry, mt, splits, k_chunk, rows) of a matrix-vector route.
fn gemv(r: &Route) -> (&'static str, u32, u32, u32, u32) {
    let Route::Gemv(g) = r else { panic!("not a gemv route: {r}") };
    (g.entry, g.mt, g.params.splits, g.params.k_chunk, g.params.m)
}

fn coop(r: &Route) -> (CoopKernel, CoopEngine, usize, usize, bool, [u32; 3]) {
    let Route::Coop(c) = r else { panic!("not a tensor-core route: {r}") };
    (c.kernel, c.engine, c.store.splits, c.store.k_chunk, c.via_slab, c.groups)
}

fn kernel(edge: bool, skinny: bool, bf16: bool) -> CoopKernel {
    CoopKernel { a_t: false, b_t: false, edge, skinny, bf16 }
}

fn khr(out: DType, direct: bool, bf16: bool) -> CoopEngine {
    CoopEngine::Khr(SpirvVariant { double_buffered: false, a_t: false, b_t: false, out, direct, bf16 })
}

#[test]
fn f32_squares_take_the_tiled_kernel_on_every_device() {
    let q = Problem::dense(1000, 1000, 1000, F32);
    let expected = tiled(1, 1, [2, 2, 1], TiledEntry::GemmC4, (1, 1000, 1), [16, 16, 1]);
    assert_eq!(route(&q, &lavapipe()), expected);
    assert_eq!(route(&q, &h100()), expected);
}

#[test]
fn few_tiles_split_k_over_wide_tiles() {
    let q = Problem::dense(512, 512, 8192, F32);
    assert_eq!(route(&q, &h100()), tiled(2, 2, [2, 2, 1], TiledEntry::Split, (17, 496, 17), [4, 4, 17]));
    let q = Problem::dense(3000, 50, 5000, F32);
    assert_eq!(route(&q, &lavapipe()), tiled(2, 1, [2, 2, 1], TiledEntry::Split, (11, 464, 11), [1, 24, 11]));
}

#[test]
fn one_f32_row_takes_the_axpy_kernel_split_to_fill() {
    let q = Problem::dense(1, 4096, 4096, F32);
    for p in [lavapipe(), h100()] {
        assert_eq!(gemv(&route(&q, &p)), ("axpy4_split", 1, 9, 456, 1));
    }
    // The weight stored (N, K): the transposed product's rows are dot products.
    let mut q = Problem::dense(1, 4096, 4096, F32);
    q.b = q.b.t();
    q.b.strides = [1, 4096];
    assert!(gemv(&route(&q, &lavapipe())).0.starts_with("row_dot"));
}

#[test]
fn one_f16_row_takes_the_narrow_unit_kernel_even_with_tensor_cores() {
    let q = Problem::dense(1, 4096, 4096, F16);
    for p in [lavapipe(), h100()] {
        assert_eq!(gemv(&route(&q, &p)), ("axpy_unit_narrow_split", 1, 4, 1024, 1));
    }
}

#[test]
fn eight_f16_rows_take_the_skinny_tile_where_there_are_tensor_cores() {
    let q = Problem::dense(8, 4096, 4096, F16);
    let block = CoopEngine::SkinnyCoopmat2 { block: 0, b_t: false, out: F32 };
    assert_eq!(coop(&route(&q, &h100())), (kernel(true, true, false), block, 16, 256, true, [32, 1, 16]));
    let khr_tile = CoopEngine::SkinnyKhr(SkinnyVariant { tile: TILES[0], fm: 1, b_t: false, out: F32, bf16: false });
    let khr_only = DeviceProfile::h100_khr_only();
    assert_eq!(coop(&route(&q, &khr_only)), (kernel(true, true, false), khr_tile, 16, 256, true, [32, 1, 16]));
    assert_eq!(gemv(&route(&q, &lavapipe())), ("axpy_unit_staged_split", 8, 17, 244, 8));
}

#[test]
fn f32_rows_nine_to_32_take_gemm_rows() {
    let q = Problem::dense(16, 14336, 4096, F32);
    let expected = RowsRoute { transposed: false, rt: 16, weight_k_dense: false, tiles: 56, splits: 16, k_chunk: 256 };
    assert_eq!(route(&q, &lavapipe()), Route::Rows(expected));
    // The few rows as columns: C^T = B^T A^T.
    let q = Problem::dense(14336, 16, 4096, F32);
    let Route::Rows(r) = route(&q, &lavapipe()) else { panic!() };
    assert!(r.transposed && r.weight_k_dense && r.rt == 16);
    // A bias or a batch: not this kernel.
    let mut q = Problem::dense(16, 14336, 4096, F32);
    q.bias = Some(1);
    assert!(matches!(route(&q, &lavapipe()), Route::Tiled(_)));
}

#[test]
fn square_f16_products_take_khr_from_k_512_and_wgsl_below() {
    let q = Problem::dense(4096, 4096, 4096, F16);
    assert_eq!(
        coop(&route(&q, &h100())),
        (kernel(false, false, false), wide(F16, true, false), 1, 4096, false, [32, 32, 1])
    );
    let off = GemmSettings { wide: Some(false), ..GemmSettings::default() };
    assert_eq!(engine(&q, &h100(), &off), khr(F16, true, false));
    let q = Problem::dense(4096, 4096, 128, F16);
    let wgsl = CoopEngine::Wgsl { entry: "gemm_coop_f16_epilogue_h2", direct: false };
    assert_eq!(coop(&route(&q, &h100())), (kernel(false, false, false), wgsl, 1, 128, false, [32, 32, 1]));
    // An f32 C at whole tiles: stored directly.
    let mut q = Problem::dense(4096, 4096, 128, F16);
    q.out = F32;
    let direct = CoopEngine::Wgsl { entry: "gemm_coop_f16", direct: true };
    assert_eq!(coop(&route(&q, &h100())).1, direct);
    // Without tensor cores: the tiled kernel.
    let q = Problem::dense(4096, 4096, 4096, F16);
    // (K past 2048: scalar stores.)
    assert_eq!(route(&q, &lavapipe()), tiled(2, 2, [2, 2, 1], TiledEntry::Gemm, (1, 4096, 1), [32, 32, 1]));
}

#[test]
fn the_settings_fix_the_tensor_core_api() {
    let q = Problem::dense(4096, 4096, 4096, F16);
    let s = GemmSettings { spirv: Some(2), ..GemmSettings::default() };
    let cm2 = CoopEngine::Coopmat2(Coopmat2Variant { block: 0, a_t: false, b_t: false, out: F16 });
    assert_eq!(coop(&plan(&q, &h100(), &s).unwrap().route).1, cm2);
    let s = GemmSettings { spirv: Some(0), ..GemmSettings::default() };
    assert!(matches!(coop(&plan(&q, &h100(), &s).unwrap().route).1, CoopEngine::Wgsl { .. }));
    let s = GemmSettings { coop: false, ..GemmSettings::default() };
    assert!(matches!(plan(&q, &h100(), &s).unwrap().route, Route::Tiled(_)));
}

#[test]
fn misaligned_f16_products_are_staged_where_large() {
    let q = Problem::dense(1000, 1000, 1001, F16);
    let p = planned(&q, &h100());
    assert_eq!(p.staging, Some(Staging { kp: 1008, a_rows_dense: false, bt_rows_dense: true }));
    assert_eq!(coop(&p.route), (kernel(true, false, false), khr(F16, false, false), 1, 1008, false, [8, 8, 1]));
    // No tensor cores: no copies, the tiled kernel on the views.
    let p = planned(&q, &lavapipe());
    assert_eq!(p.staging, None);
    assert_eq!(p.route, tiled(1, 1, [2, 2, 1], TiledEntry::GemmC4, (1, 1001, 1), [16, 16, 1]));
    // `always` copies them anyway (the copies tested on any driver).
    let s = GemmSettings { stage: StageMode::Always, ..GemmSettings::default() };
    let p = plan(&q, &lavapipe(), &s).unwrap();
    assert_eq!(p.staging.map(|s| s.kp), Some(1008));
    assert_eq!(p.route, tiled(1, 1, [2, 2, 1], TiledEntry::GemmC4, (1, 1008, 1), [16, 16, 1]));
    // Too small to pay for the copies.
    let q = Problem::dense(100, 100, 101, F16);
    assert_eq!(planned(&q, &h100()).staging, None);
}

#[test]
fn bf16_products_run_on_khr_into_f32_scratch() {
    let mut q = Problem::dense(4096, 4096, 4096, BF16);
    (q.c_bf16, q.out) = (true, F32);
    let p = planned(&q, &h100());
    assert!(p.c_bf16);
    assert_eq!(coop(&p.route).1, CoopEngine::Wide(WideVariant { b_t: false, out: F32, direct: true, bf16: true }));
    let off = GemmSettings { wide: Some(false), ..GemmSettings::default() };
    assert_eq!(engine(&q, &h100(), &off), khr(F32, true, true));
    let no_bf16 = DeviceProfile { coop_bf16: false, ..h100() };
    assert!(matches!(route(&q, &no_bf16), Route::Tiled(_)));
}

#[test]
fn a_weight_shared_by_the_batch_is_read_once_for_all_rows() {
    let q = Problem::dense(2, 256, 64, F32).batched(&[4], &[]);
    assert_eq!(gemv(&route(&q, &lavapipe())), ("axpy4_staged", 8, 1, 64, 8));
    // The tuner's candidates: wide and staged plan the same kernel, plain another.
    let c = candidates(&q, &lavapipe(), &GemmSettings::default()).unwrap();
    let names: Vec<&str> = c.iter().map(|c| c.name).collect();
    assert_eq!(names, ["wide", "staged", "plain"]);
    assert_eq!(c[0].plan, c[1].plan);
    assert_eq!(gemv(&c[2].plan.route).0, "axpy4");
    // A fixed mode: the one candidate.
    let s = GemmSettings { axpy: Some(AxpyMode::Plain), ..GemmSettings::default() };
    let c = candidates(&q, &lavapipe(), &s).unwrap();
    assert_eq!((c.len(), c[0].name), (1, "env"));
    assert_eq!(plan_in_mode(&q, &lavapipe(), &GemmSettings::default(), AxpyMode::Plain).unwrap(), c[0].plan);
}

#[test]
fn the_explanation_names_the_route_and_the_reason() {
    let line = planned(&Problem::dense(4096, 4096, 4096, F16), &h100()).to_string();
    assert!(line.starts_with("route coop khr_wide direct f16"), "{line}");
    assert!(line.contains(" because f16 operands readable with 16-byte loads"), "{line}");
    let line = planned(&Problem::dense(1000, 1000, 1000, F32), &lavapipe()).to_string();
    assert!(line.starts_with("route tiled gemm_c4") && line.contains("because f32 operands"), "{line}");
}

#[test]
fn settings_parse_from_variables() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    };
    assert_eq!(GemmSettings::parse(&|_| None), GemmSettings::default());
    let s = GemmSettings::parse(&vars(&[
        ("WGC_GEMM_SPIRV", "2"),
        ("WGC_GEMM_TILED_BLOCKS", "2x1"),
        ("WGC_GEMM_SKINNY_TILE", "n1k64"),
        ("WGC_GEMV_AXPY", "anything"),
        ("WGC_GEMM_CM2_BLOCK", "128x256x64"),
        ("WGC_GEMM_STAGE", "always"),
    ]));
    assert_eq!(s.spirv, Some(2));
    assert_eq!(s.tiled_blocks, Some((2, 1)));
    assert_eq!(s.skinny_tile, Some(TILES[1]));
    assert_eq!(s.axpy, Some(AxpyMode::Wide));
    assert_eq!(s.cm2_block, Some(1));
    assert_eq!(s.stage, StageMode::Always);
    assert_eq!(GemmSettings::parse(&vars(&[("WGC_GEMM_TILED_BLOCKS", "3x1")])).tiled_blocks, None);
}

/// B given as (N, K) and transposed by the call: dense along K.
fn b_nk(mut q: Problem) -> Problem {
    let (k, n) = (q.k, q.n);
    q.b.strides = [1, k as isize];
    q.b.batch_strides = q.b.batch_strides.iter().map(|&s| if s == 0 { 0 } else { (n * k) as isize }).collect();
    q
}

fn bf16_out(mut q: Problem) -> Problem {
    (q.c_bf16, q.out) = (true, F32);
    q
}

/// The H100-like profile plans the benchmark's shapes as an H100 did
/// (`bench/gemm_routes.c` there, through wgc_op_gemm_explain), with the
/// wide-block kernel's rule (wide.rs) since: products with A read along
/// K, the staged copies' included, K from 512 and enough blocks take it.
#[test]
fn the_h100_profile_plans_as_an_h100_did() {
    let p = h100();
    let line = |q: &Problem| planned(q, &p).to_string();
    let starts = |q: Problem, prefix: &str| {
        let l = line(&q);
        assert!(l.starts_with(prefix), "{l}\nexpected {prefix}");
    };
    starts(
        b_nk(Problem::dense(4096, 14336, 4096, F16)),
        "route coop khr_wide direct f16 a_t=0 b_t=1 edge=0 splits=1 k_chunk=4096 because",
    );
    starts(
        Problem::dense(8, 14336, 4096, F16),
        "route coop skinny_coopmat2 block=0 f16 a_t=0 b_t=0 edge=1 splits=4 k_chunk=1024 via_slab",
    );
    starts(
        b_nk(Problem::dense(16, 4096, 14336, F16)),
        "route coop skinny_khr n1k64 fm=1 f16 a_t=0 b_t=1 edge=1 splits=8 k_chunk=1792 via_slab",
    );
    starts(
        b_nk(Problem::dense(32, 4096, 14336, F16)),
        "route coop skinny_coopmat2 block=1 f16 a_t=0 b_t=1 edge=1 splits=6 k_chunk=2432 via_slab",
    );
    starts(Problem::dense(2, 14336, 4096, F16), "route gemv axpy_unit_narrow mt=2 rows=2 splits=1 k_chunk=4096");
    starts(b_nk(Problem::dense(1, 14336, 4096, F32)), "route gemv row_dot4_a4 mt=1 rows=1 splits=1 k_chunk=4096");
    starts(Problem::dense(32, 4096, 14336, F32), "route rows rt=32 weight=KN tiles=32 splits=32 k_chunk=448");
    starts(
        bf16_out(b_nk(Problem::dense(1, 14336, 4096, BF16))),
        "route gemv row_dot_unit_a4 mt=1 rows=1 splits=1 k_chunk=4096 into f32 scratch",
    );
    starts(
        bf16_out(Problem::dense(16, 4096, 14336, BF16)),
        "route coop skinny_khr n2k32 fm=1 bf16 a_t=0 b_t=0 edge=1 splits=16 k_chunk=896 via_slab into f32 scratch",
    );
    starts(
        Problem::dense(4095, 4097, 1023, F16),
        "route coop khr_wide epilogue f16 a_t=0 b_t=1 edge=1 splits=1 k_chunk=1024 on aligned copies (K padded to 1024)",
    );
    starts(
        Problem::dense(4000, 4000, 4000, F16),
        "route coop khr_wide epilogue f16 a_t=0 b_t=0 edge=1 splits=1 k_chunk=4000",
    );
    starts(
        Problem::dense(4096, 4096, 4080, F16),
        "route coop khr_wide direct f16 a_t=0 b_t=0 edge=1 splits=1 k_chunk=4080",
    );
    starts(
        Problem::dense(1024, 1024, 4096, F16),
        "route coop khr direct f16 a_t=0 b_t=0 edge=0 splits=4 k_chunk=1024 via_slab",
    );
    let mut qk = b_nk(Problem::dense(2048, 2048, 128, F16).batched(&[8], &[8]));
    qk.out = F32;
    starts(qk, "route coop wgsl gemm_coop_f16 f16 a_t=0 b_t=1 edge=0 splits=1 k_chunk=128 because");
    starts(
        Problem::dense(3000, 50, 5000, F32),
        "route tiled gemm_split rm=2 rn=1 layouts=[2, 2, 1] splits=11 parts=11 k_chunk=464",
    );
}

fn wide(out: DType, direct: bool, b_t: bool) -> CoopEngine {
    CoopEngine::Wide(WideVariant { b_t, out, direct, bf16: false })
}

fn engine(q: &Problem, p: &DeviceProfile, s: &GemmSettings) -> CoopEngine {
    coop(&plan(q, p, s).unwrap().route).1
}

#[test]
fn the_wide_block_takes_products_with_long_k_and_many_blocks() {
    let (p, d) = (h100(), GemmSettings::default());
    // LLaMA-7B prefill projections and squares with an (N, K) weight.
    let q = b_nk(Problem::dense(2048, 4096, 4096, F16));
    let (k, e, splits, k_chunk, slab, groups) = coop(&route(&q, &p));
    assert_eq!((k.a_t, k.b_t, k.edge, k.skinny), (false, true, false, false));
    assert_eq!((e, splits, k_chunk, slab, groups), (wide(F16, true, true), 1, 4096, false, [32, 16, 1]));
    assert_eq!(engine(&b_nk(Problem::dense(2048, 11008, 4096, F16)), &p, &d), wide(F16, true, true));
    assert_eq!(engine(&b_nk(Problem::dense(512, 32000, 4096, F16)), &p, &d), wide(F16, true, true));
    assert_eq!(engine(&b_nk(Problem::dense(8192, 8192, 8192, F16)), &p, &d), wide(F16, true, true));
    // f32 C, and an epilogue (alpha, beta, bias) or a partial block: the epilogue variant.
    let mut q32 = b_nk(Problem::dense(2048, 12288, 4096, F16));
    q32.out = F32;
    assert_eq!(engine(&q32, &p, &d), wide(F32, true, true));
    q32.beta = 1.0;
    assert_eq!(engine(&q32, &p, &d), wide(F32, false, true));
    assert_eq!(engine(&b_nk(Problem::dense(2000, 4000, 4000, F16)), &p, &d), wide(F16, false, true));
    // A batch counts its blocks: 4 x 512 x 4096 fills the GPU.
    let qb = b_nk(Problem::dense(512, 4096, 4096, F16).batched(&[4], &[]));
    assert_eq!(engine(&qb, &p, &d), wide(F16, true, true));
    // bf16 operands: the bf16 set into f32 (scratch for a bf16 C).
    let qbf = bf16_out(b_nk(Problem::dense(2048, 4096, 4096, BF16)));
    let bf = CoopEngine::Wide(WideVariant { b_t: true, out: F32, direct: true, bf16: true });
    assert_eq!(engine(&qbf, &p, &d), bf);
    let no_bf16 = DeviceProfile { coop_bf16: false, ..h100() };
    assert!(matches!(route(&qbf, &no_bf16), Route::Tiled(_)));
    // Without VK_NV_cooperative_matrix2 the same.
    assert_eq!(engine(&q, &DeviceProfile::h100_khr_only(), &d), wide(F16, true, true));
    // (K, N) weights, K past 8192 (the MLP down projection), bf16 (K, N).
    assert_eq!(engine(&Problem::dense(2048, 4096, 4096, F16), &p, &d), wide(F16, true, false));
    assert_eq!(engine(&b_nk(Problem::dense(2048, 4096, 11008, F16)), &p, &d), wide(F16, true, true));
    let qbf = bf16_out(Problem::dense(2048, 4096, 4096, BF16));
    let bf = CoopEngine::Wide(WideVariant { b_t: false, out: F32, direct: true, bf16: true });
    assert_eq!(engine(&qbf, &p, &d), bf);
}

#[test]
fn the_wide_block_declines_few_blocks_short_k_and_other_dtypes() {
    let (p, d) = (h100(), GemmSettings::default());
    let khr_nk = |out, direct| CoopEngine::Khr(SpirvVariant { b_t: true, ..khr_variant(out, direct) });
    // Too few blocks to fill 132 SMs three times: 512 x 4096 has 128 (K
    // split into f32 slabs), 2048 x 2048 256.
    let q = b_nk(Problem::dense(512, 4096, 4096, F16));
    assert_eq!(coop(&route(&q, &p)).1, khr_nk(F32, true));
    assert!(coop(&route(&q, &p)).4);
    assert_eq!(engine(&b_nk(Problem::dense(2048, 2048, 4096, F16)), &p, &d), khr_nk(F16, true));
    // K below 512: the WGSL kernel, as before.
    assert!(matches!(engine(&b_nk(Problem::dense(2048, 4096, 256, F16)), &p, &d), CoopEngine::Wgsl { .. }));
    // A read along M (a transposed view).
    let mut qa = b_nk(Problem::dense(2048, 4096, 4096, F16));
    qa.a.strides = [1, 2048];
    assert!(matches!(engine(&qa, &p, &d), CoopEngine::Khr(v) if v.a_t));
    // f32 operands: the tiled kernel.
    assert!(matches!(route(&b_nk(Problem::dense(2048, 4096, 4096, F32)), &p), Route::Tiled(_)));
    // bf16 (which the KHR kernel takes at any K) declines as f16 does.
    let qbf = bf16_out(b_nk(Problem::dense(2048, 4096, 256, BF16)));
    assert!(matches!(engine(&qbf, &p, &d), CoopEngine::Khr(v) if v.bf16));
    // Few rows: the skinny tile.
    assert!(matches!(engine(&b_nk(Problem::dense(16, 4096, 4096, F16)), &p, &d), CoopEngine::SkinnyKhr(_)));
    // A device with at most 128 invocations per workgroup, or none of the KHR kernels.
    let small = DeviceProfile { max_invocations: 128, ..h100() };
    assert_eq!(engine(&b_nk(Problem::dense(2048, 4096, 4096, F16)), &small, &d), khr_nk(F16, true));
    assert!(matches!(route(&b_nk(Problem::dense(2048, 4096, 4096, F16)), &lavapipe()), Route::Tiled(_)));
}

#[test]
fn the_wide_setting_turns_the_block_off_or_on_wherever_it_runs() {
    let p = h100();
    let q = b_nk(Problem::dense(2048, 4096, 4096, F16));
    let off = GemmSettings { wide: Some(false), ..GemmSettings::default() };
    assert!(matches!(engine(&q, &p, &off), CoopEngine::Khr(_)));
    let on = GemmSettings { wide: Some(true), ..GemmSettings::default() };
    assert_eq!(engine(&Problem::dense(2048, 4096, 4096, F16), &p, &on), wide(F16, true, false));
    assert_eq!(engine(&b_nk(Problem::dense(256, 256, 128, F16)), &p, &on), wide(F16, true, true));
    // Split K into slabs: the blocks store f32 slabs.
    let (_, e, splits, _, slab, _) = coop(&plan(&Problem::dense(1024, 1024, 4096, F16), &p, &on).unwrap().route);
    assert_eq!((e, splits, slab), (wide(F32, true, false), 4, true));
    // Not where another kernel is fixed, nor for A read along M.
    let cm2 = GemmSettings { spirv: Some(2), ..on };
    assert!(matches!(engine(&q, &p, &cm2), CoopEngine::Coopmat2(_)));
    let mut qa = q.clone();
    qa.a.strides = [1, 2048];
    assert!(matches!(engine(&qa, &p, &on), CoopEngine::Khr(_)));
    assert!(matches!(route(&q, &lavapipe()), Route::Tiled(_)));
    let parsed = |v: &'static str| GemmSettings::parse(&move |n: &str| (n == "WGC_GEMM_WIDE").then(|| v.to_string()));
    assert_eq!((parsed("0").wide, parsed("1").wide, parsed("yes").wide), (Some(false), Some(true), None));
}

#[test]
fn the_explanation_names_the_wide_block_and_why() {
    let line = planned(&b_nk(Problem::dense(2048, 4096, 4096, F16)), &h100()).to_string();
    assert!(line.starts_with("route coop khr_wide direct f16 a_t=0 b_t=1 edge=0 splits=1 k_chunk=4096"), "{line}");
    assert!(line.contains("the wide-block VK_KHR_cooperative_matrix kernel"), "{line}");
    assert!(line.contains("K 4096 from 512, 512 blocks of 128 x 128"), "{line}");
}

fn khr_variant(out: DType, direct: bool) -> SpirvVariant {
    SpirvVariant { double_buffered: false, a_t: false, b_t: false, out, direct, bf16: false }
}
