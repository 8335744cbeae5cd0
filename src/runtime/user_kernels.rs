//! Callers' kernels (`wgc_kernel_create`): the same source and entry point
//! compile once while a handle to that kernel is alive. When the last handle
//! is released the kernel leaves the cache, and its bind groups with it, so
//! a program that creates and releases many kernels does not grow.
//!
//! Dropping the pipeline is not always enough: Mesa's lavapipe keeps a
//! destroyed pipeline (about 100 KiB of compiled code and state) until the
//! queue's next submission, so a program that compiles kernels without
//! running work grew without bound. `reclaim_released` submits an empty
//! batch once released pipelines are gone, which lets such drivers free them.

use super::device::Device;
use super::kernel::{Kernel, KernelRef};
use crate::error::Result;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Hash, PartialEq, Eq)]
struct Key {
    source: String,
    entry: String,
    trusted: bool,
}

struct Entry {
    key: Arc<Key>,
    kernel: Arc<Kernel>,
    /// `KernelRef`s alive for this kernel.
    handles: usize,
}

#[derive(Default)]
struct Entries {
    by_key: HashMap<Arc<Key>, u64>,
    by_id: HashMap<u64, Entry>,
}

#[derive(Default)]
pub struct UserKernels {
    entries: Mutex<Entries>,
    /// A kernel left the cache since the queue last saw an empty submission.
    released: AtomicBool,
}

impl UserKernels {
    /// The cached kernel for (source, entry, trusted), or `compile`'s, counted
    /// as one more handle.
    pub fn get(
        &self,
        source: &str,
        entry: &str,
        trusted: bool,
        compile: impl FnOnce() -> Result<Kernel>,
    ) -> Result<Arc<Kernel>> {
        let key = Key { source: source.to_owned(), entry: entry.to_owned(), trusted };
        if let Some(k) = self.take_handle(&key) {
            return Ok(k);
        }
        // Compile outside the lock: other threads may use other kernels meanwhile.
        let kernel = Arc::new(compile()?);
        let mut e = self.entries.lock().unwrap();
        if let Some(&id) = e.by_key.get(&key) {
            // Another thread compiled it meanwhile: share theirs.
            let entry = e.by_id.get_mut(&id).unwrap();
            entry.handles += 1;
            return Ok(entry.kernel.clone());
        }
        let key = Arc::new(key);
        e.by_key.insert(key.clone(), kernel.id);
        e.by_id.insert(kernel.id, Entry { key, kernel: kernel.clone(), handles: 1 });
        Ok(kernel)
    }

    fn take_handle(&self, key: &Key) -> Option<Arc<Kernel>> {
        let mut e = self.entries.lock().unwrap();
        let id = *e.by_key.get(key)?;
        let entry = e.by_id.get_mut(&id).unwrap();
        entry.handles += 1;
        Some(entry.kernel.clone())
    }

    /// One handle fewer; true if that was the last and the kernel left the cache.
    fn drop_handle(&self, id: u64) -> bool {
        let mut e = self.entries.lock().unwrap();
        let Some(entry) = e.by_id.get_mut(&id) else {
            return false;
        };
        entry.handles -= 1;
        if entry.handles > 0 {
            return false;
        }
        let entry = e.by_id.remove(&id).unwrap();
        e.by_key.remove(&entry.key);
        self.released.store(true, Ordering::Release);
        true
    }

    /// Let the driver free the pipelines of kernels that left the cache:
    /// call once their last `KernelRef` is dropped. An empty submission is
    /// cheap, and only made when a kernel left since the last one.
    /// Pipelines still held by recorded work are freed after it has run.
    pub fn reclaim_released(&self, device: &Device) {
        if !self.released.swap(false, Ordering::AcqRel) || device.check_alive().is_err() {
            return;
        }
        // An error here (a lost device) has nothing to report: the next call that
        // needs the device says why it failed.
        let _ = device.scoped(|| device.queue.submit(std::iter::empty::<wgpu::CommandBuffer>()));
    }

    pub fn count(&self) -> usize {
        self.entries.lock().unwrap().by_id.len()
    }
}

impl Drop for KernelRef {
    fn drop(&mut self) {
        let dev = &self.device;
        if dev.kernels.user.drop_handle(self.kernel.id) {
            dev.bind_groups.forget_layout(self.kernel.id);
        }
    }
}
