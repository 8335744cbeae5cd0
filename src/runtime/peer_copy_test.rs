//! Both routes of a copy between devices (imported host memory and staged
//! copies), on two devices of the default adapter, at sizes around the
//! chunk: every byte checked, offsets on both sides, several destinations.

use super::*;
use crate::runtime::buffer::Usage;
use crate::runtime::device::DeviceOptions;
use crate::runtime::instance::{choose, instance, Preference};
use crate::runtime::peer_copy_imported;

fn device() -> Arc<Device> {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    Device::create(&adapter, DeviceOptions::default()).unwrap()
}

fn buffer(dev: &Arc<Device>, size: u64) -> Arc<Buffer> {
    Buffer::create(dev, size, Usage { storage: true, uniform: false, indirect: false }).unwrap()
}

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32).map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8).collect()
}

fn read(b: &Buffer) -> Vec<u8> {
    let mut out = vec![0u8; b.size as usize];
    b.read(0, &mut out).unwrap();
    out
}

type CopyFn = fn(Endpoint, &[&Endpoint], u64, u64) -> Result<()>;

fn imported(src: Endpoint, dsts: &[&Endpoint], size: u64, chunk: u64) -> Result<()> {
    assert_eq!(peer_copy_imported::copy(&src, dsts, size, chunk)?, Outcome::Done);
    Ok(())
}

/// Copy `size` bytes from offset 8 of a patterned buffer of device 0 to
/// offset 12 of a buffer of device 1 and of a second buffer of device 0
/// (another stream), in chunks of `chunk`; everything around stays.
fn check(route: CopyFn, size: u64, chunk: u64) {
    let (a, b) = (device(), device());
    let (sa, sa2, sb) =
        (StreamShared::create(&a).unwrap(), StreamShared::create(&a).unwrap(), StreamShared::create(&b).unwrap());
    let src = buffer(&a, size + 16);
    let bytes = pattern(size as usize + 16, size as u32);
    src.write(0, &bytes).unwrap();
    let old = pattern(size as usize + 24, 7);
    let (d1, d2) = (buffer(&b, size + 24), buffer(&a, size + 24));
    d1.write(0, &old).unwrap();
    d2.write(0, &old).unwrap();
    let from = Endpoint { stream: &sa, buffer: &src, offset: 8 };
    let to1 = Endpoint { stream: &sb, buffer: &d1, offset: 12 };
    let to2 = Endpoint { stream: &sa2, buffer: &d2, offset: 12 };
    route(from, &[&to1, &to2], size, chunk).unwrap();
    let mut want = old.clone();
    want[12..12 + size as usize].copy_from_slice(&bytes[8..8 + size as usize]);
    assert!(read(&d1) == want, "device 1, {size} bytes in chunks of {chunk}");
    assert!(read(&d2) == want, "device 0, {size} bytes in chunks of {chunk}");
}

#[test]
fn devices_of_the_default_adapter_import_host_memory_where_it_has_the_extension() {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    let (a, b) = (device(), device());
    let has = crate::runtime::host_import::supported(&adapter);
    assert_eq!(a.host_import.is_some(), has);
    assert_eq!(route(&a, [&*b]), if has { Route::Imported } else { Route::Staged });
}

#[test]
fn staged_copies_are_exact_around_the_chunk() {
    for (size, chunk) in [(4, 1024), (4092, 1024), (1028, 1024), (5 * 1024 + 4, 1024), (64 << 10, 64 << 10)] {
        check(through_host, size, chunk);
    }
}

#[test]
fn imported_copies_are_exact_around_the_chunk() {
    if device().host_import.is_none() {
        return; // the adapter cannot import host memory (checked above)
    }
    // Chunks not multiples of the slot alignment; more chunks than slots.
    for (size, chunk) in [(4, 1024), (4092, 1024), (1028, 1024), (9 * 1000 + 4, 1000), (64 << 10, 64 << 10)] {
        check(imported, size, chunk);
    }
}

#[test]
fn imported_copies_run_concurrently_from_several_threads() {
    let (a, b) = (device(), device());
    if a.host_import.is_none() {
        return;
    }
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            let (a, b) = (a.clone(), b.clone());
            scope.spawn(move || {
                let (from_dev, to_dev) = if t % 2 == 0 { (&a, &b) } else { (&b, &a) };
                let (s1, s2) = (StreamShared::create(from_dev).unwrap(), StreamShared::create(to_dev).unwrap());
                let size = 12_000 + 4 * t as u64;
                let src = buffer(from_dev, size);
                let bytes = pattern(size as usize, t);
                src.write(0, &bytes).unwrap();
                let dst = buffer(to_dev, size);
                for _ in 0..3 {
                    let to = Endpoint { stream: &s2, buffer: &dst, offset: 0 };
                    imported(Endpoint { stream: &s1, buffer: &src, offset: 0 }, &[&to], size, 4096).unwrap();
                    assert!(read(&dst) == bytes, "thread {t}");
                }
            });
        }
    });
}
