//! BERT (`models::bert`): parameter names as Hugging Face's checkpoints, config errors, and
//! all-MiniLM-L6-v2's sentence embeddings against sentence-transformers (tests/fixtures/minilm.json,
//! written by scripts/minilm_fixture.py) when the model files are present
//! (`python3 scripts/fetch_minilm.py`).

use ferrograd::models::bert::{mean_pool, minilm_dir, Bert, BertConfig};
use ferrograd::nn::state_dict;
use ferrograd::{Error, Tensor};
use std::path::PathBuf;

fn fixture() -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn rows<T>(v: &serde_json::Value, key: &str, each: impl Fn(&serde_json::Value) -> T) -> Vec<Vec<T>> {
    v[key].as_array().unwrap().iter().map(|r| r.as_array().unwrap().iter().map(&each).collect()).collect()
}

fn tiny() -> BertConfig {
    BertConfig {
        vocab_size: 50,
        hidden_size: 8,
        num_hidden_layers: 2,
        num_attention_heads: 2,
        intermediate_size: 16,
        max_position_embeddings: 12,
        type_vocab_size: 2,
        layer_norm_eps: 1e-12,
    }
}

#[test]
fn parameter_names_are_the_checkpoints() {
    let names: Vec<String> = state_dict(&Bert::new(tiny())).into_keys().collect();
    assert_eq!(names.len(), 5 + 2 * 16, "{names:?}");
    for key in [
        "embeddings.LayerNorm.weight",
        "embeddings.word_embeddings.weight",
        "encoder.layer.1.attention.self.query.weight",
        "encoder.layer.1.attention.output.LayerNorm.bias",
        "encoder.layer.0.intermediate.dense.weight",
        "encoder.layer.0.output.dense.bias",
    ] {
        assert!(names.iter().any(|n| n == key), "{key} is not among {names:?}");
    }
    let dict = state_dict(&Bert::new(tiny()));
    assert_eq!(dict["encoder.layer.0.intermediate.dense.weight"].shape(), vec![16, 8]);
    assert_eq!(dict["encoder.layer.0.output.dense.weight"].shape(), vec![8, 16]);
}

