//! Gathers written as one-hot sums become direct loads: same values, no pass over the source.

use ferrograd::tensor::Idx;
use ferrograd::Tensor;

#[test]
fn indexing_rows_by_a_tensor_reads_only_those_rows() {
    let n = 5000;
    let x = Tensor::from_vec((0..n * 3).map(|i| i as f32).collect(), [n, 3]);
    let idx = Tensor::from_vec(vec![4i32, 0, 4999, 17, -1, -5000], [6]);
    let got = x.index(&[Idx::T(idx)]);
    let sched = ferrograd::schedule::create_schedule(&[got.uop()]);
    let spec = ferrograd::codegen::get_program(
        &sched.items[0].ast,
        ferrograd::runtime::get_device("CPU").unwrap().renderer(),
        None,
    );
    // One output element per (row, col): no loop over the 5000 source rows remains.
    assert!(!spec.name.contains("5000"), "kernel still reduces over the source: {}", spec.name);
    let want: Vec<f32> = [4i64, 0, 4999, 17, -1, -5000]
        .iter()
        // Negative indices count from the end (PyTorch); out of range is a panic (tests/index_bounds.rs).
        .map(|&r| if r < 0 { r + n as i64 } else { r })
        .flat_map(|r| (0..3).map(move |c| (r * 3 + c) as f32))
        .collect();
    assert_eq!(got.to_vec::<f32>().unwrap(), want);
}
