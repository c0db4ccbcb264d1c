//! Bad arguments are refused where they are given, naming the op and the argument (issue: "a
//! clear error for every bad input still accepted silently"): device names with an instance
//! number for devices that have one, negative random shapes, an inverted uniform range, a
//! negative std, zero-sized pooling windows and steps; and values checked when realized:
//! multinomial weights, binary cross-entropy probabilities.

mod common;
use common::panic_message;
use ferrograd::tensor::PoolOpts;
use ferrograd::{Device, Tensor};

#[test]
fn single_instance_devices_refuse_an_instance_number() {
    for name in ["INTERP:2", "interp:x", "NULL:3"] {
        let err = Device::new(name).expect_err(name).to_string();
        let kind = name.split(':').next().unwrap().to_uppercase();
        assert!(err.contains(&name.to_uppercase()) && err.contains(&format!("one {kind} device")), "{name}: {err}");
    }
    // CPU devices are numbered (`CPU:N`, each with its own worker threads); N must be a number.
    let err = Device::new("CPU:xyz").expect_err("CPU:xyz").to_string();
    assert!(err.contains("CPU:XYZ") && err.contains("`CPU:N`"), "{err}");
    for name in ["CPU", "cpu", "CPU:0", "CPU:1", "INTERP:0"] {
        Device::new(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn random_shapes_with_a_negative_dimension_panic_naming_the_op() {
    for (op, msg) in [
        ("rand", panic_message(|| drop(Tensor::rand(vec![-1isize, 3])))),
        ("randn", panic_message(|| drop(Tensor::randn(vec![2isize, -3])))),
        ("randint", panic_message(|| drop(Tensor::randint(vec![-2isize], 0, 5)))),
    ] {
        assert!(msg.starts_with(&format!("{op}:")) && msg.contains("negative dimension"), "{op}: {msg}");
    }
}

#[test]
fn uniform_and_normal_refuse_impossible_parameters() {
    let msg = panic_message(|| drop(Tensor::uniform([3], 2.0, 1.0)));
    assert!(msg.contains("uniform") && msg.contains("low (2)") && msg.contains("high (1)"), "{msg}");
    let msg = panic_message(|| drop(Tensor::normal([3], 0.0, -1.0)));
    assert!(msg.contains("normal") && msg.contains("std") && msg.contains("-1"), "{msg}");
    // The edges are allowed: an empty range and a zero std give constants.
    assert_eq!(Tensor::uniform([2], 1.5, 1.5).to_vec::<f32>().unwrap(), vec![1.5, 1.5]);
    assert_eq!(Tensor::normal([2], -2.0, 0.0).to_vec::<f32>().unwrap(), vec![-2.0, -2.0]);
}

#[test]
fn pooling_windows_and_steps_must_be_positive() {
    let x = Tensor::ones([1, 1, 4, 4]);
    let msg = panic_message(|| drop(x.max_pool2d(0, &PoolOpts::default())));
    assert!(msg.contains("max_pool2d") && msg.contains("kernel must be positive"), "{msg}");
    let msg = panic_message(|| drop(x.max_pool2d(2, &PoolOpts::default().stride([0, 1]))));
    assert!(msg.contains("max_pool") && msg.contains("stride must be positive"), "{msg}");
    let msg = panic_message(|| drop(x.avg_pool2d([2, 0], &PoolOpts::default())));
    assert!(msg.contains("avg_pool2d") && msg.contains("kernel must be positive"), "{msg}");
}

#[test]
fn backward_from_an_integer_tensor_panics() {
    let x = Tensor::from_vec(vec![1i32, 2, 3], [3]);
    let msg = panic_message(|| x.sum().backward());
    assert!(msg.starts_with("backward:") && msg.contains("float") && msg.contains("int"), "{msg}");
}

#[test]
fn gather_with_a_float_index_panics() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3]);
    let index = Tensor::from_vec(vec![0.0f32, 2.0], [2]);
    let msg = panic_message(|| drop(x.gather(0, &index)));
    assert!(msg.starts_with("gather:") && msg.contains("integer") && msg.contains("float"), "{msg}");
}

