//! Devices by name. `DEV` selects one; otherwise the first that opens, in a fixed order.

use super::device::Device;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Device kinds in the order `Device::default()` tries them (a GPU first, when built in).
#[cfg(all(feature = "cuda", feature = "opencl"))]
pub const DEVICE_ORDER: &[&str] = &["CUDA", "CL", "CPU"];
#[cfg(all(feature = "cuda", not(feature = "opencl")))]
pub const DEVICE_ORDER: &[&str] = &["CUDA", "CPU"];
#[cfg(all(not(feature = "cuda"), feature = "opencl"))]
pub const DEVICE_ORDER: &[&str] = &["CL", "CPU"];
#[cfg(not(any(feature = "cuda", feature = "opencl")))]
pub const DEVICE_ORDER: &[&str] = &["CPU"];
/// Every device name `DEV` accepts (some need a cargo feature; opening says which).
pub const KNOWN_DEVICES: &[&str] = &["CPU", "INTERP", "CUDA", "CL"];

fn opened() -> &'static Mutex<HashMap<String, Arc<dyn Device>>> {
    static OPEN: OnceLock<Mutex<HashMap<String, Arc<dyn Device>>>> = OnceLock::new();
    OPEN.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Canonical form of a device name: upper-case kind, `:N` kept only when non-zero
/// (`cpu` → `CPU`, `CL:0` → `CL`, `cl:1` → `CL:1`).
pub fn canonical_name(name: &str) -> String {
    let up = name.trim().to_ascii_uppercase();
    match up.split_once(':') {
        Some((kind, "0")) => kind.to_string(),
        _ => up,
    }
}

fn open(name: &str) -> Result<Arc<dyn Device>> {
    let kind = name.split(':').next().unwrap_or("");
    match kind {
        "CPU" => Ok(Arc::new(super::cpu::CpuDevice::new())),
        "INTERP" => Ok(Arc::new(super::interp::InterpDevice::new())),
        #[cfg(feature = "cuda")]
        "CUDA" => Ok(Arc::new(super::cuda::CudaDevice::open(name)?)),
        #[cfg(not(feature = "cuda"))]
        "CUDA" => Err(Error::DeviceUnavailable {
            device: name.to_string(),
            reason: "ferrograd was built without CUDA support; rebuild with `--features cuda`".into(),
        }),
        #[cfg(feature = "opencl")]
        "CL" => Ok(Arc::new(super::opencl::ClDevice::open(name, device_index(name)?)?)),
        #[cfg(not(feature = "opencl"))]
        "CL" => Err(Error::DeviceUnavailable {
            device: name.to_string(),
            reason: "ferrograd was built without OpenCL support; rebuild with `--features opencl`".into(),
        }),
        _ => Err(Error::UnknownDevice { name: name.to_string(), known: KNOWN_DEVICES.join(", ") }),
    }
}

/// The `N` of a canonical name `KIND:N` (0 without one).
#[cfg_attr(not(feature = "opencl"), allow(dead_code))]
fn device_index(name: &str) -> Result<usize> {
    match name.split_once(':') {
        None => Ok(0),
        Some((_, n)) => n.parse().map_err(|_| Error::UnknownDevice {
            name: name.to_string(),
            known: format!("{} (a device index is a number: `CL:1`)", KNOWN_DEVICES.join(", ")),
        }),
    }
}

/// The device called `name` (opened once, then shared).
pub fn get_device(name: &str) -> Result<Arc<dyn Device>> {
    let name = canonical_name(name);
    let mut map = opened().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = map.get(&name) {
        return Ok(d.clone());
    }
    let dev = open(&name)?;
    map.insert(name, dev.clone());
    Ok(dev)
}

/// Name of the default device for new tensors, without requiring that it opens: `DEV` if set
/// (canonical form; an unknown or unavailable device is an error when it is used), else the
/// first of [`DEVICE_ORDER`] that opens.
pub fn default_device_label() -> String {
    if let Some(dev) = std::env::var("DEV").ok().filter(|d| !d.trim().is_empty()) {
        return canonical_name(&dev);
    }
    default_device_name().unwrap_or_else(|_| "CPU".to_string())
}

/// Name of the default device: `DEV` if set (checked), else the first of [`DEVICE_ORDER`]
/// that opens.
pub fn default_device_name() -> Result<String> {
    static DEFAULT: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            if let Ok(dev) = std::env::var("DEV") {
                if !dev.trim().is_empty() {
                    return get_device(&dev).map(|d| d.name().to_string()).map_err(|e| e.to_string());
                }
            }
            for kind in DEVICE_ORDER {
                if let Ok(d) = get_device(kind) {
                    return Ok(d.name().to_string());
                }
            }
            Err("no device could be opened".to_string())
        })
        .clone()
        .map_err(Error::Other)
}
