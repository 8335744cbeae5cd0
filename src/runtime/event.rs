//! Events: points recorded in a stream. Waiting on one flushes its stream if
//! needed and blocks until the GPU has passed it; two events give the GPU time
//! between them where the adapter has timestamp queries.

use super::device::Device;
use super::stream::StreamShared;
use crate::bail;
use crate::error::{Error, Result};
use std::sync::{Arc, Mutex, Weak};

struct Timestamp {
    query: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

enum Status {
    Recorded,
    Submitted(wgpu::SubmissionIndex),
    Failed(Error),
}

pub struct Event {
    pub device: Arc<Device>,
    stream: Weak<StreamShared>,
    timestamp: Option<Timestamp>,
    status: Mutex<Status>,
    /// GPU time in nanoseconds, once read back. Held while reading it back:
    /// one thread maps the read-back buffer, others wait for its result.
    time_ns: Mutex<Option<u64>>,
}

/// Whether events on `dev` carry GPU timestamps.
pub(crate) fn has_timestamps(dev: &Device) -> bool {
    dev.features.contains(wgpu::Features::TIMESTAMP_QUERY)
        && dev
            .features
            .intersects(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
}

impl Event {
    /// An event of `stream`, which `wait` flushes if the event is not yet
    /// submitted (an event with no stream must be submitted by its recorder).
    pub(crate) fn new(dev: &Arc<Device>, stream: Weak<StreamShared>) -> Result<Arc<Event>> {
        let timestamp = if has_timestamps(dev) {
            Some(dev.scoped(|| Timestamp {
                query: dev.wgpu.create_query_set(&wgpu::QuerySetDescriptor {
                    label: None,
                    ty: wgpu::QueryType::Timestamp,
                    count: 1,
                }),
                resolve: dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: 8,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
                readback: dev.wgpu.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: 8,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }),
            })?)
        } else {
            None
        };
        Ok(Arc::new(Event {
            device: dev.clone(),
            stream,
            timestamp,
            status: Mutex::new(Status::Recorded),
            time_ns: Mutex::new(None),
        }))
    }

    pub(crate) fn query_set(&self) -> Option<&wgpu::QuerySet> {
        self.timestamp.as_ref().map(|t| &t.query)
    }

    pub(crate) fn encode_resolve(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(t) = &self.timestamp {
            enc.resolve_query_set(&t.query, 0..1, &t.resolve, 0);
            enc.copy_buffer_to_buffer(&t.resolve, 0, &t.readback, 0, 8);
        }
    }

    pub(crate) fn set_submitted(&self, index: wgpu::SubmissionIndex) {
        *self.status.lock().unwrap() = Status::Submitted(index);
    }

    pub(crate) fn set_failed(&self, e: Error) {
        *self.status.lock().unwrap() = Status::Failed(e);
    }

    /// True once the GPU has passed the event (does not block).
    pub fn is_complete(&self) -> Result<bool> {
        self.device.check_alive()?;
        let index = match &*self.status.lock().unwrap() {
            Status::Recorded => return Ok(false),
            Status::Failed(e) => return Err(e.clone()),
            Status::Submitted(i) => i.clone(),
        };
        // A wait with a zero timeout asks about exactly this submission.
        let poll = wgpu::PollType::Wait { submission_index: Some(index), timeout: Some(std::time::Duration::ZERO) };
        match self.device.wgpu.poll(poll) {
            Ok(_) => Ok(true),
            Err(wgpu::PollError::Timeout) => Ok(false),
            Err(e) => Err(Error::DeviceLost(format!("querying the GPU failed: {e}"))),
        }
    }

    /// Block until the GPU has passed the event, flushing its stream if needed.
    pub fn wait(&self) -> Result<()> {
        self.device.check_alive()?;
        let recorded = matches!(*self.status.lock().unwrap(), Status::Recorded);
        if recorded {
            match self.stream.upgrade() {
                Some(s) => s.flush_for_other()?,
                None => bail!(InvalidArgument, "the event's stream was released before the event was submitted"),
            }
        }
        let index = match &*self.status.lock().unwrap() {
            Status::Submitted(i) => i.clone(),
            Status::Failed(e) => return Err(e.clone()),
            Status::Recorded => bail!(Internal, "event not submitted after its stream was flushed"),
        };
        self.device.wait_for(index)
    }

    /// The GPU timestamp in nanoseconds (blocks until the event is passed).
    /// Safe from many threads at once: the first reads it back, the others
    /// wait for that and share the result.
    fn time_ns(&self) -> Result<u64> {
        let Some(ts) = &self.timestamp else {
            bail!(Unsupported, "this adapter has no timestamp queries inside passes or encoders");
        };
        if let Some(t) = *self.time_ns.lock().unwrap() {
            return Ok(t);
        }
        self.wait()?;
        let mut time = self.time_ns.lock().unwrap();
        if let Some(t) = *time {
            return Ok(t);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        ts.readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        let ticks = match self.device.wait_callback(&rx, "reading the event's timestamp") {
            Ok(Ok(())) => {
                let view = ts.readback.slice(..).get_mapped_range();
                let ticks = view.map(|v| u64::from_le_bytes(v[..8].try_into().unwrap()));
                ts.readback.unmap();
                ticks.map_err(|e| Error::Internal(format!("mapped range: {e:?}")))?
            }
            Ok(Err(e)) => bail!(DeviceLost, "could not read the event's timestamp: {e}"),
            Err(e) => {
                // Cancel the mapping so that a later call can map again.
                ts.readback.unmap();
                return Err(e);
            }
        };
        let ns = (ticks as f64 * self.device.queue.get_timestamp_period() as f64) as u64;
        *time = Some(ns);
        Ok(ns)
    }

    /// GPU milliseconds from `start` to `end`.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f64> {
        if !start.device.same(&end.device) {
            bail!(DeviceMismatch, "the two events belong to different devices");
        }
        let a = start.time_ns()?;
        let b = end.time_ns()?;
        Ok((b as f64 - a as f64) / 1e6)
    }
}
