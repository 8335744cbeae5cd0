//! The library's one error type. Every fallible function below the FFI layer
//! returns `Result<_, Error>`; the FFI layer turns the variant into a status
//! code (src/ffi/status.rs) and the message into the thread's last error
//! message.

use std::fmt;

/// The one table of failures: each `Error` variant and the words its
/// message starts with. The C status each returns is mapped in
/// src/ffi/status.rs (an exhaustive match: a variant added here without a
/// status there fails to build).
macro_rules! error_table {
    ($($variant:ident, $what:literal;)*) => {
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Error {
            $($variant(String),)*
        }

        impl Error {
            fn what_and_message(&self) -> (&'static str, &str) {
                match self {
                    $(Error::$variant(m) => ($what, m),)*
                }
            }
        }
    };
}

error_table! {
    InvalidArgument, "invalid argument";
    NullPointer, "null pointer";
    OutOfRange, "out of range";
    Alignment, "misaligned";
    TooLarge, "too large for this adapter";
    OutOfMemory, "out of memory";
    ShaderCompilation, "shader compilation failed";
    BindingMismatch, "bindings do not match the kernel";
    DeviceMismatch, "objects belong to different devices";
    DeviceLost, "device lost";
    NotFound, "not found";
    Unsupported, "unsupported";
    ShapeMismatch, "shape mismatch";
    DtypeMismatch, "dtype mismatch";
    LimitExceeded, "limit exceeded";
    AbiMismatch, "ABI version mismatch";
    Validation, "GPU validation error";
    Timeout, "timed out";
    Internal, "internal error";
    InvalidOperation, "invalid operation";
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
