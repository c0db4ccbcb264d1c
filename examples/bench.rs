//! Kernel benchmarks on this machine, one line each with its size and unit, plus the machine's
//! limits measured in the same run (STREAM-style copy/triad with all cores, an FMA peak loop),
//! and one training step of the beautiful_mnist model.
//! `bench/peers.sh` runs the same work through NumPy, PyTorch and tinygrad for comparison.
//!
//! `cargo run --release --example bench` (`QUICK=1` for fewer repetitions).

use ferrograd::helpers::getenv_int;
use ferrograd::tensor::ConvOpts;
use ferrograd::Tensor;

#[path = "shared/limits.rs"]
mod limits;
#[path = "shared/mnist_model.rs"]
mod mnist_model;
use limits::{best_of, fma_peak, stream};

/// One beautiful_mnist training step (batch 512, random images, Adam, under TinyJit), in
/// images per second.
fn mnist_train_step(reps: usize) -> ferrograd::Result<f64> {
    use ferrograd::nn::get_parameters;
    use ferrograd::nn::optim::adam;
    let bs = 512;
    let model = std::rc::Rc::new(mnist_model::Model::new());
    let mut opt = adam(get_parameters(&*model), 0.001);
    let x = Tensor::rand([bs, 1, 28, 28]).realize()?;
    let y = Tensor::randint([bs], 0, 10).realize()?;
    let m = model.clone();
    let mut step = ferrograd::TinyJit::new(move |_: &[Tensor]| m.train_step(&mut opt, &x, &y));
    for _ in 0..3 {
        step.call(&[])?[0].realize()?; // plain run, capture, first replay (compiles)
    }
    let t = best_of(reps, || {
        step.call(&[]).expect("train step")[0].item::<f32>().expect("loss");
    });
    Ok(bs as f64 / t)
}

fn line(name: &str, value: f64, unit: &str) {
    println!("{name:<40} {value:>9.1} {unit}");
}

fn main() -> ferrograd::Result<()> {
    let quick = getenv_int("QUICK", 0) != 0;
    let reps = if quick { 2 } else { 5 };
    Tensor::manual_seed(0);
    println!("device: {}", ferrograd::Device::try_default()?);
    for n in [256usize, 512, 1024, 2048] {
        let a = Tensor::rand([n, n]).realize()?;
        let b = Tensor::rand([n, n]).realize()?;
        let t = best_of(if n >= 2048 { reps.min(3) } else { reps }, || {
            a.matmul(&b).realize().expect("matmul");
        });
        line(&format!("matmul {n}x{n}x{n} f32"), 2.0 * (n as f64).powi(3) / t / 1e9, "GFLOP/s");
    }
    // `x @ w.T` with `w` stored `[out, in]` (nn::Linear's layout) against the same product with
    // the weight stored `[in, out]`: the goal is the same speed.
    for (rows, inp, out) in [(512usize, 512usize, 512usize), (480, 384, 1536), (1024, 1024, 1024), (4096, 4096, 1024)] {
        let x = Tensor::rand([rows, inp]).realize()?;
        let w = Tensor::rand([out, inp]).realize()?;
        let wt = w.t().contiguous().realize()?;
        let flops = 2.0 * (rows * inp * out) as f64;
        let t_t = best_of(reps, || {
            x.matmul(&w.t()).realize().expect("matmul");
        });
        let t_c = best_of(reps, || {
            x.matmul(&wt).realize().expect("matmul");
        });
        line(&format!("matmul {rows}x{inp} @ ({out}x{inp}).T f32"), flops / t_t / 1e9, "GFLOP/s");
        println!("  ratio to the same matmul with a [in, out] weight: {:.2}", t_c / t_t);
    }
    let x = Tensor::rand([64, 32, 28, 28]).realize()?;
    let w = Tensor::rand([64, 32, 3, 3]).realize()?;
    let t = best_of(reps, || {
        x.conv2d(&w, None, &ConvOpts::default()).realize().expect("conv");
    });
    line("conv2d 64x32x28x28 * 64x32x3x3 f32", 2.0 * 64.0 * 64.0 * 26.0 * 26.0 * 32.0 * 9.0 / t / 1e9, "GFLOP/s");
    let n = 16 << 20;
    let (a, b, c) = (Tensor::rand([n]).realize()?, Tensor::rand([n]).realize()?, Tensor::rand([n]).realize()?);
    let t = best_of(reps, || {
        ((&a * &b + &c).relu() * 2.0).sum().realize().expect("fused");
    });
    line("((a*b+c).relu()*2).sum() 16M f32", 12.0 * n as f64 / t / 1e9, "GB/s");
    line("beautiful_mnist train step, batch 512", mnist_train_step(reps)?, "img/s");
    let (copy, triad) = stream(n, reps);
    line("STREAM copy 16M f32, all cores", copy, "GB/s");
    line("STREAM triad 16M f32, all cores", triad, "GB/s");
    line("FMA peak, all cores", fma_peak()?, "GFLOP/s");
    Ok(())
}
