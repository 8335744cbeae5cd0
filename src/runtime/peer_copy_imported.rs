//! Copies between devices through one host block that every device of the
//! copy imports (runtime/host_import.rs): the source stream copies a chunk
//! into its slot of the block, and once that has run, each destination
//! stream copies the slot into its buffer. No host copy, no mapping: the
//! host only waits for submissions. Chunks are pipelined over a ring of
//! slots: while the destinations read chunk i, the source writes the next
//! ones; a slot is written again only after every read of it has run.
//!
//! Ordering and blocking are those of `peer_copy::copy`: the host blocks
//! until the source has written the last chunk and its reads are submitted.
//! The destination reads a slot only after the host has seen the source's
//! submission complete (its fence), by which time the copy engine's writes
//! have reached host memory; wgpu records no host barrier for buffers it
//! cannot map, so nothing else orders them.

use super::device::Device;
use super::host_import::{give_back, take_block, HostBlock};
use super::peer_copy::Endpoint;
use crate::error::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Slots of the ring: the destinations read one while the source writes
/// the others.
const RING: u64 = 4;
/// Slots start on this boundary inside the block.
const SLOT_ALIGN: u64 = 256;

/// True when every device of the copy imports host memory.
pub fn usable<'a>(mut devices: impl Iterator<Item = &'a Device>) -> bool {
    devices.all(|d| d.host_import.as_ref().is_some_and(|h| h.usable()))
}

/// A taken block, given back when the copy ends (even early, on an error:
/// the submissions that use it are noted on it, so the next taker waits).
struct Taken(Option<Arc<HostBlock>>);

impl Taken {
    fn block(&self) -> &Arc<HostBlock> {
        self.0.as_ref().unwrap()
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        if let Some(b) = self.0.take() {
            give_back(b);
        }
    }
}

/// The device's buffer over the block; None where it cannot import it.
fn imported(dev: &Device, block: &Arc<HostBlock>) -> Option<wgpu::Buffer> {
    dev.host_import.as_ref()?.buffer(dev, block)
}

/// What a call of this route did: `NotTaken` when a device could not import
/// the block, before anything was recorded (the caller takes the staged
/// route; the device does not import again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    NotTaken,
}

/// A submission that uses a block, with the flag its completion sets.
type Use = (Arc<Device>, wgpu::SubmissionIndex, Arc<AtomicBool>);
type Pending = Vec<Use>;

/// Submit the stream's work and note that the submission uses the block.
fn submit(e: &Endpoint, block: &HostBlock) -> Result<Option<Use>> {
    let Some(index) = e.stream.flush_for_other_index()? else {
        return Ok(None);
    };
    let dev = &e.buffer.device;
    block.used_by(dev, index.clone());
    // Set once this submission (and what was submitted before it) has run.
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    dev.queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
    Ok(Some((dev.clone(), index, done)))
}

fn wait(pending: &mut Pending) -> Result<()> {
    for (dev, index, done) in pending.drain(..) {
        dev.wait_for_flag(index, &done)?;
    }
    Ok(())
}

/// The state of one pipelined copy.
struct Ring<'a> {
    src: &'a Endpoint<'a>,
    dsts: &'a [&'a Endpoint<'a>],
    block: &'a HostBlock,
    src_host: wgpu::Buffer,
    dst_host: Vec<wgpu::Buffer>,
    size: u64,
    chunk: u64,
    stride: u64,
    depth: u64,
    /// Per slot: the source's write of the chunk it holds, the reads of it.
    written: Vec<Pending>,
    read: Vec<Pending>,
}

