//! Dtype semantics: integer wrapping, exact 64-bit integer arithmetic, half precision (f16 and
//! bf16) rounded after every op, casts (truncation toward zero, rounding, overflow), bool casts
//! and bitcasts. References are Rust scalar arithmetic (wrapping ops, `half`, `to_bits`).

mod common;

use common::*;
use ferrograd::{DType, Element, Tensor};
use half::{bf16, f16};

/// Reads `t` as `T`, checking shape and dtype first.
fn read<T: Element>(t: &Tensor, shape: &[usize], ctx: &str) -> Vec<T> {
    assert_eq!(t.shape(), shape, "{ctx}: shape");
    assert_eq!(t.dtype(), T::DTYPE, "{ctx}: dtype");
    t.to_vec::<T>().unwrap_or_else(|e| panic!("{ctx}: reading failed: {e}"))
}

// ---------------------------------------------------------------- integer wrapping

#[test]
fn small_unsigned_integers_wrap() {
    for_each_device(|dev| {
        let a = Tensor::from_slice(&[200u8, 5, 16, 255]);
        let b = Tensor::from_slice(&[100u8, 10, 17, 1]);
        let av = [200u8, 5, 16, 255];
        let bv = [100u8, 10, 17, 1];
        let w = |f: fn(u8, u8) -> u8| -> Vec<u8> { av.iter().zip(&bv).map(|(&x, &y)| f(x, y)).collect() };
        assert_eq!(read::<u8>(&a.add(&b), &[4], dev), w(u8::wrapping_add), "u8 add on {dev}");
        assert_eq!(read::<u8>(&a.add(&b), &[4], dev)[0], 44, "u8 200 + 100 on {dev}");
        assert_eq!(read::<u8>(&a.sub(&b), &[4], dev), w(u8::wrapping_sub), "u8 sub on {dev}");
        assert_eq!(read::<u8>(&a.mul(&b), &[4], dev), w(u8::wrapping_mul), "u8 mul on {dev}");
        let c = Tensor::from_slice(&[0u32, 1, u32::MAX]);
        let got = read::<u32>(&c.sub(1u32), &[3], dev);
        assert_eq!(got, vec![u32::MAX, 0, u32::MAX - 1], "u32 - 1 on {dev}");
        let d = Tensor::from_slice(&[65535u16, 300]);
        assert_eq!(read::<u16>(&d.mul(&d), &[2], dev), vec![1, 24464], "u16 square on {dev}");
    });
}

#[test]
fn signed_integers_wrap() {
    for_each_device(|dev| {
        let a = Tensor::from_slice(&[127i8, -128, 100, -1]);
        let av = [127i8, -128, 100, -1];
        let ones: Vec<i8> = av.iter().map(|x| x.wrapping_add(1)).collect();
        assert_eq!(read::<i8>(&a.add(1), &[4], dev), ones, "i8 + 1 on {dev}");
        let minus: Vec<i8> = av.iter().map(|x| x.wrapping_sub(1)).collect();
        assert_eq!(read::<i8>(&a.sub(1), &[4], dev), minus, "i8 - 1 on {dev}");
        let dbl: Vec<i8> = av.iter().map(|x| x.wrapping_mul(2)).collect();
        assert_eq!(read::<i8>(&a.mul(2), &[4], dev), dbl, "i8 * 2 on {dev}");
        assert_eq!(read::<i8>(&a.neg(), &[4], dev), vec![-127, -128, -100, 1], "i8 neg on {dev}");
        let s = Tensor::from_slice(&[i16::MAX, i16::MIN]);
        assert_eq!(read::<i16>(&s.add(1), &[2], dev), vec![i16::MIN, i16::MIN + 1], "i16 + 1 on {dev}");
        let i = Tensor::from_slice(&[i32::MAX, i32::MIN, 65536]);
        let want = vec![i32::MIN, i32::MIN + 1, 65537];
        assert_eq!(read::<i32>(&i.add(1), &[3], dev), want, "i32 + 1 on {dev}");
        assert_eq!(read::<i32>(&i.mul(&i), &[3], dev)[2], 0, "i32 65536^2 on {dev}");
    });
}

