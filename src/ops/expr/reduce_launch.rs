//! Launching a reduction with an elementwise prologue and epilogue: check
//! the expressions and views (counts, dtypes, broadcasting, the output
//! checks), pick the prologue's layout class (merged broadcast shape, which
//! inputs are dense, vec4 units where every input allows), fill the
//! prologue's part of the uniform, and let the reduce front door plan and
//! record its kernels as for a dense tensor of the prologue's values, each
//! launch taking its entry point of the generated module (compiled on first
//! use, cached by its text, entry and overrides).

use super::ir::{Expr, Op, MAX_INPUTS, MAX_SCALARS};
use super::launch::slot_bits;
use super::reduce_bf16::launch_reduce_bf16;
use super::reduce_codegen::{generate_reduce, scalar_slots, structure_key, ReduceKind, ReduceLayout};
use crate::bail;
use crate::error::Result;
use crate::ops::reduce::kernels::use_subgroups;
use crate::ops::reduce::{reduce_fused, FusedInput, ReduceOp, ReduceParams};
use crate::ops::spec::{check_output, Arg, Sharing};
use crate::ops::tensor::{broadcast_strides, check_kernel_counts, coalesce, same_device, DType, Tensor, MAX_RANK};
use crate::runtime::stream::{Bind, Groups, StreamShared};

/// The generated modules' `struct Params` (shaders/reduce_expr_params.wgsl):
/// the reduce uniform, then the prologue's fields.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FusedParams {
    pub base: ReduceParams,
    pub nan: u32,
    pub inf: u32,
    pub _pad0: u32,
    pub _pad1: u32,
    pub shape: [[u32; 4]; MAX_RANK / 4],
    pub off: [[u32; 4]; MAX_INPUTS / 4],
    pub st: [[i32; 4]; MAX_INPUTS * MAX_RANK / 4],
    pub s: [[u32; 4]; MAX_SCALARS / 4],
}
const _: () = assert!(MAX_INPUTS.is_multiple_of(4) && std::mem::size_of::<ReduceParams>().is_multiple_of(16));

impl FusedParams {
    /// The prologue fields' byte offsets (the layout test compares them
    /// with the WGSL struct's).
    pub fn offsets() -> Vec<(&'static str, usize)> {
        use std::mem::offset_of;
        vec![
            ("nan", offset_of!(FusedParams, nan)),
            ("inf", offset_of!(FusedParams, inf)),
            ("shape", offset_of!(FusedParams, shape)),
            ("off", offset_of!(FusedParams, off)),
            ("st", offset_of!(FusedParams, st)),
            ("s", offset_of!(FusedParams, s)),
        ]
    }
}

/// The reduced value's dtype: the arg ops' index, else the prologue's.
fn reduced_dtype(op: ReduceOp, value: DType) -> DType {
    if matches!(op, ReduceOp::Argmax | ReduceOp::Argmin) {
        DType::I32
    } else {
        value
    }
}

/// The accumulator of reduce.wgsl's families for values of `d`.
fn accumulator(d: DType) -> DType {
    match d {
        DType::I32 | DType::U32 => d,
        _ => DType::F32,
    }
}

fn check_expressions(pro: &Expr, epi: Option<&Expr>, op: ReduceOp, inputs: &[Tensor], params: &[f64]) -> Result<()> {
    if pro.outputs.len() != 1 {
        bail!(
            InvalidArgument,
            "expression reduction: the expression must have exactly one output (it has {})",
            pro.outputs.len()
        );
    }
    if inputs.len() != pro.inputs.len() {
        bail!(
            InvalidArgument,
            "expression reduction: {} inputs given, the expression has {}",
            inputs.len(),
            pro.inputs.len()
        );
    }
    let want = pro.params.len() + epi.map_or(0, |e| e.params.len());
    if params.len() != want {
        bail!(
            InvalidArgument,
            "expression reduction: {} parameters given, the expression and the epilogue have {want}",
            params.len()
        );
    }
    for (k, t) in inputs.iter().enumerate() {
        if t.dtype != pro.inputs[k] {
            bail!(
                DtypeMismatch,
                "expression reduction: input {k} is {}, the expression reads {}",
                t.dtype.wgsl(),
                pro.inputs[k].wgsl()
            );
        }
    }
    let value = pro.nodes[pro.outputs[0] as usize].dtype;
    let reduced = reduced_dtype(op, value);
    if let Some(e) = epi {
        if e.inputs.len() != 1 || e.outputs.len() != 1 {
            bail!(
                InvalidArgument,
                "expression reduction: the epilogue must have one input (the reduced value) and one output; it has {} and {}",
                e.inputs.len(),
                e.outputs.len()
            );
        }
        let got = e.nodes[e.outputs[0] as usize].dtype;
        if e.inputs[0] != reduced || got != reduced {
            bail!(
                DtypeMismatch,
                "expression reduction: the reduced value is {}; the epilogue reads {} and writes {} (both must be {})",
                reduced.wgsl(),
                e.inputs[0].wgsl(),
                got.wgsl(),
                reduced.wgsl()
            );
        }
    }
    Ok(())
}

