//! The layout of pixel pairs (stem_pad.rs): its geometry, and on the device
//! a convolution over pairs against the direct sum of the first layer.

use super::*;
use crate::ops::conv::{conv2d, Conv2dParams};
use crate::ops::half::f16_bits;
use crate::runtime::buffer::Usage;
use crate::runtime::device::{Device, DeviceOptions};
use crate::runtime::instance::{choose, instance, Preference};

fn geometry(c: usize, hw: usize, k: usize, stride: usize, pad: usize) -> Geometry {
    let out = (hw + 2 * pad - k) / stride + 1;
    Geometry {
        n: 2,
        c,
        h: hw,
        w: hw,
        o: 64,
        cg: c,
        og: 64,
        kh: k,
        kw: k,
        oh: out,
        ow: out,
        sh: stride,
        sw: stride,
        ph: pad,
        pw: pad,
        dh: 1,
        dw: 1,
        groups: 1,
    }
}

#[test]
fn pairs_turn_a_stride_2_window_into_a_stride_1_window_over_pairs() {
    // ResNet-50's first layer: output column x reads pixels 2x - 3 to
    // 2x + 3, i.e. pairs x to x + 3 of pixels from -3; 115 pairs cover
    // the 112 columns.
    let g = geometry(3, 224, 7, 2, 3);
    let (q, image, weight) = layout(&g, true);
    assert_eq!((q.c, q.cg, q.w, q.kw, q.sw, q.pw), (8, 8, 115, 4, 1, 0));
    assert_eq!((q.h, q.kh, q.sh, q.ph, q.oh, q.ow), (224, 7, 2, 3, 112, 112));
    assert_eq!((q.w + 2 * q.pw - q.kw) / q.sw + 1, q.ow, "the output is the same size");
    assert_eq!(image, Padding::Pairs { lpad: 3, words: 115 });
    assert_eq!(weight, Padding::Pairs { lpad: 0, words: 4 });
    // MobileNetV2's 3x3 stride-2 first layer, padding 1.
    let (q, image, weight) = layout(&geometry(3, 224, 3, 2, 1), true);
    assert_eq!((q.w, q.kw, q.ow), (113, 2, 112));
    assert_eq!((image, weight), (Padding::Pairs { lpad: 1, words: 113 }, Padding::Pairs { lpad: 0, words: 2 }));
    // Without pairs only the channels change.
    let (q, image, _) = layout(&g, false);
    assert_eq!((q.c, q.w, q.kw, q.sw, q.pw, image), (8, 224, 7, 2, 3, Padding::Channels8));
}

/// The f16 bits as a value (normal and subnormal numbers, zeros).
fn f16_value(bits: u16) -> f64 {
    let (sign, exp, man) = ((bits >> 15) & 1, ((bits >> 10) & 0x1f) as i32, (bits & 0x3ff) as f64);
    let v = if exp == 0 { man * 2f64.powi(-24) } else { (1.0 + man / 1024.0) * 2f64.powi(exp - 15) };
    if sign == 1 {
        -v
    } else {
        v
    }
}

