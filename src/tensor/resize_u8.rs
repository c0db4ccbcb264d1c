//! Bilinear resizing of uint8 images as PyTorch does it on CPU: separable, width first, each
//! pass a fixed-point dot product with the weights rounded to int16 and the result rounded and
//! clamped to 0..=255 — so every output byte is PyTorch's, not the exactly rounded 4-tap value
//! (which differs by one in about a third of the pixels of an upscale).

use super::Tensor;
use crate::uop::DType;

impl Tensor {
    /// `(N, C, H, W)` uint8 resized to `(oh, ow)` by bilinear interpolation, PyTorch's bytes.
    pub(crate) fn resize_bilinear_u8(&self, oh: usize, ow: usize, align_corners: bool) -> Tensor {
        let shape = self.shape();
        let (h, w) = (shape[2], shape[3]);
        let mut x = self.cast(DType::I32);
        if ow != w {
            x = resize_axis(&x, 3, w, ow, align_corners);
        }
        if oh != h {
            x = resize_axis(&x, 2, h, oh, align_corners);
        }
        x.cast(DType::U8)
    }
}

/// One pass along `axis` (`n` to `out` samples) of an int32 tensor holding bytes.
fn resize_axis(x: &Tensor, axis: isize, n: usize, out: usize, align_corners: bool) -> Tensor {
    let (weights, precision) = fixed_point_weights(n, out, align_corners);
    let w = Tensor::from_slice_on(&weights, [out, n], &x.device());
    let moved = x.transpose(axis, -1);
    let acc = (moved.unsqueeze(-2) * &w).sum_axis(-1);
    // Round half up by adding half an LSB before the shift, then saturate to a byte.
    let y = (acc + (1i32 << (precision - 1))).shr(precision as i32).maximum(0).minimum(255);
    y.transpose(axis, -1)
}

/// The `(out, n)` interpolation weights in fixed point and their precision in bits: linear
/// weights computed in f64 (source `scale * (o + 0.5) - 0.5`, clamped at 0, or `scale * o` with
/// aligned corners), scaled by `2^precision` for the largest precision (at most 22) under
/// which twice the largest weight still fits in int16, and rounded half away from zero.
fn fixed_point_weights(n: usize, out: usize, align_corners: bool) -> (Vec<i32>, u32) {
    let scale = match (align_corners, out > 1) {
        (true, true) => (n as f64 - 1.0) / (out as f64 - 1.0),
        (true, false) => 0.0,
        (false, _) => n as f64 / out as f64,
    };
    let mut real = vec![0.0f64; out * n];
    for o in 0..out {
        let src = if align_corners { scale * o as f64 } else { (scale * (o as f64 + 0.5) - 0.5).max(0.0) };
        let lo = (src.floor() as usize).min(n - 1);
        let frac = src - lo as f64;
        let hi = if lo < n - 1 { lo + 1 } else { lo };
        real[o * n + lo] += 1.0 - frac;
        real[o * n + hi] += frac;
    }
    let max = real.iter().copied().fold(0.0, f64::max);
    let mut precision = 0u32;
    while precision < 22 && ((0.5 + max * f64::from(1u32 << (precision + 1))) as i64) < (1 << 15) {
        precision += 1;
    }
    let unit = f64::from(1u32 << precision);
    let fixed = real.iter().map(|&v| (v * unit + 0.5f64.copysign(v)).trunc() as i32).collect();
    (fixed, precision)
}
