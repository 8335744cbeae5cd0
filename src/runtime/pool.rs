//! The buffer pool: freed allocations are kept by (size class, usage) and
//! handed out again, so that operators and callers that allocate in a loop do
//! not pay for a driver allocation each time. Also keeps the memory statistics.
//!
//! When an allocation comes back to a full pool, the allocations that came
//! back longest ago make room for it: the sizes a program uses now stay
//! pooled. (Dropping the newcomer instead let sizes from earlier work fill
//! the pool for good, and every later call that needed scratch of another
//! size then allocated it from the driver and freed it again.)

use super::bind_cache::BindGroupCache;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A GPU allocation with a process-unique id (bind group cache keys use it).
pub struct Allocation {
    pub raw: wgpu::Buffer,
    pub id: u64,
}

#[derive(Default, Clone, Copy, Debug)]
pub struct MemoryStats {
    pub live_bytes: u64,
    pub peak_bytes: u64,
    pub pooled_bytes: u64,
    pub allocations: u64,
    pub pool_hits: u64,
}

/// Pooled allocations by (size class, usage bits), each list oldest first,
/// every entry stamped with the order in which it came back.
#[derive(Default)]
struct FreeLists {
    lists: HashMap<(u64, u32), VecDeque<(u64, Allocation)>>,
    next_stamp: u64,
}

impl FreeLists {
    fn push(&mut self, a: Allocation) {
        let key = (a.raw.size(), a.raw.usage().bits());
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.lists.entry(key).or_default().push_back((stamp, a));
    }

    /// The allocation of this key that came back longest ago. A loop that
    /// allocates and frees in a steady pattern then gets its allocations
    /// back in the same order every round, so its launches bind the same
    /// buffers together again and find their bind groups cached (handing
    /// out the most recent one instead reversed the order each round: a
    /// Python loop of small operators created a bind group for about every
    /// second launch).
    fn pop(&mut self, key: (u64, u32)) -> Option<Allocation> {
        let list = self.lists.get_mut(&key)?;
        let a = list.pop_front().map(|(_, a)| a);
        if list.is_empty() {
            self.lists.remove(&key);
        }
        a
    }

    /// The allocation that came back longest ago, of any key.
    fn pop_oldest(&mut self) -> Option<Allocation> {
        let key = *self.lists.iter().min_by_key(|(_, l)| l.front().map_or(u64::MAX, |(s, _)| *s))?.0;
        let list = self.lists.get_mut(&key)?;
        let a = list.pop_front().map(|(_, a)| a);
        if list.is_empty() {
            self.lists.remove(&key);
        }
        a
    }
}

pub struct BufferPool {
    free: Mutex<FreeLists>,
    /// Set when the device is destroyed: nothing is pooled any more.
    closed: AtomicBool,
    limit: AtomicU64,
    live: AtomicU64,
    peak: AtomicU64,
    pooled: AtomicU64,
    allocations: AtomicU64,
    hits: AtomicU64,
}

/// Round a request up to its size class: multiples of 256 bytes below 64 KiB,
/// then steps of 1/8 of the power of two (at most 12.5 % slack).
pub fn size_class(size: u64) -> u64 {
    let size = size.max(16);
    if size <= 65536 {
        return size.div_ceil(256) * 256;
    }
    let step = (size.next_power_of_two() / 8).max(256);
    size.div_ceil(step) * step
}

impl BufferPool {
    pub fn new(limit: u64) -> Self {
        BufferPool {
            free: Mutex::new(FreeLists::default()),
            closed: AtomicBool::new(false),
            limit: AtomicU64::new(limit),
            live: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            pooled: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    /// Take a pooled allocation of exactly this class and usage, if one is free.
    pub fn take(&self, class: u64, usage: wgpu::BufferUsages) -> Option<Allocation> {
        let a = self.free.lock().unwrap().pop((class, usage.bits()))?;
        self.pooled.fetch_sub(class, Ordering::Relaxed);
        self.hits.fetch_add(1, Ordering::Relaxed);
        self.note_live(class);
        Some(a)
    }

    /// Count a fresh driver allocation as live.
    pub fn note_new(&self, class: u64) {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.note_live(class);
    }

    fn note_live(&self, class: u64) {
        let now = self.live.fetch_add(class, Ordering::Relaxed) + class;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    /// Give an allocation back once no submitted or recorded work uses it
    /// any more (see `Lease`). Where the pool is full, the allocations that
    /// came back longest ago are dropped until it fits; it is dropped itself
    /// if it is larger than the limit or the pool is closed.
    pub fn give_back(&self, a: Allocation, bind_groups: &BindGroupCache) {
        let class = a.raw.size();
        self.live.fetch_sub(class, Ordering::Relaxed);
        let limit = self.limit.load(Ordering::Relaxed);
        if self.closed.load(Ordering::Acquire) || class > limit {
            bind_groups.forget_allocation(a.id);
            return;
        }
        let mut free = self.free.lock().unwrap();
        while self.pooled.load(Ordering::Relaxed) + class > limit {
            let Some(old) = free.pop_oldest() else { break };
            self.pooled.fetch_sub(old.raw.size(), Ordering::Relaxed);
            bind_groups.forget_allocation(old.id);
        }
        self.pooled.fetch_add(class, Ordering::Relaxed);
        free.push(a);
    }

    /// Release pooled allocations until at most `keep` bytes remain pooled
    /// (wgpu frees each once no submitted work uses it).
    pub fn trim(&self, keep: u64, bind_groups: &BindGroupCache) {
        let mut free = self.free.lock().unwrap();
        while self.pooled.load(Ordering::Relaxed) > keep {
            let Some(a) = free.pop_oldest() else { break };
            self.pooled.fetch_sub(a.raw.size(), Ordering::Relaxed);
            bind_groups.forget_allocation(a.id);
        }
    }

    /// Drop an allocation that work may still use (e.g. a read that timed
    /// out): wgpu frees it once that work is done; it is never reused.
    pub fn discard(&self, a: Allocation, bind_groups: &BindGroupCache) {
        self.live.fetch_sub(a.raw.size(), Ordering::Relaxed);
        bind_groups.forget_allocation(a.id);
    }

    /// Stop pooling (the device is destroyed) and drop what is pooled.
    pub fn close(&self, bind_groups: &BindGroupCache) {
        self.closed.store(true, Ordering::Release);
        self.trim(0, bind_groups);
    }

    /// Most bytes the pool keeps (`DeviceOptions::pool_limit`).
    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    pub fn set_limit(&self, limit: u64, bind_groups: &BindGroupCache) {
        self.limit.store(limit, Ordering::Relaxed);
        self.trim(limit, bind_groups);
    }

    pub fn stats(&self) -> MemoryStats {
        MemoryStats {
            live_bytes: self.live.load(Ordering::Relaxed),
            peak_bytes: self.peak.load(Ordering::Relaxed),
            pooled_bytes: self.pooled.load(Ordering::Relaxed),
            allocations: self.allocations.load(Ordering::Relaxed),
            pool_hits: self.hits.load(Ordering::Relaxed),
        }
    }
}
