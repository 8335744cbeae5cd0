//! Rotary position embedding (shaders/rope.wgsl) over the last dim, with
//! positions taken along a sequence dim, interleaved or half-split pairs,
//! optionally in place.

use super::grid::grid_1d;
use super::spec::uniform::uniform;
use super::spec::{self, check_output, pack_i32, pack_u32, view_arg, Family, Launch, OverrideSlot, Sharing, TypeSlot};
use super::tensor::{coalesce, expect_shape, same_device, DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::stream::StreamShared;
use std::cell::RefCell;

/// Most rotated elements per row (the angle table's size).
pub(crate) const MAX_ROTARY_DIMS: usize = 512;
const WG: f64 = 256.0;

pub static FAMILY: Family = Family {
    file: "rope.wgsl",
    source: include_str!("../../shaders/rope.wgsl"),
    entries: &["rope", "rope_inplace", "rope_quads", "rope_quads_inplace"],
    types: &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }],
    overrides: &[OverrideSlot { name: "WG", values: &[WG] }, OverrideSlot { name: "INTERLEAVED", values: &[0.0, 1.0] }],
    uniform: <RopeParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of rope.wgsl.
    pub struct RopeParams = "Params" {
        pub n: u32,
        pub row: u32,
        pub units: u32,
        pub pairs: u32,
        pub rank: u32,
        pub pos_offset: u32,
        pub x_offset: u32,
        pub y_offset: u32,
        pub x_inner: i32,
        pub y_inner: i32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub shape: [[u32; 4]; 2],
        pub x_strides: [[i32; 4]; 2],
        pub y_strides: [[i32; 4]; 2],
        pub pos_strides: [[u32; 4]; 2],
        pub turns: [[u32; 4]; MAX_ROTARY_DIMS / 4],
    }
}

/// Which elements of the last dim rope rotates together. Values are fixed.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeLayout {
    /// Pairs (x[2i], x[2i+1]) (GPT-J, llama.cpp's default, Meta's Llama
    /// reference code).
    Interleaved = 0,
    /// Pairs (x[i], x[i + r/2]) with r the rotated dims ("rotate_half":
    /// GPT-NeoX, Hugging Face Llama).
    HalfSplit = 1,
}

impl RopeLayout {
    pub fn from_u32(v: u32) -> Result<Self> {
        match v {
            0 => Ok(RopeLayout::Interleaved),
            1 => Ok(RopeLayout::HalfSplit),
            _ => bail!(InvalidArgument, "rope: unknown layout {v}"),
        }
    }
}

/// rope's settings (see `wgc_op_rope`).
#[derive(Clone, Copy, Debug)]
pub struct Rope {
    pub layout: RopeLayout,
    pub seq_axis: i32,
    /// 0: the whole last dim.
    pub rotary_dims: u32,
    pub base: f32,
    pub position_offset: u32,
}

type Table = [[u32; 4]; MAX_ROTARY_DIMS / 4];

thread_local! {
    /// The last angle table built on this thread, by (base bits, rotated dims):
    /// a model calls rope with the same settings in every layer.
    static LAST_TABLE: RefCell<Option<(u32, usize, Box<Table>)>> = const { RefCell::new(None) };
}

/// theta_i / (2 pi) = base^(-2i/r) / (2 pi) for each pair, as 64-bit binary
/// fractions of a turn (lo, hi words): computed in f64, so positions up to
/// 2^32 give angles within about 1e-6 rad of exact.
fn turn_table(base: f32, dims: usize) -> Table {
    LAST_TABLE.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((b, d, t)) = last.as_ref() {
            if *b == base.to_bits() && *d == dims {
                return **t;
            }
        }
        let mut t: Table = [[0; 4]; MAX_ROTARY_DIMS / 4];
        for i in 0..dims / 2 {
            let theta = (base as f64).powf(-((2 * i) as f64) / dims as f64);
            let turns = theta / std::f64::consts::TAU;
            // fract(turns) * 2^64; theta may exceed 2 pi only for base < 1.
            let f = ((turns - turns.floor()) * 18_446_744_073_709_551_616.0) as u64;
            let w = &mut t[i / 2];
            w[2 * (i % 2)] = f as u32;
            w[2 * (i % 2) + 1] = (f >> 32) as u32;
        }
        *last = Some((base.to_bits(), dims, Box::new(t)));
        t
    })
}

