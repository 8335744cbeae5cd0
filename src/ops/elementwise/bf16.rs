//! bf16 conversions on the kernel spec (family `bf16.wgsl`): `convert`
//! copies a view into another of the same shape where either side is bf16,
//! converting (wgc_op_cast, copy, and the f32 scratch of `bf16_route`).
//! Dense views take the vec4 kernels for their 4-aligned bulk; a bf16
//! output whose rows are even and start at even elements takes whole words
//! (two elements of any input view per invocation); other views, and the
//! tail, take the per-element kernels, whose bf16 writes set their half of
//! a word with atomics (a neighbour in the same word may belong to another
//! invocation).

use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, pack_i32, pack_u32, view_arg, Arg, Family, Launch, TypeSlot};
use crate::ops::tensor::{coalesce, DType, Tensor};
use crate::runtime::stream::StreamShared;

const WG: u32 = 256;

pub static FAMILY: Family = Family {
    file: "bf16.wgsl",
    source: include_str!("../../../shaders/bf16.wgsl"),
    entries: &[
        "to_bf16",
        "from_bf16",
        "copy_bf16",
        "to_bf16_vec4",
        "from_bf16_vec4",
        "to_bf16_pairs",
        "copy_bf16_pairs",
    ],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16, DType::I32, DType::U32] }],
    overrides: &[],
    uniform: <Bf16Params as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of bf16.wgsl.
    pub struct Bf16Params = "Params" {
        pub n: u32,
        pub row: u32,
        pub rank: u32,
        pub _pad0: u32,
        pub x_off: u32,
        pub y_off: u32,
        pub _pad1: [u32; 2],
        pub shape: [[u32; 4]; 2],
        pub x_strides: [[i32; 4]; 2],
        pub y_strides: [[i32; 4]; 2],
    }
}

/// Which way a conversion goes: its entry points and the dtype of its `T` slot.
struct Direction {
    general: &'static str,
    vec4: Option<&'static str>,
    /// Whole words of a bf16 output from two elements of any x.
    pairs: Option<&'static str>,
    t: DType,
    x_names: [&'static str; 2],
    y_names: [&'static str; 2],
}

fn direction(x: DType, y: DType) -> Direction {
    match (x, y) {
        (DType::BF16, DType::BF16) => Direction {
            general: "copy_bf16",
            vec4: None,
            pairs: Some("copy_bf16_pairs"),
            t: DType::U32,
            x_names: ["xw", "x2"],
            y_names: ["yw", "y2"],
        },
        (DType::BF16, t) => Direction {
            general: "from_bf16",
            vec4: Some("from_bf16_vec4"),
            pairs: None,
            t,
            x_names: ["xw", "x2"],
            y_names: ["y", "y4"],
        },
        (t, _) => Direction {
            general: "to_bf16",
            vec4: Some("to_bf16_vec4"),
            pairs: Some("to_bf16_pairs"),
            t,
            x_names: ["x", "x4"],
            y_names: ["yw", "y2"],
        },
    }
}

/// Record `y = x` converted, for views of the same shape where x or y is
/// bf16 (bf16 to bf16 copies the bits). The caller has validated devices,
/// dtypes, shapes and the output (`spec::check_output`).
pub fn convert(stream: &StreamShared, x: &Tensor, y: &Tensor) -> Result<()> {
    debug_assert!(x.shape == y.shape && (x.dtype == DType::BF16 || y.dtype == DType::BF16));
    let n = x.numel();
    if n == 0 {
        return Ok(());
    }
    let dir = direction(x.dtype, y.dtype);
    let (xa, x_off) = view_arg(dir.x_names[0], x);
    let (ya, y_off) = view_arg(dir.y_names[0], y);
    let (x_off, y_off) = (x_off as usize, y_off as usize);
    let (shape, strides) = coalesce(&x.shape, &[x.strides.clone(), y.strides.clone()]);
    let dense = strides.iter().all(|s| s.iter().all(|&v| v == 1));
    let launch = |entry: &'static str, xa: Arg, ya: Arg, shape: &[usize], strides: &[Vec<isize>], offs: [usize; 2]| {
        // Pairs: one invocation per two elements.
        let count: usize = shape.iter().product::<usize>() / if entry.ends_with("_pairs") { 2 } else { 1 };
        let (groups, row) = grid_1d(count as u64, WG, stream.device.limits.max_compute_workgroups_per_dimension);
        let params = Bf16Params {
            n: count as u32,
            row,
            rank: shape.len() as u32,
            _pad0: 0,
            x_off: offs[0] as u32,
            y_off: offs[1] as u32,
            _pad1: [0; 2],
            shape: pack_u32(shape, 1),
            x_strides: pack_i32(&strides[0]),
            y_strides: pack_i32(&strides[1]),
        };
        let variant = FAMILY.variant(entry, &[dir.t], &[]);
        spec::record(stream, &Launch { variant, params, args: [xa, ya], groups })
    };
    match dir.vec4 {
        Some(entry) if dense && n >= 4 && x_off.is_multiple_of(4) && y_off.is_multiple_of(4) => {
            let n4 = n / 4;
            let (xv, yv) = (Arg { name: dir.x_names[1], ..xa }, Arg { name: dir.y_names[1], ..ya });
            launch(entry, xv, yv, &[n4], &[vec![1], vec![1]], [x_off / 4, y_off / 4])?;
            let done = n4 * 4;
            if done < n {
                launch(dir.general, xa, ya, &[n - done], &[vec![1], vec![1]], [x_off + done, y_off + done])?;
            }
            Ok(())
        }
        _ => match dir.pairs {
            Some(entry) if pairs_fit(&shape, &strides[1], y_off) => {
                launch(entry, xa, Arg { name: "yp", ..ya }, &shape, &strides, [x_off, y_off])
            }
            _ => launch(dir.general, xa, ya, &shape, &strides, [x_off, y_off]),
        },
    }
}

/// Whether elements 2i and 2i + 1 of a bf16 output (coalesced `shape`, its
/// `strides`, element offset `offset`) always share a word of their own: its
/// last dim contiguous and even, every row starting at an even element.
fn pairs_fit(shape: &[usize], strides: &[isize], offset: usize) -> bool {
    let Some(last) = shape.len().checked_sub(1) else { return false };
    shape[last].is_multiple_of(2)
        && strides[last] == 1
        && offset.is_multiple_of(2)
        && strides[..last].iter().all(|s| s % 2 == 0)
}
