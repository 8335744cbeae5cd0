//! A kernel family (one shader file) and a variant of it. A family declares
//! its axes of variation: entry points, element-type slots with the dtypes
//! each may take, and `override` constants with the values the library may
//! set. An operator picks one point on those axes (`Variant`); the offline
//! test (tests/spec_variants.rs) compiles every point, so no variant the
//! library can ask for is first compiled on a user's GPU.

use super::prelude;
use super::uniform::UniformLayout;
use crate::bail;
use crate::error::Result;
use crate::ops::tensor::DType;
use crate::runtime::device::Device;
use crate::runtime::kernel::Kernel;
use crate::runtime::kernel_variant::{VariantKey, MAX_OVERRIDES, MAX_TYPES};
use std::sync::Arc;

/// An element type the prelude declares as `alias <alias> = <dtype>;`.
#[derive(Debug)]
pub struct TypeSlot {
    pub alias: &'static str,
    pub dtypes: &'static [DType],
}

/// A WGSL `override` constant and every value the library may give it.
#[derive(Debug)]
pub struct OverrideSlot {
    pub name: &'static str,
    pub values: &'static [f64],
}

/// One shader file and its axes of variation.
#[derive(Debug)]
pub struct Family {
    /// The file's name under shaders/ (messages and the cache key).
    pub file: &'static str,
    /// Its text, from `include_str!`.
    pub source: &'static str,
    pub entries: &'static [&'static str],
    pub types: &'static [TypeSlot],
    pub overrides: &'static [OverrideSlot],
    /// The family's uniform struct (for the layout test).
    pub uniform: fn() -> UniformLayout,
}

/// A family's kernel with every choice made. `Copy`, and cheap to build on
/// every launch.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub family: &'static Family,
    pub entry: &'static str,
    /// One dtype per type slot, in the family's order.
    pub types: [Option<DType>; MAX_TYPES],
    /// One value per override, in the family's order.
    pub overrides: [f64; MAX_OVERRIDES],
}

/// A small nonzero code per dtype, for the cache key.
fn code(d: DType) -> u8 {
    match d {
        DType::F32 => 1,
        DType::F16 => 2,
        DType::I32 => 3,
        DType::U32 => 4,
        DType::BF16 => 5,
    }
}

impl Family {
    /// The variant `entry` with `types` (one per type slot) and `overrides`
    /// (one per override slot).
    pub fn variant(&'static self, entry: &'static str, types: &[DType], overrides: &[f64]) -> Variant {
        debug_assert_eq!(types.len(), self.types.len(), "{}: one dtype per type slot", self.file);
        debug_assert_eq!(overrides.len(), self.overrides.len(), "{}: one value per override", self.file);
        let mut v = Variant { family: self, entry, types: [None; MAX_TYPES], overrides: [0.0; MAX_OVERRIDES] };
        for (slot, &t) in v.types.iter_mut().zip(types) {
            *slot = Some(t);
        }
        v.overrides[..overrides.len()].copy_from_slice(overrides);
        v
    }

    /// The variants the offline test compiles: every point on the family's
    /// axes (entries x dtypes x override values), except that an override
    /// listed in `SAMPLED_OVERRIDES` is covered value by value (each of its
    /// values with every entry and dtype, the other overrides at their first
    /// value) instead of multiplying the product.
    pub fn all_variants(&'static self) -> Vec<Variant> {
        let sampled = |slot: &OverrideSlot| SAMPLED_OVERRIDES.contains(&(self.file, slot.name));
        let first: Vec<f64> = self.overrides.iter().map(|s| s.values[0]).collect();
        let mut values = vec![Vec::new()];
        for slot in self.overrides {
            let axis: &[f64] = if sampled(slot) { &slot.values[..1] } else { slot.values };
            values = values.iter().flat_map(|p| axis.iter().map(move |&v| [p.as_slice(), &[v]].concat())).collect();
        }
        for (i, slot) in self.overrides.iter().enumerate().filter(|(_, s)| sampled(s)) {
            for &v in &slot.values[1..] {
                let mut point = first.clone();
                point[i] = v;
                values.push(point);
            }
        }
        let mut types = vec![Vec::new()];
        for slot in self.types {
            types =
                types.iter().flat_map(|p| slot.dtypes.iter().map(move |&d| [p.as_slice(), &[d]].concat())).collect();
        }
        let mut out = Vec::new();
        for &entry in self.entries {
            for t in &types {
                for v in &values {
                    out.push(self.variant(entry, t, v));
                }
            }
        }
        out
    }
}

