//! nn: layers, optimizers, state (safetensors), datasets.

mod module;

pub use ferrograd_derive::Module;
pub use module::{get_parameters, join_name, state_dict, Module};
