//! A GGUF file's own tokenizer (`tokenizer.ggml.*` metadata) as a Hugging Face `tokenizers`
//! tokenizer: the byte-level BPE of GPT-2 and LLaMA 3 (`tokenizer.ggml.model = "gpt2"`), its
//! vocabulary, merges, control tokens and BOS handling. The tokenizer is described as a
//! `tokenizer.json` document and built by the crate, so the encoding is the crate's.

use crate::error::{Error, Result};
use crate::nn::GgufValue;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// LLaMA 3's pre-tokenizer split (`tokenizer.ggml.pre = "llama-bpe"`), as its tokenizer.json
/// states it.
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// GGUF token types: control tokens (BOS, EOS, chat markers) never come out of splitting text.
const CONTROL: u64 = 3;
const USER_DEFINED: u64 = 4;

/// The `tokenizer.json` document of a GGUF file's tokenizer.
pub(crate) fn tokenizer_json(path: &Path, meta: &BTreeMap<String, GgufValue>) -> Result<String> {
    let fail = |message: String| Error::Format { path: path.to_path_buf(), message };
    let get = |key: &str| meta.get(&format!("tokenizer.ggml.{key}"));
    let model = get("model").and_then(GgufValue::as_str).unwrap_or("(none)");
    if model != "gpt2" {
        return Err(fail(format!(
            "tokenizer.ggml.model is {model:?}; only byte-level BPE (\"gpt2\", as GPT-2 and LLaMA 3 use) is built \
             from GGUF metadata: put the model's tokenizer.json beside the file, or give token ids"
        )));
    }
    let strings = |key: &str| -> Result<Vec<String>> {
        let items =
            get(key).and_then(GgufValue::as_array).ok_or_else(|| fail(format!("tokenizer.ggml.{key} is missing")))?;
        items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| fail(format!("tokenizer.ggml.{key} holds a non-string")))
            })
            .collect()
    };
    let tokens = strings("tokens")?;
    let merges = strings("merges")?;
    let types: Vec<u64> = match get("token_type").and_then(GgufValue::as_array) {
        Some(t) => t.iter().map(|v| v.as_u64().unwrap_or(1)).collect(),
        None => vec![1; tokens.len()],
    };
    let vocab: serde_json::Map<String, Value> = tokens.iter().enumerate().map(|(i, t)| (t.clone(), json!(i))).collect();
    let added: Vec<Value> = tokens
        .iter()
        .enumerate()
        .filter(|(i, _)| matches!(types.get(*i), Some(&CONTROL) | Some(&USER_DEFINED)))
        .map(|(i, t)| {
            json!({"id": i, "content": t, "single_word": false, "lstrip": false, "rstrip": false,
                   "normalized": false, "special": types[i] == CONTROL})
        })
        .collect();
    let byte_level = |use_regex: bool| json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": use_regex});
    let pre = get("pre").and_then(GgufValue::as_str).unwrap_or("default");
    let pre_tokenizer = match pre {
        "default" | "gpt2" => byte_level(true),
        "llama-bpe" | "llama3" => json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_SPLIT}, "behavior": "Isolated", "invert": false},
            byte_level(false),
        ]}),
        other => {
            return Err(fail(format!(
                "tokenizer.ggml.pre is {other:?}; the pre-tokenizers built from GGUF metadata are \"default\", \
                 \"gpt2\" and \"llama-bpe\": put the model's tokenizer.json beside the file"
            )))
        }
    };
    let add_bos = matches!(get("add_bos_token"), Some(GgufValue::Bool(true)));
    let post_processor = match get("bos_token_id").and_then(GgufValue::as_u64) {
        Some(bos) if add_bos => {
            let name = tokens.get(bos as usize).ok_or_else(|| fail(format!("bos_token_id {bos} is not a token")))?;
            json!({"type": "TemplateProcessing",
                   "single": [{"SpecialToken": {"id": name, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                   "pair": [{"SpecialToken": {"id": name, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                            {"Sequence": {"id": "B", "type_id": 1}}],
                   "special_tokens": {name.clone(): {"id": name, "ids": [bos], "tokens": [name]}}})
        }
        _ => Value::Null,
    };
    let doc = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added, "normalizer": null,
        "pre_tokenizer": pre_tokenizer, "post_processor": post_processor, "decoder": byte_level(true),
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": vocab, "merges": merges},
    });
    Ok(doc.to_string())
}
