//! The engine behind every elementwise operator: `out = OP(x0, x1, x2)` over
//! up to three broadcast inputs. Validates aliasing and shapes, coalesces
//! dims, and picks a variant of `shaders/elementwise.wgsl`: strided in vec4
//! units where layouts allow (dense tensors become rank 1), strided per
//! element otherwise, or tiled through workgroup memory for transposes.

use super::common::{launch, Params};
use super::grid::grid_1d;
use super::half::f16_bits;
use super::tensor::{broadcast_shapes, broadcast_strides, coalesce, expect_shape, same_device, DType, Tensor};
use crate::bail;
use crate::error::Result;
use crate::runtime::device::Device;
use crate::runtime::stream::StreamShared;

const WG: u32 = 256;
/// Items each invocation handles (see the shader) for `n` items: several
/// keep more loads in flight on GPUs for large tensors; smaller ones need
/// every invocation they can get to fill the GPU; CPU drivers gain nothing
/// and compile slower.
fn items_per_invocation(dev: &Device, n: usize) -> usize {
    if dev.adapter.info.device_type == wgpu::DeviceType::Cpu || n < (1 << 22) {
        1
    } else {
        4
    }
}

/// A scalar operand: its dtype in the kernel and its bit pattern (f16
/// scalars in the low 16 bits).
#[derive(Clone, Copy)]
pub struct Scalar {
    pub dtype: DType,
    pub bits: u32,
}

impl Scalar {
    /// `v` converted to `dtype`: floats round to nearest even, once (f16
    /// directly from the double), integers truncate toward zero and
    /// saturate to the type's range (NaN gives 0).
    pub fn of(dtype: DType, v: f64) -> Scalar {
        let bits = match dtype {
            DType::F32 => (v as f32).to_bits(),
            DType::F16 => f16_bits(v) as u32,
            DType::I32 => (v as i32) as u32,
            DType::U32 => v as u32,
        };
        Scalar { dtype, bits }
    }
}

/// One elementwise operation. `expr` is a WGSL expression of `x0..x2`
/// (inputs), `s0`, `s1` (scalars), `ix` (logical index), yielding the
/// output's type; it may use the type aliases `V0..V2`, `VO`, `C`.
pub struct Map<'t, 'a> {
    pub inputs: &'t [&'t Tensor<'a>],
    pub out: &'t Tensor<'a>,
    pub expr: &'t str,
    pub scalars: [Option<Scalar>; 2],
}

/// True if two views address exactly the same elements in the same order.
fn same_view(a: &Tensor, b: &Tensor) -> bool {
    if !a.same_buffer(b) || a.dtype.size() != b.dtype.size() || a.offset != b.offset || a.numel() != b.numel() {
        return false;
    }
    if a.rank() > b.rank() {
        return false;
    }
    let sa = broadcast_strides(a, &b.shape);
    b.shape.iter().zip(sa.iter().zip(&b.strides)).all(|(&d, (x, y))| d <= 1 || x == y)
}

/// Reject output views where two elements share memory (a race on write).
/// Sufficient test: sorted by |stride|, each dim steps past all smaller ones.
pub fn check_output_view(out: &Tensor, what: &str) -> Result<()> {
    let mut dims: Vec<(usize, usize)> =
        out.shape.iter().zip(&out.strides).filter(|(&d, _)| d > 1).map(|(&d, &s)| (s.unsigned_abs(), d)).collect();
    dims.sort();
    let mut span = 0usize;
    for (s, d) in dims {
        if s <= span {
            bail!(
                InvalidArgument,
                "{what}: the output view has elements that share memory (strides {:?})",
                out.strides
            );
        }
        span = span.saturating_add(s.saturating_mul(d - 1));
    }
    Ok(())
}

/// Check everything that does not depend on the op: devices, dtypes the
/// device supports, output shape, output and input aliasing.
/// Returns each input's storage access ("read" or "read_write").
fn validate(stream: &StreamShared, m: &Map) -> Result<Vec<&'static str>> {
    let dev = &stream.device;
    dev.check_alive()?;
    let mut all: Vec<&Tensor> = m.inputs.to_vec();
    all.push(m.out);
    same_device(dev, &all)?;
    for t in &all {
        t.dtype.check_device(dev)?;
    }
    let shapes: Vec<&[usize]> = m.inputs.iter().map(|t| t.shape.as_slice()).collect();
    let shape = if shapes.is_empty() { m.out.shape.clone() } else { broadcast_shapes(&shapes)? };
    expect_shape(m.out, &shape, "the output")?;
    check_output_view(m.out, "out")?;
    let mut access = Vec::new();
    for (k, t) in m.inputs.iter().enumerate() {
        if !t.same_buffer(m.out) {
            access.push("read");
        } else if same_view(t, m.out) || !t.may_overlap(m.out) {
            // Bound writable too: a buffer cannot be read-only and writable in one launch.
            access.push("read_write");
        } else {
            bail!(
                InvalidArgument,
                "input {k} overlaps the output without being the same view (in-place needs identical views)"
            );
        }
    }
    Ok(access)
}

