//! Clears of reused pool allocations, deferred to the device's next queue
//! submission, so that creating a zeroed buffer never submits work itself.
//!
//! Ordering: a reused allocation's previous users have finished on the GPU
//! (see `Lease`), so its clear only has to come before anything its new
//! owner does. Everything that owner does is recorded after the clear was
//! queued here, and reaches the GPU through a queue submission (stream
//! batches, reads' copies) or a staged host write. Every submission goes
//! through `SubmitGate::submit`, which submits the queued clears first,
//! under one lock: no submission can overtake a clear queued before it.
//! Staged host writes run at the start of the next submission, before its
//! command buffers, so a host write first submits the queued clears
//! (`Buffer::write`): a clear never lands after a write.

use std::sync::Mutex;

#[derive(Default)]
pub struct SubmitGate {
    /// Allocations waiting for their clear, in the order they were queued.
    clears: Mutex<Vec<wgpu::Buffer>>,
}

impl SubmitGate {
    /// Queue a clear of the whole allocation (it has COPY_DST usage).
    pub fn defer_clear(&self, raw: wgpu::Buffer) {
        self.clears.lock().unwrap().push(raw);
    }

    /// Submit `cmds` after the queued clears. The clears go in a submission
    /// of their own, so that a batch the GPU layer rejects cannot take them
    /// down with it (a clear of a whole COPY_DST buffer is always valid).
    pub fn submit<I: IntoIterator<Item = wgpu::CommandBuffer>>(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        cmds: I,
    ) -> wgpu::SubmissionIndex {
        let mut clears = self.clears.lock().unwrap();
        Self::submit_clears(device, queue, &mut clears);
        queue.submit(cmds)
    }

    /// Submit the queued clears now, if there are any (before a staged host
    /// write, which would otherwise run before them).
    pub fn submit_pending(&self, device: &wgpu::Device, queue: &wgpu::Queue) {
        let mut clears = self.clears.lock().unwrap();
        Self::submit_clears(device, queue, &mut clears);
    }

    fn submit_clears(device: &wgpu::Device, queue: &wgpu::Queue, clears: &mut Vec<wgpu::Buffer>) {
        if clears.is_empty() {
            return;
        }
        let mut enc =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("wgcompute deferred clears") });
        for raw in clears.drain(..) {
            enc.clear_buffer(&raw, 0, None);
        }
        queue.submit([enc.finish()]);
    }

    /// Forget the queued clears (the device is destroyed).
    pub fn drop_pending(&self) {
        self.clears.lock().unwrap().clear();
    }
}
