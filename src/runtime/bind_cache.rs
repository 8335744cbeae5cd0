//! Bind groups are cached by (layout, the allocations and ranges bound), so a
//! kernel launched again on the same buffers records no new bind group.

use std::collections::HashMap;
use std::sync::Mutex;

/// One bound range: (binding, allocation id, offset, size).
pub type BoundRange = (u32, u64, u64, u64);

#[derive(Hash, PartialEq, Eq, Clone)]
pub struct BindKey {
    pub layout_id: u64,
    pub ranges: Vec<BoundRange>,
}

const MAX_ENTRIES: usize = 8192;

#[derive(Default)]
pub struct BindGroupCache {
    map: Mutex<HashMap<BindKey, wgpu::BindGroup>>,
}

impl BindGroupCache {
    pub fn get_or_create(&self, key: BindKey, create: impl FnOnce() -> wgpu::BindGroup) -> wgpu::BindGroup {
        let mut map = self.map.lock().unwrap();
        if let Some(bg) = map.get(&key) {
            return bg.clone();
        }
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        let bg = create();
        map.insert(key, bg.clone());
        bg
    }

    /// Drop every bind group that refers to an allocation about to be destroyed.
    pub fn forget_allocation(&self, id: u64) {
        self.map.lock().unwrap().retain(|k, _| !k.ranges.iter().any(|r| r.1 == id));
    }
}
