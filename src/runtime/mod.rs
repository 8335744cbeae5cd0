//! Safe Rust over wgpu: devices, buffers and their pool, kernels and their
//! cache, streams and events. Knows nothing about C.

pub mod autotune;
pub mod autotune_file;
pub mod autotune_timer;
pub mod batch;
#[cfg_attr(target_arch = "wasm32", path = "../wasm/web_runtime/bf16_coop.rs")]
pub mod bf16_coop;
pub mod bind_cache;
pub mod binding;
pub mod block_on;
pub mod buffer;
pub mod comm;
pub mod compile_stack;
#[cfg_attr(target_arch = "wasm32", path = "../wasm/web_runtime/coopmat2.rs")]
pub mod coopmat2;
pub mod deferred_clear;
pub mod device;
pub mod event;
pub mod generated_kernels;
pub mod graph;
pub mod graph_capture;
pub mod graph_scalars;
#[cfg_attr(target_arch = "wasm32", path = "../wasm/web_runtime/hal_open.rs")]
pub mod hal_open;
#[cfg_attr(target_arch = "wasm32", path = "../wasm/web_runtime/host_import.rs")]
pub mod host_import;
pub mod in_flight;
pub mod indirect_counts;
pub mod inline_size;
pub mod instance;
pub mod kernel;
pub mod kernel_variant;
pub mod lease;
pub mod peer_copy;
pub mod peer_copy_imported;
pub mod pipeline_cache_file;
pub mod pool;
pub mod private_memory;
pub mod profile;
#[cfg_attr(target_arch = "wasm32", path = "../wasm/web_runtime/profile_query.rs")]
pub mod profile_query;
pub mod profiler;
pub mod reflect;
pub mod settings;
pub mod spirv_kernel;
pub mod stream;
pub mod stream_scratch;
pub mod user_kernels;
pub mod wgsl_nesting;
pub mod wgsl_size;
