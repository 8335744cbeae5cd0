//! The replay scalars built-in operators declare while a stream captures
//! (runtime/graph_scalars.rs): which parameter field holds each, how a
//! replay's value is encoded there, and which values keep the captured
//! kernels in bounds.

use crate::ops::elementwise::map::Scalar;
use crate::ops::tensor::DType;
use crate::runtime::graph_scalars::ScalarDecl;
use std::sync::Arc;

/// Scalar operand `k` of an elementwise map over `dtype` (the map's `sf`
/// word for floats, `su` for integers, as `Scalar::of` converts it).
pub fn elementwise(name: &'static str, k: u32, dtype: DType, captured: f64) -> ScalarDecl {
    let float = dtype.is_float();
    ScalarDecl {
        name,
        field: if float { "sf" } else { "su" },
        word: k,
        captured,
        encode: Arc::new(move |v| {
            let s = Scalar::of(dtype, v);
            if float {
                s.value.to_bits()
            } else {
                s.bits
            }
        }),
        min: f64::MIN,
        max: f64::MAX,
        integral: false,
        finite: false,
        one_launch: false,
        fixed: None,
    }
}

/// A count the kernels index with, `min..=max`, in the u32 field `field`;
/// `encode` maps the caller's value to the field's (0 meaning "all").
pub fn count(
    name: &'static str,
    field: &'static str,
    captured: u32,
    min: u32,
    max: u32,
    encode: impl Fn(f64) -> u32 + Send + Sync + 'static,
) -> ScalarDecl {
    ScalarDecl {
        name,
        field,
        word: 0,
        captured: captured as f64,
        encode: Arc::new(encode),
        min: min as f64,
        max: max as f64,
        integral: true,
        finite: true,
        one_launch: false,
        fixed: None,
    }
}
