//! A long training loop without TinyJit that keeps every step's loss (`losses.push(loss)`,
//! a common PyTorch habit) and reads it, with a fresh input batch each step: time per step and
//! resident memory must stay flat. Prints both for each tenth of the run and the ratio of the
//! last tenth to the second (the first includes compiling).
//!
//! `cargo run --release --example long_loop` (`STEPS=10000` by default).

use ferrograd::nn::optim::{Optimizer, SGD};
use ferrograd::nn::Linear;
use ferrograd::Tensor;
use std::time::Instant;

/// Resident memory of this process in MB (Linux; 0 elsewhere).
fn rss_mb() -> f64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else { return 0.0 };
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

fn main() {
    let steps: usize = std::env::var("STEPS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000).max(20);
    let (l1, l2) = (Linear::new(256, 32, true), Linear::new(32, 4, true));
    let params = vec![l1.weight.clone(), l1.bias.clone().unwrap(), l2.weight.clone(), l2.bias.clone().unwrap()];
    let mut opt = SGD::new(params, 0.01);
    let batch: Vec<f32> = (0..64 * 256).map(|i| (i % 7) as f32 * 0.1).collect();
    let y = Tensor::from_vec((0..64).map(|i| i % 4).collect::<Vec<i32>>(), [64]);
    let mut losses = Vec::new();
    let tenth = steps / 10;
    let mut per_tenth = Vec::new();
    let mut t = Instant::now();
    for i in 0..steps {
        opt.zero_grad();
        let x = Tensor::from_vec(batch.clone(), [64, 256]); // a new 64 KB batch every step
        let loss = l2.forward(&l1.forward(&x).relu()).cross_entropy(&y);
        loss.backward();
        opt.step().expect("optimizer step");
        loss.item::<f32>().expect("read the loss");
        losses.push(loss);
        if (i + 1) % tenth == 0 {
            let ms = t.elapsed().as_secs_f64() * 1e3 / tenth as f64;
            println!("steps {:6}: {ms:.3} ms/step, RSS {:.1} MB", i + 1, rss_mb());
            per_tenth.push((ms, rss_mb()));
            t = Instant::now();
        }
    }
    let (first, last) = (per_tenth[1], per_tenth[per_tenth.len() - 1]);
    println!(
        "last tenth / second tenth: time {:.2}x, RSS {:+.1} MB for {} kept losses",
        last.0 / first.0,
        last.1 - first.1,
        losses.len()
    );
}
