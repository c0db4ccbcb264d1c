//! Shared helpers for the integration tests: a tiny reference n-d array in f64 (every op written
//! as plain index loops, independent of ferrograd), comparison helpers, a deterministic xorshift
//! PRNG and a loop over the devices every test runs on.
#![allow(dead_code)]

use ferrograd::tensor::with_default_device;
use ferrograd::{DType, Element, Tensor};

/// The devices every test runs on.
pub const DEVICES: [&str; 2] = ["CPU", "INTERP"];

/// Tolerances for f32 results, as in tinygrad's test_ops.
pub const ATOL: f64 = 1e-6;
pub const RTOL: f64 = 1e-3;

/// Runs `f` once per device with that device as the default for new tensors: CPU and INTERP,
/// or only `DEV` when it names another device (`DEV=CL cargo test --features opencl`).
pub fn for_each_device(f: impl Fn(&str)) {
    let other = std::env::var("DEV").ok().filter(|d| !d.is_empty() && !DEVICES.contains(&d.to_uppercase().as_str()));
    match other {
        Some(dev) => with_default_device(&dev, || f(&dev)),
        None => {
            for dev in DEVICES {
                with_default_device(dev, || f(dev));
            }
        }
    }
}

// ---------------------------------------------------------------- PRNG

/// xorshift64* — deterministic test data, independent of the library's generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi), rounded to f32 so that the reference sees the tensor's exact inputs.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo + (hi - lo) * self.unit()) as f32 as f64
    }
    /// Uniform integer in [lo, hi] (inclusive).
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }
    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
    pub fn ints(&mut self, n: usize, lo: i64, hi: i64) -> Vec<i64> {
        (0..n).map(|_| self.int(lo, hi)).collect()
    }
    /// `bytes` with `changes` random bytes overwritten and, with `truncate`, cut at a random
    /// length: a corrupt file for a loader's never-panic tests.
    pub fn corrupt(&mut self, bytes: &[u8], changes: usize, truncate: bool) -> Vec<u8> {
        let mut b = bytes.to_vec();
        for _ in 0..changes {
            let i = (self.next_u64() as usize) % b.len();
            b[i] = self.next_u64() as u8;
        }
        if truncate {
            b.truncate((self.next_u64() as usize) % b.len());
        }
        b
    }
}

// ---------------------------------------------------------------- reference array

/// A row-major n-d array of f64: the reference every result is checked against.
#[derive(Clone, Debug, PartialEq)]
pub struct Nd {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Multi-index of flat position `i` in `shape` (row-major).
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for a in (0..shape.len()).rev() {
        idx[a] = i % shape[a];
        i /= shape[a];
    }
    idx
}

