//! The library's one error type. Every fallible function below the FFI layer
//! returns `Result<_, Error>`; the FFI layer turns the variant into a status
//! code and the message into the thread's last error message.

use crate::ffi::status::WgcStatus;
use std::fmt;

/// The one table of failures: each `Error` variant, the C status it returns
/// (`WgcStatus`, declared for the header in src/ffi/status.rs) and the words
/// its message starts with. `wgc_status_string` names statuses from this
/// table too, so a status is added in exactly two places: its C declaration
/// and its row here (a test checks that every declared status has a row).
macro_rules! error_table {
    ($($variant:ident => $status:ident, $what:literal;)*) => {
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Error {
            $($variant(String),)*
        }

        impl Error {
            /// The status code the C API returns for this error.
            pub fn status(&self) -> WgcStatus {
                match self {
                    $(Error::$variant(_) => WgcStatus::$status,)*
                }
            }

            fn what_and_message(&self) -> (&'static str, &str) {
                match self {
                    $(Error::$variant(m) => ($what, m),)*
                }
            }
        }

        /// Every failure status with its Rust name (`WgcErrorOutOfRange`).
        pub const FAILURE_STATUSES: &[(WgcStatus, &str)] = &[$((WgcStatus::$status, stringify!($status)),)*];
    };
}

error_table! {
    InvalidArgument => WgcErrorInvalidArgument, "invalid argument";
    NullPointer => WgcErrorNullPointer, "null pointer";
    OutOfRange => WgcErrorOutOfRange, "out of range";
    Alignment => WgcErrorAlignment, "misaligned";
    TooLarge => WgcErrorTooLarge, "too large for this adapter";
    OutOfMemory => WgcErrorOutOfMemory, "out of memory";
    ShaderCompilation => WgcErrorShaderCompilation, "shader compilation failed";
    BindingMismatch => WgcErrorBindingMismatch, "bindings do not match the kernel";
    DeviceMismatch => WgcErrorDeviceMismatch, "objects belong to different devices";
    DeviceLost => WgcErrorDeviceLost, "device lost";
    NotFound => WgcErrorNotFound, "not found";
    Unsupported => WgcErrorUnsupported, "unsupported";
    ShapeMismatch => WgcErrorShapeMismatch, "shape mismatch";
    DtypeMismatch => WgcErrorDtypeMismatch, "dtype mismatch";
    LimitExceeded => WgcErrorLimitExceeded, "limit exceeded";
    AbiMismatch => WgcErrorAbiMismatch, "ABI version mismatch";
    Validation => WgcErrorValidation, "GPU validation error";
    Timeout => WgcErrorTimeout, "timed out";
    Internal => WgcErrorInternal, "internal error";
    InvalidOperation => WgcErrorInvalidOperation, "invalid operation";
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, message) = self.what_and_message();
        write!(f, "{what}: {message}")
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for `Err(Error::Variant(format!(...)))`.
#[macro_export]
macro_rules! bail {
    ($variant:ident, $($arg:tt)*) => {
        return Err($crate::error::Error::$variant(format!($($arg)*)))
    };
}

impl Error {
    /// Map a wgpu error captured by an error scope.
    pub fn from_wgpu(e: wgpu::Error) -> Error {
        match e {
            wgpu::Error::OutOfMemory { .. } => Error::OutOfMemory(e.to_string()),
            wgpu::Error::Validation { description, .. } => Error::Validation(description),
            wgpu::Error::Internal { description, .. } => Error::Internal(description),
        }
    }
}
