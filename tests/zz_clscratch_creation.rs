//! Creating tensors: constants, host data, ranges, identity matrices, random numbers (statistics,
//! determinism under a seed, equality across devices, Threefry-2x32-20 reproduced independently)
//! and the Display output.

#[path = "/tmp/clsuite/common.rs"] mod common;

use common::*;
use ferrograd::tensor::with_default_device;
use ferrograd::{ConstValue, DType, Tensor};
use std::sync::Mutex;

/// The generator is global: tests that seed it and draw from it take turns.
static RNG_LOCK: Mutex<()> = Mutex::new(());

fn rng_lock() -> std::sync::MutexGuard<'static, ()> {
    RNG_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn f32s(t: &Tensor, ctx: &str) -> Vec<f32> {
    t.to_vec::<f32>().unwrap_or_else(|e| panic!("{ctx}: {e}"))
}

// ---------------------------------------------------------------- constants

#[test]
fn zeros_ones_full() {
    for_each_device(|dev| {
        let shapes: [&[usize]; 5] = [&[], &[1], &[2, 1, 3], &[0, 3], &[4, 5]];
        for s in shapes {
            let c = |w: &str| format!("{w} {s:?} on {dev}");
            check_exact(&Tensor::zeros(s.to_vec()), &Nd::full(s, 0.0), DType::F32, &c("zeros"));
            check_exact(&Tensor::ones(s.to_vec()), &Nd::full(s, 1.0), DType::F32, &c("ones"));
            check_exact(&Tensor::full(s.to_vec(), -2.5), &Nd::full(s, -2.5), DType::F32, &c("full"));
            assert_eq!(Tensor::zeros(s.to_vec()).device(), dev, "{}", c("device of zeros"));
        }
        // full rounds to float32.
        check_exact(&Tensor::full([2], 0.1), &Nd::full(&[2], 0.1f32 as f64), DType::F32, &format!("full 0.1 on {dev}"));
        let t = Tensor::full_dtype([2, 2], ConstValue::Int(-7), DType::I32);
        check_exact(&t, &Nd::full(&[2, 2], -7.0), DType::I32, &format!("full_dtype i32 on {dev}"));
        let t = Tensor::full_dtype([3], ConstValue::Int(300), DType::U8);
        check_exact(&t, &Nd::full(&[3], 44.0), DType::U8, &format!("full_dtype u8 wraps on {dev}"));
        let t = Tensor::full_dtype([3], ConstValue::Bool(true), DType::BOOL);
        check_exact(&t, &Nd::full(&[3], 1.0), DType::BOOL, &format!("full_dtype bool on {dev}"));
        let t = Tensor::full_dtype([1, 2], ConstValue::Float(-3.9), DType::I64);
        check_exact(&t, &Nd::full(&[1, 2], -3.0), DType::I64, &format!("full_dtype float -> i64 on {dev}"));
        // Constants take part in math like any tensor.
        let x = Tensor::full([2, 3], 2.0).mul(Tensor::ones([3])).add(Tensor::zeros([2, 1]));
        check_exact(&x, &Nd::full(&[2, 3], 2.0), DType::F32, &format!("constant math on {dev}"));
    });
}

#[test]
fn like_constructors_keep_shape_dtype_and_device() {
    for_each_device(|dev| {
        let cases = [DType::F32, DType::I32, DType::U8, DType::BOOL, DType::F64, DType::I64];
        for dt in cases {
            let src = tensor_of(&[1.0, 0.0, 3.0, 1.0, 5.0, 0.0], &[3, 2], dt).t();
            let c = |w: &str| format!("{w} of {dt:?} on {dev}");
            check_exact(&src.zeros_like(), &Nd::full(&[2, 3], 0.0), dt, &c("zeros_like"));
            check_exact(&src.ones_like(), &Nd::full(&[2, 3], 1.0), dt, &c("ones_like"));
            assert_eq!(src.ones_like().device(), dev, "{}", c("device of ones_like"));
        }
        let f = tensor_of(&[1.0, 2.0], &[2], DType::F32);
        check_exact(&f.full_like(2.75), &Nd::full(&[2], 2.75), DType::F32, &format!("full_like f32 on {dev}"));
        let i = tensor_of(&[1.0, 2.0], &[2], DType::I32);
        check_exact(&i.full_like(2.7), &Nd::full(&[2], 2.0), DType::I32, &format!("full_like i32 truncates on {dev}"));
        check_exact(&i.full_like(-2.7), &Nd::full(&[2], -2.0), DType::I32, &format!("full_like -2.7 on {dev}"));
        let s = Tensor::scalar(1.0f32);
        check_exact(&s.full_like(9.0), &Nd::scalar(9.0), DType::F32, &format!("full_like of 0-d on {dev}"));
        let e = tensor_of(&[], &[0, 2], DType::F32);
        check_exact(&e.ones_like(), &Nd::full(&[0, 2], 1.0), DType::F32, &format!("ones_like of empty on {dev}"));
    });
}

