//! tinygrad's examples/beautiful_mnist.py in Rust: a small conv net trained on MNIST with Adam,
//! batch 512 sampled with `randint`, the whole training step under TinyJit.
//!
//! `STEPS` (default 70), `BS` (512), `LR` (0.001), `SEED` (1) change the run; MNIST is read from
//! `MNIST_DIR` or the cache directory (see `nn::datasets::mnist`).

use ferrograd::helpers::getenv_int;
use ferrograd::nn::get_parameters;
use ferrograd::nn::optim::adam;
use ferrograd::tensor::Idx;
use ferrograd::{DType, Tensor, TinyJit};
use indicatif::{ProgressBar, ProgressStyle};
use std::rc::Rc;
use std::time::Instant;

#[path = "shared/mnist_model.rs"]
mod mnist_model;
use mnist_model::Model;

fn main() -> ferrograd::Result<()> {
    let steps = getenv_int("STEPS", 70) as usize;
    let bs = getenv_int("BS", 512) as usize;
    let lr = std::env::var("LR").ok().and_then(|v| v.parse().ok()).unwrap_or(0.001);
    Tensor::manual_seed(getenv_int("SEED", 1) as u64);

    let (x_train, y_train, x_test, y_test) = ferrograd::nn::datasets::mnist()?;
    let n_train = x_train.shape()[0] as i64;
    let model = Rc::new(Model::new());
    let mut opt = adam(get_parameters(&*model), lr);

    let m = model.clone();
    let mut train_step = TinyJit::new(move |_: &[Tensor]| {
        let samples = Tensor::randint([bs], 0, n_train);
        let x = x_train.index(&[Idx::T(samples.clone())]);
        let y = y_train.index(&[Idx::T(samples)]);
        m.train_step(&mut opt, &x, &y)
    });
    let m = model.clone();
    let mut test_acc = TinyJit::new(move |_: &[Tensor]| {
        let pred = m.forward(&x_test).argmax_axis(1);
        vec![pred.eq(y_test.cast(pred.dtype())).cast(DType::F32).mean() * 100.0]
    });

    let bar = ProgressBar::new(steps as u64);
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed_precise}] {msg}").expect("template"));
    let mut acc = f32::NAN;
    let start = Instant::now();
    for i in 0..steps {
        let loss = train_step.call(&[])?[0].item::<f32>()?;
        if i == 0 {
            // Cold start: with an empty kernel cache this is mostly C compilation.
            println!("first step: {:.2} s", start.elapsed().as_secs_f64());
        }
        if i % 10 == 9 {
            acc = test_acc.call(&[])?[0].item::<f32>()?;
        }
        bar.set_message(format!("loss: {loss:6.2} test_accuracy: {acc:5.2}%"));
        bar.inc(1);
    }
    let wall = start.elapsed().as_secs_f64();
    bar.finish();
    let acc = test_acc.call(&[])?[0].item::<f32>()?;
    println!("test accuracy: {acc:.2}%");
    println!("wall time for {steps} steps (with {} test evaluations): {wall:.1} s", steps / 10);
    Ok(())
}