#[test]
fn i64_arithmetic_is_exact() {
    let av: [i64; 5] = [1 << 60, -(1 << 55) - 7, i64::MAX, 9_007_199_254_740_993, -3];
    let bv: [i64; 5] = [3, 1 << 40, 1, -9_007_199_254_740_992, i64::MIN];
    for_each_device(|dev| {
        let (a, b) = (Tensor::from_slice(&av), Tensor::from_slice(&bv));
        let w = |f: fn(i64, i64) -> i64| -> Vec<i64> { av.iter().zip(&bv).map(|(&x, &y)| f(x, y)).collect() };
        assert_eq!(read::<i64>(&a.add(&b), &[5], dev), w(i64::wrapping_add), "i64 add on {dev}");
        assert_eq!(read::<i64>(&a.sub(&b), &[5], dev), w(i64::wrapping_sub), "i64 sub on {dev}");
        assert_eq!(read::<i64>(&a.mul(&b), &[5], dev), w(i64::wrapping_mul), "i64 mul on {dev}");
        assert_eq!(read::<i64>(&a.maximum(&b), &[5], dev), w(i64::max), "i64 max on {dev}");
        let lt: Vec<bool> = av.iter().zip(&bv).map(|(x, y)| x < y).collect();
        assert_eq!(read::<bool>(&a.lt(&b), &[5], dev), lt, "i64 lt on {dev}");
        let eq: Vec<bool> = av.iter().map(|&x| x == 9_007_199_254_740_993).collect();
        assert_eq!(read::<bool>(&a.eq(9_007_199_254_740_993i64), &[5], dev), eq, "i64 eq beyond 2^53 on {dev}");
        let sum = av.iter().fold(0i64, |s, &x| s.wrapping_add(x));
        assert_eq!(a.sum().item::<i64>().unwrap(), sum, "i64 sum on {dev}");
    });
}

#[test]
fn u64_arithmetic_is_exact() {
    let av: [u64; 4] = [u64::MAX, 1 << 63, 12_345_678_901_234_567_890, 5];
    let bv: [u64; 4] = [2, (1 << 63) + 1, 7, 9];
    for_each_device(|dev| {
        let (a, b) = (Tensor::from_slice(&av), Tensor::from_slice(&bv));
        let w = |f: fn(u64, u64) -> u64| -> Vec<u64> { av.iter().zip(&bv).map(|(&x, &y)| f(x, y)).collect() };
        assert_eq!(read::<u64>(&a.add(&b), &[4], dev), w(u64::wrapping_add), "u64 add on {dev}");
        assert_eq!(read::<u64>(&a.sub(&b), &[4], dev), w(u64::wrapping_sub), "u64 sub on {dev}");
        assert_eq!(read::<u64>(&a.mul(&b), &[4], dev), w(u64::wrapping_mul), "u64 mul on {dev}");
        assert_eq!(read::<u64>(&a.maximum(&b), &[4], dev), w(u64::max), "u64 max (unsigned) on {dev}");
        let lt: Vec<bool> = av.iter().zip(&bv).map(|(x, y)| x < y).collect();
        assert_eq!(read::<bool>(&a.lt(&b), &[4], dev), lt, "u64 lt (unsigned) on {dev}");
        let shr: Vec<u64> = av.iter().map(|x| x >> 3).collect();
        assert_eq!(read::<u64>(&a.shr(3), &[4], dev), shr, "u64 shr is logical on {dev}");
        assert_eq!(a.max().item::<u64>().unwrap(), u64::MAX, "u64 max() on {dev}");
        let f = a.cast(DType::F64).to_vec::<f64>().unwrap();
        let want: Vec<f64> = av.iter().map(|&x| x as f64).collect();
        assert_eq!(f, want, "u64 -> f64 on {dev}");
    });
}

#[test]
fn f64_is_computed_in_double_precision() {
    for_each_device(|dev| {
        let x = Tensor::from_slice(&[1.0f64, 1e16, 0.1]);
        let got = read::<f64>(&x.add(1e-10).sub(&x), &[3], dev);
        let want: Vec<f64> = [1.0f64, 1e16, 0.1].iter().map(|&v| (v + 1e-10) - v).collect();
        assert_eq!(got, want, "f64 (x + 1e-10) - x on {dev}");
        let e = read::<f64>(&Tensor::from_slice(&[1.0f64, -2.5]).exp(), &[2], dev);
        assert_close_slice(&e, &[1f64.exp(), (-2.5f64).exp()], 1e-12, 1e-12, &format!("f64 exp on {dev}"));
        let s = read::<f64>(&Tensor::from_slice(&[2.0f64]).sqrt(), &[1], dev);
        assert_close_slice(&s, &[2f64.sqrt()], 0.0, 1e-15, &format!("f64 sqrt on {dev}"));
    });
}

// ---------------------------------------------------------------- half precision

fn h(v: &[f32]) -> Vec<f16> {
    v.iter().map(|&x| f16::from_f32(x)).collect()
}

#[test]
fn f16_round_trips_and_creation() {
    for_each_device(|dev| {
        let vals = h(&[0.0, -0.0, 1.0, -2.5, 65504.0, 6.1e-5, 5.96e-8, f32::INFINITY]);
        let t = Tensor::from_slice(&vals);
        assert_eq!(t.dtype(), DType::F16);
        let bits = |v: &[f16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&read::<f16>(&t, &[8], dev)), bits(&vals), "f16 round trip on {dev}");
        assert_eq!(bits(&read::<f16>(&t.flip(0).flip(0), &[8], dev)), bits(&vals), "f16 through a kernel on {dev}");
        let b: Vec<bf16> = [1.0f32, -3.0e38, 1.0e-38, 7.5].iter().map(|&x| bf16::from_f32(x)).collect();
        let bt = Tensor::from_vec(b.clone(), [2, 2]);
        assert_eq!(read::<bf16>(&bt.t().t(), &[2, 2], dev), b, "bf16 round trip on {dev}");
    });
}

