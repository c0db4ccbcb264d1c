//! LLaMA-family models from GGUF files (llama.cpp's format), as its converter writes them:
//! hyperparameters under `llama.*` (or `qwen2.*`), tensors named `token_embd`, `blk.N.attn_q`,
//! ..., for LLaMA the rows of `attn_q`/`attn_k` in llama.cpp's interleaved RoPE order (Qwen2
//! keeps Hugging Face's order and has q/k/v biases), LLaMA 3's RoPE scaling as a `rope_freqs`
//! tensor. Quantized weights stay quantized in memory (see `nn::gguf`); every
//! weight is installed as stored (`LoadOptions::keep_stored`), so a matmul reads the packed
//! blocks.

use super::llama::{Llama, LlamaConfig, RopeScaling};
use crate::error::{Error, Result};
use crate::nn::{self, GgufValue, LoadOptions};
use crate::Tensor;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads the metadata the model needs, with errors naming the file and the key.
struct Meta<'a> {
    path: &'a Path,
    map: &'a BTreeMap<String, GgufValue>,
    arch: String,
}

impl Meta<'_> {
    fn error(&self, message: String) -> Error {
        Error::Format { path: self.path.to_path_buf(), message }
    }
    fn get(&self, key: &str) -> Option<&GgufValue> {
        self.map.get(&format!("{}.{key}", self.arch))
    }
    fn usize_opt(&self, key: &str) -> Result<Option<usize>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(|x| Some(x as usize))
                .ok_or_else(|| self.error(format!("`{}.{key}` is {v:?}, not a non-negative integer", self.arch))),
        }
    }
    fn usize(&self, key: &str) -> Result<usize> {
        self.usize_opt(key)?.ok_or_else(|| self.error(format!("metadata `{}.{key}` is missing", self.arch)))
    }
    fn f64_or(&self, key: &str, default: f64) -> Result<f64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| self.error(format!("`{}.{key}` is {v:?}, not a number", self.arch))),
        }
    }
}

/// Hugging Face's name for a GGUF tensor name of a LLaMA model.
fn hf_name(gguf: &str) -> Option<String> {
    Some(match gguf {
        "token_embd.weight" => "model.embed_tokens.weight".into(),
        "output_norm.weight" => "model.norm.weight".into(),
        "output.weight" => "lm_head.weight".into(),
        _ => {
            let rest = gguf.strip_prefix("blk.")?;
            let (layer, tail) = rest.split_once('.')?;
            let layer: usize = layer.parse().ok()?;
            let (module, kind) = tail.rsplit_once('.')?;
            if kind != "weight" && kind != "bias" {
                return None;
            }
            let part = match module {
                "attn_norm" => "input_layernorm",
                "ffn_norm" => "post_attention_layernorm",
                "attn_q" => "self_attn.q_proj",
                "attn_k" => "self_attn.k_proj",
                "attn_v" => "self_attn.v_proj",
                "attn_output" => "self_attn.o_proj",
                "ffn_gate" => "mlp.gate_proj",
                "ffn_up" => "mlp.up_proj",
                "ffn_down" => "mlp.down_proj",
                _ => return None,
            };
            format!("model.layers.{layer}.{part}.{kind}")
        }
    })
}

/// llama.cpp's interleaved RoPE row order back to Hugging Face's rotate-half order: within
/// each head, rows `(i, j)` of `(head_dim / 2, 2)` go to `(j, i)`. A view, so a quantized
/// weight stays packed.
fn unpermute(w: &Tensor, heads: usize) -> Tensor {
    let s = w.shape();
    let half = s[0] / heads / 2;
    w.reshape([heads, half, 2, s[1]]).transpose(1, 2).reshape(s)
}

