//! The profiler of one stream: while it is on, every launch and copy the
//! stream records gets a record (the operator call it belongs to, the kernel
//! variant, workgroups) and, where the adapter has timestamp queries, two
//! GPU timestamps around it in the batch's query set. Timestamps are read
//! back only when the records are asked for. While it is off the stream holds
//! no profiler at all: recording pays one branch.

use super::batch::Cmd;
use super::device::Device;
use super::event::has_timestamps;
use crate::error::{Error, Result};
use std::time::Instant;

/// Timestamps one batch's query set holds (two per timed command); a batch
/// that would need more is flushed first.
pub(crate) const QUERIES_PER_SET: u32 = 512;

/// Whether a record's GPU time was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeStatus {
    Measured,
    /// The adapter has no timestamp queries inside passes or encoders.
    NoTimestamps,
    /// The command was not run: its batch failed as a whole, or the device
    /// was lost before its timestamps were read.
    NotRun,
}

/// One operator call (a C function such as `wgc_op_matmul`).
#[derive(Clone, Debug)]
pub struct OpCall {
    pub name: String,
    /// Operand dtypes and shapes, "f16[512,4096], f16[4096,4096] -> f16[512,4096]".
    pub shapes: String,
    /// Floating-point operations where known, else 0.
    pub flops: u64,
    /// Bytes of the operands the call reads and writes (each once).
    pub bytes: u64,
    /// Host time spent recording the call.
    pub host_ns: u64,
}

/// One launch or copy.
#[derive(Clone, Debug)]
pub struct LaunchRecord {
    /// Index of its call in `Profile::calls`; `None`: recorded outside any
    /// operator call (the library's own work).
    pub call: Option<usize>,
    pub kernel: String,
    pub groups: [u32; 3],
    pub status: TimeStatus,
    pub gpu_ns: u64,
}

/// What has been recorded since the profiler was turned on or cleared.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    pub calls: Vec<OpCall>,
    pub launches: Vec<LaunchRecord>,
}

/// A query set with the buffers its timestamps are read through, and the
/// launch record each pair of its queries belongs to.
struct QuerySet {
    query: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Launch index for queries 2i and 2i + 1.
    owners: Vec<usize>,
}

impl QuerySet {
    fn create(dev: &Device) -> Result<QuerySet> {
        let bytes = QUERIES_PER_SET as u64 * 8;
        dev.scoped(|| QuerySet {
            query: dev.wgpu.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("wgcompute profiler"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES_PER_SET,
            }),
            resolve: dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            owners: Vec::new(),
        })
    }
}

pub struct Profiler {
    timed: bool,
    profile: Profile,
    /// The operator call being recorded, and when it started.
    current: Option<(usize, Instant)>,
    /// The kernel variant the next launch records (set by the operator).
    next_kernel: Option<String>,
    /// The set the open batch writes, the sets submitted and not read, and
    /// sets read back and free for reuse.
    open: Option<QuerySet>,
    submitted: Vec<QuerySet>,
    free: Vec<QuerySet>,
}

impl Profiler {
    pub fn new(dev: &Device) -> Profiler {
        Profiler {
            timed: has_timestamps(dev),
            profile: Profile::default(),
            current: None,
            next_kernel: None,
            open: None,
            submitted: Vec::new(),
            free: Vec::new(),
        }
    }

    pub fn begin_call(&mut self, call: OpCall) {
        self.profile.calls.push(call);
        self.current = Some((self.profile.calls.len() - 1, Instant::now()));
    }

    pub fn end_call(&mut self) {
        if let Some((i, start)) = self.current.take() {
            self.profile.calls[i].host_ns = start.elapsed().as_nanos() as u64;
        }
        self.next_kernel = None;
    }

    pub fn set_next_kernel(&mut self, name: String) {
        self.next_kernel = Some(name);
    }

    /// Whether the open batch's set has no room for another timed command.
    pub fn set_full(&self) -> bool {
        self.open.as_ref().is_some_and(|s| s.owners.len() as u32 * 2 + 2 > QUERIES_PER_SET)
    }

    /// Add the record of a command about to be recorded; returns the two
    /// timestamp commands to put around it, if timed. `fallback` names the
    /// kernel when the operator did not.
    pub(super) fn add(&mut self, dev: &Device, fallback: &str, groups: [u32; 3]) -> Result<Option<(Cmd, Cmd)>> {
        let kernel = self.next_kernel.take().unwrap_or_else(|| fallback.to_string());
        let status = if self.timed { TimeStatus::NotRun } else { TimeStatus::NoTimestamps };
        let stamps = if self.timed {
            if self.open.is_none() {
                self.open = Some(match self.free.pop() {
                    Some(s) => s,
                    None => QuerySet::create(dev)?,
                });
            }
            let set = self.open.as_mut().unwrap();
            let q = set.owners.len() as u32 * 2;
            set.owners.push(self.profile.launches.len());
            Some((Cmd::ProfileStamp(set.query.clone(), q), Cmd::ProfileStamp(set.query.clone(), q + 1)))
        } else {
            None
        };
        self.profile.launches.push(LaunchRecord {
            call: self.current.map(|(i, _)| i),
            kernel,
            groups,
            status,
            gpu_ns: 0,
        });
        Ok(stamps)
    }

