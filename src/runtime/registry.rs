//! Devices by name. `DEV` selects one; otherwise the first that opens, in a fixed order.

use super::backend::Backend;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Opens a device from its canonical name (`CL:1` for the second OpenCL device).
pub type Opener = fn(&str) -> Result<Arc<dyn Backend>>;

/// One row per device kind. Adding a device is a file with an `open` function and a row here.
pub struct DeviceKind {
    /// The name `DEV` takes (upper case).
    pub name: &'static str,
    /// Whether the default device may be this one (tried in table order).
    pub default_candidate: bool,
    /// The cargo feature that builds it in, if it needs one.
    pub feature: Option<&'static str>,
    /// Whether `KIND:N` names one of several devices (`CL:1`); `INTERP:1` is an error.
    pub numbered: bool,
    /// `None` when built without its feature.
    pub open: Option<Opener>,
}

/// `Some(opener)` when `feature` is enabled, else `None`.
macro_rules! with_feature {
    ($feature:literal, $opener:path) => {{
        #[cfg(feature = $feature)]
        let opener: Option<Opener> = Some($opener);
        #[cfg(not(feature = $feature))]
        let opener: Option<Opener> = None;
        opener
    }};
}

/// Every device, in the order the default device is chosen (a GPU first, when built in).
pub const DEVICES: &[DeviceKind] = &[
    DeviceKind {
        name: "CUDA",
        default_candidate: true,
        feature: Some("cuda"),
        numbered: true,
        open: with_feature!("cuda", super::cuda::open),
    },
    DeviceKind {
        name: "NV",
        default_candidate: false,
        feature: Some("cuda"),
        numbered: true,
        open: with_feature!("cuda", super::cuda::open_ptx),
    },
    DeviceKind {
        name: "AMD",
        default_candidate: true,
        feature: Some("hip"),
        numbered: true,
        open: with_feature!("hip", super::hip::open),
    },
    DeviceKind {
        name: "CL",
        default_candidate: true,
        feature: Some("opencl"),
        numbered: true,
        open: with_feature!("opencl", super::opencl::open),
    },
    DeviceKind {
        name: "QCOM",
        default_candidate: false,
        feature: Some("opencl"),
        numbered: true,
        open: with_feature!("opencl", super::opencl::open_qcom),
    },
    DeviceKind {
        name: "WEBGPU",
        default_candidate: false,
        feature: Some("webgpu"),
        numbered: false,
        open: with_feature!("webgpu", super::webgpu::open),
    },
    DeviceKind {
        name: "METAL",
        default_candidate: true,
        feature: Some("metal"),
        numbered: false,
        open: {
            #[cfg(all(feature = "metal", target_os = "macos"))]
            let opener: Option<Opener> = Some(super::metal::open);
            #[cfg(not(all(feature = "metal", target_os = "macos")))]
            let opener: Option<Opener> = None;
            opener
        },
    },
    // `CPU:N`: more CPU devices on the same memory, each with its own worker threads (for
    // sharding tests, and for multi-socket machines).
    DeviceKind { name: "CPU", default_candidate: true, feature: None, numbered: true, open: Some(super::cpu::open) },
    DeviceKind {
        name: "INTERP",
        default_candidate: false,
        feature: None,
        numbered: false,
        open: Some(super::interp::open),
    },
    DeviceKind {
        name: "NULL",
        default_candidate: false,
        feature: None,
        numbered: false,
        open: Some(super::null::open),
    },
];

/// Names of every device `DEV` accepts (some need a cargo feature; opening says which).
pub fn known_devices() -> Vec<&'static str> {
    DEVICES.iter().map(|d| d.name).collect()
}

fn opened() -> &'static Mutex<HashMap<String, Arc<dyn Backend>>> {
    static OPEN: OnceLock<Mutex<HashMap<String, Arc<dyn Backend>>>> = OnceLock::new();
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

fn open(name: &str) -> Result<Arc<dyn Backend>> {
    let kind = name.split(':').next().unwrap_or("");
    let Some(row) = DEVICES.iter().find(|d| d.name == kind) else {
        return Err(Error::UnknownDevice { name: name.to_string(), known: known_devices().join(", ") });
    };
    if !row.numbered && name.contains(':') {
        return Err(Error::DeviceUnavailable {
            device: name.to_string(),
            reason: format!("there is one {kind} device: call it `{kind}` (or `{kind}:0`)"),
        });
    }
    match (row.open, row.feature) {
        (Some(open), _) => open(name),
        (None, _) if kind == "METAL" && !cfg!(target_os = "macos") => Err(Error::DeviceUnavailable {
            device: name.to_string(),
            reason: "Metal is Apple's GPU interface: METAL runs on macOS only (its kernels can still be seen \
                     here with renderer::cstyle::metal_renderer)"
                .into(),
        }),
        (None, feature) => Err(Error::DeviceUnavailable {
            device: name.to_string(),
            reason: format!(
                "ferrograd was built without {kind} support; rebuild with `--features {}`",
                feature.unwrap_or("?")
            ),
        }),
    }
}

/// The device called `name` (opened once, then shared).
pub fn get_device(name: &str) -> Result<Arc<dyn Backend>> {
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
/// first default candidate of the `DEVICES` table that opens.
pub fn default_device_label() -> String {
    if let Some(dev) = crate::flags::text("DEV") {
        return canonical_name(&dev);
    }
    default_device_name().unwrap_or_else(|_| "CPU".to_string())
}

/// Name of the default device: `DEV` if set (checked), else the first default candidate of
/// the `DEVICES` table that opens.
pub fn default_device_name() -> Result<String> {
    static DEFAULT: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            if let Some(dev) = crate::flags::text("DEV") {
                return get_device(&dev).map(|d| d.name().to_string()).map_err(|e| e.to_string());
            }
            for kind in DEVICES.iter().filter(|d| d.default_candidate && d.open.is_some()) {
                if let Ok(d) = get_device(kind.name) {
                    return Ok(d.name().to_string());
                }
            }
            Err("no device could be opened".to_string())
        })
        .clone()
        .map_err(Error::Other)
}
