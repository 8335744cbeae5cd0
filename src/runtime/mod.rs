//! Safe Rust over wgpu: devices, buffers and their pool, kernels and their
//! cache, streams and events. Knows nothing about C.

pub mod autotune;
pub mod autotune_file;
pub mod autotune_timer;
pub mod batch;
pub mod bf16_coop;
pub mod bind_cache;
pub mod binding;
pub mod block_on;
pub mod buffer;
pub mod compile_stack;
pub mod coopmat2;
pub mod deferred_clear;
pub mod device;
pub mod event;
pub mod hal_open;
pub mod in_flight;
pub mod indirect_counts;
pub mod instance;
pub mod kernel;
pub mod kernel_variant;
pub mod lease;
pub mod pipeline_cache_file;
pub mod pool;
pub mod private_memory;
pub mod reflect;
pub mod spirv_kernel;
pub mod stream;
pub mod user_kernels;
pub mod wgsl_nesting;