    /// The command that copies the open set's timestamps where the host can
    /// read them: the last of the batch about to be submitted.
    pub(super) fn close_batch(&mut self) -> Option<Cmd> {
        let set = self.open.as_ref()?;
        Some(Cmd::ProfileResolve {
            query: set.query.clone(),
            resolve: set.resolve.clone(),
            readback: set.readback.clone(),
            count: set.owners.len() as u32 * 2,
        })
    }

    /// The batch closed by `close_batch` was submitted (`ran`) or lost.
    pub fn batch_done(&mut self, ran: bool) {
        if let Some(set) = self.open.take() {
            if ran {
                self.submitted.push(set);
            } else {
                self.free.push(QuerySet { owners: Vec::new(), ..set });
            }
        }
    }

    /// Read the timestamps of every submitted set into the records. The
    /// caller has waited for the stream's submitted work.
    pub fn read_back(&mut self, dev: &Device) -> Result<()> {
        let period = dev.queue.get_timestamp_period() as f64;
        for mut set in std::mem::take(&mut self.submitted) {
            let bytes = set.owners.len() as u64 * 16;
            let slice = set.readback.slice(..bytes);
            let (tx, rx) = std::sync::mpsc::channel();
            slice.map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
            match dev.wait_callback(&rx, "reading the profiler's timestamps") {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(Error::DeviceLost(format!("could not read the profiler's timestamps: {e}"))),
                Err(e) => {
                    set.readback.unmap();
                    return Err(e);
                }
            }
            {
                let view = slice.get_mapped_range().map_err(|e| Error::Internal(format!("mapped range: {e:?}")))?;
                let ticks: Vec<u64> = view.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
                for (pair, &owner) in set.owners.iter().enumerate().filter(|(_, &o)| o != usize::MAX) {
                    let (a, b) = (ticks[2 * pair], ticks[2 * pair + 1]);
                    let rec = &mut self.profile.launches[owner];
                    rec.gpu_ns = (b.saturating_sub(a) as f64 * period) as u64;
                    rec.status = TimeStatus::Measured;
                }
            }
            set.readback.unmap();
            set.owners.clear();
            self.free.push(set);
        }
        Ok(())
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Forget the records (sets in flight are dropped with their records).
    pub fn clear(&mut self) {
        self.profile = Profile::default();
        self.current = None;
        self.next_kernel = None;
        for mut set in self.submitted.drain(..) {
            set.owners.clear();
            self.free.push(set);
        }
        // The open batch already holds this set's timestamp commands: keep
        // their slots, owned by no record.
        if let Some(set) = &mut self.open {
            set.owners.iter_mut().for_each(|o| *o = usize::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::device::DeviceOptions;
    use crate::runtime::instance::{choose, instance, Preference};

    fn call(name: &str) -> OpCall {
        OpCall { name: name.into(), shapes: String::new(), flops: 0, bytes: 0, host_ns: 0 }
    }

    /// Without timestamps (as on an adapter that has none) records keep
    /// their names and say so, with no time; nothing is written to the batch.
    #[test]
    fn without_timestamps_records_say_so() {
        let adapters = instance().adapters().unwrap();
        let dev =
            Device::create(&choose(&adapters, None, Preference::Default).unwrap(), DeviceOptions::default()).unwrap();
        let mut p = Profiler::new(&dev);
        p.timed = false;
        p.begin_call(call("matmul"));
        p.set_next_kernel("gemm.wgsl:tiled".into());
        assert!(p.add(&dev, "tiled", [2, 1, 1]).unwrap().is_none());
        p.end_call();
        assert!(p.add(&dev, "fill", [1, 1, 1]).unwrap().is_none());
        assert!(p.close_batch().is_none());
        p.read_back(&dev).unwrap();
        let l = &p.profile().launches;
        assert_eq!(
            (l[0].call, l[0].kernel.as_str(), l[0].status, l[0].gpu_ns),
            (Some(0), "gemm.wgsl:tiled", TimeStatus::NoTimestamps, 0)
        );
        assert_eq!((l[1].call, l[1].kernel.as_str(), l[1].status), (None, "fill", TimeStatus::NoTimestamps));
    }

    /// A set fills after QUERIES_PER_SET / 2 commands; clearing keeps the
    /// open set's slots (its commands are already in the batch) but no records.
    #[test]
    fn sets_fill_and_clear_keeps_open_slots() {
        let adapters = instance().adapters().unwrap();
        let dev =
            Device::create(&choose(&adapters, None, Preference::Default).unwrap(), DeviceOptions::default()).unwrap();
        if !has_timestamps(&dev) {
            return;
        }
        let mut p = Profiler::new(&dev);
        for i in 0..QUERIES_PER_SET / 2 {
            assert!(!p.set_full(), "full after {i}");
            assert!(p.add(&dev, "k", [1, 1, 1]).unwrap().is_some());
        }
        assert!(p.set_full());
        p.clear();
        assert!(p.profile().launches.is_empty() && p.set_full());
        assert!(p.close_batch().is_some());
        p.batch_done(false);
        assert!(!p.set_full());
    }
}
