//! beautiful_mnist, data-parallel over several devices: the model and the optimizer state are
//! replicated on every device of `DEVS` (default `CPU:0,CPU:1`; `CL:0,CL:1` for two OpenCL
//! devices), each step's batch of 512 is sharded along the batch axis, and the gradients (and
//! BatchNorm's batch statistics) are allreduced by the scheduler — the step is the ordinary
//! `train_step` of `beautiful_mnist`, under TinyJit.
//!
//! `STEPS` (default 70), `BS` (512), `LR` (0.001), `SEED` (1) as in `beautiful_mnist`. With
//! `CHECK=n` it first trains `n` steps on one device (the first of `DEVS`) and `n` steps spread,
//! from the same initial weights and samples, in f64 and in f32, prints the loss trajectories
//! and fails if the f64 ones differ by more than 1e-5 (then it goes on to the full run). In f32
//! they drift apart by rounding (the two runs sum the batch in different orders, and batch
//! statistics and Adam's first steps magnify the last bits), so that difference is printed only,
//! with how far each f32 run strays from the f64 trajectory (one device's f32 run strays as far).

use ferrograd::helpers::getenv_int;
use ferrograd::nn::optim::adam;
use ferrograd::nn::{get_parameters, Module};
use ferrograd::tensor::Idx;
use ferrograd::{DType, Tensor, TinyJit};
use std::rc::Rc;
use std::time::Instant;

#[path = "shared/mnist_model.rs"]
mod mnist_model;
use mnist_model::Model;

type Data = (Tensor, Tensor, Tensor, Tensor);

/// A freshly initialized model from `seed`, every tensor of it (parameters and BatchNorm's
/// running statistics) copied to each of `devices` when there are several.
fn model_on(devices: &[String], seed: u64, dtype: DType) -> ferrograd::Result<Rc<Model>> {
    Tensor::manual_seed(seed);
    let model = ferrograd::tensor::with_default_device(&devices[0], Model::new);
    let mut state = Vec::new();
    model.visit("", &mut |_, t| state.push(t.clone()));
    for t in &state {
        if dtype != DType::F32 && t.dtype() == DType::F32 {
            t.replace(&t.cast(dtype).realize()?);
        }
        if devices.len() > 1 {
            t.shard_(devices, None)?;
        }
    }
    Ok(Rc::new(model))
}

/// Trains `steps` steps (each under TinyJit), calling `each` with the step's loss; returns the
/// test accuracy.
fn train(
    data: &Data,
    devices: &[String],
    seed: u64,
    dtype: DType,
    steps: usize,
    mut each: impl FnMut(usize, f64),
) -> ferrograd::Result<f32> {
    let (x_train, y_train, x_test, y_test) = data.clone();
    let bs = getenv_int("BS", 512) as usize;
    let lr = std::env::var("LR").ok().and_then(|v| v.parse().ok()).unwrap_or(0.001);
    let model = model_on(devices, seed, dtype)?;
    let mut opt = adam(get_parameters(&*model), lr);
    let n_train = x_train.shape()[0] as i64;
    let devs = devices.to_vec();
    // Sharded along the batch when it splits evenly over the devices, else replicated.
    let place = move |t: Tensor| -> Tensor {
        match devs.len() {
            1 => t.to(&devs[0]),
            n if t.shape()[0].is_multiple_of(n) => t.shard(&devs, 0),
            _ => t.shard(&devs, None),
        }
    };
    let (m, p) = (model.clone(), place.clone());
    let mut train_step = TinyJit::new(move |_: &[Tensor]| {
        // The same samples as the single-device run: drawn on the host's default device.
        let samples = Tensor::randint([bs], 0, n_train);
        let x = p(x_train.index(&[Idx::T(samples.clone())]));
        let y = p(y_train.index(&[Idx::T(samples)]));
        let mut outs = m.train_step(&mut opt, &x, &y);
        outs[0] = outs[0].cast(DType::F64).to("CPU");
        outs
    });
    let (m, x_test, y_test) = (model.clone(), place(x_test), place(y_test));
    let mut test_acc = TinyJit::new(move |_: &[Tensor]| {
        let pred = m.forward(&x_test).argmax_axis(1);
        vec![(pred.eq(y_test.cast(pred.dtype())).cast(DType::F32).mean() * 100.0).to("CPU")]
    });
    for i in 0..steps {
        let loss = train_step.call(&[])?[0].item::<f64>()?;
        each(i, loss);
    }
    test_acc.call(&[])?[0].item::<f32>()
}

fn main() -> ferrograd::Result<()> {
    let devices: Vec<String> = std::env::var("DEVS")
        .unwrap_or_else(|_| "CPU:0,CPU:1".into())
        .split(',')
        .map(|d| ferrograd::Device::new(d.trim()).map(|d| d.name().to_string()))
        .collect::<ferrograd::Result<_>>()?;
    let steps = getenv_int("STEPS", 70) as usize;
    let seed = getenv_int("SEED", 1) as u64;
    let data: Data = ferrograd::nn::datasets::mnist()?;
    println!("devices: {}", devices.join(", "));

    let check = getenv_int("CHECK", 0) as usize;
    if check > 0 {
        // In f64 the two orders of summation (per device, then across) agree to ~1e-15, so any
        // difference would be a wrong rule; in f32 rounding differences grow step by step.
        let largest = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f64, f64::max);
        let mut exact = Vec::new();
        for (dtype, bound) in [(DType::F64, Some(1e-5)), (DType::F32, None)] {
            let mut single = Vec::new();
            train(&data, &devices[..1], seed, dtype, check, |_, l| single.push(l))?;
            let mut spread = Vec::new();
            train(&data, &devices, seed, dtype, check, |_, l| spread.push(l))?;
            let worst = largest(&single, &spread);
            println!("{dtype} losses on {}:   {single:.7?}", devices[0]);
            println!("{dtype} losses on {} devices: {spread:.7?}", devices.len());
            println!("{dtype}: largest difference over {check} steps: {worst:.2e}");
            if bound.is_some_and(|b| worst > b) {
                return Err(ferrograd::Error::Other(format!(
                    "{dtype} data-parallel losses differ from one device's by {worst:.2e} (> 1e-5)"
                )));
            }
            if dtype == DType::F64 {
                exact = single;
            } else {
                // How far f32 training itself strays from the f64 trajectory, on one device and
                // spread: the spread run is as close to it as one device is.
                println!(
                    "f32 against the f64 trajectory: one device {:.2e}, {} devices {:.2e}",
                    largest(&single, &exact),
                    devices.len(),
                    largest(&spread, &exact)
                );
            }
        }
    }

    let start = Instant::now();
    let acc = train(&data, &devices, seed, DType::F32, steps, |i, loss| {
        if i == 0 {
            println!("first step: {:.2} s", start.elapsed().as_secs_f64());
        }
        if i % 10 == 9 || i + 1 == steps {
            println!("step {:>3}: loss {loss:.4}", i + 1);
        }
    })?;
    println!("wall time for {steps} steps on {} devices: {:.1} s", devices.len(), start.elapsed().as_secs_f64());
    println!("test accuracy: {acc:.2}%");
    Ok(())
}
