//! Temporaries of one operator call. A temporary goes back to the device's
//! pool when dropped, and the pool may hand it to another stream at once;
//! so before that, every launch recorded on it is submitted (the queue runs
//! submissions in order, so later users of the memory run after them).
//! Dropping flushes; `finish` flushes and reports a failure.

use crate::error::Result;
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

pub struct Scratch<'s> {
    stream: &'s StreamShared,
    pub buffer: Arc<Buffer>,
}

impl<'s> Scratch<'s> {
    /// `bytes` of storage with unspecified contents, for launches on `stream`.
    pub fn new(stream: &'s StreamShared, bytes: u64) -> Result<Self> {
        let usage = Usage {
            storage: true,
            uniform: false,
            indirect: false,
        };
        let buffer = Buffer::create_uninit(&stream.device, bytes.max(4), usage)?.buffer;
        Ok(Scratch { stream, buffer })
    }

    /// Submit the launches that use the temporary, then release it.
    pub fn finish(self) -> Result<()> {
        self.stream.flush()
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        // Also on an error path: whatever was recorded must be submitted
        // before the memory can be reused. A failure here was (or will be)
        // reported by the call that caused it.
        let _ = self.stream.flush();
    }
}
