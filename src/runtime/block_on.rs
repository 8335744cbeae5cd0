//! A minimal executor for wgpu's futures. On native backends they complete
//! during the call that creates them (or after `Device::poll`), so a busy
//! poll with a no-op waker is all that is needed; no async runtime dependency.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}
