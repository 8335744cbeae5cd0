//! Parts c and d: what alternating between the Vulkan queue and a CUDA stream costs.
//! With semaphores, each round is a Vulkan submit that waits (on the GPU) for timeline
//! value v and signals v + 1, then a CUDA wait for v + 1, the CUDA turn, and a signal of
//! v + 2, all enqueued without host waits; with host waits, each side's turn is waited for
//! on the host before the other's is submitted.

use crate::cuda::{Cuda, ImportedSemaphore};
use crate::json::Line;
use crate::vulkan::{transfer_to_host, Timeline, Vk, TIMEOUT_NS};
use ash::vk;
use std::time::{Duration, Instant};

const GPU_TIMEOUT: Duration = Duration::from_secs(20);

pub struct Timing {
    pub rounds: usize,
    /// Host clock from the first submit to the last completion, per round.
    pub wall_us: f64,
    /// Host time spent enqueueing, per round.
    pub issue_us: f64,
    /// CUDA events around the CUDA side of the loop, per round (where it has one).
    pub gpu_us: Option<f64>,
}

impl Timing {
    pub fn print(&self, mode: &str, vulkan_turn: &str, cuda_turn: &str) {
        let mut line = Line::new("handoff")
            .str("mode", mode)
            .str("vulkan_turn", vulkan_turn)
            .str("cuda_turn", cuda_turn)
            .int("rounds", self.rounds as i64)
            .num("wall_us_per_round", self.wall_us)
            .num("issue_us_per_round", self.issue_us);
        if let Some(gpu) = self.gpu_us {
            line = line.num("cuda_events_us_per_round", gpu);
        }
        line.print();
    }
}

/// Vulkan alone: `rounds` submits, each waiting for the previous one's timeline value.
pub fn vulkan_alone(
    vk: &Vk,
    timeline: &Timeline,
    rounds: usize,
    cb: Option<vk::CommandBuffer>,
) -> Result<Timing, String> {
    let base = vk.counter(timeline)?;
    let start = Instant::now();
    for i in 0..rounds as u64 {
        vk.submit(timeline, Some(base + i), base + i + 1, cb.as_slice())?;
    }
    let issue = start.elapsed();
    vk.wait(timeline, base + rounds as u64, TIMEOUT_NS)?;
    let wall = start.elapsed();
    Ok(per_round(rounds, wall, issue, None))
}

fn per_round(rounds: usize, wall: Duration, issue: Duration, gpu_ms: Option<f64>) -> Timing {
    let n = rounds as f64;
    Timing {
        rounds,
        wall_us: wall.as_secs_f64() * 1e6 / n,
        issue_us: issue.as_secs_f64() * 1e6 / n,
        gpu_us: gpu_ms.map(|ms| ms * 1e3 / n),
    }
}

/// One Vulkan timeline shared with CUDA.
pub struct Link<'c> {
    vk: &'c Vk,
    cuda: &'c Cuda,
    // Released by CUDA before Vulkan destroys the semaphore.
    imported: ImportedSemaphore<'c>,
    pub timeline: Timeline,
    next: u64,
}

pub type VulkanTurn<'f> = &'f dyn Fn(usize) -> Option<vk::CommandBuffer>;
pub type CudaTurn<'f> = &'f dyn Fn(usize) -> Result<(), String>;

