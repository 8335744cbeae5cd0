//! Two devices of one process with different settings: each reduction
//! takes the kernels its own device's settings choose, and both are right.

use crate::ops::reduce::kernels::use_subgroups;
use crate::ops::reduce::{reduce, ReduceOp};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::device::{Device, DeviceOptions};
use crate::runtime::instance::{choose, instance, Preference};
use crate::runtime::settings::Settings;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

fn device(settings: Settings) -> Arc<Device> {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    Device::create(&adapter, DeviceOptions { settings: Some(settings), ..Default::default() }).unwrap()
}

/// Row sums of a (rows, cols) f32 matrix on `dev`.
fn row_sums(dev: &Arc<Device>, data: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let storage = Usage { storage: true, uniform: false, indirect: false };
    let input = Buffer::create(dev, (data.len() * 4) as u64, storage).unwrap();
    input.write(0, bytemuck::cast_slice(data)).unwrap();
    let output = Buffer::create(dev, (rows * 4) as u64, storage).unwrap();
    let stream = StreamShared::create(dev).unwrap();
    let x = Tensor {
        buffer: &input,
        dtype: DType::F32,
        shape: vec![rows, cols],
        strides: vec![cols as isize, 1],
        offset: 0,
    };
    let y = Tensor { buffer: &output, dtype: DType::F32, shape: vec![rows], strides: vec![1], offset: 0 };
    reduce(&stream, ReduceOp::Sum, &x, &[1], false, &y).unwrap();
    stream.synchronize().unwrap();
    let mut bytes = vec![0u8; rows * 4];
    output.read(0, &mut bytes).unwrap();
    bytemuck::cast_slice(&bytes).to_vec()
}

#[test]
fn two_devices_keep_their_own_settings() {
    let plain = device(Settings::default());
    let mut without = Settings::default();
    without.reduce.disable_subgroups = true;
    let shared_only = device(without.clone());
    assert_eq!(plain.settings(), &Settings::default());
    assert_eq!(shared_only.settings(), &without);
    // The route follows each device's settings, not the process's.
    assert!(!use_subgroups(&shared_only));
    assert_eq!(use_subgroups(&plain), plain.features.contains(wgpu::Features::SUBGROUP));

    let (rows, cols) = (37, 1000);
    let data: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919) % 1001) as f32 / 1000.0 - 0.5).collect();
    let want: Vec<f64> = data.chunks(cols).map(|r| r.iter().map(|&v| v as f64).sum()).collect();
    for dev in [&plain, &shared_only, &plain] {
        let got = row_sums(dev, &data, rows, cols);
        for (r, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert!((g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()), "row {r}: {g} against {w}");
        }
    }
}
