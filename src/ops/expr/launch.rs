//! Launching an expression: check the views against the expression
//! (counts, dtypes, broadcasting, the output checks), pick the layout class
//! (rank after coalescing, vec4 units where every view allows), fill the
//! uniform (offsets, strides, scalar slots), and record one dispatch of the
//! generated kernel, compiled on first use and cached by its text.

use super::codegen::{generate, Layout, OPERANDS, WG};
use super::ir::{Expr, Memo, MemoKey, NodeId, Op, MAX_INPUTS, MAX_SCALARS, MEMO_ENTRIES};
use crate::bail;
use crate::error::Result;
use crate::ops::elementwise::map::Scalar;
use crate::ops::grid::grid_1d;
use crate::ops::spec::{check_output, Sharing};
use crate::ops::tensor::{
    broadcast_strides, check_kernel_counts, coalesce, in_memory_order, same_device, DType, Tensor, MAX_RANK,
};
use crate::runtime::kernel::Kernel;
use crate::runtime::stream::{Bind, Groups, StreamShared};
use std::sync::Arc;

/// The generated kernels' `struct Params` (codegen.rs's `uniform_decl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ExprParams {
    pub n: u32,
    pub row: u32,
    pub nan: u32,
    pub inf: u32,
    pub shape: [[u32; 4]; MAX_RANK / 4],
    pub off: [[u32; 4]; OPERANDS / 4],
    pub st: [[i32; 4]; OPERANDS * MAX_RANK / 4],
    pub s: [[u32; 4]; MAX_SCALARS / 4],
}

/// A scalar's bits in its uniform slot: floats as the f32 holding the
/// dtype's value, integers as their bits.
pub(super) fn slot_bits(dtype: DType, v: f64) -> u32 {
    let s = Scalar::of(dtype, v);
    if dtype.is_float() {
        s.value.to_bits()
    } else {
        s.bits
    }
}

fn check_counts(e: &Expr, inputs: &[Tensor], outputs: &[Tensor], params: &[f64]) -> Result<()> {
    if e.outputs.is_empty() {
        bail!(InvalidArgument, "expression: it has no outputs (add one with wgc_expr_output)");
    }
    let counts = [("inputs", inputs.len(), e.inputs.len()), ("outputs", outputs.len(), e.outputs.len())];
    for (what, got, want) in counts {
        if got != want {
            bail!(InvalidArgument, "expression: {got} {what} given, the expression has {want}");
        }
    }
    if params.len() != e.params.len() {
        bail!(InvalidArgument, "expression: {} parameters given, the expression has {}", params.len(), e.params.len());
    }
    for (k, t) in inputs.iter().enumerate() {
        if t.dtype != e.inputs[k] {
            bail!(
                DtypeMismatch,
                "expression: input {k} is {}, the expression reads {}",
                t.dtype.wgsl(),
                e.inputs[k].wgsl()
            );
        }
    }
    for (j, t) in outputs.iter().enumerate() {
        let want = e.nodes[e.outputs[j] as usize].dtype;
        if t.dtype != want {
            bail!(DtypeMismatch, "expression: output {j} is {}, the expression writes {}", t.dtype.wgsl(), want.wgsl());
        }
    }
    Ok(())
}

fn check_shapes(inputs: &[Tensor], outputs: &[Tensor]) -> Result<()> {
    let shape = &outputs[0].shape;
    for (j, t) in outputs.iter().enumerate() {
        if &t.shape != shape {
            bail!(ShapeMismatch, "expression: output {j} has shape {:?}, output 0 {shape:?}", t.shape);
        }
    }
    for (k, t) in inputs.iter().enumerate() {
        let pad = shape.len().checked_sub(t.rank());
        let fits = pad.is_some_and(|pad| t.shape.iter().enumerate().all(|(i, &d)| d == 1 || d == shape[pad + i]));
        if !fits {
            bail!(ShapeMismatch, "expression: input {k} of shape {:?} does not broadcast to {shape:?}", t.shape);
        }
    }
    Ok(())
}

/// Outputs may share no buffer with an input or with each other.
fn check_outputs(inputs: &[Tensor], outputs: &[Tensor]) -> Result<()> {
    let names: Vec<String> = (0..inputs.len()).map(|k| format!("input {k}")).collect();
    let onames: Vec<String> = (0..outputs.len()).map(|j| format!("output {j}")).collect();
    for (j, out) in outputs.iter().enumerate() {
        let mut others: Vec<(&str, &Tensor)> = inputs.iter().enumerate().map(|(k, t)| (names[k].as_str(), t)).collect();
        others.extend(outputs.iter().enumerate().filter(|&(i, _)| i != j).map(|(i, t)| (onames[i].as_str(), t)));
        check_output(&format!("expression output {j}"), out, &others, Sharing::Separate)?;
    }
    Ok(())
}

