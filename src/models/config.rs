//! Reading a Hugging Face model folder: `config.json` fields with clear errors, and the weights
//! (`model.safetensors`, or the shards a `model.safetensors.index.json` lists).

use crate::error::{Error, Result};
use crate::nn;
use crate::Tensor;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A parsed `config.json`; the accessors' errors name the key, and `Config::error` the file.
pub struct Config {
    pub path: PathBuf,
    pub json: serde_json::Value,
}

impl Config {
    pub fn read(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::File { path: path.into(), source })?;
        let json = serde_json::from_str(&text)
            .map_err(|e| Error::Format { path: path.into(), message: format!("not JSON: {e}") })?;
        Ok(Config { path: path.into(), json })
    }

    pub fn error(&self, message: String) -> Error {
        Error::Format { path: self.path.clone(), message }
    }

    pub fn usize(&self, key: &str) -> Result<usize> {
        self.usize_opt(key)?.ok_or_else(|| self.error(format!("`{key}` is missing")))
    }

    pub fn usize_opt(&self, key: &str) -> Result<Option<usize>> {
        match self.json.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(|x| Some(x as usize))
                .ok_or_else(|| self.error(format!("`{key}` is {v}, not a non-negative integer"))),
        }
    }

    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64> {
        match self.json.get(key) {
            None | Some(serde_json::Value::Null) => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| self.error(format!("`{key}` is {v}, not a number"))),
        }
    }

    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.json.get(key) {
            None | Some(serde_json::Value::Null) => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| self.error(format!("`{key}` is {v}, not true or false"))),
        }
    }

    pub fn str_or(&self, key: &str, default: &str) -> Result<String> {
        match self.json.get(key) {
            None | Some(serde_json::Value::Null) => Ok(default.to_string()),
            Some(v) => {
                v.as_str().map(str::to_string).ok_or_else(|| self.error(format!("`{key}` is {v}, not a string")))
            }
        }
    }
}

/// `dir/config.json`, or the error that a Hugging Face model folder needs one.
pub fn folder_config(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("config.json");
    if !path.is_file() {
        return Err(missing(
            dir,
            "config.json",
            "A Hugging Face model folder holds config.json and model.safetensors.",
        ));
    }
    Ok(path)
}

/// The error for a model folder that lacks `file`.
pub fn missing(dir: &Path, file: &str, help: &str) -> Error {
    Error::NotFound { what: format!("{}", dir.join(file).display()), help: help.into() }
}

/// Every tensor of a model folder's weights: `model.safetensors`, or the shards named by
/// `model.safetensors.index.json` (memory-mapped, as `nn::safe_load`).
pub fn load_weights(dir: &Path) -> Result<BTreeMap<String, Tensor>> {
    let single = dir.join("model.safetensors");
    if single.is_file() {
        return nn::safe_load(&single);
    }
    let index = dir.join("model.safetensors.index.json");
    if !index.is_file() {
        return Err(missing(
            dir,
            "model.safetensors",
            "A Hugging Face model folder holds model.safetensors (or model.safetensors.index.json and its shards).",
        ));
    }
    let config = Config::read(&index)?;
    let map = config
        .json
        .get("weight_map")
        .and_then(|m| m.as_object())
        .ok_or_else(|| config.error("no `weight_map` object".into()))?;
    let mut shards: Vec<&str> = map.values().filter_map(|v| v.as_str()).collect();
    shards.sort_unstable();
    shards.dedup();
    let mut all = BTreeMap::new();
    for shard in shards {
        all.extend(nn::safe_load(dir.join(shard))?);
    }
    Ok(all)
}
