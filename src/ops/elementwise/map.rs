//! The engine behind every elementwise operator: `y = OP(x0, x1, x2)` over
//! up to three broadcast operands, each a tensor or a scalar, on the kernel
//! spec (family `elementwise.wgsl`). Validates, coalesces dims, and plans
//! one of the file's kernels: vec4 units where layouts allow (dense tensors
//! become rank 1), per element otherwise, or tiled through workgroup memory
//! for transposes.
//!
//! An input that is out's very view is read through out's binding (in
//! place); one that shares out's buffer without overlapping it is copied
//! first (a buffer cannot be bound read-only and writable in one launch).

use super::bf16_route;
pub use super::common::{Code, Map, Operand, Scalar};
use super::common::{SPECIALS, SPECIAL_BASE, UNARY_BASE};
use super::op::{WGC_NUM_BINARY_OPS, WGC_NUM_UNARY_OPS};
use crate::error::Result;
use crate::ops::grid::grid_1d;
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, check_output, view_arg, Arg, Family, Launch, OverrideSlot, Sharing, TypeSlot, Variant};
use crate::ops::split::scratch;
use crate::ops::tensor::{
    broadcast_shapes, broadcast_strides, coalesce, contiguous_strides, expect_shape, in_memory_order, same_device,
    DType, Tensor, MAX_RANK,
};
use crate::runtime::buffer::Buffer;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;
use std::sync::Arc;

const WG: u32 = 256;
const ALL_DTYPES: &[DType] = &[DType::F32, DType::F16, DType::I32, DType::U32];

const N_CODES: usize = (WGC_NUM_BINARY_OPS + WGC_NUM_UNARY_OPS + SPECIALS) as usize;

/// Every code the library may set: derived from the op counts, so a new
/// op is declared (and compiled offline) without another list to keep.
const fn all_codes() -> [f64; N_CODES] {
    let mut out = [0.0; N_CODES];
    let mut i = 0;
    while i < N_CODES {
        let i32 = i as u32;
        out[i] = if i32 < WGC_NUM_BINARY_OPS {
            i32
        } else if i32 < WGC_NUM_BINARY_OPS + WGC_NUM_UNARY_OPS {
            UNARY_BASE + i32 - WGC_NUM_BINARY_OPS
        } else {
            SPECIAL_BASE + i32 - WGC_NUM_BINARY_OPS - WGC_NUM_UNARY_OPS
        } as f64;
        i += 1;
    }
    out
}
static CODES: [f64; N_CODES] = all_codes();

/// The entry points of elementwise.wgsl, after `$extra` ones of a source
/// joined to it.
macro_rules! map_entries {
    ($($extra:literal),*) => {
        &[
            $($extra,)*
            "map0", "map1", "map2", "map3", "where3",
            "map0_vec4", "map1_vec4", "map2_vec4", "map3_vec4", "where3_vec4",
            "tiled", "tiled2_x0", "tiled2_x1",
        ]
    };
}

pub static FAMILY: Family = Family {
    file: "elementwise.wgsl",
    source: concat!(
        include_str!("../../../shaders/elementwise_scalar.wgsl"),
        include_str!("../../../shaders/elementwise.wgsl")
    ),
    entries: map_entries!(),
    types: &[TypeSlot { alias: "A", dtypes: ALL_DTYPES }, TypeSlot { alias: "O", dtypes: ALL_DTYPES }],
    overrides: OVERRIDES,
    uniform: <MapParams as spec::Uniform>::layout,
};

const OVERRIDES: &[OverrideSlot] = &[
    OverrideSlot { name: "OP", values: &CODES },
    OverrideSlot { name: "ITEMS", values: &[1.0, 4.0] },
    // Compiled value by value offline (spec::SAMPLED_OVERRIDES).
    OverrideSlot { name: "RANK", values: &[1.0, 2.0, 3.0, 4.0, 0.0] },
    OverrideSlot { name: "ROUTED", values: &[0.0, 1.0] },
];

