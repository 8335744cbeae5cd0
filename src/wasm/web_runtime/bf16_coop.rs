//! The browser's stand-in for runtime/bf16_coop.rs: WebGPU has no
//! VK_KHR_shader_bfloat16, so bf16 GEMMs take the converting tiled kernel.

use std::ffi::CStr;

pub const EXTENSION: &CStr = c"VK_KHR_shader_bfloat16";

/// Nothing to enable on the web.
pub struct Features;

impl Features {
    pub fn enabled() -> Features {
        Features
    }
}

pub fn supported(_adapter: &wgpu::Adapter) -> bool {
    false
}
