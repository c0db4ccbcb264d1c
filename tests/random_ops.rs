//! Random ops built on `Tensor::rand`: randint, normal, multinomial, dropout (and the training
//! flag), kaiming/glorot initializers. Their values cannot be compared with PyTorch's, so the
//! tests check statistics, bounds, dtypes, determinism under `manual_seed` and that every device
//! draws the same numbers.

use ferrograd::tensor::{set_training, train, with_default_device};
use ferrograd::{DType, Tensor};
use std::sync::{Mutex, MutexGuard};

const DEVICES: [&str; 2] = ["CPU", "INTERP"];

/// The generator's state is global: tests that seed it run one at a time.
fn seeded(seed: u64) -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    Tensor::manual_seed(seed);
    g
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().expect("realize")
}

fn mean_std(v: &[f32]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

// ---------------------------------------------------------------- randint / normal

#[test]
fn randint_is_int32_within_bounds_and_uniform() {
    let _g = seeded(1);
    for dev in DEVICES {
        with_default_device(dev, || {
            let t = Tensor::randint([40, 50], -3, 7);
            assert_eq!((t.shape(), t.dtype()), (vec![40, 50], DType::I32), "randint shape/dtype on {dev}");
            let v = t.to_vec::<i32>().unwrap();
            assert!(v.iter().all(|&x| (-3..7).contains(&x)), "randint out of [-3, 7) on {dev}");
            for k in -3..7 {
                let frac = v.iter().filter(|&&x| x == k).count() as f64 / v.len() as f64;
                assert!((frac - 0.1).abs() < 0.025, "randint: value {k} has frequency {frac} on {dev}");
            }
        });
    }
}

#[test]
fn randint_covers_a_full_32_bit_range() {
    let _g = seeded(2);
    let v = Tensor::randint([1000], i32::MIN as i64, i32::MAX as i64 + 1).to_vec::<i32>().unwrap();
    let neg = v.iter().filter(|&&x| x < 0).count();
    assert!((400..600).contains(&neg), "randint over all i32: {neg} of 1000 negative");
}

#[test]
#[should_panic(expected = "randint")]
fn randint_rejects_an_empty_range() {
    Tensor::randint([3], 5, 5);
}

#[test]
fn normal_has_the_requested_mean_and_std() {
    let _g = seeded(3);
    let t = Tensor::normal([20000], 3.0, 0.5);
    assert_eq!(t.dtype(), DType::F32);
    let (m, s) = mean_std(&f32s(&t));
    assert!((m - 3.0).abs() < 0.02 && (s - 0.5).abs() < 0.02, "normal(3, 0.5): mean {m}, std {s}");
}

// ---------------------------------------------------------------- multinomial

#[test]
fn multinomial_with_replacement_follows_the_weights() {
    let _g = seeded(4);
    let w = Tensor::from_vec(vec![1.0f32, 0.0, 3.0, 6.0, 2.0, 2.0, 2.0, 2.0], [2, 4]);
    let s = w.multinomial(4000, true);
    assert_eq!((s.shape(), s.dtype()), (vec![2, 4000], DType::I64));
    let v = s.to_vec::<i64>().unwrap();
    let want = [[0.1, 0.0, 0.3, 0.6], [0.25, 0.25, 0.25, 0.25]];
    for (row, probs) in want.iter().enumerate() {
        let draws = &v[row * 4000..(row + 1) * 4000];
        for (k, &p) in probs.iter().enumerate() {
            let frac = draws.iter().filter(|&&x| x == k as i64).count() as f64 / 4000.0;
            assert!((frac - p).abs() < 0.03, "row {row} class {k}: frequency {frac}, want {p}");
        }
    }
    assert!(!v[..4000].contains(&1), "a zero-weight class was drawn");
}

#[test]
fn multinomial_of_a_vector_is_one_dimensional() {
    let _g = seeded(5);
    let s = Tensor::from_slice(&[0.0f32, 0.0, 5.0]).multinomial(10, true);
    assert_eq!(s.shape(), vec![10]);
    assert!(s.to_vec::<i64>().unwrap().iter().all(|&x| x == 2));
}

#[test]
fn multinomial_without_replacement_draws_distinct_classes() {
    let _g = seeded(6);
    let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 0.0, 5.0], [1, 6]).expand([300, 6]).contiguous();
    let v = w.multinomial(5, false).to_vec::<i64>().unwrap();
    let mut first = [0usize; 6];
    for row in v.chunks(5) {
        let mut seen = row.to_vec();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 5, "repeated class in a draw without replacement: {row:?}");
        assert!(!row.contains(&4), "zero-weight class drawn while others remain: {row:?}");
        first[row[0] as usize] += 1;
    }
    // The first draw follows the weights (1..5)/15, zero for class 4.
    for (k, w) in [1.0, 2.0, 3.0, 4.0, 0.0, 5.0].iter().enumerate() {
        let frac = first[k] as f64 / 300.0;
        assert!((frac - w / 15.0).abs() < 0.08, "first draw of class {k}: {frac}");
    }
}