/// The vec4 kernels for bf16 operands and output (shaders/elementwise_bf16.wgsl):
/// the f32 map (A and O f32) over bf16 read and written as whole words.
pub static FAMILY_BF16: Family = Family {
    file: "elementwise.wgsl+bf16",
    source: concat!(
        include_str!("../../../shaders/elementwise_scalar.wgsl"),
        include_str!("../../../shaders/elementwise.wgsl"),
        include_str!("../../../shaders/elementwise_bf16.wgsl")
    ),
    // The library runs the `_bf16` entries; the others come with the
    // joined file (every entry a source has is declared and compiled offline).
    entries: map_entries!("map0_bf16", "map1_bf16", "map2_bf16", "map3_bf16", "where3_bf16"),
    types: &[TypeSlot { alias: "A", dtypes: &[DType::F32] }, TypeSlot { alias: "O", dtypes: &[DType::F32] }],
    overrides: OVERRIDES,
    uniform: <MapParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of elementwise.wgsl.
    pub struct MapParams = "Params" {
        pub n: u32,
        pub row: u32,
        pub rank: u32,
        pub base: u32,
        pub src: [u32; 4],
        pub su: [u32; 2],
        pub sf: [f32; 2],
        pub nan: u32,
        pub inf: u32,
        pub _pad0: [u32; 2],
        pub off: [u32; 4],
        pub shape: [[u32; 4]; 2],
        pub strides: [[i32; 4]; 8],
    }
}

/// Where an operand comes from (`Params::src`).
const SRC_OWN: u32 = 0;
const SRC_OUT: u32 = 1;
const SRC_SCALAR: u32 = 2;

/// Items each invocation handles (see the shader) for `n` items: several
/// keep more loads in flight on GPUs for large tensors; smaller ones need
/// every invocation they can get to fill the GPU; CPU drivers gain nothing.
fn items_per_invocation(dev: &Device, n: usize) -> usize {
    if dev.adapter.info.device_type == wgpu::DeviceType::Cpu || n < (1 << 22) {
        1
    } else {
        4
    }
}

const NAMES: [&str; 4] = ["x0", "x1", "x2", "y"];
const NAMES_VEC4: [&str; 4] = ["x0v", "x1v", "x2v", "yv"];
const NAMES_BF16: [&str; 4] = ["x0b", "x1b", "x2b", "yb"];

