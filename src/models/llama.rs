//! LLaMA-family decoders as Hugging Face's `LlamaForCausalLM` (LLaMA 2 and 3, and the models
//! that share its layout: Qwen2 with its q/k/v biases, Mistral with its sliding window): RMSNorm, rotary position embeddings with the config's theta and
//! scaling, grouped-query attention, a SwiGLU feed-forward, tied or untied output embeddings.
//! Parameter names are the checkpoint's, so a `model.safetensors` loads strictly.

use super::config::{folder_config, Config};
use super::kv_cache::{self_attention, KvCache, Start};
use super::CausalLm;
use crate::error::Result;
use crate::nn::{self, Embedding, Linear, Module, RMSNorm};
use crate::{DType, Tensor};
use std::path::Path;

/// How the rotary frequencies are scaled for long contexts (`rope_scaling` / `rope_parameters`).
#[derive(Clone, Debug, PartialEq)]
pub enum RopeScaling {
    None,
    /// Positions divided by `factor`.
    Linear {
        factor: f64,
    },
    /// LLaMA 3.1's: low frequencies divided by `factor`, high ones kept, a smooth blend between.
    Llama3 {
        factor: f64,
        low_freq_factor: f64,
        high_freq_factor: f64,
        original_max_position_embeddings: f64,
    },
    /// Each frequency divided by its own divisor (`head_dim / 2` of them): how GGUF files store
    /// LLaMA 3's scaling (the `rope_freqs` tensor).
    Divisors(Vec<f64>),
}

/// The fields of a LLaMA `config.json` this model reads.
#[derive(Clone, Debug, PartialEq)]
pub struct LlamaConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub head_dim: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: f64,
    pub rope_scaling: RopeScaling,
    pub max_position_embeddings: usize,
    pub tie_word_embeddings: bool,
    /// Biases on the query, key and value projections (Qwen2; LLaMA's `attention_bias`).
    pub qkv_bias: bool,
    /// A bias on the output projection (LLaMA's `attention_bias`; Qwen2 has none).
    pub o_bias: bool,
    /// Mistral's and Qwen2's sliding window: a query ignores keys this many positions or more
    /// behind it, in the layers from `window_from_layer` on.
    pub sliding_window: Option<usize>,
    /// The first layer with the sliding window (Qwen2's `max_window_layers`; 0 for Mistral).
    pub window_from_layer: usize,
}

/// Qwen2's first sliding-window layer: `max_window_layers`, checked against `layer_types` when
/// the config lists them (transformers 5 writes both); a list that is not full attention then
/// sliding windows is refused.
fn window_from_layer(c: &Config) -> Result<usize> {
    let layers = c.usize("num_hidden_layers")?;
    let from = c.usize_opt("max_window_layers")?.unwrap_or(layers).min(layers);
    if let Some(types) = c.json.get("layer_types").and_then(|v| v.as_array()) {
        let sliding: Vec<bool> = types.iter().map(|t| t.as_str() == Some("sliding_attention")).collect();
        let first = sliding.iter().position(|&s| s).unwrap_or(layers);
        if sliding.len() != layers || sliding[first..].iter().any(|s| !s) {
            return Err(c.error(format!(
                "`layer_types` {types:?}: only full attention followed by sliding-window layers is supported"
            )));
        }
        return Ok(first);
    }
    Ok(from)
}

impl LlamaConfig {
    /// The shape of LLaMA-3.2-1B (16 layers, width 2048, 32 heads, 8 kv heads).
    pub fn llama_3_2_1b() -> LlamaConfig {
        LlamaConfig {
            vocab_size: 128256,
            hidden_size: 2048,
            intermediate_size: 8192,
            num_hidden_layers: 16,
            num_attention_heads: 32,
            num_key_value_heads: 8,
            head_dim: 64,
            rms_norm_eps: 1e-5,
            rope_theta: 500000.0,
            rope_scaling: RopeScaling::Llama3 {
                factor: 32.0,
                low_freq_factor: 1.0,
                high_freq_factor: 4.0,
                original_max_position_embeddings: 8192.0,
            },
            max_position_embeddings: 131072,
            tie_word_embeddings: true,
            qkv_bias: false,
            o_bias: false,
            sliding_window: None,
            window_from_layer: 0,
        }
    }

