//! Errors from the environment (devices, compilers, files). Programmer errors panic instead.

use std::path::PathBuf;
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
    /// A file that is there but cannot be used: truncated or corrupt weights or data, a wrong
    /// checksum, a dtype ferrograd does not hold. The message says what is wrong and what to do.
    #[error("{}: {message}", path.display())]
    Format { path: PathBuf, message: String },
    /// Opening, reading or writing the file at `path` failed.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    /// Something needed (a data set, a file) is not there; `help` says where to put it.
    #[error("{what} not found. {help}")]
    NotFound { what: String, help: String },
    /// `load_state_dict` found keys or tensors that do not fit the model (all listed at once).
    #[error("{}", state_dict_message(missing, unexpected, mismatched))]
    StateDict { missing: Vec<String>, unexpected: Vec<String>, mismatched: Vec<String> },
    /// A model uses something ferrograd does not implement (an ONNX op at an opset, a dtype);
    /// the message names it.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A collective across processes failed: a rank left or did not answer, or the launcher's
    /// environment is incomplete (the message says which rank and what to set).
    #[error("distributed: {0}")]
    Distributed(String),
    #[error("{0}")]
    Other(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// `Error::Format`: the file at `path` is there but cannot be used; `message` says why.
    pub fn format(path: &std::path::Path, message: impl Into<String>) -> Error {
        Error::Format { path: path.to_path_buf(), message: message.into() }
    }
    /// For `map_err`: opening, reading or writing the file at `path` failed (`Error::File`).
    pub fn file(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::File { path: path.to_path_buf(), source }
    }
}

/// One line per problem, so a user sees every bad key of a checkpoint at once.
fn state_dict_message(missing: &[String], unexpected: &[String], mismatched: &[String]) -> String {
    let n = missing.len() + unexpected.len() + mismatched.len();
    let mut out = format!("load_state_dict: {n} problem{} loading the state dict:", if n == 1 { "" } else { "s" });
    for k in missing {
        out += &format!("\n  missing key `{k}`: the model has it, the state dict does not");
    }
    for k in unexpected {
        out += &format!("\n  unexpected key `{k}`: the state dict has it, the model does not");
    }
    for m in mismatched {
        out += &format!("\n  {m}");
    }
    if !missing.is_empty() || !unexpected.is_empty() {
        out += "\n(use load_state_dict_with(model, dict, false) to skip missing and unexpected keys)";
    }
    out
}
