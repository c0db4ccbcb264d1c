//! The QCOM device (`--features opencl`): the Adreno dialect on whatever OpenCL device there is
//! (PoCL in CI). Its own difference from `CL` is that f16 converts through OpenCL's `half`
//! built-ins, so every f16 value and a sweep of f32 values must convert exactly as the `half`
//! crate does (the interpreter's conversions). CI also runs op suites with `DEV=QCOM`. Without an
//! OpenCL driver every test prints why and passes.
#![cfg(feature = "opencl")]

use ferrograd::runtime::get_device;
use ferrograd::tensor::with_default_device;
use ferrograd::{DType, Tensor};
use half::f16;

fn qcom() -> bool {
    match get_device("QCOM") {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipping: no OpenCL device for QCOM ({e})");
            false
        }
    }
}

#[test]
fn every_f16_converts_to_f32_exactly() {
    if !qcom() {
        return;
    }
    let bits: Vec<u16> = (0..=u16::MAX).collect();
    let got = with_default_device("QCOM", || {
        Tensor::from_slice(&bits).bitcast(DType::F16).cast(DType::F32).to_vec::<f32>().unwrap()
    });
    for (&b, &g) in bits.iter().zip(&got) {
        let want = f16::from_bits(b).to_f32();
        assert!(g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()), "f16 {b:#06x}: {g:e}, want {want:e}");
    }
}

#[test]
fn f32_converts_to_f16_with_round_to_nearest_even() {
    if !qcom() {
        return;
    }
    // Every 2^13-th f32 bit pattern from 0 to inf, and the same negated, plus ties and the
    // edges of the subnormal and overflow ranges.
    let mut xs: Vec<f32> = (0..=0x7f80_0000u32).step_by(1 << 13).map(f32::from_bits).collect();
    xs.extend([65504.0f32, 65519.99, 65520.0, 6.1035156e-5, 5.9604645e-8, 2.9802322e-8, 2.9802326e-8, f32::NAN]);
    xs.extend((1..2048).map(|k| 1.0 + (2 * k - 1) as f32 / 2048.0 / 2.0));
    let neg: Vec<f32> = xs.iter().map(|x| -x).collect();
    xs.extend(neg);
    let got = with_default_device("QCOM", || {
        Tensor::from_slice(&xs).cast(DType::F16).bitcast(DType::U16).to_vec::<u16>().unwrap()
    });
    for (&x, &g) in xs.iter().zip(&got) {
        let want = f16::from_f32(x);
        let ok = g == want.to_bits() || (want.is_nan() && f16::from_bits(g).is_nan());
        assert!(ok, "{x:e} ({:#010x}) -> {g:#06x}, want {:#06x}", x.to_bits(), want.to_bits());
    }
}

#[test]
fn qcom_kernels_are_the_adreno_dialect() {
    if !qcom() {
        return;
    }
    let dev = get_device("QCOM").unwrap();
    let t = dev.renderer().target();
    assert!(t.has_local && t.local_max_total <= 1024, "{t:?}");
    let x = with_default_device("QCOM", || Tensor::from_slice(&[1.5f32, -2.25]).cast(DType::F16));
    let y = with_default_device("QCOM", || (&x * &x).cast(DType::F32).to_vec::<f32>().unwrap());
    assert_eq!(y, vec![2.25, 5.0625]);
}
