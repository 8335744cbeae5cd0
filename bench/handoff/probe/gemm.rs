//! Part b: cuBLASLt f16 products (f32 accumulate, f16 out) on Vulkan-allocated memory,
//! checked against an f64 reference on sampled entries, then timed with CUDA events; the
//! same product on CUDA's own allocations alongside.

use crate::cublaslt::{Lt, Plan};
use crate::cuda::{CuDevicePtr, Cuda};
use crate::json::Line;
use crate::numbers::{check_gemm_samples, median, Rng};
use crate::shared::{share, upload, Shared};
use crate::vulkan::{Staging, Vk};
use std::time::Duration;

pub const SAMPLES: usize = 64;

#[derive(Clone, Copy)]
pub struct Shape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Shape {
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    pub fn name(&self) -> String {
        format!("{}x{}x{}", self.m, self.n, self.k)
    }
}

/// A (M, K), B (N, K) and C (M, N), f16, in shared memory; A and B uploaded through Vulkan.
pub struct Operands<'c> {
    pub a: Shared<'c>,
    pub b: Shared<'c>,
    pub c: Shared<'c>,
    pub host_a: Vec<u16>,
    pub host_b: Vec<u16>,
    pub shape: Shape,
}

impl<'c> Operands<'c> {
    pub fn new(vk: &Vk, cuda: &'c Cuda, staging: &mut Staging, shape: Shape, rng: &mut Rng) -> Result<Self, String> {
        let host_a: Vec<u16> = (0..shape.m * shape.k).map(|_| rng.operand_f16()).collect();
        let host_b: Vec<u16> = (0..shape.n * shape.k).map(|_| rng.operand_f16()).collect();
        let a = share(vk, cuda, (host_a.len() * 2) as u64)?;
        let b = share(vk, cuda, (host_b.len() * 2) as u64)?;
        let c = share(vk, cuda, (shape.m * shape.n * 2) as u64)?;
        upload(vk, staging, a.vk.buffer, bytemuck::cast_slice(&host_a))?;
        upload(vk, staging, b.vk.buffer, bytemuck::cast_slice(&host_b))?;
        Ok(Operands { a, b, c, host_a, host_b, shape })
    }
}

/// Runs the product once into `c` and checks sampled entries; returns whether all pass.
pub fn run_and_check(
    cuda: &Cuda,
    plan: &Plan,
    ops: &Operands,
    (a, b, c): (CuDevicePtr, CuDevicePtr, CuDevicePtr),
    rng: &mut Rng,
) -> Result<(bool, f64), String> {
    let shape = ops.shape;
    // Garbage in C first, so a product that writes nothing fails the check.
    let poison = vec![0x7cu8; shape.m * shape.n * 2];
    cuda.write(c, &poison)?;
    // The write ran on the legacy stream: finish it before the product is enqueued.
    cuda.synchronize()?;
    plan.run(a, b, c)?;
    cuda.synchronize()?;
    let mut out = vec![0u16; shape.m * shape.n];
    cuda.read(bytemuck::cast_slice_mut(&mut out), c)?;
    let check = check_gemm_samples(&ops.host_a, &ops.host_b, &out, (shape.m, shape.n, shape.k), SAMPLES, rng);
    Ok((check.failures == 0, check.max_abs_err))
}

/// Median milliseconds of `reps` runs of `work`, each between two CUDA events, after
/// `warmup` runs.
pub fn time_events(
    cuda: &Cuda,
    warmup: usize,
    reps: usize,
    work: &dyn Fn() -> Result<(), String>,
) -> Result<(f64, f64), String> {
    for _ in 0..warmup {
        work()?;
    }
    let mut events = Vec::with_capacity(2 * reps);
    for _ in 0..2 * reps {
        events.push(cuda.event()?);
    }
    for pair in events.chunks(2) {
        pair[0].record()?;
        work()?;
        pair[1].record()?;
    }
    events[2 * reps - 1].wait(Duration::from_secs(60))?;
    let mut times = Vec::with_capacity(reps);
    for pair in events.chunks(2) {
        times.push(pair[1].since(&pair[0])?);
    }
    let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
    Ok((median(&mut times), min))
}

pub struct GemmResult {
    pub ok: bool,
    pub imported_ms: f64,
    pub native_ms: f64,
}

pub fn measure(
    vk: &Vk,
    cuda: &Cuda,
    lt: &Lt,
    staging: &mut Staging,
    shape: Shape,
    (warmup, reps): (usize, usize),
    rng: &mut Rng,
) -> Result<GemmResult, String> {
    let ops = Operands::new(vk, cuda, staging, shape, rng)?;
    let plan = lt.plan(shape.m as u64, shape.n as u64, shape.k as u64)?;
    let imported = (ops.a.cuda.ptr, ops.b.cuda.ptr, ops.c.cuda.ptr);
    let (ok_imported, err_imported) = run_and_check(cuda, &plan, &ops, imported, rng)?;

    // The same operands in CUDA's own allocations: whether imported memory costs anything.
    let native_a = cuda.alloc(ops.a.cuda.size as usize)?;
    let native_b = cuda.alloc(ops.b.cuda.size as usize)?;
    let native_c = cuda.alloc(ops.c.cuda.size as usize)?;
    cuda.copy_async(native_a.ptr, ops.a.cuda.ptr, native_a.size)?;
    cuda.copy_async(native_b.ptr, ops.b.cuda.ptr, native_b.size)?;
    let native = (native_a.ptr, native_b.ptr, native_c.ptr);
    let (ok_native, err_native) = run_and_check(cuda, &plan, &ops, native, rng)?;

    let ok = ok_imported && ok_native;
    let mut result = GemmResult { ok, imported_ms: f64::NAN, native_ms: f64::NAN };
    let mut line = Line::new("gemm")
        .str("shape", &shape.name())
        .str("layout", "A (M,K) row-major, B (N,K) row-major, C = A B^T f16, f32 accumulate")
        .int("algorithms_found", plan.algorithms_found as i64)
        .int("workspace_bytes", plan.workspace_needed() as i64)
        .int("samples_checked", 2 * SAMPLES as i64)
        .num("max_abs_err_imported", err_imported)
        .num("max_abs_err_native", err_native)
        .bool("ok", ok);
    if ok {
        let (a, b, c) = imported;
        let (imported_ms, imported_min) = time_events(cuda, warmup, reps, &|| plan.run(a, b, c))?;
        let (a, b, c) = native;
        let (native_ms, native_min) = time_events(cuda, warmup, reps, &|| plan.run(a, b, c))?;
        result.imported_ms = imported_ms;
        result.native_ms = native_ms;
        let tflops = |ms: f64| shape.flops() / (ms * 1e-3) / 1e12;
        line = line
            .int("reps", reps as i64)
            .num("imported_median_ms", imported_ms)
            .num("imported_min_ms", imported_min)
            .num("imported_tflops", tflops(imported_ms))
            .num("native_median_ms", native_ms)
            .num("native_min_ms", native_min)
            .num("native_tflops", tflops(native_ms));
    }
    line.print();
    Ok(result)
}