#[test]
#[should_panic(expected = "without replacement")]
fn multinomial_without_replacement_needs_enough_classes() {
    Tensor::from_slice(&[1.0f32, 1.0]).multinomial(3, false);
}

// ---------------------------------------------------------------- dropout and training mode

#[test]
fn dropout_is_the_identity_outside_training() {
    let _g = seeded(7);
    set_training(false);
    assert!(!Tensor::training());
    let x = Tensor::ones([100]);
    assert!(x.dropout(0.5).same(&x), "dropout outside training must return its input");
    train(|| {
        assert!(Tensor::training());
        assert!(x.dropout(0.0).same(&x), "dropout(0) must return its input");
    });
    assert!(!Tensor::training(), "train() must restore the previous mode");
}

#[test]
fn dropout_zeroes_a_fraction_p_and_scales_the_rest() {
    let _g = seeded(8);
    let x = Tensor::ones([20000]).requires_grad();
    let y = train(|| x.dropout(0.3));
    y.sum().backward();
    let (v, g) = (f32s(&y), f32s(&x.grad().unwrap()));
    let zeros = v.iter().filter(|&&a| a == 0.0).count() as f64 / v.len() as f64;
    assert!((zeros - 0.3).abs() < 0.015, "dropout(0.3) zeroed {zeros}");
    let scale = 1.0 / 0.7f32;
    assert!(v.iter().all(|&a| a == 0.0 || (a - scale).abs() < 1e-6), "kept values must be scaled by 1/(1-p)");
    assert_eq!(v, g, "the gradient of dropout is its mask times 1/(1-p)");
    let all = train(|| Tensor::ones([10]).dropout(1.0));
    assert!(f32s(&all).iter().all(|&a| a == 0.0), "dropout(1) zeroes everything");
}

#[test]
fn training_mode_is_per_thread() {
    set_training(true);
    let other = std::thread::spawn(Tensor::training).join().unwrap();
    assert!(!other, "a new thread starts outside training mode");
    set_training(false);
}

// ---------------------------------------------------------------- initializers

#[test]
fn kaiming_uniform_uses_fan_in_and_the_leaky_relu_gain() {
    let _g = seeded(9);
    // fan_in = 16 * 3 * 3 = 144; gain = sqrt(2 / (1 + 0.2^2)); bound = sqrt(3) gain / 12.
    let bound = 3f64.sqrt() * (2.0 / 1.04f64).sqrt() / 12.0;
    let v = f32s(&Tensor::kaiming_uniform([32, 16, 3, 3], 0.2));
    assert!(v.iter().all(|&x| (x as f64).abs() <= bound), "kaiming_uniform beyond {bound}");
    let (m, s) = mean_std(&v);
    assert!(m.abs() < 0.01 && (s - bound / 3f64.sqrt()).abs() < 0.01, "kaiming_uniform mean {m} std {s}");
}

#[test]
fn kaiming_normal_has_std_gain_over_sqrt_fan_in() {
    let _g = seeded(10);
    let v = f32s(&Tensor::kaiming_normal([64, 100], 0.0));
    let (m, s) = mean_std(&v);
    let want = (2.0f64 / 100.0).sqrt();
    assert!(m.abs() < 0.01 && (s - want).abs() < 0.005, "kaiming_normal mean {m} std {s}, want std {want}");
}

