//! Run-time loading of shared libraries (libvulkan, libcuda, libcublasLt) through
//! dlopen/dlsym, so that the probe has no link-time dependency on any of them.

use std::ffi::{c_void, CStr, CString};

/// A library opened with dlopen; never closed, so the function pointers taken from it
/// stay valid for the whole process.
pub struct Library {
    handle: *mut c_void,
    pub name: String,
}

impl Library {
    /// Opens the first of `names` that dlopen finds; the error lists every attempt.
    pub fn open(names: &[String]) -> Result<Library, String> {
        let mut errors = Vec::new();
        for name in names {
            let c_name = CString::new(name.as_str()).map_err(|e| e.to_string())?;
            // SAFETY: dlopen receives a NUL-terminated path; a library's initialisers are
            // the only code it runs, and these are the vendors' own libraries.
            let handle = unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if handle.is_null() {
                errors.push(format!("{name}: {}", last_dl_error()));
            } else {
                return Ok(Library { handle, name: name.clone() });
            }
        }
        Err(errors.join("; "))
    }

    /// The symbol `name` as a function pointer of type `F`.
    ///
    /// # Safety
    /// `F` must be an `extern "C"` function pointer type whose signature matches the C
    /// declaration of `name` exactly.
    pub unsafe fn sym<F: Copy>(&self, name: &str) -> Result<F, String> {
        assert_eq!(
            std::mem::size_of::<F>(),
            std::mem::size_of::<*mut c_void>(),
            "symbols load only as pointer-sized function types"
        );
        let c_name = CString::new(name).map_err(|e| e.to_string())?;
        // SAFETY: the handle came from a successful dlopen and is never closed.
        let ptr = unsafe { libc::dlsym(self.handle, c_name.as_ptr()) };
        if ptr.is_null() {
            return Err(format!("{}: symbol {name} not found", self.name));
        }
        // SAFETY: `F` is pointer-sized (asserted above) and the caller guarantees that it
        // is the function type of this symbol.
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&ptr) })
    }
}

fn last_dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string owned by libc, read at once.
    unsafe {
        let msg = libc::dlerror();
        if msg.is_null() {
            "unknown dlopen error".to_string()
        } else {
            CStr::from_ptr(msg).to_string_lossy().into_owned()
        }
    }
}
