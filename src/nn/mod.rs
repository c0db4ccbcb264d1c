//! nn: layers, optimizers, state (safetensors, GGUF, NumPy's .npy/.npz), datasets.

pub mod datasets;
pub mod gguf;
mod layers;
mod module;
mod npy;
pub mod optim;
pub mod safetensors;
mod state;
mod torch_load;

pub use crate::tensor::skip_init;
pub use ferrograd_derive::Module;
pub use gguf::{gguf_load, gguf_load_on, gguf_metadata, GgmlType, Gguf, GgufValue};
pub use layers::{
    BatchNorm, Conv1d, Conv2d, ConvNd, ConvTranspose2d, Dropout, Embedding, GroupNorm, InstanceNorm, LSTMCell,
    LayerNorm, Linear, RMSNorm,
};
pub use module::{get_parameters, join_name, state_dict, Module};
pub use npy::{npy_load, npy_save, npy_save_with, npz_load, npz_save};
pub use safetensors::{safe_load, safe_load_metadata, safe_load_on, safe_save, safe_save_with_metadata};
pub use state::{
    get_state_dict, load_state_dict, load_state_dict_opts, load_state_dict_with, stored_bytes, LoadOptions,
};
pub use torch_load::{torch_load, torch_load_state_dict, TorchValue};
