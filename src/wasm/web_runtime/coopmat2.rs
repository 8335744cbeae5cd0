//! The browser's stand-in for runtime/coopmat2.rs: WebGPU has no
//! VK_NV_cooperative_matrix2, so no block is ever supported and the GEMM
//! routes that need it are never planned.

use std::ffi::CStr;

pub const EXTENSION: &CStr = c"VK_NV_cooperative_matrix2";

/// Nothing to enable on the web.
pub struct Features;

impl Features {
    pub fn enabled() -> Features {
        Features
    }
}

/// Never: the extension cannot be opened through WebGPU.
pub fn requested(_settings: &crate::runtime::settings::Settings) -> bool {
    false
}

/// A workgroup block a kernel uses (see the native file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub invocations: u32,
}

pub(crate) fn supported(
    _adapter: &wgpu::Adapter,
    _blocks: &[Block],
    _settings: &crate::runtime::settings::Settings,
) -> u32 {
    0
}
