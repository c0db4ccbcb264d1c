//! tinygrad's README example in Rust: a matmul, a sum, and the gradients of both inputs.

use ferrograd::Tensor;

fn main() -> ferrograd::Result<()> {
    let x = Tensor::eye(3).requires_grad();
    let y = Tensor::from_vec(vec![2.0f32, 0.0, -2.0], [1, 3]).requires_grad();
    let z = y.matmul(&x).sum();
    z.backward();
    println!("{}", x.grad().expect("x has a gradient").values_string()?); // dz/dx
    println!("{}", y.grad().expect("y has a gradient").values_string()?); // dz/dy
    Ok(())
}
