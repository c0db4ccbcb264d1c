//! Per-example gradient norms of the beautiful_mnist model (the core of DP-SGD), three ways:
//! `vmap(grad(loss))` over a batch, a loop of single-example `grad`s, and — for scale — one
//! ordinary batched backward (which gives only the batch's mean gradient). The model's
//! parameters become the function's arguments with `functional_call`; BatchNorm uses its
//! running statistics (per-example gradients of batch statistics are not per example).
//!
//! `BS` (default 64) examples from MNIST's training set (`MNIST_DIR`, see
//! `nn::datasets::mnist`); `REPS` (3) timed repetitions after a warm-up, best kept.

use ferrograd::engine::record_kernels;
use ferrograd::func::{functional_call, grad, vmap};
use ferrograd::helpers::getenv_int;
use ferrograd::nn::get_parameters;
use ferrograd::{DType, Tensor};
use std::time::Instant;

#[path = "shared/mnist_model.rs"]
#[allow(dead_code)] // its training step is for the training examples
mod mnist_model;
use mnist_model::Model;

/// Best wall time of `reps` runs of `f` (after one warm-up run that compiles), and the kernels
/// the last run launched.
fn time(reps: usize, mut f: impl FnMut() -> ferrograd::Result<Vec<f32>>) -> ferrograd::Result<(f64, usize, Vec<f32>)> {
    let mut out = f()?;
    let mut best = f64::INFINITY;
    let mut kernels = 0;
    for _ in 0..reps {
        let start = Instant::now();
        let (r, runs) = record_kernels(&mut f);
        best = best.min(start.elapsed().as_secs_f64());
        out = r?;
        kernels = runs.len();
    }
    Ok((best * 1e3, kernels, out))
}

fn main() -> ferrograd::Result<()> {
    let bs = getenv_int("BS", 64) as usize;
    let reps = getenv_int("REPS", 3).max(1) as usize;
    Tensor::manual_seed(1);
    let (x_train, y_train, _, _) = ferrograd::nn::datasets::mnist()?;
    let x = x_train.narrow(0, 0, bs).cast(DType::F32).contiguous();
    let y = y_train.narrow(0, 0, bs).contiguous();
    Tensor::realize_all(&[&x, &y])?;
    let model = Model::new();
    let params = get_parameters(&model);
    Tensor::realize_all(&params.iter().collect::<Vec<_>>())?;
    let n = params.len();

    // The loss of one example as a function of the parameters and that example.
    let loss = |a: &[Tensor]| {
        let (values, xy) = a.split_at(n);
        functional_call(&params, values, || {
            let logits = model.forward(&xy[0].unsqueeze(0));
            vec![logits.sparse_categorical_crossentropy(&xy[1].unsqueeze(0), -1, 0.0, Default::default())]
        })
    };
    let grads_of = (0..n).collect::<Vec<_>>();
    let norm = |gs: &[Tensor], axes_from: isize| -> Tensor {
        let squares: Vec<Tensor> = gs
            .iter()
            .map(|g| {
                let axes: Vec<isize> = (axes_from..g.ndim() as isize).collect();
                g.square().sum_axis(axes)
            })
            .collect();
        squares.into_iter().reduce(|a, b| a + b).expect("parameters").sqrt()
    };
    let args: Vec<Tensor> = params.iter().cloned().chain([x.clone(), y.clone()]).collect();
    let in_axes: Vec<Option<isize>> = vec![None; n].into_iter().chain([Some(0), Some(0)]).collect();

    let (vmap_ms, vmap_kernels, vmap_norms) = time(reps, || {
        let per_example = vmap(grad(loss, &grads_of), &in_axes, &[])(&args);
        norm(&per_example, 1).to_vec::<f32>()
    })?;
    let (loop_ms, loop_kernels, loop_norms) = time(reps, || {
        let mut norms = Vec::with_capacity(bs);
        for i in 0..bs {
            let mut one = params.clone();
            one.extend([x.narrow(0, i, 1).squeeze(0), y.narrow(0, i, 1).squeeze(0)]);
            norms.push(norm(&grad(loss, &grads_of)(&one), 0).item::<f32>()?);
        }
        Ok(norms)
    })?;
    let (batched_ms, batched_kernels, _) = time(reps, || {
        let mut all = params.clone();
        all.extend([x.clone(), y.clone()]);
        let batch_loss = |a: &[Tensor]| {
            let (values, xy) = a.split_at(n);
            functional_call(&params, values, || {
                vec![model.forward(&xy[0]).sparse_categorical_crossentropy(&xy[1], -1, 0.0, Default::default())]
            })
        };
        norm(&grad(batch_loss, &grads_of)(&all), 0).reshape([1]).to_vec::<f32>()
    })?;

    let worst =
        vmap_norms.iter().zip(&loop_norms).map(|(a, b)| ((a - b) / b.abs().max(1e-6)).abs()).fold(0f32, f32::max);
    println!("batch {bs}, {n} parameter tensors; gradient norms of the first examples: {:?}", &vmap_norms[..4.min(bs)]);
    println!("vmap vs loop: largest relative difference of a norm {worst:.2e}");
    assert!(worst < 1e-3, "vmap's per-example gradient norms differ from the loop's by {worst}");
    println!(
        "kernels: vmap {vmap_kernels}, loop {loop_kernels} ({} per example), batched backward {batched_kernels}",
        loop_kernels / bs
    );
    println!(
        "vmap is {:.1}x faster than the loop and takes {:.2}x the batched backward's time",
        loop_ms / vmap_ms,
        vmap_ms / batched_ms
    );
    println!("per-example grads: vmap {vmap_ms:.1} ms, loop {loop_ms:.1} ms, batched backward {batched_ms:.1} ms");
    Ok(())
}
