//! Where the profile's compute units come from, without a GPU.

use super::*;
use wgpu::DeviceType::{Cpu, DiscreteGpu, IntegratedGpu, Other};

fn nv(units: usize, warps: usize) -> Option<Reported> {
    Some(Reported { compute_units: units, subgroups_per_unit: Some(warps) })
}

#[test]
fn the_setting_wins_then_the_driver_then_the_table_then_the_default() {
    let p = DeviceProfile::resolve(Some(20), nv(132, 64), "NVIDIA H100 80GB HBM3", DiscreteGpu, 16);
    assert_eq!((p.compute_units, p.source, p.subgroups_per_unit), (20, ProfileSource::Setting, Some(64)));
    let p = DeviceProfile::resolve(None, nv(114, 64), "NVIDIA H100 80GB HBM3", DiscreteGpu, 16);
    assert_eq!((p.compute_units, p.source), (114, ProfileSource::Adapter), "the driver over the name");
    let p = DeviceProfile::resolve(None, None, "NVIDIA H100 80GB HBM3", DiscreteGpu, 16);
    assert_eq!((p.compute_units, p.source, p.subgroups_per_unit), (132, ProfileSource::Table, None));
    let p = DeviceProfile::resolve(None, None, "Some New GPU", DiscreteGpu, 16);
    assert_eq!((p.compute_units, p.source), (32, ProfileSource::Default));
    let p = DeviceProfile::resolve(None, None, "Some New GPU", IntegratedGpu, 16);
    assert_eq!(p.compute_units, 8);
    let p = DeviceProfile::resolve(None, None, "Some New GPU", Other, 16);
    assert_eq!(p.compute_units, 8);
}

#[test]
fn cpu_drivers_count_threads() {
    let p = DeviceProfile::resolve(None, None, "llvmpipe (LLVM 19.1.7, 256 bits)", Cpu, 6);
    assert_eq!((p.compute_units, p.source), (6, ProfileSource::Default));
    assert_eq!(DeviceProfile::resolve(None, None, "llvmpipe", Cpu, 0).compute_units, 1, "never 0");
}

#[test]
fn zeros_mean_unknown() {
    let p = DeviceProfile::resolve(
        Some(0),
        Some(Reported { compute_units: 0, subgroups_per_unit: Some(0) }),
        "x",
        DiscreteGpu,
        4,
    );
    assert_eq!((p.compute_units, p.source, p.subgroups_per_unit), (32, ProfileSource::Default, None));
}

#[test]
fn names_match_the_longest_entry_first_whatever_the_case() {
    assert_eq!(table_units("NVIDIA H100 PCIe"), Some(114));
    assert_eq!(table_units("NVIDIA H100 NVL"), Some(132));
    assert_eq!(table_units("nvidia h200"), Some(132));
    assert_eq!(table_units("NVIDIA L40S"), Some(142));
    assert_eq!(table_units("NVIDIA L4"), Some(58));
    assert_eq!(table_units("NVIDIA A10G"), Some(80));
    assert_eq!(table_units("Apple M1 Max"), Some(32));
    assert_eq!(table_units("Apple M2"), Some(10));
    assert_eq!(table_units("AMD Radeon Graphics"), None);
    // Every entry is reachable: no earlier entry is a part of a later one's name.
    for (i, (name, units)) in TABLE.iter().enumerate() {
        assert_eq!(table_units(name), Some(*units), "{name} (entry {i}) is shadowed");
    }
}

#[test]
fn residency_is_capped_by_the_subgroups_a_unit_holds() {
    let hopper = DeviceProfile::resolve(None, nv(132, 64), "H100", DiscreteGpu, 1);
    assert_eq!(hopper.resident(2, 4), 264, "2 per SM measured, 16 would fit");
    let small = DeviceProfile::resolve(None, nv(10, 8), "x", DiscreteGpu, 1);
    assert_eq!(small.resident(4, 4), 20, "only 2 of 4 subgroups fit per unit");
    assert_eq!(small.resident(4, 16), 10, "at least one per unit");
    let unknown = DeviceProfile::resolve(Some(10), None, "x", DiscreteGpu, 1);
    assert_eq!(unknown.resident(3, 4), 30);
}
