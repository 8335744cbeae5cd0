//! Status codes, their names, the last error message and the version.

use super::boundary::last_error_ptr;
use crate::error::Error;
use std::ffi::c_char;

/// The result of every fallible call. Values are fixed and never renumbered.
/// On failure, `wgc_last_error_message()` describes what went wrong.
///
/// cbindgen:rename-all=ScreamingSnakeCase
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgcStatus {
    /// Success.
    WgcOk = 0,
    /// An argument has a value the function does not accept.
    WgcErrorInvalidArgument = 1,
    /// A required pointer or handle is NULL.
    WgcErrorNullPointer = 2,
    /// An offset, size, index or view reaches outside its object.
    WgcErrorOutOfRange = 3,
    /// An offset or size is not a multiple of what the GPU requires.
    WgcErrorAlignment = 4,
    /// A request exceeds what this adapter allows (e.g. buffer size).
    WgcErrorTooLarge = 5,
    /// The GPU ran out of memory.
    WgcErrorOutOfMemory = 6,
    /// WGSL failed to parse or validate; the message has line and column.
    WgcErrorShaderCompilation = 7,
    /// Bound buffers do not match what the kernel declares.
    WgcErrorBindingMismatch = 8,
    /// Objects of different devices were used together.
    WgcErrorDeviceMismatch = 9,
    /// The device was lost or destroyed.
    WgcErrorDeviceLost = 10,
    /// A named thing (adapter, entry point) does not exist.
    WgcErrorNotFound = 11,
    /// The operation, dtype or feature is not supported here.
    WgcErrorUnsupported = 12,
    /// Tensor shapes do not agree.
    WgcErrorShapeMismatch = 13,
    /// Tensor dtypes do not agree.
    WgcErrorDtypeMismatch = 14,
    /// A dispatch or kernel exceeds one of the adapter's limits.
    WgcErrorLimitExceeded = 15,
    /// The header the caller was compiled with does not match this library.
    WgcErrorAbiMismatch = 16,
    /// The GPU layer rejected an operation (message has details).
    WgcErrorValidation = 17,
    /// A wait timed out.
    WgcErrorTimeout = 18,
    /// A bug in wgcompute (including a caught panic).
    WgcErrorInternal = 19,
}

impl WgcStatus {
    pub(crate) fn of(e: &Error) -> WgcStatus {
        use WgcStatus::*;
        match e {
            Error::InvalidArgument(_) => WgcErrorInvalidArgument,
            Error::NullPointer(_) => WgcErrorNullPointer,
            Error::OutOfRange(_) => WgcErrorOutOfRange,
            Error::Alignment(_) => WgcErrorAlignment,
            Error::TooLarge(_) => WgcErrorTooLarge,
            Error::OutOfMemory(_) => WgcErrorOutOfMemory,
            Error::ShaderCompilation(_) => WgcErrorShaderCompilation,
            Error::BindingMismatch(_) => WgcErrorBindingMismatch,
            Error::DeviceMismatch(_) => WgcErrorDeviceMismatch,
            Error::DeviceLost(_) => WgcErrorDeviceLost,
            Error::NotFound(_) => WgcErrorNotFound,
            Error::Unsupported(_) => WgcErrorUnsupported,
            Error::ShapeMismatch(_) => WgcErrorShapeMismatch,
            Error::DtypeMismatch(_) => WgcErrorDtypeMismatch,
            Error::LimitExceeded(_) => WgcErrorLimitExceeded,
            Error::AbiMismatch(_) => WgcErrorAbiMismatch,
            Error::Validation(_) => WgcErrorValidation,
            Error::Timeout(_) => WgcErrorTimeout,
            Error::Internal(_) => WgcErrorInternal,
        }
    }
}

/// Major version of the library this header describes.
pub const WGC_VERSION_MAJOR: u32 = 0;
/// Minor version.
pub const WGC_VERSION_MINOR: u32 = 1;
/// Patch version.
pub const WGC_VERSION_PATCH: u32 = 0;
/// Version of the binary interface: structs, enums and signatures. Pass it to
/// `wgc_instance_create`; a library built for another ABI refuses it.
pub const WGC_ABI_VERSION: u32 = 1;

/// The name of a status code, e.g. "WGC_ERROR_OUT_OF_RANGE". Never NULL; the
/// string is static.
#[no_mangle]
pub extern "C" fn wgc_status_string(status: u32) -> *const c_char {
    // An integer, not `WgcStatus`: callers may pass any value.
    let s: &'static [u8] = match status {
        0 => b"WGC_OK\0",
        1 => b"WGC_ERROR_INVALID_ARGUMENT\0",
        2 => b"WGC_ERROR_NULL_POINTER\0",
        3 => b"WGC_ERROR_OUT_OF_RANGE\0",
        4 => b"WGC_ERROR_ALIGNMENT\0",
        5 => b"WGC_ERROR_TOO_LARGE\0",
        6 => b"WGC_ERROR_OUT_OF_MEMORY\0",
        7 => b"WGC_ERROR_SHADER_COMPILATION\0",
        8 => b"WGC_ERROR_BINDING_MISMATCH\0",
        9 => b"WGC_ERROR_DEVICE_MISMATCH\0",
        10 => b"WGC_ERROR_DEVICE_LOST\0",
        11 => b"WGC_ERROR_NOT_FOUND\0",
        12 => b"WGC_ERROR_UNSUPPORTED\0",
        13 => b"WGC_ERROR_SHAPE_MISMATCH\0",
        14 => b"WGC_ERROR_DTYPE_MISMATCH\0",
        15 => b"WGC_ERROR_LIMIT_EXCEEDED\0",
        16 => b"WGC_ERROR_ABI_MISMATCH\0",
        17 => b"WGC_ERROR_VALIDATION\0",
        18 => b"WGC_ERROR_TIMEOUT\0",
        19 => b"WGC_ERROR_INTERNAL\0",
        _ => b"WGC_STATUS_UNKNOWN\0",
    };
    s.as_ptr() as *const c_char
}

/// The detailed message of the last call that failed on the calling thread
/// ("" if none has). Owned by the library; valid until the next failing call
/// on this thread. Shader diagnostics include line and column. Calls made
/// while the thread exits (from pthread key destructors) report statuses
/// and messages as usual.
#[no_mangle]
pub extern "C" fn wgc_last_error_message() -> *const c_char {
    last_error_ptr()
}

/// The library's version as `(MAJOR << 16) | (MINOR << 8) | PATCH`.
#[no_mangle]
pub extern "C" fn wgc_version() -> u32 {
    (WGC_VERSION_MAJOR << 16) | (WGC_VERSION_MINOR << 8) | WGC_VERSION_PATCH
}

/// The ABI version the library was built with (compare with `WGC_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn wgc_abi_version() -> u32 {
    WGC_ABI_VERSION
}
