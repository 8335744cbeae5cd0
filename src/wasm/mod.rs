//! The browser build: a JavaScript API (wasm-bindgen) over the same
//! operators, on wgpu's WebGPU backend. Device creation and readback are
//! asynchronous here (promises); nothing blocks the browser's thread.
pub mod api;
pub mod api_nn;
pub mod read;