#[test]
fn scalar_tensors() {
    for_each_device(|dev| {
        let s = Tensor::scalar(3.5f32);
        assert_eq!((s.shape(), s.dtype(), s.ndim(), s.numel()), (vec![], DType::F32, 0, 1), "0-d f32 on {dev}");
        assert_eq!(s.item::<f32>().unwrap(), 3.5, "item on {dev}");
        assert_eq!(Tensor::scalar(-7i64).item::<i64>().unwrap(), -7, "i64 scalar on {dev}");
        assert_eq!(Tensor::scalar(200u8).item::<u8>().unwrap(), 200, "u8 scalar on {dev}");
        assert!(Tensor::scalar(true).item::<bool>().unwrap(), "bool scalar on {dev}");
        assert_eq!(Tensor::scalar(0.1f64).item::<f64>().unwrap(), 0.1, "f64 scalar keeps precision on {dev}");
        assert_eq!(
            Tensor::scalar(2.5f32).mul(Tensor::scalar(4.0f32)).item::<f32>().unwrap(),
            10.0,
            "0-d math on {dev}"
        );
        assert_eq!(
            Tensor::from_slice(&[4.25f32]).reshape([1, 1]).item::<f32>().unwrap(),
            4.25,
            "item of [1,1] on {dev}"
        );
    });
}

#[test]
fn from_vec_and_from_slice() {
    for_each_device(|dev| {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
        assert_eq!((t.shape(), t.dtype(), t.device()), (vec![2, 3], DType::F32, dev.to_string()), "from_vec on {dev}");
        assert_eq!(f32s(&t, dev), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "from_vec values on {dev}");
        let t = Tensor::from_vec(vec![1i32, -2, 3], vec![3usize, 1]);
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![1, -2, 3], "from_vec with Vec shape on {dev}");
        let t = Tensor::from_slice(&[7u16, 8, 9]);
        assert_eq!((t.shape(), t.dtype()), (vec![3], DType::U16), "from_slice on {dev}");
        let e = Tensor::from_slice::<f32>(&[]);
        assert_eq!((e.shape(), e.to_vec::<f32>().unwrap()), (vec![0], vec![]), "empty from_slice on {dev}");
        let z = Tensor::from_vec(vec![2.5f64], Vec::<usize>::new());
        assert_eq!((z.shape(), z.item::<f64>().unwrap()), (vec![], 2.5), "0-d from_vec on {dev}");
        // The data is copied: the source can be dropped.
        let v = vec![1.5f32; 4];
        let t = Tensor::from_slice(&v);
        drop(v);
        assert_eq!(f32s(&t.add(1.0), dev), vec![2.5; 4], "copied data on {dev}");
        let o = Tensor::from_slice_on(&[1.0f32, 2.0], [2, 1], "INTERP");
        assert_eq!((o.device(), o.shape()), ("INTERP".to_string(), vec![2, 1]), "from_slice_on on {dev}");
    });
}

#[test]
#[should_panic(expected = "from_slice: shape [2, 2] needs 4 elements, got 3")]
fn from_vec_with_wrong_count_panics() {
    for_each_device(|_| {
        let _ = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [2, 2]);
    });
}

#[test]
#[should_panic(expected = "full: negative dimension in shape [2, -1]")]
fn full_with_negative_dimension_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, -1]);
    });
}

// ---------------------------------------------------------------- ranges

#[test]
fn arange_counts_in_int32() {
    for_each_device(|dev| {
        for n in [0usize, 1, 5, 1000] {
            let want = Nd::new(&[n], (0..n).map(|i| i as f64).collect());
            check_exact(&Tensor::arange(n), &want, DType::I32, &format!("arange({n}) on {dev}"));
        }
        let a = Tensor::arange(6).reshape([2, 3]);
        check_exact(&a.sum_axis(1), &Nd::new(&[2], vec![3.0, 12.0]), DType::I32, &format!("arange rows on {dev}"));
        check_exact(&a.t().flip(0), &Nd::iota(&[2, 3]).transpose(0, 1).flip(&[0]), DType::I32, &format!("on {dev}"));
        check_f32(
            &Tensor::arange(4).mul(0.5),
            &Nd::new(&[4], vec![0.0, 0.5, 1.0, 1.5]),
            &format!("arange*0.5 on {dev}"),
        );
    });
}