/// Record the operation. Empty outputs validate and launch nothing.
pub fn run(stream: &StreamShared, m: &Map) -> Result<()> {
    let what = "elementwise";
    let dev = &stream.device;
    dev.check_alive()?;
    if let Some(result) = run_dense(stream, m) {
        return result;
    }
    let tensors: Vec<&Tensor> =
        m.operands.iter().filter_map(|o| if let Operand::Tensor(t) = o { Some(*t) } else { None }).collect();
    let mut all = tensors.clone();
    all.push(m.out);
    same_device(dev, &all)?;
    for t in &all {
        t.dtype.check_device_bf16(dev)?;
    }
    let shapes: Vec<&[usize]> = tensors.iter().map(|t| t.shape.as_slice()).collect();
    let shape = if shapes.is_empty() { m.out.shape.clone() } else { broadcast_shapes(&shapes)? };
    expect_shape(m.out, &shape, "the output")?;
    let named: Vec<(&str, &Tensor)> = tensors.iter().enumerate().map(|(k, t)| (INPUT_NAMES[k], *t)).collect();
    let in_place = check_output(what, m.out, &named, Sharing::InPlaceOrApart)?;
    if m.out.numel() == 0 {
        return Ok(());
    }
    // bf16 in and out runs the bf16 kernels where the layout has vec4
    // units; casts, copies, other dtypes and other layouts go through f32
    // (bf16_route).
    let bf16 = all.iter().any(|t| t.dtype == DType::BF16) || m.a == DType::BF16;
    let copies_tensor = m.code == Code::COPY && !tensors.is_empty();
    if bf16 && (m.a != DType::BF16 || m.out.dtype != DType::BF16 || copies_tensor) {
        return bf16_route::map(stream, m, run);
    }
    // Inputs sharing out's buffer apart from it (and a mask in place) are
    // read from a copy.
    let mut copies: Vec<(usize, Arc<Buffer>)> = Vec::new();
    for (k, t) in tensors.iter().enumerate() {
        let mask = m.code == Code::WHERE && k == 0;
        if t.same_buffer(m.out) && t.numel() > 0 && (in_place & (1 << k) == 0 || mask) {
            copies.push((k, scratch(dev, (t.numel() * t.dtype.size()) as u64)?));
        }
    }
    let mut views: Vec<Tensor> = tensors.iter().map(|t| (*t).clone()).collect();
    for (k, buf) in &copies {
        let t = tensors[*k];
        let copy = Tensor {
            buffer: buf,
            dtype: t.dtype,
            shape: t.shape.clone(),
            strides: contiguous_strides(&t.shape),
            offset: 0,
        };
        let operands = [Operand::Tensor(t)];
        run(stream, &Map { code: Code::COPY, a: t.dtype, operands: &operands, out: &copy, scalars: [None, None] })?;
        views[*k] = copy;
    }
    // Per slot: where it comes from, and its view if it is a tensor.
    let mut src = [SRC_SCALAR; 4];
    let mut slot_views: [Option<&Tensor>; 3] = [None; 3];
    let mut next = 0;
    for (k, o) in m.operands.iter().enumerate() {
        match o {
            Operand::Tensor(_) => {
                let routed = in_place & (1 << next) != 0 && !copies.iter().any(|(c, _)| *c == next);
                src[k] = if routed { SRC_OUT } else { SRC_OWN };
                slot_views[k] = Some(&views[next]);
                next += 1;
            }
            Operand::Scalar(s) => src[k] = SRC_SCALAR + s,
        }
    }
    let plan = Plan { m, src, slot_views, bf16 };
    let n = m.out.numel();
    let mut strides: Vec<Vec<isize>> =
        (0..3).map(|k| slot_views[k].map_or_else(|| vec![0; shape.len()], |t| broadcast_strides(t, &shape))).collect();
    strides.push(m.out.strides.clone());
    let (shape, strides) = out_memory_order(m, &shape, strides);
    let (cshape, cstrides) = coalesce(&shape, &strides);
    let dense = cshape.len() <= 1 && (0..4).all(|k| !plan.reads(k) || cstrides[k].iter().all(|&x| x == 1));
    let offsets = plan.offsets();
    if !dense {
        if let Some(tiled) = transpose_plan(stream, &plan, &cshape, &cstrides).filter(|_| !bf16) {
            return launch_tiled(stream, &plan, tiled, &cstrides, &offsets);
        }
        if let Some((vshape, vstrides, voffsets)) = vec4_view(&plan, &cshape, &cstrides, &offsets) {
            return launch(stream, &plan, true, 0, &vshape, &vstrides, &voffsets);
        }
        if bf16 {
            return bf16_route::map(stream, m, run);
        }
        return launch(stream, &plan, false, 0, &cshape, &cstrides, &offsets);
    }
    // Dense: vec4 units for the 4-aligned bulk, then the tail element-wise.
    let aligned = (0..4).all(|k| !plan.reads(k) || offsets[k].is_multiple_of(4));
    let n4 = if n >= 4 && aligned { n / 4 } else { 0 };
    // arange's values depend on the element's index, which a tail routed
    // on its own would restart from 0: such a map goes whole through f32.
    if bf16 && (n4 == 0 || (n4 * 4 < n && m.code == Code::ARANGE)) {
        return bf16_route::map(stream, m, run);
    }
    let ones = [[1isize]; 4];
    if n4 > 0 {
        let offs = offsets.map(|o| o / 4);
        launch(stream, &plan, true, 0, &[n4], &ones, &offs)?;
    }
    let done = n4 * 4;
    if done < n && bf16 {
        return dense_tail(stream, m, done);
    }
    if done < n {
        let offs = offsets.map(|o| o + done);
        launch(stream, &plan, false, done, &[n - done], &ones, &offs)?;
    }
    Ok(())
}

