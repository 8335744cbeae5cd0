//! A device's profile: the setting WGC_COMPUTE_UNITS wins; otherwise the
//! driver, the name table or the default by device type answers.

use super::*;
use crate::runtime::instance::{choose, instance, Preference};
use crate::runtime::profile::{table_units, ProfileSource};

fn device(settings: Settings) -> Arc<Device> {
    let adapters = instance().adapters().unwrap();
    let adapter = choose(&adapters, None, Preference::Default).unwrap();
    Device::create(&adapter, DeviceOptions { settings: Some(settings), ..Default::default() }).unwrap()
}

#[test]
fn the_setting_fixes_the_compute_units() {
    let mut settings = Settings::default();
    settings.device.compute_units = Some(7);
    let dev = device(settings);
    assert_eq!((dev.profile().compute_units, dev.profile().source), (7, ProfileSource::Setting));
}

#[test]
fn without_the_setting_the_adapter_answers() {
    let dev = device(Settings::default());
    let p = dev.profile();
    assert!(p.compute_units >= 1);
    match p.source {
        ProfileSource::Adapter => assert!(p.subgroups_per_unit.is_some()),
        ProfileSource::Table => assert_eq!(table_units(&dev.adapter.info.name), Some(p.compute_units)),
        ProfileSource::Default if dev.adapter.info.device_type == wgpu::DeviceType::Cpu => {
            assert_eq!(p.compute_units, std::thread::available_parallelism().map_or(1, |n| n.get()))
        }
        ProfileSource::Default => assert!(p.compute_units == 32 || p.compute_units == 8),
        ProfileSource::Setting => panic!("no setting was given"),
    }
}