/// A first layer (`c` channels, k x k window, stride 2, padding `pad`)
/// computed through pixel pairs exactly as `record` lays them out, the
/// pairs convolved by whatever route this device gives an 8-channel f16
/// convolution, against the direct sum in f64. The values are small
/// multiples of powers of two, so every product and sum is exact and
/// the results must match bit for bit.
fn pairs_match_the_direct_sum(dev: &Arc<Device>, c: usize, hw: [usize; 2], k: usize, pad: usize) {
    let stream = StreamShared::create(dev).unwrap();
    let (n, o) = (2, 5);
    let [h, w] = hw;
    let g = Geometry {
        n,
        c,
        h,
        w,
        o,
        cg: c,
        og: o,
        kh: k,
        kw: k,
        oh: (h + 2 * pad - k) / 2 + 1,
        ow: (w + 2 * pad - k) / 2 + 1,
        sh: 2,
        sw: 2,
        ph: pad,
        pw: pad,
        dh: 1,
        dw: 1,
        groups: 1,
    };
    let x: Vec<f64> = (0..n * c * h * w).map(|i| ((i * 7 + 3) % 9) as f64 / 4.0 - 1.0).collect();
    let wt: Vec<f64> = (0..o * c * k * k).map(|i| ((i * 5 + 1) % 7) as f64 / 8.0 - 0.375).collect();
    let upload = |v: &[f64]| {
        let mut bits: Vec<u16> = v.iter().map(|&e| f16_bits(e)).collect();
        bits.resize(bits.len().div_ceil(2) * 2, 0);
        let b = Buffer::create(dev, (bits.len() * 2) as u64, Usage { storage: true, uniform: false, indirect: false })
            .unwrap();
        b.write(0, bytemuck::cast_slice(&bits)).unwrap();
        b
    };
    let (bx, bw) = (upload(&x), upload(&wt));
    let out_len = n * o * g.oh * g.ow;
    let by = upload(&vec![0.0; out_len]);
    let nchw = |b, shape: [usize; 4]| Tensor {
        buffer: b,
        dtype: DType::F16,
        shape: shape.to_vec(),
        strides: vec![(shape[1] * shape[2] * shape[3]) as isize, (shape[2] * shape[3]) as isize, shape[3] as isize, 1],
        offset: 0,
    };
    let (q, image, weight) = layout(&g, true);
    let px = padded_copy(&stream, &nchw(&bx, g.input_shape()), image).unwrap();
    let pw = padded_copy(&stream, &nchw(&bw, g.weight_shape()), weight).unwrap();
    let params = Conv2dParams {
        stride: [q.sh as u32, q.sw as u32],
        pad: [q.ph as u32, q.pw as u32],
        dilation: [1, 1],
        groups: 1,
    };
    let (input, weight) = (padded_view(&px, q.input_shape()), padded_view(&pw, q.weight_shape()));
    conv2d(&stream, &params, &input, &weight, None, &nchw(&by, g.out_shape())).unwrap();
    stream.synchronize().unwrap();
    let mut bytes = vec![0u8; by.size as usize];
    by.read(0, &mut bytes).unwrap();
    let got: &[u16] = bytemuck::cast_slice(&bytes);
    for (i, y) in (0..n).flat_map(|i| (0..o).map(move |oc| (i, oc))).enumerate() {
        let (img, oc) = y;
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let mut sum = 0.0;
                for ch in 0..c {
                    for r in 0..k {
                        for t in 0..k {
                            let (iy, ix) = ((oy * 2 + r) as isize - pad as isize, (ox * 2 + t) as isize - pad as isize);
                            if (0..h as isize).contains(&iy) && (0..w as isize).contains(&ix) {
                                let xv = x[((img * c + ch) * h + iy as usize) * w + ix as usize];
                                sum += xv * wt[((oc * c + ch) * k + r) * k + t];
                            }
                        }
                    }
                }
                let at = (i * g.oh + oy) * g.ow + ox;
                let v = f16_value(got[at]);
                assert_eq!(v, sum, "{c} channels {k}x{k}/2 pad {pad} {hw:?}: image {img} channel {oc} at ({oy}, {ox})");
            }
        }
    }
}

#[test]
fn a_convolution_over_pixel_pairs_is_the_first_layer() {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    let dev = Device::create(&adapter, DeviceOptions::default()).unwrap();
    // f16 convolutions need f16 shaders (lavapipe has them); without,
    // they are refused (test_conv checks).
    if !dev.wgpu.features().contains(wgpu::Features::SHADER_F16) {
        eprintln!("no f16 shaders: pixel pairs not checked");
        return;
    }
    // ResNet-50's 7x7 window, MobileNetV2's 3x3, an odd 5x5 of one
    // channel; odd sizes, so the pairs run past the row's end.
    pairs_match_the_direct_sum(&dev, 3, [13, 17], 7, 3);
    pairs_match_the_direct_sum(&dev, 3, [11, 9], 3, 1);
    pairs_match_the_direct_sum(&dev, 1, [9, 12], 5, 2);
    pairs_match_the_direct_sum(&dev, 4, [8, 7], 7, 3);
}
