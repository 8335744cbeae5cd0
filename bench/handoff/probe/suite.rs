//! The handoff measurements in order: ordering check, bare round trips, then a
//! 2048x4096x4096 product per CUDA turn and a 16 MiB fill per Vulkan turn, against each
//! alone.

use crate::cublaslt::Lt;
use crate::cuda::Cuda;
use crate::gemm::{run_and_check, Operands, Shape};
use crate::handoff::{vulkan_alone, Link, SharedPair, Timing};
use crate::json::Line;
use crate::numbers::Rng;
use crate::shared::share;
use crate::vulkan::{Staging, Vk};
use std::time::Instant;

const ORDER_BYTES: u64 = 64 << 20;
const ORDER_ROUNDS: usize = 50;
/// One activation of the prefill block: 2048 tokens x 4096 f16.
const FILL_BYTES: u64 = 2048 * 4096 * 2;
pub const PROJECTION: Shape = Shape { m: 2048, n: 4096, k: 4096 };

pub fn run(
    vk: &Vk,
    cuda: &Cuda,
    lt: Option<&Lt>,
    staging: &mut Staging,
    rounds: usize,
    rng: &mut Rng,
) -> Result<bool, String> {
    let mut link = Link::new(vk, cuda)?;
    let pair = SharedPair { p: share(vk, cuda, ORDER_BYTES)?, q: share(vk, cuda, ORDER_BYTES)?, bytes: ORDER_BYTES };
    let mut ok = link.ordering_check(ORDER_ROUNDS, &pair)?;

    let (p_vk, q_cu) = (pair.p.vk.buffer, pair.q.cuda.ptr);
    let tiny_fill = vk.record(|device, cb| {
        // SAFETY: live buffer, 4-byte region in bounds, `cb` recording.
        unsafe { device.cmd_fill_buffer(cb, p_vk, 0, 4, 1) }
    })?;
    let tiny_copy = || cuda.copy_async(q_cu, q_cu + 4, 4);
    let none = || Ok(());

    // Warm both paths before timing.
    link.semaphore_loop(rounds / 4, &|_| Some(tiny_fill), &|_| tiny_copy())?;
    link.semaphore_loop(rounds, &|_| None, &|_| none())?.print("semaphore", "empty_submit", "none");
    link.semaphore_loop(rounds, &|_| Some(tiny_fill), &|_| tiny_copy())?.print(
        "semaphore",
        "fill_4_bytes",
        "copy_4_bytes",
    );
    link.host_loop(rounds, &|_| Some(tiny_fill), &|_| tiny_copy())?.print("host_wait", "fill_4_bytes", "copy_4_bytes");

    if let Some(lt) = lt {
        ok &= with_gemm(vk, cuda, lt, staging, &mut link, rounds, rng)?;
    }
    vk.idle()?;
    vk.free(&[tiny_fill]);
    Ok(ok)
}

fn with_gemm(
    vk: &Vk,
    cuda: &Cuda,
    lt: &Lt,
    staging: &mut Staging,
    link: &mut Link,
    rounds: usize,
    rng: &mut Rng,
) -> Result<bool, String> {
    let ops = Operands::new(vk, cuda, staging, PROJECTION, rng)?;
    let plan = lt.plan(PROJECTION.m as u64, PROJECTION.n as u64, PROJECTION.k as u64)?;
    let (a, b, c) = (ops.a.cuda.ptr, ops.b.cuda.ptr, ops.c.cuda.ptr);
    let (ok, _) = run_and_check(cuda, &plan, &ops, (a, b, c), rng)?;
    if !ok {
        Line::new("handoff_gemm").bool("ok", false).print();
        return Ok(false);
    }
    let activation = share(vk, cuda, FILL_BYTES)?;
    let target = activation.vk.buffer;
    // SAFETY: live buffer, whole-buffer fill of a multiple of 4 bytes, `cb` recording.
    let fill = vk.record(|device, cb| unsafe { device.cmd_fill_buffer(cb, target, 0, FILL_BYTES, 0x3c00_3c00) })?;
    let product = || plan.run(a, b, c);

    // Each side alone, the same number of times.
    for _ in 0..rounds / 4 {
        product()?;
    }
    cuda.synchronize()?;
    let (first, last) = (cuda.event()?, cuda.event()?);
    first.record()?;
    let start = Instant::now();
    for _ in 0..rounds {
        product()?;
    }
    let issue = start.elapsed();
    last.record()?;
    last.wait(std::time::Duration::from_secs(30))?;
    let wall = start.elapsed();
    let n = rounds as f64;
    let gemm_alone = Timing {
        rounds,
        wall_us: wall.as_secs_f64() * 1e6 / n,
        issue_us: issue.as_secs_f64() * 1e6 / n,
        gpu_us: Some(last.since(&first)? * 1e3 / n),
    };
    gemm_alone.print("cuda_alone", "none", "gemm_2048x4096x4096");
    let fill_alone = vulkan_alone(vk, &link.timeline, rounds, Some(fill))?;
    fill_alone.print("vulkan_alone", "fill_16MiB", "none");

    let semaphore = link.semaphore_loop(rounds, &|_| Some(fill), &|_| product())?;
    semaphore.print("semaphore", "fill_16MiB", "gemm_2048x4096x4096");
    let host = link.host_loop(rounds, &|_| Some(fill), &|_| product())?;
    host.print("host_wait", "fill_16MiB", "gemm_2048x4096x4096");

    let alone = gemm_alone.gpu_us.unwrap_or(gemm_alone.wall_us) + fill_alone.wall_us;
    Line::new("handoff_summary")
        .str("gemm", &PROJECTION.name())
        .num("gemm_alone_us", gemm_alone.gpu_us.unwrap_or(f64::NAN))
        .num("fill_alone_us", fill_alone.wall_us)
        .num("semaphore_round_us", semaphore.wall_us)
        .num("semaphore_overhead_us", semaphore.wall_us - alone)
        .num("host_wait_round_us", host.wall_us)
        .num("host_wait_overhead_us", host.wall_us - alone)
        .print();
    vk.idle()?;
    vk.free(&[fill]);
    Ok(true)
}
