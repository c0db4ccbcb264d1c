//! Sentence embeddings with all-MiniLM-L6-v2: tokenize with the model's own `tokenizer.json`,
//! run the BERT encoder, mean-pool and normalize, and print the cosine similarities.
//!
//!     python3 scripts/fetch_minilm.py                      # the model files (once)
//!     cargo run --release --features tokenizers --example bert
//!     cargo run --release --features tokenizers --example bert -- "one sentence" "another"
//!     cargo run --release --features tokenizers --example bert -- --bench   # bench/minilm.sh
//!
//! The model folder is `$MINILM_DIR`, else `$FERROGRAD_CACHE/models/all-MiniLM-L6-v2`.

use ferrograd::models::bert::{mean_pool, minilm_dir, Bert};
use ferrograd::models::tokenize::SentenceTokenizer;
use ferrograd::tensor::no_grad;
use std::time::Instant;

const SENTENCES: &[&str] = &[
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "A cheetah is running behind its prey.",
];

fn main() {
    if let Err(e) = run() {
        eprintln!("bert: {e}");
        std::process::exit(1);
    }
}

/// `--bench`: warm forward passes (encoder, mean pooling, normalization) at batch 8x60 and
/// 32x64 tokens, median of 5 (`bench/minilm.sh` runs PyTorch on the same shapes).
fn bench(model: &Bert) -> ferrograd::Result<()> {
    for (b, t) in [(8usize, 60usize), (32, 64)] {
        let ids: Vec<i32> = (0..b * t).map(|i| 1000 + ((i as u64 * 2654435761) % 29000) as i32).collect();
        let ids = ferrograd::Tensor::from_vec(ids, [b, t]);
        let mask = ferrograd::Tensor::from_vec(vec![1i32; b * t], [b, t]);
        let mut times = Vec::new();
        for _ in 0..7 {
            let start = Instant::now();
            no_grad(|| mean_pool(&model.forward(&ids, &mask, None), &mask).normalize(2.0, -1, 1e-12)).realize()?;
            times.push(start.elapsed().as_secs_f64());
        }
        let mut warm = times[2..].to_vec();
        warm.sort_by(f64::total_cmp);
        println!("minilm {b}x{t}: {:.1} ms", warm[warm.len() / 2] * 1e3);
    }
    Ok(())
}

fn run() -> ferrograd::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--bench") {
        return bench(&Bert::from_pretrained(minilm_dir())?);
    }
    let sentences: Vec<&str> =
        if args.is_empty() { SENTENCES.to_vec() } else { args.iter().map(String::as_str).collect() };
    let dir = minilm_dir();
    let start = Instant::now();
    let tokenizer = SentenceTokenizer::from_dir(&dir, 512)?;
    let model = Bert::from_pretrained(&dir)?;
    println!("loaded {} in {:.2} s", dir.display(), start.elapsed().as_secs_f64());

    let batch = tokenizer.encode(&sentences)?;
    let shape = batch.input_ids.shape();
    let embed = || {
        no_grad(|| {
            let hidden = model.forward(&batch.input_ids, &batch.attention_mask, Some(&batch.token_type_ids));
            mean_pool(&hidden, &batch.attention_mask).normalize(2.0, -1, 1e-12).realize()
        })
    };
    let start = Instant::now();
    let embeddings = embed()?;
    let first = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let embeddings_again = embed()?;
    let again = start.elapsed().as_secs_f64();
    println!(
        "{} sentences, {} tokens each: first forward {:.3} s (includes compiling kernels not cached yet), next {:.3} s",
        shape[0], shape[1], first, again
    );
    drop(embeddings_again);

    let similarity = embeddings.matmul(&embeddings.transpose(0, 1)).to_vec::<f32>()?;
    let n = sentences.len();
    println!("\ncosine similarity:");
    for (i, s) in sentences.iter().enumerate() {
        let row: Vec<String> = (0..n).map(|j| format!("{:6.3}", similarity[i * n + j])).collect();
        println!("{}  {}", row.join(" "), s);
    }
    Ok(())
}
