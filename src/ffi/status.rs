//! Status codes, their names, the last error message and the version.

use super::boundary::last_error_ptr;
use crate::error::Error;
use once_cell::sync::Lazy;
use std::ffi::{c_char, CString};

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
    /// The call is not allowed in the object's present state: e.g. a host
    /// read of a buffer that a stream's capture uses, a blocking wait on a
    /// capturing stream, a second `wgc_stream_begin_capture`.
    WgcErrorInvalidOperation = 20,
}

/// The one table of failure statuses: each `Error` variant and the status
/// the C API returns for it. `wgc_status_string` names statuses from this
/// table too, so a status is added in its C declaration above and its row
/// here (a test checks that every declared status has a row; the match
/// makes every `Error` variant have one).
macro_rules! status_table {
    ($($variant:ident => $status:ident;)*) => {
        /// The status code the C API returns for `e`.
        pub(crate) fn status_of(e: &Error) -> WgcStatus {
            match e {
                $(Error::$variant(_) => WgcStatus::$status,)*
            }
        }

        /// Every failure status with its Rust name (`WgcErrorOutOfRange`).
        const FAILURE_STATUSES: &[(WgcStatus, &str)] = &[$((WgcStatus::$status, stringify!($status)),)*];
    };
}

status_table! {
    InvalidArgument => WgcErrorInvalidArgument;
    NullPointer => WgcErrorNullPointer;
    OutOfRange => WgcErrorOutOfRange;
    Alignment => WgcErrorAlignment;
    TooLarge => WgcErrorTooLarge;
    OutOfMemory => WgcErrorOutOfMemory;
    ShaderCompilation => WgcErrorShaderCompilation;
    BindingMismatch => WgcErrorBindingMismatch;
    DeviceMismatch => WgcErrorDeviceMismatch;
    DeviceLost => WgcErrorDeviceLost;
    NotFound => WgcErrorNotFound;
    Unsupported => WgcErrorUnsupported;
    ShapeMismatch => WgcErrorShapeMismatch;
    DtypeMismatch => WgcErrorDtypeMismatch;
    LimitExceeded => WgcErrorLimitExceeded;
    AbiMismatch => WgcErrorAbiMismatch;
    Validation => WgcErrorValidation;
    Timeout => WgcErrorTimeout;
    Internal => WgcErrorInternal;
    InvalidOperation => WgcErrorInvalidOperation;
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
    let s =
        status_names().iter().find(|(code, _)| *code == status).map_or(c"WGC_STATUS_UNKNOWN", |(_, n)| n.as_c_str());
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

/// `WgcErrorOutOfRange` -> `WGC_ERROR_OUT_OF_RANGE`: the C spelling cbindgen
/// gives the same variant (rename-all = ScreamingSnakeCase).
fn screaming_snake(rust_name: &str) -> String {
    let mut out = String::with_capacity(rust_name.len() + 8);
    for (i, ch) in rust_name.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

/// Every status code with its C name, built once from the error table.
fn status_names() -> &'static [(u32, CString)] {
    static NAMES: Lazy<Vec<(u32, CString)>> = Lazy::new(|| {
        let all = std::iter::once((WgcStatus::WgcOk, "WgcOk")).chain(FAILURE_STATUSES.iter().copied());
        all.map(|(s, n)| (s as u32, CString::new(screaming_snake(n)).expect("status names have no NUL"))).collect()
    });
    &NAMES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_status_has_one_name() {
        let names = status_names();
        let last = WgcStatus::WgcErrorInvalidOperation as u32;
        for code in 0..=last {
            let found: Vec<_> = names.iter().filter(|(c, _)| *c == code).collect();
            assert_eq!(found.len(), 1, "status {code} needs exactly one row in status_table!");
        }
        assert_eq!(names.len() as u32, last + 1, "codes are 0..={last}, each once");
        assert_eq!(screaming_snake("WgcErrorOutOfRange"), "WGC_ERROR_OUT_OF_RANGE");
    }

    /// The header's version macros (these constants, through cbindgen) are the
    /// package's version in Cargo.toml.
    #[test]
    fn version_constants_match_cargo_toml() {
        let v = |s: &str| s.parse::<u32>().unwrap();
        assert_eq!(WGC_VERSION_MAJOR, v(env!("CARGO_PKG_VERSION_MAJOR")), "WGC_VERSION_MAJOR vs Cargo.toml");
        assert_eq!(WGC_VERSION_MINOR, v(env!("CARGO_PKG_VERSION_MINOR")), "WGC_VERSION_MINOR vs Cargo.toml");
        assert_eq!(WGC_VERSION_PATCH, v(env!("CARGO_PKG_VERSION_PATCH")), "WGC_VERSION_PATCH vs Cargo.toml");
        let header = include_str!("../../include/wgcompute.h");
        for (name, value) in [
            ("WGC_VERSION_MAJOR", WGC_VERSION_MAJOR),
            ("WGC_VERSION_MINOR", WGC_VERSION_MINOR),
            ("WGC_VERSION_PATCH", WGC_VERSION_PATCH),
        ] {
            assert!(header.contains(&format!("#define {name} {value}")), "include/wgcompute.h: {name} is not {value}");
        }
    }
}