fn scalar_expr(s: Option<Scalar>, idx: usize, vec: bool) -> String {
    let Some(s) = s else { return "0u".into() };
    let conv = match s.dtype {
        DType::F32 => format!("bitcast<f32>(p.s{idx})"),
        DType::F16 => format!("f16(unpack2x16float(p.s{idx}).x)"),
        DType::I32 => format!("bitcast<i32>(p.s{idx})"),
        DType::U32 => format!("p.s{idx}"),
    };
    let t = s.dtype.wgsl();
    if vec {
        format!("vec4<{t}>({conv})")
    } else {
        format!("{t}({conv})")
    }
}

fn vec_type(d: DType, vec: bool) -> String {
    if vec {
        format!("vec4<{}>", d.wgsl())
    } else {
        d.wgsl().to_string()
    }
}

/// Record the operation. Empty outputs validate and launch nothing.
pub fn run(stream: &StreamShared, m: &Map) -> Result<()> {
    let access = validate(stream, m)?;
    let n = m.out.numel();
    if n == 0 {
        return Ok(());
    }
    let shape = &m.out.shape;
    let mut strides: Vec<Vec<isize>> = m.inputs.iter().map(|t| broadcast_strides(t, shape)).collect();
    strides.push(m.out.strides.clone());
    let (cshape, cstrides) = coalesce(shape, &strides);
    let dense = cshape.len() <= 1 && cstrides.iter().all(|s| s.iter().all(|&x| x == 1));
    // Offsets from where each view is bound (multiples of 4 apart from the absolute ones).
    let mut offsets: Vec<usize> = m.inputs.iter().map(|t| t.bound_offset() as usize).collect();
    offsets.push(m.out.bound_offset() as usize);
    if !dense {
        if let Some(dims) = transpose_dims(stream, m, &cshape, &cstrides) {
            return launch_tiled(stream, m, &access, dims, &cstrides, &offsets);
        }
        if let Some((vshape, vstrides, voffsets)) = vec4_view(&cshape, &cstrides, &offsets) {
            return launch_strided(stream, m, &access, true, 0, &vshape, &vstrides, &voffsets);
        }
        return launch_strided(stream, m, &access, false, 0, &cshape, &cstrides, &offsets);
    }
    // Dense: vec4 units for the 4-aligned bulk, then the tail element-wise.
    let n4 = if n >= 4 && offsets.iter().all(|o| o % 4 == 0) { n / 4 } else { 0 };
    let ones = vec![vec![1isize]; offsets.len()];
    if n4 > 0 {
        let offs: Vec<usize> = offsets.iter().map(|o| o / 4).collect();
        launch_strided(stream, m, &access, true, 0, &[n4], &ones, &offs)?;
    }
    let done = n4 * 4;
    if done < n {
        let offs: Vec<usize> = offsets.iter().map(|o| o + done).collect();
        launch_strided(stream, m, &access, false, done, &[n - done], &ones, &offs)?;
    }
    Ok(())
}

