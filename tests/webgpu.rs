//! The WebGPU device (`--features webgpu`): what is particular to WGSL and wgpu, against plain
//! Rust — 8/16-bit and bool elements packed into 32-bit words and written by neighbouring work
//! items at once, more work groups than one dispatch dimension holds, symbolic variables, clear
//! errors. The op suites run on it too (`DEV=WEBGPU`, `scripts/device_suite.py`). CI runs these
//! on Mesa's lavapipe; without an adapter every test prints why and passes.
#![cfg(feature = "webgpu")]

use ferrograd::runtime::get_device;
use ferrograd::tensor::with_default_device;
use ferrograd::{DType, Tensor, Variable};

/// Runs `f` with WEBGPU as the default device, or prints why there is none.
fn on_webgpu(f: impl FnOnce()) {
    match get_device("WEBGPU") {
        Ok(_) => with_default_device("WEBGPU", f),
        Err(e) => eprintln!("skipping: no WebGPU adapter ({e})"),
    }
}

#[test]
fn packed_bytes_written_by_neighbouring_items_are_all_kept() {
    on_webgpu(|| {
        // 4 u8 / 2 i16 / 4 bool elements share a word; each is stored by another work item.
        let n = 1003;
        let x: Vec<f32> = (0..n).map(|i| (i as f32) * 0.37 - 150.0).collect();
        let t = Tensor::from_vec(x.clone(), [n]);
        let u8s = (&t + 150.0).cast(DType::U8).to_vec::<u8>().unwrap();
        let i16s = (&t * 100.0).cast(DType::I16).to_vec::<i16>().unwrap();
        let bools = t.lt(0.0).to_vec::<bool>().unwrap();
        for i in 0..n {
            assert_eq!(u8s[i], (x[i] + 150.0) as u8, "u8 {i}");
            assert_eq!(i16s[i], (x[i] * 100.0) as i16, "i16 {i}");
            assert_eq!(bools[i], x[i] < 0.0, "bool {i}");
        }
        // Read back through a kernel: packed loads, sign extension of i8.
        let back = Tensor::from_vec((0..n).map(|i| (i % 256) as u8).collect::<Vec<u8>>(), [n]);
        let signed = back.bitcast(DType::I8).cast(DType::I32).to_vec::<i32>().unwrap();
        for (i, v) in signed.iter().enumerate() {
            assert_eq!(*v, (i % 256) as u8 as i8 as i32, "i8 {i}");
        }
    });
}

#[test]
fn more_work_groups_than_one_dispatch_dimension_holds() {
    on_webgpu(|| {
        // 2^24 + 5 elements: over 65,535 groups of 256, so groups are dispatched over x and y.
        let n = (1usize << 24) + 5;
        let out = (Tensor::arange(n).cast(DType::F32) * 2.0).to_vec::<f32>().unwrap();
        assert_eq!(out.len(), n);
        for i in [0, 1, 65_535 * 256 - 1, 65_535 * 256, n - 1] {
            assert_eq!(out[i], (i as f32) * 2.0, "element {i}");
        }
    });
}

#[test]
fn one_pipeline_serves_every_value_of_a_variable() {
    on_webgpu(|| {
        let (n, k, len) = (12usize, 5usize, 3usize);
        let data: Vec<f32> = (0..n * k).map(|i| (i as f32).sin()).collect();
        let x = Tensor::from_vec(data.clone(), [n, k]).realize().unwrap();
        let pos = Variable::new("pos", 0, (n - len) as i64);
        for p in [0usize, 4, 9] {
            let got = x.narrow(0, pos.bind(p as i64), len).sum_axis(0).to_vec::<f32>().unwrap();
            for j in 0..k {
                let want: f32 = (p..p + len).map(|r| data[r * k + j]).sum();
                assert!((got[j] - want).abs() < 1e-5, "pos {p} column {j}: {} vs {want}", got[j]);
            }
        }
    });
}

#[test]
fn wgsl_source_and_kernel_errors_name_the_kernel() {
    on_webgpu(|| {
        let dev = get_device("WEBGPU").unwrap();
        assert!(dev.renderer().target().has_local);
        // A buffer past the largest binding is an out-of-memory error, not a wgpu panic.
        let err = dev.alloc(1 << 40).err().expect("a 1 TiB buffer");
        assert!(err.to_string().contains("WEBGPU"), "{err}");
    });
}

