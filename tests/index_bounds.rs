//! Out-of-range indices are a panic naming the op, the allowed range and the indices found (as
//! PyTorch raises), not a silent 0: gathers, tensor indexing, scatters, class-index losses and
//! `Embedding` check their indices in the realize that computes them, and TinyJit replays check
//! them on every call.

use ferrograd::nn::Embedding;
use ferrograd::tensor::Idx;
use ferrograd::{Tensor, TinyJit};

fn panics_with(f: impl FnOnce() + std::panic::UnwindSafe, text: &str) {
    let err = std::panic::catch_unwind(f).expect_err("out-of-range indices must panic");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains(text) && msg.contains("out of range"), "message: {msg}");
}

fn x() -> Tensor {
    Tensor::from_vec((0..12).map(|i| i as f32).collect::<Vec<_>>(), [3, 4])
}

#[test]
fn gather_checks_its_indices() {
    let ok = x().gather(1, &Tensor::from_vec(vec![3i32, 0, 1, 2, 0, 3], [3, 2]));
    assert_eq!(ok.to_vec::<f32>().unwrap(), vec![3.0, 0.0, 5.0, 6.0, 8.0, 11.0]);
    panics_with(|| drop(x().gather(1, &Tensor::from_vec(vec![4i32, 0], [1, 2])).to_vec::<f32>()), "gather");
    panics_with(|| drop(x().gather(0, &Tensor::from_vec(vec![-1i32], [1, 1])).to_vec::<f32>()), "from -1 to -1");
}

#[test]
fn tensor_indexing_checks_its_indices() {
    let ok = x().index(&[Idx::T(Tensor::from_vec(vec![-3i64, 2], [2]))]);
    assert_eq!(ok.to_vec::<f32>().unwrap(), (0..4).chain(8..12).map(|i| i as f32).collect::<Vec<_>>());
    panics_with(|| drop(x().index(&[Idx::T(Tensor::from_vec(vec![3i64], [1]))]).to_vec::<f32>()), "[-3, 3)");
    panics_with(|| drop(x().index(&[Idx::T(Tensor::from_vec(vec![-4i64], [1]))]).to_vec::<f32>()), "index");
}

#[test]
fn scatter_checks_its_indices() {
    let src = Tensor::ones([1, 2]);
    panics_with(|| drop(x().scatter(1, &Tensor::from_vec(vec![1i64, 9], [1, 2]), &src).to_vec::<f32>()), "scatter");
}

#[test]
fn class_index_losses_check_their_targets() {
    let logits = Tensor::zeros([2, 5]);
    let ok = logits.cross_entropy(&Tensor::from_vec(vec![4i64, 0], [2]));
    assert!((ok.item::<f32>().unwrap() - 5f32.ln()).abs() < 1e-6);
    panics_with(|| drop(logits.cross_entropy(&Tensor::from_vec(vec![5i64, 0], [2])).item::<f32>()), "cross_entropy");
    // The ignored index may be anything.
    let opts = ferrograd::tensor::CrossEntropyOpts { ignore_index: 7, ..Default::default() };
    let ignored = logits.cross_entropy_with(&Tensor::from_vec(vec![7i64, 1], [2]), &opts);
    assert!((ignored.item::<f32>().unwrap() - 5f32.ln()).abs() < 1e-6);
}

#[test]
fn embedding_checks_its_indices() {
    let e = Embedding::new(10, 3);
    assert_eq!(e.forward(&Tensor::from_vec(vec![9i32, 0], [2])).shape(), vec![2, 3]);
    panics_with(|| drop(e.forward(&Tensor::from_vec(vec![10i32], [1])).to_vec::<f32>()), "gather");
}

#[test]
fn tinyjit_replays_check_indices_every_call() {
    let table = x().realize().unwrap();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| vec![table.index(&[Idx::T(xs[0].clone())])]);
    for k in 0..5 {
        let idx = Tensor::from_vec(vec![(k % 3) as i64], [1]);
        let got = jit.call(&[&idx]).unwrap()[0].to_vec::<f32>().unwrap();
        assert_eq!(got, (0..4).map(|c| (4 * (k % 3) + c) as f32).collect::<Vec<_>>(), "call {k}");
    }
    let mut jit = std::panic::AssertUnwindSafe(jit);
    panics_with(move || drop(jit.call(&[&Tensor::from_vec(vec![7i64], [1])])), "index");
}