impl<'c> Link<'c> {
    pub fn new(vk: &'c Vk, cuda: &'c Cuda) -> Result<Link<'c>, String> {
        let timeline = vk.timeline(true)?;
        let fd = vk.semaphore_fd(&timeline)?;
        let imported = cuda.import_timeline(fd)?;
        Ok(Link { vk, cuda, imported, timeline, next: 0 })
    }

    /// GPU-side handoffs both ways, no host wait until the end.
    pub fn semaphore_loop(
        &mut self,
        rounds: usize,
        vulkan_turn: VulkanTurn,
        cuda_turn: CudaTurn,
    ) -> Result<Timing, String> {
        let (vk, cuda) = (self.vk, self.cuda);
        // Other users of the timeline (Vulkan-only loops) may have moved it on.
        let base = vk.counter(&self.timeline)?;
        let (first, last) = (cuda.event()?, cuda.event()?);
        first.record()?;
        let start = Instant::now();
        for i in 0..rounds {
            let v = base + 2 * i as u64;
            let cb = vulkan_turn(i);
            vk.submit(&self.timeline, Some(v), v + 1, cb.as_slice())?;
            cuda.wait_value(&self.imported, v + 1)?;
            cuda_turn(i)?;
            cuda.signal_value(&self.imported, v + 2)?;
        }
        let issue = start.elapsed();
        last.record()?;
        let end = base + 2 * rounds as u64;
        vk.wait(&self.timeline, end, TIMEOUT_NS)?;
        last.wait(GPU_TIMEOUT)?;
        let wall = start.elapsed();
        let reached = vk.counter(&self.timeline)?;
        if reached != end {
            return Err(format!("timeline at {reached} after the loop, expected {end}"));
        }
        self.next = end;
        Ok(per_round(rounds, wall, issue, Some(last.since(&first)?)))
    }

    /// The same alternation with a host wait for each side's turn before the other's.
    pub fn host_loop(&mut self, rounds: usize, vulkan_turn: VulkanTurn, cuda_turn: CudaTurn) -> Result<Timing, String> {
        let (vk, cuda) = (self.vk, self.cuda);
        self.next = vk.counter(&self.timeline)?;
        let start = Instant::now();
        for i in 0..rounds {
            self.next += 1;
            let cb = vulkan_turn(i);
            vk.submit(&self.timeline, None, self.next, cb.as_slice())?;
            vk.wait(&self.timeline, self.next, TIMEOUT_NS)?;
            cuda_turn(i)?;
            cuda.sync_stream()?;
        }
        let wall = start.elapsed();
        Ok(per_round(rounds, wall, wall, None))
    }

    /// Vulkan then CUDA then Vulkan again, `rounds` times, each side reading what the other
    /// wrote in the turn before: Vulkan fills P with i + 1; CUDA copies P to Q (64 MiB, long
    /// enough for a missing wait to show) and logs Q's last word; Vulkan logs Q's last word
    /// in its next turn. Every log entry must be its round's value.
    pub fn ordering_check(&mut self, rounds: usize, p: &SharedPair) -> Result<bool, String> {
        let (vk, cuda) = (self.vk, self.cuda);
        let bytes = p.bytes;
        let last_word = bytes - 4;
        let cuda_log = cuda.alloc(4 * rounds)?;
        let vulkan_log = vk.staging(4 * rounds as u64)?;
        let (p_vk, q_vk, log_vk) = (p.p.vk.buffer, p.q.vk.buffer, vulkan_log.buffer);
        let mut cbs = Vec::with_capacity(rounds + 1);
        for i in 0..=rounds {
            cbs.push(vk.record(|device, cb| {
                // SAFETY: live buffers; regions in bounds; `cb` is recording.
                unsafe {
                    if i > 0 {
                        let region = vk::BufferCopy { src_offset: last_word, dst_offset: 4 * (i as u64 - 1), size: 4 };
                        device.cmd_copy_buffer(cb, q_vk, log_vk, &[region]);
                    }
                    if i < rounds {
                        device.cmd_fill_buffer(cb, p_vk, 0, bytes, i as u32 + 1);
                    }
                }
                transfer_to_host(device, cb);
            })?);
        }
        let (p_cu, q_cu) = (p.p.cuda.ptr, p.q.cuda.ptr);
        let log_cu = cuda_log.ptr;
        self.semaphore_loop(rounds, &|i| Some(cbs[i]), &|i| {
            cuda.copy_async(q_cu, p_cu, bytes as usize)?;
            cuda.copy_async(log_cu + 4 * i as u64, q_cu + last_word, 4)
        })?;
        self.next += 1;
        vk.submit(&self.timeline, Some(self.next - 1), self.next, &cbs[rounds..])?;
        vk.wait(&self.timeline, self.next, TIMEOUT_NS)?;
        cuda.synchronize()?;
        vk.free(&cbs);

        let mut seen_by_cuda = vec![0u8; 4 * rounds];
        cuda.read(&mut seen_by_cuda, log_cu)?;
        let words =
            |b: &[u8]| -> Vec<u32> { b.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect() };
        let by_cuda = words(&seen_by_cuda);
        let by_vulkan = words(vulkan_log.bytes());
        let wrong = |log: &[u32]| log.iter().enumerate().filter(|(i, &w)| w != *i as u32 + 1).count();
        let (cuda_wrong, vulkan_wrong) = (wrong(&by_cuda), wrong(&by_vulkan));
        let ok = cuda_wrong == 0 && vulkan_wrong == 0;
        Line::new("handoff_order")
            .int("rounds", rounds as i64)
            .int("bytes_per_turn", bytes as i64)
            .int("cuda_saw_stale", cuda_wrong as i64)
            .int("vulkan_saw_stale", vulkan_wrong as i64)
            .bool("ok", ok)
            .print();
        Ok(ok)
    }
}

/// Two shared buffers of equal size for the ordering check.
pub struct SharedPair<'c> {
    pub p: crate::shared::Shared<'c>,
    pub q: crate::shared::Shared<'c>,
    pub bytes: u64,
}
