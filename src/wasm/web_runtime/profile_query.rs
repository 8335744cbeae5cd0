//! The browser's stand-in for runtime/profile_query.rs: WebGPU does not
//! say how many compute units an adapter has, so the profile comes from
//! the adapter's name or the default.

use crate::runtime::profile::Reported;

pub fn reported(_adapter: &wgpu::Adapter) -> Option<Reported> {
    None
}