    /// Reads a Hugging Face `config.json`, in either form of its RoPE settings (`rope_theta` +
    /// `rope_scaling`, or transformers 5's `rope_parameters`). Settings this implementation
    /// does not have are errors, not ignored.
    pub fn from_file(path: impl AsRef<Path>) -> Result<LlamaConfig> {
        let c = Config::read(path.as_ref())?;
        let act = c.str_or("hidden_act", "silu")?;
        if act != "silu" {
            return Err(c.error(format!("hidden_act {act:?} is not supported (LLaMA uses \"silu\")")));
        }
        if c.bool_or("mlp_bias", false)? {
            return Err(c.error("`mlp_bias: true` is not supported".into()));
        }
        // Qwen2 is this model with biases on q, k and v (and full attention in every layer).
        let model_type = c.str_or("model_type", "llama")?;
        let qwen2 = model_type == "qwen2";
        let attention_bias = c.bool_or("attention_bias", false)?;
        let heads = c.usize("num_attention_heads")?;
        let hidden = c.usize("hidden_size")?;
        if heads == 0 || !hidden.is_multiple_of(heads) && c.usize_opt("head_dim")?.is_none() {
            return Err(c.error(format!("hidden_size {hidden} is not a multiple of num_attention_heads {heads}")));
        }
        let kv_heads = c.usize_opt("num_key_value_heads")?.unwrap_or(heads);
        if kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            return Err(
                c.error(format!("num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}"))
            );
        }
        let (rope_theta, rope_scaling) = rope_settings(&c)?;
        Ok(LlamaConfig {
            vocab_size: c.usize("vocab_size")?,
            hidden_size: hidden,
            intermediate_size: c.usize("intermediate_size")?,
            num_hidden_layers: c.usize("num_hidden_layers")?,
            num_attention_heads: heads,
            num_key_value_heads: kv_heads,
            head_dim: c.usize_opt("head_dim")?.unwrap_or(hidden / heads),
            rms_norm_eps: c.f64_or("rms_norm_eps", 1e-6)?,
            rope_theta,
            rope_scaling,
            max_position_embeddings: c.usize_opt("max_position_embeddings")?.unwrap_or(2048),
            tie_word_embeddings: c.bool_or("tie_word_embeddings", false)?,
            qkv_bias: qwen2 || attention_bias,
            o_bias: attention_bias,
            // Mistral is this model with a sliding window (`null`: none); Qwen2 with one in the
            // layers from `max_window_layers` on when `use_sliding_window` is set.
            sliding_window: match model_type.as_str() {
                "mistral" => c.usize_opt("sliding_window")?,
                "qwen2" if c.bool_or("use_sliding_window", false)? => c.usize_opt("sliding_window")?,
                _ => None,
            },
            window_from_layer: if qwen2 { window_from_layer(&c)? } else { 0 },
        })
    }

    /// The rotary inverse frequencies, `head_dim / 2` of them, scaled as configured (computed in
    /// f64, rounded once to f32).
    pub fn inv_freq(&self) -> Vec<f32> {
        let d = self.head_dim as f64;
        (0..self.head_dim / 2)
            .map(|i| {
                let f = 1.0 / self.rope_theta.powf(2.0 * i as f64 / d);
                let scaled = match self.rope_scaling {
                    RopeScaling::None => f,
                    RopeScaling::Linear { factor } => f / factor,
                    RopeScaling::Divisors(ref d) => f / d[i],
                    RopeScaling::Llama3 {
                        factor,
                        low_freq_factor,
                        high_freq_factor,
                        original_max_position_embeddings,
                    } => {
                        let wavelen = 2.0 * std::f64::consts::PI / f;
                        let (low_wavelen, high_wavelen) = (
                            original_max_position_embeddings / low_freq_factor,
                            original_max_position_embeddings / high_freq_factor,
                        );
                        if wavelen < high_wavelen {
                            f
                        } else if wavelen > low_wavelen {
                            f / factor
                        } else {
                            let smooth = (original_max_position_embeddings / wavelen - low_freq_factor)
                                / (high_freq_factor - low_freq_factor);
                            (1.0 - smooth) * f / factor + smooth * f
                        }
                    }
                };
                scaled as f32
            })
            .collect()
    }
}