#[test]
fn config_errors_name_the_file_and_the_setting() {
    let dir = std::env::temp_dir().join(format!("ferrograd-bert-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    std::fs::write(&path, r#"{"hidden_act": "relu", "hidden_size": 8}"#).unwrap();
    let err = BertConfig::from_file(&path).unwrap_err();
    assert!(matches!(err, Error::Format { .. }), "{err}");
    assert!(err.to_string().contains("relu") && err.to_string().contains("config.json"), "{err}");
    std::fs::write(&path, r#"{"hidden_size": 8}"#).unwrap();
    let err = BertConfig::from_file(&path).unwrap_err();
    assert!(err.to_string().contains("vocab_size"), "{err}");
    // A folder without weights says how to get them.
    let err = Bert::from_pretrained(&dir).err().expect("no model.safetensors here");
    assert!(matches!(err, Error::NotFound { .. }) && err.to_string().contains("fetch_minilm.py"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn padding_does_not_change_a_sentence() {
    // The same ids alone and padded with junk tokens give the same pooled embedding.
    let model = Bert::new(tiny());
    let ids = [3i32, 17, 9, 41];
    let alone = Tensor::from_vec(ids.to_vec(), [1, 4]);
    let padded = Tensor::from_vec([&ids[..], &[5, 5, 5]].concat(), [1, 7]);
    let mask = Tensor::from_vec(vec![1i32, 1, 1, 1, 0, 0, 0], [1, 7]);
    let a = mean_pool(&model.forward(&alone, &Tensor::ones([1, 4]), None), &Tensor::ones([1, 4]));
    let b = mean_pool(&model.forward(&padded, &mask, None), &mask);
    let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-5, "alone {a:?}\npadded {b:?}");
    }
}

#[test]
fn minilm_matches_sentence_transformers() {
    let dir = minilm_dir();
    if !dir.join("model.safetensors").is_file() {
        eprintln!("skipped: all-MiniLM-L6-v2 is not in {} (python3 scripts/fetch_minilm.py)", dir.display());
        return;
    }
    let f = fixture();
    let ids = rows(&f, "input_ids", |x| x.as_i64().unwrap() as i32);
    let mask = rows(&f, "attention_mask", |x| x.as_i64().unwrap() as i32);
    let want = rows(&f, "embeddings", |x| x.as_f64().unwrap());
    let (b, t) = (ids.len(), ids[0].len());
    let model = Bert::from_pretrained(&dir).unwrap();
    let ids = Tensor::from_vec(ids.concat(), [b, t]);
    let mask = Tensor::from_vec(mask.concat(), [b, t]);
    let got =
        ferrograd::tensor::no_grad(|| mean_pool(&model.forward(&ids, &mask, None), &mask).normalize(2.0, -1, 1e-12));
    assert_eq!(got.shape(), vec![b, 384]);
    let got = got.to_vec::<f32>().unwrap();
    let mut worst = 0f64;
    for (g, w) in got.iter().zip(want.concat()) {
        worst = worst.max((*g as f64 - w).abs());
    }
    eprintln!("all-MiniLM-L6-v2: max |ferrograd - sentence-transformers| = {worst:.2e}");
    assert!(worst <= 1e-5, "embeddings differ from sentence-transformers by {worst:.2e}");
}

/// The model's own `tokenizer.json` through the `tokenizers` crate gives the ids and mask that
/// sentence-transformers gave for the fixture's padded batch.
#[cfg(feature = "tokenizers")]
#[test]
fn tokenizer_matches_sentence_transformers() {
    use ferrograd::models::tokenize::SentenceTokenizer;
    let dir = minilm_dir();
    if !dir.join("tokenizer.json").is_file() {
        eprintln!("skipped: all-MiniLM-L6-v2 is not in {} (python3 scripts/fetch_minilm.py)", dir.display());
        return;
    }
    let f = fixture();
    let sentences: Vec<&str> = f["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let batch = SentenceTokenizer::from_dir(&dir, 512).unwrap().encode(&sentences).unwrap();
    let want_ids = rows(&f, "input_ids", |x| x.as_i64().unwrap() as i32);
    let want_mask = rows(&f, "attention_mask", |x| x.as_i64().unwrap() as i32);
    assert_eq!(batch.input_ids.shape(), vec![want_ids.len(), want_ids[0].len()]);
    assert_eq!(batch.input_ids.to_vec::<i32>().unwrap(), want_ids.concat());
    assert_eq!(batch.attention_mask.to_vec::<i32>().unwrap(), want_mask.concat());
    assert!(batch.token_type_ids.to_vec::<i32>().unwrap().iter().all(|&t| t == 0));
}

/// A folder without a tokenizer is an error that says how to get one.
#[cfg(feature = "tokenizers")]
#[test]
fn missing_tokenizer_says_how_to_fetch_it() {
    let dir = std::env::temp_dir().join(format!("ferrograd-bert-tokenizer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err =
        ferrograd::models::tokenize::SentenceTokenizer::from_dir(&dir, 512).err().expect("no tokenizer.json here");
    assert!(matches!(err, Error::NotFound { .. }) && err.to_string().contains("fetch_minilm.py"), "{err}");
    std::fs::write(dir.join("tokenizer.json"), "{ not json").unwrap();
    let err =
        ferrograd::models::tokenize::SentenceTokenizer::from_dir(&dir, 512).err().expect("a corrupt tokenizer.json");
    assert!(matches!(err, Error::Format { .. }) && err.to_string().contains("tokenizer.json"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A model built inside `skip_init` draws no random numbers (the generator's next numbers are
/// those it would give without it) and takes a checkpoint's values in full.
#[test]
fn a_model_built_to_load_draws_no_random_numbers() {
    Tensor::manual_seed(7);
    let want = Tensor::rand([5]).to_vec::<f32>().unwrap();
    let source = Bert::new(tiny());
    Tensor::manual_seed(7);
    let model = ferrograd::nn::skip_init(|| Bert::new(tiny()));
    assert_eq!(Tensor::rand([5]).to_vec::<f32>().unwrap(), want);
    ferrograd::nn::load_state_dict(&model, state_dict(&source)).unwrap();
    let ids = Tensor::from_vec(vec![3i32, 17, 9, 41], [1, 4]);
    let mask = Tensor::ones([1, 4]);
    let (a, b) = (model.forward(&ids, &mask, None), source.forward(&ids, &mask, None));
    assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
}
