//! Built-in operators: validate shapes and dtypes, pick a kernel variant,
//! record its launches on a stream. Everything runs on the GPU.

pub mod common;
pub mod fill;
pub mod grid;
pub mod tensor;
pub mod matmul;
pub mod conv;
pub mod pool;