/// `rope_theta` and the scaling, from `rope_parameters` or `rope_theta` + `rope_scaling`.
fn rope_settings(c: &Config) -> Result<(f64, RopeScaling)> {
    let params = c.json.get("rope_parameters").filter(|v| !v.is_null());
    let scaling = params.or_else(|| c.json.get("rope_scaling").filter(|v| !v.is_null()));
    let theta = match params.and_then(|p| p.get("rope_theta")) {
        Some(t) => t.as_f64().ok_or_else(|| c.error("`rope_parameters.rope_theta` is not a number".into()))?,
        None => c.f64_or("rope_theta", 10000.0)?,
    };
    let Some(s) = scaling else { return Ok((theta, RopeScaling::None)) };
    let kind = s.get("rope_type").or_else(|| s.get("type")).and_then(|v| v.as_str()).unwrap_or("default");
    let num = |key: &str| -> Result<f64> {
        s.get(key).and_then(|v| v.as_f64()).ok_or_else(|| c.error(format!("rope scaling `{kind}` needs `{key}`")))
    };
    let scaling = match kind {
        "default" => RopeScaling::None,
        "linear" => RopeScaling::Linear { factor: num("factor")? },
        "llama3" => RopeScaling::Llama3 {
            factor: num("factor")?,
            low_freq_factor: num("low_freq_factor")?,
            high_freq_factor: num("high_freq_factor")?,
            original_max_position_embeddings: num("original_max_position_embeddings")?,
        },
        other => {
            return Err(c.error(format!("rope scaling {other:?} is not supported (default, linear and llama3 are)")))
        }
    };
    Ok((theta, scaling))
}

#[derive(Module)]
pub struct LlamaAttention {
    pub q_proj: Linear,
    pub k_proj: Linear,
    pub v_proj: Linear,
    pub o_proj: Linear,
}

#[derive(Module)]
pub struct LlamaMlp {
    pub gate_proj: Linear,
    pub up_proj: Linear,
    pub down_proj: Linear,
}

#[derive(Module)]
pub struct LlamaLayer {
    pub self_attn: LlamaAttention,
    pub mlp: LlamaMlp,
    pub input_layernorm: RMSNorm,
    pub post_attention_layernorm: RMSNorm,
}

/// The decoder stack (`model.` in the checkpoint).
#[derive(Module)]
pub struct LlamaModel {
    pub embed_tokens: Embedding,
    pub layers: Vec<LlamaLayer>,
    pub norm: RMSNorm,
}

/// `LlamaForCausalLM`: the decoder and its output projection (absent when tied to the
/// embeddings).
#[derive(Module)]
pub struct Llama {
    pub model: LlamaModel,
    pub lm_head: Option<Linear>,
    #[module(skip)]
    pub config: LlamaConfig,
    /// The rotary inverse frequencies, f32 `[head_dim / 2]`.
    #[module(skip)]
    inv_freq: Tensor,
}

fn linear(inputs: usize, outputs: usize) -> Linear {
    Linear { weight: Tensor::normal([outputs, inputs], 0.0, 0.02), bias: None }
}

fn linear_with_bias(inputs: usize, outputs: usize, bias: bool) -> Linear {
    Linear { bias: bias.then(|| Tensor::zeros([outputs])), ..linear(inputs, outputs) }
}

impl Llama {
    /// A randomly initialized model (weights `N(0, 0.02)`, as transformers initializes them).
    pub fn new(config: LlamaConfig) -> Llama {
        let (h, hd) = (config.hidden_size, config.head_dim);
        let (q, kv) = (config.num_attention_heads * hd, config.num_key_value_heads * hd);
        let norm = || RMSNorm { weight: Tensor::ones([h]), eps: config.rms_norm_eps };
        let layers = (0..config.num_hidden_layers)
            .map(|_| LlamaLayer {
                self_attn: LlamaAttention {
                    q_proj: linear_with_bias(h, q, config.qkv_bias),
                    k_proj: linear_with_bias(h, kv, config.qkv_bias),
                    v_proj: linear_with_bias(h, kv, config.qkv_bias),
                    o_proj: linear_with_bias(q, h, config.o_bias),
                },
                mlp: LlamaMlp {
                    gate_proj: linear(h, config.intermediate_size),
                    up_proj: linear(h, config.intermediate_size),
                    down_proj: linear(config.intermediate_size, h),
                },
                input_layernorm: norm(),
                post_attention_layernorm: norm(),
            })
            .collect();
        let model = LlamaModel {
            embed_tokens: Embedding { weight: Tensor::normal([config.vocab_size, h], 0.0, 0.02) },
            layers,
            norm: norm(),
        };
        let lm_head = (!config.tie_word_embeddings).then(|| linear(h, config.vocab_size));
        let inv_freq = Tensor::from_vec(config.inv_freq(), [config.head_dim / 2]);
        Llama { model, lm_head, config, inv_freq }
    }

    /// Loads a Hugging Face model folder (`config.json` and `model.safetensors` or its shards).
    /// Weights in f16 or bf16 stay 16-bit in memory and are widened to f32 inside the kernels
    /// that read them (the activations are f32); see `from_pretrained_with` to convert them.
    pub fn from_pretrained(dir: impl AsRef<Path>) -> Result<Llama> {
        Llama::from_pretrained_with(dir, true)
    }

