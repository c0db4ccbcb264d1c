//! Random numbers: a counter-based generator (Threefry-2x32, 20 rounds) computed in the
//! kernel from integer ops, so every device produces the same numbers for the same seed.

use super::checks::check_condition;
use super::create::default_device;
use super::{IntoShape, Tensor};
use crate::uop::{Arg, ConstValue, DType, Ops, UOp};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One thread's generator: a Threefry key (seed and stream) and, per device, a one-element
/// u32 buffer counting the random calls made there. The counter lives on the device and is
/// advanced by an `assign` in the same schedule as the numbers, so a TinyJit replay draws new
/// numbers each time.
struct RngState {
    seed: u64,
    /// 0 for a thread that called `manual_seed`; threads that draw without seeding get a stream
    /// of their own, so no two threads draw the same numbers.
    stream: u64,
    counters: Vec<(String, Tensor)>,
}

thread_local! {
    static RNG: RefCell<Option<RngState>> = const { RefCell::new(None) };
    /// Depth of `skip_init` scopes on this thread.
    static SKIP_INIT: Cell<usize> = const { Cell::new(0) };
}

/// Whether a `skip_init` scope is active on this thread.
pub fn is_skip_init() -> bool {
    SKIP_INIT.with(|c| c.get() > 0)
}

/// Runs `f` — typically a model's constructor whose parameters `load_state_dict` is about to
/// fill — without drawing random numbers: random tensors made inside are placeholders of the
/// right shape and dtype whose values are unspecified (as PyTorch's `skip_init`). Nothing runs
/// on a device and this thread's generator does not advance, so the numbers drawn after it are
/// those that would have been drawn without it.
pub fn skip_init<R>(f: impl FnOnce() -> R) -> R {
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            SKIP_INIT.with(|c| c.set(c.get() - 1));
        }
    }
    SKIP_INIT.with(|c| c.set(c.get() + 1));
    let _restore = Restore;
    f()
}

/// The seed of threads that have not called `manual_seed` (the last seed set on any thread).
static DEFAULT_SEED: AtomicU64 = AtomicU64::new(0);
static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);
/// Whether some thread has drawn numbers: the first such thread gets stream 0, so a program
/// that never seeds gets the same numbers as one that seeds 0.
static FIRST_DRAWN: AtomicBool = AtomicBool::new(false);

impl RngState {
    /// The Threefry key of this thread's stream.
    fn key(&self) -> (u32, u32) {
        let mix = self.stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let k = self.seed ^ mix;
        (k as u32, (k >> 32) as u32)
    }
}

