//! A 2-D convolution as the planner sees it, computed once per call: the
//! validated sizes (`Geometry`), the dtype, and how each operand lies
//! (`View`). The routes read their decisions from here, never from the
//! tensors again.

use crate::bail;
use crate::error::Result;
use crate::ops::conv::bn_act::Activation;
use crate::ops::spec::{check_output, view_arg, Sharing};
use crate::ops::tensor::{check_kernel_counts, contiguous_strides, numel, same_device, DType, Tensor};
use crate::runtime::device::Device;

/// Strides, padding, dilation and groups. Zero strides, dilations and
/// groups mean 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct Conv2dParams {
    pub stride: [u32; 2],
    pub pad: [u32; 2],
    pub dilation: [u32; 2],
    pub groups: u32,
}

/// A validated convolution's sizes: input (n, c, h, w), weight (o, cg, kh,
/// kw), output (oh, ow), og output channels per group, strides, padding and
/// dilations (at least 1 where they must be).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub o: usize,
    pub cg: usize,
    pub og: usize,
    pub kh: usize,
    pub kw: usize,
    pub oh: usize,
    pub ow: usize,
    pub sh: usize,
    pub sw: usize,
    pub ph: usize,
    pub pw: usize,
    pub dh: usize,
    pub dw: usize,
    pub groups: usize,
}

impl Geometry {
    /// Check the shapes of input, weight, bias (if any) and out against the
    /// parameters, in the order `conv2d` reports them.
    pub fn new(
        params: &Conv2dParams,
        input: &[usize],
        weight: &[usize],
        bias: Option<&[usize]>,
        out: &[usize],
    ) -> Result<Geometry> {
        for (shape, name) in [(input, "input"), (weight, "weight"), (out, "out")] {
            if shape.len() != 4 {
                bail!(ShapeMismatch, "conv2d: {name} has rank {}; expected 4", shape.len());
            }
        }
        let (sh, sw) = (params.stride[0].max(1) as usize, params.stride[1].max(1) as usize);
        let (dh, dw) = (params.dilation[0].max(1) as usize, params.dilation[1].max(1) as usize);
        let (ph, pw) = (params.pad[0] as usize, params.pad[1] as usize);
        let groups = params.groups.max(1) as usize;
        let [n, c, h, w] = [input[0], input[1], input[2], input[3]];
        let [o, cg, kh, kw] = [weight[0], weight[1], weight[2], weight[3]];
        if c % groups != 0 || o % groups != 0 {
            bail!(ShapeMismatch, "conv2d: {c} input and {o} output channels are not both divisible by {groups} groups");
        }
        if cg != c / groups {
            bail!(ShapeMismatch, "conv2d: weight has {cg} input channels per group; input gives {}", c / groups);
        }
        if kh == 0 || kw == 0 {
            bail!(ShapeMismatch, "conv2d: the kernel is empty ({kh}x{kw})");
        }
        if let Some(b) = bias {
            expect(b, &[o], "conv2d: bias")?;
        }
        let (Some(oh), Some(ow)) = (out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)) else {
            bail!(ShapeMismatch, "conv2d: the padded input {h}x{w} is smaller than the dilated {kh}x{kw} kernel");
        };
        expect(out, &[n, o, oh, ow], "conv2d: out")?;
        // Dims of out are bounded by its buffer; those of input and weight may
        // be broadcast (zero strides) far past what the kernels count.
        check_kernel_counts(
            "conv2d",
            &[
                ("the padded input height", h + 2 * ph),
                ("the padded input width", w + 2 * pw),
                ("the input channels", c),
                ("the dilated kernel height", dilated(kh, dh)),
                ("the dilated kernel width", dilated(kw, dw)),
                ("a stride", sh.max(sw)),
                ("C/groups * KH * KW", numel(&[cg, kh, kw])),
            ],
        )?;
        let og = o / groups;
        Ok(Geometry { n, c, h, w, o, cg, og, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, groups })
    }

    pub fn input_shape(&self) -> [usize; 4] {
        [self.n, self.c, self.h, self.w]
    }
    pub fn weight_shape(&self) -> [usize; 4] {
        [self.o, self.cg, self.kh, self.kw]
    }
    pub fn out_shape(&self) -> [usize; 4] {
        [self.n, self.o, self.oh, self.ow]
    }
    /// The GEMM's K: C/groups * KH * KW.
    pub fn k(&self) -> usize {
        self.cg * self.kh * self.kw
    }
    pub fn outputs(&self) -> usize {
        numel(&self.out_shape())
    }
}

fn expect(shape: &[usize], want: &[usize], what: &str) -> Result<()> {
    if shape != want {
        bail!(ShapeMismatch, "{what} has shape {:?}; expected {:?}", shape, want);
    }
    Ok(())
}

/// How one 4-d operand lies in its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    pub strides: [isize; 4],
    /// The view's first element in its buffer.
    pub offset: usize,
    /// Its offset counted from where operators bind it (`view_arg`).
    pub bound_offset: u32,
    /// The bytes that binding covers.
    pub bound_bytes: u64,
}

impl View {
    pub(crate) fn of(t: &Tensor) -> View {
        let (arg, bound_offset) = view_arg("", t);
        View { strides: ivec(&t.strides), offset: t.offset, bound_offset, bound_bytes: arg.bound_bytes() }
    }

    /// A contiguous view of `shape` alone in a buffer of its size.
    pub fn contiguous(shape: [usize; 4], dtype: DType) -> View {
        let strides = ivec(&contiguous_strides(&shape));
        View { strides, offset: 0, bound_offset: 0, bound_bytes: (numel(&shape) * dtype.size()) as u64 }
    }

