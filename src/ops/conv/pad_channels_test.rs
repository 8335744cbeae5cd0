//! The channel padding of the padded first layer (pad_channels.rs) on the
//! device: every f16 bit pattern (NaN payloads, infinities, -0.0,
//! subnormals) lands unchanged in the first C channels of its pixel, the
//! other channels are +0.0, nothing past the padded pixels is written;
//! odd sizes, 1 to 7 channels, channels-first and channels-last views with
//! gaps, offsets and a reversed dim, and a batch padded chunk by chunk as
//! stem_pad.rs does. The same for pixel pairs (1 to 4 channels, zero
//! pixels before and after each row). The padded form's convolution itself needs the KHR
//! gather, which lavapipe lacks.

use super::pad_channels::{pad_channels, Padding, PADDED};
use crate::ops::tensor::{DType, Tensor};
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::device::{Device, DeviceOptions};
use crate::runtime::instance::{choose, instance, Preference};
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

const STORAGE: Usage = Usage { storage: true, uniform: false, indirect: false };
/// What the output buffer holds before the kernel runs.
const UNTOUCHED: u16 = 0xaaaa;
/// Bits the source holds at every third element: NaNs (quiet, signalling,
/// negative, with payloads), infinities, zeros of both signs, subnormals.
const SPECIAL: [u16; 9] = [0x7e00, 0x7c01, 0xfe7f, 0x7c00, 0xfc00, 0x8000, 0x0000, 0x0001, 0x83ff];

fn device() -> Arc<Device> {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    Device::create(&adapter, DeviceOptions::default()).unwrap()
}

/// `len` f16 bit patterns: the special ones, and pseudo-random bits.
fn source_bits(len: usize) -> Vec<u16> {
    let mut state = 0x2545_f491u32;
    (0..len)
        .map(|i| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            if i % 3 == 0 {
                SPECIAL[(i / 3) % SPECIAL.len()]
            } else {
                (state >> 16) as u16
            }
        })
        .collect()
}

fn buffer_of(dev: &Arc<Device>, bits: &[u16]) -> Arc<Buffer> {
    let mut bits = bits.to_vec();
    bits.resize(bits.len().div_ceil(2) * 2, 0);
    let b = Buffer::create(dev, (bits.len() * 2) as u64, STORAGE).unwrap();
    b.write(0, bytemuck::cast_slice(&bits)).unwrap();
    b
}

fn read_bits(b: &Buffer) -> Vec<u16> {
    let mut bytes = vec![0u8; b.size as usize];
    b.read(0, &mut bytes).unwrap();
    bytemuck::cast_slice(&bytes).to_vec()
}

/// A view of (N, C, H, W) into `src` (whose bits are `bits`).
struct Case {
    shape: [usize; 4],
    strides: [isize; 4],
    offset: usize,
}

impl Case {
    fn element(&self, [n, c, h, w]: [usize; 4]) -> usize {
        let at = [n, c, h, w].iter().zip(&self.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
        (self.offset as isize + at) as usize
    }

    /// The padded (N, H, WQ, 8) bits, then `spare` untouched halves.
    fn expected(&self, bits: &[u16], padding: Padding, spare: usize) -> Vec<u16> {
        let [n, c, h, w] = self.shape;
        let wq = padding.words(w);
        let mut out = Vec::with_capacity(n * h * wq * PADDED + spare);
        // Channel k of pixel x (zero outside the row and past C).
        let at = |i, k, y, x: isize| match k < c && (0..w as isize).contains(&x) {
            true => bits[self.element([i, k, y, x as usize])],
            false => 0,
        };
        for i in 0..n {
            for y in 0..h {
                for q in 0..wq {
                    match padding {
                        Padding::Channels8 => out.extend((0..PADDED).map(|k| at(i, k, y, q as isize))),
                        Padding::Pairs { lpad, .. } => {
                            let x = 2 * q as isize - lpad as isize;
                            out.extend((0..PADDED).map(|k| at(i, k % 4, y, x + (k / 4) as isize)));
                        }
                    }
                }
            }
        }
        out.extend(std::iter::repeat_n(UNTOUCHED, spare));
        out
    }

    fn view<'a>(&self, src: &'a Buffer) -> Tensor<'a> {
        Tensor {
            buffer: src,
            dtype: DType::F16,
            shape: self.shape.to_vec(),
            strides: self.strides.to_vec(),
            offset: self.offset,
        }
    }

    /// Images n0..n0 + nb (the view moved along the batch).
    fn images(&self, n0: usize, nb: usize) -> Case {
        let mut shape = self.shape;
        shape[0] = nb;
        let offset = (self.offset as isize + n0 as isize * self.strides[0]) as usize;
        Case { shape, strides: self.strides, offset }
    }
}

/// Pad `case` as `padding` on the device and compare every half of the
/// output buffer (with 24 halves to spare past the padded words) bit for
/// bit.
fn check_as(
    dev: &Arc<Device>,
    stream: &StreamShared,
    src: &Buffer,
    bits: &[u16],
    case: &Case,
    padding: Padding,
    what: &str,
) {
    let [n, _, h, w] = case.shape;
    let spare = 24;
    let out = buffer_of(dev, &vec![UNTOUCHED; n * h * padding.words(w) * PADDED + spare]);
    pad_channels(stream, &case.view(src), padding, &out).unwrap();
    stream.synchronize().unwrap();
    let got = read_bits(&out);
    let want = case.expected(bits, padding, spare);
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        let (word, k) = (i / PADDED, i % PADDED);
        panic!("{what} {:?} {padding:?}: word {word} half {k}: {:#06x}, expected {:#06x}", case.shape, got[i], want[i]);
    }
}

