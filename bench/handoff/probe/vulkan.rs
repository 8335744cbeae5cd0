//! The Vulkan half: a device with exportable memory and timeline semaphores, through ash
//! on a libvulkan loaded at run time.

use crate::dl::Library;
use ash::vk;
use std::ffi::CStr;

pub const TIMEOUT_NS: u64 = 20_000_000_000;

/// What the chosen physical device offers for sharing with another API.
pub struct DeviceInfo {
    pub name: String,
    pub vendor_id: u32,
    pub api_version: u32,
    pub driver_version: u32,
    pub device_uuid: [u8; 16],
    pub has_memory_fd: bool,
    pub has_semaphore_fd: bool,
    pub has_timeline: bool,
    /// OPAQUE_FD export of a transfer/storage buffer's memory.
    pub buffer_exportable: bool,
    pub buffer_dedicated_only: bool,
    /// OPAQUE_FD export of a timeline semaphore.
    pub timeline_exportable: bool,
}

pub struct Vk {
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub info: DeviceInfo,
    pool: vk::CommandPool,
    memory_properties: vk::PhysicalDeviceMemoryProperties,
    memory_fd: Option<ash::khr::external_memory_fd::Device>,
    semaphore_fd: Option<ash::khr::external_semaphore_fd::Device>,
    instance: ash::Instance,
    // The loader and its entry points stay loaded while the instance lives.
    _entry: ash::Entry,
    _library: Library,
}

