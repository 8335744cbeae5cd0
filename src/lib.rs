//! wgcompute: GPU compute for C and C++ over wgpu.
//!
//! Layers, data flowing down: `ffi` (the C ABI, the only unsafe boundary),
//! `ops` (built-in tensor operators), `runtime` (devices, buffers, kernels,
//! streams), then wgpu. WGSL sources live in `shaders/`.

pub mod error;
// The C ABI: native only (the browser build is the JavaScript API in `wasm`).
#[cfg(not(target_arch = "wasm32"))]
pub mod ffi;
pub mod ops;
pub mod runtime;
pub mod shaders;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{Error, Result};