#[test]
fn f16_arithmetic_rounds_after_each_op() {
    for_each_device(|dev| {
        // (2048 + 1) rounds to 2048 in f16, so (x + 1) - x is 0, not 1.
        let x = Tensor::from_slice(&h(&[2048.0, 1.0, 1000.0]));
        let got = read::<f16>(&x.add(1.0).sub(&x), &[3], dev);
        assert_eq!(got, h(&[0.0, 1.0, 1.0]), "f16 (x + 1) - x on {dev}");
        // Overflow to infinity in the intermediate stays infinite.
        let y = Tensor::from_slice(&h(&[60000.0]));
        let got = read::<f16>(&y.mul(2.0).div(4.0), &[1], dev);
        assert_eq!(got, h(&[f32::INFINITY]), "f16 (x * 2) / 4 overflows on {dev}");
        // Random operands: +, -, *, / and sqrt of f16 values computed in f32 and rounded once are
        // correctly rounded (f32 has more than 2 * 11 + 2 bits), so results must match exactly.
        let mut rng = Rng::new(16);
        let a: Vec<f16> = (0..64).map(|_| f16::from_f64(rng.uniform(-50.0, 50.0))).collect();
        let b: Vec<f16> = (0..64).map(|_| f16::from_f64(rng.uniform(0.5, 20.0))).collect();
        let (ta, tb) = (Tensor::from_vec(a.clone(), [8, 8]), Tensor::from_vec(b.clone(), [8, 8]));
        type Op = (&'static str, fn(&Tensor, &Tensor) -> Tensor, fn(f32, f32) -> f32);
        let ops: [Op; 5] = [
            ("add", |x, y| x.add(y), |x, y| x + y),
            ("sub", |x, y| x.sub(y), |x, y| x - y),
            ("mul", |x, y| x.mul(y), |x, y| x * y),
            ("div", |x, y| x.div(y), |x, y| x / y),
            ("sqrt(y) * x", |x, y| y.sqrt().mul(x), |x, y| f16::from_f32(y.sqrt()).to_f32() * x),
        ];
        for (name, f, r) in ops {
            let want: Vec<f16> = a.iter().zip(&b).map(|(x, y)| f16::from_f32(r(x.to_f32(), y.to_f32()))).collect();
            assert_eq!(read::<f16>(&f(&ta, &tb), &[8, 8], dev), want, "f16 {name} on {dev}");
        }
        // A chain: ((a * b) + a) * 0.1, rounded after every step.
        let want: Vec<f16> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| {
                let p = f16::from_f32(x.to_f32() * y.to_f32());
                let s = f16::from_f32(p.to_f32() + x.to_f32());
                f16::from_f32(s.to_f32() * f16::from_f32(0.1).to_f32())
            })
            .collect();
        assert_eq!(read::<f16>(&ta.mul(&tb).add(&ta).mul(0.1), &[8, 8], dev), want, "f16 chain on {dev}");
        // Transcendental ops within one f16 ulp (2^-10 relative).
        let e: Vec<f64> = read::<f16>(&tb.log(), &[8, 8], dev).iter().map(|v| v.to_f64()).collect();
        let want: Vec<f64> = b.iter().map(|v| v.to_f64().ln()).collect();
        assert_close_slice(&e, &want, 1e-3, 2e-3, &format!("f16 log on {dev}"));
    });
}

#[test]
fn bf16_arithmetic_rounds_after_each_op() {
    for_each_device(|dev| {
        // bf16 has 8 significant bits: 256 + 1 rounds to 256.
        let x = Tensor::from_slice(&[bf16::from_f32(256.0), bf16::from_f32(3.0)]);
        let got = read::<bf16>(&x.add(1.0).sub(&x), &[2], dev);
        assert_eq!(got, vec![bf16::from_f32(0.0), bf16::from_f32(1.0)], "bf16 (x + 1) - x on {dev}");
        let mut rng = Rng::new(17);
        let a: Vec<bf16> = (0..32).map(|_| bf16::from_f64(rng.uniform(-1e3, 1e3))).collect();
        let b: Vec<bf16> = (0..32).map(|_| bf16::from_f64(rng.uniform(0.01, 10.0))).collect();
        let (ta, tb) = (Tensor::from_slice(&a), Tensor::from_slice(&b));
        let w = |f: fn(f32, f32) -> f32| -> Vec<bf16> {
            a.iter().zip(&b).map(|(x, y)| bf16::from_f32(f(x.to_f32(), y.to_f32()))).collect()
        };
        assert_eq!(read::<bf16>(&ta.add(&tb), &[32], dev), w(|x, y| x + y), "bf16 add on {dev}");
        assert_eq!(read::<bf16>(&ta.mul(&tb), &[32], dev), w(|x, y| x * y), "bf16 mul on {dev}");
        assert_eq!(read::<bf16>(&ta.div(&tb), &[32], dev), w(|x, y| x / y), "bf16 div on {dev}");
        // f16 + bf16 promotes to f32 (exactly representable sums here).
        let hf = Tensor::from_slice(&h(&[1.5, -2.0]));
        let bfv = Tensor::from_slice(&[bf16::from_f32(0.25), bf16::from_f32(1024.0)]);
        assert_eq!(read::<f32>(&hf.add(&bfv), &[2], dev), vec![1.75, 1022.0], "f16 + bf16 on {dev}");
    });
}