/// Overrides, as (file, name), whose code paths do not depend on the other
/// axes (how offsets are decoded, where operands come from): the offline
/// test compiles each of their values with every entry and dtype rather
/// than with every combination of the other overrides.
pub const SAMPLED_OVERRIDES: &[(&str, &str)] = &[
    ("elementwise.wgsl", "RANK"),
    ("elementwise.wgsl", "ROUTED"),
    ("elementwise.wgsl+bf16", "RANK"),
    ("elementwise.wgsl+bf16", "ROUTED"),
    ("norm.wgsl", "LANES"),
    ("norm.wgsl+subgroups", "LANES"),
    ("conv_direct.wgsl", "KH"),
    ("conv_direct.wgsl", "KW"),
    ("pool.wgsl", "KH"),
    ("pool.wgsl", "KW"),
];

impl Variant {
    pub fn dtypes(&self) -> impl Iterator<Item = DType> + '_ {
        self.types.iter().flatten().copied()
    }

    /// The cache key: the file, the entry and every type and override value.
    pub fn key(&self) -> VariantKey {
        let mut types = [0u8; MAX_TYPES];
        for (k, t) in types.iter_mut().zip(&self.types) {
            *k = t.map_or(0, code);
        }
        let mut overrides = [0u64; MAX_OVERRIDES];
        for (k, v) in overrides.iter_mut().zip(&self.overrides) {
            *k = v.to_bits();
        }
        VariantKey { file: self.family.file, entry: self.entry, types, overrides }
    }

    /// The WGSL this variant compiles: the prelude, then the file.
    pub fn source(&self) -> String {
        let aliases: Vec<(&str, DType)> = self.family.types.iter().map(|s| s.alias).zip(self.dtypes()).collect();
        prelude::render(&aliases, self.family.source)
    }

    /// The pipeline constants: each override's name and value.
    pub fn constants(&self) -> Vec<(&'static str, f64)> {
        self.family.overrides.iter().map(|s| s.name).zip(self.overrides).collect()
    }

    /// Fail unless the variant lies on its family's declared axes (the
    /// offline test compiles exactly those).
    pub fn check_declared(&self) -> Result<()> {
        let f = self.family;
        let types_ok = self.dtypes().count() == f.types.len()
            && f.types.iter().zip(self.dtypes()).all(|(slot, d)| slot.dtypes.contains(&d));
        let overrides_ok = f.overrides.iter().zip(&self.overrides).all(|(slot, v)| slot.values.contains(v))
            && self.overrides[f.overrides.len()..].iter().all(|&v| v == 0.0);
        if !f.entries.contains(&self.entry) || !types_ok || !overrides_ok {
            bail!(Internal, "kernel variant {self:?} is outside the axes {} declares", f.file);
        }
        Ok(())
    }

    /// The variant as the profiler names it: `softmax.wgsl:rows<f16>{WG=256}`
    /// (the file without its folder, the entry, the dtypes, the overrides).
    pub fn describe(&self) -> String {
        let file = self.family.file.rsplit('/').next().unwrap_or(self.family.file);
        let types: Vec<&str> = self.dtypes().map(crate::ops::profile_call::dtype_name).collect();
        let overrides: Vec<String> = self.constants().iter().map(|(name, v)| format!("{name}={v}")).collect();
        format!("{file}:{}<{}>{{{}}}", self.entry, types.join(","), overrides.join(","))
    }

    /// The compiled kernel, from the device's cache.
    pub fn kernel(&self, dev: &Device) -> Result<Arc<Kernel>> {
        // The declared-axes check runs on a miss only: nothing on the hot path.
        dev.kernels.spec.get(dev, &self.key(), || {
            self.check_declared()?;
            Ok((self.source(), self.constants()))
        })
    }
}
