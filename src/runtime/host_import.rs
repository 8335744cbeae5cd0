//! VK_EXT_external_memory_host: one page-aligned host allocation (a
//! `HostBlock`) imported into several devices as a buffer of each, so that
//! one device copies into it and another copies out of it with no host copy
//! in between (runtime/peer_copy_imported.rs). wgpu 30 does not know the
//! extension: devices open with it through wgpu-hal (runtime/hal_open.rs)
//! where the adapter lists it, the buffer and its imported memory are made
//! with ash and handed to wgpu (`create_buffer_from_hal`), and wgpu gives
//! them back to us to free when it has no more use for them.

use super::device::{next_id, Device};
use super::hal_open;
use crate::bail;
use crate::error::{Error, Result};
use ash::vk;
use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

pub const EXTENSION: &CStr = ash::ext::external_memory_host::NAME;

/// Blocks start and end on this boundary; a device whose
/// `minImportedHostPointerAlignment` does not divide it does not import.
const BLOCK_ALIGN: u64 = 64 << 10;

const HANDLE: vk::ExternalMemoryHandleTypeFlags = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;

/// True where the adapter is a Vulkan one with the extension and an import
/// alignment that divides `BLOCK_ALIGN`.
pub fn supported(adapter: &wgpu::Adapter) -> bool {
    hal_open::extension_with(adapter, EXTENSION, |hal| {
        let mut host = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut host);
        // SAFETY: the adapter has the extension that defines the chained struct.
        unsafe {
            hal.shared_instance().raw_instance().get_physical_device_properties2(hal.raw_physical_device(), &mut props)
        };
        let align = host.min_imported_host_pointer_alignment;
        align > 0 && BLOCK_ALIGN.is_multiple_of(align)
    })
}

/// Page-aligned host memory that devices import. Freed once no device's
/// buffer over it remains (each import holds the block).
pub struct HostBlock {
    ptr: *mut u8,
    layout: Layout,
    pub id: u64,
    pub size: u64,
    /// Submissions that still use the block: it is not written again before
    /// they have run.
    pending: Mutex<Vec<(Weak<Device>, wgpu::SubmissionIndex)>>,
}

// SAFETY: the pointer is only handed to the driver; the host never touches
// the memory, which lives until the block drops.
unsafe impl Send for HostBlock {}
unsafe impl Sync for HostBlock {}

