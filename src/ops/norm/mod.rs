//! Row-wise normalisation: layer and RMS norms (`layer`, with short rows in
//! `rows`), the same with a residual add (`residual`), batch norm (`batch`,
//! `batch_fast`) and softmax (`softmax`, `softmax_rows`). The children
//! share `common`; none imports this file.

pub mod batch;
pub mod batch_fast;
pub mod common;
pub mod layer;
pub mod residual;
pub mod rows;
pub mod softmax;
pub mod softmax_rows;

pub use common::check_param;
pub use layer::{norm, NormParams, FAMILY, FAMILY_SUBGROUPS};