/// NumPy broadcasting of the inputs' shapes.
fn broadcast_shape(inputs: &[Tensor]) -> Result<Vec<usize>> {
    let rank = inputs.iter().map(|t| t.rank()).max().unwrap_or(0);
    let mut shape = vec![1usize; rank];
    for t in inputs {
        let pad = rank - t.rank();
        for (i, &d) in t.shape.iter().enumerate() {
            let s = &mut shape[pad + i];
            if *s == 1 {
                *s = d;
            } else if d != 1 && d != *s {
                let shapes: Vec<&Vec<usize>> = inputs.iter().map(|t| &t.shape).collect();
                bail!(ShapeMismatch, "expression reduction: the input shapes {shapes:?} do not broadcast together");
            }
        }
    }
    Ok(shape)
}

/// The scalar nodes of `e` a kernel reads, in slot order.
fn live_scalars(e: &Expr) -> usize {
    e.nodes.iter().zip(e.live()).filter(|(n, l)| *l && matches!(n.op, Op::Scalar(_) | Op::Param(_))).count()
}

/// Record the reduction (`op` over `axes`) of `pro`'s output over the
/// broadcast shape of `inputs`, mapped by `epi`, into `out`.
#[allow(clippy::too_many_arguments)]
pub fn launch_reduce(
    stream: &StreamShared,
    pro: &Expr,
    epi: Option<&Expr>,
    op: ReduceOp,
    axes: &[i32],
    keepdim: bool,
    inputs: &[Tensor],
    params: &[f64],
    out: &Tensor,
) -> Result<()> {
    let dev = &stream.device;
    dev.check_alive()?;
    if matches!(op, ReduceOp::Var { .. } | ReduceOp::Std { .. }) {
        bail!(Unsupported, "expression reduction: {op:?} is not supported");
    }
    check_expressions(pro, epi, op, inputs, params)?;
    let mut all: Vec<&Tensor> = inputs.iter().collect();
    all.push(out);
    same_device(dev, &all)?;
    for d in pro.nodes.iter().chain(epi.map_or(&[][..], |e| &e.nodes)).map(|n| n.dtype) {
        d.check_device_bf16(dev)?;
    }
    let shape = broadcast_shape(inputs)?;
    let names: Vec<String> = (0..inputs.len()).map(|k| format!("input {k}")).collect();
    let others: Vec<(&str, &Tensor)> = inputs.iter().enumerate().map(|(k, t)| (names[k].as_str(), t)).collect();
    check_output("expression reduction out", out, &others, Sharing::Separate)?;
    let scalars = live_scalars(pro) + epi.map_or(0, live_scalars);
    if scalars > MAX_SCALARS {
        bail!(LimitExceeded, "expression reduction: {scalars} constants and parameters; at most {MAX_SCALARS}");
    }
    let value = pro.nodes[pro.outputs[0] as usize].dtype;
    if value == DType::BF16 {
        return launch_reduce_bf16(stream, pro, epi, op, axes, keepdim, inputs, params, out);
    }
    let numel: usize = shape.iter().product();
    let mut sizes = vec![("elements", numel)];
    sizes.extend(shape.iter().map(|&d| ("a dim", d)));
    check_kernel_counts("expression reduction", &sizes)?;

    // The inputs the output depends on, their strides over the broadcast
    // shape, merged with the dense strides where every input allows.
    let live = pro.live();
    let read: Vec<u32> = (0..inputs.len() as u32)
        .filter(|&k| pro.nodes.iter().zip(&live).any(|(n, &l)| l && n.op == Op::Input(k)))
        .collect();
    let limit = dev.limits.max_storage_buffers_per_shader_stage;
    if read.len() as u32 + 2 > limit {
        bail!(
            LimitExceeded,
            "expression reduction: {} tensors to bind; this adapter binds at most {limit}",
            read.len() + 2
        );
    }
    let mut dense = vec![0isize; shape.len()];
    let mut n = 1isize;
    for d in (0..shape.len()).rev() {
        dense[d] = n;
        n *= shape[d] as isize;
    }
    let mut strides = vec![dense];
    strides.extend(read.iter().map(|&k| broadcast_strides(&inputs[k as usize], &shape)));
    let (mut mshape, mut mstrides) = coalesce(&shape, &strides);
    if mshape.is_empty() {
        mshape.push(1);
        mstrides.iter_mut().for_each(|s| s.push(0));
    }
    let rank = mshape.len();
    let last = rank - 1;
    let mut layout = ReduceLayout { rank, vec4: false, dense: [false; MAX_INPUTS], splat: [false; MAX_INPUTS] };
    for (i, &k) in read.iter().enumerate() {
        layout.dense[k as usize] = mstrides[1 + i] == mstrides[0];
    }
    let aligned = |i: usize, k: u32| {
        inputs[k as usize].bound_offset().is_multiple_of(4) && mstrides[1 + i][..last].iter().all(|s| s % 4 == 0)
    };
    layout.vec4 = mshape[last].is_multiple_of(4)
        && read.iter().enumerate().all(|(i, &k)| match mstrides[1 + i][last] {
            1 => aligned(i, k),
            0 => true,
            _ => false,
        });
    if layout.vec4 {
        for (i, &k) in read.iter().enumerate() {
            layout.splat[k as usize] = mstrides[1 + i][last] == 0;
        }
    }

    let reduced = reduced_dtype(op, value);
    let kind = ReduceKind { types: [value, accumulator(value), reduced], subgroups: use_subgroups(dev) };
    let pro_slots = scalar_slots(pro);
    let slots: Vec<(&Expr, usize, u32)> = pro_slots
        .iter()
        .map(|&id| (pro, 0, id))
        .chain(epi.into_iter().flat_map(|e| scalar_slots(e).into_iter().map(move |id| (e, pro.params.len(), id))))
        .collect();
    let mut p = FusedParams {
        base: bytemuck::Zeroable::zeroed(),
        nan: 0x7fc0_0000,
        inf: 0x7f80_0000,
        _pad0: 0,
        _pad1: 0,
        shape: [[1; 4]; MAX_RANK / 4],
        off: [[0; 4]; MAX_INPUTS / 4],
        st: [[0; 4]; MAX_INPUTS * MAX_RANK / 4],
        s: [[0; 4]; MAX_SCALARS / 4],
    };
    for (d, &n) in mshape.iter().enumerate() {
        p.shape[d / 4][d % 4] = n as u32;
    }
    for (i, &k) in read.iter().enumerate() {
        let k = k as usize;
        p.off[k / 4][k % 4] = inputs[k].bound_offset();
        for (d, &s) in mstrides[1 + i].iter().enumerate() {
            let at = k * MAX_RANK + d;
            p.st[at / 4][at % 4] = s as i32;
        }
    }
    for (j, &(e, base, id)) in slots.iter().enumerate() {
        let n = e.nodes[id as usize];
        let v = match n.op {
            Op::Scalar(v) => v,
            Op::Param(k) => params[base + k as usize],
            _ => unreachable!("slots hold scalars and parameters"),
        };
        p.s[j / 4][j % 4] = slot_bits(n.dtype, v);
    }
    let key = structure_key(pro, epi, &layout, &kind);
    let fused = Fused { pro, epi, layout, key, kind, inputs, read: &read, template: p };
    reduce_fused(stream, op, &fused, value, &shape, axes, keepdim, out)
}

