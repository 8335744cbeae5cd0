//! Built-in operators: validate shapes and dtypes, pick a kernel variant,
//! record its launches on a stream. Everything runs on the GPU.

pub mod common;
pub mod concat;
pub mod conv;
pub mod cumsum;
pub mod elementwise;
pub mod elementwise_map;
pub mod fill;
pub mod gather;
pub mod gemm_coop;
pub mod grid;
pub mod half;
pub mod matmul;
pub mod movement;
pub mod norm;
pub mod norm_batch;
pub mod norm_rows;
pub mod pool;
pub mod random;
pub mod reduce;
pub mod reduce_axes;
pub mod reduce_columns;
pub mod reduce_kernels;
pub mod rope;
pub mod softmax;
pub mod softmax_rows;
pub mod spec;
pub mod split;
pub mod tensor;
pub mod topk;

/// Every kernel family on the kernel spec (the offline tests compile each
/// variant and check each uniform's layout).
pub static FAMILIES: &[&spec::Family] = &[
    &concat::FAMILY,
    &cumsum::FAMILY,
    &gather::FAMILY,
    &norm_rows::FAMILY,
    &reduce_columns::FAMILY,
    &rope::FAMILY,
    &softmax_rows::FAMILY,
    &topk::FAMILY,
];
