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
//! **Strategy families.** A kernel whose workgroup reduction comes in two
//! strategies (reduce.wgsl, softmax.wgsl, norm.wgsl: subgroup operations,
//! or workgroup memory only) is two families over the same file, whose
//! sources are `concat!` of the kernel file and one fragment:
//! reduce_wg_subgroups.wgsl or reduce_wg_shared.wgsl (plus
//! reduce_wg_allreduce.wgsl where the kernel needs all-reduces). The
//! fragments define the same `sg_*` functions, so the kernel file names
//! them once. They cannot be one family with a `const`/override switch: a
//! module that names a subgroup builtin does not compile where the adapter
//! lacks subgroups, even in dead code. The subgroup families are named
//! `<file>+subgroups`, listed in `ops::SUBGROUP_FAMILIES` (the offline test
//! validates them with the subgroup capability) and picked at run time by
//! `ops::reduce::kernels::strategy`. Likewise reduce.wgsl is one family per
//! accumulator type (`reduce.wgsl`, `reduce.wgsl:i32`, `reduce.wgsl:u32`),
//! so that only the (T, ACC, OUT) combinations the library uses are
//! declared and compiled.
//!
//! Temporaries that GPU commands write before they read come from
//! `StreamShared::ordered_scratch` (reused by the stream's later calls);
//! others from `ops::split::scratch` (dropping one after recording is
//! safe: recorded work holds a lease on what it uses).
//!
//! CONTRIBUTING.md walks through adding an operator and a family.

pub mod family;
pub mod launch;
pub mod output;
pub mod prelude;
pub mod uniform;

#[cfg(test)]
mod inline_size_test;

pub use family::{Family, OverrideSlot, TypeSlot, Variant};
pub use launch::{record, record_kernel, view_arg, Arg, Launch};
pub use output::{check_output, Sharing};
pub use uniform::{pack_i32, pack_u32, Uniform};
