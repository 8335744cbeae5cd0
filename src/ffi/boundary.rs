//! The boundary every export goes through: pointer checks, handle casts,
//! panic capture, and the per-thread last error message. Patterned on the
//! "castable" handles of rustls-ffi: a C handle is the raw pointer of an
//! `Arc` of the Rust object, typed as an opaque struct.

use super::status::WgcStatus;
use crate::error::{Error, Result};
use std::cell::Cell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

thread_local! {
    // A raw pointer in a `Cell` has no destructor, so it stays usable while
    // the thread's storage is being torn down: a call made from a thread-exit
    // (pthread key) destructor can still record and read its message.
    static LAST_ERROR: Cell<*mut c_char> = const { Cell::new(std::ptr::null_mut()) };
    static FREE_AT_EXIT: FreeLastError = const { FreeLastError };
}

/// Frees the thread's last message when the thread exits. A message set
/// after this ran (from a later thread-exit destructor) is freed by the next
/// one set, so at most one small string per such thread is never freed.
struct FreeLastError;

impl Drop for FreeLastError {
    fn drop(&mut self) {
        let p = LAST_ERROR.with(|c| c.replace(std::ptr::null_mut()));
        if !p.is_null() {
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

fn set_last_error(msg: String) {
    let new = CString::new(msg.replace('\0', " ")).unwrap_or_default().into_raw();
    let old = LAST_ERROR.with(|c| c.replace(new));
    if !old.is_null() {
        drop(unsafe { CString::from_raw(old) });
    }
    // Registers the destructor on first use; fails harmlessly during thread exit.
    let _ = FREE_AT_EXIT.try_with(|_| ());
}

/// The calling thread's last error message; valid until its next failing call.
pub(crate) fn last_error_ptr() -> *const c_char {
    let p = LAST_ERROR.with(|c| c.get());
    if p.is_null() {
        c"".as_ptr()
    } else {
        p
    }
}

/// Run an export's body: errors become a status and a message, panics become
/// `WGC_ERROR_INTERNAL`. Nothing unwinds into C.
pub(crate) fn run(f: impl FnOnce() -> Result<()>) -> WgcStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => WgcStatus::WgcOk,
        Ok(Err(e)) => {
            let status = super::status::status_of(&e);
            set_last_error(e.to_string());
            status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(format!("internal error (caught panic): {what}"));
            WgcStatus::WgcErrorInternal
        }
    }
}

/// An opaque C handle type and the Rust object behind it.
pub(crate) trait Handle {
    type Rust;
    const NAME: &'static str;
}

/// Hand ownership of one reference to C.
pub(crate) fn to_handle<H: Handle>(a: Arc<H::Rust>) -> *mut H {
    Arc::into_raw(a) as *mut H
}

/// Borrow the object behind a handle, failing on NULL.
///
/// # Safety
/// `p` must be NULL or a live handle of type `H`.
pub(crate) unsafe fn borrow<'a, H: Handle>(p: *const H) -> Result<&'a H::Rust> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{} handle is NULL", H::NAME)));
    }
    Ok(unsafe { &*(p as *const H::Rust) })
}

/// Take a new reference to the object behind a handle.
///
/// # Safety
/// As for `borrow`.
pub(crate) unsafe fn arc<H: Handle>(p: *const H) -> Result<Arc<H::Rust>> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{} handle is NULL", H::NAME)));
    }
    let p = p as *const H::Rust;
    unsafe {
        Arc::increment_strong_count(p);
        Ok(Arc::from_raw(p))
    }
}

/// # Safety
/// `p` must be NULL or a live handle of type `H`.
pub(crate) unsafe fn retain<H: Handle>(p: *const H) {
    if !p.is_null() {
        unsafe { Arc::increment_strong_count(p as *const H::Rust) }
    }
}

/// # Safety
/// `p` must be NULL or a live handle of type `H`, not used again by the caller.
pub(crate) unsafe fn release<H: Handle>(p: *const H) {
    if !p.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { Arc::decrement_strong_count(p as *const H::Rust) }));
    }
}

/// Check an out-parameter.
///
/// # Safety
/// `p` must be NULL or valid for writes.
pub(crate) unsafe fn out<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    Ok(unsafe { &mut *p })
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| Error::InvalidArgument(format!("{what} is not valid UTF-8")))
}

/// A byte slice argument; NULL is allowed only when `len` is 0.
///
/// # Safety
/// `p` must be valid for `len` bytes of reads.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: u64, what: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    let len = usize::try_from(len).map_err(|_| Error::InvalidArgument(format!("{what}: size too large")))?;
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// # Safety
/// `p` must be valid for `len` bytes of writes.
pub(crate) unsafe fn bytes_mut<'a>(p: *mut u8, len: u64, what: &str) -> Result<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    let len = usize::try_from(len).map_err(|_| Error::InvalidArgument(format!("{what}: size too large")))?;
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}