/// On Vulkan the driver gets SPIR-V with every float operation marked exact; without it Mesa
/// folds `x - x` and `x * y - x * y` to 0 for inf and NaN, `x / x` to 1, and naga's `!=` is false
/// for NaN. Checked against Rust's f32 arithmetic on the special values, read from memory so
/// nothing folds earlier. lavapipe also folds a product with a literal zero (`x * 0.0`) and a
/// division by one to 0, exact or not: the renderer makes zero, infinite and NaN literals at run
/// time (`opaque_literal`), so those are checked too.
#[test]
fn float_arithmetic_is_exact_for_inf_nan_and_rounding() {
    on_webgpu(|| {
        let dev = get_device("WEBGPU").unwrap();
        let identity = dev.compiler_identity().unwrap_or_default();
        if identity.contains("Vulkan") {
            assert!(identity.contains("exact floats"), "a Vulkan adapter without exact floats: {identity}");
        }
        let xs = vec![f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 0.0, -0.0, 1.5, 1e30, -7.25];
        let n = xs.len();
        let x = Tensor::from_vec(xs.clone(), [n]);
        let big = Tensor::from_vec(vec![1e8f32; n], [n]);
        let zeros = Tensor::from_vec(vec![0.0f32; n], [n]);
        let same = |name: &str, got: Vec<f32>, want: &dyn Fn(f32) -> f32| {
            for (i, (g, &v)) in got.iter().zip(&xs).enumerate() {
                let w = want(v);
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{name} of {v} (element {i}): got {g}, want {w}"
                );
            }
        };
        same("x - x", x.sub(&x).to_vec().unwrap(), &|v| v - v);
        same("x * zeros", (&x * &zeros).to_vec().unwrap(), &|v| v * 0.0);
        same("x * x - x * x", (&x * &x).sub(&x * &x).to_vec().unwrap(), &|v| v * v - v * v);
        same("x / x", x.div(&x).to_vec().unwrap(), &|v| v / v);
        same("x * 0.0", (&x * 0.0).to_vec().unwrap(), &|v| v * 0.0);
        same("x * -0.0", (&x * -0.0).to_vec().unwrap(), &|v| v * -0.0);
        same("x / 0.0", x.div(0.0).to_vec().unwrap(), &|v| v / 0.0);
        same("x * inf", (&x * f64::INFINITY).to_vec().unwrap(), &|v| v * f32::INFINITY);
        same("(x + 1e8) - 1e8", (&x + &big).sub(&big).to_vec().unwrap(), &|v| (v + 1e8) - 1e8);
        let ne = x.ne(&x).to_vec::<bool>().unwrap();
        let eq = x.eq(&x).to_vec::<bool>().unwrap();
        for (i, &v) in xs.iter().enumerate() {
            assert_eq!(ne[i], v.is_nan(), "x != x of {v}");
            assert_eq!(eq[i], !v.is_nan(), "x == x of {v}");
        }
    });
}

/// i32 values widened to i64 (an int32 index tensor's bounds checks): lavapipe compared
/// `i64(x)` of an i32 `x` wrongly, so an int32 index read nothing; the renderer sign-extends
/// by hand. Against Rust's `as i64`.
#[test]
fn int32_values_widened_to_int64_compare_and_index_correctly() {
    on_webgpu(|| {
        let iv = vec![-3i32, -1, 0, 4, i32::MIN, i32::MAX];
        let i = Tensor::from_vec(iv.clone(), [iv.len()]);
        let wide = i.cast(DType::I64);
        assert_eq!(wide.to_vec::<i64>().unwrap(), iv.iter().map(|&v| v as i64).collect::<Vec<_>>());
        assert_eq!(wide.lt(5i64).to_vec::<bool>().unwrap(), iv.iter().map(|&v| (v as i64) < 5).collect::<Vec<_>>());
        let as_u64 = i.cast(DType::U64).to_vec::<u64>().unwrap();
        assert_eq!(as_u64, iv.iter().map(|&v| v as i64 as u64).collect::<Vec<_>>());
        let x: Vec<f32> = (0..10).map(|v| v as f32 * 1.5).collect();
        let t = Tensor::from_vec(x.clone(), [5, 2]);
        let idx = Tensor::from_vec(vec![1i32, -1, 4], [3]);
        let got = t.index(&[ferrograd::tensor::Idx::T(idx)]).to_vec::<f32>().unwrap();
        assert_eq!(got, vec![x[2], x[3], x[8], x[9], x[8], x[9]]);
    });
}

