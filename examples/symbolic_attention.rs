//! One decode query's attention over a 4096-slot KV cache (32 heads over 8 KV heads, head size
//! 64): over the whole cache with a mask (the static-shape way) against over `pos + 1` keys
//! (symbolic shapes), at a few positions. Prints each time and their largest difference.
//!
//!     cargo run --release --example symbolic_attention

use ferrograd::tensor::AttentionOpts;
use ferrograd::{DType, Dim, Tensor, Variable};
use std::time::Instant;

/// Milliseconds per call of `f` (realized), after three warm-up calls.
fn time_ms(f: &dyn Fn() -> Tensor) -> ferrograd::Result<f64> {
    for _ in 0..3 {
        f().realize()?;
    }
    let start = Instant::now();
    for _ in 0..20 {
        f().realize()?;
    }
    Ok(start.elapsed().as_secs_f64() / 20.0 * 1e3)
}

fn main() -> ferrograd::Result<()> {
    let (max, heads, kv_heads, head_dim) = (4096usize, 32usize, 8usize, 64usize);
    let keys = Tensor::randn([1, kv_heads, max, head_dim]).realize()?;
    let values = Tensor::randn([1, kv_heads, max, head_dim]).realize()?;
    let pos_var = Variable::new("pos", 0, max as i64 - 1);
    for pos in [100usize, 1000, 4000] {
        let q = Tensor::randn([1, heads, 1, head_dim]).realize()?;
        let masked = || {
            let mask = Tensor::arange(max).cast(DType::I32).le(pos as i64).reshape([1, max]);
            q.scaled_dot_product_attention(&keys, &values, &AttentionOpts::default().gqa().mask(&mask))
        };
        let symbolic = || {
            let all = |d: usize| (Dim::Const(0), Dim::Const(d));
            let window = [all(1), all(kv_heads), (Dim::Const(0), pos_var.bind(pos as i64) + 1usize), all(head_dim)];
            q.scaled_dot_product_attention(
                &keys.shrink_dims(&window),
                &values.shrink_dims(&window),
                &AttentionOpts::default().gqa(),
            )
        };
        let (a, b) = (time_ms(&masked)?, time_ms(&symbolic)?);
        let diff = (masked() - symbolic()).abs().max().item::<f32>()?;
        println!("pos {pos}: whole cache with a mask {a:.3} ms, pos + 1 keys {b:.3} ms ({:.1}x), largest difference {diff:.1e}", a / b);
    }
    Ok(())
}
