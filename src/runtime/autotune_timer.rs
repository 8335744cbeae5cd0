//! Timing one candidate of a tunable choice on a stream: the stream's
//! pending work finished first, a few warm-up runs (kernel compilation,
//! caches), then the median of a few timed runs: GPU timestamps around each
//! run where the adapter has them, else host time around a wait.

use super::event::{has_timestamps, Event};
use super::stream::StreamShared;
use crate::error::Result;
use std::time::Instant;

/// Runs before timing, and timed runs (the median is kept).
pub(crate) const WARMUP_RUNS: usize = 2;
pub(crate) const TIMED_RUNS: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Timestamps recorded between the runs (one submission for all).
    Gpu,
    /// Host time around each run and a wait for it.
    Host,
}

impl Clock {
    pub fn of(stream: &StreamShared) -> Clock {
        if has_timestamps(&stream.device) {
            Clock::Gpu
        } else {
            Clock::Host
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Milliseconds one `run` (which records onto `stream`) takes: the median
/// of TIMED_RUNS. Waits for the GPU. An error of recording is returned; an
/// error of the submitted batch stays with the stream (see
/// `StreamShared::finish_unreported`) and gives a time that is not trusted.
pub fn time(stream: &StreamShared, clock: Clock, run: &dyn Fn() -> Result<()>) -> Result<f64> {
    stream.finish_unreported()?;
    for _ in 0..WARMUP_RUNS {
        run()?;
    }
    match clock {
        Clock::Gpu => {
            let mut marks = vec![stream.record_mark()?];
            for _ in 0..TIMED_RUNS {
                run()?;
                marks.push(stream.record_mark()?);
            }
            stream.finish_unreported()?;
            let times = marks.windows(2).map(|w| Event::elapsed_ms(&w[0], &w[1])).collect::<Result<Vec<_>>>()?;
            Ok(median(times))
        }
        Clock::Host => {
            stream.finish_unreported()?;
            let mut times = Vec::with_capacity(TIMED_RUNS);
            for _ in 0..TIMED_RUNS {
                let start = Instant::now();
                run()?;
                stream.finish_unreported()?;
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            Ok(median(times))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::buffer::{Buffer, Usage};
    use crate::runtime::device::{Device, DeviceOptions};
    use crate::runtime::instance::{choose, instance, Preference};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Both clocks time WARMUP_RUNS + TIMED_RUNS runs of real work and give a positive median.
    #[test]
    fn both_clocks_time_every_run() {
        let adapters = instance().adapters().unwrap();
        let adapter = choose(&adapters, None, Preference::Default).unwrap();
        let dev = Device::create(&adapter, DeviceOptions::default()).unwrap();
        let stream = StreamShared::create(&dev).unwrap();
        let usage = Usage { storage: true, uniform: false, indirect: false };
        let (a, b) = (Buffer::create(&dev, 1 << 20, usage).unwrap(), Buffer::create(&dev, 1 << 20, usage).unwrap());
        let clocks: &[Clock] = if has_timestamps(&dev) { &[Clock::Gpu, Clock::Host] } else { &[Clock::Host] };
        for &clock in clocks {
            let runs = AtomicUsize::new(0);
            let ms = time(&stream, clock, &|| {
                runs.fetch_add(1, Ordering::Relaxed);
                stream.copy(&a, 0, &b, 0, 1 << 20)
            })
            .unwrap();
            assert_eq!(runs.load(Ordering::Relaxed), WARMUP_RUNS + TIMED_RUNS, "{clock:?}");
            assert!(ms > 0.0 && ms.is_finite(), "{clock:?}: {ms} ms");
        }
    }
}
