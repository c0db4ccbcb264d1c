//! Random numbers: a counter-based generator (Threefry-2x32, 20 rounds) computed in the
//! kernel from integer ops, so every device produces the same numbers for the same seed.

use super::create::default_device;
use super::{IntoShape, Tensor};
use crate::uop::{ConstValue, DType};
use std::sync::Mutex;

struct RngState {
    seed: u64,
    counter: u64,
}

static RNG: Mutex<RngState> = Mutex::new(RngState { seed: 0, counter: 0 });

const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

fn u32_const(v: u32, device: &str) -> Tensor {
    Tensor::full_on([0usize; 0], ConstValue::Int(v as i64), DType::U32, device)
}

fn rotl(x: &Tensor, r: u32) -> Tensor {
    x.shl(r).bitor(x.shr(32 - r))
}

/// Threefry-2x32-20 of the counter pair `(x0, x1)` under key `(k0, k1)`: returns the first
/// output word. Tensors are u32; scalars are constants baked into the kernel.
pub(crate) fn threefry2x32(x0: &Tensor, x1: &Tensor, k0: u32, k1: u32) -> Tensor {
    let dev = x0.device();
    let ks = [k0, k1, k0 ^ k1 ^ 0x1BD1_1BDA];
    let mut a = x0.add(u32_const(ks[0], &dev));
    let mut b = x1.add(u32_const(ks[1], &dev));
    for block in 0..5u32 {
        for j in 0..4 {
            a = a.add(&b);
            b = rotl(&b, ROTATIONS[((block * 4 + j) % 8) as usize]);
            b = b.bitxor(&a);
        }
        let i = block as usize;
        a = a.add(u32_const(ks[(i + 1) % 3], &dev));
        b = b.add(u32_const(ks[(i + 2) % 3].wrapping_add(block + 1), &dev));
    }
    a
}

impl Tensor {
    /// Seeds the generator and restarts its counter; the same seed gives the same numbers on
    /// every device.
    pub fn manual_seed(seed: u64) {
        let mut s = RNG.lock().unwrap_or_else(|e| e.into_inner());
        s.seed = seed;
        s.counter = 0;
    }

    /// `n` random u32 words, advancing the counter by `n`.
    pub(crate) fn random_bits(n: usize, device: &str) -> Tensor {
        let (seed, offset) = {
            let mut s = RNG.lock().unwrap_or_else(|e| e.into_inner());
            let o = s.counter;
            s.counter = s.counter.wrapping_add(n as u64);
            (s.seed, o)
        };
        let idx = Tensor::iota(n, DType::U32, device);
        let lo = idx.add(u32_const(offset as u32, device));
        let hi = Tensor::full_on([n], ConstValue::Int((offset >> 32) as i64), DType::U32, device);
        threefry2x32(&lo, &hi, seed as u32, (seed >> 32) as u32)
    }

    /// Uniform float32 numbers in `[0, 1)`.
    pub fn rand(shape: impl IntoShape) -> Tensor {
        let dims: Vec<usize> = shape.into_dims().iter().map(|&d| d as usize).collect();
        let n: usize = dims.iter().product();
        let bits = Tensor::random_bits(n, &default_device());
        // 23 random mantissa bits under exponent 0 give a float in [1, 2).
        let one = u32_const(0x3f80_0000, &bits.device());
        bits.shr(9u32).bitor(one).bitcast(DType::F32).sub(1.0).reshape(dims)
    }

    /// Standard normal float32 numbers (Box–Muller).
    pub fn randn(shape: impl IntoShape) -> Tensor {
        let dims = shape.into_dims();
        let u1 = Tensor::rand(dims.clone());
        let u2 = Tensor::rand(dims);
        let r = u1.neg().add(1.0).log().mul(-2.0).sqrt();
        r.mul(u2.mul(2.0 * std::f64::consts::PI).cos())
    }

    /// Uniform float32 numbers in `[low, high)`.
    pub fn uniform(shape: impl IntoShape, low: f64, high: f64) -> Tensor {
        Tensor::rand(shape).mul(high - low).add(low)
    }

    pub fn rand_like(&self) -> Tensor {
        Tensor::rand(self.shape()).cast(self.dtype())
    }
    pub fn randn_like(&self) -> Tensor {
        Tensor::randn(self.shape()).cast(self.dtype())
    }
}
