//! Which kernel a windowed 2-D pooling takes: a pure function of the
//! dtype, the window and the two views' shapes, strides and offsets, so the
//! choice is unit-tested without a GPU (plan_tests.rs).

use crate::ops::split::CHUNK_LEN;
use crate::ops::tensor::DType;

/// Windows of more elements than this take a workgroup each instead of one
/// invocation (whose loop would be long: see split.rs).
pub(crate) const WINDOW_MAX: usize = 4096;

/// Window sizes the vec4 kernels have written out (the `KH` and `KW`
/// overrides; 0 reads the size from the uniform).
pub(crate) const SPECIALIZED_SIZES: &[f64] = &[0.0, 2.0, 3.0];

/// Channels per invocation of the vec4 kernels.
pub(crate) const LANES: usize = 4;

/// A rank-4 (N, C, H, W) view as a kernel addresses it: strides in
/// elements, the offset counted from where the view is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    pub shape: [usize; 4],
    pub strides: [isize; 4],
    pub offset: u32,
}

impl View {
    /// Strides with those of dims of extent 1 as 0: such a dim's index is
    /// always 0, so its stride never reaches an address.
    pub fn used_strides(&self) -> [isize; 4] {
        std::array::from_fn(|d| if self.shape[d] == 1 { 0 } else { self.strides[d] })
    }
}

/// A windowed pooling: input (N, C, H, W) into out (N, C, OH, OW).
#[derive(Clone, Copy, Debug)]
pub struct Problem {
    pub dtype: DType,
    pub window: [usize; 2],
    pub input: View,
    pub out: View,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// One invocation per output element.
    Scalar,
    /// One invocation per `LANES` neighbouring channels of an output pixel,
    /// loading and storing them as one vec4; `window` the written-out
    /// (KH, KW), 0 where the uniform gives it.
    Vec4 { window: [u32; 2] },
    /// A workgroup per output element.
    Window,
    /// A workgroup per (chunk of the window, output element), then a pass
    /// folding the chunks.
    Chunks { chunks: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub route: Route,
    /// Invocations (workgroups) take the outputs channel fastest: input and
    /// output have their channels at unit stride, so neighbours read
    /// neighbouring memory.
    pub channels_last: bool,
}

pub fn plan(q: &Problem) -> Plan {
    let c = q.input.shape[1];
    let channels_last = c > 1 && q.input.strides[1] == 1 && q.out.strides[1] == 1;
    let window_len = q.window[0] * q.window[1];
    let route = if window_len > WINDOW_MAX {
        match window_len.div_ceil(CHUNK_LEN) {
            1 => Route::Window,
            chunks => Route::Chunks { chunks },
        }
    } else if channels_last && vec4_fits(q) {
        Route::Vec4 { window: q.window.map(specialized) }
    } else {
        Route::Scalar
    };
    Plan { route, channels_last }
}

/// Whether the vec4 kernels can address both views in whole vec4s: the
/// channels at unit stride and a multiple of LANES, every other stride
/// and the offsets multiples of LANES. A non-empty input, so that every
/// window holds an input element (padding is at most half the window).
fn vec4_fits(q: &Problem) -> bool {
    let lanes = LANES as isize;
    let whole = |v: &View| {
        let s = v.used_strides();
        v.strides[1] == 1 && [s[0], s[2], s[3]].iter().all(|s| s % lanes == 0) && v.offset.is_multiple_of(LANES as u32)
    };
    let [_, c, h, w] = q.input.shape;
    matches!(q.dtype, DType::F32 | DType::F16)
        && c.is_multiple_of(LANES)
        && h > 0
        && w > 0
        && whole(&q.input)
        && whole(&q.out)
}

/// The override value for a window side: written out where the kernels
/// have it, else 0 (from the uniform).
fn specialized(k: usize) -> u32 {
    if SPECIALIZED_SIZES.contains(&(k as f64)) {
        k as u32
    } else {
        0
    }
}
