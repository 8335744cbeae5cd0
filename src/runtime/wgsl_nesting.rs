//! A bound on how deeply a WGSL source nests, found by scanning its text
//! before any parser sees it. naga's parser limits bracket nesting itself,
//! but operator chains (`x + x + ... + x`, `- - - x`, `v.x.x.x`) and
//! `else if` chains become trees as deep as they are long, which its lowering
//! pass, validator and SPIR-V writer walk recursively. Sources whose bound
//! exceeds `MAX_NESTING` are refused; the compiler's stack
//! (`compile_stack`) holds everything below it.
//!
//! The bound is sound: every level of an expression tree is an operator,
//! `.`, `[` or `(` of the statement holding the expression, and every level of
//! statement nesting is a `{` or an `else` around it. So the bound at a point
//! is the open braces plus the `else`s at each open level plus the operator
//! characters of the current statement (a statement ends at `;`, `{`, `}`).

use crate::bail;
use crate::error::Result;

/// Most nesting a kernel may have, in the units counted above. A chain of
/// 15,000 additions passes.
pub const MAX_NESTING: usize = 16_384;

/// Characters that may each add one level to an expression tree.
fn nests(c: u8) -> bool {
    matches!(
        c,
        b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'~' | b'!' | b'<' | b'>' | b'=' | b'.' | b'[' | b'('
    )
}

/// Fail with `ShaderCompilation` (naming the line) if `source` may nest
/// deeper than `MAX_NESTING`.
pub fn check(source: &str) -> Result<()> {
    let s = source.as_bytes();
    // `else` count per open brace level; the outermost is index 0.
    let mut elses: Vec<usize> = vec![0];
    let mut else_total = 0usize;
    let mut statement = 0usize;
    let mut line = 1usize;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match c {
            b'\n' => line += 1,
            b'/' if s.get(i + 1) == Some(&b'/') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                // Block comments nest in WGSL.
                let mut depth = 0usize;
                while i < s.len() {
                    if s[i] == b'/' && s.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if s[i] == b'*' && s.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        line += (s[i] == b'\n') as usize;
                        i += 1;
                    }
                }
                continue;
            }
            b';' => statement = 0,
            b'{' => {
                statement = 0;
                elses.push(0);
            }
            b'}' => {
                statement = 0;
                if elses.len() > 1 {
                    else_total -= elses.pop().unwrap_or(0);
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
                    i += 1;
                }
                if &s[start..i] == b"else" {
                    *elses.last_mut().unwrap() += 1;
                    else_total += 1;
                }
                continue;
            }
            c if nests(c) => statement += 1,
            _ => {}
        }
        let bound = elses.len() - 1 + else_total + statement;
        if bound > MAX_NESTING {
            bail!(
                ShaderCompilation,
                "kernel.wgsl:{line}: the source nests deeper than kernels may ({MAX_NESTING} levels of operators, \
                 brackets, blocks and `else` branches); split long expressions into `let` statements"
            );
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_are_bounded_by_their_length() {
        let chain = |n: usize, op: &str| format!("fn f(x: f32) -> f32 {{ return x{}; }}", op.repeat(n));
        assert!(check(&chain(MAX_NESTING - 100, " + x")).is_ok());
        assert!(check(&chain(MAX_NESTING + 1, " + x")).is_err());
        assert!(check(&chain(MAX_NESTING + 1, ".x")).is_err());
        let neg = format!("fn f(x: f32) -> f32 {{ return {}x; }}", "- ".repeat(MAX_NESTING + 1));
        assert!(check(&neg).is_err());
    }

    #[test]
    fn statements_and_comments_reset_or_skip() {
        // Many short statements are not deep.
        let lets: String = (0..MAX_NESTING).map(|i| format!("let a{i} = x + x;\n")).collect();
        assert!(check(&format!("fn f(x: f32) {{\n{lets}}}")).is_ok());
        let comment =
            format!("// {}\n/* /* {} */ */ fn f() {{}}", "+".repeat(MAX_NESTING * 2), "-".repeat(MAX_NESTING * 2));
        assert!(check(&comment).is_ok());
    }

    #[test]
    fn else_if_chains_count() {
        let chain = |n: usize| {
            let arms: String = (0..n).map(|i| format!(" else if x < {i}.0 {{ }}")).collect();
            format!("fn f(x: f32) {{ if x < 0.0 {{ }}{arms} }}")
        };
        assert!(check(&chain(1000)).is_ok());
        assert!(check(&chain(MAX_NESTING + 1)).is_err());
    }
}
