//! Safe Rust over wgpu: devices, buffers and their pool, kernels and their
//! cache, streams and events. Knows nothing about C.

pub mod bind_cache;
pub mod binding;
pub mod block_on;
pub mod buffer;
pub mod device;
pub mod event;
pub mod instance;
pub mod kernel;
pub mod kernel_variant;
pub mod pool;
pub mod stream;
