//! A GGUF file's own tokenizer (`tokenizer.ggml.*` metadata) as a Hugging Face `tokenizers`
//! tokenizer: the byte-level BPE of GPT-2 and LLaMA 3 (`tokenizer.ggml.model = "gpt2"`) or the
//! SentencePiece BPE of LLaMA 2 and Mistral (`"llama"`), its vocabulary, merges (for
//! SentencePiece derived from the pieces' scores), control tokens and BOS handling. The tokenizer is described as a
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
const UNKNOWN: u64 = 2;
const CONTROL: u64 = 3;
const USER_DEFINED: u64 = 4;

/// The `tokenizer.json` document of a GGUF file's tokenizer.
pub(crate) fn tokenizer_json(path: &Path, meta: &BTreeMap<String, GgufValue>) -> Result<String> {
    let fail = |message: String| Error::Format { path: path.to_path_buf(), message };
    let get = |key: &str| meta.get(&format!("tokenizer.ggml.{key}"));
    let model = get("model").and_then(GgufValue::as_str).unwrap_or("(none)");
    if model != "gpt2" && model != "llama" {
        return Err(fail(format!(
            "tokenizer.ggml.model is {model:?}; the tokenizers built from GGUF metadata are byte-level BPE \
             (\"gpt2\", as GPT-2 and LLaMA 3 use) and SentencePiece BPE (\"llama\", as LLaMA 2 and Mistral \
             use): put the model's tokenizer.json beside the file, or give token ids"
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
    let merges = if model == "llama" {
        sentencepiece_merges(&tokens, &scores(get("scores"), &tokens, &fail)?)
    } else {
        strings("merges")?
    };
    let types: Vec<u64> = match get("token_type").and_then(GgufValue::as_array) {
        Some(t) => t.iter().map(|v| v.as_u64().unwrap_or(1)).collect(),
        None => vec![1; tokens.len()],
    };
    let vocab: serde_json::Map<String, Value> = tokens.iter().enumerate().map(|(i, t)| (t.clone(), json!(i))).collect();
    let added: Vec<Value> = tokens
        .iter()
        .enumerate()
        .filter(|(i, _)| matches!(types.get(*i), Some(&CONTROL) | Some(&USER_DEFINED) | Some(&UNKNOWN)))
        .map(|(i, t)| {
            json!({"id": i, "content": t, "single_word": false, "lstrip": false, "rstrip": false,
                   "normalized": false, "special": types[i] != USER_DEFINED})
        })
        .collect();
    let byte_level = |use_regex: bool| json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": use_regex});
    let pre = get("pre").and_then(GgufValue::as_str).unwrap_or("default");
    let pre_tokenizer = match pre {
        _ if model == "llama" => Value::Null,
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
    // SentencePiece BPE as Hugging Face converts LLaMA 2's tokenizer: spaces are `▁` with one in
    // front of the text, unknown characters fall back to `<0xNN>` byte pieces.
    let spm = model == "llama";
    let normalizer = if spm {
        json!({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u{2581}"},
               {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}]})
    } else {
        Value::Null
    };
    let decoder = if spm {
        json!({"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})
    } else {
        byte_level(true)
    };
    let unk = match get("unknown_token_id").and_then(GgufValue::as_u64) {
        Some(i) if spm => tokens.get(i as usize).cloned().map(Value::String).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let doc = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added, "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer, "post_processor": post_processor, "decoder": decoder,
        "model": {"type": "BPE", "dropout": null, "unk_token": unk, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": spm, "byte_fallback": spm, "ignore_merges": false,
                  "vocab": vocab, "merges": merges},
    });
    Ok(doc.to_string())
}

/// `tokenizer.ggml.scores`, one per token.
fn scores(value: Option<&GgufValue>, tokens: &[String], fail: &dyn Fn(String) -> Error) -> Result<Vec<f64>> {
    let items = value.and_then(GgufValue::as_array).ok_or_else(|| fail("tokenizer.ggml.scores is missing".into()))?;
    if items.len() != tokens.len() {
        return Err(fail(format!("tokenizer.ggml.scores has {} entries for {} tokens", items.len(), tokens.len())));
    }
    items.iter().map(|v| v.as_f64().ok_or_else(|| fail("tokenizer.ggml.scores holds a non-number".into()))).collect()
}

/// The BPE merges of a SentencePiece vocabulary: every split of a piece into two pieces, ranked
/// by the merged piece's score (highest first), ties by the parts' ids — what SentencePiece's
/// own BPE applies, as Hugging Face's converter derives it.
fn sentencepiece_merges(tokens: &[String], scores: &[f64]) -> Vec<String> {
    let id: std::collections::HashMap<&str, usize> = tokens.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();
    let mut merges: Vec<(f64, usize, usize, String)> = Vec::new();
    for (piece, &score) in tokens.iter().zip(scores) {
        let mut local: Vec<(usize, usize, String)> = piece
            .char_indices()
            .skip(1)
            .filter_map(|(at, _)| {
                let (l, r) = piece.split_at(at);
                Some((*id.get(l)?, *id.get(r)?, format!("{l} {r}")))
            })
            .collect();
        local.sort();
        merges.extend(local.into_iter().map(|(a, b, m)| (score, a, b, m)));
    }
    // Stable: equal scores keep the vocabulary order, then the parts' order.
    merges.sort_by(|x, y| y.0.partial_cmp(&x.0).unwrap_or(std::cmp::Ordering::Equal));
    merges.into_iter().map(|(_, _, _, m)| m).collect()
}