const INPUT_NAMES: [&str; 3] = ["input 0", "input 1", "input 2"];

/// The dims in the order of out's memory (see `in_memory_order`), except
/// for arange, whose values count out's elements in logical order.
fn out_memory_order(m: &Map, shape: &[usize], strides: Vec<Vec<isize>>) -> (Vec<usize>, Vec<Vec<isize>>) {
    if m.code == Code::ARANGE {
        return (shape.to_vec(), strides);
    }
    in_memory_order(shape, strides, 3)
}

/// The most common map, recorded without allocating: every tensor operand
/// a contiguous view of out's shape in another buffer than out's, out
/// contiguous, no bf16, not `where`. `None` where it does not apply (the
/// general path of `run` takes those, with the same result).
fn run_dense(stream: &StreamShared, m: &Map) -> Option<Result<()>> {
    let out = m.out;
    if m.code == Code::WHERE || m.a == DType::BF16 || out.dtype == DType::BF16 || !out.is_contiguous() {
        return None;
    }
    if m.operands.len() > 3 {
        return None;
    }
    let mut src = [SRC_SCALAR; 4];
    let mut slot_views: [Option<&Tensor>; 3] = [None; 3];
    let mut named: [(&str, &Tensor); 3] = [("", out); 3];
    let mut count = 0;
    for (k, o) in m.operands.iter().enumerate() {
        match o {
            Operand::Tensor(t) => {
                if t.dtype == DType::BF16 || t.shape != out.shape || !t.is_contiguous() || t.same_buffer(out) {
                    return None;
                }
                src[k] = SRC_OWN;
                slot_views[k] = Some(*t);
                named[count] = (INPUT_NAMES[count], *t);
                count += 1;
            }
            Operand::Scalar(s) => src[k] = SRC_SCALAR + s,
        }
    }
    let record = || -> Result<()> {
        let dev = &stream.device;
        for (_, t) in &named[..count] {
            same_device(dev, &[*t])?;
            t.dtype.check_device_bf16(dev)?;
        }
        same_device(dev, &[out])?;
        // As `run` checks: f16 needs the adapter's shader-f16.
        out.dtype.check_device_bf16(dev)?;
        check_output("elementwise", out, &named[..count], Sharing::InPlaceOrApart)?;
        let n = out.numel();
        if n == 0 {
            return Ok(());
        }
        let plan = Plan { m, src, slot_views, bf16: false };
        let offsets = plan.offsets();
        let aligned = (0..4).all(|k| !plan.reads(k) || offsets[k].is_multiple_of(4));
        let n4 = if n >= 4 && aligned { n / 4 } else { 0 };
        let ones = [[1isize]; 4];
        if n4 > 0 {
            launch(stream, &plan, true, 0, &[n4], &ones, &offsets.map(|o| o / 4))?;
        }
        let done = n4 * 4;
        if done < n {
            launch(stream, &plan, false, done, &[n - done], &ones, &offsets.map(|o| o + done))?;
        }
        Ok(())
    };
    Some(record())
}

