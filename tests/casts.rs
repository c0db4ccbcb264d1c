//! Float to integer casts have one meaning on every device: truncate toward zero, saturate at
//! the target type's range, NaN becomes 0 (Rust's `as`). In C, and on x86 hardware, these cases
//! are undefined or give INT_MIN; CPU and INTERP used to disagree.

mod common;
use common::for_each_device;
use ferrograd::{DType, Tensor};

const SPECIAL: [f32; 14] =
    [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e9, -3e9, 2.9, -2.9, 0.5, -0.5, 255.5, 256.0, -1.0, 1e20, -1e20];

#[test]
fn float_to_int_casts_truncate_and_saturate_everywhere() {
    for_each_device(|dev| {
        let x = Tensor::from_vec(SPECIAL.to_vec(), [SPECIAL.len()]);
        let want_i32: Vec<i32> = SPECIAL.iter().map(|&v| v as i32).collect();
        let want_u8: Vec<u8> = SPECIAL.iter().map(|&v| v as u8).collect();
        let want_i64: Vec<i64> = SPECIAL.iter().map(|&v| v as i64).collect();
        let want_u32: Vec<u32> = SPECIAL.iter().map(|&v| v as u32).collect();
        assert_eq!(x.cast(DType::I32).to_vec::<i32>().unwrap(), want_i32, "f32 -> i32 on {dev}");
        assert_eq!(x.cast(DType::U8).to_vec::<u8>().unwrap(), want_u8, "f32 -> u8 on {dev}");
        assert_eq!(x.cast(DType::I64).to_vec::<i64>().unwrap(), want_i64, "f32 -> i64 on {dev}");
        assert_eq!(x.cast(DType::U32).to_vec::<u32>().unwrap(), want_u32, "f32 -> u32 on {dev}");
        // Through f16 (which overflows to infinity past 65504) and from f64.
        let h = x.cast(DType::F16).cast(DType::I16).to_vec::<i16>().unwrap();
        let want_h: Vec<i16> = SPECIAL.iter().map(|&v| half::f16::from_f32(v).to_f32() as i16).collect();
        assert_eq!(h, want_h, "f32 -> f16 -> i16 on {dev}");
        let d = Tensor::from_vec(SPECIAL.iter().map(|&v| v as f64).collect::<Vec<_>>(), [SPECIAL.len()]);
        let want_d: Vec<i32> = SPECIAL.iter().map(|&v| v as f64 as i32).collect();
        assert_eq!(d.cast(DType::I32).to_vec::<i32>().unwrap(), want_d, "f64 -> i32 on {dev}");
    });
}

#[test]
fn constant_folding_casts_the_same_way() {
    // Casts of constants are folded at compile time; they must agree with the kernels.
    for_each_device(|dev| {
        for v in SPECIAL {
            let folded = Tensor::full([1], v as f64).cast(DType::I32).to_vec::<i32>().unwrap()[0];
            assert_eq!(folded, v as i32, "full({v}).cast(i32) on {dev}");
            let folded = Tensor::full([1], v as f64).cast(DType::U8).to_vec::<u8>().unwrap()[0];
            assert_eq!(folded, v as u8, "full({v}).cast(u8) on {dev}");
        }
    });
}

/// f32 bit patterns to narrow: a sweep over every exponent with varied mantissas, plus the
/// rounding and overflow boundaries of f16 and bf16 (ties, the subnormal edge, 65504's).
fn narrowing_cases() -> Vec<u32> {
    let mut bits: Vec<u32> = (0..1u64 << 32).step_by(65_537).map(|x| x as u32).collect();
    bits.extend([
        0x3300_0000,
        0x3300_0001,
        0x387f_c000,
        0x387f_e000,
        0x3880_0000,
        0x477f_efff,
        0x477f_f000,
        0x7f7f_ffff,
        0x7f80_0000,
        0x7f80_0001,
        0xff80_0000,
        0x0000_0001,
        0x3f80_8000,
        0x3f81_8000,
        0x7fff_ffff,
        0x8000_0000,
    ]);
    // A whole number of 16-lane vectors, so the CPU kernel runs its vector form throughout.
    bits.truncate(bits.len() / 16 * 16);
    bits
}

#[test]
fn sixteen_bit_floats_convert_bit_exactly_lane_by_lane_and_as_vectors() {
    let all: Vec<u16> = (0..=u16::MAX).collect();
    let narrow = narrowing_cases();
    for_each_device(|dev| {
        for dt in [DType::BF16, DType::F16] {
            let widen = |b: u16| {
                if dt == DType::BF16 {
                    half::bf16::from_bits(b).to_f32()
                } else {
                    half::f16::from_bits(b).to_f32()
                }
            };
            let shorten = |x: f32| {
                if dt == DType::BF16 {
                    half::bf16::from_f32(x).to_bits()
                } else {
                    half::f16::from_f32(x).to_bits()
                }
            };
            let wide: Vec<f32> =
                Tensor::from_vec(all.clone(), [all.len()]).bitcast(dt).cast(DType::F32).to_vec().unwrap();
            for (&b, &got) in all.iter().zip(&wide) {
                let want = widen(b);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{dt:?} {b:#06x} -> f32 on {dev}: {got} (want {want})"
                );
            }
            let src = Tensor::from_vec(narrow.clone(), [narrow.len()]).bitcast(DType::F32);
            let short: Vec<u16> = src.cast(dt).bitcast(DType::U16).to_vec().unwrap();
            for (&u, &got) in narrow.iter().zip(&short) {
                let x = f32::from_bits(u);
                if x.is_nan() {
                    // A NaN stays a NaN (its payload bits are not specified).
                    assert!(widen(got).is_nan(), "f32 NaN ({u:#010x}) -> {dt:?} on {dev}: {got:#06x}");
                } else {
                    assert_eq!(got, shorten(x), "f32 {x} ({u:#010x}) -> {dt:?} on {dev}");
                }
            }
        }
    });
}

#[test]
fn cpu_kernels_load_and_convert_sixteen_bit_floats_as_vectors() {
    use ferrograd::codegen::get_program;
    use ferrograd::runtime::get_device;
    use ferrograd::schedule::create_schedule;
    let dev = get_device("CPU").expect("the CPU device");
    if dev.renderer().target().simd_bytes < 16 {
        return; // no SIMD vectors on this machine
    }
    // A bf16 weight times f32 activations (a decode step's matrix-vector product), and f32
    // values stored as f16.
    let w = Tensor::randn([256, 512]).cast(DType::BF16).realize().unwrap();
    let x = Tensor::randn([1, 512]);
    let y = x.matmul(&w.cast(DType::F32).t());
    let h = Tensor::randn([4096]).realize().unwrap().mul(2.0).cast(DType::F16);
    for (t, helper) in [(&y, "__bf2f_v"), (&h, "__f2h_v")] {
        let items = create_schedule(&[t.uop()]).items;
        let srcs: Vec<String> = items.iter().map(|i| get_program(&i.ast, dev.renderer(), None).src).collect();
        assert!(srcs.iter().any(|s| s.contains(&format!("= {helper}"))), "no {helper} call in:\n{}", srcs.join("\n"));
    }
}
