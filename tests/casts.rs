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
