//! The expression IR: a DAG of elementwise operations over input tensors,
//! scalar constants and per-launch parameters, built node by node. A node
//! may only name nodes built before it, so every expression is acyclic by
//! construction; each node's dtype is checked as it is added, with the
//! rules of the separate operators (no implicit promotion), so a built
//! expression always compiles.

use super::codegen::Layout;
use crate::bail;
use crate::error::Result;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::tensor::DType;
use crate::runtime::kernel::Kernel;
use std::sync::{Arc, Weak};

/// Most nodes one expression may have.
pub(crate) const MAX_NODES: usize = 256;
/// Most input tensors.
pub(crate) const MAX_INPUTS: usize = 12;
/// Most output tensors.
pub(crate) const MAX_OUTPUTS: usize = 4;
/// Most scalar constants and parameters together (each takes a uniform slot).
pub(crate) const MAX_SCALARS: usize = 32;

/// A node's index in its expression.
pub type NodeId = u32;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Input tensor `k` (the k-th input added).
    Input(u32),
    /// A constant, already converted to the node's dtype (as
    /// `wgc_op_binary_scalar` converts its scalar).
    Scalar(f64),
    /// Launch parameter `k`, converted to the node's dtype at launch.
    Param(u32),
    Unary(UnaryOp, NodeId),
    Binary(BinaryOp, NodeId, NodeId),
    /// mask (u32) != 0 ? a : b.
    Where(NodeId, NodeId, NodeId),
    Fma(NodeId, NodeId, NodeId),
    /// The operand converted to the node's dtype (as `wgc_op_cast`).
    Cast(NodeId),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Node {
    pub op: Op,
    pub dtype: DType,
}

/// An expression being built or ready to launch.
#[derive(Clone, Debug, Default)]
pub struct Expr {
    pub nodes: Vec<Node>,
    /// The input dtypes, in input order.
    pub inputs: Vec<DType>,
    /// The parameter dtypes, in parameter order.
    pub params: Vec<DType>,
    pub outputs: Vec<NodeId>,
    /// Kernels launched lately (launch.rs): an expression only grows, so
    /// its node and output counts name its structure.
    pub memo: Vec<Memo>,
}

/// Most kernels an expression remembers.
pub(crate) const MEMO_ENTRIES: usize = 4;

/// What a remembered kernel was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoKey {
    pub device: u64,
    pub layout: Layout,
    pub nodes: usize,
    pub outputs: usize,
}

/// A kernel an expression launched, held weakly (the device's cache owns
/// it), with its scalar slots.
#[derive(Clone, Debug)]
pub struct Memo {
    pub key: MemoKey,
    pub kernel: Weak<Kernel>,
    pub slots: Arc<[NodeId]>,
}

impl Expr {
    fn push(&mut self, op: Op, dtype: DType) -> Result<NodeId> {
        if self.nodes.len() >= MAX_NODES {
            bail!(LimitExceeded, "expression: more than {MAX_NODES} nodes");
        }
        self.nodes.push(Node { op, dtype });
        Ok((self.nodes.len() - 1) as NodeId)
    }

    fn scalar_count(&self) -> usize {
        self.nodes.iter().filter(|n| matches!(n.op, Op::Scalar(_) | Op::Param(_))).count()
    }

    fn check_scalar_room(&self) -> Result<()> {
        if self.scalar_count() >= MAX_SCALARS {
            bail!(LimitExceeded, "expression: more than {MAX_SCALARS} scalars and parameters");
        }
        Ok(())
    }

    /// The dtype of node `id`, or InvalidArgument for a node not built yet
    /// (which is also how a cycle would have to be written).
    pub fn dtype(&self, id: NodeId) -> Result<DType> {
        match self.nodes.get(id as usize) {
            Some(n) => Ok(n.dtype),
            None => bail!(
                InvalidArgument,
                "expression: node {id} does not exist (the expression has {} nodes; a node may only use nodes built before it)",
                self.nodes.len()
            ),
        }
    }

    pub fn input(&mut self, dtype: DType) -> Result<NodeId> {
        if self.inputs.len() >= MAX_INPUTS {
            bail!(LimitExceeded, "expression: more than {MAX_INPUTS} inputs");
        }
        let id = self.push(Op::Input(self.inputs.len() as u32), dtype)?;
        self.inputs.push(dtype);
        Ok(id)
    }

    pub fn scalar(&mut self, dtype: DType, value: f64) -> Result<NodeId> {
        self.check_scalar_room()?;
        self.push(Op::Scalar(value), dtype)
    }

    pub fn param(&mut self, dtype: DType) -> Result<NodeId> {
        self.check_scalar_room()?;
        let id = self.push(Op::Param(self.params.len() as u32), dtype)?;
        self.params.push(dtype);
        Ok(id)
    }

    pub fn unary(&mut self, op: UnaryOp, a: NodeId) -> Result<NodeId> {
        let t = self.dtype(a)?;
        let int_ok = matches!(op, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu);
        if !(t.is_float() || int_ok && t == DType::I32) {
            bail!(
                Unsupported,
                "expression: {op:?} supports f32, f16 and bf16{}, not {}",
                if int_ok { " and i32" } else { "" },
                t.wgsl()
            );
        }
        self.push(Op::Unary(op, a), t)
    }