/// Bits of a 16-bit float read as f32, with every NaN made the one quiet NaN (payloads are not
/// part of the contract).
fn canonical_f32_bits(x: f32) -> u32 {
    if x.is_nan() {
        0x7fc0_0000
    } else {
        x.to_bits()
    }
}

/// f32 inputs that probe every rounding decision of f32 -> 16-bit: each finite 16-bit value,
/// the midpoint to its successor (a tie), the f32 values either side of that midpoint, and
/// the overflow and NaN edges.
fn rounding_probes(to_f32: impl Fn(u16) -> f32, finite: impl Fn(u16) -> bool) -> Vec<f32> {
    let mut v = vec![f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::MAX, f32::MIN_POSITIVE, 1e-45];
    for b in 0..0x7fffu16 {
        if !finite(b) || !finite(b + 1) {
            continue;
        }
        let (lo, hi) = (to_f32(b), to_f32(b + 1));
        let mid = ((lo as f64 + hi as f64) / 2.0) as f32;
        for x in [lo, mid, f32::from_bits(mid.to_bits() - 1), f32::from_bits(mid.to_bits() + 1)] {
            v.extend([x, -x]);
        }
    }
    v
}

#[test]
fn sixteen_bit_float_conversions_are_exact_for_every_value() {
    let all_bits: Vec<u16> = (0..=u16::MAX).collect();
    let f16_probes = rounding_probes(|b| f16::from_bits(b).to_f32(), |b| f16::from_bits(b).is_finite());
    let bf16_probes = rounding_probes(|b| bf16::from_bits(b).to_f32(), |b| bf16::from_bits(b).is_finite());
    for_each_device(|dev| {
        let bits = Tensor::from_slice(&all_bits);
        for (dt, widen) in [
            (DType::F16, (|b| f16::from_bits(b).to_f32()) as fn(u16) -> f32),
            (DType::BF16, |b| bf16::from_bits(b).to_f32()),
        ] {
            let got = read::<f32>(&bits.bitcast(dt).cast(DType::F32), &[65536], dev);
            for (&b, g) in all_bits.iter().zip(got) {
                let want = widen(b);
                assert_eq!(canonical_f32_bits(g), canonical_f32_bits(want), "{dt:?} bits {b:#06x} -> f32 on {dev}");
            }
        }
        for (dt, probes, narrow) in [
            (DType::F16, &f16_probes, (|x| f16::from_f32(x).to_bits()) as fn(f32) -> u16),
            (DType::BF16, &bf16_probes, |x| bf16::from_f32(x).to_bits()),
        ] {
            let got = read::<u16>(&Tensor::from_slice(probes).cast(dt).bitcast(DType::U16), &[probes.len()], dev);
            for (&x, g) in probes.iter().zip(got) {
                let want = narrow(x);
                let nan =
                    |b: u16| if dt == DType::F16 { f16::from_bits(b).is_nan() } else { bf16::from_bits(b).is_nan() };
                if x.is_nan() {
                    assert!(nan(g), "f32 NaN -> {dt:?} gave {g:#06x} on {dev}");
                } else {
                    assert_eq!(g, want, "f32 {x:e} ({:#010x}) -> {dt:?} on {dev}", x.to_bits());
                }
            }
        }
    });
}

// ---------------------------------------------------------------- casts

#[test]
fn float_casts_round_to_nearest_even() {
    let vals: [f32; 9] = [1.0, 0.1, -3.3333, 65504.0, 65520.0, 70000.0, 1e-8, 2049.0, 2051.0];
    for_each_device(|dev| {
        let t = Tensor::from_slice(&vals);
        let want: Vec<f16> = vals.iter().map(|&v| f16::from_f32(v)).collect();
        assert_eq!(read::<f16>(&t.cast(DType::F16), &[9], dev), want, "f32 -> f16 on {dev}");
        let want_b: Vec<bf16> = vals.iter().map(|&v| bf16::from_f32(v)).collect();
        assert_eq!(read::<bf16>(&t.cast(DType::BF16), &[9], dev), want_b, "f32 -> bf16 on {dev}");
        let back: Vec<f32> = want.iter().map(|v| v.to_f32()).collect();
        assert_eq!(read::<f32>(&t.cast(DType::F16).cast(DType::F32), &[9], dev), back, "f16 -> f32 on {dev}");
        let back_b: Vec<f32> = want_b.iter().map(|v| v.to_f32()).collect();
        assert_eq!(read::<f32>(&t.cast(DType::BF16).cast(DType::F32), &[9], dev), back_b, "bf16 -> f32 on {dev}");
        let hb: Vec<bf16> = want.iter().map(|v| bf16::from_f32(v.to_f32())).collect();
        assert_eq!(read::<bf16>(&t.cast(DType::F16).cast(DType::BF16), &[9], dev), hb, "f16 -> bf16 on {dev}");
        let bh: Vec<f16> = want_b.iter().map(|v| f16::from_f32(v.to_f32())).collect();
        assert_eq!(read::<f16>(&t.cast(DType::BF16).cast(DType::F16), &[9], dev), bh, "bf16 -> f16 on {dev}");
        let d: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
        assert_eq!(read::<f64>(&t.cast(DType::F64), &[9], dev), d, "f32 -> f64 on {dev}");
    });
}