    /// [`Llama::from_pretrained`] with the choice: with `keep_stored`, weights stay in the
    /// checkpoint's dtype (`LoadOptions::keep_stored`): f16/bf16 weights take half the memory
    /// and a decode step reads half the bytes (the CPU's kernels load and widen them a vector
    /// at a time), for inference; without it they are converted to f32 parameters on load
    /// (twice the memory; what training them needs).
    pub fn from_pretrained_with(dir: impl AsRef<Path>, keep_stored: bool) -> Result<Llama> {
        let dir = dir.as_ref();
        let config = LlamaConfig::from_file(folder_config(dir)?)?;
        let model = crate::tensor::skip_init(|| Llama::new(config));
        let weights = super::config::load_weights(dir)?;
        // Rotary tables some exporters save (this model computes them), and the output
        // projection of a tied model (some checkpoints save it anyway).
        let mut ignore = vec!["*rotary_emb.inv_freq".to_string()];
        if model.config.tie_word_embeddings {
            ignore.push("lm_head.weight".into());
        }
        let opts = nn::LoadOptions { ignore, keep_stored, ..nn::LoadOptions::default() };
        nn::load_state_dict_opts(&model, weights, &opts)?;
        Ok(model)
    }

    /// The cos and sin tables `[t, head_dim]` of the tokens' positions (the halves repeated, as
    /// the rotate-half form of RoPE uses them).
    fn rotary(&self, positions: &Tensor) -> (Tensor, Tensor) {
        let t = positions.shape()[0];
        let half = self.config.head_dim / 2;
        let angles = positions.cast(DType::F32).reshape([t, 1]) * self.inv_freq.reshape([1, half]);
        let angles = Tensor::cat(&[&angles, &angles], -1);
        (angles.cos(), angles.sin())
    }
}

/// `x * cos + rotate_half(x) * sin` for `x` `[batch, heads, t, head_dim]`.
fn apply_rotary(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Tensor {
    let s = x.shape();
    let half = s[3] / 2;
    let first = x.shrink(&[(0, s[0]), (0, s[1]), (0, s[2]), (0, half)]);
    let second = x.shrink(&[(0, s[0]), (0, s[1]), (0, s[2]), (half, s[3])]);
    let rotated = Tensor::cat(&[&second.neg(), &first], -1);
    x * cos + rotated * sin
}

impl CausalLm for Llama {
    fn hidden(&self, tokens: &Tensor, start: Start, cache: Option<&KvCache>) -> Tensor {
        let shape = tokens.shape();
        assert_eq!(shape.len(), 2, "Llama::hidden: tokens must be [batch, t] (got {shape:?})");
        let (b, t) = (shape[0], shape[1]);
        let c = &self.config;
        let (heads, kv_heads, hd) = (c.num_attention_heads, c.num_key_value_heads, c.head_dim);
        let (cos, sin) = self.rotary(&start.positions(t));
        let mut x = self.model.embed_tokens.forward(tokens);
        for (i, layer) in self.model.layers.iter().enumerate() {
            let a = &layer.self_attn;
            let h = layer.input_layernorm.forward(&x);
            let split = |lin: &Linear, n: usize| lin.forward(&h).reshape([b, t, n, hd]).transpose(1, 2);
            let q = apply_rotary(&split(&a.q_proj, heads), &cos, &sin);
            let k = apply_rotary(&split(&a.k_proj, kv_heads), &cos, &sin);
            let v = split(&a.v_proj, kv_heads);
            let window = if i >= c.window_from_layer { c.sliding_window } else { None };
            let context = self_attention(&q, &k, &v, &start, cache, i, window);
            x = x + a.o_proj.forward(&context);
            let h = layer.post_attention_layernorm.forward(&x);
            let m = &layer.mlp;
            x = &x + m.down_proj.forward(&(m.gate_proj.forward(&h).silu() * m.up_proj.forward(&h)));
        }
        self.model.norm.forward(&x)
    }

    fn logits(&self, hidden: &Tensor) -> Tensor {
        match &self.lm_head {
            Some(head) => head.forward(hidden),
            None => hidden.matmul(&self.model.embed_tokens.weight.t()),
        }
    }

    fn new_cache(&self, batch: usize, max_len: usize) -> KvCache {
        let c = &self.config;
        KvCache::new(c.num_hidden_layers, batch, c.num_key_value_heads, max_len, c.head_dim)
    }

    fn max_positions(&self) -> usize {
        self.config.max_position_embeddings
    }
}
