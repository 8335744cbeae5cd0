//! Built-in operators: validate shapes and dtypes, pick a kernel variant,
//! record its launches on a stream. Everything runs on the GPU.

pub mod common;
pub mod elementwise;
pub mod elementwise_map;
pub mod fill;
pub mod grid;
pub mod movement;
pub mod random;
pub mod tensor;