fn vk_err(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

impl Vk {
    /// The first NVIDIA physical device (else the first one), with VK_KHR_external_memory_fd,
    /// VK_KHR_external_semaphore_fd and timeline semaphores enabled where it has them.
    pub fn new() -> Result<Vk, String> {
        let library = Library::open(&["libvulkan.so.1".into(), "libvulkan.so".into()])?;
        // SAFETY: vkGetInstanceProcAddr has this signature in every Vulkan loader.
        let get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr = unsafe { library.sym("vkGetInstanceProcAddr")? };
        // SAFETY: the pointer comes from the loader, which stays loaded in `_library`.
        let entry = unsafe { ash::Entry::from_static_fn(ash::StaticFn { get_instance_proc_addr }) };
        let app = vk::ApplicationInfo::default().application_name(c"handoff_probe").api_version(vk::API_VERSION_1_2);
        // SAFETY: the create info and the application info it points to outlive the call.
        let instance =
            unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None) }
                .map_err(vk_err("vkCreateInstance"))?;
        match Self::open_device(&instance) {
            Ok((physical, device, queue, family, info)) => {
                Self::finish(library, entry, instance, physical, device, queue, family, info)
            }
            Err(e) => {
                // SAFETY: nothing was created from the instance yet.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        library: Library,
        entry: ash::Entry,
        instance: ash::Instance,
        physical: vk::PhysicalDevice,
        device: ash::Device,
        queue: vk::Queue,
        family: u32,
        info: DeviceInfo,
    ) -> Result<Vk, String> {
        // SAFETY: the device is valid and created from this physical device.
        let pool = unsafe {
            device.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
        }
        .map_err(vk_err("vkCreateCommandPool"))?;
        // SAFETY: `physical` was enumerated from `instance`.
        let memory_properties = unsafe { instance.get_physical_device_memory_properties(physical) };
        let memory_fd = info.has_memory_fd.then(|| ash::khr::external_memory_fd::Device::new(&instance, &device));
        let semaphore_fd =
            info.has_semaphore_fd.then(|| ash::khr::external_semaphore_fd::Device::new(&instance, &device));
        Ok(Vk {
            device,
            queue,
            info,
            pool,
            memory_properties,
            memory_fd,
            semaphore_fd,
            instance,
            _entry: entry,
            _library: library,
        })
    }

    fn open_device(
        instance: &ash::Instance,
    ) -> Result<(vk::PhysicalDevice, ash::Device, vk::Queue, u32, DeviceInfo), String> {
        // SAFETY: the instance is valid for all the queries below.
        unsafe {
            let physicals = instance.enumerate_physical_devices().map_err(vk_err("vkEnumeratePhysicalDevices"))?;
            let physical = *physicals
                .iter()
                .find(|&&p| instance.get_physical_device_properties(p).vendor_id == 0x10de)
                .or(physicals.first())
                .ok_or("no Vulkan physical device")?;
            let info = Self::query(instance, physical)?;
            if info.api_version < vk::API_VERSION_1_2 {
                return Err(format!(
                    "{}: Vulkan {} < 1.2 (timeline semaphores need 1.2)",
                    info.name,
                    version_string(info.api_version)
                ));
            }
            let family = instance
                .get_physical_device_queue_family_properties(physical)
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
                .ok_or("no compute queue family")? as u32;
            let mut extensions = Vec::new();
            if info.has_memory_fd {
                extensions.push(ash::khr::external_memory_fd::NAME.as_ptr());
            }
            if info.has_semaphore_fd {
                extensions.push(ash::khr::external_semaphore_fd::NAME.as_ptr());
            }
            let priorities = [1.0f32];
            let queues =
                [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
            let mut features12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(info.has_timeline);
            let create = vk::DeviceCreateInfo::default()
                .queue_create_infos(&queues)
                .enabled_extension_names(&extensions)
                .push_next(&mut features12);
            let device = instance.create_device(physical, &create, None).map_err(vk_err("vkCreateDevice"))?;
            let queue = device.get_device_queue(family, 0);
            Ok((physical, device, queue, family, info))
        }
    }

    /// SAFETY: `physical` must come from `instance`.
    unsafe fn query(instance: &ash::Instance, physical: vk::PhysicalDevice) -> Result<DeviceInfo, String> {
        // SAFETY: as the caller guarantees; every output struct lives across its query.
        unsafe {
            let mut id = vk::PhysicalDeviceIDProperties::default();
            let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
            instance.get_physical_device_properties2(physical, &mut props2);
            let props = props2.properties;
            let name = props.device_name_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let device_uuid = id.device_uuid;
            let extensions = instance
                .enumerate_device_extension_properties(physical)
                .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?;
            let has = |wanted: &CStr| extensions.iter().any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == wanted));
            let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
            let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut timeline);
            instance.get_physical_device_features2(physical, &mut features2);
            let has_timeline = timeline.timeline_semaphore == vk::TRUE;

            let buffer_info = vk::PhysicalDeviceExternalBufferInfo::default()
                .usage(shared_buffer_usage())
                .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
            let mut buffer_props = vk::ExternalBufferProperties::default();
            instance.get_physical_device_external_buffer_properties(physical, &buffer_info, &mut buffer_props);
            let memory_features = buffer_props.external_memory_properties.external_memory_features;

            let mut semaphore_type =
                vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE).initial_value(0);
            let semaphore_info = vk::PhysicalDeviceExternalSemaphoreInfo::default()
                .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD)
                .push_next(&mut semaphore_type);
            let mut semaphore_props = vk::ExternalSemaphoreProperties::default();
            instance.get_physical_device_external_semaphore_properties(physical, &semaphore_info, &mut semaphore_props);
            Ok(DeviceInfo {
                name,
                vendor_id: props.vendor_id,
                api_version: props.api_version,
                driver_version: props.driver_version,
                device_uuid,
                has_memory_fd: has(ash::khr::external_memory_fd::NAME),
                has_semaphore_fd: has(ash::khr::external_semaphore_fd::NAME),
                has_timeline,
                buffer_exportable: memory_features.contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE),
                buffer_dedicated_only: memory_features.contains(vk::ExternalMemoryFeatureFlags::DEDICATED_ONLY),
                timeline_exportable: has_timeline
                    && semaphore_props
                        .external_semaphore_features
                        .contains(vk::ExternalSemaphoreFeatureFlags::EXPORTABLE),
            })
        }
    }

    fn memory_type(&self, type_bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        let props = &self.memory_properties;
        (0..props.memory_type_count)
            .find(|&i| type_bits & (1 << i) != 0 && props.memory_types[i as usize].property_flags.contains(flags))
    }

    /// A device-local buffer whose memory is a dedicated allocation exportable as an
    /// opaque fd.
    pub fn export_buffer(&self, size: u64) -> Result<ExportBuffer, String> {
        let mut external =
            vk::ExternalMemoryBufferCreateInfo::default().handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let create = vk::BufferCreateInfo::default()
            .size(size)
            .usage(shared_buffer_usage())
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external);
        // SAFETY: valid device and create info; every object made here is owned by the
        // returned ExportBuffer or destroyed on the error paths.
        unsafe {
            let buffer = self.device.create_buffer(&create, None).map_err(vk_err("vkCreateBuffer"))?;
            let requirements = self.device.get_buffer_memory_requirements(buffer);
            let Some(type_index) =
                self.memory_type(requirements.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
            else {
                self.device.destroy_buffer(buffer, None);
                return Err("no device-local memory type for an exportable buffer".into());
            };
            let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
            let mut export =
                vk::ExportMemoryAllocateInfo::default().handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
            let allocate = vk::MemoryAllocateInfo::default()
                .allocation_size(requirements.size)
                .memory_type_index(type_index)
                .push_next(&mut dedicated)
                .push_next(&mut export);
            let memory = match self.device.allocate_memory(&allocate, None) {
                Ok(m) => m,
                Err(e) => {
                    self.device.destroy_buffer(buffer, None);
                    return Err(format!("vkAllocateMemory ({} bytes, exportable): {e:?}", requirements.size));
                }
            };
            if let Err(e) = self.device.bind_buffer_memory(buffer, memory, 0) {
                self.device.destroy_buffer(buffer, None);
                self.device.free_memory(memory, None);
                return Err(format!("vkBindBufferMemory: {e:?}"));
            }
            Ok(ExportBuffer { device: self.device.clone(), buffer, memory, allocation_size: requirements.size })
        }
    }

    /// A new opaque fd for the buffer's memory; whoever imports it owns it.
    pub fn memory_fd(&self, buffer: &ExportBuffer) -> Result<i32, String> {
        let ext = self.memory_fd.as_ref().ok_or("VK_KHR_external_memory_fd is not enabled")?;
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(buffer.memory)
            .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        // SAFETY: the memory was allocated exportable as OPAQUE_FD on this device.
        unsafe { ext.get_memory_fd(&info) }.map_err(vk_err("vkGetMemoryFdKHR"))
    }

    /// A host-visible, coherent, mapped buffer for uploads and read-backs.
    pub fn staging(&self, size: u64) -> Result<Staging, String> {
        let create = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        // SAFETY: as in export_buffer; the mapping lives as long as the memory.
        unsafe {
            let buffer = self.device.create_buffer(&create, None).map_err(vk_err("vkCreateBuffer"))?;
            let requirements = self.device.get_buffer_memory_requirements(buffer);
            let Some(type_index) = self.memory_type(requirements.memory_type_bits, host) else {
                self.device.destroy_buffer(buffer, None);
                return Err("no host-visible coherent memory type".into());
            };
            let allocate =
                vk::MemoryAllocateInfo::default().allocation_size(requirements.size).memory_type_index(type_index);
            let memory = match self.device.allocate_memory(&allocate, None) {
                Ok(m) => m,
                Err(e) => {
                    self.device.destroy_buffer(buffer, None);
                    return Err(format!("vkAllocateMemory (staging, {size} bytes): {e:?}"));
                }
            };
            let mapped = self
                .device
                .bind_buffer_memory(buffer, memory, 0)
                .and_then(|_| self.device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()));
            match mapped {
                Ok(ptr) => {
                    Ok(Staging { device: self.device.clone(), buffer, memory, ptr: ptr.cast(), size: size as usize })
                }
                Err(e) => {
                    self.device.destroy_buffer(buffer, None);
                    self.device.free_memory(memory, None);
                    Err(format!("binding or mapping staging memory: {e:?}"))
                }
            }
        }
    }

    /// A timeline semaphore at value 0, exportable as an opaque fd when asked.
    pub fn timeline(&self, exportable: bool) -> Result<Timeline, String> {
        let mut semaphore_type =
            vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE).initial_value(0);
        let mut export =
            vk::ExportSemaphoreCreateInfo::default().handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let mut create = vk::SemaphoreCreateInfo::default().push_next(&mut semaphore_type);
        if exportable {
            create = create.push_next(&mut export);
        }
        // SAFETY: valid device and create info chain.
        let semaphore = unsafe { self.device.create_semaphore(&create, None) }.map_err(vk_err("vkCreateSemaphore"))?;
        Ok(Timeline { device: self.device.clone(), semaphore })
    }

    /// A new opaque fd for the timeline semaphore; whoever imports it owns it.
    pub fn semaphore_fd(&self, timeline: &Timeline) -> Result<i32, String> {
        let ext = self.semaphore_fd.as_ref().ok_or("VK_KHR_external_semaphore_fd is not enabled")?;
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(timeline.semaphore)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        // SAFETY: the semaphore was created exportable as OPAQUE_FD on this device.
        unsafe { ext.get_semaphore_fd(&info) }.map_err(vk_err("vkGetSemaphoreFdKHR"))
    }

    /// Records a command buffer that can be submitted many times, also while pending.
    pub fn record(&self, commands: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<vk::CommandBuffer, String> {
        let allocate = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool belongs to this device and is used from this thread only.
        unsafe {
            let cb = self.device.allocate_command_buffers(&allocate).map_err(vk_err("vkAllocateCommandBuffers"))?[0];
            self.device
                .begin_command_buffer(
                    cb,
                    &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE),
                )
                .map_err(vk_err("vkBeginCommandBuffer"))?;
            commands(&self.device, cb);
            self.device.end_command_buffer(cb).map_err(vk_err("vkEndCommandBuffer"))?;
            Ok(cb)
        }
    }

    /// Records, submits and waits (host side, with a fence) for one command buffer.
    pub fn run_once(&self, commands: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<(), String> {
        let cb = self.record(commands)?;
        // SAFETY: the command buffer and fence are waited on before they are freed.
        unsafe {
            let fence =
                self.device.create_fence(&vk::FenceCreateInfo::default(), None).map_err(vk_err("vkCreateFence"))?;
            let cbs = [cb];
            let result = self
                .device
                .queue_submit(self.queue, &[vk::SubmitInfo::default().command_buffers(&cbs)], fence)
                .and_then(|_| self.device.wait_for_fences(&[fence], true, TIMEOUT_NS));
            self.device.destroy_fence(fence, None);
            if result.is_ok() {
                self.device.free_command_buffers(self.pool, &cbs);
            }
            result.map_err(vk_err("vkQueueSubmit/vkWaitForFences"))
        }
    }

    /// Submits `cbs` (possibly none) waiting on the GPU for `wait` (if any) and signalling
    /// `signal` on the timeline; returns without waiting.
    pub fn submit(
        &self,
        timeline: &Timeline,
        wait: Option<u64>,
        signal: u64,
        cbs: &[vk::CommandBuffer],
    ) -> Result<(), String> {
        let semaphores = [timeline.semaphore];
        let stages = [vk::PipelineStageFlags::ALL_COMMANDS];
        let wait_values = [wait.unwrap_or(0)];
        let signal_values = [signal];
        let waits = if wait.is_some() { 1 } else { 0 };
        let mut values = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values[..waits])
            .signal_semaphore_values(&signal_values);
        let submit = vk::SubmitInfo::default()
            .wait_semaphores(&semaphores[..waits])
            .wait_dst_stage_mask(&stages[..waits])
            .command_buffers(cbs)
            .signal_semaphores(&semaphores)
            .push_next(&mut values);
        // SAFETY: the command buffers were recorded for simultaneous use on this device;
        // the arrays outlive the call.
        unsafe { self.device.queue_submit(self.queue, &[submit], vk::Fence::null()) }
            .map_err(vk_err("vkQueueSubmit (timeline)"))
    }

    /// Host wait until the timeline reaches `value`.
    pub fn wait(&self, timeline: &Timeline, value: u64, timeout_ns: u64) -> Result<(), String> {
        let semaphores = [timeline.semaphore];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default().semaphores(&semaphores).values(&values);
        // SAFETY: the semaphore is a timeline semaphore of this device.
        match unsafe { self.device.wait_semaphores(&info, timeout_ns) } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => crate::json::fatal(&format!(
                "vkWaitSemaphores(value {value}) timed out after {} s",
                timeout_ns / 1_000_000_000
            )),
            Err(e) => Err(format!("vkWaitSemaphores(value {value}): {e:?}")),
        }
    }

    pub fn counter(&self, timeline: &Timeline) -> Result<u64, String> {
        // SAFETY: the semaphore is a timeline semaphore of this device.
        unsafe { self.device.get_semaphore_counter_value(timeline.semaphore) }
            .map_err(vk_err("vkGetSemaphoreCounterValue"))
    }

    /// Frees command buffers made by `record` once they are no longer pending.
    pub fn free(&self, cbs: &[vk::CommandBuffer]) {
        // SAFETY: the caller has waited for every submission of these command buffers.
        unsafe { self.device.free_command_buffers(self.pool, cbs) };
    }

    pub fn idle(&self) -> Result<(), String> {
        // SAFETY: valid device, used from this thread only.
        unsafe { self.device.device_wait_idle() }.map_err(vk_err("vkDeviceWaitIdle"))
    }
}

