//! Norms with a fused residual: `s = x + r` and `y = norm(s)` (RMS or layer
//! norm), both written, as every transformer layer computes them. Where
//! rows are dense, 4-aligned and short enough to stay in registers (the
//! `norm_cached` layout), one kernel reads x and r once and writes s and y
//! once (`norm_cached_residual` in shaders/norm.wgsl); other layouts run
//! the add and then the norm (two launches, the same results).

use crate::bail;
use crate::error::Result;
use crate::ops::elementwise::{binary, BinaryOp};
use crate::ops::norm::common::check_param;
use crate::ops::norm::layer::{lanes, norm, NormParams, FAMILY, FAMILY_SUBGROUPS, MAX_CACHE};
use crate::ops::reduce::kernels::{row_grid, row_workgroup, strategy};
use crate::ops::spec::{self, check_output, pack_i32, pack_u32, view_arg, Arg, Launch, Sharing};
use crate::ops::split::MAX_ITERS;
use crate::ops::tensor::{expect_shape, same_device, Tensor};
use crate::runtime::stream::StreamShared;

/// The views and options of one call.
pub struct Residual<'t, 'a> {
    pub x: &'t Tensor<'a>,
    pub r: &'t Tensor<'a>,
    pub weight: Option<&'t Tensor<'a>>,
    pub bias: Option<&'t Tensor<'a>>,
    pub normalized_dims: u32,
    pub eps: f32,
    pub rms: bool,
    /// The normalised output.
    pub y: &'t Tensor<'a>,
    /// The sum x + r.
    pub s: &'t Tensor<'a>,
}

/// Row-major over `dims` of `shape` with the given strides.
fn dense_rows(t: &Tensor, split: usize) -> bool {
    let len: usize = t.shape[split..].iter().product();
    let mut want = 1isize;
    for d in (split..t.rank()).rev() {
        if t.shape[d] > 1 && t.strides[d] != want {
            return false;
        }
        want *= t.shape[d] as isize;
    }
    // Rows one after another, so that a row's base is row * len.
    let mut step = len as isize;
    for d in (0..split).rev() {
        if t.shape[d] > 1 && t.strides[d] != step {
            return false;
        }
        step *= t.shape[d] as isize;
    }
    true
}

pub fn norm_residual(stream: &StreamShared, a: &Residual) -> Result<()> {
    let what = if a.rms { "rms_norm_residual" } else { "layer_norm_residual" };
    let (x, r, y, s) = (a.x, a.r, a.y, a.s);
    same_device(&stream.device, &[x, r, y, s])?;
    for (name, t) in [("residual", r), ("sum_out", s)] {
        if t.dtype != x.dtype {
            bail!(DtypeMismatch, "{what}: {name} is {}, in is {}", t.dtype.wgsl(), x.dtype.wgsl());
        }
        expect_shape(t, &x.shape, &format!("{what}: {name}"))?;
    }
    let mut inputs = vec![("in", x), ("residual", r)];
    inputs.extend(a.weight.map(|w| ("weight", w)));
    inputs.extend(a.bias.map(|b| ("bias", b)));
    check_output(what, s, &inputs, Sharing::Separate)?;
    inputs.push(("sum_out", s));
    check_output(what, y, &inputs, Sharing::Separate)?;

    let rank = x.rank();
    let nd = a.normalized_dims as usize;
    let fused = nd >= 1 && nd <= rank && {
        let split = rank - nd;
        let len: usize = x.shape[split..].iter().product();
        let rows: usize = x.shape[..split].iter().product();
        let wg = row_workgroup(len / 4);
        let aligned = |t: &Tensor| t.bound_offset().is_multiple_of(4) && dense_rows(t, split);
        let param_ok = |p: Option<&Tensor>| p.is_none_or(|p| p.bound_offset().is_multiple_of(4) && p.is_contiguous());
        rows > 0
            && len > 0
            && len.is_multiple_of(4)
            && (len / 4).div_ceil(wg) <= MAX_CACHE
            && (len / 4).div_ceil(wg) <= MAX_ITERS
            && [x, r, y, s].iter().all(|t| aligned(t))
            && param_ok(a.weight)
            && param_ok(a.bias)
    };
    if !fused {
        // The norm checks its own arguments (dims, eps, weight, bias) first.
        let inner = if nd >= 1 && nd <= rank { x.shape[rank - nd..].to_vec() } else { vec![] };
        check_param(stream, a.weight, x, &inner, "weight")?;
        check_param(stream, a.bias, x, &inner, "bias")?;
        binary(stream, BinaryOp::Add, x, r, s)?;
        return norm(stream, s, a.weight, a.bias, a.normalized_dims, a.eps, a.rms, y);
    }
    if !a.eps.is_finite() || a.eps < 0.0 {
        bail!(InvalidArgument, "{what}: eps {} must be finite and >= 0", a.eps);
    }
    let split = rank - nd;
    let inner = x.shape[split..].to_vec();
    check_param(stream, a.weight, x, &inner, "weight")?;
    check_param(stream, a.bias, x, &inner, "bias")?;
    x.dtype.check_device(&stream.device)?;
    let len: usize = inner.iter().product();
    let rows: usize = x.shape[..split].iter().product();
    let wg = row_workgroup(len / 4);
    let cache = (len / 4).div_ceil(wg).next_power_of_two();
    let dev = &stream.device;
    let family = strategy(dev, &FAMILY, &FAMILY_SUBGROUPS);
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let overrides =
        [wg as f64, cache as f64, flag(a.rms), flag(a.weight.is_some()), flag(a.bias.is_some()), lanes(dev, family)];
    let (groups, rows_per_y) = row_grid(1, rows, dev.limits.max_compute_workgroups_per_dimension);
    let (w, b) = (a.weight.unwrap_or(x), a.bias.unwrap_or(x));
    let (xa, in_offset) = view_arg("xv", x);
    let (ra, r_offset) = view_arg("rv", r);
    let (ya, out_offset) = view_arg("yv", y);
    let (sa, s_offset) = view_arg("sv", s);
    let (wa, w_offset) = view_arg("wv", w);
    let (ba, b_offset) = view_arg("bv", b);
    // Rows are dense: one outer dim of `rows` rows, `len` apart.
    let params = NormParams {
        len: len as u32,
        rows: rows as u32,
        rows_per_y,
        outer_rank: 1,
        in_offset,
        out_offset,
        w_offset: if a.weight.is_some() { w_offset } else { 0 },
        b_offset: if a.bias.is_some() { b_offset } else { 0 },
        inner_rank: 1,
        eps: a.eps,
        inv_len: 1.0 / len as f32,
        chunk_len: 0,
        chunks: 1,
        zero: 0,
        r_offset,
        s_offset,
        outer_shape: pack_u32(&[rows], 1),
        outer_in: pack_i32(&[len as isize]),
        outer_out: pack_i32(&[len as isize]),
        inner_shape: pack_u32(&[len], 1),
        inner_in: pack_i32(&[1]),
        inner_out: pack_i32(&[1]),
        inner_w: pack_i32(&[1]),
        inner_b: pack_i32(&[1]),
    };
    let variant = family.variant("norm_cached_residual", &[x.dtype], &overrides);
    let args: [Arg; 6] = [xa, ra, ya, sa, wa, ba];
    spec::record(stream, &Launch { variant, params, args, groups })
}