/// Record `e` over `inputs` into `outputs` with `params` on `stream`.
pub fn launch(
    stream: &StreamShared,
    e: &mut Expr,
    inputs: &[Tensor],
    outputs: &[Tensor],
    params: &[f64],
) -> Result<()> {
    let dev = &stream.device;
    check_counts(e, inputs, outputs, params)?;
    let all: Vec<&Tensor> = inputs.iter().chain(outputs).collect();
    same_device(dev, &all)?;
    for d in e.nodes.iter().map(|n| n.dtype) {
        d.check_device_bf16(dev)?;
    }
    check_shapes(inputs, outputs)?;
    check_outputs(inputs, outputs)?;
    let shape = outputs[0].shape.clone();
    let numel = outputs[0].numel();
    if numel == 0 {
        return Ok(());
    }
    let mut sizes = vec![("elements", numel)];
    sizes.extend(shape.iter().map(|&d| ("a dim", d)));
    check_kernel_counts("expression", &sizes)?;

    // Operand slots: inputs at their index, outputs after MAX_INPUTS; only
    // the inputs the outputs depend on are read.
    let live = e.live();
    let read: Vec<usize> = (0..inputs.len())
        .filter(|&k| e.nodes.iter().zip(&live).any(|(n, &l)| l && n.op == Op::Input(k as u32)))
        .collect();
    let mut operands: Vec<(usize, &Tensor)> = read.iter().map(|&k| (k, &inputs[k])).collect();
    operands.extend(outputs.iter().enumerate().map(|(j, t)| (MAX_INPUTS + j, t)));
    let strides: Vec<Vec<isize>> = operands.iter().map(|(_, t)| broadcast_strides(t, &shape)).collect();
    // Walked in the first output's memory order: channels-last views coalesce.
    let key = operands.len() - outputs.len();
    let (shape, strides) = in_memory_order(&shape, strides, key);
    let (mut cshape, mut cstrides) = coalesce(&shape, &strides);
    if cshape.is_empty() {
        cshape.push(1);
        cstrides.iter_mut().for_each(|s| s.push(0));
    }
    let rank = cshape.len();
    let last = rank - 1;

    // vec4 units: every operand dense along the innermost dim (or, for an
    // input, constant along it), 4-aligned elsewhere.
    let mut splat = [false; MAX_INPUTS];
    let aligned =
        |i: usize| operands[i].1.bound_offset().is_multiple_of(4) && cstrides[i][..last].iter().all(|s| s % 4 == 0);
    let vec4 = cshape[last] % 4 == 0
        && (0..operands.len()).all(|i| {
            let (slot, _) = operands[i];
            match cstrides[i][last] {
                1 => aligned(i),
                0 if slot < MAX_INPUTS => {
                    splat[slot] = true;
                    true
                }
                _ => false,
            }
        });
    if !vec4 {
        splat = [false; MAX_INPUTS];
    } else {
        cshape[last] /= 4;
        for s in &mut cstrides {
            s[last] *= 4;
        }
    }
    let layout = Layout { rank, vec4, splat };
    let limit = dev.limits.max_storage_buffers_per_shader_stage;
    if operands.len() as u32 > limit {
        bail!(LimitExceeded, "expression: {} tensors to bind; this adapter binds at most {limit}", operands.len());
    }

    let (kernel, slots) = kernel_for(stream, e, &layout)?;

    let units: usize = cshape.iter().product();
    let (groups, row) = grid_1d(units as u64, WG, dev.limits.max_compute_workgroups_per_dimension);
    let mut p = ExprParams {
        n: units as u32,
        row,
        nan: 0x7fc0_0000,
        inf: 0x7f80_0000,
        shape: [[1; 4]; MAX_RANK / 4],
        off: [[0; 4]; OPERANDS / 4],
        st: [[0; 4]; OPERANDS * MAX_RANK / 4],
        s: [[0; 4]; MAX_SCALARS / 4],
    };
    for (d, &n) in cshape.iter().enumerate() {
        p.shape[d / 4][d % 4] = n as u32;
    }
    for (i, (slot, t)) in operands.iter().enumerate() {
        p.off[slot / 4][slot % 4] = t.bound_offset();
        for (d, &s) in cstrides[i].iter().enumerate() {
            let at = slot * MAX_RANK + d;
            p.st[at / 4][at % 4] = s as i32;
        }
    }
    for (k, &id) in slots.iter().enumerate() {
        let n = e.nodes[id as usize];
        let value = match n.op {
            Op::Scalar(v) => v,
            Op::Param(j) => params[j as usize],
            _ => unreachable!("slots hold scalars and parameters"),
        };
        p.s[k / 4][k % 4] = slot_bits(n.dtype, value);
    }
    let binds = bindings(&kernel, &operands)?;
    stream.launch(&kernel, &binds, Some(bytemuck::bytes_of(&p)), Groups::Direct(groups))
}

/// Each operand bound to its variable (`in<k>`, `out<j>`), found by name.
fn bindings<'a>(kernel: &Kernel, operands: &[(usize, &Tensor<'a>)]) -> Result<Vec<Bind<'a>>> {
    operands
        .iter()
        .map(|&(slot, t)| {
            let name = if slot < MAX_INPUTS { format!("in{slot}") } else { format!("out{}", slot - MAX_INPUTS) };
            match kernel.bindings.iter().find(|b| b.name == name) {
                Some(b) => Ok(t.bind(b.binding)),
                None => bail!(Internal, "generated kernel has no binding {name}"),
            }
        })
        .collect()
}

/// The kernel of `e` for `layout` and its scalar slots: from the
/// expression's memo (no text generated or hashed) while the device's
/// cache still holds that kernel, else generated and looked up by text.
fn kernel_for(stream: &StreamShared, e: &mut Expr, layout: &Layout) -> Result<(Arc<Kernel>, Arc<[NodeId]>)> {
    let dev = &stream.device;
    let key = MemoKey { device: dev.id, layout: *layout, nodes: e.nodes.len(), outputs: e.outputs.len() };
    if let Some(m) = e.memo.iter().find(|m| m.key == key) {
        if let Some(k) = m.kernel.upgrade() {
            return Ok((k, m.slots.clone()));
        }
    }
    let gen = generate(e, layout);
    let source: Arc<str> = gen.source.into();
    let (kernel, _) = dev.kernels.generated.get(dev, &source)?;
    let slots: Arc<[NodeId]> = gen.slots.into();
    e.memo.retain(|m| m.key != key);
    if e.memo.len() >= MEMO_ENTRIES {
        e.memo.remove(0);
    }
    e.memo.push(Memo { key, kernel: Arc::downgrade(&kernel), slots: slots.clone() });
    Ok((kernel, slots))
}
