//! Kernel compilation runs on its own thread with a large stack: naga's WGSL
//! front end (its lowering pass), wgpu's second parse of the same source and
//! the SPIR-V writer recurse once per nesting level of an expression, and a
//! long chain like `x + x + ... + x` would overflow an ordinary thread's stack
//! (a crash, not an error). `wgsl_nesting` bounds the nesting before any of
//! that runs; this stack holds the deepest nesting that bound lets through.

#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::error::{Error, Result};

/// Stack of the compiling thread. Only the pages a compilation touches are
/// committed. Release builds were measured at about 0.6 KiB per level of
/// an expression and 1 KiB per level of blocks, so this holds
/// `wgsl_nesting::MAX_NESTING` levels several times over.
#[cfg(not(target_arch = "wasm32"))]
const COMPILE_STACK_BYTES: usize = 128 << 20;

/// Run `f` on a fresh thread with `COMPILE_STACK_BYTES` of stack and wait
/// for it. A panic in `f` continues on the calling thread.
#[cfg(not(target_arch = "wasm32"))]
pub fn on_compile_stack<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("wgcompute-compile".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn_scoped(scope, f)
            .map_err(|e| Error::OutOfMemory(format!("could not start the kernel compiler's thread: {e}")))?;
        match handle.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The browser has no threads: compile on the caller's stack, which the
/// wasm build sets large (see .cargo/config.toml); `wgsl_nesting` still
/// bounds what reaches the compiler.
#[cfg(target_arch = "wasm32")]
pub fn on_compile_stack<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    f()
}