#[test]
fn float_to_int_truncates_toward_zero() {
    let vals: [f32; 8] = [-2.7, 2.7, -0.5, 0.5, -0.0, 100.99, -100.99, 126.5];
    for_each_device(|dev| {
        let t = Tensor::from_slice(&vals);
        let w32: Vec<i32> = vals.iter().map(|&v| v as i32).collect();
        assert_eq!(read::<i32>(&t.cast(DType::I32), &[8], dev), w32, "f32 -> i32 on {dev}");
        assert_eq!(read::<i32>(&t.cast(DType::I32), &[8], dev)[0], -2, "-2.7 -> -2 on {dev}");
        let w8: Vec<i8> = vals.iter().map(|&v| v as i8).collect();
        assert_eq!(read::<i8>(&t.cast(DType::I8), &[8], dev), w8, "f32 -> i8 on {dev}");
        let w64: Vec<i64> = vals.iter().map(|&v| v as i64).collect();
        assert_eq!(read::<i64>(&t.cast(DType::I64), &[8], dev), w64, "f32 -> i64 on {dev}");
        let u = Tensor::from_slice(&[3e9f32, 0.9, 255.5]);
        assert_eq!(read::<u32>(&u.cast(DType::U32), &[3], dev), vec![3_000_000_000, 0, 255], "f32 -> u32 on {dev}");
        let d = Tensor::from_slice(&[-1e15f64 - 0.5, 4.5e15 + 0.5]);
        let want = vec![-1_000_000_000_000_000i64, 4_500_000_000_000_000];
        assert_eq!(read::<i64>(&d.cast(DType::I64), &[2], dev), want, "f64 -> i64 on {dev}");
        let hv = h(&[-3.99, 1000.5, -0.99]);
        let wh: Vec<i16> = hv.iter().map(|v| v.to_f32() as i16).collect();
        assert_eq!(read::<i16>(&Tensor::from_slice(&hv).cast(DType::I16), &[3], dev), wh, "f16 -> i16 on {dev}");
    });
}

#[test]
fn int_to_half_rounds() {
    for_each_device(|dev| {
        let i = Tensor::from_slice(&[2049i32, 2051, -70000, 7]);
        let want: Vec<f16> = [2049.0f32, 2051.0, -70000.0, 7.0].iter().map(|&v| f16::from_f32(v)).collect();
        assert_eq!(read::<f16>(&i.cast(DType::F16), &[4], dev), want, "i32 -> f16 on {dev}");
        let wb: Vec<bf16> = [2049.0f32, 2051.0, -70000.0, 7.0].iter().map(|&v| bf16::from_f32(v)).collect();
        assert_eq!(read::<bf16>(&i.cast(DType::BF16), &[4], dev), wb, "i32 -> bf16 on {dev}");
        let big = Tensor::from_slice(&[16_777_217i32, -16_777_219]);
        let wf: Vec<f32> = [16_777_217i32, -16_777_219].iter().map(|&v| v as f32).collect();
        assert_eq!(read::<f32>(&big.cast(DType::F32), &[2], dev), wf, "i32 -> f32 rounding on {dev}");
    });
}

#[test]
fn bool_casts() {
    for_each_device(|dev| {
        let f = Tensor::from_slice(&[0.0f32, -0.0, 0.1, -7.0, f32::INFINITY]);
        let want = vec![false, false, true, true, true];
        assert_eq!(read::<bool>(&f.cast(DType::BOOL), &[5], dev), want, "f32 -> bool on {dev}");
        let i = Tensor::from_slice(&[0i32, 1, -1, 256]);
        assert_eq!(
            read::<bool>(&i.cast(DType::BOOL), &[4], dev),
            vec![false, true, true, true],
            "i32 -> bool on {dev}"
        );
        let u = Tensor::from_slice(&[0u8, 2]);
        assert_eq!(read::<bool>(&u.cast(DType::BOOL), &[2], dev), vec![false, true], "u8 -> bool on {dev}");
        let b = Tensor::from_slice(&[true, false, true]);
        assert_eq!(read::<f32>(&b.cast(DType::F32), &[3], dev), vec![1.0, 0.0, 1.0], "bool -> f32 on {dev}");
        assert_eq!(read::<u8>(&b.cast(DType::U8), &[3], dev), vec![1, 0, 1], "bool -> u8 on {dev}");
        assert_eq!(read::<i64>(&b.cast(DType::I64), &[3], dev), vec![1, 0, 1], "bool -> i64 on {dev}");
        assert_eq!(read::<f16>(&b.cast(DType::F16), &[3], dev), h(&[1.0, 0.0, 1.0]), "bool -> f16 on {dev}");
        let hb = Tensor::from_slice(&h(&[0.0, 0.5]));
        assert_eq!(read::<bool>(&hb.cast(DType::BOOL), &[2], dev), vec![false, true], "f16 -> bool on {dev}");
        // A comparison result used as numbers.
        let x = Tensor::from_slice(&[-1.0f32, 2.0, 3.0]);
        assert_eq!(read::<f32>(&x.gt(0.0).cast(DType::F32).mul(&x), &[3], dev), vec![0.0, 2.0, 3.0], "mask on {dev}");
    });
}