#[test]
fn one_hot_checks_its_classes_like_gather_checks_indices() {
    let ok = Tensor::from_vec(vec![0i32, 3, 1], [3]).one_hot(4);
    assert_eq!(ok.to_vec::<i64>().unwrap(), vec![1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
    for bad in [vec![0i32, 4, 1], vec![-1, 0, 1]] {
        let t = Tensor::from_vec(bad.clone(), [3]).one_hot(4);
        let msg = panic_message(std::panic::AssertUnwindSafe(|| drop(t.to_vec::<i64>())));
        assert!(msg.contains("one_hot: 4 classes") && msg.contains("out of range"), "{bad:?}: {msg}");
    }
}

#[test]
fn interpolate_needs_a_size_for_every_spatial_axis_and_no_empty_axis() {
    use ferrograd::tensor::InterpMode;
    let x = Tensor::ones([1, 2, 4, 4]);
    let msg = panic_message(|| drop(x.interpolate(&[8], InterpMode::Linear, false)));
    assert!(msg.starts_with("interpolate:") && msg.contains("1 values for the 2 spatial axes"), "{msg}");
    let msg = panic_message(|| drop(x.interpolate(&[8, 8, 8], InterpMode::Nearest, false)));
    assert!(msg.contains("3 values for the 2 spatial axes"), "{msg}");
    let empty = Tensor::ones([1, 2, 0, 4]);
    let msg = panic_message(|| drop(empty.interpolate(&[3, 4], InterpMode::Nearest, false)));
    assert!(msg.contains("empty spatial axis"), "{msg}");
    assert_eq!(x.interpolate(&[2, 2], InterpMode::Nearest, false).shape(), vec![1, 2, 2, 2]);
}

#[test]
fn multinomial_refuses_negative_nan_and_all_zero_weights() {
    let bad: [(&str, Vec<f32>, &str); 4] = [
        ("negative", vec![0.5, -0.1, 0.6], "finite and >= 0"),
        ("NaN", vec![0.5, f32::NAN, 0.6], "finite and >= 0"),
        ("inf", vec![0.5, f32::INFINITY, 0.6], "finite and >= 0"),
        ("all zero", vec![0.0, 0.0, 0.0], "positive weight"),
    ];
    for (name, w, want) in bad {
        let w = Tensor::from_vec(w, [3]);
        let msg = panic_message(move || drop(w.multinomial(2, true).to_vec::<i64>()));
        assert!(msg.starts_with("multinomial:") && msg.contains(want), "{name}: {msg}");
    }
    // Without replacement, every sample needs a positive weight of its own.
    let w = Tensor::from_vec(vec![0.3f32, 0.0, 0.7, 0.2], [2, 2]);
    let msg = panic_message(move || drop(w.multinomial(2, false).to_vec::<i64>()));
    assert!(msg.contains("needs 2 positive weight(s)") && msg.contains("1 do not"), "{msg}");
    // A good draw still works, and zero weights are never drawn.
    let w = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 1.0], [4]);
    let draws = w.multinomial(50, true).to_vec::<i64>().unwrap();
    assert!(draws.iter().all(|&d| d == 1 || d == 3), "{draws:?}");
}

#[test]
fn binary_crossentropy_refuses_probabilities_outside_0_1() {
    use ferrograd::tensor::Reduction;
    let y = Tensor::from_vec(vec![1.0f32, 0.0, 1.0], [3]);
    for p in [vec![0.5f32, 1.5, 0.2], vec![0.5, -0.01, 0.2], vec![0.5, f32::NAN, 0.2]] {
        let (p, y) = (Tensor::from_vec(p.clone(), [3]), y.clone());
        let msg = panic_message(move || drop(p.binary_crossentropy(&y, Reduction::Mean).item::<f32>()));
        assert!(msg.starts_with("binary_crossentropy:") && msg.contains("[0, 1]"), "{msg}");
    }
    // The ends of the range are fine (log(0) is clamped to -100, as PyTorch).
    let p = Tensor::from_vec(vec![1.0f32, 0.0, 1.0], [3]);
    let loss = p.binary_crossentropy(&y, Reduction::Mean).item::<f32>().unwrap();
    assert_eq!(loss, 0.0);
}
