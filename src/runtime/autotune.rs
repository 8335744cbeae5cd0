//! The autotuner's memory: for each tunable choice and shape class, the
//! candidate that measured fastest on this device, kept in memory and, with
//! a tuning cache path, in a file (see `autotune_file`). Operators ask it
//! through `ops::gemm::tuned`, which does the timing (`autotune_timer`).

use super::autotune_file::{self, Table};
use super::instance::AdapterSummary;
use crate::error::Result;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// What the tuner does on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuneMode {
    /// Heuristics only; a tuning cache file is neither read nor written.
    Off,
    /// Time the candidates of every new shape class once, then reuse the choice.
    On,
    /// Use stored choices (loaded from the file), time nothing: heuristics
    /// for classes the file lacks.
    Cached,
}

/// The tuner's counters (see `WgcTuningStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TuneStats {
    /// Stored choices (loaded and measured).
    pub entries: u64,
    /// Choices loaded from the file when the device was created.
    pub loaded: u64,
    /// Shape classes whose candidates were timed.
    pub timed: u64,
    /// Calls that used a stored choice.
    pub reused: u64,
}

pub struct Tuner {
    pub mode: TuneMode,
    path: Option<PathBuf>,
    key: String,
    table: Mutex<Table>,
    /// Held while candidates are timed: one class at a time per device, so
    /// that timings do not overlap and a class is timed once.
    timing: Mutex<()>,
    /// Entries were added since the file was read or written.
    dirty: AtomicBool,
    loaded: u64,
    timed: AtomicU64,
    reused: AtomicU64,
    /// Every timed class is printed to stderr (`WGC_AUTOTUNE_LOG`).
    log: bool,
}

impl Tuner {
    /// A tuner for `adapter`; with a path (and not Off), the stored choices
    /// are loaded (a missing, foreign or corrupt file gives none). Fails
    /// only where the path is refused (not a regular file).
    pub fn new(mode: TuneMode, path: Option<PathBuf>, adapter: &AdapterSummary, log: bool) -> Result<Tuner> {
        let key = autotune_file::key(adapter);
        let path = path.filter(|_| mode != TuneMode::Off);
        let table = match &path {
            Some(p) => autotune_file::load(p, &key)?,
            None => Table::new(),
        };
        Ok(Tuner {
            mode,
            path,
            key,
            loaded: table.len() as u64,
            table: Mutex::new(table),
            timing: Mutex::new(()),
            dirty: AtomicBool::new(false),
            timed: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            log,
        })
    }

    /// The stored candidate for `choice` in `class` (not counted).
    pub fn lookup(&self, choice: &str, class: &str) -> Option<String> {
        self.table.lock().unwrap().get(&(choice.to_owned(), class.to_owned())).cloned()
    }

    /// Count a call that used a stored choice.
    pub fn count_reuse(&self) {
        self.reused.fetch_add(1, Ordering::Relaxed);
    }

    /// Wait until no other call is timing candidates on this device.
    pub fn timing_lock(&self) -> MutexGuard<'_, ()> {
        self.timing.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Store a measured choice; `times` (candidate, ms) are only logged.
    pub fn store(&self, choice: &str, class: &str, candidate: &str, times: &[(&str, f64)]) {
        self.table.lock().unwrap().insert((choice.to_owned(), class.to_owned()), candidate.to_owned());
        self.dirty.store(true, Ordering::Release);
        self.timed.fetch_add(1, Ordering::Relaxed);
        if self.log {
            let all: Vec<String> = times.iter().map(|(n, ms)| format!("{n} {ms:.4} ms")).collect();
            eprintln!("wgcompute autotune: {choice} {class} -> {candidate} ({})", all.join(", "));
        }
    }

    pub fn stats(&self) -> TuneStats {
        TuneStats {
            entries: self.table.lock().unwrap().len() as u64,
            loaded: self.loaded,
            timed: self.timed.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
        }
    }

    /// Write every stored choice to the file. False where there is no file
    /// (no path, or the mode is Off).
    pub fn save(&self) -> Result<bool> {
        let Some(path) = &self.path else {
            return Ok(false);
        };
        let table = self.table.lock().unwrap().clone();
        autotune_file::save(path, &self.key, &table)?;
        self.dirty.store(false, Ordering::Release);
        Ok(true)
    }

    /// `save` if anything was added since the file was read or written
    /// (when the device closes).
    pub fn save_if_changed(&self) -> Result<bool> {
        if !self.dirty.load(Ordering::Acquire) {
            return Ok(false);
        }
        self.save()
    }
}
