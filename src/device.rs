//! `Device`: a user-facing device name (`CPU`, `INTERP`, `CL:1`), checked when made.

use crate::error::Result;
use crate::runtime::registry::{canonical_name, default_device_name, get_device};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device(String);

impl Device {
    /// Opens the device called `name` (errors list the known devices).
    pub fn new(name: &str) -> Result<Device> {
        let d = get_device(&canonical_name(name))?;
        Ok(Device(d.name().to_string()))
    }
    /// `DEV` if set, else the first device that opens (see `runtime::registry::DEVICES`).
    pub fn try_default() -> Result<Device> {
        default_device_name().map(Device)
    }
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl Default for Device {
    /// The default device; panics with the reason if `DEV` names an unknown device.
    fn default() -> Self {
        Device::try_default().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&Device> for Device {
    fn from(d: &Device) -> Device {
        d.clone()
    }
}
