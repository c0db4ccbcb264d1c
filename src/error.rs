//! Errors from the environment (devices, compilers, files). Programmer errors panic instead.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// `DEV` names no known device, or the device cannot be opened.
    #[error("unknown device {name:?}; known devices: {known}")]
    UnknownDevice { name: String, known: String },
    #[error("device {device} is not available: {reason}")]
    DeviceUnavailable { device: String, reason: String },
    /// The kernel compiler could not be run or rejected the source.
    #[error("{device}: compiling kernel {kernel} failed: {message}")]
    Compile { device: String, kernel: String, message: String },
    #[error("{device}: running kernel {kernel} failed: {message}")]
    Launch { device: String, kernel: String, message: String },
    #[error("{device}: out of memory allocating {bytes} bytes")]
    OutOfMemory { device: String, bytes: usize },
    /// Reading data of one dtype as another.
    #[error("dtype mismatch: tensor is {have}, asked for {want}")]
    DType { have: String, want: String },
    /// Misuse of TinyJit: other inputs than captured, reading data inside a capture.
    #[error("{0}")]
    Jit(String),
    #[error("{0}")]
    Other(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
