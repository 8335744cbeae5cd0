//! Text written into a caller's buffer: the convention of the calls that
//! return a string (`wgc_profile_table`, the explain calls).

use crate::error::{Error, Result};
use std::ffi::c_char;

/// Write `text`, NUL-terminated, into `buf` if it fits in `buf_len` bytes,
/// and its length without the NUL into `*out_len` either way. `buf` NULL
/// with `buf_len` 0 asks for the length (Ok); a nonzero `buf_len` that is
/// too small is `TooLarge`, `buf` untouched.
///
/// # Safety
/// `out_len` must be NULL or valid for a write; `buf` NULL or valid for
/// `buf_len` bytes.
pub(crate) unsafe fn write_text(text: &str, buf: *mut c_char, buf_len: usize, out_len: *mut usize) -> Result<()> {
    let length = unsafe { super::boundary::out(out_len, "out_len") }?;
    if buf_len > 0 && buf.is_null() {
        return Err(Error::NullPointer("buf is NULL but buf_len is not 0".into()));
    }
    *length = text.len();
    if text.len() < buf_len {
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf as *mut u8, text.len());
            *buf.add(text.len()) = 0;
        }
        return Ok(());
    }
    if buf_len == 0 {
        return Ok(());
    }
    Err(Error::TooLarge(format!("the text needs {} bytes, buf_len is {buf_len}", text.len() + 1)))
}