    pub fn binary(&mut self, op: BinaryOp, a: NodeId, b: NodeId) -> Result<NodeId> {
        let (ta, tb) = (self.dtype(a)?, self.dtype(b)?);
        if ta != tb {
            bail!(DtypeMismatch, "expression: {op:?} of {} and {} (cast one first)", ta.wgsl(), tb.wgsl());
        }
        if op == BinaryOp::Pow && !ta.is_float() {
            bail!(Unsupported, "expression: pow supports f32, f16 and bf16, not {}", ta.wgsl());
        }
        let out = if op.is_comparison() { DType::U32 } else { ta };
        self.push(Op::Binary(op, a, b), out)
    }

    pub fn where_(&mut self, mask: NodeId, a: NodeId, b: NodeId) -> Result<NodeId> {
        let (tm, ta, tb) = (self.dtype(mask)?, self.dtype(a)?, self.dtype(b)?);
        if tm != DType::U32 {
            bail!(DtypeMismatch, "expression: where's mask must be u32, not {}", tm.wgsl());
        }
        if ta != tb {
            bail!(DtypeMismatch, "expression: where of {} and {}", ta.wgsl(), tb.wgsl());
        }
        self.push(Op::Where(mask, a, b), ta)
    }

    pub fn fma(&mut self, a: NodeId, b: NodeId, c: NodeId) -> Result<NodeId> {
        let (ta, tb, tc) = (self.dtype(a)?, self.dtype(b)?, self.dtype(c)?);
        if ta != tb || ta != tc {
            bail!(DtypeMismatch, "expression: fma of {}, {}, {}", ta.wgsl(), tb.wgsl(), tc.wgsl());
        }
        self.push(Op::Fma(a, b, c), ta)
    }

    pub fn cast(&mut self, a: NodeId, dtype: DType) -> Result<NodeId> {
        self.dtype(a)?;
        self.push(Op::Cast(a), dtype)
    }

    pub fn output(&mut self, node: NodeId) -> Result<u32> {
        self.dtype(node)?;
        if self.outputs.len() >= MAX_OUTPUTS {
            bail!(LimitExceeded, "expression: more than {MAX_OUTPUTS} outputs");
        }
        self.outputs.push(node);
        Ok(self.outputs.len() as u32 - 1)
    }

    /// The nodes the outputs depend on, by id: the generated kernel
    /// computes only these and binds only the inputs among them.
    pub fn live(&self) -> Vec<bool> {
        let mut live = vec![false; self.nodes.len()];
        for &o in &self.outputs {
            live[o as usize] = true;
        }
        // Operands precede their users, so one backward sweep suffices.
        for id in (0..self.nodes.len()).rev() {
            if live[id] {
                for a in operands(&self.nodes[id].op) {
                    live[a as usize] = true;
                }
            }
        }
        live
    }
}

/// The nodes `op` reads.
pub fn operands(op: &Op) -> Vec<NodeId> {
    match *op {
        Op::Input(_) | Op::Scalar(_) | Op::Param(_) => vec![],
        Op::Unary(_, a) | Op::Cast(a) => vec![a],
        Op::Binary(_, a, b) => vec![a, b],
        Op::Where(a, b, c) | Op::Fma(a, b, c) => vec![a, b, c],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn dtypes_follow_the_separate_operators() {
        let mut e = Expr::default();
        let a = e.input(DType::F16).unwrap();
        let b = e.input(DType::F32).unwrap();
        assert!(matches!(e.binary(BinaryOp::Add, a, b), Err(Error::DtypeMismatch(_))));
        let c = e.cast(a, DType::F32).unwrap();
        let s = e.binary(BinaryOp::Add, c, b).unwrap();
        assert_eq!(e.dtype(s).unwrap(), DType::F32);
        let lt = e.binary(BinaryOp::Lt, c, b).unwrap();
        assert_eq!(e.dtype(lt).unwrap(), DType::U32);
        assert!(e.where_(lt, c, b).is_ok());
        assert!(matches!(e.where_(c, c, b), Err(Error::DtypeMismatch(_))));
        let i = e.input(DType::U32).unwrap();
        assert!(matches!(e.unary(UnaryOp::Exp, i), Err(Error::Unsupported(_))));
        assert!(matches!(e.binary(BinaryOp::Pow, i, i), Err(Error::Unsupported(_))));
    }

    #[test]
    fn later_nodes_and_limits_are_refused() {
        let mut e = Expr::default();
        let a = e.input(DType::F32).unwrap();
        assert!(matches!(e.unary(UnaryOp::Neg, a + 1), Err(Error::InvalidArgument(_))));
        assert!(matches!(e.output(7), Err(Error::InvalidArgument(_))));
        for _ in 1..MAX_INPUTS {
            e.input(DType::F32).unwrap();
        }
        assert!(matches!(e.input(DType::F32), Err(Error::LimitExceeded(_))));
        for _ in 0..MAX_SCALARS {
            e.scalar(DType::F32, 1.0).unwrap();
        }
        assert!(matches!(e.param(DType::F32), Err(Error::LimitExceeded(_))));
        while e.nodes.len() < MAX_NODES {
            e.unary(UnaryOp::Neg, a).unwrap();
        }
        assert!(matches!(e.unary(UnaryOp::Neg, a), Err(Error::LimitExceeded(_))));
    }

    #[test]
    fn live_nodes_are_those_outputs_reach() {
        let mut e = Expr::default();
        let a = e.input(DType::F32).unwrap();
        let b = e.input(DType::F32).unwrap();
        let dead = e.unary(UnaryOp::Exp, b).unwrap();
        let y = e.unary(UnaryOp::Neg, a).unwrap();
        e.output(y).unwrap();
        assert_eq!(e.live(), vec![true, false, false, true]);
        let _ = dead;
    }
}
