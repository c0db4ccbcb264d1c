//! TinyJit: capture on the second call, replay afterwards with new inputs.

use ferrograd::{Error, Tensor, TinyJit};
use std::cell::{Cell, RefCell};
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
    // The read fails, and even when the function ignores that, the capture is an error: the
    // value read would be frozen into every replay.
    let seen: Rc<RefCell<Vec<bool>>> = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| {
        let y = &xs[0] * 3.0;
        s.borrow_mut().push(y.to_vec::<f32>().is_err());
        vec![y]
    });
    jit.call(&[&input(1.0)]).unwrap();
    let err = jit.call(&[&input(1.0)]).unwrap_err();
    assert!(matches!(err, Error::Jit(_)) && err.to_string().contains("read tensor data"), "{err}");
    assert_eq!(*seen.borrow(), vec![false, true], "the first call may read, the capture may not");
    // Nothing was left capturing: reading works again outside.
    assert_eq!(input(1.0).to_vec::<f32>().unwrap().len(), 12);
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

// ---------------------------------------------------------------- outputs, nesting, panics

#[test]
fn an_output_that_is_an_input_is_the_current_input() {
    let mut jit = TinyJit::new(|xs: &[Tensor]| vec![xs[0].clone(), xs[1].reshape([4, 3]), &xs[0] + &xs[1]]);
    for k in [1.0f32, 2.0, 3.0, 4.0, 5.0] {
        let (a, b) = (input(k), input(k + 10.0));
        let out = jit.call(&[&a, &b]).unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), a.to_vec::<f32>().unwrap(), "identity output, k = {k}");
        assert_eq!(out[1].shape(), vec![4, 3]);
        assert_eq!(out[1].to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap(), "reshaped input, k = {k}");
        let sum: Vec<f32> =
            a.to_vec::<f32>().unwrap().iter().zip(b.to_vec::<f32>().unwrap()).map(|(x, y)| x + y).collect();
        assert_eq!(out[2].to_vec::<f32>().unwrap(), sum, "k = {k}");
    }
}

#[test]
fn results_of_earlier_calls_are_not_overwritten() {
    // tinygrad's replays reuse the output buffer, so r2 changes when r3 is computed.
    let mut jit = TinyJit::new(|xs: &[Tensor]| vec![xs[0].sum()]);
    let results: Vec<Tensor> = (1..=5).map(|k| jit.call(&[&input(k as f32)]).unwrap().remove(0)).collect();
    for (k, r) in results.iter().enumerate() {
        let want: f32 = input(k as f32 + 1.0).to_vec::<f32>().unwrap().iter().sum();
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![want], "result of call {}", k + 1);
    }
}

#[test]
fn a_jit_inside_a_jit_is_captured_by_the_outer_one() {
    let inner = Rc::new(RefCell::new(TinyJit::new(|xs: &[Tensor]| vec![&xs[0] + 1.0])));
    let i2 = inner.clone();
    let mut outer = TinyJit::new(move |xs: &[Tensor]| {
        let y = i2.borrow_mut().call(&[&xs[0]]).unwrap().remove(0);
        vec![&y * 3.0]
    });
    for k in 0..6 {
        let x = Tensor::from_slice(&[k as f32, 2.0 * k as f32]);
        let out = outer.call(&[&x]).unwrap();
        assert_eq!(
            out[0].to_vec::<f32>().unwrap(),
            vec![(k as f32 + 1.0) * 3.0, (2.0 * k as f32 + 1.0) * 3.0],
            "call {k}"
        );
    }
    assert_eq!(outer.captured_len(), Some(2), "the outer capture holds the inner kernel and its own");
}

#[test]
fn a_panic_while_capturing_leaves_nothing_behind() {
    let fail = Rc::new(Cell::new(false));
    let f = fail.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| {
        let y = &xs[0] * 2.0;
        y.realize().unwrap();
        assert!(!f.get(), "the function fails this time");
        vec![y]
    });
    jit.call(&[&input(1.0)]).unwrap();
    fail.set(true);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| jit.call(&[&input(2.0)])));
    assert!(caught.is_err(), "the panic reaches the caller");
    assert_eq!(input(1.0).to_vec::<f32>().unwrap().len(), 12, "reading works: no capture is left open");
    fail.set(false);
    for k in [3.0f32, 4.0, 5.0, 6.0] {
        let out = jit.call(&[&input(k)]).unwrap();
        let want: Vec<f32> = input(k).to_vec::<f32>().unwrap().iter().map(|v| v * 2.0).collect();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want, "k = {k}");
    }
    assert_eq!(jit.captured_len(), Some(1));
}

// ---------------------------------------------------------------- tinygrad's JIT footguns

#[test]
fn a_changing_rust_constant_is_an_error_not_a_frozen_value() {
    // tinygrad replays the capture-time constant (`x * mult` stays `x * 2`).
    let mult = Rc::new(Cell::new(1.0f64));
    let m = mult.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| vec![&xs[0] * m.get()]);
    let x = Tensor::from_slice(&[10.0f32]);
    mult.set(1.0);
    assert_eq!(jit.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![10.0]);
    mult.set(2.0);
    assert_eq!(jit.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![20.0]);
    mult.set(3.0);
    let err = jit.call(&[&x]).unwrap_err();
    assert!(err.to_string().contains("not a tensor input"), "{err}");
}

