//! Leases held for submitted work: each submission's leases are let go once
//! the GPU has finished it (and everything submitted before it).

use super::lease::Lease;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type Held = (Arc<AtomicBool>, Vec<Arc<Lease>>);

#[derive(Default)]
pub struct InFlight {
    held: Mutex<Vec<Held>>,
}

impl InFlight {
    /// Hold `leases` until all work submitted to `queue` so far has finished.
    pub fn hold(&self, queue: &wgpu::Queue, leases: Vec<Arc<Lease>>) {
        if leases.is_empty() {
            return;
        }
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        // wgpu runs this from a later submit or poll once the work is done.
        queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        self.held.lock().unwrap().push((done, leases));
        self.release_finished();
    }

    /// Let go of the leases whose work has finished.
    pub fn release_finished(&self) {
        let finished: Vec<Held> = {
            let mut held = self.held.lock().unwrap();
            if !held.iter().any(|(done, _)| done.load(Ordering::Acquire)) {
                return;
            }
            let (finished, pending) =
                std::mem::take(&mut *held).into_iter().partition(|(d, _)| d.load(Ordering::Acquire));
            *held = pending;
            finished
        };
        // Dropped outside the lock: returning allocations takes the pool's.
        drop(finished);
    }

    /// Let go of everything (the device is gone: nothing runs any more).
    pub fn release_all(&self) {
        let all = std::mem::take(&mut *self.held.lock().unwrap());
        drop(all);
    }
}
