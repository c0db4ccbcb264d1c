//! Text generation with a LLaMA-family or GPT-2 model from a Hugging Face model folder
//! (`config.json`, `model.safetensors` or its shards, and `tokenizer.json` if it has one) or a
//! LLaMA-family GGUF file (quantized weights stay quantized; its own byte-level BPE tokenizer,
//! or a `tokenizer.json` beside it), with a KV cache and each decode step under TinyJit.
//!
//!     cargo run --release --features tokenizers --example llama -- tests/fixtures/llm/llama --prompt "The quick"
//!     cargo run --release --features tokenizers --example llama -- tests/fixtures/llm/llama-gguf/model.gguf --prompt "The quick"
//!     cargo run --release --example llama -- DIR --ids 1,2,3 --tokens 64 --temperature 0.8 --top-p 0.9
//!     cargo run --release --example llama -- --bench [DIR]  # LLaMA-3.2-1B's shape (bench/llm.sh)
//!
//! Options: `--tokens N` (default 32), `--temperature T` (0: greedy, the default), `--top-k K`,
//! `--top-p P`, `--seed S`, `--no-cache`, `--no-jit`. `--bench` runs the model in DIR (made by
//! `bench/llm.sh`, which runs PyTorch on the same weights) or random weights of LLaMA-3.2-1B's
//! shape with `--layers N` (default 16); `--prompt-len N` (512) and `--tokens N` (128);
//! A bf16/f16 folder's weights stay 16-bit in memory; `--f32` converts them to f32 on load.

use ferrograd::models::llama::LlamaConfig;
use ferrograd::models::{generate, load_causal_lm, CausalLm, GenerateOpts, Generated, Llama};
use ferrograd::{nn, Tensor};
use std::rc::Rc;
use std::time::Instant;

struct Args {
    dir: Option<String>,
    prompt: Option<String>,
    ids: Option<Vec<u32>>,
    tokens: Option<usize>,
    opts: GenerateOpts,
    bench: bool,
    to_f32: bool,
    layers: usize,
    prompt_len: usize,
}

fn usage(message: &str) -> ! {
    eprintln!("llama: {message}\nusage: llama DIR|FILE.gguf [--prompt TEXT | --ids 1,2,3] [--tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--no-cache] [--no-jit]\n       llama --bench [DIR] [--f32] [--layers N] [--prompt-len N] [--tokens N]");
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        dir: None,
        prompt: None,
        ids: None,
        tokens: None,
        opts: GenerateOpts::default(),
        bench: false,
        to_f32: false,
        layers: 16,
        prompt_len: 512,
    };
    let mut it = std::env::args().skip(1);
    fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> T {
        v.and_then(|v| v.parse().ok()).unwrap_or_else(|| usage(&format!("{flag} needs a number")))
    }
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--prompt" => a.prompt = Some(it.next().unwrap_or_else(|| usage("--prompt needs text"))),
            "--ids" => {
                let list = it.next().unwrap_or_else(|| usage("--ids needs token ids"));
                a.ids = Some(list.split(',').map(|x| num("--ids", Some(x.trim().to_string()))).collect());
            }
            "--tokens" => a.tokens = Some(num("--tokens", it.next())),
            "--temperature" => a.opts.sampling.temperature = num("--temperature", it.next()),
            "--top-k" => a.opts.sampling.top_k = num("--top-k", it.next()),
            "--top-p" => a.opts.sampling.top_p = num("--top-p", it.next()),
            "--seed" => a.opts.sampling.seed = num("--seed", it.next()),
            "--no-cache" => a.opts.kv_cache = false,
            "--no-jit" => a.opts.jit = false,
            "--bench" => a.bench = true,
            "--f32" => a.to_f32 = true,
            "--layers" => a.layers = num("--layers", it.next()),
            "--prompt-len" => a.prompt_len = num("--prompt-len", it.next()),
            s if s.starts_with("--") => usage(&format!("unknown option {s}")),
            s => a.dir = Some(s.to_string()),
        }
    }
    a
}

fn main() {
    let args = parse_args();
    let result = if args.bench { bench(&args) } else { run(&args) };
    if let Err(e) = result {
        eprintln!("llama: {e}");
        std::process::exit(1);
    }
}

fn print_speed(prompt_len: usize, out: &Generated) {
    let decoded = out.tokens.len().saturating_sub(1);
    println!("prefill: {:.1} tok/s", prompt_len as f64 / out.first_token_s);
    if decoded > 0 {
        println!("decode: {:.2} tok/s", decoded as f64 / out.decode_s);
    }
    println!("first token: {:.0} ms", out.first_token_s * 1e3);
    if let Some(k) = out.kernels_per_step {
        println!("kernels per decode step: {k}");
    }
    if let Some(o) = out.replay_overhead_s {
        println!("replay overhead: {:.1} us per kernel", o * 1e6);
    }
}