#[test]
fn arange_f_matches_numpy() {
    let cases: [(f64, f64, f64); 7] = [
        (0.0, 1.0, 0.25),
        (5.0, 1.0, -1.5),
        (0.0, 0.0, 1.0),
        (-1.0, 1.0, 0.3),
        (2.0, 1.0, 1.0),
        (0.0, 10.0, 1.0),
        (1.5, 2.0, 1.0),
    ];
    for_each_device(|dev| {
        for (start, stop, step) in cases {
            let n = ((stop - start) / step).ceil().max(0.0) as usize;
            let want = Nd::new(&[n], (0..n).map(|i| start + i as f64 * step).collect());
            check_f32(
                &Tensor::arange_f(start, stop, step),
                &want,
                &format!("arange_f({start}, {stop}, {step}) on {dev}"),
            );
        }
    });
}

#[test]
#[should_panic(expected = "arange: step must not be zero")]
fn arange_f_with_zero_step_panics() {
    for_each_device(|_| {
        let _ = Tensor::arange_f(0.0, 1.0, 0.0);
    });
}

#[test]
fn linspace_includes_both_ends() {
    let cases: [(f64, f64, usize); 6] =
        [(0.0, 1.0, 5), (-1.0, 1.0, 3), (2.0, 2.0, 1), (1.0, 0.0, 4), (0.0, 1.0, 2), (-3.0, 7.0, 11)];
    for_each_device(|dev| {
        for (start, end, steps) in cases {
            let want: Vec<f64> = (0..steps)
                .map(|i| if steps == 1 { start } else { start + (end - start) * i as f64 / (steps - 1) as f64 })
                .collect();
            let t = Tensor::linspace(start, end, steps);
            check_f32(&t, &Nd::new(&[steps], want), &format!("linspace({start}, {end}, {steps}) on {dev}"));
        }
    });
}

#[test]
fn eye_is_the_identity() {
    for_each_device(|dev| {
        for n in [0usize, 1, 3, 6] {
            let want = Nd::from_fn(&[n, n], |i| b2f(i[0] == i[1]));
            check_exact(&Tensor::eye(n), &want, DType::F32, &format!("eye({n}) on {dev}"));
        }
        check_f32(&Tensor::eye(4).sum(), &Nd::scalar(4.0), &format!("trace of eye on {dev}"));
        // x * eye keeps the diagonal.
        let x = Nd::iota(&[3, 3]);
        let want = x.map(|v| if (v as usize).is_multiple_of(4) { v } else { 0.0 });
        check_f32(&x.f32().mul(Tensor::eye(3)), &want, &format!("x * eye on {dev}"));
    });
}

// ---------------------------------------------------------------- random

/// Threefry-2x32 with 20 rounds, written from the Random123 specification.
fn threefry2x32_20(ctr: [u32; 2], key: [u32; 2]) -> [u32; 2] {
    const ROT: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD1_1BDA];
    let (mut x0, mut x1) = (ctr[0].wrapping_add(ks[0]), ctr[1].wrapping_add(ks[1]));
    for r in 0..20 {
        x0 = x0.wrapping_add(x1);
        x1 = x1.rotate_left(ROT[r % 8]) ^ x0;
        if r % 4 == 3 {
            let s = r / 4 + 1;
            x0 = x0.wrapping_add(ks[s % 3]);
            x1 = x1.wrapping_add(ks[(s + 1) % 3]).wrapping_add(s as u32);
        }
    }
    [x0, x1]
}

