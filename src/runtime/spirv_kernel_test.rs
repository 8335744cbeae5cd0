//! The SPIR-V passthrough path on whatever Vulkan adapter the tests run on
//! (lavapipe in CI): a module made here by naga's SPIR-V writer from WGSL
//! runs through `SpirvModule` with its declared bindings, and a broken
//! module is refused with an error instead of reaching the driver.

use super::*;
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::device::DeviceOptions;
use crate::runtime::instance::{choose, instance, Preference};
use crate::runtime::stream::{Bind, Groups, StreamShared};

fn device() -> Arc<Device> {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    Device::create(&adapter, DeviceOptions::default()).unwrap()
}

const ADD_WGSL: &str = "
struct Params { add: u32, n: u32 }
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<uniform> p: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < p.n) { x[id.x] = x[id.x] * 3u + p.add; }
}";

const ADD_BINDINGS: &[SpirvBinding] = &[
    SpirvBinding { binding: 0, name: "x", kind: BindingKind::StorageReadWrite, min_size: 4 },
    SpirvBinding { binding: 1, name: "p", kind: BindingKind::Uniform, min_size: 8 },
];

/// `source` as SPIR-V bytes, written by naga.
fn spirv_bytes(source: &str) -> &'static [u8] {
    let module = naga::front::wgsl::parse_str(source).unwrap();
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap();
    let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
    let words = naga::back::spv::write_vec(&module, &info, &options, None).unwrap();
    Box::leak(words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>().into_boxed_slice())
}

fn module(file: &'static str, bytes: &'static [u8]) -> &'static SpirvModule {
    Box::leak(Box::new(SpirvModule { file, bytes, entry: "main", workgroup_size: [64, 1, 1], bindings: ADD_BINDINGS }))
}

#[test]
fn a_spirv_module_runs_with_its_declared_bindings() {
    let dev = device();
    if dev.adapter.info.backend != wgpu::Backend::Vulkan {
        return; // passthrough SPIR-V is Vulkan's (the tests run on lavapipe)
    }
    assert!(supported(&dev), "every Vulkan adapter offers SPIR-V passthrough, and the device enables it");
    let m = module("test_add.spv", spirv_bytes(ADD_WGSL));
    let kernel = m.kernel(&dev).unwrap();
    assert!(Arc::ptr_eq(&kernel, &m.kernel(&dev).unwrap()), "cached per device");
    let n = 1000u32;
    let x = Buffer::create(&dev, 4 * n as u64, Usage { storage: true, uniform: false, indirect: false }).unwrap();
    let init: Vec<u32> = (0..n).collect();
    x.write(0, bytemuck::cast_slice(&init)).unwrap();
    let stream = StreamShared::create(&dev).unwrap();
    let params = [7u32, n - 1];
    let binds = [Bind { binding: 0, buffer: &x, offset: 0, size: None }];
    stream
        .launch(&kernel, &binds, Some(bytemuck::cast_slice(&params)), Groups::Direct([n.div_ceil(64), 1, 1]))
        .unwrap();
    let mut out = vec![0u8; 4 * n as usize];
    x.read(0, &mut out).unwrap();
    let out: &[u32] = bytemuck::cast_slice(&out);
    for i in 0..n {
        let want = if i < n - 1 { i * 3 + 7 } else { i };
        assert_eq!(out[i as usize], want, "element {i}");
    }
}

#[test]
fn a_broken_module_is_an_error() {
    let dev = device();
    let truncated = module("test_truncated.spv", &[3, 2, 35, 7, 0, 0]);
    assert!(matches!(truncated.kernel(&dev), Err(Error::Internal(_)) | Err(Error::Unsupported(_))));
    let not_spirv = module("test_not_spirv.spv", &[0u8; 64]);
    assert!(matches!(not_spirv.kernel(&dev), Err(Error::Internal(_)) | Err(Error::Unsupported(_))));
    assert!(dev.take_uncaptured().is_none());
}