impl HostBlock {
    fn new(size: u64) -> Result<Arc<HostBlock>> {
        let size = size.div_ceil(BLOCK_ALIGN) * BLOCK_ALIGN;
        let layout = Layout::from_size_align(size as usize, BLOCK_ALIGN as usize)
            .map_err(|e| Error::Internal(format!("host block layout: {e}")))?;
        // SAFETY: a layout of nonzero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            bail!(OutOfMemory, "could not allocate {size} bytes of host memory for a copy between devices");
        }
        Ok(Arc::new(HostBlock { ptr, layout, id: next_id(), size, pending: Mutex::new(Vec::new()) }))
    }

    /// Note that `index` of `dev` uses the block.
    pub fn used_by(&self, dev: &Arc<Device>, index: wgpu::SubmissionIndex) {
        self.pending.lock().unwrap().push((Arc::downgrade(dev), index));
    }

    /// Wait until the submissions that use the block have run (those of
    /// devices since dropped cannot run any more).
    fn wait_unused(&self) -> Result<()> {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap());
        for (dev, index) in pending {
            if let Some(dev) = dev.upgrade() {
                dev.wait_for(index)?;
            }
        }
        Ok(())
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`; no device memory
        // imports it any more (each holds the block until freed).
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// Blocks no copy uses now, for the next (importing costs far more than a
/// copy of a small tensor). Blocks stay while a device that imported them
/// lives: as many as copies ran at once, each up to 4 chunks (64 MiB).
static FREE: Mutex<Vec<Arc<HostBlock>>> = Mutex::new(Vec::new());

/// A block of at least `size` bytes that nothing uses: the smallest free one
/// that fits (once the work still reading it has run), or a new one of the
/// next power of two.
pub fn take_block(size: u64) -> Result<Arc<HostBlock>> {
    let found = {
        let mut free = FREE.lock().unwrap();
        let best = free.iter().enumerate().filter(|(_, b)| b.size >= size).min_by_key(|(_, b)| b.size).map(|(i, _)| i);
        best.map(|i| free.swap_remove(i))
    };
    if let Some(block) = found {
        // A block whose last readers fail to finish is not used again.
        if block.wait_unused().is_ok() {
            return Ok(block);
        }
    }
    HostBlock::new(size.max(BLOCK_ALIGN).next_power_of_two())
}

/// Return a block after use (its pending readers noted with `used_by`).
pub fn give_back(block: Arc<HostBlock>) {
    FREE.lock().unwrap().push(block);
}

/// A device's side: the extension's function and its buffers over blocks.
pub struct HostImport {
    fns: ash::ext::external_memory_host::Device,
    buffers: Mutex<HashMap<u64, wgpu::Buffer>>,
    /// An import failed: the driver lists the extension but does not take
    /// our memory, so copies of this device take the staged route from now.
    failed: AtomicBool,
}

impl HostImport {
    /// For a device opened with the extension.
    pub fn new(device: &wgpu::Device) -> Option<HostImport> {
        // SAFETY: the hal device is only read while the guard lives.
        let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }?;
        let fns = ash::ext::external_memory_host::Device::new(hal.shared_instance().raw_instance(), hal.raw_device());
        Some(HostImport { fns, buffers: Mutex::new(HashMap::new()), failed: AtomicBool::new(false) })
    }

    /// False once an import has failed (see `failed`).
    pub fn usable(&self) -> bool {
        !self.failed.load(Ordering::Acquire)
    }

    /// The device's buffer over the whole of `block` (COPY_SRC and
    /// COPY_DST), imported on first use; None where the import fails (the
    /// device then stops importing; the caller takes the staged route).
    pub fn buffer(&self, dev: &Device, block: &Arc<HostBlock>) -> Option<wgpu::Buffer> {
        if let Some(b) = self.buffers.lock().unwrap().get(&block.id) {
            return Some(b.clone());
        }
        let buffer = match dev.scoped(|| self.import(&dev.wgpu, block)) {
            Ok(Ok(b)) => b,
            _ => {
                self.failed.store(true, Ordering::Release);
                return None;
            }
        };
        self.buffers.lock().unwrap().insert(block.id, buffer.clone());
        Some(buffer)
    }

    fn import(&self, device: &wgpu::Device, block: &Arc<HostBlock>) -> std::result::Result<wgpu::Buffer, vk::Result> {
        // SAFETY: the hal device is used only while the guard lives, and
        // dropped before the buffer is handed to wgpu.
        let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }.ok_or(vk::Result::ERROR_UNKNOWN)?;
        let raw = hal.raw_device().clone();
        let ptr = block.ptr as *mut c_void;
        let mut host = vk::MemoryHostPointerPropertiesEXT::default();
        // SAFETY: a live, aligned host allocation of `block.size` bytes.
        unsafe { (self.fns.fp().get_memory_host_pointer_properties_ext)(raw.handle(), HANDLE, ptr, &mut host) }
            .result()?;
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE);
        let info = vk::BufferCreateInfo::default()
            .size(block.size)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external);
        // SAFETY: valid create info; the buffer is destroyed on every path below.
        let buffer = unsafe { raw.create_buffer(&info, None) }?;
        let memory = (|| {
            // SAFETY: a buffer of this device.
            let need = unsafe { raw.get_buffer_memory_requirements(buffer) };
            let types = need.memory_type_bits & host.memory_type_bits;
            if types == 0 || need.size > block.size {
                return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
            }
            let mut import = vk::ImportMemoryHostPointerInfoEXT::default().handle_type(HANDLE).host_pointer(ptr);
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(block.size)
                .memory_type_index(types.trailing_zeros())
                .push_next(&mut import);
            // SAFETY: the block outlives the memory (held by the drop callback).
            let memory = unsafe { raw.allocate_memory(&alloc, None) }?;
            // SAFETY: fresh buffer and memory of this device; the memory is large enough.
            if let Err(e) = unsafe { raw.bind_buffer_memory(buffer, memory, 0) } {
                unsafe { raw.free_memory(memory, None) };
                return Err(e);
            }
            Ok(memory)
        })();
        let memory = match memory {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: the buffer was never used.
                unsafe { raw.destroy_buffer(buffer, None) };
                return Err(e);
            }
        };
        let held = block.clone();
        let free: wgpu::hal::DropCallback = Box::new(move || {
            // SAFETY: wgpu calls this once it has no more use for the buffer
            // (its submissions have run), before the device is destroyed.
            unsafe {
                raw.destroy_buffer(buffer, None);
                raw.free_memory(memory, None);
            }
            drop(held);
        });
        // SAFETY: the buffer and memory stay valid until the callback runs.
        let hal_buffer = unsafe { wgpu::hal::vulkan::Buffer::from_raw_externally_owned(buffer, free) };
        drop(hal);
        let desc = wgpu::BufferDescriptor {
            label: Some("wgcompute imported host memory"),
            size: block.size,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        };
        // SAFETY: a buffer of this device with the usages `desc` states, never mapped by wgpu.
        Ok(unsafe { device.create_buffer_from_hal::<wgpu::hal::api::Vulkan>(hal_buffer, &desc) })
    }
}