/// f64 `exp2`, `log2` and `sin` (SPIR-V has only 32-bit ones) are lowered to f64 arithmetic:
/// against Rust's f64 functions, within 4 ulp (sin: 4 ulp or 1e-16 absolute where it
/// crosses zero), specials included.
#[test]
fn f64_transcendentals_are_computed_in_double_precision() {
    on_webgpu(|| {
        let mut xs: Vec<f64> = (-400..=400).map(|k| k as f64 * 0.37 + (k as f64 * 0.001).sin()).collect();
        xs.extend([
            0.0,
            -0.0,
            1.0,
            0.5,
            1e-310,
            5e-324,
            1e300,
            -1e300,
            1023.9,
            1024.0,
            -1074.0,
            -1080.0,
            1e5,
            -123456.789,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            std::f64::consts::PI,
        ]);
        let n = xs.len();
        let x = Tensor::from_vec(xs.clone(), [n]);
        let ulps = |a: f64, b: f64| ((a.to_bits() as i64) - (b.to_bits() as i64)).unsigned_abs();
        let check = |name: &str, got: Vec<f64>, want: fn(f64) -> f64, abs: f64| {
            for (g, &v) in got.iter().zip(&xs) {
                let w = want(v);
                let ok = (g.is_nan() && w.is_nan()) || g == &w || ulps(*g, w) <= 4 || (g - w).abs() <= abs;
                assert!(ok, "{name}({v:e}): got {g:e}, want {w:e}");
            }
        };
        check("exp2", x.exp2().to_vec().unwrap(), f64::exp2, 0.0);
        check("log2", x.log2().to_vec().unwrap(), f64::log2, 0.0);
        // Where |x| < 1.6e6 (the documented range of the three-part reduction).
        let small: Vec<f64> = xs.iter().map(|&v| if v.abs() < 1.6e6 || !v.is_finite() { v } else { 1.0 }).collect();
        let got = Tensor::from_vec(small.clone(), [n]).sin().to_vec::<f64>().unwrap();
        for (g, &v) in got.iter().zip(&small) {
            let w = v.sin();
            let ok = (g.is_nan() && w.is_nan()) || ulps(*g, w) <= 4 || (g - w).abs() <= 1e-16;
            assert!(ok, "sin({v:e}): got {g:e}, want {w:e}");
        }
    });
}

/// f32 `log2` is ferrograd's own (`fg_log2`), not the driver's (lavapipe's is off by ~1e-8
/// absolute near 1): within 3 ulp of Rust's f32 `log2`, near 1, subnormals and specials included.
#[test]
fn f32_log2_is_accurate_near_one_and_everywhere() {
    on_webgpu(|| {
        let mut xs: Vec<f32> = (1..2000).map(|k| k as f32 * 0.013).collect();
        xs.extend((1..200).map(|k| 1.0 - k as f32 * 1e-7));
        xs.extend((1..200).map(|k| 1.0 + k as f32 * 1e-7));
        xs.extend([1e-40, 1e-45, f32::MIN_POSITIVE, 3e38, 0.0, -0.0, -1.0, f32::INFINITY, f32::NAN, 1.0, 2.0, 0.5]);
        let got = Tensor::from_vec(xs.clone(), [xs.len()]).log2().to_vec::<f32>().unwrap();
        for (g, &v) in got.iter().zip(&xs) {
            let w = v.log2();
            let ulps = ((g.to_bits() as i64) - (w.to_bits() as i64)).unsigned_abs();
            assert!(
                (g.is_nan() && w.is_nan()) || g == &w || ulps <= 3,
                "log2({v:e}): got {g:e}, want {w:e} ({ulps} ulp)"
            );
        }
    });
}
