//! The CUDA driver API, loaded from libcuda.so.1 at run time. The structs and constants
//! are declared here from cuda.h (CUDA 12/13; 64-bit layouts asserted below).

use crate::dl::Library;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::time::{Duration, Instant};

pub type CuResult = c_int;
pub type CuDevice = c_int;
pub type CuDevicePtr = u64;
pub type CuContext = *mut c_void;
pub type CuStream = *mut c_void;
pub type CuEvent = *mut c_void;
pub type CuExternalMemory = *mut c_void;
pub type CuExternalSemaphore = *mut c_void;

const CUDA_SUCCESS: CuResult = 0;
const CUDA_ERROR_NOT_READY: CuResult = 600;
const CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD: c_uint = 1;
const CUDA_EXTERNAL_MEMORY_DEDICATED: c_uint = 1;
const CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD: c_uint = 9;
const CU_STREAM_NON_BLOCKING: c_uint = 1;

/// `union { int fd; struct { void *handle; const void *name; } win32; const void *nvSci...; }`
#[repr(C)]
#[derive(Clone, Copy)]
pub union HandleUnion {
    pub fd: c_int,
    pub win32: [*const c_void; 2],
}

/// CUDA_EXTERNAL_MEMORY_HANDLE_DESC
#[repr(C)]
pub struct ExternalMemoryHandleDesc {
    pub handle_type: c_uint,
    pub handle: HandleUnion,
    pub size: u64,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// CUDA_EXTERNAL_MEMORY_BUFFER_DESC
#[repr(C)]
pub struct ExternalMemoryBufferDesc {
    pub offset: u64,
    pub size: u64,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC
#[repr(C)]
pub struct ExternalSemaphoreHandleDesc {
    pub handle_type: c_uint,
    pub handle: HandleUnion,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS: params { fence { value }, nvSciSync (union of a
/// pointer and a u64), keyedMutex { key }, reserved[12] }, flags, reserved[16].
#[repr(C)]
pub struct ExternalSemaphoreSignalParams {
    pub fence_value: u64,
    pub nv_sci_sync: u64,
    pub keyed_mutex_key: u64,
    pub params_reserved: [c_uint; 12],
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS: params { fence { value }, nvSciSync,
/// keyedMutex { key, timeoutMs }, reserved[10] }, flags, reserved[16].
#[repr(C)]
pub struct ExternalSemaphoreWaitParams {
    pub fence_value: u64,
    pub nv_sci_sync: u64,
    pub keyed_mutex_key: u64,
    pub keyed_mutex_timeout_ms: c_uint,
    pub keyed_mutex_pad: c_uint,
    pub params_reserved: [c_uint; 10],
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

const _: () = assert!(std::mem::size_of::<ExternalMemoryHandleDesc>() == 104);
const _: () = assert!(std::mem::size_of::<ExternalMemoryBufferDesc>() == 88);
const _: () = assert!(std::mem::size_of::<ExternalSemaphoreHandleDesc>() == 96);
const _: () = assert!(std::mem::size_of::<ExternalSemaphoreSignalParams>() == 144);
const _: () = assert!(std::mem::size_of::<ExternalSemaphoreWaitParams>() == 144);
const _: () = assert!(std::mem::offset_of!(ExternalSemaphoreSignalParams, flags) == 72);
const _: () = assert!(std::mem::offset_of!(ExternalSemaphoreWaitParams, flags) == 72);
const _: () = assert!(std::mem::offset_of!(ExternalMemoryHandleDesc, size) == 24);

/// Driver entry points, by their exported (versioned where cuda.h maps them) names.
struct Api {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    driver_get_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    device_get_uuid: unsafe extern "C" fn(*mut [u8; 16], CuDevice) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    primary_ctx_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_synchronize: unsafe extern "C" fn() -> CuResult,
    stream_create: unsafe extern "C" fn(*mut CuStream, c_uint) -> CuResult,
    stream_destroy: unsafe extern "C" fn(CuStream) -> CuResult,
    stream_synchronize: unsafe extern "C" fn(CuStream) -> CuResult,
    event_create: unsafe extern "C" fn(*mut CuEvent, c_uint) -> CuResult,
    event_destroy: unsafe extern "C" fn(CuEvent) -> CuResult,
    event_record: unsafe extern "C" fn(CuEvent, CuStream) -> CuResult,
    event_query: unsafe extern "C" fn(CuEvent) -> CuResult,
    event_elapsed_time: unsafe extern "C" fn(*mut f32, CuEvent, CuEvent) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    memcpy_htod: unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult,
    memcpy_dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
    memcpy_dtod_async: unsafe extern "C" fn(CuDevicePtr, CuDevicePtr, usize, CuStream) -> CuResult,
    import_external_memory: unsafe extern "C" fn(*mut CuExternalMemory, *const ExternalMemoryHandleDesc) -> CuResult,
    external_memory_get_mapped_buffer:
        unsafe extern "C" fn(*mut CuDevicePtr, CuExternalMemory, *const ExternalMemoryBufferDesc) -> CuResult,
    destroy_external_memory: unsafe extern "C" fn(CuExternalMemory) -> CuResult,
    import_external_semaphore:
        unsafe extern "C" fn(*mut CuExternalSemaphore, *const ExternalSemaphoreHandleDesc) -> CuResult,
    destroy_external_semaphore: unsafe extern "C" fn(CuExternalSemaphore) -> CuResult,
    signal_external_semaphores_async: unsafe extern "C" fn(
        *const CuExternalSemaphore,
        *const ExternalSemaphoreSignalParams,
        c_uint,
        CuStream,
    ) -> CuResult,
    wait_external_semaphores_async: unsafe extern "C" fn(
        *const CuExternalSemaphore,
        *const ExternalSemaphoreWaitParams,
        c_uint,
        CuStream,
    ) -> CuResult,
}

impl Api {
    fn load(lib: &Library) -> Result<Api, String> {
        // SAFETY: each type below is the cuda.h declaration of the named symbol (the
        // `_v2` names are what cuda.h's macros map the plain names to).
        unsafe {
            Ok(Api {
                init: lib.sym("cuInit")?,
                get_error_string: lib.sym("cuGetErrorString")?,
                driver_get_version: lib.sym("cuDriverGetVersion")?,
                device_get_count: lib.sym("cuDeviceGetCount")?,
                device_get: lib.sym("cuDeviceGet")?,
                device_get_name: lib.sym("cuDeviceGetName")?,
                device_get_uuid: lib.sym("cuDeviceGetUuid_v2").or_else(|_| lib.sym("cuDeviceGetUuid"))?,
                primary_ctx_retain: lib.sym("cuDevicePrimaryCtxRetain")?,
                primary_ctx_release: lib.sym("cuDevicePrimaryCtxRelease_v2")?,
                ctx_set_current: lib.sym("cuCtxSetCurrent")?,
                ctx_synchronize: lib.sym("cuCtxSynchronize")?,
                stream_create: lib.sym("cuStreamCreate")?,
                stream_destroy: lib.sym("cuStreamDestroy_v2")?,
                stream_synchronize: lib.sym("cuStreamSynchronize")?,
                event_create: lib.sym("cuEventCreate")?,
                event_destroy: lib.sym("cuEventDestroy_v2")?,
                event_record: lib.sym("cuEventRecord")?,
                event_query: lib.sym("cuEventQuery")?,
                event_elapsed_time: lib.sym("cuEventElapsedTime").or_else(|_| lib.sym("cuEventElapsedTime_v2"))?,
                mem_alloc: lib.sym("cuMemAlloc_v2")?,
                mem_free: lib.sym("cuMemFree_v2")?,
                memcpy_htod: lib.sym("cuMemcpyHtoD_v2")?,
                memcpy_dtoh: lib.sym("cuMemcpyDtoH_v2")?,
                memcpy_dtod_async: lib.sym("cuMemcpyDtoDAsync_v2")?,
                import_external_memory: lib.sym("cuImportExternalMemory")?,
                external_memory_get_mapped_buffer: lib.sym("cuExternalMemoryGetMappedBuffer")?,
                destroy_external_memory: lib.sym("cuDestroyExternalMemory")?,
                import_external_semaphore: lib.sym("cuImportExternalSemaphore")?,
                destroy_external_semaphore: lib.sym("cuDestroyExternalSemaphore")?,
                signal_external_semaphores_async: lib.sym("cuSignalExternalSemaphoresAsync")?,
                wait_external_semaphores_async: lib.sym("cuWaitExternalSemaphoresAsync")?,
            })
        }
    }
}

/// The driver, one device's primary context (current on this thread) and one stream.
pub struct Cuda {
    api: Api,
    device: CuDevice,
    pub stream: CuStream,
    pub device_name: String,
    pub driver_version: i32,
    pub uuid_matched: bool,
    // Keeps libcuda loaded while the entry points are in use.
    _library: Library,
}

impl Cuda {
    /// Loads libcuda.so.1; the error says why it could not be opened.
    pub fn load() -> Result<Library, String> {
        Library::open(&["libcuda.so.1".into()])
    }

    /// Initialises the driver on the CUDA device whose UUID is `vulkan_uuid` (else device 0).
    pub fn new(library: Library, vulkan_uuid: &[u8; 16]) -> Result<Cuda, String> {
        let api = Api::load(&library)?;
        let mut cuda = Cuda {
            api,
            device: 0,
            stream: std::ptr::null_mut(),
            device_name: String::new(),
            driver_version: 0,
            uuid_matched: false,
            _library: library,
        };
        // SAFETY: driver calls with valid out-pointers; the context is retained for the
        // life of `cuda` and released in Drop.
        unsafe {
            cuda.check((cuda.api.init)(0), "cuInit")?;
            let mut version = 0;
            cuda.check((cuda.api.driver_get_version)(&mut version), "cuDriverGetVersion")?;
            cuda.driver_version = version;
            let mut count = 0;
            cuda.check((cuda.api.device_get_count)(&mut count), "cuDeviceGetCount")?;
            if count == 0 {
                return Err("no CUDA device".into());
            }
            let mut chosen = None;
            for ordinal in 0..count {
                let mut device = 0;
                cuda.check((cuda.api.device_get)(&mut device, ordinal), "cuDeviceGet")?;
                let mut uuid = [0u8; 16];
                cuda.check((cuda.api.device_get_uuid)(&mut uuid, device), "cuDeviceGetUuid")?;
                if &uuid == vulkan_uuid {
                    chosen = Some(device);
                    break;
                }
            }
            cuda.uuid_matched = chosen.is_some();
            let device = match chosen {
                Some(d) => d,
                None => {
                    let mut d = 0;
                    cuda.check((cuda.api.device_get)(&mut d, 0), "cuDeviceGet")?;
                    d
                }
            };
            let mut name = [0 as c_char; 256];
            cuda.check((cuda.api.device_get_name)(name.as_mut_ptr(), 256, device), "cuDeviceGetName")?;
            cuda.device_name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            let mut context = std::ptr::null_mut();
            cuda.check((cuda.api.primary_ctx_retain)(&mut context, device), "cuDevicePrimaryCtxRetain")?;
            cuda.device = device;
            cuda.check((cuda.api.ctx_set_current)(context), "cuCtxSetCurrent")?;
            let mut stream = std::ptr::null_mut();
            cuda.check((cuda.api.stream_create)(&mut stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate")?;
            cuda.stream = stream;
        }
        Ok(cuda)
    }

    pub fn check(&self, result: CuResult, what: &str) -> Result<(), String> {
        if result == CUDA_SUCCESS {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString writes a pointer to a static string or leaves it null.
        let message = unsafe {
            if (self.api.get_error_string)(result, &mut text) == CUDA_SUCCESS && !text.is_null() {
                CStr::from_ptr(text).to_string_lossy().into_owned()
            } else {
                "unknown error".into()
            }
        };
        Err(format!("{what}: CUDA error {result} ({message})"))
    }

    /// Imports a dedicated OPAQUE_FD allocation of `allocation_size` bytes and maps its
    /// first `size` bytes. Takes ownership of `fd` (closed here if the import fails).
    pub fn import_memory(&self, fd: i32, allocation_size: u64, size: u64) -> Result<ImportedBuffer<'_>, String> {
        let desc = ExternalMemoryHandleDesc {
            handle_type: CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
            handle: HandleUnion { fd },
            size: allocation_size,
            flags: CUDA_EXTERNAL_MEMORY_DEDICATED,
            reserved: [0; 16],
        };
        let mut memory = std::ptr::null_mut();
        // SAFETY: the descriptor is fully initialised; on success the driver owns `fd`.
        let imported = unsafe { (self.api.import_external_memory)(&mut memory, &desc) };
        if let Err(e) = self.check(imported, "cuImportExternalMemory") {
            // SAFETY: the import failed, so the fd is still ours to close.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let buffer_desc = ExternalMemoryBufferDesc { offset: 0, size, flags: 0, reserved: [0; 16] };
        let mut ptr = 0;
        // SAFETY: `memory` is a live import; the mapping is freed before it is destroyed.
        let mapped = unsafe { (self.api.external_memory_get_mapped_buffer)(&mut ptr, memory, &buffer_desc) };
        if let Err(e) = self.check(mapped, "cuExternalMemoryGetMappedBuffer") {
            // SAFETY: the import is live and unmapped.
            unsafe { (self.api.destroy_external_memory)(memory) };
            return Err(e);
        }
        Ok(ImportedBuffer { cuda: self, memory, ptr, size })
    }

    /// Imports a Vulkan timeline semaphore's OPAQUE_FD (ownership of `fd` as above).
    pub fn import_timeline(&self, fd: i32) -> Result<ImportedSemaphore<'_>, String> {
        let desc = ExternalSemaphoreHandleDesc {
            handle_type: CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
            handle: HandleUnion { fd },
            flags: 0,
            reserved: [0; 16],
        };
        let mut semaphore = std::ptr::null_mut();
        // SAFETY: the descriptor is fully initialised; on success the driver owns `fd`.
        let imported = unsafe { (self.api.import_external_semaphore)(&mut semaphore, &desc) };
        if let Err(e) = self.check(imported, "cuImportExternalSemaphore") {
            // SAFETY: the import failed, so the fd is still ours to close.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Ok(ImportedSemaphore { cuda: self, semaphore })
    }

    /// Enqueues on the stream a GPU-side wait until the timeline reaches `value`.
    pub fn wait_value(&self, semaphore: &ImportedSemaphore, value: u64) -> Result<(), String> {
        let params = ExternalSemaphoreWaitParams {
            fence_value: value,
            nv_sci_sync: 0,
            keyed_mutex_key: 0,
            keyed_mutex_timeout_ms: 0,
            keyed_mutex_pad: 0,
            params_reserved: [0; 10],
            flags: 0,
            reserved: [0; 16],
        };
        // SAFETY: one live semaphore and one initialised params struct.
        let r = unsafe { (self.api.wait_external_semaphores_async)(&semaphore.semaphore, &params, 1, self.stream) };
        self.check(r, "cuWaitExternalSemaphoresAsync")
    }

    /// Enqueues on the stream a signal of the timeline to `value`.
    pub fn signal_value(&self, semaphore: &ImportedSemaphore, value: u64) -> Result<(), String> {
        let params = ExternalSemaphoreSignalParams {
            fence_value: value,
            nv_sci_sync: 0,
            keyed_mutex_key: 0,
            params_reserved: [0; 12],
            flags: 0,
            reserved: [0; 16],
        };
        // SAFETY: one live semaphore and one initialised params struct.
        let r = unsafe { (self.api.signal_external_semaphores_async)(&semaphore.semaphore, &params, 1, self.stream) };
        self.check(r, "cuSignalExternalSemaphoresAsync")
    }

    pub fn alloc(&self, size: usize) -> Result<DeviceAlloc<'_>, String> {
        let mut ptr = 0;
        // SAFETY: valid out-pointer; freed in DeviceAlloc's Drop.
        self.check(unsafe { (self.api.mem_alloc)(&mut ptr, size) }, "cuMemAlloc")?;
        Ok(DeviceAlloc { cuda: self, ptr, size })
    }

    /// Synchronous copy of `dst.len()` bytes from device address `src`.
    pub fn read(&self, dst: &mut [u8], src: CuDevicePtr) -> Result<(), String> {
        // SAFETY: `dst` is a writable host slice; the caller keeps `src` within a live
        // allocation of at least `dst.len()` bytes.
        let r = unsafe { (self.api.memcpy_dtoh)(dst.as_mut_ptr().cast(), src, dst.len()) };
        self.check(r, "cuMemcpyDtoH")
    }

    /// Synchronous copy of `src` to device address `dst`.
    pub fn write(&self, dst: CuDevicePtr, src: &[u8]) -> Result<(), String> {
        // SAFETY: as in read, the other way.
        let r = unsafe { (self.api.memcpy_htod)(dst, src.as_ptr().cast(), src.len()) };
        self.check(r, "cuMemcpyHtoD")
    }

    pub fn copy_async(&self, dst: CuDevicePtr, src: CuDevicePtr, bytes: usize) -> Result<(), String> {
        // SAFETY: the caller keeps both ranges within live allocations.
        let r = unsafe { (self.api.memcpy_dtod_async)(dst, src, bytes, self.stream) };
        self.check(r, "cuMemcpyDtoDAsync")
    }

    /// Waits for this stream's work only.
    pub fn sync_stream(&self) -> Result<(), String> {
        // SAFETY: the stream is live.
        self.check(unsafe { (self.api.stream_synchronize)(self.stream) }, "cuStreamSynchronize")
    }

    /// Waits for all work in the context, also the legacy stream's synchronous copies.
    pub fn synchronize(&self) -> Result<(), String> {
        // SAFETY: the stream is live.
        self.check(unsafe { (self.api.stream_synchronize)(self.stream) }, "cuStreamSynchronize")?;
        // SAFETY: the context is current.
        self.check(unsafe { (self.api.ctx_synchronize)() }, "cuCtxSynchronize")
    }

    pub fn event(&self) -> Result<Event<'_>, String> {
        let mut event = std::ptr::null_mut();
        // SAFETY: valid out-pointer; flags 0 keeps timing enabled.
        self.check(unsafe { (self.api.event_create)(&mut event, 0) }, "cuEventCreate")?;
        Ok(Event { cuda: self, event })
    }
}

impl Drop for Cuda {
    fn drop(&mut self) {
        // SAFETY: every import, allocation and event borrows `self`, so all are gone.
        unsafe {
            (self.api.stream_synchronize)(self.stream);
            (self.api.stream_destroy)(self.stream);
            (self.api.primary_ctx_release)(self.device);
        }
    }
}

/// Imported Vulkan memory, mapped at `ptr` in the CUDA context.
pub struct ImportedBuffer<'a> {
    cuda: &'a Cuda,
    memory: CuExternalMemory,
    pub ptr: CuDevicePtr,
    pub size: u64,
}

impl Drop for ImportedBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: the stream is synchronised before imports are dropped; the mapping is
        // freed before the import is destroyed, as the driver requires.
        unsafe {
            (self.cuda.api.stream_synchronize)(self.cuda.stream);
            (self.cuda.api.mem_free)(self.ptr);
            (self.cuda.api.destroy_external_memory)(self.memory);
        }
    }
}

pub struct ImportedSemaphore<'a> {
    cuda: &'a Cuda,
    semaphore: CuExternalSemaphore,
}

impl Drop for ImportedSemaphore<'_> {
    fn drop(&mut self) {
        // SAFETY: no stream work using it is pending after the synchronise.
        unsafe {
            (self.cuda.api.stream_synchronize)(self.cuda.stream);
            (self.cuda.api.destroy_external_semaphore)(self.semaphore);
        }
    }
}

pub struct DeviceAlloc<'a> {
    cuda: &'a Cuda,
    pub ptr: CuDevicePtr,
    pub size: usize,
}

impl Drop for DeviceAlloc<'_> {
    fn drop(&mut self) {
        // SAFETY: synchronised first, then freed once.
        unsafe {
            (self.cuda.api.stream_synchronize)(self.cuda.stream);
            (self.cuda.api.mem_free)(self.ptr);
        }
    }
}

pub struct Event<'a> {
    cuda: &'a Cuda,
    event: CuEvent,
}

impl Event<'_> {
    pub fn record(&self) -> Result<(), String> {
        // SAFETY: live event and stream of the same context.
        let r = unsafe { (self.cuda.api.event_record)(self.event, self.cuda.stream) };
        self.cuda.check(r, "cuEventRecord")
    }

    /// Polls until the event completes, failing after `timeout` (a hang is reported, not
    /// waited out).
    pub fn wait(&self, timeout: Duration) -> Result<(), String> {
        let start = Instant::now();
        loop {
            // SAFETY: live event.
            let r = unsafe { (self.cuda.api.event_query)(self.event) };
            if r != CUDA_ERROR_NOT_READY {
                return self.cuda.check(r, "cuEventQuery");
            }
            if start.elapsed() > timeout {
                crate::json::fatal(&format!("CUDA stream did not finish within {} s", timeout.as_secs()));
            }
            std::thread::yield_now();
        }
    }

    /// Milliseconds from `start` to this event (both completed).
    pub fn since(&self, start: &Event) -> Result<f64, String> {
        let mut ms = 0f32;
        // SAFETY: both events are live, recorded and completed.
        let r = unsafe { (self.cuda.api.event_elapsed_time)(&mut ms, start.event, self.event) };
        self.cuda.check(r, "cuEventElapsedTime")?;
        Ok(ms as f64)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: destroying a possibly pending event is allowed; the driver defers it.
        unsafe { (self.cuda.api.event_destroy)(self.event) };
    }
}