impl Ring<'_> {
    fn span(&self, c: u64) -> (u64, u64) {
        (c * self.chunk, self.chunk.min(self.size - c * self.chunk))
    }

    fn slot(&self, c: u64) -> usize {
        (c % self.depth) as usize
    }

    /// The source copies chunk `c` into its slot, once the slot's last reads have run.
    fn write(&mut self, c: u64) -> Result<()> {
        let s = self.slot(c);
        wait(&mut self.read[s])?;
        let (at, len) = self.span(c);
        let src = self.src;
        src.stream.copy_raw(
            src.buffer.raw(),
            src.offset + at,
            &self.src_host,
            s as u64 * self.stride,
            len,
            &[src.buffer.lease()],
        )?;
        self.written[s].extend(submit(src, self.block)?);
        Ok(())
    }

    /// Once the source's write of chunk `c` has run, each destination copies it out.
    fn read(&mut self, c: u64) -> Result<()> {
        let s = self.slot(c);
        wait(&mut self.written[s])?;
        let (at, len) = self.span(c);
        for (d, host) in self.dsts.iter().zip(&self.dst_host) {
            d.stream.copy_raw(host, s as u64 * self.stride, d.buffer.raw(), d.offset + at, len, &[d.buffer.lease()])?;
            self.read[s].extend(submit(d, self.block)?);
        }
        Ok(())
    }
}

/// Copy `size` bytes (a multiple of 4, checked by the caller with the
/// endpoints) from `src` to every destination in chunks of `chunk` bytes.
pub fn copy(src: &Endpoint, dsts: &[&Endpoint], size: u64, chunk: u64) -> Result<Outcome> {
    let chunk = chunk.min(size);
    let chunks = size.div_ceil(chunk);
    let depth = RING.min(chunks);
    let stride = chunk.div_ceil(SLOT_ALIGN) * SLOT_ALIGN;
    let taken = Taken(Some(take_block(depth * stride)?));
    let block = taken.block();
    let Some(src_host) = imported(&src.buffer.device, block) else {
        return Ok(Outcome::NotTaken);
    };
    let Some(dst_host) = dsts.iter().map(|d| imported(&d.buffer.device, block)).collect::<Option<Vec<_>>>() else {
        return Ok(Outcome::NotTaken);
    };
    let mut ring = Ring {
        src,
        dsts,
        block,
        src_host,
        dst_host,
        size,
        chunk,
        stride,
        depth,
        written: (0..depth).map(|_| Vec::new()).collect(),
        read: (0..depth).map(|_| Vec::new()).collect(),
    };
    for c in 0..depth {
        ring.write(c)?;
    }
    for c in 0..chunks {
        ring.read(c)?;
        // The slot read one step ago takes the next chunk: its reads have
        // had a chunk's time to run while the source wrote this one.
        if c >= 1 && c - 1 + depth < chunks {
            ring.write(c - 1 + depth)?;
        }
    }
    Ok(Outcome::Done)
}

/// Rank j's `size` bytes at `srcs[j]` land in every `dsts[i]` (on the
/// device of `srcs[i]`) at byte `j * stride` (`stride` >= `size`, both
/// multiples of 4; each destination range holds `(n - 1) * stride + size`
/// bytes). Each source copies into
/// its slot of one block (one submission per device); once all have run,
/// each destination copies every slot out with one copy, `then(i)` records
/// what uses them on destination i's stream, and that is submitted (one
/// submission per device again). The host blocks only for the first phase.
pub fn all_gather(
    srcs: &[Endpoint],
    dsts: &[Endpoint],
    size: u64,
    stride: u64,
    mut then: impl FnMut(usize) -> Result<()>,
) -> Result<Outcome> {
    let n = srcs.len() as u64;
    let taken = Taken(Some(take_block(n * stride)?));
    let block = taken.block();
    let hosts = srcs.iter().map(|s| imported(&s.buffer.device, block)).collect::<Option<Vec<_>>>();
    let Some(hosts) = hosts else {
        return Ok(Outcome::NotTaken);
    };
    let mut written = Vec::new();
    for (j, (s, host)) in srcs.iter().zip(&hosts).enumerate() {
        s.stream.copy_raw(s.buffer.raw(), s.offset, host, j as u64 * stride, size, &[s.buffer.lease()])?;
        written.extend(submit(s, block)?);
    }
    wait(&mut written)?;
    let total = (n - 1) * stride + size;
    for (i, (d, host)) in dsts.iter().zip(&hosts).enumerate() {
        d.stream.copy_raw(host, 0, d.buffer.raw(), d.offset, total, &[d.buffer.lease()])?;
        then(i)?;
        submit(d, block)?;
    }
    Ok(Outcome::Done)
}
