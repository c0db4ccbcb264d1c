//! Long reduces run as two kernels (the scheduler's split rule) and give the same values,
//! gradients and assigns as one kernel would.

use ferrograd::schedule::{create_schedule, ItemKind};
use ferrograd::Tensor;

const N: usize = 1 << 16;

fn data() -> Vec<f32> {
    (0..N).map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5).collect()
}

fn kernels(t: &Tensor) -> usize {
    create_schedule(&[t.uop()]).items.iter().filter(|i| i.kind == ItemKind::Kernel).count()
}

#[test]
fn a_long_sum_is_split_on_a_threaded_cpu_and_exact() {
    let x = data();
    let t = Tensor::from_vec(x.clone(), [N]).realize().unwrap();
    let s = t.sum();
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if t.device() == "CPU" {
        assert_eq!(kernels(&s), if threads > 1 { 2 } else { 1 }, "kernels of a {N}-element sum on {threads} threads");
    }
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    let got = s.to_vec::<f32>().unwrap()[0] as f64;
    assert!((got - want).abs() < 1e-3, "sum {got} vs {want}");
}

#[test]
fn gradients_flow_through_a_split_sum() {
    let x = data();
    let t = Tensor::from_vec(x.clone(), [N]).requires_grad();
    (&t * &t).sum().backward();
    let g = t.grad().unwrap().to_vec::<f32>().unwrap();
    assert!(g.iter().zip(&x).all(|(g, x)| (g - 2.0 * x).abs() < 1e-6), "d/dx sum(x*x) = 2x");
}

#[test]
fn an_assign_of_a_split_sum_runs_once_per_realize() {
    let big = Tensor::from_vec(vec![1.0f32; N], [N]).realize().unwrap();
    let acc = Tensor::from_vec(vec![0.0f32], [1]).realize().unwrap();
    for step in 1..=3 {
        let assigned = acc.assign(&(&acc + big.sum().reshape([1])));
        // Built on the assign before it runs: reading it later must not assign again.
        let doubled = &assigned * 2.0;
        acc.realize().unwrap();
        assert_eq!(doubled.to_vec::<f32>().unwrap(), vec![(2 * step * N) as f32], "doubled after step {step}");
        // Reading it again must not run the assign a second time.
        assert_eq!(acc.to_vec::<f32>().unwrap(), vec![(step * N) as f32], "after step {step}");
        assert_eq!(acc.to_vec::<f32>().unwrap(), vec![(step * N) as f32], "read twice after step {step}");
    }
}
