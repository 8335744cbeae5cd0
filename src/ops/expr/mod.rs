//! Elementwise expressions: a DAG of the elementwise operators over input
//! views, scalar constants and per-launch parameters (ir.rs), compiled into
//! one generated kernel per structure and layout class (codegen.rs) and
//! launched as one dispatch (launch.rs); and reductions of an expression's
//! value with an elementwise epilogue, generated into the reduce family's
//! kernels (reduce_codegen.rs, reduce_launch.rs).

pub mod codegen;
pub mod ir;
pub mod launch;
pub mod reduce_bf16;
pub mod reduce_codegen;
pub mod reduce_launch;
