//! Part a: both APIs see the same bytes. Vulkan writes (a copy from the host, a fill) and
//! CUDA reads; CUDA writes and Vulkan reads.

use crate::cuda::Cuda;
use crate::json::Line;
use crate::numbers::pattern_word;
use crate::shared::{download, share, upload};
use crate::vulkan::{Staging, Vk};

/// Not a multiple of any large power of two, so a wrong size or offset shows.
const SHARED_BYTES: usize = (64 << 20) + 12;
const FILL_WORD: u32 = 0x3c00_bc00;

fn pattern_bytes(words: usize, seed: u32) -> Vec<u8> {
    (0..words).flat_map(|i| pattern_word(i, seed).to_le_bytes()).collect()
}

fn first_mismatch(got: &[u8], want: &[u8]) -> Option<usize> {
    got.iter().zip(want).position(|(g, w)| g != w)
}

fn report(direction: &str, bytes: usize, mismatch: Option<usize>) -> bool {
    let mut line = Line::new("shared_memory")
        .str("direction", direction)
        .int("bytes", bytes as i64)
        .bool("ok", mismatch.is_none());
    if let Some(at) = mismatch {
        line = line.int("first_mismatch_byte", at as i64);
    }
    line.print();
    mismatch.is_none()
}

/// Without CUDA: an exportable buffer takes data and gives it back through Vulkan, and its
/// memory exports as an fd.
pub fn vulkan_export(vk: &Vk, staging: &mut Staging) -> Result<bool, String> {
    let bytes = pattern_bytes(SHARED_BYTES / 4, 7);
    let buffer = vk.export_buffer(SHARED_BYTES as u64)?;
    upload(vk, staging, buffer.buffer, &bytes)?;
    let mut back = vec![0u8; bytes.len()];
    download(vk, staging, buffer.buffer, &mut back)?;
    let fd = vk.memory_fd(&buffer)?;
    // SAFETY: the fd was just exported to us and nothing imports it.
    unsafe { libc::close(fd) };
    let mismatch = first_mismatch(&back, &bytes);
    Line::new("vulkan_export")
        .int("bytes", bytes.len() as i64)
        .int("allocation_size", buffer.allocation_size as i64)
        .bool("fd_exported", fd >= 0)
        .bool("ok", mismatch.is_none())
        .print();
    Ok(mismatch.is_none() && fd >= 0)
}

pub fn shared_memory(vk: &Vk, cuda: &Cuda, staging: &mut Staging) -> Result<bool, String> {
    let start = std::time::Instant::now();
    let shared = share(vk, cuda, SHARED_BYTES as u64)?;
    Line::new("share")
        .int("bytes", SHARED_BYTES as i64)
        .num("allocate_export_import_map_ms", start.elapsed().as_secs_f64() * 1e3)
        .print();
    let mut ok = true;

    let written = pattern_bytes(SHARED_BYTES / 4, 1);
    upload(vk, staging, shared.vk.buffer, &written)?;
    let mut seen = vec![0u8; SHARED_BYTES];
    cuda.read(&mut seen, shared.cuda.ptr)?;
    ok &= report("vulkan_copy_to_cuda", SHARED_BYTES, first_mismatch(&seen, &written));

    let target = shared.vk.buffer;
    // SAFETY: the buffer is live; the size is a multiple of 4.
    vk.run_once(|device, cb| unsafe { device.cmd_fill_buffer(cb, target, 0, SHARED_BYTES as u64, FILL_WORD) })?;
    cuda.read(&mut seen, shared.cuda.ptr)?;
    let filled: Vec<u8> = (0..SHARED_BYTES / 4).flat_map(|_| FILL_WORD.to_le_bytes()).collect();
    ok &= report("vulkan_fill_to_cuda", SHARED_BYTES, first_mismatch(&seen, &filled));

    let from_cuda = pattern_bytes(SHARED_BYTES / 4, 2);
    cuda.write(shared.cuda.ptr, &from_cuda)?;
    cuda.synchronize()?;
    download(vk, staging, shared.vk.buffer, &mut seen)?;
    ok &= report("cuda_to_vulkan", SHARED_BYTES, first_mismatch(&seen, &from_cuda));
    Ok(ok)
}
