//! The kernel spec: the one way an operator describes its kernel, and the
//! one path from a call to a recorded launch:
//!
//! ```text
//! validate (the operator) -> plan: Launch { variant, params, args, groups } -> record
//! ```
//!
//! - `family`: a shader file with its entry points, element-type slots and
//!   `override` constants (`Family`), and one choice of each (`Variant`),
//!   whose fixed-size cache key names every choice.
//! - `prelude`: the only text substitution (`enable f16;` and `alias T = f32;`
//!   lines); everything else varies through `override`s or `const`s in WGSL.
//! - `uniform`: one `#[repr(C)]`, `Pod` uniform struct per family, declared
//!   with `uniform!` so a test can compare its layout with the WGSL struct.
//! - `launch`: bindings by name, a view bound as the range it touches, and
//!   recording.
//! - `output`: the output check every operator runs.
//!
//! A family's `source` may be several files joined with
//! `concat!(include_str!(..), ..)`: code two families share lives once in a
//! fragment file (starting `// Fragment:`), e.g. shaders/gemm_tile.wgsl, the
//! GEMM micro-kernel of the matmul and conv families. Derived overrides
//! (`override BM: u32 = 64u * RM;`) are computed from declared ones and are
//! not declared themselves.
//!
//! Temporaries come from `ops::split::scratch` (dropping one after recording
//! is safe: recorded work holds a lease on what it uses).
//!
//! CONTRIBUTING.md walks through adding an operator and a family.

pub mod family;
pub mod launch;
pub mod output;
pub mod prelude;
pub mod uniform;

pub use family::{Family, OverrideSlot, TypeSlot, Variant};
pub use launch::{record, view_arg, Arg, Launch};
pub use output::{check_output, Sharing};
pub use uniform::{pack_i32, pack_u32, Uniform};