#[test]
fn every_dtype_round_trips_through_a_kernel() {
    fn rt<T: Element + PartialEq>(vals: &[T], dev: &str) {
        let t = Tensor::from_vec(vals.to_vec(), [2, vals.len() / 2]);
        let got = read::<T>(&t.t().contiguous().t(), &[2, vals.len() / 2], dev);
        assert_eq!(got, vals, "{:?} round trip on {dev}", T::DTYPE);
        let via =
            read::<T>(&t.pad(&[(0, 0), (1, 0)]).shrink(&[(0, 2), (1, vals.len() / 2 + 1)]), &[2, vals.len() / 2], dev);
        assert_eq!(via, vals, "{:?} pad+shrink on {dev}", T::DTYPE);
    }
    for_each_device(|dev| {
        rt(&[true, false, false, true], dev);
        rt(&[i8::MIN, -1, 0, i8::MAX], dev);
        rt(&[i16::MIN, -1, 0, i16::MAX], dev);
        rt(&[i32::MIN, -1, 0, i32::MAX], dev);
        rt(&[i64::MIN, -1, 0, i64::MAX], dev);
        rt(&[0u8, 1, 128, u8::MAX], dev);
        rt(&[0u16, 1, 40000, u16::MAX], dev);
        rt(&[0u32, 1, 1 << 31, u32::MAX], dev);
        rt(&[0u64, 1, 1 << 63, u64::MAX], dev);
        rt(&h(&[0.5, -1.0, 65504.0, 0.0]), dev);
        rt(&[bf16::from_f32(0.5), bf16::from_f32(-1e30), bf16::ONE, bf16::ZERO], dev);
        rt(&[0.5f32, -1e30, f32::MAX, f32::MIN_POSITIVE], dev);
        rt(&[0.5f64, -1e300, f64::MAX, f64::MIN_POSITIVE], dev);
    });
}

// ---------------------------------------------------------------- bitcast

#[test]
fn bitcast_matches_to_bits() {
    let vals: [f32; 6] = [1.0, -0.0, 0.1, -2.5e-30, f32::INFINITY, 3.4e38];
    for_each_device(|dev| {
        let t = Tensor::from_slice(&vals);
        let bits: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
        assert_eq!(read::<u32>(&t.bitcast(DType::U32), &[6], dev), bits, "f32 -> u32 on {dev}");
        let ibits: Vec<i32> = vals.iter().map(|v| v.to_bits() as i32).collect();
        assert_eq!(read::<i32>(&t.bitcast(DType::I32), &[6], dev), ibits, "f32 -> i32 on {dev}");
        let u = Tensor::from_slice(&bits);
        let back: Vec<u32> = read::<f32>(&u.bitcast(DType::F32), &[6], dev).iter().map(|v| v.to_bits()).collect();
        assert_eq!(back, bits, "u32 -> f32 on {dev}");
        // Bit manipulation through a bitcast: clearing the sign bit is abs.
        let abs = t.bitcast(DType::U32).bitand(0x7fff_ffffu32).bitcast(DType::F32);
        let want: Vec<f32> = vals.iter().map(|v| v.abs()).collect();
        assert_eq!(read::<f32>(&abs, &[6], dev), want, "abs by bits on {dev}");
        // Bitcast of a non-contiguous view and of a computed value.
        let want: Vec<u32> = vals.iter().rev().map(|v| (v * 2.0).to_bits()).collect();
        assert_eq!(
            read::<u32>(&t.flip(0).mul(2.0).bitcast(DType::U32), &[6], dev),
            want,
            "bitcast of (flip*2) on {dev}"
        );
        let hv = h(&[1.0, -2.0]);
        let hb: Vec<u16> = hv.iter().map(|v| v.to_bits()).collect();
        assert_eq!(read::<u16>(&Tensor::from_slice(&hv).bitcast(DType::U16), &[2], dev), hb, "f16 -> u16 on {dev}");
        let dv = [1.5f64, -0.1];
        let db: Vec<i64> = dv.iter().map(|v| v.to_bits() as i64).collect();
        assert_eq!(read::<i64>(&Tensor::from_slice(&dv).bitcast(DType::I64), &[2], dev), db, "f64 -> i64 on {dev}");
    });
}

