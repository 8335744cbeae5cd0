//! Scratch reused in stream order. An operator's scratch is held by the
//! batches that use it until the GPU has run them, so a host that records
//! ahead of the GPU (a loop of forwards without a wait) got a new driver
//! allocation for every call's scratch: ResNet-50 f16 at batch 256 (its
//! first layer's 205 MB of padded images) ran 1.1x slower on an H100 than
//! when waiting for each forward.
//!
//! A stream keeps the scratch it handed out and hands it out again, to a
//! later call on the same stream, as soon as no call holds it: that call's
//! commands are recorded, and so submitted and run, after every earlier
//! use (wgpu orders the accesses of one buffer across dispatches and
//! submissions), so they need not wait for them. Only for scratch that GPU
//! commands write before they read it (a host write would land at the
//! start of the next submission, before earlier recorded uses), never
//! while capturing a graph (its replays keep their own scratch). Every
//! operator's GPU-written temporaries come from here: split-K slabs,
//! staged operand copies, im2col columns, Winograd transforms, attention
//! partials and the split row statistics of the norms. A stream keeps at
//! most the device's pool limit of it (`WgcDeviceOptions.pool_limit_bytes`),
//! and gives what no call holds back when memory runs short.

use super::buffer::{Buffer, Usage};
use super::stream::StreamShared;
use crate::error::Result;
use std::sync::Arc;

#[derive(Default)]
pub struct ScratchCache {
    /// Oldest first.
    kept: Vec<Arc<Buffer>>,
}

impl ScratchCache {
    /// A kept buffer of exactly `bytes` that no call holds.
    fn take(&self, bytes: u64) -> Option<Arc<Buffer>> {
        self.kept.iter().find(|b| b.size == bytes && Arc::strong_count(b) == 1).cloned()
    }

    /// Keep `b`, letting go of the oldest unused buffers past `limit` bytes.
    fn keep(&mut self, b: &Arc<Buffer>, limit: u64) {
        self.kept.push(b.clone());
        let mut total: u64 = self.kept.iter().map(|k| k.size).sum();
        let mut i = 0;
        while total > limit && i < self.kept.len() {
            if Arc::strong_count(&self.kept[i]) == 1 {
                total -= self.kept.remove(i).size;
            } else {
                i += 1;
            }
        }
    }
}

impl StreamShared {
    /// Storage scratch of `bytes` (contents unspecified) for commands
    /// recorded on this stream that write it before they read it.
    pub fn ordered_scratch(&self, bytes: u64) -> Result<Arc<Buffer>> {
        let bytes = bytes.max(4);
        let usage = Usage { storage: true, uniform: false, indirect: false };
        if self.is_capturing() {
            return Ok(Buffer::create_uninit(&self.device, bytes, usage)?.buffer);
        }
        if let Some(b) = self.scratch_cache().lock().unwrap().take(bytes) {
            return Ok(b);
        }
        // Not under the lock: an allocation that runs out of memory lets go
        // of every stream's unused scratch (this one's too) and tries again.
        let b = Buffer::create_uninit(&self.device, bytes, usage)?.buffer;
        // As much as the device's pool may keep (its limit, 1 GiB unless
        // the device was created with another).
        self.scratch_cache().lock().unwrap().keep(&b, self.device.pool.limit());
        Ok(b)
    }

    /// Let go of the scratch this stream keeps that no call holds: it goes
    /// back to the device's pool (or, where work still uses it, when that
    /// work has run).
    pub fn release_kept_scratch(&self) {
        self.scratch_cache().lock().unwrap().kept.retain(|b| Arc::strong_count(b) > 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::device::{Device, DeviceOptions};
    use crate::runtime::instance::{choose, instance, Preference};

    fn device(options: DeviceOptions) -> Arc<Device> {
        let adapters = instance().adapters().unwrap();
        let adapter = choose(&adapters, None, Preference::Default).unwrap();
        Device::create(&adapter, options).unwrap()
    }

    #[test]
    fn a_stream_hands_its_scratch_out_again_once_no_call_holds_it() {
        let dev = device(DeviceOptions::default());
        let s = StreamShared::create(&dev).unwrap();
        let a = s.ordered_scratch(4096).unwrap();
        let b = s.ordered_scratch(4096).unwrap();
        assert!(!Arc::ptr_eq(&a, &b), "a held buffer is not handed out twice");
        let a_ptr = Arc::as_ptr(&a);
        drop(a);
        let c = s.ordered_scratch(4096).unwrap();
        assert_eq!(Arc::as_ptr(&c), a_ptr, "the released buffer comes back");
        assert_ne!(s.ordered_scratch(8192).unwrap().size, 4096, "sizes match exactly");
        let other = StreamShared::create(&dev).unwrap();
        drop(c);
        assert_ne!(Arc::as_ptr(&other.ordered_scratch(4096).unwrap()), a_ptr, "never across streams");
    }

    #[test]
    fn a_stream_keeps_no_more_than_the_device_pools() {
        let dev = device(DeviceOptions { pool_limit: 2 << 20, ..DeviceOptions::default() });
        let s = StreamShared::create(&dev).unwrap();
        drop(s.ordered_scratch(2 << 20).unwrap());
        // A second, held while the first is unused: 2 + 1 MiB is past the
        // limit of 2, so the first goes back to the pool.
        let second = s.ordered_scratch(1 << 20).unwrap();
        let kept = s.scratch_cache().lock().unwrap().kept.iter().map(|b| b.size).collect::<Vec<_>>();
        assert_eq!(kept, vec![1 << 20], "only the held one stays kept");
        assert!(Arc::ptr_eq(&second, &s.scratch_cache().lock().unwrap().kept[0]));
    }

    #[test]
    fn the_device_lets_go_of_the_scratch_streams_keep() {
        let dev = device(DeviceOptions::default());
        let s = StreamShared::create(&dev).unwrap();
        let held = s.ordered_scratch(1 << 20).unwrap();
        drop(s.ordered_scratch(2 << 20).unwrap());
        let before = dev.pool.stats();
        dev.give_back_memory(u64::MAX); // nothing trimmed from the pool
        let after = dev.pool.stats();
        assert_eq!(after.live_bytes, before.live_bytes - (2 << 20), "the unused one goes back");
        assert_eq!(after.pooled_bytes, before.pooled_bytes + (2 << 20), "to the pool");
        let held_ptr = Arc::as_ptr(&held);
        drop(held);
        assert_eq!(Arc::as_ptr(&s.ordered_scratch(1 << 20).unwrap()), held_ptr, "a held one stays kept");
    }
}
