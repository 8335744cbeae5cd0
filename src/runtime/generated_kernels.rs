//! Kernels whose source the library generates (elementwise expressions,
//! src/ops/expr): compiled once per device and source text, as trusted
//! library kernels (the generator guards every index against sizes the
//! host checks). The text is the key, since it encodes everything that
//! changes the compiled code and nothing else (no sizes, no scalar values).
//! The cache is bounded: a program that builds endless distinct
//! expressions starts over when it is full (kernels in use stay alive
//! through the recorded work that holds them).

use super::device::Device;
use super::kernel::Kernel;
use super::kernel_variant::compile_with_constants;
use crate::error::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Most generated kernels one device keeps.
pub(crate) const MAX_GENERATED_KERNELS: usize = 1024;

#[derive(Default)]
pub struct GeneratedKernels {
    map: Mutex<HashMap<Arc<str>, Arc<Kernel>>>,
    /// Kernels of generated modules with several entry points and
    /// `override`s (fused reductions), by a key that determines the
    /// module's text (so a hit generates no text), entry and override values.
    entries: Mutex<HashMap<EntryKey, Arc<Kernel>>>,
}

/// A generated module's key, an entry point and its override values (as bits).
type EntryKey = (Vec<u64>, &'static str, Vec<(&'static str, u64)>);

impl GeneratedKernels {
    pub fn count(&self) -> usize {
        self.map.lock().unwrap().len() + self.entries.lock().unwrap().len()
    }

    /// The kernel compiled from `source` (entry point `main`), compiling it
    /// on a miss (outside the lock). Returns whether it was compiled now.
    pub fn get(&self, device: &Device, source: &Arc<str>) -> Result<(Arc<Kernel>, bool)> {
        if let Some(k) = self.map.lock().unwrap().get(source) {
            return Ok((k.clone(), false));
        }
        let kernel = Arc::new(compile_with_constants(device, source, "main", &[])?);
        let mut map = self.map.lock().unwrap();
        if map.len() >= MAX_GENERATED_KERNELS {
            map.clear();
        }
        Ok((map.entry(source.clone()).or_insert(kernel).clone(), true))
    }

    /// The kernel of entry point `entry` of the module `key` names, with
    /// the pipeline constants `constants`. On a miss `source` gives the
    /// module's text (the caller makes sure that equal keys give equal
    /// texts), compiled outside the lock.
    pub fn get_entry(
        &self,
        device: &Device,
        key: &[u64],
        entry: &'static str,
        constants: &[(&'static str, f64)],
        source: impl FnOnce() -> String,
    ) -> Result<Arc<Kernel>> {
        let key: EntryKey = (key.to_vec(), entry, constants.iter().map(|&(n, v)| (n, v.to_bits())).collect());
        if let Some(k) = self.entries.lock().unwrap().get(&key) {
            return Ok(k.clone());
        }
        let kernel = Arc::new(compile_with_constants(device, &source(), entry, constants)?);
        let mut map = self.entries.lock().unwrap();
        if map.len() >= MAX_GENERATED_KERNELS {
            map.clear();
        }
        Ok(map.entry(key).or_insert(kernel).clone())
    }
}