fn render_values(
    items: usize,
    m: &Map,
    access: &[&'static str],
    vec: bool,
    rank: usize,
) -> Vec<(&'static str, String)> {
    let nin = m.inputs.len();
    let mut v: Vec<(&'static str, String)> = Vec::new();
    v.push(("ITEMS", items.to_string()));
    v.push(("RANK", rank.to_string()));
    let any_f16 = m.inputs.iter().any(|t| t.dtype == DType::F16)
        || m.out.dtype == DType::F16
        || m.scalars.iter().flatten().any(|s| s.dtype == DType::F16);
    v.push(("ENABLE", if any_f16 { "enable f16;".into() } else { String::new() }));
    const NAMES: [(&str, &str, &str, &str); 3] =
        [("V0", "ACC0", "B0", "LOAD0"), ("V1", "ACC1", "B1", "LOAD1"), ("V2", "ACC2", "B2", "LOAD2")];
    for (k, (tv, acc, b, load)) in NAMES.iter().enumerate() {
        if k < nin {
            v.push((tv, vec_type(m.inputs[k].dtype, vec)));
            v.push((acc, access[k].into()));
            v.push((b, k.to_string()));
            v.push((load, format!("in{k}[o]")));
        } else {
            v.push((tv, "u32".into()));
            v.push((acc, "read".into()));
            v.push((b, (8 + k).to_string()));
            v.push((load, "0u".into()));
        }
    }
    v.push(("VO", vec_type(m.out.dtype, vec)));
    v.push(("BO", nin.to_string()));
    v.push(("BP", (nin + 1).to_string()));
    v.push(("VI", if vec { "vec4<u32>".into() } else { "u32".into() }));
    v.push(("C", if vec { "vec4<f32>".into() } else { "f32".into() }));
    v.push(("CU", if vec { "vec4<u32>".into() } else { "u32".into() }));
    v.push(("CB", if vec { "vec4<bool>".into() } else { "bool".into() }));
    v.push((
        "IX_S",
        if vec { "vec4<u32>(p.base + 4u * i) + vec4<u32>(0u, 1u, 2u, 3u)".into() } else { "p.base + i".into() },
    ));
    v.push(("S0", scalar_expr(m.scalars[0], 0, vec)));
    v.push(("S1", scalar_expr(m.scalars[1], 1, vec)));
    v.push(("OP", m.expr.to_string()));
    v
}

fn header(m: &Map, n: usize, row: u32, rank: usize, base: usize, offsets: &[usize]) -> Params {
    let nin = m.inputs.len();
    let off = |k: usize| if k < nin { offsets[k] as u32 } else { 0 };
    Params::new()
        .u32(n as u32)
        .u32(row)
        .u32(rank as u32)
        .u32(base as u32)
        .u32(m.scalars[0].map_or(0, |s| s.bits))
        .u32(m.scalars[1].map_or(0, |s| s.bits))
        .u32(0x7fc0_0000)
        .u32(0x7f80_0000)
        .u32(off(0))
        .u32(off(1))
        .u32(off(2))
        .u32(offsets[nin] as u32)
}

/// The kernel variant for this map. Looked up by a short key of everything
/// the rendered source depends on, so the hot path builds a few bytes
/// instead of rendering ~30 substitutions on every launch.
fn variant(
    dev: &Device,
    entry: &str,
    items: usize,
    m: &Map,
    access: &[&'static str],
    vec: bool,
    rank: usize,
) -> Result<std::sync::Arc<crate::runtime::kernel::Kernel>> {
    // One ASCII byte per property, then the op's expression.
    let dtype = |d: DType| b'0' + d as u8;
    let mut key = Vec::with_capacity(16 + m.expr.len());
    key.extend_from_slice(&[b'0' + items as u8, b'0' + rank as u8, vec as u8 + b'0', dtype(m.out.dtype)]);
    for (t, a) in m.inputs.iter().zip(access) {
        key.extend_from_slice(&[dtype(t.dtype), if *a == "read" { b'r' } else { b'w' }]);
    }
    for s in &m.scalars {
        key.push(s.map_or(b'-', |s| dtype(s.dtype)));
    }
    key.push(b'|');
    key.extend_from_slice(m.expr.as_bytes());
    dev.kernels.get_keyed(dev, "elementwise.wgsl", entry, &key, || {
        let values = render_values(items, m, access, vec, rank);
        let refs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
        crate::shaders::render(crate::shaders::source("elementwise.wgsl"), &refs)
    })
}

/// The strided kernel for `n` items, with its grid.
fn dispatch(
    stream: &StreamShared,
    m: &Map,
    access: &[&'static str],
    vec: bool,
    rank: usize,
    entry: &str,
    n: usize,
) -> Result<(std::sync::Arc<crate::runtime::kernel::Kernel>, [u32; 3], u32)> {
    let dev = &stream.device;
    let items = items_per_invocation(dev, n);
    let n = n.div_ceil(items);
    let k = variant(dev, entry, items, m, access, vec, rank)?;
    let (groups, row) = grid_1d(n as u64, WG, dev.limits.max_compute_workgroups_per_dimension);
    Ok((k, groups, row))
}

fn tensors<'t, 'a>(m: &Map<'t, 'a>) -> Vec<&'t Tensor<'a>> {
    let mut all: Vec<&Tensor> = m.inputs.to_vec();
    all.push(m.out);
    all
}

#[allow(clippy::too_many_arguments)]
fn launch_strided(
    stream: &StreamShared,
    m: &Map,
    access: &[&'static str],
    vec: bool,
    base: usize,
    shape: &[usize],
    strides: &[Vec<isize>],
    offsets: &[usize],
) -> Result<()> {
    let n: usize = shape.iter().product();
    let (k, groups, row) = dispatch(stream, m, access, vec, shape.len(), "strided", n)?;
    let nin = m.inputs.len();
    let mut params = header(m, n, row, shape.len(), base, offsets).array8_u32(shape, 1);
    // Per dim: (in0, in1, in2, out) strides.
    // Slot k holds input k, slot 3 the output; unused slots and dims are 0.
    let operand = |k: usize| {
        if k < nin {
            Some(k)
        } else if k == 3 {
            Some(nin)
        } else {
            None
        }
    };
    let per_dim: Vec<isize> = (0..8)
        .flat_map(|d| {
            (0..4).map(move |k| match operand(k) {
                Some(o) if d < shape.len() => strides[o][d],
                _ => 0,
            })
        })
        .collect();
    for chunk in per_dim.chunks(8) {
        params = params.array8_i32(chunk);
    }
    launch(stream, &k, &tensors(m), params.bytes(), groups)
}

/// A strided problem's (shape, per-operand strides, per-operand offsets).
type StridedView = (Vec<usize>, Vec<Vec<isize>>, Vec<usize>);

/// The same strided problem in vec4 units, when every operand is dense
/// along the innermost dim (e.g. a bias added to rows) and everything else
/// is a multiple of 4 elements.
fn vec4_view(shape: &[usize], strides: &[Vec<isize>], offsets: &[usize]) -> Option<StridedView> {
    let last = shape.len().checked_sub(1)?;
    let ok = shape[last].is_multiple_of(4)
        && offsets.iter().all(|o| o % 4 == 0)
        && strides.iter().all(|s| s[last] == 1 && s[..last].iter().all(|x| x % 4 == 0));
    if !ok {
        return None;
    }
    let mut vshape = shape.to_vec();
    vshape[last] /= 4;
    let vstrides = strides
        .iter()
        .map(|s| s.iter().enumerate().map(|(d, x)| if d == last { 1 } else { x / 4 }).collect())
        .collect();
    let voffsets = offsets.iter().map(|o| o / 4).collect();
    Some((vshape, vstrides, voffsets))
}

/// (batch, R, C) if the tiled kernel fits: one input, rank 2 or 3 after
/// coalescing, the input dense along R and the output dense along C.
fn transpose_dims(stream: &StreamShared, m: &Map, shape: &[usize], strides: &[Vec<isize>]) -> Option<[usize; 3]> {
    let r = shape.len();
    if m.inputs.len() != 1 || !(2..=3).contains(&r) {
        return None;
    }
    let (input, out) = (&strides[0], &strides[1]);
    if input[r - 2] != 1 || out[r - 1] != 1 || input[r - 1] == 1 {
        return None;
    }
    let batch = if r == 3 { shape[0] } else { 1 };
    let max = stream.device.limits.max_compute_workgroups_per_dimension as usize;
    let (rows, cols) = (shape[r - 2], shape[r - 1]);
    (batch <= max && rows.div_ceil(32) <= max && cols.div_ceil(32) <= max).then_some([batch, rows, cols])
}

fn launch_tiled(
    stream: &StreamShared,
    m: &Map,
    access: &[&'static str],
    dims: [usize; 3],
    strides: &[Vec<isize>],
    offsets: &[usize],
) -> Result<()> {
    let dev = &stream.device;
    let k = variant(dev, "tiled", 1, m, access, false, 0)?;
    let [batch, rows, cols] = dims;
    let r = strides[0].len();
    let stride = |op: usize, d: Option<usize>| d.map_or(0, |d| strides[op][d]);
    let batch_dim = (r == 3).then_some(0);
    let mut per_dim: Vec<isize> = Vec::with_capacity(32);
    for d in [batch_dim, Some(r - 2), Some(r - 1)] {
        per_dim.extend_from_slice(&[stride(0, d), 0, 0, stride(1, d)]);
    }
    per_dim.resize(32, 0);
    let mut params = header(m, batch * rows * cols, 0, 3, 0, offsets).array8_u32(&dims, 1);
    for chunk in per_dim.chunks(8) {
        params = params.array8_i32(chunk);
    }
    let groups = [cols.div_ceil(32) as u32, rows.div_ceil(32) as u32, batch as u32];
    launch(stream, &k, &tensors(m), params.bytes(), groups)
}
