//! A lease on a pooled allocation. The buffer that owns the allocation holds
//! one, and so does every batch of recorded work that uses it, until that
//! work has finished on the GPU. The allocation returns to the pool only when
//! the last holder lets go, so the pool never hands out memory that recorded
//! or running work still reads or writes (a released buffer, an operator's
//! scratch, the scratch of a copy).

use super::bind_cache::BindGroupCache;
use super::pool::{Allocation, BufferPool};
use std::sync::Arc;

pub struct Lease {
    alloc: Option<Allocation>,
    pool: Arc<BufferPool>,
    bind_groups: Arc<BindGroupCache>,
}

impl Lease {
    pub fn new(alloc: Allocation, pool: &Arc<BufferPool>, bind_groups: &Arc<BindGroupCache>) -> Arc<Lease> {
        Arc::new(Lease { alloc: Some(alloc), pool: pool.clone(), bind_groups: bind_groups.clone() })
    }

    pub fn raw(&self) -> &wgpu::Buffer {
        &self.alloc.as_ref().unwrap().raw
    }

    /// The allocation's id: the bind group cache keys on it.
    pub fn id(&self) -> u64 {
        self.alloc.as_ref().unwrap().id
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(a) = self.alloc.take() {
            self.pool.give_back(a, &self.bind_groups);
        }
    }
}
