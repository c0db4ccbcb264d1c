//! A causal language model of whichever supported architecture a model folder holds.

use super::config::{folder_config, Config};
use super::{CausalLm, Gpt2, Llama};
use crate::error::Result;
use std::path::Path;
use std::rc::Rc;

/// Loads the model at `path`: a Hugging Face model folder by its `config.json`'s `model_type`
/// (`llama`, `mistral`, `qwen2` or `gpt2`), or a LLaMA-family GGUF file.
pub fn load_causal_lm(path: impl AsRef<Path>) -> Result<Rc<dyn CausalLm>> {
    let dir = path.as_ref();
    if dir.is_file() && is_gguf(dir) {
        return Ok(Rc::new(Llama::from_gguf(dir)?));
    }
    let config = Config::read(&folder_config(dir)?)?;
    match config.str_or("model_type", "")?.as_str() {
        "llama" | "qwen2" | "mistral" => Ok(Rc::new(Llama::from_pretrained(dir)?)),
        "gpt2" => Ok(Rc::new(Gpt2::from_pretrained(dir)?)),
        other => Err(config.error(format!(
            "model_type {other:?} is not supported (\"llama\", \"mistral\", \"qwen2\" and \"gpt2\" are)"
        ))),
    }
}

/// Whether the file at `path` starts with the GGUF magic.
fn is_gguf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"GGUF"
}
