//! GPT-2 as Hugging Face's `GPT2LMHeadModel`: learned positions, pre-norm LayerNorm blocks,
//! the tanh GELU, and its `Conv1D` layers (weights stored `[in, out]`, the transpose of
//! `nn::Linear`'s). The output projection is tied to the token embeddings.

use super::config::{folder_config, Config};
use super::kv_cache::{self_attention, KvCache, Start};
use super::CausalLm;
use crate::error::Result;
use crate::nn::{self, Embedding, LayerNorm, Module};
use crate::Tensor;
use std::path::Path;

/// The fields of a GPT-2 `config.json` this model reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpt2Config {
    pub vocab_size: usize,
    pub n_positions: usize,
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_head: usize,
    /// The feed-forward width (`n_inner`, default `4 * n_embd`).
    pub n_inner: usize,
    pub layer_norm_epsilon: f64,
}

impl Gpt2Config {
    pub fn from_file(path: impl AsRef<Path>) -> Result<Gpt2Config> {
        let c = Config::read(path.as_ref())?;
        let act = c.str_or("activation_function", "gelu_new")?;
        if !matches!(act.as_str(), "gelu_new" | "gelu_pytorch_tanh") {
            return Err(c.error(format!("activation_function {act:?} is not supported (GPT-2 uses \"gelu_new\")")));
        }
        for flag in ["scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"] {
            if c.bool_or(flag, false)? {
                return Err(c.error(format!("`{flag}: true` is not supported")));
            }
        }
        if !c.bool_or("scale_attn_weights", true)? {
            return Err(c.error("`scale_attn_weights: false` is not supported".into()));
        }
        let (n_embd, n_head) = (c.usize("n_embd")?, c.usize("n_head")?);
        if n_head == 0 || !n_embd.is_multiple_of(n_head) {
            return Err(c.error(format!("n_embd {n_embd} is not a multiple of n_head {n_head}")));
        }
        Ok(Gpt2Config {
            vocab_size: c.usize("vocab_size")?,
            n_positions: c.usize("n_positions")?,
            n_embd,
            n_layer: c.usize("n_layer")?,
            n_head,
            n_inner: c.usize_opt("n_inner")?.unwrap_or(4 * n_embd),
            layer_norm_epsilon: c.f64_or("layer_norm_epsilon", 1e-5)?,
        })
    }
}

/// GPT-2's `Conv1D`: `x @ weight + bias` with `weight` `[in, out]`.
#[derive(Module)]
pub struct Conv1D {
    pub weight: Tensor,
    pub bias: Tensor,
}

impl Conv1D {
    fn new(inputs: usize, outputs: usize) -> Conv1D {
        Conv1D { weight: Tensor::normal([inputs, outputs], 0.0, 0.02), bias: Tensor::zeros([outputs]) }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.matmul(&self.weight) + &self.bias
    }
}

#[derive(Module)]
pub struct Gpt2Attention {
    pub c_attn: Conv1D,
    pub c_proj: Conv1D,
}

#[derive(Module)]
pub struct Gpt2Mlp {
    pub c_fc: Conv1D,
    pub c_proj: Conv1D,
}

#[derive(Module)]
pub struct Gpt2Block {
    pub ln_1: LayerNorm,
    pub attn: Gpt2Attention,
    pub ln_2: LayerNorm,
    pub mlp: Gpt2Mlp,
}

/// The decoder stack (`transformer.` in the checkpoint).
#[derive(Module)]
pub struct Gpt2Model {
    pub wte: Embedding,
    pub wpe: Embedding,
    pub h: Vec<Gpt2Block>,
    pub ln_f: LayerNorm,
}

/// `GPT2LMHeadModel` (its `lm_head` is the token embedding table).
#[derive(Module)]
pub struct Gpt2 {
    pub transformer: Gpt2Model,
    #[module(skip)]
    pub config: Gpt2Config,
}

impl Gpt2 {
    /// A randomly initialized model (weights `N(0, 0.02)`, as transformers initializes them).
    pub fn new(config: Gpt2Config) -> Gpt2 {
        let (d, eps) = (config.n_embd, config.layer_norm_epsilon);
        let norm = || LayerNorm::with(vec![d], eps, true);
        let h = (0..config.n_layer)
            .map(|_| Gpt2Block {
                ln_1: norm(),
                attn: Gpt2Attention { c_attn: Conv1D::new(d, 3 * d), c_proj: Conv1D::new(d, d) },
                ln_2: norm(),
                mlp: Gpt2Mlp { c_fc: Conv1D::new(d, config.n_inner), c_proj: Conv1D::new(config.n_inner, d) },
            })
            .collect();
        let transformer = Gpt2Model {
            wte: Embedding { weight: Tensor::normal([config.vocab_size, d], 0.0, 0.02) },
            wpe: Embedding { weight: Tensor::normal([config.n_positions, d], 0.0, 0.02) },
            h,
            ln_f: norm(),
        };
        Gpt2 { transformer, config }
    }

    /// Loads a Hugging Face model folder. Keys may lack the `transformer.` prefix (OpenAI's
    /// original checkpoints); the attention-mask buffers old checkpoints carry are dropped.
    pub fn from_pretrained(dir: impl AsRef<Path>) -> Result<Gpt2> {
        let dir = dir.as_ref();
        let config = Gpt2Config::from_file(folder_config(dir)?)?;
        let model = crate::tensor::skip_init(|| Gpt2::new(config));
        let weights = super::config::load_weights(dir)?
            .into_iter()
            .filter(|(k, _)| !k.ends_with(".attn.bias") && !k.ends_with(".attn.masked_bias") && k != "lm_head.weight")
            .map(|(k, v)| if k.starts_with("transformer.") { (k, v) } else { (format!("transformer.{k}"), v) })
            .collect();
        nn::load_state_dict(&model, weights)?;
        Ok(model)
    }
}

impl CausalLm for Gpt2 {
    fn hidden(&self, tokens: &Tensor, start: Start, cache: Option<&KvCache>) -> Tensor {
        let shape = tokens.shape();
        assert_eq!(shape.len(), 2, "Gpt2::hidden: tokens must be [batch, t] (got {shape:?})");
        let (b, t) = (shape[0], shape[1]);
        let (d, heads) = (self.config.n_embd, self.config.n_head);
        let tr = &self.transformer;
        let mut x = tr.wte.forward(tokens) + tr.wpe.forward(&start.positions(t));
        for (i, block) in tr.h.iter().enumerate() {
            let qkv = block.attn.c_attn.forward(&block.ln_1.forward(&x)).reshape([b, t, 3, heads, d / heads]);
            let part = |j: usize| {
                qkv.shrink(&[(0, b), (0, t), (j, j + 1), (0, heads), (0, d / heads)]).squeeze(2).transpose(1, 2)
            };
            let (q, k, v) = (part(0), part(1), part(2));
            let context = self_attention(&q, &k, &v, &start, cache, i, None);
            x = x + block.attn.c_proj.forward(&context);
            let h = block.mlp.c_fc.forward(&block.ln_2.forward(&x)).gelu_tanh();
            x = &x + block.mlp.c_proj.forward(&h);
        }
        tr.ln_f.forward(&x)
    }

    fn logits(&self, hidden: &Tensor) -> Tensor {
        hidden.matmul(&self.transformer.wte.weight.t())
    }

    fn new_cache(&self, batch: usize, max_len: usize) -> KvCache {
        let c = &self.config;
        KvCache::new(c.n_layer, batch, c.n_head, max_len, c.n_embd / c.n_head)
    }

    fn max_positions(&self) -> usize {
        self.config.n_positions
    }
}
