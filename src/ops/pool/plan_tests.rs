//! Routing table: windowed pooling views (ResNet-50's stem pooling, NCHW
//! and channels-last, channel counts, padded pixels, offsets, dtypes,
//! window sizes) and the kernel each takes.

use super::plan::{plan, Plan, Problem, Route, View, WINDOW_MAX};
use crate::ops::split::CHUNK_LEN;
use crate::ops::tensor::DType::{self, BF16, F16, F32};

/// A contiguous NCHW view.
fn nchw([n, c, h, w]: [usize; 4]) -> View {
    let strides = [c * h * w, h * w, w, 1].map(|s| s as isize);
    View { shape: [n, c, h, w], strides, offset: 0 }
}

/// A channels-last view of (N, C, H, W) whose pixels are `pixel` elements
/// apart (C where dense).
fn nhwc_padded([n, c, h, w]: [usize; 4], pixel: usize) -> View {
    let strides = [h * w * pixel, 1, w * pixel, pixel].map(|s| s as isize);
    View { shape: [n, c, h, w], strides, offset: 0 }
}

fn nhwc(shape: [usize; 4]) -> View {
    nhwc_padded(shape, shape[1])
}

fn at(v: View, offset: u32) -> View {
    View { offset, ..v }
}

/// The output shape of a window `k`, stride `s`, padding `p` pooling.
fn pooled([n, c, h, w]: [usize; 4], k: [usize; 2], s: usize, p: usize) -> [usize; 4] {
    [n, c, (h + 2 * p - k[0]) / s + 1, (w + 2 * p - k[1]) / s + 1]
}

struct Case {
    name: &'static str,
    dtype: DType,
    window: [usize; 2],
    input: View,
    out: View,
    want: Plan,
}

const fn vec4(kh: u32, kw: u32) -> Plan {
    Plan { route: Route::Vec4 { window: [kh, kw] }, channels_last: true }
}
const SCALAR_CL: Plan = Plan { route: Route::Scalar, channels_last: true };
const SCALAR_NCHW: Plan = Plan { route: Route::Scalar, channels_last: false };

fn cases() -> Vec<Case> {
    let stem = [256, 64, 112, 112];
    let stem_out = pooled(stem, [3, 3], 2, 1);
    let small = [2, 8, 7, 9];
    let small_out = pooled(small, [3, 3], 2, 1);
    let case = |name, dtype, window, input, out, want| Case { name, dtype, window, input, out, want };
    let k3 = [3, 3];
    vec![
        case("ResNet-50 stem pool f16 channels-last", F16, k3, nhwc(stem), nhwc(stem_out), vec4(3, 3)),
        case("ResNet-50 stem pool f32 channels-last", F32, k3, nhwc(stem), nhwc(stem_out), vec4(3, 3)),
        case("ResNet-50 stem pool f16 NCHW", F16, k3, nchw(stem), nchw(stem_out), SCALAR_NCHW),
        case("channels-last in, NCHW out", F32, k3, nhwc(stem), nchw(stem_out), SCALAR_NCHW),
        case("NCHW in, channels-last out", F32, k3, nchw(stem), nhwc(stem_out), SCALAR_NCHW),
        case("2x2 window", F16, [2, 2], nhwc([2, 12, 8, 8]), nhwc([2, 12, 4, 4]), vec4(2, 2)),
        case("2x3 window", F32, [2, 3], nhwc([2, 4, 8, 9]), nhwc([2, 4, 7, 7]), vec4(2, 3)),
        case("5x5 window from the uniform", F32, [5, 5], nhwc([1, 4, 9, 9]), nhwc([1, 4, 5, 5]), vec4(0, 0)),
        case("3x7 window: one side written out", F32, [3, 7], nhwc([1, 4, 9, 9]), nhwc([1, 4, 7, 3]), vec4(3, 0)),
        case("3 channels", F32, k3, nhwc([2, 3, 7, 9]), nhwc(pooled([2, 3, 7, 9], k3, 2, 1)), SCALAR_CL),
        case("6 channels", F16, k3, nhwc([2, 6, 7, 9]), nhwc(pooled([2, 6, 7, 9], k3, 2, 1)), SCALAR_CL),
        case("input offset of 4", F32, k3, at(nhwc(small), 4), nhwc(small_out), vec4(3, 3)),
        case("input offset of 2", F32, k3, at(nhwc(small), 2), nhwc(small_out), SCALAR_CL),
        case("output offset of 6", F16, k3, nhwc(small), at(nhwc(small_out), 6), SCALAR_CL),
        case("input pixels 12 apart", F32, k3, nhwc_padded(small, 12), nhwc(small_out), vec4(3, 3)),
        case("input pixels 10 apart", F32, k3, nhwc_padded(small, 10), nhwc(small_out), SCALAR_CL),
        case("output pixels 10 apart", F32, k3, nhwc(small), nhwc_padded(small_out, 10), SCALAR_CL),
        case(
            "one image: its batch stride is never used",
            F32,
            k3,
            View { strides: [7, 1, 72, 8], ..nhwc([1, 8, 7, 9]) },
            nhwc(pooled([1, 8, 7, 9], k3, 2, 1)),
            vec4(3, 3),
        ),
        case("bf16 is not a vec4 dtype", BF16, k3, nhwc(small), nhwc(small_out), SCALAR_CL),
        case("one channel", F32, k3, nchw([2, 1, 7, 9]), nchw(pooled([2, 1, 7, 9], k3, 2, 1)), SCALAR_NCHW),
        case("an empty input (2x2 window, padding 1)", F32, [2, 2], nhwc([1, 4, 0, 0]), nhwc([1, 4, 1, 1]), SCALAR_CL),
        case(
            "a window past WINDOW_MAX",
            F32,
            [65, 65],
            nhwc([1, 4, 65, 65]),
            nhwc([1, 4, 1, 1]),
            Plan { route: Route::Window, channels_last: true },
        ),
        case(
            "a window past the chunk length",
            F32,
            [1, 2 * CHUNK_LEN + 1],
            nchw([1, 2, 1, 2 * CHUNK_LEN + 1]),
            nchw([1, 2, 1, 1]),
            Plan { route: Route::Chunks { chunks: 3 }, channels_last: false },
        ),
    ]
}

// The 65x65 window below is past WINDOW_MAX and within one chunk.
const _: () = assert!(65 * 65 > WINDOW_MAX && 65 * 65 <= CHUNK_LEN);

#[test]
fn pooling_views_take_their_kernel() {
    let mut wrong = Vec::new();
    for c in cases() {
        let got = plan(&Problem { dtype: c.dtype, window: c.window, input: c.input, out: c.out });
        if got != c.want {
            wrong.push(format!("{}: got {got:?}, want {:?}", c.name, c.want));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
