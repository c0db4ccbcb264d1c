//! Sentence embeddings with all-MiniLM-L6-v2: tokenize with the model's own `tokenizer.json`,
//! run the BERT encoder, mean-pool and normalize, and print the cosine similarities.
//!
//!     python3 scripts/fetch_minilm.py                      # the model files (once)
//!     cargo run --release --features tokenizers --example bert
//!     cargo run --release --features tokenizers --example bert -- "one sentence" "another"
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

fn run() -> ferrograd::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
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
