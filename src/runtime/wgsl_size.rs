//! Bounds on how large a WGSL source is, checked by one scan of its text
//! before any parser sees it. Parts of naga grow faster than the source:
//! its front end resolves the types of a function's expressions with a
//! pass that restarts from the first expression each time (quadratic in a
//! function's size: 100,000 `let` statements took over three minutes), and
//! its module compaction finds each pending function by scanning every
//! function (quadratic in their number: 200,000 took two minutes). Module
//! scope declarations grow superlinearly as well. Sources within these
//! bounds compile in time linear in their size; larger ones are refused in
//! milliseconds.
//!
//! Tokens are counted as a lexer would, approximately: an identifier,
//! keyword or number is one token, every other character that is not space
//! one more; comments count nothing. A declaration is what module scope
//! holds between one `;` or closing `}` and the next (a function with its
//! body, a `const` with its value, a struct).

use crate::bail;
use crate::error::Result;

/// Most bytes a source may have (`WGC_MAX_KERNEL_SOURCE_BYTES`).
pub(crate) const MAX_SOURCE_BYTES: usize = 4 << 20;
/// Most tokens a source may have (`WGC_MAX_KERNEL_TOKENS`).
pub(crate) const MAX_TOKENS: usize = 1 << 17;
/// Most tokens one module-scope declaration may have
/// (`WGC_MAX_KERNEL_DECLARATION_TOKENS`): a chain of 15,000 additions fits.
pub(crate) const MAX_DECLARATION_TOKENS: usize = 1 << 15;
/// Most module-scope declarations (`WGC_MAX_KERNEL_DECLARATIONS`).
pub(crate) const MAX_DECLARATIONS: usize = 4096;

/// Keywords that open a module-scope declaration.
fn declares(word: &[u8]) -> bool {
    matches!(word, b"fn" | b"var" | b"const" | b"override" | b"struct" | b"alias" | b"const_assert")
}

/// Fail with `LimitExceeded` (naming the limit and the line) if `source`
/// passes any of the bounds above.
pub fn check(source: &str) -> Result<()> {
    if source.len() > MAX_SOURCE_BYTES {
        bail!(
            LimitExceeded,
            "the kernel source has {} bytes; kernels may have at most {MAX_SOURCE_BYTES}",
            source.len()
        );
    }
    let s = source.as_bytes();
    let (mut tokens, mut declaration_tokens, mut declarations) = (0usize, 0usize, 0usize);
    let (mut depth, mut line, mut declaration_line) = (0usize, 1usize, 1usize);
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let start = i;
        i += 1;
        match c {
            b'\n' => {
                line += 1;
                continue;
            }
            c if c.is_ascii_whitespace() => continue,
            b'/' if s.get(i) == Some(&b'/') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if s.get(i) == Some(&b'*') => {
                // Block comments nest in WGSL.
                let mut open = 1usize;
                i += 1;
                while i < s.len() && open > 0 {
                    if s[i] == b'/' && s.get(i + 1) == Some(&b'*') {
                        open += 1;
                        i += 2;
                    } else if s[i] == b'*' && s.get(i + 1) == Some(&b'/') {
                        open -= 1;
                        i += 2;
                    } else {
                        line += (s[i] == b'\n') as usize;
                        i += 1;
                    }
                }
                continue;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => {
                // An identifier, keyword or number (with its `.` and suffix).
                let number = c.is_ascii_digit();
                while i < s.len()
                    && (s[i].is_ascii_alphanumeric() || s[i] == b'_' || s[i] >= 0x80 || (number && s[i] == b'.'))
                {
                    i += 1;
                }
                if depth == 0 && declares(&s[start..i]) {
                    declarations += 1;
                    if declarations > MAX_DECLARATIONS {
                        bail!(
                            LimitExceeded,
                            "kernel.wgsl:{line}: the kernel has more than {MAX_DECLARATIONS} module-scope \
                             declarations (functions, constants, variables, structs)"
                        );
                    }
                }
            }
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if declaration_tokens == 0 {
            declaration_line = line;
        }
        tokens += 1;
        declaration_tokens += 1;
        if tokens > MAX_TOKENS {
            bail!(LimitExceeded, "kernel.wgsl:{line}: the kernel has more than {MAX_TOKENS} tokens");
        }
        if declaration_tokens > MAX_DECLARATION_TOKENS {
            bail!(
                LimitExceeded,
                "kernel.wgsl:{declaration_line}: this declaration has more than {MAX_DECLARATION_TOKENS} tokens; \
                 split long functions into smaller ones"
            );
        }
        if depth == 0 && (c == b';' || c == b'}') {
            declaration_tokens = 0;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn refused(src: &str) -> bool {
        matches!(check(src), Err(Error::LimitExceeded(_)))
    }

    /// `n` statements `let vI = vJ + 1.0;` in one function: 7 tokens each.
    fn lets(n: usize) -> String {
        let body: String = (1..n).map(|i| format!("let v{i} = v{} + 1.0;\n", i - 1)).collect();
        format!("@compute @workgroup_size(1) fn main() {{\nlet v0 = 1.0;\n{body}}}\n")
    }

    #[test]
    fn long_functions_are_refused() {
        assert!(check(&lets(4000)).is_ok());
        assert!(refused(&lets(5000)));
        // The same statements spread over functions of 1,000 fit.
        let split: String =
            (0..5).map(|f| lets(1000).replace("@compute @workgroup_size(1) fn main", &format!("fn f{f}"))).collect();
        assert!(check(&split).is_ok());
    }

    #[test]
    fn many_declarations_and_tokens_are_refused() {
        let fns = |n: usize| (0..n).map(|i| format!("fn f{i}() {{}}\n")).collect::<String>();
        assert!(check(&fns(MAX_DECLARATIONS)).is_ok());
        assert!(refused(&fns(MAX_DECLARATIONS + 1)));
        let consts: String = (0..=MAX_DECLARATIONS).map(|i| format!("const c{i} = 1;")).collect();
        assert!(refused(&consts));
        // Declarations inside bodies (local `var`, `const`) do not count.
        let locals: String = (0..MAX_DECLARATIONS + 100).map(|i| format!("var a{i} = 1; ")).collect();
        assert!(check(&format!("fn f() {{ {locals} }}")).is_ok());
        // Many functions, each within its bound, past the total.
        let per = MAX_DECLARATION_TOKENS / 2;
        let body = "x + ".repeat(per / 2);
        let many: String =
            (0..MAX_TOKENS / per + 1).map(|i| format!("fn f{i}(x: f32) -> f32 {{ return {body}x; }}")).collect();
        assert!(refused(&many));
    }

    #[test]
    fn comments_and_space_count_nothing_but_bytes_do() {
        let comment = format!("// {}\n/* /* {} */ */ fn f() {{}}", "x ".repeat(MAX_TOKENS), "y ".repeat(MAX_TOKENS));
        assert!(check(&comment).is_ok());
        assert!(refused(&" ".repeat(MAX_SOURCE_BYTES + 1)));
        // Numbers are one token each.
        assert!(check(&format!("const a = array({});", "1.5e3f, ".repeat(MAX_DECLARATION_TOKENS / 2 - 8))).is_ok());
    }
}
