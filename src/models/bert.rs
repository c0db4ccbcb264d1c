//! BERT encoders as Hugging Face's `BertModel` (absolute positions, post-norm layers, exact GELU)
//! with its parameter names, so a `model.safetensors` written by `transformers` loads strictly.
//! [`Bert::from_pretrained`] reads a model folder (`config.json` + `model.safetensors`), such as
//! the all-MiniLM-L6-v2 sentence encoder (`python3 scripts/fetch_minilm.py` fetches it), and
//! [`mean_pool`] turns the last hidden states into sentence-transformers' embeddings.

use super::config::Config;
use crate::error::{Error, Result};
use crate::nn::{self, Embedding, LayerNorm, Linear, Module};
use crate::tensor::AttentionOpts;
use crate::{DType, Tensor};
use std::path::{Path, PathBuf};

/// The fields of a BERT `config.json` this model reads.
#[derive(Clone, Debug, PartialEq)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
}

impl BertConfig {
    /// all-MiniLM-L6-v2's configuration (6 layers of width 384, 12 heads).
    pub fn minilm_l6() -> BertConfig {
        BertConfig {
            vocab_size: 30522,
            hidden_size: 384,
            num_hidden_layers: 6,
            num_attention_heads: 12,
            intermediate_size: 1536,
            max_position_embeddings: 512,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
        }
    }

    /// Reads a Hugging Face `config.json`. Settings this implementation does not have (another
    /// activation than exact GELU, relative position embeddings) are errors, not ignored.
    pub fn from_file(path: impl AsRef<Path>) -> Result<BertConfig> {
        let c = Config::read(path.as_ref())?;
        let act = c.str_or("hidden_act", "gelu")?;
        if act != "gelu" {
            return Err(c.error(format!("hidden_act {act:?} is not supported (only \"gelu\", the exact GELU)")));
        }
        let pos = c.str_or("position_embedding_type", "absolute")?;
        if pos != "absolute" {
            return Err(c.error(format!("position_embedding_type {pos:?} is not supported (only \"absolute\")")));
        }
        let config = BertConfig {
            vocab_size: c.usize("vocab_size")?,
            hidden_size: c.usize("hidden_size")?,
            num_hidden_layers: c.usize("num_hidden_layers")?,
            num_attention_heads: c.usize("num_attention_heads")?,
            intermediate_size: c.usize("intermediate_size")?,
            max_position_embeddings: c.usize("max_position_embeddings")?,
            type_vocab_size: c.usize_opt("type_vocab_size")?.unwrap_or(2),
            layer_norm_eps: c.f64_or("layer_norm_eps", 1e-12)?,
        };
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err(c.error(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            )));
        }
        Ok(config)
    }
}

/// Word, position and token-type embeddings, summed and layer-normed.
#[derive(Module)]
pub struct BertEmbeddings {
    pub word_embeddings: Embedding,
    pub position_embeddings: Embedding,
    pub token_type_embeddings: Embedding,
    #[module(name = "LayerNorm")]
    pub layer_norm: LayerNorm,
}

/// The query, key and value projections (`attention.self` in the checkpoint).
#[derive(Module)]
pub struct BertSelfAttention {
    pub query: Linear,
    pub key: Linear,
    pub value: Linear,
    #[module(skip)]
    pub num_heads: usize,
}

/// A projection followed by a residual add and a layer norm (`attention.output` and `output`).
#[derive(Module)]
pub struct BertResidual {
    pub dense: Linear,
    #[module(name = "LayerNorm")]
    pub layer_norm: LayerNorm,
}

#[derive(Module)]
pub struct BertAttention {
    #[module(name = "self")]
    pub self_attention: BertSelfAttention,
    pub output: BertResidual,
}

#[derive(Module)]
pub struct BertIntermediate {
    pub dense: Linear,
}

