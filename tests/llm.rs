//! LLaMA, Qwen2 and GPT-2 (`models::llama`, `models::gpt2`) against Hugging Face `transformers` on
//! small random-weight models (tests/fixtures/llm/*, written by scripts/llm_fixtures.py):
//! prompt logits within 1e-4, and 32 greedy tokens identical to `generate`'s with and without
//! the KV cache and TinyJit.

use ferrograd::models::llama::{LlamaConfig, RopeScaling};
use ferrograd::models::{generate, CausalLm, GenerateOpts, Gpt2, KvCache, Llama, Sampling, Start};
use ferrograd::tensor::no_grad;
use ferrograd::{Error, Tensor, Variable};
use std::path::PathBuf;
use std::rc::Rc;

fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm").join(name)
}

struct Reference {
    prompt: Vec<u32>,
    logits: Vec<Vec<f64>>,
    greedy: Vec<u32>,
}

fn reference(name: &str) -> Reference {
    let text = std::fs::read_to_string(fixture_dir(name).join("reference.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ids = |key: &str| v[key].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
    let logits = v["logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
        .collect();
    Reference { prompt: ids("prompt_ids"), logits, greedy: ids("greedy") }
}

fn ids(tokens: &[u32]) -> Tensor {
    Tensor::from_vec(tokens.iter().map(|&t| t as i32).collect::<Vec<_>>(), [1, tokens.len()])
}

/// Largest difference between `got` (`[1, t, vocab]`) and the reference logits.
fn worst_logit_error(got: &Tensor, want: &[Vec<f64>]) -> f64 {
    let v = want[0].len();
    assert_eq!(got.shape(), vec![1, want.len(), v]);
    let got = got.to_vec::<f32>().unwrap();
    want.iter().flatten().zip(&got).map(|(w, g)| (w - *g as f64).abs()).fold(0.0, f64::max)
}

fn check_model<M: CausalLm + 'static>(name: &str, model: M) {
    let r = reference(name);
    let model = Rc::new(model);
    // The prompt at once, without and with a cache.
    let plain = no_grad(|| model.forward(&ids(&r.prompt), Start::At(0), None));
    let err = worst_logit_error(&plain, &r.logits);
    eprintln!("{name}: prompt logits within {err:.2e} of transformers");
    assert!(err <= 1e-4, "{name}: prompt logits differ from transformers by {err:.2e}");
    let cache: KvCache = model.new_cache(1, r.prompt.len() + 4);
    let cached = no_grad(|| model.forward(&ids(&r.prompt), Start::At(0), Some(&cache)));
    let err = worst_logit_error(&cached, &r.logits);
    assert!(err <= 1e-4, "{name}: prompt logits with a KV cache differ by {err:.2e}");

    for (kv_cache, jit) in [(false, false), (true, false), (true, true)] {
        let opts = GenerateOpts { sampling: Sampling::greedy(), kv_cache, jit };
        let mut streamed = Vec::new();
        let out = generate(&model, &r.prompt, r.greedy.len(), &opts, |t| streamed.push(t)).unwrap();
        assert_eq!(out.tokens, streamed, "{name}: the callback saw every token");
        assert_eq!(out.tokens, r.greedy, "{name}: greedy tokens (kv cache {kv_cache}, TinyJit {jit})");
    }
}

#[test]
fn llama3_with_gqa_scaled_rope_tied_bf16_matches_transformers() {
    // Loaded as stored (the default), the bf16 weights stay bf16 in memory (cast inside the
    // kernels); converted, they are f32 parameters.
    let stored_bytes = |model: &Llama| -> (usize, usize) {
        let state = ferrograd::nn::state_dict(model);
        (state.values().map(ferrograd::nn::stored_bytes).sum(), state.values().map(|t| t.numel()).sum())
    };
    let model = Llama::from_pretrained(fixture_dir("llama")).unwrap();
    assert!(model.lm_head.is_none() && model.config.num_key_value_heads == 2);
    assert!(matches!(model.config.rope_scaling, RopeScaling::Llama3 { .. }));
    let (stored, params) = stored_bytes(&model);
    assert_eq!(stored, params * 2, "bf16 weights take 2 bytes each");
    check_model("llama", model);
    let model = Llama::from_pretrained_with(fixture_dir("llama"), false).unwrap();
    let (stored, params) = stored_bytes(&model);
    assert_eq!(stored, params * 4, "converted weights take 4 bytes each");
    check_model("llama", model);
}

#[test]
fn llama2_untied_f16_matches_transformers() {
    let model = Llama::from_pretrained(fixture_dir("llama-f16")).unwrap();
    assert!(model.lm_head.is_some() && model.config.rope_scaling == RopeScaling::None);
    assert_eq!(model.config.head_dim, 12);
    check_model("llama-f16", model);
}

/// Qwen2: LLaMA's layout with biases on the q, k and v projections (random, nonzero here).
#[test]
fn qwen2_with_qkv_biases_matches_transformers() {
    let model = Llama::from_pretrained(fixture_dir("qwen2")).unwrap();
    assert!(model.config.qkv_bias && !model.config.o_bias && model.lm_head.is_none());
    assert!(model.model.layers[0].self_attn.q_proj.bias.is_some());
    check_model("qwen2", model);
    let any = ferrograd::models::load_causal_lm(fixture_dir("qwen2")).unwrap();
    let r = reference("qwen2");
    let logits = no_grad(|| any.forward(&ids(&r.prompt), Start::At(0), None));
    assert!(worst_logit_error(&logits, &r.logits) <= 1e-4);
}

/// Mistral: a sliding window of 8 positions, shorter than the prompt and the decoding, so the
/// window changes the result (checked by turning it off).
#[test]
fn mistral_with_a_sliding_window_matches_transformers() {
    let model = Llama::from_pretrained(fixture_dir("mistral")).unwrap();
    assert_eq!(model.config.sliding_window, Some(8));
    check_model("mistral", model);
    let mut unwindowed = Llama::from_pretrained(fixture_dir("mistral")).unwrap();
    unwindowed.config.sliding_window = None;
    let r = reference("mistral");
    let logits = no_grad(|| unwindowed.forward(&ids(&r.prompt), Start::At(0), None));
    assert!(worst_logit_error(&logits, &r.logits) > 1e-2, "the window made no difference");
}

/// Qwen2 with `use_sliding_window`: full attention in layer 0, a window of 8 positions from layer
/// `max_window_layers` = 1 on (27 prompt tokens, so the window matters).
#[test]
fn qwen2_with_a_sliding_window_in_later_layers_matches_transformers() {
    let model = Llama::from_pretrained(fixture_dir("qwen2-swa")).unwrap();
    assert_eq!((model.config.sliding_window, model.config.window_from_layer), (Some(8), 1));
    check_model("qwen2-swa", model);
    let r = reference("qwen2-swa");
    for (window, from, what) in [(None, 1, "no window"), (Some(8), 0, "the window in every layer")] {
        let mut other = Llama::from_pretrained(fixture_dir("qwen2-swa")).unwrap();
        (other.config.sliding_window, other.config.window_from_layer) = (window, from);
        let logits = no_grad(|| other.forward(&ids(&r.prompt), Start::At(0), None));
        assert!(worst_logit_error(&logits, &r.logits) > 1e-2, "{what} made no difference");
    }
}

#[test]
fn gpt2_matches_transformers() {
    check_model("gpt2", Gpt2::from_pretrained(fixture_dir("gpt2")).unwrap());
}

/// A GGUF file as llama.cpp's converter writes it (interleaved q/k rows, `rope_freqs`), its
/// weights in Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, F16, BF16 and F32, against transformers running the
/// same weights dequantized by the `gguf` package (scripts/gguf_llama_fixture.py).
#[test]
fn llama_gguf_quantized_matches_transformers() {
    let path = fixture_dir("llama-gguf").join("model.gguf");
    let model = Llama::from_gguf(&path).unwrap();
    assert!(model.lm_head.is_none() && model.config.num_key_value_heads == 2);
    assert!(matches!(model.config.rope_scaling, RopeScaling::Divisors(_)));
    // The weights stay as stored: no f32 copy of a quantized or 16-bit weight.
    let stored: usize = ferrograd::nn::state_dict(&model).values().map(ferrograd::nn::stored_bytes).sum();
    let f32_bytes: usize = ferrograd::nn::state_dict(&model).values().map(|t| t.numel() * 4).sum();
    assert!(stored * 2 < f32_bytes, "the model holds {stored} bytes of weights, f32 would be {f32_bytes}");
    check_model("llama-gguf", model);
    // The same file through the loader that picks the architecture.
    let any = ferrograd::models::load_causal_lm(&path).unwrap();
    let r = reference("llama-gguf");
    let logits = no_grad(|| any.forward(&ids(&r.prompt), Start::At(0), None));
    assert!(worst_logit_error(&logits, &r.logits) <= 1e-4);
}

/// Qwen2 in GGUF: architecture `qwen2`, q/k/v biases, rows in Hugging Face's order.
#[test]
fn qwen2_gguf_quantized_matches_transformers() {
    let model = Llama::from_gguf(fixture_dir("qwen2-gguf").join("model.gguf")).unwrap();
    assert!(model.config.qkv_bias && !model.config.o_bias);
    assert_eq!(model.config.rope_theta, 1e6);
    check_model("qwen2-gguf", model);
}

#[test]
fn gguf_errors_name_the_file_and_the_problem() {
    let dir = std::env::temp_dir().join(format!("ferrograd-llm-gguf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A GGUF file that is not a LLaMA model.
    let quants = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gguf/quants.gguf");
    let err = Llama::from_gguf(&quants).err().expect("not a llama");
    assert!(err.to_string().contains("ferrograd-test") && err.to_string().contains("quants.gguf"), "{err}");
    // A truncated one.
    let bytes = std::fs::read(fixture_dir("llama-gguf").join("model.gguf")).unwrap();
    let cut = dir.join("cut.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = Llama::from_gguf(&cut).err().expect("truncated");
    assert!(err.to_string().contains("cut.gguf") && err.to_string().contains("truncated"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 256-token prompt in one pass (its attention reads the keys from packed panels: 256 keys
/// of 16 per head reach the packing threshold) against the same tokens decoded one at a time
/// through the KV cache (a single query row reads the keys as they are).
#[test]
fn long_prefill_equals_token_by_token_decoding() {
    let model = Llama::from_pretrained(fixture_dir("llama")).unwrap();
    let tokens: Vec<u32> = (0..256u32).map(|i| (i * 37 + 11) % 320).collect();
    let full = no_grad(|| model.forward(&ids(&tokens), Start::At(0), None)).to_vec::<f32>().unwrap();
    let cache = model.new_cache(1, 256);
    let first = 200;
    no_grad(|| model.forward(&ids(&tokens[..first]), Start::At(0), Some(&cache))).realize().unwrap();
    let vocab = 320;
    let mut worst = 0f32;
    let start_pos = Variable::new("start_pos", 0, 255);
    for (pos, &tok) in tokens.iter().enumerate().skip(first) {
        let p = Start::Var(start_pos.bind(pos as i64));
        let step = no_grad(|| model.forward(&ids(&[tok]), p, Some(&cache))).to_vec::<f32>().unwrap();
        let want = &full[pos * vocab..(pos + 1) * vocab];
        worst = step.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(worst, f32::max);
    }
    assert!(worst <= 1e-4, "decoding differs from the one-pass prompt by {worst:.2e}");
}

#[test]
fn decode_steps_at_new_positions_build_no_kernels() {
    // A decode step's position is a bound variable: after the first step, every later position
    // runs the kernels already built.
    let model = Llama::from_pretrained(fixture_dir("llama")).unwrap();
    let cache = model.new_cache(1, 40);
    let prompt = no_grad(|| model.forward(&ids(&[5, 6, 7]), Start::At(0), Some(&cache)));
    prompt.realize().unwrap();
    let mut built = Vec::new();
    let start_pos = Variable::new("start_pos", 0, 39);
    for pos in 3..12 {
        let p = Start::Var(start_pos.bind(pos));
        let logits = no_grad(|| model.forward(&ids(&[pos as u32 % 50]), p, Some(&cache)));
        logits.realize().unwrap();
        built.push(ferrograd::engine::kernels_built_on_this_thread());
    }
    assert!(built.iter().all(|&b| b == built[0]), "kernels built by this thread after each step: {built:?}");
}

#[test]
fn sampling_is_seeded_and_follows_top_k() {
    let r = reference("gpt2");
    let model = Rc::new(Gpt2::from_pretrained(fixture_dir("gpt2")).unwrap());
    let run = |sampling: Sampling| {
        let opts = GenerateOpts { sampling, kv_cache: true, jit: false };
        generate(&model, &r.prompt, 8, &opts, |_| {}).unwrap().tokens
    };
    let hot = Sampling { temperature: 1.5, top_k: 0, top_p: 1.0, seed: 3 };
    assert_eq!(run(hot.clone()), run(hot.clone()), "the same seed draws the same tokens");
    assert_ne!(run(hot.clone()), run(Sampling { seed: 4, ..hot.clone() }), "another seed draws others");
    // top_k = 1 and a tiny top_p are greedy whatever the temperature.
    let greedy = &r.greedy[..8];
    assert_eq!(run(Sampling { top_k: 1, ..hot.clone() }), greedy);
    assert_eq!(run(Sampling { top_p: 1e-9, ..hot }), greedy);
}

#[test]
fn config_errors_name_the_file_and_the_setting() {
    let dir = std::env::temp_dir().join(format!("ferrograd-llm-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    let base = std::fs::read_to_string(fixture_dir("llama/config.json")).unwrap();
    std::fs::write(&path, base.replace("\"silu\"", "\"relu\"")).unwrap();
    let err = LlamaConfig::from_file(&path).unwrap_err();
    assert!(matches!(err, Error::Format { .. }) && err.to_string().contains("relu"), "{err}");
    std::fs::write(&path, base.replace("\"llama3\"", "\"yarn\"")).unwrap();
    let err = LlamaConfig::from_file(&path).unwrap_err();
    assert!(err.to_string().contains("yarn") && err.to_string().contains("config.json"), "{err}");
    std::fs::write(&path, base.replace("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3")).unwrap();
    let err = LlamaConfig::from_file(&path).unwrap_err();
    assert!(err.to_string().contains("num_key_value_heads"), "{err}");
    let qwen2 = std::fs::read_to_string(fixture_dir("qwen2/config.json")).unwrap();
    // Sliding-window layers before full-attention ones are not a pattern this model has.
    let swa = qwen2
        .replace("\"use_sliding_window\": false", "\"use_sliding_window\": true")
        .replace("\"full_attention\",\n    \"full_attention\"", "\"sliding_attention\",\n    \"full_attention\"");
    std::fs::write(&path, swa).unwrap();
    let err = LlamaConfig::from_file(&path).unwrap_err();
    assert!(err.to_string().contains("layer_types"), "{err}");
    // A folder with a config and no weights says what is missing.
    std::fs::write(&path, &base).unwrap();
    let err = Llama::from_pretrained(&dir).err().expect("no weights here");
    assert!(matches!(err, Error::NotFound { .. }) && err.to_string().contains("model.safetensors"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
