//! Models users bring with pretrained weights, built from `nn` layers and loaded from the files
//! their authors publish (a `config.json` and a `model.safetensors`), with parameter names equal
//! to the checkpoint's so `load_state_dict` checks every key, shape and dtype.

pub mod bert;
#[cfg(feature = "tokenizers")]
pub mod tokenize;
