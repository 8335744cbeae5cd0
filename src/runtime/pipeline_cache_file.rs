//! Cache files (the pipeline cache, the tuning cache) are read and written
//! only as regular files. A path that names anything else (a symbolic link, a directory, a device, a
//! FIFO) is refused, so the library never follows, replaces or blocks on it.
//! Saving writes a new file with a unique name in the same directory and
//! renames it over the path; if anything fails, that file is removed again.

use crate::error::{Error, Result};
use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The pipeline cache's file.
pub const PIPELINE: &str = "pipeline cache";
/// The tuner's file (see `autotune_file`).
pub const TUNING: &str = "tuning cache";

/// `kind` names the cache (`PIPELINE`, `TUNING`) in messages.
fn refused(kind: &str, path: &Path, what: &str) -> Error {
    Error::InvalidArgument(format!(
        "{kind} path {} {what}; the {kind} is read and written only as a regular file",
        path.display()
    ))
}

/// Fails unless `path` names a regular file or nothing (a new file).
pub fn check(kind: &str, path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(refused(kind, path, "is a symbolic link")),
        Ok(m) if m.is_dir() => Err(refused(kind, path, "is a directory")),
        Ok(_) => Err(refused(kind, path, "is not a regular file (a device, FIFO or socket)")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::InvalidArgument(format!("{kind} path {}: {e}", path.display()))),
    }
}

/// The file's contents; `None` if there is no file or it cannot be read
/// (the cache then starts empty).
pub fn load(kind: &str, path: &Path) -> Result<Option<Vec<u8>>> {
    check(kind, path)?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Between the check and the open the path may have changed: do not
        // follow a link, and do not block on a FIFO.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let Ok(mut file) = options.open(path) else {
        return Ok(None);
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(refused(kind, path, "is not a regular file"));
    }
    let mut data = Vec::new();
    Ok(file.read_to_end(&mut data).ok().map(|_| data))
}

/// Replace the file with `data`.
pub fn save(kind: &str, path: &Path, data: &[u8]) -> Result<()> {
    check(kind, path)?;
    let tmp = temporary_name(kind, path)?;
    // A new file (never through a link); if it cannot be made, there is nothing to clean up.
    let mut file =
        OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| cannot_write(kind, &tmp, e))?;
    let written =
        file.write_all(data).and_then(|_| file.sync_all()).map_err(|e| cannot_write(kind, &tmp, e)).and_then(|_| {
            // Check again just before replacing: the path may have changed.
            check(kind, path)?;
            fs::rename(&tmp, path).map_err(|e| cannot_write(kind, path, e))
        });
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

fn cannot_write(kind: &str, path: &Path, e: std::io::Error) -> Error {
    Error::InvalidArgument(format!("cannot write {kind} {}: {e}", path.display()))
}

/// `.NAME.PID.N.tmp` beside `path`, unique within the process.
fn temporary_name(kind: &str, path: &Path) -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let Some(name) = path.file_name() else {
        return Err(refused(kind, path, "has no file name"));
    };
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = format!(".{}.{}.{n}.tmp", name.to_string_lossy(), std::process::id());
    Ok(path.with_file_name(tmp))
}