#[test]
#[should_panic(expected = "bitcast: float32 and int16 have different sizes (shape [2])")]
fn bitcast_to_other_size_panics() {
    for_each_device(|_| {
        let _ = Tensor::from_slice(&[1.0f32, 2.0]).bitcast(DType::I16);
    });
}

#[test]
fn reading_with_the_wrong_type_is_an_error() {
    for_each_device(|dev| {
        let t = Tensor::from_slice(&[1.0f32, 2.0]);
        let err = t.to_vec::<i32>().expect_err("reading f32 as i32 must fail");
        assert!(matches!(err, ferrograd::Error::DType { .. }), "{dev}: {err}");
        assert_eq!(err.to_string(), "dtype mismatch: tensor is float32, asked for int32", "on {dev}");
    });
}

#[test]
fn constant_tensors_follow_the_same_dtype_rules() {
    // Tensors made of constants only may be folded before any kernel runs; the folded values must
    // wrap, round and truncate exactly like computed ones.
    use ferrograd::ConstValue;
    for_each_device(|dev| {
        let c = |v: ConstValue, dt: DType| Tensor::full_dtype([2], v, dt);
        let u = c(ConstValue::Int(200), DType::U8);
        assert_eq!(read::<u8>(&u.add(100), &[2], dev), vec![44, 44], "const u8 200 + 100 on {dev}");
        assert_eq!(read::<u8>(&u.mul(u.clone()), &[2], dev), vec![64, 64], "const u8 200 * 200 on {dev}");
        let i = c(ConstValue::Int(127), DType::I8);
        assert_eq!(read::<i8>(&i.add(1), &[2], dev), vec![-128, -128], "const i8 127 + 1 on {dev}");
        let z = c(ConstValue::Int(0), DType::U32);
        assert_eq!(read::<u32>(&z.sub(1u32), &[2], dev), vec![u32::MAX; 2], "const u32 0 - 1 on {dev}");
        let m = c(ConstValue::Int(i32::MAX as i64), DType::I32);
        assert_eq!(read::<i32>(&m.add(1), &[2], dev), vec![i32::MIN; 2], "const i32 MAX + 1 on {dev}");
        let f = c(ConstValue::Float(-2.7), DType::F32);
        assert_eq!(read::<i32>(&f.cast(DType::I32), &[2], dev), vec![-2, -2], "const -2.7 -> i32 on {dev}");
        // A half constant used inside a computed kernel.
        let h2048 = c(ConstValue::Float(2048.0), DType::F16);
        let x = Tensor::from_slice(&h(&[1.0, 3.0]));
        assert_eq!(read::<f16>(&h2048.add(&x).sub(2048.0), &[2], dev), h(&[0.0, 4.0]), "const f16 + x on {dev}");
        let big = c(ConstValue::Int(u64::MAX as i64), DType::U64);
        assert_eq!(read::<bool>(&big.gt(1u32), &[2], dev), vec![true, true], "const u64 MAX > 1 on {dev}");
        assert_eq!(
            read::<f64>(&big.cast(DType::F64), &[2], dev),
            vec![u64::MAX as f64; 2],
            "const u64 -> f64 on {dev}"
        );
        let s = Tensor::scalar(2.0f32);
        let got = s.sqrt().item::<f32>().unwrap();
        assert_eq!(got, 2f32.sqrt(), "const sqrt on {dev}");
        let bits = Tensor::scalar(1.0f32).bitcast(DType::U32).item::<u32>().unwrap();
        assert_eq!(bits, 1f32.to_bits(), "const bitcast on {dev}");
    });
}

#[test]
fn large_unsigned_values_convert_and_compare_unsigned() {
    for_each_device(|dev| {
        let u = Tensor::from_slice(&[3_000_000_000u32, 1, u32::MAX]);
        assert_eq!(read::<bool>(&u.gt(2u32), &[3], dev), vec![true, false, true], "u32 > 2 on {dev}");
        let want: Vec<f32> = [3_000_000_000u32, 1, u32::MAX].iter().map(|&v| v as f32).collect();
        assert_eq!(read::<f32>(&u.cast(DType::F32), &[3], dev), want, "u32 -> f32 on {dev}");
        assert_eq!(
            read::<i64>(&u.cast(DType::I64), &[3], dev),
            vec![3_000_000_000, 1, u32::MAX as i64],
            "u32 -> i64 on {dev}"
        );
        let l = Tensor::from_slice(&[u64::MAX, 1 << 63, 3]);
        let want: Vec<f32> = [u64::MAX, 1 << 63, 3].iter().map(|&v| v as f32).collect();
        assert_eq!(read::<f32>(&l.cast(DType::F32), &[3], dev), want, "u64 -> f32 on {dev}");
        assert_eq!(read::<u32>(&l.cast(DType::U32), &[3], dev), vec![u32::MAX, 0, 3], "u64 -> u32 wraps on {dev}");
        // NaN survives half casts.
        let n = Tensor::from_slice(&[f32::NAN]);
        assert!(read::<f16>(&n.cast(DType::F16), &[1], dev)[0].is_nan(), "NaN -> f16 on {dev}");
        assert!(read::<bf16>(&n.cast(DType::BF16), &[1], dev)[0].is_nan(), "NaN -> bf16 on {dev}");
    });
}