impl Llama {
    /// Loads a LLaMA-family GGUF file, architecture `llama` or `qwen2` (see the module docs).
    /// Hyperparameters come from its metadata; unknown tensors, missing ones and wrong shapes
    /// are errors.
    pub fn from_gguf(path: impl AsRef<Path>) -> Result<Llama> {
        let path = path.as_ref();
        let g = nn::gguf_load(path)?;
        let arch = g.metadata.get("general.architecture").and_then(|v| v.as_str()).unwrap_or("").to_string();
        let m = Meta { path, map: &g.metadata, arch };
        if m.arch != "llama" && m.arch != "qwen2" {
            return Err(m.error(format!(
                "general.architecture is {:?}; the GGUF architectures supported are \"llama\" and \"qwen2\"",
                m.arch
            )));
        }
        // llama.cpp stores LLaMA's q/k rows in its interleaved RoPE order, Qwen2's as they are.
        let reordered = m.arch == "llama";
        let embed =
            g.tensors.get("token_embd.weight").ok_or_else(|| m.error("no `token_embd.weight` tensor".into()))?;
        let hidden = m.usize("embedding_length")?;
        let heads = m.usize("attention.head_count")?;
        let kv_heads = m.usize_opt("attention.head_count_kv")?.unwrap_or(heads);
        if heads == 0 || kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            return Err(m.error(format!("head_count {heads} is not a multiple of head_count_kv {kv_heads}")));
        }
        let head_dim = match m.usize_opt("attention.key_length")? {
            Some(d) => d,
            None => m.usize_opt("rope.dimension_count")?.unwrap_or(hidden / heads),
        };
        let rope_theta = m.f64_or("rope.freq_base", 10000.0)?;
        let scaling_type = m.get("rope.scaling.type").and_then(|v| v.as_str()).unwrap_or("none");
        let mut rope_scaling = match scaling_type {
            "none" => RopeScaling::None,
            "linear" => RopeScaling::Linear { factor: m.f64_or("rope.scaling.factor", 1.0)? },
            other => return Err(m.error(format!("rope scaling {other:?} is not supported (none and linear are)"))),
        };
        if let Some(freqs) = g.tensors.get("rope_freqs.weight") {
            if freqs.shape() != [head_dim / 2] {
                return Err(m.error(format!("rope_freqs has shape {:?}, not [{}]", freqs.shape(), head_dim / 2)));
            }
            let divisors = freqs.cast(crate::DType::F32).to_vec::<f32>()?;
            rope_scaling = RopeScaling::Divisors(divisors.into_iter().map(f64::from).collect());
        }
        let config = LlamaConfig {
            vocab_size: embed.shape()[0],
            hidden_size: hidden,
            intermediate_size: m.usize("feed_forward_length")?,
            num_hidden_layers: m.usize("block_count")?,
            num_attention_heads: heads,
            num_key_value_heads: kv_heads,
            head_dim,
            rms_norm_eps: m.f64_or("attention.layer_norm_rms_epsilon", 1e-5)?,
            rope_theta,
            rope_scaling,
            max_position_embeddings: m.usize_opt("context_length")?.unwrap_or(2048),
            tie_word_embeddings: !g.tensors.contains_key("output.weight"),
            qkv_bias: g.tensors.contains_key("blk.0.attn_q.bias"),
            o_bias: g.tensors.contains_key("blk.0.attn_output.bias"),
            sliding_window: None,
            window_from_layer: 0,
        };
        let model = crate::tensor::skip_init(|| Llama::new(config));
        let mut dict = BTreeMap::new();
        for (name, tensor) in g.tensors {
            if name == "rope_freqs.weight" {
                continue;
            }
            let Some(hf) = hf_name(&name) else {
                return Err(m.error(format!("tensor `{name}` is not part of a LLaMA-family model")));
            };
            let tensor = if reordered && hf.ends_with("q_proj.weight") {
                unpermute(&tensor, heads)
            } else if reordered && hf.ends_with("k_proj.weight") {
                unpermute(&tensor, kv_heads)
            } else {
                tensor
            };
            dict.insert(hf, tensor);
        }
        let opts = LoadOptions { keep_stored: true, ..LoadOptions::default() };
        nn::load_state_dict_opts(&model, dict, &opts)
            .map_err(|e| m.error(format!("the tensors do not fit the model its metadata describes: {e}")))?;
        Ok(model)
    }
}
