//! Buffers that both APIs address: Vulkan allocates and exports, CUDA imports and maps.
//! Host transfers on the Vulkan side go through a staging buffer, in chunks.

use crate::cuda::{Cuda, ImportedBuffer};
use crate::vulkan::{transfer_to_host, ExportBuffer, Staging, Vk};
use ash::vk;

/// The CUDA mapping is declared first so that it is released before the Vulkan memory.
pub struct Shared<'c> {
    pub cuda: ImportedBuffer<'c>,
    pub vk: ExportBuffer,
}

pub fn share<'c>(vk: &Vk, cuda: &'c Cuda, size: u64) -> Result<Shared<'c>, String> {
    let buffer = vk.export_buffer(size)?;
    let fd = vk.memory_fd(&buffer)?;
    let imported = cuda.import_memory(fd, buffer.allocation_size, size)?;
    Ok(Shared { cuda: imported, vk: buffer })
}

/// Host bytes -> `dst` at offset 0, through Vulkan copies.
pub fn upload(vk: &Vk, staging: &mut Staging, dst: vk::Buffer, bytes: &[u8]) -> Result<(), String> {
    let chunk = staging.size;
    for (index, part) in bytes.chunks(chunk).enumerate() {
        staging.bytes_mut()[..part.len()].copy_from_slice(part);
        let region = vk::BufferCopy { src_offset: 0, dst_offset: (index * chunk) as u64, size: part.len() as u64 };
        let src = staging.buffer;
        // SAFETY: both buffers are live and large enough for the region.
        vk.run_once(|device, cb| unsafe { device.cmd_copy_buffer(cb, src, dst, &[region]) })?;
    }
    Ok(())
}

/// `src` from offset 0 -> host bytes, through Vulkan copies.
pub fn download(vk: &Vk, staging: &mut Staging, src: vk::Buffer, out: &mut [u8]) -> Result<(), String> {
    let chunk = staging.size;
    for (index, part) in out.chunks_mut(chunk).enumerate() {
        let region = vk::BufferCopy { src_offset: (index * chunk) as u64, dst_offset: 0, size: part.len() as u64 };
        let dst = staging.buffer;
        vk.run_once(|device, cb| {
            // SAFETY: both buffers are live and large enough for the region.
            unsafe { device.cmd_copy_buffer(cb, src, dst, &[region]) };
            transfer_to_host(device, cb);
        })?;
        part.copy_from_slice(&staging.bytes()[..part.len()]);
    }
    Ok(())
}
