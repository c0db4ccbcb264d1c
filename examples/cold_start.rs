//! Cold start: the first forward of a small transformer block (attention + MLP, 32 tokens of
//! width 256, 4 heads) with an empty kernel cache, then again warm (in the same process the
//! engine's cache; `FERROGRAD_CACHE` pointing at the same folder in a second process shows the
//! disk cache). Most of the cold time is the C compiler.
//!
//! `cargo run --release --example cold_start` (uses a fresh temporary cache folder unless
//! `FERROGRAD_CACHE` is set).

use ferrograd::nn::{LayerNorm, Linear};
use ferrograd::Tensor;
use std::time::Instant;

fn main() -> ferrograd::Result<()> {
    if std::env::var_os("FERROGRAD_CACHE").is_none() {
        let dir = std::env::temp_dir().join(format!("ferrograd-cold-{}", std::process::id()));
        std::env::set_var("FERROGRAD_CACHE", &dir);
    }
    let (t, d, h) = (32usize, 256usize, 4usize);
    Tensor::manual_seed(0);
    let x = Tensor::randn([t, d]).realize()?;
    let lin = |i: usize, o: usize| -> ferrograd::Result<Linear> {
        let l = Linear::new(i, o, true);
        l.weight.realize()?;
        if let Some(b) = &l.bias {
            b.realize()?;
        }
        Ok(l)
    };
    let (q, k, v, o) = (lin(d, d)?, lin(d, d)?, lin(d, d)?, lin(d, d)?);
    let (up, down) = (lin(d, 4 * d)?, lin(4 * d, d)?);
    let (n1, n2) = (LayerNorm::new(vec![d]), LayerNorm::new(vec![d]));
    let block = |x: &Tensor| {
        let heads = |y: Tensor| y.reshape([t, h, d / h]).permute([1, 0, 2]);
        let a = n1.forward(x);
        let (qh, kh, vh) = (heads(q.forward(&a)), heads(k.forward(&a)), heads(v.forward(&a)));
        let scores = qh.matmul(&kh.transpose(-1, -2)) * (1.0 / ((d / h) as f64).sqrt());
        let att = scores.softmax(-1).matmul(&vh);
        let x = x + &o.forward(&att.permute([1, 0, 2]).reshape([t, d]));
        &x + &down.forward(&up.forward(&n2.forward(&x)).gelu())
    };
    for run in ["cold", "warm"] {
        let start = Instant::now();
        let y = block(&x).realize()?;
        let secs = start.elapsed().as_secs_f64();
        let sum: f32 = y.sum().item()?;
        println!("{run} forward: {secs:.3} s (checksum {sum:.4})");
    }
    Ok(())
}
