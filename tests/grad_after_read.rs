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