/// The generated module of one launch and what its kernels bind.
struct Fused<'x, 'a> {
    pro: &'x Expr,
    epi: Option<&'x Expr>,
    layout: ReduceLayout,
    /// The module's structure key (`structure_key`).
    key: Vec<u64>,
    kind: ReduceKind,
    inputs: &'x [Tensor<'a>],
    read: &'x [u32],
    /// The uniform with the prologue's fields filled.
    template: FusedParams,
}

impl FusedInput for Fused<'_, '_> {
    fn record(
        &self,
        stream: &StreamShared,
        entry: &'static str,
        types: [DType; 3],
        op: u32,
        lanes: u32,
        params: &ReduceParams,
        args: &[Arg],
        groups: [u32; 3],
    ) -> Result<()> {
        if types != self.kind.types {
            bail!(
                Internal,
                "expression reduction: the planner asks for types {types:?}, generated for {:?}",
                self.kind.types
            );
        }
        let dev = &stream.device;
        let constants = [("OP", op as f64), ("LANES", lanes as f64)];
        let source = || generate_reduce(self.pro, self.epi, &self.layout, &self.kind).source;
        let kernel = dev.kernels.generated.get_entry(dev, &self.key, entry, &constants, source)?;
        let binding = |name: &str| kernel.bindings.iter().find(|b| b.name == name).map(|b| b.binding);
        let mut binds: Vec<Bind> = Vec::with_capacity(self.read.len() + args.len());
        // Entries that read no input (reduce_finish) bind none.
        for &k in self.read {
            if let Some(b) = binding(&format!("in{k}")) {
                binds.push(self.inputs[k as usize].bind(b));
            }
        }
        for a in args {
            let Some(b) = binding(a.name) else {
                bail!(Internal, "generated kernel {entry} has no binding {}", a.name)
            };
            binds.push(Bind { binding: b, buffer: a.buffer, offset: a.offset, size: a.size });
        }
        let mut p = self.template;
        p.base = *params;
        stream.launch(&kernel, &binds, Some(bytemuck::bytes_of(&p)), Groups::Direct(groups))
    }
}
