//! wgcompute: GPU compute for C and C++ over wgpu.
//!
//! Layers, data flowing down: `ffi` (the C ABI, the only unsafe boundary),
//! `ops` (built-in tensor operators), `runtime` (devices, buffers, kernels,
//! streams), then wgpu. WGSL sources live in `shaders/`.

pub mod error;
pub mod ffi;
pub mod ops;
pub mod runtime;
pub mod shaders;

pub use error::{Error, Result};
