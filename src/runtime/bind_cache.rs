//! Bind groups are cached by (layout, the allocations and ranges bound), so a
//! kernel launched again on the same buffers records no new bind group.
//! Entries leave with what they refer to: a freed allocation, a released
//! stream's uniform arena, a released kernel; and the cache is bounded.

use super::kernel_variant::WordHasher;
use crate::error::Result;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Mutex;

/// One bound range: (binding, allocation id, offset, size).
pub type BoundRange = (u32, u64, u64, u64);

#[derive(Hash, PartialEq, Eq, Clone)]
pub struct BindKey {
    pub layout_id: u64,
    pub ranges: Ranges,
}

/// Ranges held inline: a launch's key is built on every launch and most
/// kernels bind a handful of buffers, so this allocates nothing for them.
const INLINE: usize = 8;

#[derive(Clone, Default)]
pub struct Ranges {
    inline: [BoundRange; INLINE],
    len: usize,
    /// All of them, where there are more than `INLINE`.
    heap: Vec<BoundRange>,
}

impl Ranges {
    pub fn from_slice(ranges: &[BoundRange]) -> Ranges {
        let mut r = Ranges::default();
        for &x in ranges {
            r.push(x);
        }
        r
    }

    pub fn push(&mut self, range: BoundRange) {
        if self.len < INLINE {
            self.inline[self.len] = range;
        } else {
            if self.len == INLINE {
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(range);
        }
        self.len += 1;
    }

    pub fn as_slice(&self) -> &[BoundRange] {
        if self.len <= INLINE {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    pub fn sort(&mut self) {
        if self.len <= INLINE {
            self.inline[..self.len].sort_unstable();
        } else {
            self.heap.sort_unstable();
        }
    }
}

impl std::ops::Deref for Ranges {
    type Target = [BoundRange];
    fn deref(&self) -> &[BoundRange] {
        self.as_slice()
    }
}

impl PartialEq for Ranges {
    fn eq(&self, other: &Ranges) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Ranges {}

impl std::hash::Hash for Ranges {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

const MAX_ENTRIES: usize = 8192;

#[derive(Default)]
pub struct BindGroupCache {
    /// Keys are a few integers hashed on every launch: no need for SipHash.
    map: Mutex<HashMap<BindKey, wgpu::BindGroup, BuildHasherDefault<WordHasher>>>,
}

impl BindGroupCache {
    /// The cached bind group for `key`, or `create`'s (which may fail, e.g.
    /// out of memory: then nothing is cached).
    pub fn get_or_create(
        &self,
        key: BindKey,
        create: impl FnOnce() -> Result<wgpu::BindGroup>,
    ) -> Result<wgpu::BindGroup> {
        let mut map = self.map.lock().unwrap();
        if let Some(bg) = map.get(&key) {
            return Ok(bg.clone());
        }
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        let bg = create()?;
        map.insert(key, bg.clone());
        Ok(bg)
    }

    /// Drop every bind group that refers to an allocation about to be freed.
    pub fn forget_allocation(&self, id: u64) {
        self.map.lock().unwrap().retain(|k, _| !k.ranges.iter().any(|r| r.1 == id));
    }

    /// Drop every bind group made for a kernel that is gone.
    pub fn forget_layout(&self, kernel_id: u64) {
        self.map.lock().unwrap().retain(|k, _| k.layout_id != kernel_id);
    }

    /// Bind groups cached now.
    pub fn count(&self) -> usize {
        self.map.lock().unwrap().len()
    }
}

/// A bind group entry for a buffer range.
pub fn buffer_entry(binding: u32, buffer: &wgpu::Buffer, offset: u64, size: u64) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset,
            size: wgpu::BufferSize::new(size),
        }),
    }
}
