//! Scaled dot-product attention as LLaMA-3.2-1B calls it (32 query heads over 8 KV heads, head
//! size 64): a 512-token causal prompt and one decode query over a 512-slot cache with a mask.
//! Prints the kernels per call and the time per call (realized, after warm-up calls).
//!
//!     cargo run --release --example attention

use ferrograd::runtime::get_device;
use ferrograd::schedule::kernel_count;
use ferrograd::tensor::AttentionOpts;
use ferrograd::Tensor;
use std::time::Instant;

/// Milliseconds per call of `f` (realized, and the device waited for: launches on OpenCL or
/// CUDA are asynchronous), after three warm-up calls.
fn time_ms(f: &dyn Fn() -> Tensor, calls: usize) -> ferrograd::Result<f64> {
    let device = get_device(&f().device())?;
    for _ in 0..3 {
        f().realize()?;
    }
    device.synchronize()?;
    let start = Instant::now();
    for _ in 0..calls {
        f().realize()?;
    }
    device.synchronize()?;
    Ok(start.elapsed().as_secs_f64() / calls as f64 * 1e3)
}

fn main() -> ferrograd::Result<()> {
    let (heads, kv_heads, head_dim, tokens) = (32usize, 8usize, 64usize, 512usize);
    let keys = Tensor::randn([1, kv_heads, tokens, head_dim]).realize()?;
    let values = Tensor::randn([1, kv_heads, tokens, head_dim]).realize()?;
    let prompt = Tensor::randn([1, heads, tokens, head_dim]).realize()?;
    let prefill = || prompt.scaled_dot_product_attention(&keys, &values, &AttentionOpts::default().gqa().causal());
    let ms = time_ms(&prefill, 10)?;
    println!("prompt of {tokens} tokens, causal: {} kernels, {ms:.2} ms", kernel_count(&[prefill().uop()]));
    let step = Tensor::randn([1, heads, 1, head_dim]).realize()?;
    let mask = Tensor::arange(tokens).lt(300).reshape([1, tokens]);
    let decode = || step.scaled_dot_product_attention(&keys, &values, &AttentionOpts::default().gqa().mask(&mask));
    let ms = time_ms(&decode, 50)?;
    println!("one decode query over {tokens} keys: {} kernels, {ms:.3} ms", kernel_count(&[decode().uop()]));
    Ok(())
}