/// One encoder layer: attention, then the GELU feed-forward, each with a post-norm residual.
#[derive(Module)]
pub struct BertLayer {
    pub attention: BertAttention,
    pub intermediate: BertIntermediate,
    pub output: BertResidual,
}

#[derive(Module)]
pub struct BertEncoder {
    pub layer: Vec<BertLayer>,
}

/// `BertModel` without its pooler (sentence encoders do not use it).
#[derive(Module)]
pub struct Bert {
    pub embeddings: BertEmbeddings,
    pub encoder: BertEncoder,
    #[module(skip)]
    pub config: BertConfig,
}

/// A `Linear` initialized as `transformers` does (weights `N(0, 0.02)`, zero bias); lazy, so a
/// model about to be loaded from a checkpoint never computes it.
fn dense(inputs: usize, outputs: usize) -> Linear {
    Linear { weight: Tensor::normal([outputs, inputs], 0.0, 0.02), bias: Some(Tensor::zeros([outputs])) }
}

fn table(rows: usize, dim: usize) -> Embedding {
    Embedding { weight: Tensor::normal([rows, dim], 0.0, 0.02) }
}

fn residual(inputs: usize, config: &BertConfig) -> BertResidual {
    BertResidual {
        dense: dense(inputs, config.hidden_size),
        layer_norm: LayerNorm::with(vec![config.hidden_size], config.layer_norm_eps, true),
    }
}

impl Bert {
    /// A randomly initialized model (weights `N(0, 0.02)` as `transformers`' `_init_weights`).
    pub fn new(config: BertConfig) -> Bert {
        let h = config.hidden_size;
        let embeddings = BertEmbeddings {
            word_embeddings: table(config.vocab_size, h),
            position_embeddings: table(config.max_position_embeddings, h),
            token_type_embeddings: table(config.type_vocab_size, h),
            layer_norm: LayerNorm::with(vec![h], config.layer_norm_eps, true),
        };
        let layer = (0..config.num_hidden_layers)
            .map(|_| BertLayer {
                attention: BertAttention {
                    self_attention: BertSelfAttention {
                        query: dense(h, h),
                        key: dense(h, h),
                        value: dense(h, h),
                        num_heads: config.num_attention_heads,
                    },
                    output: residual(h, &config),
                },
                intermediate: BertIntermediate { dense: dense(h, config.intermediate_size) },
                output: residual(config.intermediate_size, &config),
            })
            .collect();
        Bert { embeddings, encoder: BertEncoder { layer }, config }
    }

    /// Loads a model folder holding `config.json` and `model.safetensors` (Hugging Face's
    /// layout). Checkpoint keys may carry a `bert.` prefix; `embeddings.position_ids` and the
    /// pooler are dropped; every other key must match the model (see `nn::load_state_dict`).
    pub fn from_pretrained(dir: impl AsRef<Path>) -> Result<Bert> {
        let dir = dir.as_ref();
        for file in ["config.json", "model.safetensors"] {
            if !dir.join(file).is_file() {
                return Err(Error::NotFound {
                    what: format!("{}", dir.join(file).display()),
                    help: "A BERT model folder needs config.json and model.safetensors; for \
                           all-MiniLM-L6-v2 run `python3 scripts/fetch_minilm.py`."
                        .into(),
                });
            }
        }
        let config = BertConfig::from_file(dir.join("config.json"))?;
        let model = crate::tensor::skip_init(|| Bert::new(config));
        let weights = nn::safe_load(dir.join("model.safetensors"))?
            .into_iter()
            .map(|(k, v)| (k.strip_prefix("bert.").map(str::to_string).unwrap_or(k), v))
            .filter(|(k, _)| k != "embeddings.position_ids" && !k.starts_with("pooler."))
            .collect();
        nn::load_state_dict(&model, weights)?;
        Ok(model)
    }