#[cfg(feature = "tokenizers")]
type Tok = ferrograd::models::tokenize::TextTokenizer;

/// The tokenizer of a model folder; for a GGUF file, the one in its metadata, else a
/// tokenizer.json beside it.
#[cfg(feature = "tokenizers")]
fn tokenizer(path: &str) -> Option<Tok> {
    let p = std::path::Path::new(path);
    if !p.is_file() {
        return Tok::from_dir(p).ok();
    }
    match Tok::from_gguf(p) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("llama: {e}");
            Tok::from_dir(p.parent()?).ok()
        }
    }
}

fn run(args: &Args) -> ferrograd::Result<()> {
    let dir = args.dir.as_deref().unwrap_or_else(|| usage("give a model folder or GGUF file (or --bench)"));
    let start = Instant::now();
    let model = load_causal_lm(dir)?;
    println!("loaded {dir} in {:.2} s", start.elapsed().as_secs_f64());
    #[cfg(feature = "tokenizers")]
    let tok = tokenizer(dir);
    let prompt: Vec<u32> = match (&args.ids, &args.prompt) {
        (Some(ids), _) => ids.clone(),
        #[cfg(feature = "tokenizers")]
        (None, Some(text)) => match &tok {
            Some(t) => t.encode(text)?,
            None => usage(&format!("{dir} has no tokenizer.json: give --ids")),
        },
        #[cfg(not(feature = "tokenizers"))]
        (None, Some(_)) => usage("text prompts need the `tokenizers` feature (--features tokenizers), or give --ids"),
        (None, None) => usage("give --prompt TEXT or --ids 1,2,3"),
    };
    let n = args.tokens.unwrap_or(32);
    println!("prompt: {} tokens {prompt:?}", prompt.len());
    let out = generate(&model, &prompt, n, &args.opts, |_| {})?;
    println!("tokens: {:?}", out.tokens);
    #[cfg(feature = "tokenizers")]
    if let Some(t) = &tok {
        println!("text: {:?}", t.decode(&[prompt.clone(), out.tokens.clone()].concat())?);
    }
    print_speed(prompt.len(), &out);
    Ok(())
}

/// Peak resident memory of this process in MB (`VmHWM`), where /proc has it.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn bench(args: &Args) -> ferrograd::Result<()> {
    let n = args.tokens.unwrap_or(128);
    let started = Instant::now();
    // The model folder bench/llm.sh made (so PyTorch runs the same weights), or random weights.
    let (model, source) = match &args.dir {
        Some(dir) => (Llama::from_pretrained_with(dir, !args.to_f32)?, format!("loaded from {dir}")),
        None => {
            Tensor::manual_seed(0);
            let config = LlamaConfig { num_hidden_layers: args.layers, ..LlamaConfig::llama_3_2_1b() };
            (Llama::new(config), "random weights made".to_string())
        }
    };
    let params: Vec<Tensor> = nn::state_dict(&model).into_values().collect();
    if args.dir.is_none() {
        Tensor::realize_all(&params.iter().collect::<Vec<_>>())?;
    }
    // Weights loaded as stored (16-bit ones stay 16-bit) are lazy casts: the memory is what
    // their buffers hold.
    let weight_bytes: usize = params.iter().map(nn::stored_bytes).sum();
    let numel: usize = params.iter().map(|p| p.numel()).sum();
    println!(
        "model: {} layers of LLaMA-3.2-1B's shape, {:.2} B parameters, {} bytes each ({:.0} MB), {source} in {:.1} s",
        model.config.num_hidden_layers,
        numel as f64 / 1e9,
        weight_bytes / numel.max(1),
        weight_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let model: Rc<dyn CausalLm> = Rc::new(model);
    // Token ids from a fixed generator (their values do not change the work).
    let prompt: Vec<u32> = (0..args.prompt_len as u64).map(|i| ((i * 2654435761) % 128000) as u32).collect();
    // A first run, identical, builds (or loads from the disk cache) every kernel the timed run
    // uses (the cache's length, prompt + new tokens, is part of their shapes).
    let started = Instant::now();
    generate(&model, &prompt, n, &GenerateOpts::default(), |_| {})?;
    println!("warm-up (kernels built or loaded): {:.1} s", started.elapsed().as_secs_f64());
    let out = generate(&model, &prompt, n, &GenerateOpts::default(), |_| {})?;
    println!("prompt {} tokens, {} new tokens, greedy, KV cache, TinyJit", prompt.len(), n);
    print_speed(prompt.len(), &out);
    if let Some(mb) = peak_rss_mb() {
        println!("peak rss: {mb:.0} MB ({:.2}x the weights)", mb * (1 << 20) as f64 / weight_bytes as f64);
    }
    Ok(())
}