#[test]
fn threefry_reference_matches_random123_known_answers() {
    // Random123 kat_vectors (threefry2x32, 20 rounds): counter, key -> output. This checks the
    // test's own reference, which the next test holds `rand` to.
    assert_eq!(threefry2x32_20([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
    assert_eq!(threefry2x32_20([u32::MAX; 2], [u32::MAX; 2]), [0x1cb9_96fc, 0xbb00_2be7]);
    assert_eq!(threefry2x32_20([0x243f_6a88, 0x85a3_08d3], [0x1319_8a2e, 0x0370_7344]), [0xc492_3a9c, 0x483d_f7a0]);
}

#[test]
fn rand_reproduces_threefry_bits() {
    // The first `rand` after `manual_seed(s)` on a device draws element i from Threefry-2x32-20
    // with counter (i, 1) (1 = the device's first call) and key (s low, s high), keeping the top
    // 23 bits of the first word as a mantissa in [1, 2).
    let _g = rng_lock();
    for_each_device(|dev| {
        for seed in [0u64, 1337, 0xdead_beef_0000_0001] {
            Tensor::manual_seed(seed);
            let got = f32s(&Tensor::rand([4, 8]), dev);
            let want: Vec<f32> = (0..32u32)
                .map(|i| {
                    let w = threefry2x32_20([i, 1], [seed as u32, (seed >> 32) as u32])[0];
                    f32::from_bits((w >> 9) | 0x3f80_0000) - 1.0
                })
                .collect();
            assert_eq!(got, want, "rand bits for seed {seed:#x} on {dev}");
        }
    });
}

#[test]
fn rand_is_uniform_in_unit_interval() {
    let _g = rng_lock();
    for_each_device(|dev| {
        Tensor::manual_seed(7);
        let t = Tensor::rand([100, 1000]);
        assert_eq!((t.shape(), t.dtype()), (vec![100, 1000], DType::F32), "rand shape on {dev}");
        let v: Vec<f64> = f32s(&t, dev).into_iter().map(f64::from).collect();
        assert!(v.iter().all(|&x| (0.0..1.0).contains(&x)), "rand values outside [0, 1) on {dev}");
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        // Standard errors for 100k samples: mean ~9e-4, variance ~2.4e-4; bounds are ~5 sigma.
        assert!((mean - 0.5).abs() < 5e-3, "rand mean {mean} on {dev}");
        assert!((var - 1.0 / 12.0).abs() < 2e-3, "rand variance {var} on {dev}");
        let mut bins = [0usize; 10];
        for x in &v {
            bins[(x * 10.0) as usize] += 1;
        }
        assert!(bins.iter().all(|&b| b.abs_diff(10_000) < 600), "rand histogram {bins:?} on {dev}");
        // Neighbouring draws are uncorrelated (lag-1 autocorrelation ~ N(0, 1/sqrt(n))).
        let lag: f64 = v.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum::<f64>() / (n - 1.0) / var;
        assert!(lag.abs() < 0.02, "rand lag-1 autocorrelation {lag} on {dev}");
        // The library's own mean agrees with the host's.
        check_f32(&t.mean(), &Nd::scalar(mean), &format!("rand mean by the library on {dev}"));
    });
}

#[test]
fn rand_is_deterministic_under_a_seed() {
    let _g = rng_lock();
    for_each_device(|dev| {
        Tensor::manual_seed(42);
        let a = f32s(&Tensor::rand([1000]), dev);
        let a2 = f32s(&Tensor::rand([1000]), dev);
        Tensor::manual_seed(42);
        let b = f32s(&Tensor::rand([1000]), dev);
        assert_eq!(a, b, "same seed, same numbers on {dev}");
        assert_ne!(a, a2, "successive draws differ on {dev}");
        Tensor::manual_seed(43);
        let c = f32s(&Tensor::rand([1000]), dev);
        assert_ne!(a, c, "different seeds differ on {dev}");
        Tensor::manual_seed(42 + (1 << 32));
        let d = f32s(&Tensor::rand([1000]), dev);
        assert_ne!(a, d, "the high 32 bits of the seed matter on {dev}");
        // Shapes: 0-d and empty.
        assert_eq!(Tensor::rand(Vec::<usize>::new()).shape(), Vec::<usize>::new(), "0-d rand on {dev}");
        assert_eq!(f32s(&Tensor::rand([0, 4]), dev), Vec::<f32>::new(), "empty rand on {dev}");
    });
}

#[test]
fn rand_gives_identical_numbers_on_every_device() {
    let _g = rng_lock();
    let draw = |dev: &str| {
        with_default_device(dev, || {
            Tensor::manual_seed(1234);
            let u = f32s(&Tensor::rand([3, 50]), dev);
            let n = f32s(&Tensor::randn([64]), dev);
            let w = f32s(&Tensor::uniform([10], -2.0, 3.0), dev);
            (u, n, w)
        })
    };
    let (cpu, interp) = (draw(DEVICES[0]), draw(DEVICES[1]));
    assert_eq!(cpu.0, interp.0, "rand differs between {} and {}", DEVICES[0], DEVICES[1]);
    assert_eq!(cpu.2, interp.2, "uniform differs between devices");
    // randn goes through log/sqrt/cos, whose last bit may differ between a C libm and Rust.
    let (a, b): (Vec<f64>, Vec<f64>) =
        (cpu.1.iter().map(|&x| x as f64).collect(), interp.1.iter().map(|&x| x as f64).collect());
    assert_close_slice(&a, &b, 1e-5, 1e-5, "randn on CPU vs INTERP");
}

#[test]
fn randn_is_standard_normal() {
    let _g = rng_lock();
    for_each_device(|dev| {
        Tensor::manual_seed(99);
        let t = Tensor::randn([100_000]);
        assert_eq!((t.shape(), t.dtype()), (vec![100_000], DType::F32), "randn shape on {dev}");
        let v: Vec<f64> = f32s(&t, dev).into_iter().map(f64::from).collect();
        assert!(v.iter().all(|x| x.is_finite()), "randn produced a non-finite value on {dev}");
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let std = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
        // Standard errors: mean ~3.2e-3, std ~2.2e-3, P(|x| < 1) ~1.5e-3.
        assert!(mean.abs() < 0.02, "randn mean {mean} on {dev}");
        assert!((std - 1.0).abs() < 0.015, "randn std {std} on {dev}");
        let within = v.iter().filter(|x| x.abs() < 1.0).count() as f64 / n;
        assert!((within - 0.682_689).abs() < 0.01, "randn P(|x| < 1) = {within} on {dev}");
        let tails = v.iter().filter(|x| x.abs() > 3.0).count();
        assert!((100..=450).contains(&tails), "randn |x| > 3 count {tails} (expected ~270) on {dev}");
    });
}

#[test]
fn uniform_respects_bounds() {
    let _g = rng_lock();
    for_each_device(|dev| {
        Tensor::manual_seed(5);
        for (lo, hi) in [(-3.0, 5.0), (10.0, 10.5), (-1.0, 0.0)] {
            let v: Vec<f64> = f32s(&Tensor::uniform([200, 100], lo, hi), dev).into_iter().map(f64::from).collect();
            assert!(v.iter().all(|&x| x >= lo && x <= hi), "uniform({lo}, {hi}) out of bounds on {dev}");
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let tol = 0.02 * (hi - lo);
            assert!((mean - (lo + hi) / 2.0).abs() < tol, "uniform({lo}, {hi}) mean {mean} on {dev}");
            let (mn, mx) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            assert!(mn < lo + 0.01 * (hi - lo) && mx > hi - 0.01 * (hi - lo), "uniform({lo}, {hi}) range on {dev}");
        }
        let src = tensor_of(&[0.0; 6], &[2, 3], DType::F16);
        let r = src.rand_like();
        assert_eq!((r.shape(), r.dtype()), (vec![2, 3], DType::F16), "rand_like on {dev}");
        let n = src.randn_like();
        assert_eq!((n.shape(), n.dtype()), (vec![2, 3], DType::F16), "randn_like on {dev}");
        let rv = r.to_f64_vec().unwrap();
        assert!(rv.iter().all(|&x| (0.0..=1.0).contains(&x)), "rand_like values {rv:?} on {dev}");
    });
}

// ---------------------------------------------------------------- display

#[test]
fn display_shows_values_shape_dtype_device() {
    for_each_device(|dev| {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]);
        let s = format!("{t}");
        assert!(s.contains("[[1.0, 2.0], [3.0, 4.0]]"), "{s}");
        assert!(s.contains("shape=[2, 2]"), "{s}");
        assert!(s.contains("dtype=float32"), "{s}");
        assert!(s.contains(&format!("device={dev}")), "{s}");
        assert_eq!(format!("{:?}", t), format!("<Tensor shape=[2, 2] dtype=float32 device={dev}>"));
        let s = format!("{}", t.t());
        assert!(s.contains("[[1.0, 3.0], [2.0, 4.0]]"), "transposed: {s}");
        let s = format!("{}", Tensor::from_slice(&[1i32, -2]));
        assert!(s.contains("[1, -2]") && s.contains("dtype=int32"), "{s}");
        let s = format!("{}", Tensor::from_slice(&[true, false]));
        assert!(s.contains("[true, false]") && s.contains("dtype=bool"), "{s}");
        let s = format!("{}", Tensor::scalar(2.5f32));
        assert!(s.starts_with("Tensor(2.5,") && s.contains("shape=[]"), "{s}");
        let s = format!("{}", Tensor::from_slice(&[u64::MAX]));
        assert!(s.contains(&u64::MAX.to_string()), "{s}");
        let s = format!("{}", Tensor::zeros([2, 0]));
        assert!(s.contains("[[], []]") && s.contains("shape=[2, 0]"), "{s}");
    });
}
