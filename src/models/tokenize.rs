//! Text to token-id tensors with Hugging Face's `tokenizers` crate (cargo feature `tokenizers`),
//! set up as sentence-transformers does: the model folder's `tokenizer.json`, batches padded to
//! their longest sentence, truncated to `max_seq_length` from `sentence_bert_config.json`.

use crate::error::{Error, Result};
use crate::Tensor;
use std::path::{Path, PathBuf};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// A batch of tokenized sentences, each `[batch, tokens]` int32.
pub struct Batch {
    pub input_ids: Tensor,
    pub attention_mask: Tensor,
    pub token_type_ids: Tensor,
}

/// A model folder's tokenizer, ready to encode batches of sentences.
pub struct SentenceTokenizer {
    tokenizer: Tokenizer,
    path: PathBuf,
}

impl SentenceTokenizer {
    /// Reads `dir/tokenizer.json`; the truncation length is `max_seq_length` from
    /// `dir/sentence_bert_config.json` when that file exists, else `max_length`.
    pub fn from_dir(dir: impl AsRef<Path>, max_length: usize) -> Result<SentenceTokenizer> {
        let dir = dir.as_ref();
        let path = dir.join("tokenizer.json");
        if !path.is_file() {
            return Err(Error::NotFound {
                what: format!("{}", path.display()),
                help: "The model folder needs its tokenizer.json; for all-MiniLM-L6-v2 run \
                       `python3 scripts/fetch_minilm.py`."
                    .into(),
            });
        }
        let bad = |path: &Path, message: String| Error::Format { path: path.into(), message };
        let mut tokenizer = Tokenizer::from_file(&path).map_err(|e| bad(&path, e.to_string()))?;
        let st_config = dir.join("sentence_bert_config.json");
        let max_length = if st_config.is_file() {
            let text = std::fs::read_to_string(&st_config)
                .map_err(|source| Error::File { path: st_config.clone(), source })?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(&st_config, e.to_string()))?;
            v.get("max_seq_length").and_then(|x| x.as_u64()).map(|x| x as usize).unwrap_or(max_length)
        } else {
            max_length
        };
        // Keep the file's pad token; pad to the batch's longest sentence, not a fixed length.
        let padding = PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..tokenizer.get_padding().cloned().unwrap_or_default()
        };
        tokenizer.with_padding(Some(padding));
        tokenizer
            .with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
            .map_err(|e| bad(&path, e.to_string()))?;
        Ok(SentenceTokenizer { tokenizer, path })
    }

    /// Token ids, attention mask and token types of `sentences`, with the special tokens
    /// (`[CLS]`, `[SEP]` for BERT) the tokenizer's post-processor adds.
    pub fn encode(&self, sentences: &[&str]) -> Result<Batch> {
        assert!(!sentences.is_empty(), "SentenceTokenizer::encode: no sentences");
        let encodings = self
            .tokenizer
            .encode_batch(sentences.to_vec(), true)
            .map_err(|e| Error::Format { path: self.path.clone(), message: format!("encoding failed: {e}") })?;
        let (b, t) = (encodings.len(), encodings[0].get_ids().len());
        let column = |pick: fn(&tokenizers::Encoding) -> &[u32]| {
            let data: Vec<i32> = encodings.iter().flat_map(|e| pick(e).iter().map(|&x| x as i32)).collect();
            Tensor::from_vec(data, [b, t])
        };
        Ok(Batch {
            input_ids: column(|e| e.get_ids()),
            attention_mask: column(|e| e.get_attention_mask()),
            token_type_ids: column(|e| e.get_type_ids()),
        })
    }
}

/// A language model's tokenizer: text to token ids and back, as `transformers` encodes by
/// default (with the special tokens the tokenizer's post-processor adds, such as LLaMA's BOS).
pub struct TextTokenizer {
    tokenizer: Tokenizer,
    path: PathBuf,
}

impl TextTokenizer {
    /// Reads `dir/tokenizer.json`.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<TextTokenizer> {
        let path = dir.as_ref().join("tokenizer.json");
        if !path.is_file() {
            return Err(Error::NotFound {
                what: format!("{}", path.display()),
                help: "Without the model's tokenizer.json, give the prompt as token ids.".into(),
            });
        }
        let tokenizer =
            Tokenizer::from_file(&path).map_err(|e| Error::Format { path: path.clone(), message: e.to_string() })?;
        Ok(TextTokenizer { tokenizer, path })
    }

    /// The tokenizer a GGUF file carries in its metadata (byte-level BPE; see
    /// `models/gguf_tokenizer.rs`).
    pub fn from_gguf(path: impl AsRef<Path>) -> Result<TextTokenizer> {
        let path = path.as_ref();
        let json = super::gguf_tokenizer::tokenizer_json(path, &crate::nn::gguf_metadata(path)?)?;
        let tokenizer: Tokenizer = json.parse().map_err(|e| Error::Format {
            path: path.to_path_buf(),
            message: format!("the tokenizer in its metadata does not build: {e}"),
        })?;
        Ok(TextTokenizer { tokenizer, path: path.to_path_buf() })
    }

    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let e = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Format { path: self.path.clone(), message: format!("encoding failed: {e}") })?;
        Ok(e.get_ids().to_vec())
    }

    /// The text of `ids`, special tokens left out.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.tokenizer
            .decode(ids, true)
            .map_err(|e| Error::Format { path: self.path.clone(), message: format!("decoding failed: {e}") })
    }
}