/// Flat position of multi-index `idx` in `shape` (row-major).
pub fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// NumPy broadcasting of two shapes (None if incompatible).
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let get = |s: &[usize], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
    (0..n)
        .map(|i| match (get(a, i), get(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

impl Nd {
    pub fn new(shape: &[usize], data: Vec<f64>) -> Nd {
        assert_eq!(numel(shape), data.len(), "Nd::new: shape {shape:?} vs {} values", data.len());
        Nd { shape: shape.to_vec(), data }
    }
    pub fn from_fn(shape: &[usize], f: impl Fn(&[usize]) -> f64) -> Nd {
        let data = (0..numel(shape)).map(|i| f(&unravel(i, shape))).collect();
        Nd::new(shape, data)
    }
    pub fn scalar(v: f64) -> Nd {
        Nd::new(&[], vec![v])
    }
    pub fn full(shape: &[usize], v: f64) -> Nd {
        Nd::new(shape, vec![v; numel(shape)])
    }
    /// Values 0, 1, 2, ... in `shape`.
    pub fn iota(shape: &[usize]) -> Nd {
        Nd::new(shape, (0..numel(shape)).map(|i| i as f64).collect())
    }
    /// Random f32-representable values in [lo, hi).
    pub fn rand(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> Nd {
        Nd::new(shape, rng.vec(numel(shape), lo, hi))
    }
    /// Random integers in [lo, hi].
    pub fn rand_int(rng: &mut Rng, shape: &[usize], lo: i64, hi: i64) -> Nd {
        Nd::new(shape, rng.ints(numel(shape), lo, hi).into_iter().map(|v| v as f64).collect())
    }
    pub fn numel(&self) -> usize {
        self.data.len()
    }
    pub fn at(&self, idx: &[usize]) -> f64 {
        self.data[ravel(idx, &self.shape)]
    }

    // -------------------------------------------------------- movement

    pub fn reshape(&self, shape: &[usize]) -> Nd {
        Nd::new(shape, self.data.clone())
    }
    /// Output axis `i` is input axis `order[i]`.
    pub fn permute(&self, order: &[usize]) -> Nd {
        let shape: Vec<usize> = order.iter().map(|&o| self.shape[o]).collect();
        Nd::from_fn(&shape, |out| {
            let mut src = vec![0; order.len()];
            for (i, &o) in order.iter().enumerate() {
                src[o] = out[i];
            }
            self.at(&src)
        })
    }
    pub fn transpose(&self, a: usize, b: usize) -> Nd {
        let mut order: Vec<usize> = (0..self.shape.len()).collect();
        order.swap(a, b);
        self.permute(&order)
    }
    /// NumPy broadcast to `shape` (leading axes added, size-1 axes repeated).
    pub fn expand(&self, shape: &[usize]) -> Nd {
        let lead = shape.len() - self.shape.len();
        Nd::from_fn(shape, |out| {
            let src: Vec<usize> =
                self.shape.iter().enumerate().map(|(i, &d)| if d == 1 { 0 } else { out[i + lead] }).collect();
            self.at(&src)
        })
    }
    pub fn pad(&self, pads: &[(usize, usize)]) -> Nd {
        let shape: Vec<usize> = self.shape.iter().zip(pads).map(|(&d, &(b, a))| d + b + a).collect();
        Nd::from_fn(&shape, |out| {
            let mut src = Vec::with_capacity(out.len());
            for (i, &o) in out.iter().enumerate() {
                let (b, _) = pads[i];
                if o < b || o - b >= self.shape[i] {
                    return 0.0;
                }
                src.push(o - b);
            }
            self.at(&src)
        })
    }
    pub fn shrink(&self, ranges: &[(usize, usize)]) -> Nd {
        let shape: Vec<usize> = ranges.iter().map(|&(s, e)| e - s).collect();
        Nd::from_fn(&shape, |out| {
            let src: Vec<usize> = out.iter().zip(ranges).map(|(&o, &(s, _))| o + s).collect();
            self.at(&src)
        })
    }
    pub fn flip(&self, axes: &[usize]) -> Nd {
        Nd::from_fn(&self.shape, |out| {
            let src: Vec<usize> = out
                .iter()
                .enumerate()
                .map(|(i, &o)| if axes.contains(&i) { self.shape[i] - 1 - o } else { o })
                .collect();
            self.at(&src)
        })
    }

    // -------------------------------------------------------- elementwise

    pub fn map(&self, f: impl Fn(f64) -> f64) -> Nd {
        Nd::new(&self.shape, self.data.iter().map(|&x| f(x)).collect())
    }
    /// Broadcasting binary op.
    pub fn zip(&self, other: &Nd, f: impl Fn(f64, f64) -> f64) -> Nd {
        let shape = broadcast_shapes(&self.shape, &other.shape).expect("Nd::zip: shapes do not broadcast");
        let (a, b) = (self.expand(&shape), other.expand(&shape));
        Nd::new(&shape, a.data.iter().zip(&b.data).map(|(&x, &y)| f(x, y)).collect())
    }
    /// Broadcasting `cond ? a : b` (cond is non-zero).
    pub fn where3(cond: &Nd, a: &Nd, b: &Nd) -> Nd {
        let shape = broadcast_shapes(&broadcast_shapes(&cond.shape, &a.shape).unwrap(), &b.shape).unwrap();
        let (c, a, b) = (cond.expand(&shape), a.expand(&shape), b.expand(&shape));
        Nd::new(&shape, (0..c.numel()).map(|i| if c.data[i] != 0.0 { a.data[i] } else { b.data[i] }).collect())
    }

    // -------------------------------------------------------- reductions

    /// Reduces `axes` with `f` starting from `init` (an empty `axes` reduces nothing; use
    /// [`Nd::all_axes`] for a full reduction); reduced axes stay as size 1 when `keepdim`.
    pub fn reduce(&self, axes: &[usize], keepdim: bool, init: f64, f: impl Fn(f64, f64) -> f64) -> Nd {
        let kept: Vec<usize> =
            self.shape.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
        let mut out = vec![init; numel(&kept)];
        for i in 0..self.numel() {
            let mut idx = unravel(i, &self.shape);
            for &a in axes {
                idx[a] = 0;
            }
            let o = ravel(&idx, &kept);
            out[o] = f(out[o], self.data[i]);
        }
        let shape: Vec<usize> = if keepdim {
            kept
        } else {
            self.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect()
        };
        Nd::new(&shape, out)
    }
    pub fn all_axes(&self) -> Vec<usize> {
        (0..self.shape.len()).collect()
    }
    pub fn sum(&self, axes: &[usize], keepdim: bool) -> Nd {
        self.reduce(axes, keepdim, 0.0, |a, b| a + b)
    }
    pub fn prod(&self, axes: &[usize], keepdim: bool) -> Nd {
        self.reduce(axes, keepdim, 1.0, |a, b| a * b)
    }
    pub fn max(&self, axes: &[usize], keepdim: bool) -> Nd {
        self.reduce(axes, keepdim, f64::NEG_INFINITY, f64::max)
    }
    pub fn min(&self, axes: &[usize], keepdim: bool) -> Nd {
        self.reduce(axes, keepdim, f64::INFINITY, f64::min)
    }
    pub fn mean(&self, axes: &[usize], keepdim: bool) -> Nd {
        let n: usize = axes.iter().map(|&a| self.shape[a]).product();
        self.sum(axes, keepdim).map(|s| s / n as f64)
    }

    // -------------------------------------------------------- to ferrograd

    /// The same values as a float32 tensor (values must be f32-representable to be exact).
    pub fn f32(&self) -> Tensor {
        Tensor::from_vec(self.data.iter().map(|&v| v as f32).collect::<Vec<_>>(), self.shape.clone())
    }
    /// The same values as a tensor of element type `T`, converted with `conv`.
    pub fn to<T: Element>(&self, conv: impl Fn(f64) -> T) -> Tensor {
        Tensor::from_vec(self.data.iter().map(|&v| conv(v)).collect::<Vec<T>>(), self.shape.clone())
    }
}

// ---------------------------------------------------------------- comparisons

/// `got` is within `atol + rtol * |want|` of `want`; NaN matches NaN, infinities must be equal.
pub fn close(got: f64, want: f64, atol: f64, rtol: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return want == got;
    }
    (got - want).abs() <= atol + rtol * want.abs()
}

pub fn assert_close_slice(got: &[f64], want: &[f64], atol: f64, rtol: f64, ctx: &str) {
    assert_eq!(got.len(), want.len(), "{ctx}: {} values, expected {}", got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(close(g, w, atol, rtol), "{ctx}: element {i}: got {g}, expected {w} (atol {atol}, rtol {rtol})");
    }
}

/// Checks shape, dtype and values (within tolerances) of `t` against `want`.
pub fn assert_tensor(t: &Tensor, want: &Nd, dtype: DType, atol: f64, rtol: f64, ctx: &str) {
    assert_eq!(t.shape(), want.shape, "{ctx}: shape");
    assert_eq!(t.dtype(), dtype, "{ctx}: dtype");
    let got = t.to_f64_vec().unwrap_or_else(|e| panic!("{ctx}: reading data failed: {e}"));
    assert_close_slice(&got, &want.data, atol, rtol, ctx);
}

/// A float32 result checked with the default tolerances.
pub fn check_f32(t: &Tensor, want: &Nd, ctx: &str) {
    assert_tensor(t, want, DType::F32, ATOL, RTOL, ctx);
}

/// An exact result (integers, bools, or floats that must be bit-exact up to NaN).
pub fn check_exact(t: &Tensor, want: &Nd, dtype: DType, ctx: &str) {
    assert_tensor(t, want, dtype, 0.0, 0.0, ctx);
}

/// f64 value of a bool (1.0 / 0.0), for reference arrays of comparison results.
pub fn b2f(b: bool) -> f64 {
    b as i32 as f64
}

/// A tensor of `dtype` holding `data` (converted with Rust `as` casts; bools are `v != 0`).
pub fn tensor_of(data: &[f64], shape: &[usize], dtype: DType) -> Tensor {
    fn mk<T: Element>(data: &[f64], shape: &[usize], f: impl Fn(f64) -> T) -> Tensor {
        Tensor::from_vec(data.iter().map(|&v| f(v)).collect::<Vec<T>>(), shape.to_vec())
    }
    match dtype {
        d if d == DType::BOOL => mk(data, shape, |v| v != 0.0),
        d if d == DType::I8 => mk(data, shape, |v| v as i8),
        d if d == DType::I16 => mk(data, shape, |v| v as i16),
        d if d == DType::I32 => mk(data, shape, |v| v as i32),
        d if d == DType::I64 => mk(data, shape, |v| v as i64),
        d if d == DType::U8 => mk(data, shape, |v| v as u8),
        d if d == DType::U16 => mk(data, shape, |v| v as u16),
        d if d == DType::U32 => mk(data, shape, |v| v as u32),
        d if d == DType::U64 => mk(data, shape, |v| v as u64),
        d if d == DType::F16 => mk(data, shape, half::f16::from_f64),
        d if d == DType::BF16 => mk(data, shape, half::bf16::from_f64),
        d if d == DType::F32 => mk(data, shape, |v| v as f32),
        d if d == DType::F64 => mk(data, shape, |v| v),
        d => panic!("tensor_of: unsupported dtype {d:?}"),
    }
}

/// The panic message of `f` (which must panic).
pub fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("should panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
