//! The same computation gives bit-identical results every time it runs.

use ferrograd::Tensor;

fn compute() -> Vec<u32> {
    Tensor::manual_seed(42);
    let a = Tensor::randn([33, 17]);
    let b = Tensor::rand([17, 9]);
    let c = (a.matmul(&b).exp().sum_keepdim(1) + a.max_axis(1).reshape([33, 1])).sqrt();
    c.to_vec::<f32>().unwrap().iter().map(|x| x.to_bits()).collect()
}

#[test]
fn results_are_identical_across_runs() {
    let first = compute();
    for _ in 0..3 {
        assert_eq!(compute(), first);
    }
}
