//! TinyJit: capture on the second call, replay afterwards with new inputs.

use ferrograd::{Error, Tensor, TinyJit};
use std::cell::RefCell;
use std::rc::Rc;

fn input(k: f32) -> Tensor {
    Tensor::from_vec((0..12).map(|i| i as f32 * k - 3.0).collect(), [3, 4])
}

fn expected(k: f32) -> Vec<f32> {
    (0..4).map(|j| (0..3).map(|i| ((i * 4 + j) as f32 * k - 3.0).max(0.0) * 2.0 + 1.0).sum::<f32>()).collect()
}

#[test]
fn replays_match_plain_runs() {
    let mut jit = TinyJit::new(|xs: &[Tensor]| vec![(xs[0].relu() * 2.0 + 1.0).sum_axis(0)]);
    for (call, k) in [0.5f32, 1.0, 1.5, 2.0, 2.5].into_iter().enumerate() {
        let out = jit.call(&[&input(k)]).unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), expected(k), "call {call}");
        if call >= 1 {
            assert_eq!(jit.captured_len(), Some(1), "one kernel captured");
        }
    }
}

#[test]
fn replays_skip_the_scheduler_and_reuse_state() {
    // A function with in-place state: the counter advances on every replay too.
    let counter = Tensor::from_slice(&[0.0f32]).realize().unwrap();
    let c = counter.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| {
        c.assign(&c + xs[0].sum());
        vec![c.clone()]
    });
    let one = Tensor::from_slice(&[1.0f32, 1.0]);
    for i in 1..=5 {
        let out = jit.call(&[&one]).unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![2.0 * i as f32]);
    }
    assert_eq!(counter.to_vec::<f32>().unwrap(), vec![10.0]);
}

#[test]
fn other_shapes_or_dtypes_are_an_error() {
    let mut jit = TinyJit::new(|xs: &[Tensor]| vec![&xs[0] + 1.0]);
    jit.call(&[&input(1.0)]).unwrap();
    jit.call(&[&input(2.0)]).unwrap();
    let err = jit.call(&[&Tensor::ones([4, 3])]).unwrap_err();
    assert!(matches!(err, Error::Jit(_)), "{err}");
    assert!(err.to_string().contains("captured with"), "{err}");
    let err = jit.call(&[&input(1.0).cast(ferrograd::DType::F64)]).unwrap_err();
    assert!(err.to_string().contains("float64"), "{err}");
}

#[test]
fn reading_data_inside_a_capture_is_an_error() {
    let seen: Rc<RefCell<Vec<bool>>> = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| {
        let y = &xs[0] * 3.0;
        s.borrow_mut().push(y.to_vec::<f32>().is_err());
        vec![y]
    });
    jit.call(&[&input(1.0)]).unwrap();
    jit.call(&[&input(1.0)]).unwrap();
    assert_eq!(*seen.borrow(), vec![false, true], "the first call may read, the capture may not");
}

#[test]
fn random_numbers_change_on_every_replay() {
    let mut jit = TinyJit::new(|xs: &[Tensor]| vec![Tensor::randint([8], 0, 1_000_000) + &xs[0]]);
    let zero = Tensor::from_vec(vec![0i32; 8], [8]);
    let draws: Vec<Vec<i32>> = (0..5).map(|_| jit.call(&[&zero]).unwrap()[0].to_vec::<i32>().unwrap()).collect();
    for i in 0..draws.len() {
        for j in 0..i {
            assert_ne!(draws[i], draws[j], "calls {j} and {i} drew the same numbers");
        }
    }
}