    /// The last hidden states `[B, T, hidden]` of token ids `[B, T]` (any integer dtype), with
    /// `attention_mask` `[B, T]` (nonzero: a real token; zero: padding no token attends to) and
    /// optional `token_type_ids` `[B, T]` (default all 0).
    pub fn forward(&self, input_ids: &Tensor, attention_mask: &Tensor, token_type_ids: Option<&Tensor>) -> Tensor {
        let shape = input_ids.shape();
        assert!(
            shape.len() == 2 && attention_mask.shape() == shape,
            "Bert::forward: input_ids must be [batch, tokens] and attention_mask the same shape (got {shape:?} and {:?})",
            attention_mask.shape()
        );
        let (b, t) = (shape[0], shape[1]);
        assert!(
            t <= self.config.max_position_embeddings,
            "Bert::forward: {t} tokens is more than max_position_embeddings {}",
            self.config.max_position_embeddings
        );
        let e = &self.embeddings;
        let types = match token_type_ids {
            Some(tt) => {
                assert_eq!(tt.shape(), shape, "Bert::forward: token_type_ids must be [batch, tokens] like input_ids");
                e.token_type_embeddings.forward(tt)
            }
            None => e.token_type_embeddings.forward(&Tensor::zeros([b, t]).cast(DType::I32)),
        };
        let positions = e.position_embeddings.forward(&Tensor::arange(t)).unsqueeze(0);
        let mut x = e.layer_norm.forward(&(e.word_embeddings.forward(input_ids) + types + positions));
        // [B, 1, 1, T]: every query (padding ones too, as in transformers) sees the real keys.
        let keys = attention_mask.ne(0).reshape([b, 1, 1, t]);
        for layer in &self.encoder.layer {
            x = layer.forward(&x, &keys);
        }
        x
    }
}

impl BertLayer {
    fn forward(&self, x: &Tensor, keys: &Tensor) -> Tensor {
        let attn = &self.attention;
        let context = attn.self_attention.forward(x, keys);
        let x = attn.output.forward(&context, x);
        self.output.forward(&self.intermediate.dense.forward(&x).gelu(), &x)
    }
}

impl BertSelfAttention {
    fn forward(&self, x: &Tensor, keys: &Tensor) -> Tensor {
        let s = x.shape();
        let (b, t, h) = (s[0], s[1], s[2]);
        let heads = |lin: &Linear| lin.forward(x).reshape([b, t, self.num_heads, h / self.num_heads]).transpose(1, 2);
        let (q, k, v) = (heads(&self.query), heads(&self.key), heads(&self.value));
        let context = q.scaled_dot_product_attention(&k, &v, &AttentionOpts::default().mask(keys));
        context.transpose(1, 2).reshape([b, t, h])
    }
}

impl BertResidual {
    fn forward(&self, x: &Tensor, skip: &Tensor) -> Tensor {
        self.layer_norm.forward(&(self.dense.forward(x) + skip))
    }
}

/// sentence-transformers' mean pooling: the average of `hidden` `[B, T, H]` over the tokens
/// where `attention_mask` `[B, T]` is nonzero, `[B, H]`.
pub fn mean_pool(hidden: &Tensor, attention_mask: &Tensor) -> Tensor {
    let s = hidden.shape();
    assert!(
        s.len() == 3 && attention_mask.shape() == s[..2],
        "mean_pool: hidden must be [batch, tokens, width] and attention_mask [batch, tokens] (got {s:?} and {:?})",
        attention_mask.shape()
    );
    let weights = attention_mask.ne(0).cast(hidden.dtype()).unsqueeze(-1);
    let summed = (hidden * &weights).sum_axis(1);
    let counts = weights.sum_axis(1).clamp(Some(1e-9), None);
    summed / counts
}

/// Where all-MiniLM-L6-v2 is looked for: `$MINILM_DIR`, else `cache_dir()/models/all-MiniLM-L6-v2`
/// (where `scripts/fetch_minilm.py` puts it).
pub fn minilm_dir() -> PathBuf {
    crate::flags::text("MINILM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::helpers::cache_dir().join("models").join("all-MiniLM-L6-v2"))
}