#[test]
fn glorot_uniform_uses_fan_in_plus_fan_out() {
    let _g = seeded(11);
    // fan_in = 8 * 5 = 40, fan_out = 24 * 5 = 120.
    let bound = (6.0f64 / 160.0).sqrt();
    let v = f32s(&Tensor::glorot_uniform([24, 8, 5]));
    assert!(v.iter().all(|&x| (x as f64).abs() <= bound), "glorot_uniform beyond {bound}");
    let hi = v.iter().cloned().fold(f32::MIN, f32::max) as f64;
    assert!(hi > 0.9 * bound, "glorot_uniform never gets near its bound ({hi} of {bound})");
}

#[test]
#[should_panic(expected = "at least 2 dims")]
fn initializers_need_two_dims() {
    Tensor::kaiming_uniform([5], 0.0);
}

// ---------------------------------------------------------------- determinism

/// Every random op once, flattened to f64, under `seed` on `dev`.
fn draw_all(seed: u64, dev: &str) -> Vec<f64> {
    with_default_device(dev, || {
        Tensor::manual_seed(seed);
        let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 0.5], [1, 4]);
        let parts = [
            Tensor::randint([7], 0, 100).cast(DType::F64),
            Tensor::normal([5], 1.0, 2.0).cast(DType::F64),
            w.multinomial(6, true).cast(DType::F64).flatten(),
            w.multinomial(3, false).cast(DType::F64).flatten(),
            train(|| Tensor::ones([9]).dropout(0.5)).cast(DType::F64),
            Tensor::kaiming_uniform([3, 4], 0.01).cast(DType::F64).flatten(),
            Tensor::kaiming_normal([2, 3], 0.0).cast(DType::F64).flatten(),
            Tensor::glorot_uniform([3, 2]).cast(DType::F64).flatten(),
        ];
        parts.iter().flat_map(|t| t.to_vec::<f64>().unwrap()).collect()
    })
}

#[test]
fn random_ops_repeat_under_manual_seed_and_match_across_devices() {
    let _g = seeded(0);
    let a = draw_all(42, "CPU");
    assert_eq!(a, draw_all(42, "CPU"), "same seed, different numbers");
    assert_ne!(a, draw_all(43, "CPU"), "another seed gave the same numbers");
    assert_eq!(a, draw_all(42, "INTERP"), "CPU and INTERP differ for the same seed");
}

#[test]
fn attention_dropout_is_reproducible_and_keeps_the_expected_mass() {
    // With v = 1 every output is the sum of the kept, rescaled weights of its row: 1 in
    // expectation. PyTorch's functional form drops whenever dropout_p > 0, training or not.
    let run = |seed: u64| {
        let _g = seeded(seed);
        let q = Tensor::randn([4, 64, 16]);
        let k = Tensor::randn([4, 64, 16]);
        let v = Tensor::ones([4, 64, 1]);
        let opts = ferrograd::tensor::AttentionOpts::default().dropout(0.25);
        f32s(&q.scaled_dot_product_attention(&k, &v, &opts))
    };
    let (a, b, c) = (run(5), run(5), run(6));
    assert_eq!(a, b, "same seed, same dropout");
    assert_ne!(a, c, "another seed, another dropout");
    let (mean, _) = mean_std(&a);
    assert!((mean - 1.0).abs() < 0.05, "mean row mass {mean}");
    assert!(a.iter().any(|&x| (x - 1.0).abs() > 0.05), "nothing was dropped: {:?}", &a[..8]);
}

#[test]
fn randperm_is_a_reproducible_permutation_and_scaled_uniform_is_bounded() {
    let draw = |seed: u64| {
        let _g = seeded(seed);
        Tensor::randperm(50).to_vec::<i64>().unwrap()
    };
    let (a, b, c) = (draw(3), draw(3), draw(4));
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..50).collect::<Vec<i64>>(), "randperm(50) is not a permutation: {a:?}");
    assert_eq!(a, b, "same seed, same permutation");
    assert_ne!(a, c, "another seed, another permutation");
    assert_ne!(a, (0..50).collect::<Vec<i64>>(), "the identity is not random");
    let _g = seeded(5);
    let u = f32s(&Tensor::scaled_uniform([16, 25]));
    let bound = 1.0 / 20.0;
    assert!(u.iter().all(|&x| (-bound..bound).contains(&x)), "scaled_uniform outside ±1/sqrt(400)");
    assert!(u.iter().any(|&x| x < -bound / 2.0) && u.iter().any(|&x| x > bound / 2.0), "scaled_uniform too narrow");
}