    /// A channels-last (N, H, W, C in memory) view of the (N, C, H, W)
    /// `shape`, alone in a buffer of its size.
    pub fn channels_last(shape: [usize; 4], dtype: DType) -> View {
        let [n, c, h, w] = shape;
        let s = contiguous_strides(&[n, h, w, c]);
        View { strides: [s[0], s[3], s[1], s[2]], ..View::contiguous(shape, dtype) }
    }
}

fn ivec(s: &[isize]) -> [isize; 4] {
    [s[0], s[1], s[2], s[3]]
}

/// The convolution's operands, as the routes record them.
#[derive(Clone, Copy)]
pub struct Operands<'t, 'a> {
    pub input: &'t Tensor<'a>,
    pub weight: &'t Tensor<'a>,
    pub bias: Option<&'t Tensor<'a>>,
    pub out: &'t Tensor<'a>,
}

/// Everything the planner decides from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub geo: Geometry,
    pub dtype: DType,
    pub input: View,
    pub weight: View,
    pub out: View,
    /// The bias's stride, where there is one.
    pub bias: Option<isize>,
    /// The activation applied after the bias, where the route applies one
    /// as it stores (`Route::applies_activation`; none for `wgc_op_conv2d`).
    pub activation: Activation,
    /// The residual added before the activation
    /// (`wgc_op_conv2d_bn_act_residual`), where there is one: the output's
    /// shape in its own strides.
    pub residual: Option<View>,
}

impl Problem {
    /// Validate a call's operands on `dev` (each failure the status
    /// `wgc_op_conv2d` returns) and describe it.
    pub fn new(dev: &Device, params: &Conv2dParams, ops: &Operands) -> Result<Problem> {
        let Operands { input, weight, bias, out } = *ops;
        let mut all = vec![input, weight, out];
        if let Some(b) = bias {
            all.push(b);
        }
        same_device(dev, &all)?;
        for t in &all {
            if t.dtype != input.dtype {
                bail!(
                    DtypeMismatch,
                    "conv2d: input is {} but another operand is {}",
                    input.dtype.wgsl(),
                    t.dtype.wgsl()
                );
            }
        }
        if !input.dtype.is_float() {
            bail!(Unsupported, "conv2d: {} is not supported (f32 or f16)", input.dtype.wgsl());
        }
        input.dtype.check_device(dev)?;
        let geo = Geometry::new(params, &input.shape, &weight.shape, bias.map(|b| &b.shape[..]), &out.shape)?;
        let mut inputs = vec![("the input", input), ("the weight", weight)];
        if let Some(b) = bias {
            inputs.push(("the bias", b));
        }
        check_output("conv2d", out, &inputs, Sharing::Separate)?;
        dev.check_alive()?;
        Ok(Problem {
            geo,
            dtype: input.dtype,
            input: View::of(input),
            weight: View::of(weight),
            out: View::of(out),
            bias: bias.map(|b| b.strides[0]),
            activation: Activation::None,
            residual: None,
        })
    }

    /// A problem of contiguous operands (the input channels-last where
    /// asked), for planning without buffers.
    pub fn of_shapes(
        params: &Conv2dParams,
        input: [usize; 4],
        weight: [usize; 4],
        dtype: DType,
        bias: bool,
        channels_last: bool,
    ) -> Result<Problem> {
        // The output's size comes from the parameters (0 where the input is
        // too small: `Geometry::new` reports that first).
        let size = |i: usize| {
            let (s, p, d) = (params.stride[i].max(1), params.pad[i], params.dilation[i].max(1));
            out_size(input[2 + i], weight[2 + i], s as usize, p as usize, d as usize).unwrap_or(0)
        };
        let out = [input[0], weight[0], size(0), size(1)];
        let bias_shape = [weight[0]];
        let geo = Geometry::new(params, &input, &weight, bias.then_some(&bias_shape[..]), &out)?;
        let layout = if channels_last { View::channels_last } else { View::contiguous };
        Ok(Problem {
            geo,
            dtype,
            input: layout(input, dtype),
            weight: View::contiguous(weight, dtype),
            out: layout(out, dtype),
            bias: bias.then_some(1),
            activation: Activation::None,
            residual: None,
        })
    }
}

/// Output size of one spatial dim, or None when the input is too small.
pub fn out_size(input: usize, kernel: usize, stride: usize, pad: usize, dilation: usize) -> Option<usize> {
    let span = dilated(kernel, dilation);
    let padded = input + 2 * pad;
    if padded < span {
        return None;
    }
    Some((padded - span) / stride + 1)
}

/// Input rows (or columns) one window spans, saturating.
fn dilated(kernel: usize, dilation: usize) -> usize {
    dilation.saturating_mul(kernel.max(1) - 1).saturating_add(1)
}

/// True if a weight's (C/groups, KH, KW) dims are one K dim of unit
/// stride (size-1 dims do not count).
pub(crate) fn weight_k_rows(shape: [usize; 4], weight: &View) -> bool {
    let mut expect = 1isize;
    for d in (1..4).rev() {
        if shape[d] > 1 && weight.strides[d] != expect {
            return false;
        }
        expect = expect.saturating_mul(shape[d] as isize);
    }
    true
}

/// A 4-d view's strides as the kernels' uniforms hold them.
pub(crate) fn ivec4(s: &[isize]) -> [i32; 4] {
    [s[0] as i32, s[1] as i32, s[2] as i32, s[3] as i32]
}

/// Kernel heights and widths that kernels compile in where both are among
/// `sizes` (their k decode then divides by constants); (0, 0), read from
/// the uniform, otherwise.
pub(crate) fn compiled_window(kh: usize, kw: usize, sizes: &[f64]) -> [usize; 2] {
    let specialized = |v: usize| sizes.contains(&(v as f64));
    if specialized(kh) && specialized(kw) {
        [kh, kw]
    } else {
        [0, 0]
    }
}
