//! The one text substitution the kernel spec makes, for what WGSL cannot
//! express otherwise: element types. A variant's source is its shader file
//! after a prelude of
//!
//! ```text
//! enable f16;                       (only when some slot is f16)
//! enable wgpu_cooperative_matrix;    (only when the file uses `coop_mat` types)
//! alias T = f32;                    (one line per type slot, in the family's order)
//! const T_KIND = 0u;                (its kind: 0 f32, 1 f16, 2 i32, 3 u32)
//! ```
//!
//! Shader files therefore use their slot names (`T`, `I`, `A`, ...) without
//! declaring them (the kind lets code that serves several dtypes pick the
//! dtype's arithmetic with a `const` condition), and contain no other placeholders: every other choice is
//! an `override` (pipeline constant) or a `const` in the file.

use crate::ops::tensor::DType;
use std::fmt::Write;

/// A dtype's kind constant.
fn kind(d: DType) -> u32 {
    match d {
        DType::F32 => 0,
        DType::F16 => 1,
        DType::I32 => 2,
        DType::U32 => 3,
        // No family declares bf16 in a type slot (kernels bind it as u32 words).
        DType::BF16 => 4,
    }
}

/// The prelude for `aliases` ((slot name, dtype) pairs) followed by `body`.
pub fn render(aliases: &[(&str, DType)], body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 128);
    if aliases.iter().any(|&(_, d)| d == DType::F16) {
        out.push_str("enable f16;\n");
    }
    if body.contains("coop_mat") {
        out.push_str("enable wgpu_cooperative_matrix;\n");
    }
    for (name, d) in aliases {
        let d = *d;
        let _ = writeln!(out, "alias {name} = {};\nconst {name}_KIND = {}u;", d.wgsl(), kind(d));
    }
    out.push_str(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prelude_enables_f16_only_when_used() {
        let s = render(&[("T", DType::F16), ("I", DType::U32)], "body");
        assert_eq!(s, "enable f16;\nalias T = f16;\nconst T_KIND = 1u;\nalias I = u32;\nconst I_KIND = 3u;\nbody");
        let s = render(&[("T", DType::F32)], "body");
        assert_eq!(s, "alias T = f32;\nconst T_KIND = 0u;\nbody");
        let s = render(&[("H", DType::F16)], "var m: coop_mat16x16<H, A>;");
        assert_eq!(s, "enable f16;\nenable wgpu_cooperative_matrix;\nalias H = f16;\nconst H_KIND = 1u;\nvar m: coop_mat16x16<H, A>;");
    }
}
