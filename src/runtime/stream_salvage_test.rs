//! A batch the GPU layer rejects loses only the rejected commands. The
//! checks at record time leave no known way to record such a command, so
//! the test injects one (a copy within one buffer, which wgpu refuses).

use super::test_work::fill;
use super::*;
use crate::runtime::device::DeviceOptions;
use crate::runtime::instance::{choose, instance, Preference};

fn device() -> Arc<Device> {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    Device::create(&adapter, DeviceOptions::default()).unwrap()
}

fn words(b: &Buffer) -> Vec<u32> {
    let mut out = vec![0u8; b.size as usize];
    b.read(0, &mut out).unwrap();
    bytemuck::cast_slice(&out).to_vec()
}

fn inject_rejected_copy(stream: &StreamShared, b: &Buffer) {
    let raw = b.raw().clone();
    let cmd = Cmd::Copy { src: raw.clone(), src_offset: 0, dst: raw, dst_offset: 16, size: 4 };
    stream.state.lock().unwrap().batch.cmds.push(cmd);
}

#[test]
fn rejected_command_loses_only_itself() {
    let dev = device();
    let stream = StreamShared::create(&dev).unwrap();
    let usage = Usage { storage: true, uniform: false, indirect: false };
    let a = Buffer::create(&dev, 64, usage).unwrap();
    let b = Buffer::create(&dev, 64, usage).unwrap();

    fill(&stream, &a, 16, 7);
    inject_rejected_copy(&stream, &a);
    fill(&stream, &b, 16, 9);
    let err = stream.flush().unwrap_err();
    assert!(matches!(&err, Error::Validation(m) if m.contains("1 of 3")), "{err}");
    assert_eq!(words(&a), vec![7; 16], "work recorded before the rejected command");
    assert_eq!(words(&b), vec![9; 16], "work recorded after the rejected command");
    stream.flush().unwrap();

    // Submitted by another call (a host write): that call succeeds, and the
    // stream's next synchronize reports the error.
    fill(&stream, &a, 16, 1);
    inject_rejected_copy(&stream, &a);
    b.write(0, &[5u8; 64]).unwrap();
    assert!(matches!(stream.synchronize(), Err(Error::Validation(_))));
    stream.synchronize().unwrap();
    assert_eq!(words(&a), vec![1; 16]);
    assert_eq!(words(&b), vec![0x0505_0505; 16]);
}
