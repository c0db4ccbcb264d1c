//! Reading a value (printing the loss, `to_vec`) before `backward()` must not lose gradients.

use ferrograd::Tensor;

#[test]
fn backward_after_reading_the_output() {
    let w = Tensor::from_vec(vec![1.0f32, 2.0], [2]).requires_grad();
    let y = w.mul(3.0);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 6.0]);
    let loss = y.sum();
    println!("loss = {loss}");
    loss.backward();
    assert_eq!(w.grad().expect("gradient reached w").to_vec::<f32>().unwrap(), vec![3.0, 3.0]);
}

#[test]
fn backward_through_an_intermediate_realized_early() {
    let w = Tensor::from_vec(vec![1.0f32, -2.0, 0.5], [3]).requires_grad();
    let h = (&w * &w).realize().unwrap(); // realized on its own
    let loss = (h * 2.0).sum();
    loss.backward();
    assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), vec![4.0, -8.0, 2.0]);
}

/// A training loop that keeps every step's loss (`losses.push(loss)`, a PyTorch habit) must
/// not keep every step's graph: after `backward()` a loss's graph has given its gradients, so
/// realizing the loss afterwards does not remember it, and each step's input batch is freed
/// with the step (as PyTorch frees a graph after backward). Before, 5,000 steps of a small
/// model with 64 KB batches grew to 400 MB.
#[test]
fn kept_losses_do_not_keep_their_graphs() {
    let w = Tensor::from_vec(vec![0.5f32; 16], [4, 4]).requires_grad();
    let mut losses = Vec::new();
    let mut first_batch = None;
    for step in 0..20 {
        let x = Tensor::from_vec(vec![step as f32; 8], [2, 4]);
        if step == 0 {
            first_batch = Some(x.uop().downgrade());
        }
        let loss = x.matmul(&w).square().mean();
        loss.backward();
        w.assign(&w.detach() - w.grad().unwrap() * 0.01).realize().unwrap();
        w.set_grad(None);
        loss.item::<f32>().unwrap(); // read after backward, as a logging loop does
        losses.push(loss);
    }
    assert!(
        first_batch.unwrap().upgrade().is_none(),
        "step 0's input batch is still alive, held by a kept loss's graph"
    );
    // Reading before backward still works: the graph stays while it may be needed.
    let x = Tensor::from_vec(vec![1.0f32; 4], [1, 4]);
    let loss = x.matmul(&w).sum();
    let before = loss.item::<f32>().unwrap();
    loss.backward();
    assert!(before.is_finite() && w.grad().unwrap().to_vec::<f32>().unwrap().iter().all(|g| *g == 1.0));
}