fn check(dev: &Arc<Device>, stream: &StreamShared, src: &Buffer, bits: &[u16], case: &Case, what: &str) {
    check_as(dev, stream, src, bits, case, Padding::Channels8, what);
}

/// Strides of (N, C, H, W) in NCHW memory with `gap` unused elements after
/// each row, plane and image (0: contiguous).
fn nchw(c: usize, h: usize, w: usize, gap: usize) -> [isize; 4] {
    let row = w + gap;
    let plane = h * row + gap;
    [(c * plane + gap) as isize, plane as isize, row as isize, 1]
}

/// Strides of (N, C, H, W) in NHWC memory with `pixel` elements per pixel
/// (C: contiguous).
fn nhwc(h: usize, w: usize, pixel: usize) -> [isize; 4] {
    [(h * w * pixel) as isize, 1, (w * pixel) as isize, pixel as isize]
}

#[test]
fn channels_land_bit_for_bit_with_zeros_after_them() {
    let dev = device();
    let stream = StreamShared::create(&dev).unwrap();
    let bits = source_bits(40_000);
    let src = buffer_of(&dev, &bits);
    let (h, w) = (5, 7);
    for c in 1..PADDED {
        let case = Case { shape: [3, c, h, w], strides: nchw(c, h, w, 0), offset: 3 };
        check(&dev, &stream, &src, &bits, &case, "contiguous NCHW at an odd offset");
    }
    for c in 1..=3 {
        let cases = [
            ("NCHW with gaps", Case { shape: [2, c, h, w], strides: nchw(c, h, w, 3), offset: 1 }),
            ("NHWC", Case { shape: [2, c, h, w], strides: nhwc(h, w, c), offset: 0 }),
            ("NHWC with gaps", Case { shape: [2, c, h, w], strides: nhwc(h, w, c + 3), offset: 5 }),
            ("every other column", Case { shape: [2, c, h, w], strides: [300, 90, 18, 2], offset: 7 }),
            // Rows upside down: the first row last in memory.
            ("NCHW with rows reversed", Case { shape: [2, c, h, w], strides: [130, 40, -7, 1], offset: 4 * 7 + 1 }),
            // A weight (O, C, KH, KW) of 7x7 windows.
            ("weight", Case { shape: [16, c, 7, 7], strides: nchw(c, 7, 7, 0), offset: 0 }),
            // More pixels than a workgroup's invocations, odd sizes.
            ("NCHW over workgroups", Case { shape: [3, c, 17, 19], strides: nchw(c, 17, 19, 0), offset: 2 }),
        ];
        for (what, case) in &cases {
            check(&dev, &stream, &src, &bits, case, what);
        }
    }
}

#[test]
fn a_batch_pads_chunk_by_chunk() {
    let dev = device();
    let stream = StreamShared::create(&dev).unwrap();
    let bits = source_bits(5 * 3 * 9 * 11 * 2 + 64);
    let src = buffer_of(&dev, &bits);
    let (c, h, w) = (3, 9, 11);
    for (what, strides) in [("NCHW", nchw(c, h, w, 2)), ("NHWC", nhwc(h, w, c))] {
        let whole = Case { shape: [5, c, h, w], strides, offset: 3 };
        // Chunks of 2 images, the last one shorter, as stem_pad.rs cuts them.
        for n0 in (0..5).step_by(2) {
            check(&dev, &stream, &src, &bits, &whole.images(n0, 2.min(5 - n0)), what);
        }
    }
}

#[test]
fn pairs_of_pixels_land_bit_for_bit_with_zeros_around_rows() {
    let dev = device();
    let stream = StreamShared::create(&dev).unwrap();
    let bits = source_bits(40_000);
    let src = buffer_of(&dev, &bits);
    let (h, w) = (5, 7);
    for c in 1..=4 {
        let cases = [
            ("contiguous NCHW at an odd offset", Case { shape: [3, c, h, w], strides: nchw(c, h, w, 0), offset: 3 }),
            ("NCHW with gaps", Case { shape: [2, c, h, w], strides: nchw(c, h, w, 3), offset: 1 }),
            ("NHWC", Case { shape: [2, c, h, w], strides: nhwc(h, w, c), offset: 0 }),
            ("NCHW with rows reversed", Case { shape: [2, c, h, w], strides: [130, 40, -7, 1], offset: 4 * 7 + 1 }),
            ("over workgroups", Case { shape: [3, c, 17, 19], strides: nchw(c, 17, 19, 0), offset: 2 }),
        ];
        for (what, case) in &cases {
            let w = case.shape[3];
            // A 7-wide stride-2 window with 3 pixels of padding: the words
            // run from pixel -3 past the row's end; a 3-wide one with 1.
            for (lpad, words) in [(3, (w + 6).div_ceil(2) + 1), (1, w.div_ceil(2) + 1), (0, w.div_ceil(2))] {
                check_as(&dev, &stream, &src, &bits, case, Padding::Pairs { lpad, words }, what);
            }
        }
        // A weight (O, C, 7, 7) as ResNet-50's first layer pairs it: 4 words a row.
        let weight = Case { shape: [16, c, 7, 7], strides: nchw(c, 7, 7, 0), offset: 0 };
        check_as(&dev, &stream, &src, &bits, &weight, Padding::Pairs { lpad: 0, words: 4 }, "weight");
    }
}
