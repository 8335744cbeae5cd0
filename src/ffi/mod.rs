//! The C ABI: the only code with `extern "C"`, raw pointers and
//! `#[no_mangle]`. Each function checks and converts its arguments, calls
//! into `ops` or `runtime`, and turns the result into a `WgcStatus`.

// The exports' pointer contracts are documented where C callers read them,
// in include/wgcompute.h: its conventions (cbindgen.toml's header) hold for
// every function, and each export's doc comment, which cbindgen copies
// there, says what its arguments may be (e.g. NULL) and must point to. The
// header is the documentation, so there are no `# Safety` sections here.
#![allow(clippy::missing_safety_doc)]

// cbindgen writes the header's declarations in the order it reads these
// modules, so this order is the order of include/wgcompute.h (blank lines
// keep rustfmt from sorting the groups into one).
pub mod boundary;
pub mod buffer;
pub mod device;
pub mod event;
pub mod expr;
pub mod expr_reduce;
pub mod instance;
pub mod kernel;
pub mod ops_attention;
pub mod ops_norm;
pub mod ops_norm_residual;
pub mod ops_reduce;
pub mod ops_rope;
pub mod ops_scan;
pub mod ops_topk;

pub mod ops_concat;
pub mod ops_elementwise;
pub mod ops_index;
pub mod ops_movement;

pub mod sized;
pub mod status;
pub mod stream;

pub mod graph;
pub mod tensor;

pub mod ops_matmul;
pub mod ops_matmul_explain;

pub mod ops_conv;
pub mod ops_conv_explain;

pub mod comm;
pub mod ops_conv_bn_act;
pub mod ops_conv_bn_act_residual;
pub mod ops_conv_fold;
pub mod ops_gemm_epilogue;
pub mod peer;
pub mod profile;
pub mod profile_table;
pub mod text_out;
