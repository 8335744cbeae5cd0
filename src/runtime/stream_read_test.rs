//! A host read submits its copy with the last stream's batch (one queue
//! submission): it must still see every stream's work, see the valid work
//! of a batch the GPU layer rejects, and fail (never return stale bytes)
//! when its own copy fails.

use super::test_work::fill;
use super::*;
use crate::runtime::device::DeviceOptions;
use crate::runtime::instance::{choose, instance, Preference};

fn device() -> Arc<Device> {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    Device::create(&adapter, DeviceOptions::default()).unwrap()
}

fn storage(dev: &Arc<Device>) -> Arc<Buffer> {
    Buffer::create(dev, 64, Usage { storage: true, uniform: false, indirect: false }).unwrap()
}

fn words(b: &Buffer) -> Vec<u32> {
    let mut out = vec![0u8; b.size as usize];
    b.read(0, &mut out).unwrap();
    bytemuck::cast_slice(&out).to_vec()
}

#[test]
fn read_sees_the_work_of_every_stream() {
    let dev = device();
    let streams: Vec<_> = (0..3).map(|_| StreamShared::create(&dev).unwrap()).collect();
    let bufs: Vec<_> = (0..3).map(|_| storage(&dev)).collect();
    for round in 0..3u32 {
        // Streams 0 and 2 have work, stream 1 none: the read's copy goes
        // with stream 2's batch, after stream 0's was submitted.
        fill(&streams[0], &bufs[0], 16, 10 + round);
        fill(&streams[2], &bufs[2], 16, 30 + round);
        assert_eq!(words(&bufs[2]), vec![30 + round; 16]);
        assert_eq!(words(&bufs[0]), vec![10 + round; 16]);
        fill(&streams[0], &bufs[0], 16, 20 + round);
        fill(&streams[1], &bufs[1], 16, 40 + round);
        assert_eq!(words(&bufs[1]), vec![40 + round; 16]);
        assert_eq!(words(&bufs[0]), vec![20 + round; 16]);
        // A copy recorded on one stream from a buffer another stream wrote.
        fill(&streams[1], &bufs[1], 16, 50 + round);
        streams[1].flush().unwrap();
        streams[2].copy(&bufs[1], 0, &bufs[2], 0, 64).unwrap();
        assert_eq!(words(&bufs[2]), vec![50 + round; 16]);
    }
    for s in &streams {
        s.synchronize().unwrap();
    }
}

#[test]
fn read_after_a_rejected_batch_sees_its_valid_work() {
    let dev = device();
    let stream = StreamShared::create(&dev).unwrap();
    let (a, b) = (storage(&dev), storage(&dev));
    fill(&stream, &b, 16, 5);
    stream.synchronize().unwrap();

    fill(&stream, &a, 16, 7);
    let raw = a.raw().clone();
    let rejected = Cmd::Copy { src: raw.clone(), src_offset: 0, dst: raw, dst_offset: 16, size: 4 };
    stream.state.lock().unwrap().batch.cmds.push(rejected);
    fill(&stream, &b, 16, 9);
    // The read's submission is rejected with the batch; the batch's valid
    // commands run, then the copy: no stale 5s.
    assert_eq!(words(&b), vec![9; 16]);
    assert!(matches!(stream.flush(), Err(Error::Validation(_))), "the stream reports the rejected command");
    assert_eq!(words(&a), vec![7; 16]);
    stream.synchronize().unwrap();
}

#[test]
fn a_failing_read_copy_is_the_reads_error() {
    let dev = device();
    let stream = StreamShared::create(&dev).unwrap();
    let (a, b) = (storage(&dev), storage(&dev));
    fill(&stream, &a, 16, 3);
    stream.synchronize().unwrap();
    fill(&stream, &b, 16, 4);
    // The only known way to make a copy fail: its source is gone.
    a.raw().destroy();
    let mut out = [0xAAu8; 64];
    assert!(a.read(0, &mut out).is_err(), "a read whose copy fails must fail");
    assert_eq!(out, [0xAA; 64], "the output is untouched");
    // The batch that carried the copy ran, and was not blamed for it.
    stream.synchronize().unwrap();
    assert_eq!(words(&b), vec![4; 16]);
    // The destroyed allocation must not go back to the pool.
    dev.destroy();
}

#[test]
fn reads_racing_other_threads_streams_see_their_own_work() {
    let dev = device();
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            let dev = dev.clone();
            scope.spawn(move || {
                // Each thread's reads flush the other threads' streams, and
                // its copy may go with any of their batches.
                let stream = StreamShared::create(&dev).unwrap();
                let b = storage(&dev);
                for i in 0..40u32 {
                    let v = t * 1000 + i;
                    fill(&stream, &b, 16, v);
                    if i % 3 == 0 {
                        fill(&stream, &b, 8, v + 1);
                        let mut want = vec![v + 1; 8];
                        want.extend([v; 8]);
                        assert_eq!(words(&b), want);
                    } else {
                        assert_eq!(words(&b), vec![v; 16]);
                    }
                }
                stream.synchronize().unwrap();
            });
        }
    });
}