/// The elements from `done` on of a dense map (every tensor operand laid
/// out as the output), through bf16_route: the bf16 kernels have no
/// per-element entry points. Not for arange (its values depend on the
/// element's index, which the routed tail counts from 0).
fn dense_tail<'a>(stream: &StreamShared, m: &Map<'_, 'a>, done: usize) -> Result<()> {
    let tail = |t: &Tensor<'a>| -> Tensor<'a> {
        Tensor { shape: vec![t.numel() - done], strides: vec![1], offset: t.offset + done, ..t.clone() }
    };
    let views: Vec<Option<Tensor>> =
        m.operands.iter().map(|o| if let Operand::Tensor(t) = o { Some(tail(t)) } else { None }).collect();
    let operands: Vec<Operand> =
        m.operands.iter().zip(&views).map(|(o, v)| v.as_ref().map_or(*o, Operand::Tensor)).collect();
    let out = tail(m.out);
    bf16_route::map(stream, &Map { operands: &operands, out: &out, ..*m }, run)
}

/// A map after validation: each slot's source and view.
struct Plan<'p, 't, 'a> {
    m: &'p Map<'t, 'a>,
    src: [u32; 4],
    slot_views: [Option<&'p Tensor<'p>>; 3],
    /// bf16 operands and output: the vec4 entries of `FAMILY_BF16`.
    bf16: bool,
}

impl Plan<'_, '_, '_> {
    /// True if slot `k` (3: out) is read from or written to its own binding.
    fn reads(&self, k: usize) -> bool {
        k == 3 || self.src[k] == SRC_OWN
    }

    /// The view bound at slot `k` (3: out).
    fn view(&self, k: usize) -> &Tensor<'_> {
        if k == 3 {
            self.m.out
        } else {
            self.slot_views[k].expect("a bound slot has a view")
        }
    }

    /// Each slot's element offset from where its view is bound.
    fn offsets(&self) -> [usize; 4] {
        std::array::from_fn(|k| if self.reads(k) { self.view(k).bound_offset() as usize } else { 0 })
    }

    fn is_where(&self) -> bool {
        self.m.code == Code::WHERE
    }

    /// Slots the entry point binds: up to the last one read from its own
    /// binding (all three for where).
    fn bound_slots(&self) -> usize {
        if self.is_where() {
            return 3;
        }
        (0..3).rev().find(|&k| self.src[k] == SRC_OWN).map_or(0, |k| k + 1)
    }

    fn entry(&self, vec: bool) -> &'static str {
        const ENTRIES: [&str; 5] = ["map0", "map1", "map2", "map3", "where3"];
        const ENTRIES_VEC4: [&str; 5] = ["map0_vec4", "map1_vec4", "map2_vec4", "map3_vec4", "where3_vec4"];
        const ENTRIES_BF16: [&str; 5] = ["map0_bf16", "map1_bf16", "map2_bf16", "map3_bf16", "where3_bf16"];
        let i = if self.is_where() { 4 } else { self.bound_slots() };
        if self.bf16 {
            debug_assert!(vec, "bf16 has vec4 kernels only");
            ENTRIES_BF16[i]
        } else if vec {
            ENTRIES_VEC4[i]
        } else {
            ENTRIES[i]
        }
    }

    /// The kernel for `entry`, `items` per invocation, over `rank` dims.
    fn variant(&self, entry: &'static str, items: usize, rank: usize) -> Variant {
        // Ranks 0 and 1 decode alike; above 4, the kernel loops over p.rank.
        let rank_code = match rank {
            0 | 1 => 1,
            2..=4 => rank,
            _ => 0,
        };
        let code = self.m.code.0 as f64;
        let overrides = [code, items as f64, rank_code as f64, self.routed()];
        if self.bf16 {
            return FAMILY_BF16.variant(entry, &[DType::F32, DType::F32], &overrides);
        }
        FAMILY.variant(entry, &[self.m.a, self.m.out.dtype], &overrides)
    }

    /// 1.0 if an operand the entry reads through its bindings' slots comes
    /// from y or a scalar instead (the `ROUTED` override).
    fn routed(&self) -> f64 {
        let first = if self.is_where() { 1 } else { 0 };
        let routed = (first..self.bound_slots()).any(|k| self.src[k] != SRC_OWN);
        if routed {
            1.0
        } else {
            0.0
        }
    }

    fn params(
        &self,
        n: usize,
        row: u32,
        base: usize,
        shape: &[usize],
        per_dim: &[[isize; 4]],
        offsets: &[usize; 4],
    ) -> MapParams {
        debug_assert_eq!(per_dim.len(), shape.len());
        let s = |k: usize| self.m.scalars[k].unwrap_or(Scalar { bits: 0, value: 0.0 });
        let mut strides = [[0i32; 4]; 8];
        for (d, st) in per_dim.iter().enumerate() {
            strides[d] = st.map(|x| x as i32);
        }
        MapParams {
            n: n as u32,
            row,
            rank: shape.len() as u32,
            base: base as u32,
            src: self.src,
            su: [s(0).bits, s(1).bits],
            sf: [s(0).value, s(1).value],
            nan: 0x7fc0_0000,
            inf: 0x7f80_0000,
            _pad0: [0; 2],
            off: offsets.map(|o| o as u32),
            shape: spec::pack_u32(shape, 1),
            strides,
        }
    }

    /// Record `variant` with the bindings its entry point uses: slots up
    /// to `bound_slots` (a routed one bound to another operand's buffer,
    /// unread) and out.
    fn record(
        &self,
        stream: &StreamShared,
        variant: Variant,
        params: MapParams,
        vec: bool,
        groups: [u32; 3],
    ) -> Result<()> {
        let names = if self.bf16 {
            NAMES_BF16
        } else if vec {
            NAMES_VEC4
        } else {
            NAMES
        };
        let slots = if variant.entry == "tiled" { 1 } else { self.bound_slots() };
        let (y, _) = view_arg(names[3], self.m.out);
        let own: Option<Arg> = (0..slots).find(|&k| self.src[k] == SRC_OWN).map(|k| view_arg(names[k], self.view(k)).0);
        let arg = |k: usize| -> Arg {
            let name = if self.is_where() && k == 0 {
                if vec {
                    "maskv"
                } else {
                    "mask"
                }
            } else {
                names[k]
            };
            if self.src[k] == SRC_OWN || (self.is_where() && k == 0) {
                Arg { name, ..view_arg(name, self.view(k)).0 }
            } else {
                Arg { name, ..own.expect("a bound slot before the last own one") }
            }
        };
        match slots {
            0 => spec::record(stream, &Launch { variant, params, args: [y], groups }),
            1 => spec::record(stream, &Launch { variant, params, args: [arg(0), y], groups }),
            2 => spec::record(stream, &Launch { variant, params, args: [arg(0), arg(1), y], groups }),
            _ => spec::record(stream, &Launch { variant, params, args: [arg(0), arg(1), arg(2), y], groups }),
        }
    }
}

