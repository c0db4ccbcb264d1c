//! Language-model tokenizers (cargo feature `tokenizers`): a GGUF file's own byte-level BPE
//! tokenizer, built from its `tokenizer.ggml.*` metadata, encodes and decodes as the
//! `tokenizer.json` it was converted from (tests/fixtures/llm/llama-gguf, written by
//! scripts/gguf_llama_fixture.py from the `tokenizers`-trained fixture tokenizer).
#![cfg(feature = "tokenizers")]

use ferrograd::models::tokenize::TextTokenizer;
use std::path::PathBuf;

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path)
}

/// The `(text, ids)` cases of a fixture folder's `reference.json`.
fn reference_cases(dir: &str) -> Vec<(String, Vec<u32>)> {
    let text = std::fs::read_to_string(fixture(dir).join("reference.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ids = |v: &serde_json::Value| v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
    reference["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["text"].as_str().unwrap().to_string(), ids(&c["ids"])))
        .collect()
}

#[test]
fn gguf_tokenizer_encodes_as_its_tokenizer_json() {
    let from_gguf = TextTokenizer::from_gguf(fixture("llm/llama-gguf/model.gguf")).unwrap();
    let from_json = TextTokenizer::from_dir(fixture("llm/llama-gguf")).unwrap();
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("llm/llama-gguf/reference.json")).unwrap()).unwrap();
    let prompt = reference["prompt"].as_str().unwrap();
    let want: Vec<u32> =
        reference["prompt_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    assert_eq!(from_gguf.encode(prompt).unwrap(), want, "the prompt's ids as transformers encoded them");
    for text in ["", " lazy tensors,  two spaces\nand a newline", "naïve café — ✓ 12345 don't", "\t\r\n  "] {
        let ids = from_gguf.encode(text).unwrap();
        assert_eq!(ids, from_json.encode(text).unwrap(), "{text:?}");
        assert_eq!(from_gguf.decode(&ids).unwrap(), text, "round trip of {text:?}");
    }
}

#[test]
fn a_gguf_without_a_tokenizer_is_an_error_that_says_what_to_do() {
    let err = TextTokenizer::from_gguf(fixture("gguf/quants.gguf")).err().expect("no tokenizer").to_string();
    assert!(err.contains("quants.gguf") && err.contains("tokenizer.json"), "{err}");
}

/// LLaMA 3's pre-tokenizer (`tokenizer.ggml.pre = "llama-bpe"`: digits in runs of at most three,
/// case-insensitive contractions, newlines kept apart) and BOS handling, against the ids the
/// `tokenizers` Python package gives with the settings of Meta's tokenizer.json
/// (tests/fixtures/gguf/llama-bpe, written by scripts/gguf_tokenizer_fixture.py).
#[test]
fn llama_bpe_pre_tokenizer_encodes_as_the_python_package() {
    let tok = TextTokenizer::from_gguf(fixture("gguf/llama-bpe/tokenizer.gguf")).unwrap();
    for (text, want) in reference_cases("gguf/llama-bpe") {
        assert_eq!(tok.encode(&text).unwrap(), want, "{text:?}");
    }
}

/// A SentencePiece BPE tokenizer (`tokenizer.ggml.model = "llama"`, as LLaMA 2 and Mistral GGUF
/// files carry it; byte fallback, digits split, a dummy prefix) against the ids the
/// `sentencepiece` package gives (tests/fixtures/gguf/llama-spm, scripts/gguf_tokenizer_fixture.py).
#[test]
fn sentencepiece_gguf_tokenizer_encodes_as_sentencepiece() {
    let tok = TextTokenizer::from_gguf(fixture("gguf/llama-spm/tokenizer.gguf")).unwrap();
    for (text, want) in reference_cases("gguf/llama-spm") {
        let ids = tok.encode(&text).unwrap();
        assert_eq!(ids, want, "{text:?}");
        assert_eq!(tok.decode(&ids).unwrap(), text, "round trip of {text:?}");
    }
}
