//! How the profiler describes an operator call: its operands' dtypes and
//! shapes, the bytes they span and, where the operator says, its FLOPs.

use super::tensor::{DType, Tensor};
use crate::runtime::profiler::OpCall;

pub fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "f32",
        DType::F16 => "f16",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::BF16 => "bf16",
    }
}

fn describe(t: &Tensor) -> String {
    let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", dtype_name(t.dtype), dims.join(","))
}

/// Bytes a view spans once: broadcast (zero-stride) dims count once.
fn bytes(t: &Tensor) -> u64 {
    let distinct = t.shape.iter().zip(&t.strides).filter(|(_, &s)| s != 0).map(|(&d, _)| d as u64).product::<u64>();
    distinct * t.dtype.size() as u64
}

/// The call `name` reading `inputs` and writing `outputs`, with `flops`
/// floating-point operations (0: not known).
pub fn call(name: impl Into<String>, inputs: &[&Tensor], outputs: &[&Tensor], flops: u64) -> OpCall {
    let ins: Vec<String> = inputs.iter().map(|t| describe(t)).collect();
    let outs: Vec<String> = outputs.iter().map(|t| describe(t)).collect();
    OpCall {
        name: name.into(),
        shapes: match ins.is_empty() {
            true => format!("-> {}", outs.join(", ")),
            false => format!("{} -> {}", ins.join(", "), outs.join(", ")),
        },
        flops,
        bytes: inputs.iter().chain(outputs).map(|t| bytes(t)).sum(),
        host_ns: 0,
    }
}

/// FLOPs of a product whose output is `out` with an inner dimension of `k`.
pub fn product_flops(out: &Tensor, k: usize) -> u64 {
    2 * out.numel() as u64 * k as u64
}

/// The inner (summed) dimension of a product's left operand `a`, (..., M, K)
/// or, transposed, (..., K, M); 0 where `a` has fewer than two dims.
pub fn inner_dim(a: &Tensor, transposed: bool) -> usize {
    let r = a.shape.len();
    match (r >= 2, transposed) {
        (false, _) => 0,
        (true, false) => a.shape[r - 1],
        (true, true) => a.shape[r - 2],
    }
}
