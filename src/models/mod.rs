//! Models users bring with pretrained weights, built from `nn` layers and loaded from the files
//! their authors publish (a `config.json` and a `model.safetensors`), with parameter names equal
//! to the checkpoint's so `load_state_dict` checks every key, shape and dtype.

pub mod auto;
pub mod bert;
pub mod config;
pub mod generate;
mod gguf;
#[cfg(feature = "tokenizers")]
mod gguf_tokenizer;
pub mod gpt2;
pub mod kv_cache;
pub mod llama;
#[cfg(feature = "tokenizers")]
pub mod tokenize;

pub use auto::load_causal_lm;
pub use generate::{generate, CausalLm, GenerateOpts, Generated, Sampling};
pub use gpt2::Gpt2;
pub use kv_cache::{KvCache, Start};
pub use llama::Llama;