/// Runs `f` on this thread's generator (made on first use).
fn with_rng<R>(f: impl FnOnce(&mut RngState) -> R) -> R {
    RNG.with(|r| {
        let mut r = r.borrow_mut();
        let state = r.get_or_insert_with(|| {
            let stream =
                if FIRST_DRAWN.swap(true, Ordering::Relaxed) { NEXT_STREAM.fetch_add(1, Ordering::Relaxed) } else { 0 };
            RngState { seed: DEFAULT_SEED.load(Ordering::Relaxed), stream, counters: Vec::new() }
        });
        f(state)
    })
}

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
        DEFAULT_SEED.store(seed, Ordering::Relaxed);
        FIRST_DRAWN.store(true, Ordering::Relaxed);
        RNG.with(|r| *r.borrow_mut() = Some(RngState { seed, stream: 0, counters: Vec::new() }));
    }

    /// `n` random u32 words: Threefry of `(element index, call number)` under this thread's key.
    /// The call number comes from the device's counter: each call advances it by one and
    /// snapshots it into a buffer of its own, right away (two tiny kernels), so a lazy graph
    /// holding the snapshot keeps its number whatever later calls do, and a TinyJit replay
    /// (which re-runs both kernels) draws new numbers each time. Generators are per thread: a
    /// thread that seeds draws the same numbers whatever other threads do.
    pub(crate) fn random_bits(n: usize, device: &str) -> Tensor {
        assert!(n <= u32::MAX as usize, "random: {n} numbers in one call is more than 2^32");
        if is_skip_init() {
            return Tensor::full_on([n], ConstValue::Int(0), DType::U32, device);
        }
        if let Some(words) = super::trace::random_under_vmap(n, device, |all| Tensor::random_bits(all, device)) {
            return words;
        }
        let ((k0, k1), counter) = with_rng(|s| {
            let pos = s.counters.iter().position(|(d, _)| d == device);
            let counter = match pos {
                Some(i) => s.counters[i].1.clone(),
                None => {
                    let c = Tensor::from_slice_on(&[0u32], [0usize; 0], device);
                    s.counters.push((device.to_string(), c.clone()));
                    c
                }
            };
            (s.key(), counter)
        });
        let view = counter.uop();
        let konst = |v: i64| {
            UOp::new(Ops::CONST, DType::U32, vec![super::create::device_node(device)], Arg::Const(ConstValue::Int(v)))
        };
        let add = |c: i64| UOp::new(Ops::ADD, DType::U32, vec![view.clone(), konst(c)], Arg::None);
        let inc = super::assign::assign_node(view.clone(), add(1));
        // `+ 0` makes a kernel that copies the value into a new buffer (a CONTIGUOUS of a buffer
        // would just be that buffer).
        let snap = add(0);
        let eager = super::selftest::ensure(device)
            .and_then(|_| crate::engine::realize(&[inc]))
            .and_then(|_| crate::engine::realize(std::slice::from_ref(&snap)));
        let call = match eager {
            Ok(bufs) => Tensor::from_uop(super::create::buffer_view(bufs[0].clone(), &[])),
            // The device cannot run kernels (not there, no compiler): the numbers stay a lazy
            // graph, whose realize returns that error.
            Err(_) => Tensor::from_uop(snap),
        };
        let lo = Tensor::iota(n, DType::U32, device);
        let hi = call.reshape([1]).expand([n]);
        threefry2x32(&lo, &hi, k0, k1)
    }

    /// Uniform float32 numbers in `[0, 1)`.
    pub fn rand(shape: impl IntoShape) -> Tensor {
        Tensor::rand_on(shape, &default_device())
    }

    pub(crate) fn rand_on(shape: impl IntoShape, device: &str) -> Tensor {
        let dims = random_dims("rand", shape.into_dims());
        let n: usize = dims.iter().product();
        let bits = Tensor::random_bits(n, device);
        // 23 random mantissa bits under exponent 0 give a float in [1, 2).
        let one = u32_const(0x3f80_0000, &bits.device());
        bits.shr(9u32).bitor(one).bitcast(DType::F32).sub(1.0).reshape(dims)
    }

    /// Standard normal float32 numbers (Box–Muller).
    pub fn randn(shape: impl IntoShape) -> Tensor {
        Tensor::randn_on(shape, &default_device())
    }

    fn randn_on(shape: impl IntoShape, device: &str) -> Tensor {
        let dims = shape.into_dims();
        random_dims("randn", dims.clone());
        let u1 = Tensor::rand_on(dims.clone(), device);
        let u2 = Tensor::rand_on(dims, device);
        let r = u1.neg().add(1.0).log().mul(-2.0).sqrt();
        r.mul(u2.mul(2.0 * std::f64::consts::PI).cos())
    }

    /// Uniform float32 numbers in `[low, high)`.
    /// A random permutation of `0..n` (int64; the argsort of `n` uniform numbers).
    pub fn randperm(n: usize) -> Tensor {
        Tensor::rand([n]).argsort(0, false)
    }
    /// Uniform float32 numbers in `[-1/sqrt(numel), 1/sqrt(numel))` (tinygrad's
    /// `scaled_uniform`).
    pub fn scaled_uniform(shape: impl IntoShape) -> Tensor {
        let dims = shape.into_dims();
        let n: isize = dims.iter().product();
        let bound = (n.max(1) as f64).powf(-0.5);
        Tensor::uniform(dims, -bound, bound)
    }
    pub fn uniform(shape: impl IntoShape, low: f64, high: f64) -> Tensor {
        assert!(low <= high, "uniform: low ({low}) must not be above high ({high})");
        Tensor::rand(shape).mul(high - low).add(low)
    }

    /// Normal float32 numbers with mean `mean` and standard deviation `std`.
    pub fn normal(shape: impl IntoShape, mean: f64, std: f64) -> Tensor {
        assert!(std >= 0.0, "normal: std must not be negative, got {std}");
        Tensor::randn(shape).mul(std).add(mean)
    }

    /// Uniform int32 integers in `[low, high)` (tinygrad's dtype; the range may be up to 2^32).
    pub fn randint(shape: impl IntoShape, low: i64, high: i64) -> Tensor {
        let range = high.checked_sub(low).filter(|r| (1..=1i64 << 32).contains(r));
        let range = range.unwrap_or_else(|| panic!("randint: need low < high within 2^32, got [{low}, {high})"));
        let dims = random_dims("randint", shape.into_dims());
        let n: usize = dims.iter().product();
        let bits = Tensor::random_bits(n, &default_device());
        // Bits modulo the range: the bias is at most range / 2^32.
        let r = if range == 1i64 << 32 { bits } else { bits.fmod(range as u32) };
        r.cast(DType::I64).add(low).cast(DType::I32).reshape(dims)
    }

    pub fn rand_like(&self) -> Tensor {
        Tensor::rand_on(self.shape(), &self.device()).cast(self.dtype())
    }
    pub fn randn_like(&self) -> Tensor {
        Tensor::randn_on(self.shape(), &self.device()).cast(self.dtype())
    }

    /// Draws `num_samples` class indices (int64) from the weights along the last axis of a 1-D
    /// or 2-D tensor (non-negative, need not sum to 1). With replacement: inverse CDF of
    /// uniform draws. Without: the largest `log(u) / p` keys (the exponential race), which
    /// draws in the same order as sampling one by one and removing each draw.
    pub fn multinomial(&self, num_samples: usize, replacement: bool) -> Tensor {
        let shape = self.shape();
        assert!(
            (1..=2).contains(&shape.len()),
            "multinomial: needs a 1-D or 2-D tensor of weights, got shape {shape:?}"
        );
        let c = *shape.last().unwrap_or(&0);
        assert!(c > 0, "multinomial: no categories (shape {shape:?})");
        assert!(
            replacement || num_samples <= c,
            "multinomial: cannot draw {num_samples} samples from {c} categories without replacement"
        );
        let p = self.float().reshape([-1, c as isize]);
        let b = p.shape()[0];
        let dev = self.device();
        // As PyTorch: weights finite and non-negative, each row with a positive sum (and, without
        // replacement, as many positive weights as samples), checked when the draw is realized.
        let finite_nonneg = p.ge(0.0).bitand(p.isfinite());
        check_condition(
            &finite_nonneg.logical_not(),
            format!("multinomial: weights must be finite and >= 0 (shape {shape:?})"),
        );
        let positive = p.gt(0.0).cast(DType::I32).sum_axis(-1);
        let need = if replacement { 1 } else { num_samples.max(1) as i32 };
        check_condition(
            &positive.lt(need),
            format!("multinomial: every row of weights needs {need} positive weight(s) to draw {num_samples} samples (replacement {replacement})"),
        );
        let out = if replacement {
            let cdf = p.cumsum(-1);
            let cdf = cdf.div(cdf.shrink(&[(0, b), (c - 1, c)])).unsqueeze(1);
            let u = Tensor::rand_on([b, num_samples, 1], &dev);
            u.ge(&cdf).cast(DType::I64).sum_axis(-1).minimum(c as i64 - 1)
        } else {
            let u = Tensor::rand_on([b, c], &dev);
            // Zero weights get the lowest finite key (drawn last, before no one); drawn keys -inf.
            let mut keys = p.gt(0.0).where_(u.log().div(&p), -f32::MAX as f64);
            let slots = Tensor::iota(num_samples, DType::I64, &dev);
            let classes = Tensor::iota(c, DType::I64, &dev);
            let mut out = Tensor::full_on([b, num_samples], ConstValue::Int(0), DType::I64, &dev);
            for s in 0..num_samples {
                let pick = keys.argmax_keepdim(-1);
                out = slots.eq(s as i64).where_(&pick, &out);
                keys = classes.eq(&pick).where_(f64::NEG_INFINITY, &keys);
            }
            out
        };
        if shape.len() == 1 {
            out.reshape([num_samples])
        } else {
            out
        }
    }

    /// Zeroes each element with probability `p` and scales the rest by `1 / (1 - p)`, in
    /// training mode ([`train`], [`set_training`]); the identity otherwise.
    pub fn dropout(&self, p: f64) -> Tensor {
        assert!((0.0..=1.0).contains(&p), "dropout: probability {p} is not in [0, 1]");
        if !Tensor::training() || p == 0.0 {
            return self.clone();
        }
        if p == 1.0 {
            return self.mul(0.0);
        }
        let keep = Tensor::rand_on(self.shape(), &self.device()).ge(p);
        keep.where_(self.mul(1.0 / (1.0 - p)), 0.0)
    }

    /// Whether this thread is in training mode (dropout active).
    pub fn training() -> bool {
        TRAINING.with(|t| t.get())
    }

    /// `U(-b, b)` with `b = gain * sqrt(3 / fan_in)`, `gain = sqrt(2 / (1 + a^2))` (PyTorch's
    /// `kaiming_uniform_` with leaky-ReLU slope `a`, fan in = `shape[1] * receptive field`).
    pub fn kaiming_uniform(shape: impl IntoShape, a: f64) -> Tensor {
        let dims = shape.into_dims();
        let (fan_in, _) = fans("kaiming_uniform", &dims);
        let bound = (3.0f64).sqrt() * (2.0 / (1.0 + a * a)).sqrt() / (fan_in as f64).sqrt();
        Tensor::uniform(dims, -bound, bound)
    }
    /// `N(0, std)` with `std = gain / sqrt(fan_in)` (PyTorch's `kaiming_normal_`).
    pub fn kaiming_normal(shape: impl IntoShape, a: f64) -> Tensor {
        let dims = shape.into_dims();
        let (fan_in, _) = fans("kaiming_normal", &dims);
        let std = (2.0 / (1.0 + a * a)).sqrt() / (fan_in as f64).sqrt();
        Tensor::normal(dims, 0.0, std)
    }
    /// `U(-b, b)` with `b = sqrt(6 / (fan_in + fan_out))` (Xavier/Glorot uniform, gain 1).
    pub fn glorot_uniform(shape: impl IntoShape) -> Tensor {
        let dims = shape.into_dims();
        let (fan_in, fan_out) = fans("glorot_uniform", &dims);
        let bound = (6.0 / (fan_in + fan_out) as f64).sqrt();
        Tensor::uniform(dims, -bound, bound)
    }
}