#[test]
fn a_branch_that_changes_is_an_error_not_a_frozen_branch() {
    let square = Rc::new(Cell::new(true));
    let s = square.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| vec![if s.get() { &xs[0] * &xs[0] } else { &xs[0] * 2.0 }]);
    let x = Tensor::from_slice(&[3.0f32]);
    jit.call(&[&x]).unwrap();
    square.set(false);
    assert_eq!(jit.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![6.0]);
    square.set(true);
    let err = jit.call(&[&x]).unwrap_err();
    assert!(err.to_string().contains("other kernels"), "{err}");
}

#[test]
fn a_stable_function_replays_after_the_check() {
    // Calls 1-3 run the function (its Rust side effects happen there), later ones replay.
    let calls = Rc::new(Cell::new(0));
    let c = calls.clone();
    let mut jit = TinyJit::new(move |xs: &[Tensor]| {
        c.set(c.get() + 1);
        vec![&xs[0] * 2.0]
    });
    for k in 0..6 {
        let x = Tensor::from_slice(&[k as f32]);
        assert_eq!(jit.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![2.0 * k as f32]);
    }
    assert_eq!(calls.get(), 3, "the function runs on calls 1, 2 and 3 only");
}

#[test]
fn a_closure_tensor_assigned_between_calls_is_read_current() {
    // tinygrad needs `.realize()` after the assign; here the pending assign runs before the replay.
    let x = Tensor::from_slice(&[0.0f32]).realize().unwrap();
    let x2 = x.clone();
    let mut jit = TinyJit::new(move |_: &[Tensor]| vec![&x2 * 2.0]);
    for i in 0..6 {
        x.assign(Tensor::from_slice(&[i as f32]));
        assert_eq!(jit.call(&[]).unwrap()[0].to_vec::<f32>().unwrap(), vec![2.0 * i as f32], "call {i}");
    }
}

#[test]
fn feeding_the_output_back_as_the_input_is_correct() {
    let mut jit = TinyJit::new(|xs: &[Tensor]| vec![(&xs[0] + 1.0) * 2.0]);
    let mut x = Tensor::from_slice(&[10.0f32]);
    let mut want = 10.0f32;
    for _ in 0..6 {
        x = jit.call(&[&x]).unwrap().remove(0);
        want = (want + 1.0) * 2.0;
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![want]);
    }
    // A new input after the chain.
    let y = jit.call(&[&Tensor::from_slice(&[100.0f32])]).unwrap().remove(0);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![202.0]);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![want], "the earlier result is unchanged");
}

#[test]
fn an_input_mutated_inside_the_function_advances_every_call() {
    let a = Tensor::from_slice(&[0.0f32]).realize().unwrap();
    let mut jit = TinyJit::new(|xs: &[Tensor]| {
        xs[0].assign(&xs[0] + 1.0);
        vec![xs[0].clone()]
    });
    for i in 1..=6 {
        let out = jit.call(&[&a]).unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![i as f32]);
    }
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![6.0]);
}

#[test]
fn the_same_tensor_as_two_inputs_is_an_error() {
    let mut jit = TinyJit::new(|xs: &[Tensor]| vec![&xs[0] + &xs[1]]);
    let x = input(1.0);
    jit.call(&[&x, &x]).unwrap();
    let err = jit.call(&[&x, &x]).unwrap_err();
    assert!(err.to_string().contains("two inputs"), "{err}");
}

#[test]
fn replays_run_the_captured_kernels_as_one_device_graph() {
    // Three kernels: every replay patches the graph with its own input and fresh outputs, so
    // each call's results are its own and stay put.
    let mut jit = TinyJit::new(|xs: &[Tensor]| {
        let a = (xs[0].relu() * 2.0).contiguous();
        let b = (&a + 1.0).contiguous();
        vec![b.sum_axis(0), a]
    });
    let ks = [0.5f32, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5];
    let outs: Vec<Vec<Tensor>> = ks.iter().map(|&k| jit.call(&[&input(k)]).unwrap()).collect();
    for (k, out) in ks.iter().zip(&outs) {
        assert_eq!(out[0].to_vec::<f32>().unwrap(), expected(*k), "sum at k = {k}");
        let a: Vec<f32> = (0..12).map(|i| (i as f32 * k - 3.0).max(0.0) * 2.0).collect();
        assert_eq!(out[1].to_vec::<f32>().unwrap(), a, "relu(x) * 2 at k = {k}");
    }
    assert_eq!(jit.captured_len(), Some(3));
    // Devices with graphs: the CPU's launch list, CUDA graphs (CUDA and NV).
    let dev = ferrograd::runtime::default_device_name().unwrap();
    if dev == "CPU" || dev.starts_with("CUDA") || dev.starts_with("NV") {
        assert_eq!(jit.replay_graphs(), Some(1), "the three kernels replay as one graph on {dev}");
    }
}