/// Per dim: (x0, x1, x2, out) strides (the first `rank` entries; views
/// have at most `MAX_RANK` dims).
fn per_dim<S: AsRef<[isize]>>(rank: usize, strides: &[S]) -> [[isize; 4]; MAX_RANK] {
    let mut dims = [[0isize; 4]; MAX_RANK];
    for (d, dim) in dims.iter_mut().enumerate().take(rank) {
        *dim = std::array::from_fn(|k| strides[k].as_ref()[d]);
    }
    dims
}

fn launch<S: AsRef<[isize]>>(
    stream: &StreamShared,
    plan: &Plan,
    vec: bool,
    base: usize,
    shape: &[usize],
    strides: &[S],
    offsets: &[usize; 4],
) -> Result<()> {
    let dev = &stream.device;
    let n: usize = shape.iter().product();
    let items = items_per_invocation(dev, n);
    let (groups, row) = grid_1d(n.div_ceil(items) as u64, WG, dev.limits.max_compute_workgroups_per_dimension);
    let params = plan.params(n, row, base, shape, &per_dim(shape.len(), strides)[..shape.len()], offsets);
    let variant = plan.variant(plan.entry(vec), items, shape.len());
    plan.record(stream, variant, params, vec, groups)
}

/// A strided problem's (shape, per-slot strides, per-slot offsets).
type StridedView = (Vec<usize>, Vec<Vec<isize>>, [usize; 4]);

