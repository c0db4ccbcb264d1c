use ferrograd::Tensor;
fn main() {
    let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let b = Tensor::from_slice(&[10.0f32, 20.0, 30.0]);
    let c = (&a + &b) * 2.0;
    println!("{}", c);
    println!("{}", a.sum_axis(1));
    println!("{}", a.t());
    println!("{}", a.pad(&[(1, 0), (0, 1)]));
    println!("{}", Tensor::eye(3));
    println!("{}", Tensor::arange(5));
    let x = Tensor::rand([2, 3]);
    println!("{}", x);
}
