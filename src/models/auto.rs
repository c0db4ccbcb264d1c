//! A causal language model of whichever supported architecture a model folder holds.

use super::config::{folder_config, Config};
use super::{CausalLm, Gpt2, Llama};
use crate::error::Result;
use std::path::Path;
use std::rc::Rc;

/// Loads the model in `dir` by its `config.json`'s `model_type`: `llama` or `gpt2`.
pub fn load_causal_lm(dir: impl AsRef<Path>) -> Result<Rc<dyn CausalLm>> {
    let dir = dir.as_ref();
    let config = Config::read(&folder_config(dir)?)?;
    match config.str_or("model_type", "")?.as_str() {
        "llama" => Ok(Rc::new(Llama::from_pretrained(dir)?)),
        "gpt2" => Ok(Rc::new(Gpt2::from_pretrained(dir)?)),
        other => Err(config.error(format!("model_type {other:?} is not supported (\"llama\" and \"gpt2\" are)"))),
    }
}
