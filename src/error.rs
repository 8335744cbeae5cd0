//! The library's one error type. Every fallible function below the FFI layer
//! returns `Result<_, Error>`; the FFI layer turns the variant into a status
//! code and the message into the thread's last error message.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("null pointer: {0}")]
    NullPointer(String),
    #[error("out of range: {0}")]
    OutOfRange(String),
    #[error("misaligned: {0}")]
    Alignment(String),
    #[error("too large for this adapter: {0}")]
    TooLarge(String),
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    #[error("shader compilation failed: {0}")]
    ShaderCompilation(String),
    #[error("bindings do not match the kernel: {0}")]
    BindingMismatch(String),
    #[error("objects belong to different devices: {0}")]
    DeviceMismatch(String),
    #[error("device lost: {0}")]
    DeviceLost(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    #[error("dtype mismatch: {0}")]
    DtypeMismatch(String),
    #[error("limit exceeded: {0}")]
    LimitExceeded(String),
    #[error("ABI version mismatch: {0}")]
    AbiMismatch(String),
    #[error("GPU validation error: {0}")]
    Validation(String),
    #[error("timed out: {0}")]
    Timeout(String),
    #[error("internal error: {0}")]
    Internal(String),
}

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