#[test]
fn constant_half_tensors_hold_their_values() {
    use ferrograd::ConstValue;
    for_each_device(|dev| {
        let t = Tensor::full_dtype([2], ConstValue::Float(1.5), DType::F16);
        assert_eq!(read::<f16>(&t, &[2], dev), h(&[1.5, 1.5]), "full f16 1.5 on {dev}");
        let b = Tensor::full_dtype([2], ConstValue::Float(1.5), DType::BF16);
        assert_eq!(read::<bf16>(&b, &[2], dev), vec![bf16::from_f32(1.5); 2], "full bf16 1.5 on {dev}");
        let f = Tensor::full_dtype([2], ConstValue::Float(-2.7), DType::F32);
        assert_eq!(read::<f16>(&f.cast(DType::F16), &[2], dev), vec![f16::from_f32(-2.7); 2], "const -> f16 on {dev}");
        let h2048 = Tensor::full_dtype([2], ConstValue::Float(2048.0), DType::F16);
        assert_eq!(read::<f16>(&h2048.add(1.0).sub(2048.0), &[2], dev), h(&[0.0, 0.0]), "folded f16 on {dev}");
        let x = Tensor::from_slice(&h(&[1.0, -2.0]));
        assert_eq!(read::<f16>(&x.ones_like(), &[2], dev), h(&[1.0, 1.0]), "ones_like f16 on {dev}");
    });
}

#[test]
fn half_comparisons_use_values_not_bits() {
    // Raw bit patterns of negative halves compare backwards, and -0.0 and 0.0 differ in bits.
    for_each_device(|dev| {
        let av = [-1.0f32, 0.5, -0.0, -3.0, 2.0];
        let bv = [0.5f32, -1.0, 0.0, -2.0, 2.0];
        let (a, b) = (Tensor::from_slice(&h(&av)), Tensor::from_slice(&h(&bv)));
        let w = |f: fn(f32, f32) -> bool| -> Vec<bool> { av.iter().zip(&bv).map(|(&x, &y)| f(x, y)).collect() };
        assert_eq!(read::<bool>(&a.lt(&b), &[5], dev), w(|x, y| x < y), "f16 lt on {dev}");
        assert_eq!(read::<bool>(&a.eq(&b), &[5], dev), w(|x, y| x == y), "f16 eq on {dev}");
        assert_eq!(read::<bool>(&a.ge(&b), &[5], dev), w(|x, y| x >= y), "f16 ge on {dev}");
        let mx: Vec<f16> = av.iter().zip(&bv).map(|(&x, &y)| f16::from_f32(x.max(y))).collect();
        let got: Vec<f32> = read::<f16>(&a.maximum(&b), &[5], dev).iter().map(|v| v.to_f32()).collect();
        let want: Vec<f32> = mx.iter().map(|v| v.to_f32()).collect();
        assert_eq!(got, want, "f16 maximum on {dev}");
        assert_eq!(read::<f16>(&a.max(), &[], dev), vec![f16::from_f32(2.0)], "f16 max() on {dev}");
        assert_eq!(read::<f16>(&a.min(), &[], dev), vec![f16::from_f32(-3.0)], "f16 min() on {dev}");
        let abs: Vec<f16> = av.iter().map(|v| f16::from_f32(v.abs())).collect();
        assert_eq!(read::<f16>(&a.abs(), &[5], dev), abs, "f16 abs on {dev}");
        let bf: Vec<bf16> = av.iter().map(|&v| bf16::from_f32(v)).collect();
        let bb: Vec<bf16> = bv.iter().map(|&v| bf16::from_f32(v)).collect();
        let got = read::<bool>(&Tensor::from_slice(&bf).lt(Tensor::from_slice(&bb)), &[5], dev);
        assert_eq!(got, w(|x, y| x < y), "bf16 lt on {dev}");
        let z = Tensor::from_slice(&[-0.0f32]);
        assert!(z.eq(0.0).item::<bool>().unwrap(), "f32 -0.0 == 0.0 on {dev}");
    });
}

#[test]
fn unsigned_negation_and_raw_bytes() {
    for_each_device(|dev| {
        let u = Tensor::from_slice(&[5u8, 0, 255]);
        assert_eq!(read::<u8>(&u.neg(), &[3], dev), vec![251, 0, 1], "u8 neg wraps on {dev}");
        let x = Tensor::from_slice(&[1.5f32, -2.0]);
        let want: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(x.to_bytes().unwrap(), want, "f32 to_bytes on {dev}");
        let want: Vec<u8> = [-2.0f32, 1.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(x.flip(0).to_bytes().unwrap(), want, "to_bytes of a view on {dev}");
        let i = Tensor::from_slice(&[0x0102_0304i32]);
        assert_eq!(i.to_bytes().unwrap(), vec![4, 3, 2, 1], "i32 little-endian on {dev}");
    });
}