/// PyTorch's fan in and fan out of a weight shape: `shape[1]` and `shape[0]`, each times the
/// receptive field (the product of the remaining dims).
fn fans(op: &str, dims: &[isize]) -> (usize, usize) {
    assert!(dims.len() >= 2, "{op}: fan in and fan out need at least 2 dims, shape is {dims:?}");
    let field: usize = dims[2..].iter().map(|&d| d as usize).product();
    (dims[1] as usize * field, dims[0] as usize * field)
}

thread_local! {
    static TRAINING: Cell<bool> = const { Cell::new(false) };
}

/// Turns training mode on or off for this thread (dropout is active only in training mode).
pub fn set_training(on: bool) {
    TRAINING.with(|t| t.set(on));
}

/// Runs `f` in training mode on this thread, restoring the previous mode afterwards.
pub fn train<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            set_training(self.0);
        }
    }
    let _restore = Restore(Tensor::training());
    set_training(true);
    f()
}

/// The dimensions of a random tensor's shape; a negative one panics naming `op` (no `-1` to
/// infer: there is nothing to infer it from).
fn random_dims(op: &str, dims: Vec<isize>) -> Vec<usize> {
    if dims.iter().any(|&d| d < 0) {
        panic!("{op}: shape {dims:?} has a negative dimension");
    }
    dims.into_iter().map(|d| d as usize).collect()
}
