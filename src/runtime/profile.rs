//! The device profile: how many compute units (NVIDIA SMs, AMD compute
//! units, Apple GPU cores, a CPU driver's threads) the device has and how
//! many subgroups one of them holds at once. The operators that cut work
//! to fill the GPU (split K, split rows) size their targets with it
//! instead of assuming one GPU.
//!
//! Where it comes from, first that answers: the device's setting
//! `WGC_COMPUTE_UNITS`; the adapter (Vulkan: VK_NV_shader_sm_builtins on
//! NVIDIA, VK_AMD_shader_core_properties on AMD; profile_query.rs); a
//! table of adapter names (`TABLE`); a default by device type.

/// What the device is made of, as far as filling it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceProfile {
    /// Compute units (at least 1).
    pub compute_units: usize,
    /// Subgroups one compute unit holds at once (NVIDIA warps per SM, AMD
    /// wavefronts per CU), where the adapter says.
    pub subgroups_per_unit: Option<usize>,
    /// Where `compute_units` came from.
    pub source: ProfileSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileSource {
    /// The setting `WGC_COMPUTE_UNITS`.
    Setting,
    /// The driver (a Vulkan extension).
    Adapter,
    /// `TABLE`, by the adapter's name.
    Table,
    /// `default_units`, by device type.
    Default,
}

/// What a driver reports through a Vulkan extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reported {
    pub compute_units: usize,
    pub subgroups_per_unit: Option<usize>,
}

/// Compute units of adapters no extension describes, by a part of their
/// name (case-insensitive; the first match wins, so longer names come
/// first). Full-chip counts of each product as sold; a cut-down part of
/// the same name has fewer.
pub const TABLE: &[(&str, usize)] = &[
    // NVIDIA (on backends without VK_NV_shader_sm_builtins: DX12, GL).
    ("H100 PCIe", 114),
    ("H100", 132),
    ("H200", 132),
    ("GH200", 132),
    ("B200", 148),
    ("A100", 108),
    ("A10G", 80),
    ("A10", 72),
    ("L40", 142),
    ("L4", 58),
    ("T4", 40),
    ("V100", 80),
    ("RTX 4090", 128),
    ("RTX 4080", 76),
    ("RTX 3090", 82),
    ("RTX 3080", 68),
    // AMD (without VK_AMD_shader_core_properties).
    ("MI300X", 304),
    ("RX 7900 XTX", 96),
    // Apple GPU cores (Metal reports none).
    ("M1 Ultra", 64),
    ("M1 Max", 32),
    ("M1 Pro", 16),
    ("M1", 8),
    ("M2 Ultra", 76),
    ("M2 Max", 38),
    ("M2 Pro", 19),
    ("M2", 10),
    ("M3 Max", 40),
    ("M3 Pro", 18),
    ("M3", 10),
];

/// Compute units assumed where nothing else says: few, so that work is
/// not cut into more pieces than a small GPU runs at once (a split costs
/// a pass over its partial sums); a CPU driver runs one workgroup per
/// thread.
pub fn default_units(device_type: wgpu::DeviceType, cpu_threads: usize) -> usize {
    match device_type {
        wgpu::DeviceType::Cpu => cpu_threads,
        wgpu::DeviceType::DiscreteGpu => 32,
        _ => 8,
    }
}

/// The units `TABLE` gives an adapter named `name`.
pub fn table_units(name: &str) -> Option<usize> {
    let name = name.to_ascii_lowercase();
    TABLE.iter().find(|(part, _)| name.contains(&part.to_ascii_lowercase())).map(|&(_, units)| units)
}

impl DeviceProfile {
    /// The profile from what is known: the setting, the driver's report,
    /// the adapter's name and type. Pure.
    pub fn resolve(
        setting: Option<usize>,
        reported: Option<Reported>,
        name: &str,
        device_type: wgpu::DeviceType,
        cpu_threads: usize,
    ) -> DeviceProfile {
        let reported = reported.filter(|r| r.compute_units > 0);
        let subgroups_per_unit = reported.and_then(|r| r.subgroups_per_unit).filter(|&n| n > 0);
        let (compute_units, source) = if let Some(units) = setting.filter(|&n| n > 0) {
            (units, ProfileSource::Setting)
        } else if let Some(r) = reported {
            (r.compute_units, ProfileSource::Adapter)
        } else if let Some(units) = table_units(name) {
            (units, ProfileSource::Table)
        } else {
            (default_units(device_type, cpu_threads).max(1), ProfileSource::Default)
        };
        DeviceProfile { compute_units, subgroups_per_unit, source }
    }

    /// Workgroups of a kernel the device holds at once: `per_unit` of them
    /// on each compute unit (measured on an H100 and H200, whose SMs hold
    /// 64 warps), at most as many as fit the unit's subgroups where the
    /// adapter says how many (`subgroups_per_workgroup` each).
    pub fn resident(&self, per_unit: usize, subgroups_per_workgroup: usize) -> usize {
        let fit = self.subgroups_per_unit.map_or(per_unit, |n| n / subgroups_per_workgroup.max(1));
        self.compute_units * per_unit.min(fit).max(1)
    }
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