/// The same strided problem in vec4 units, when every slot read is dense
/// along the innermost dim (e.g. a bias added to rows) and everything else
/// is a multiple of 4 elements.
fn vec4_view(plan: &Plan, shape: &[usize], strides: &[Vec<isize>], offsets: &[usize; 4]) -> Option<StridedView> {
    let last = shape.len().checked_sub(1)?;
    let read = |k: usize| plan.reads(k) || plan.src[k] == SRC_OUT;
    let ok = shape[last].is_multiple_of(4)
        && (0..4).all(|k| !plan.reads(k) || offsets[k].is_multiple_of(4))
        && (0..4).all(|k| !read(k) || (strides[k][last] == 1 && strides[k][..last].iter().all(|x| x % 4 == 0)));
    if !ok {
        return None;
    }
    let mut vshape = shape.to_vec();
    vshape[last] /= 4;
    let vstrides = strides
        .iter()
        .map(|s| s.iter().enumerate().map(|(d, x)| if d == last { 1 } else { x / 4 }).collect())
        .collect();
    Some((vshape, vstrides, offsets.map(|o| o / 4)))
}

/// The tiled kernels' entry and (batch, R, C) where they fit: rank 2 or 3
/// after coalescing, y dense along C, and one operand from its own binding
/// read dense along R (staged through workgroup memory); with two operands
/// (both from their bindings), the other one dense or broadcast along C.
fn transpose_plan(
    stream: &StreamShared,
    plan: &Plan,
    shape: &[usize],
    strides: &[Vec<isize>],
) -> Option<(&'static str, [usize; 3])> {
    let r = shape.len();
    let n_ops = plan.m.operands.len();
    if !(1..=2).contains(&n_ops) || plan.is_where() || !(2..=3).contains(&r) || strides[3][r - 1] != 1 {
        return None;
    }
    if (0..n_ops).any(|k| plan.src[k] != SRC_OWN) {
        return None;
    }
    let along_r = |k: usize| strides[k][r - 2] == 1 && strides[k][r - 1] != 1;
    let along_c = |k: usize| strides[k][r - 1] == 1 || strides[k][r - 1] == 0;
    let entry = match n_ops {
        1 if along_r(0) => "tiled",
        2 if along_r(0) && along_c(1) => "tiled2_x0",
        2 if along_r(1) && along_c(0) => "tiled2_x1",
        _ => return None,
    };
    let batch = if r == 3 { shape[0] } else { 1 };
    let max = stream.device.limits.max_compute_workgroups_per_dimension as usize;
    let (rows, cols) = (shape[r - 2], shape[r - 1]);
    (batch <= max && rows.div_ceil(32) <= max && cols.div_ceil(32) <= max).then_some((entry, [batch, rows, cols]))
}

fn launch_tiled(
    stream: &StreamShared,
    plan: &Plan,
    (entry, dims): (&'static str, [usize; 3]),
    strides: &[Vec<isize>],
    offsets: &[usize; 4],
) -> Result<()> {
    let [batch, rows, cols] = dims;
    let r = strides[0].len();
    let stride = |k: usize, d: Option<usize>| d.map_or(0, |d| strides[k][d]);
    let batch_dim = (r == 3).then_some(0);
    let per_dim: Vec<[isize; 4]> =
        [batch_dim, Some(r - 2), Some(r - 1)].iter().map(|&d| [stride(0, d), stride(1, d), 0, stride(3, d)]).collect();
    let params = plan.params(batch * rows * cols, 0, 0, &dims, &per_dim, offsets);
    let groups = [cols.div_ceil(32) as u32, rows.div_ceil(32) as u32, batch as u32];
    plan.record(stream, plan.variant(entry, 1, 0), params, false, groups)
}