pub fn rope(stream: &StreamShared, x: &Tensor, cfg: &Rope, out: &Tensor) -> Result<()> {
    let what = "rope";
    let dev = &stream.device;
    dev.check_alive()?;
    same_device(dev, &[x, out])?;
    if !x.dtype.is_float() {
        bail!(Unsupported, "{what}: {} tensors are not supported (f32 and f16)", x.dtype.wgsl());
    }
    if out.dtype != x.dtype {
        bail!(DtypeMismatch, "{what}: out is {}, in is {}", out.dtype.wgsl(), x.dtype.wgsl());
    }
    x.dtype.check_device(dev)?;
    expect_shape(out, &x.shape, "out")?;
    let rank = x.rank();
    if rank < 2 {
        bail!(
            InvalidArgument,
            "{what}: in must have rank 2 or more (positions along one dim, features along the last)"
        );
    }
    let seq = if cfg.seq_axis < 0 { cfg.seq_axis as i64 + rank as i64 } else { cfg.seq_axis as i64 };
    if seq < 0 || seq >= rank as i64 - 1 {
        bail!(OutOfRange, "{what}: seq_axis {} must name a dim other than the last (rank {rank})", cfg.seq_axis);
    }
    let seq = seq as usize;
    let d = x.shape[rank - 1];
    let r = if cfg.rotary_dims == 0 { d } else { cfg.rotary_dims as usize };
    if r % 2 != 0 || r > d || r > MAX_ROTARY_DIMS {
        bail!(
            InvalidArgument,
            "{what}: {r} rotated dims: they must be even, at most the last dim ({d}) and at most {MAX_ROTARY_DIMS}"
        );
    }
    if !(cfg.base.is_finite() && cfg.base > 0.0) {
        bail!(InvalidArgument, "{what}: base must be finite and positive, not {}", cfg.base);
    }
    if cfg.position_offset as u64 + x.shape[seq] as u64 > 1 << 32 {
        bail!(OutOfRange, "{what}: positions past 2^32 (offset {} + {} positions)", cfg.position_offset, x.shape[seq]);
    }
    let in_place = check_output(what, out, &[("in", x)], Sharing::InPlace)? != 0;
    if x.numel() == 0 {
        return Ok(());
    }

    // Rows: every dim but the last; the position counts along `seq`.
    let outer = &x.shape[..rank - 1];
    let pos: Vec<isize> = (0..rank - 1).map(|k| (k == seq) as isize).collect();
    let (mut shape, strides) =
        coalesce(outer, &[x.strides[..rank - 1].to_vec(), out.strides[..rank - 1].to_vec(), pos]);
    let (mut xs, mut ys, mut ps) = (strides[0].clone(), strides[1].clone(), strides[2].clone());
    if shape.is_empty() {
        (shape, xs, ys, ps) = (vec![1], vec![0], vec![0], vec![0]);
    }
    let rows: usize = outer.iter().product();
    let pairs = r / 2;
    // In place, the tail already holds its values.
    let units = if in_place { pairs } else { pairs + (d - r) };
    // Quads: half-split pairs, unit-stride rows, everything a multiple of 4
    // elements, no tail to copy.
    let quads = cfg.layout == RopeLayout::HalfSplit
        && x.strides[rank - 1] == 1
        && out.strides[rank - 1] == 1
        && pairs % 4 == 0
        && units == pairs
        && x.bound_offset().is_multiple_of(4)
        && out.bound_offset().is_multiple_of(4)
        && xs.iter().chain(&ys).all(|s| s % 4 == 0);
    let units = if quads { pairs / 4 } else { units };
    let n = rows * units;
    if n == 0 {
        return Ok(());
    }
    let (xa, x_off) = view_arg("x", x);
    let (ya, y_off) = view_arg("y", out);
    let (groups, row) = grid_1d(n as u64, WG as u32, dev.limits.max_compute_workgroups_per_dimension);
    let params = RopeParams {
        n: n as u32,
        row,
        units: units as u32,
        pairs: pairs as u32,
        rank: shape.len() as u32,
        pos_offset: cfg.position_offset,
        x_offset: x_off,
        y_offset: y_off,
        x_inner: x.strides[rank - 1] as i32,
        y_inner: out.strides[rank - 1] as i32,
        _pad0: 0,
        _pad1: 0,
        shape: pack_u32(&shape, 1),
        x_strides: pack_i32(&xs),
        y_strides: pack_i32(&ys),
        pos_strides: pack_u32(&ps.iter().map(|&s| s as usize).collect::<Vec<_>>(), 0),
        turns: turn_table(cfg.base, r),
    };
    let interleaved = (cfg.layout == RopeLayout::Interleaved) as u32 as f64;
    // Positions stay below 2^32, as checked above.
    let last = (u32::MAX as u64 + 1 - x.shape[seq] as u64) as u32;
    let _replay = stream.replay_scalars(|| {
        vec![crate::ops::replay_scalars::count("position_offset", "pos_offset", cfg.position_offset, 0, last, |v| {
            v as u32
        })]
    });
    if quads && in_place {
        let variant = FAMILY.variant("rope_quads_inplace", &[x.dtype], &[WG, interleaved]);
        spec::record(stream, &Launch { variant, params, args: [spec::Arg { name: "y4", ..ya }], groups })
    } else if quads {
        let variant = FAMILY.variant("rope_quads", &[x.dtype], &[WG, interleaved]);
        spec::record(
            stream,
            &Launch { variant, params, args: [spec::Arg { name: "x4", ..xa }, spec::Arg { name: "y4", ..ya }], groups },
        )
    } else if in_place {
        let variant = FAMILY.variant("rope_inplace", &[x.dtype], &[WG, interleaved]);
        spec::record(stream, &Launch { variant, params, args: [ya], groups })
    } else {
        let variant = FAMILY.variant("rope", &[x.dtype], &[WG, interleaved]);
        spec::record(stream, &Launch { variant, params, args: [xa, ya], groups })
    }
}
