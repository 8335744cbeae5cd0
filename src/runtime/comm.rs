//! A communicator: an ordered set of distinct devices of this process that
//! collectives run over (`ops::multi::collective`). Rank i is `devices[i]`.

use super::device::Device;
use crate::bail;
use crate::error::Result;
use std::sync::Arc;

/// Most devices one communicator takes (`WGC_MAX_COMM_DEVICES` in C).
pub(crate) const MAX_COMM_DEVICES: usize = 64;

pub struct Comm {
    pub devices: Vec<Arc<Device>>,
}

impl Comm {
    pub fn create(devices: Vec<Arc<Device>>) -> Result<Arc<Comm>> {
        if devices.is_empty() || devices.len() > MAX_COMM_DEVICES {
            bail!(InvalidArgument, "a communicator takes 1 to {MAX_COMM_DEVICES} devices, not {}", devices.len());
        }
        for (i, d) in devices.iter().enumerate() {
            d.check_alive()?;
            if let Some(j) = devices[..i].iter().position(|e| e.same(d)) {
                bail!(InvalidArgument, "devices {j} and {i} of the communicator are the same device");
            }
        }
        Ok(Arc::new(Comm { devices }))
    }

    pub fn size(&self) -> usize {
        self.devices.len()
    }
}