impl Drop for Vk {
    fn drop(&mut self) {
        // SAFETY: every buffer, semaphore and command buffer is owned by objects that the
        // probe drops before the context; waiting for idle first ends all GPU work.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

pub fn shared_buffer_usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER
}

pub fn version_string(v: u32) -> String {
    format!("{}.{}.{}", vk::api_version_major(v), vk::api_version_minor(v), vk::api_version_patch(v))
}

/// A device-local buffer with exportable dedicated memory.
pub struct ExportBuffer {
    device: ash::Device,
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub allocation_size: u64,
}

impl Drop for ExportBuffer {
    fn drop(&mut self) {
        // SAFETY: the owner has waited for the GPU work using the buffer and released
        // every import of its memory before dropping it.
        unsafe {
            self.device.destroy_buffer(self.buffer, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

pub struct Staging {
    device: ash::Device,
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    ptr: *mut u8,
    pub size: usize,
}

impl Staging {
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the mapping covers `size` bytes for the life of `self`, and no GPU work
        // touches it while the host holds this borrow (callers wait before reading).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size) }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: as in bytes_mut.
        unsafe { std::slice::from_raw_parts(self.ptr, self.size) }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // SAFETY: the GPU work that used the buffer has completed.
        unsafe {
            self.device.unmap_memory(self.memory);
            self.device.destroy_buffer(self.buffer, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

pub struct Timeline {
    device: ash::Device,
    pub semaphore: vk::Semaphore,
}

impl Drop for Timeline {
    fn drop(&mut self) {
        // SAFETY: no submission that uses the semaphore is pending (the probe waits first).
        unsafe { self.device.destroy_semaphore(self.semaphore, None) };
    }
}

/// A transfer-write to host-read barrier, so that the host sees copies into staging.
pub fn transfer_to_host(device: &ash::Device, cb: vk::CommandBuffer) {
    let barrier = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    // SAFETY: `cb` is in the recording state.
    unsafe {
        device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[barrier],
            &[],
            &[],
        )
    };
}
