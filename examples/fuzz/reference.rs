//! The fuzzer's own reference: every op evaluated element by element in f64 (ints in i128),
//! written from the ops' documented meaning, not from ferrograd's code.
//!
//! Each element carries an error bound. Where ferrograd's result is fully determined — IEEE
//! arithmetic of f32 (f16/bf16 computed in f32 and rounded back after each op, as documented),
//! integer arithmetic that wraps, casts that truncate and saturate, sums whose every partial sum
//! is exactly representable whatever the order — the bound is 0 and the device must match
//! exactly. Elsewhere (transcendental functions, sums that round) the bound says how far a
//! correct result may be, and a discontinuous op (a comparison, floor, a cast to int) on a
//! value within its bound of the discontinuity makes the element `unsure`: it is not compared.

mod composite;
mod decomp;

use super::graph::{Bin, Dt, Graph, Node, Op, Red, Rng, Un};

#[derive(Clone, Copy, Debug)]
pub struct E {
    /// The value (floats), or the integer as f64 for reporting.
    pub v: f64,
    /// The integer value of int and bool elements.
    pub i: i128,
    /// How far a correct result may be from `v` (floats).
    pub e: f64,
    pub unsure: bool,
}

impl E {
    fn f(v: f64) -> E {
        E { v, i: 0, e: 0.0, unsure: false }
    }
    fn int(i: i128) -> E {
        E { v: i as f64, i, e: 0.0, unsure: false }
    }
    fn unsure() -> E {
        E { v: f64::NAN, i: 0, e: 0.0, unsure: true }
    }
}

#[derive(Clone, Debug)]
pub struct Arr {
    pub shape: Vec<usize>,
    pub dt: Dt,
    pub data: Vec<E>,
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        if shape[d] > 0 {
            idx[d] = i % shape[d];
            i /= shape[d];
        }
    }
    idx
}

impl Arr {
    fn at(&self, idx: &[usize]) -> E {
        let st = strides(&self.shape);
        self.data[idx.iter().zip(&st).map(|(i, s)| i * s).sum::<usize>()]
    }
    /// Element of `self` broadcast to `shape` (NumPy rules), at `idx` of `shape`.
    fn at_broadcast(&self, idx: &[usize], shape: &[usize]) -> E {
        let off = shape.len() - self.shape.len();
        let own: Vec<usize> =
            self.shape.iter().enumerate().map(|(d, &n)| if n == 1 { 0 } else { idx[d + off] }).collect();
        self.at(&own)
    }
}

// ---------------------------------------------------------------- dtypes

/// Relative rounding error bound (one unit in the last place) of a float dtype.
fn eps(dt: Dt) -> f64 {
    match dt {
        Dt::F16 => 2f64.powi(-10),
        Dt::BF16 => 2f64.powi(-7),
        _ => 2f64.powi(-23),
    }
}

/// Smallest positive subnormal of a float dtype (absolute slack near zero).
fn tiny(dt: Dt) -> f64 {
    match dt {
        Dt::F16 => 2f64.powi(-24),
        Dt::BF16 => 2f64.powi(-133),
        _ => 2f64.powi(-149),
    }
}

fn max_finite(dt: Dt) -> f64 {
    match dt {
        Dt::F16 => 65504.0,
        Dt::BF16 => half::bf16::MAX.to_f64(),
        _ => f32::MAX as f64,
    }
}

/// `x` rounded to float dtype `dt` (round to nearest even, from an f32 value for the 16-bit
/// types as ferrograd's conversions are).
pub fn round_to(x: f64, dt: Dt) -> f64 {
    match dt {
        Dt::F32 => x as f32 as f64,
        Dt::F16 => half::f16::from_f32(x as f32).to_f64(),
        Dt::BF16 => half::bf16::from_f32(x as f32).to_f64(),
        _ => x,
    }
}

/// `i` wrapped to the range of int dtype `dt`.
fn wrap(i: i128, dt: Dt) -> i128 {
    match dt {
        Dt::I32 => i as i32 as i128,
        Dt::U32 => i as u32 as i128,
        Dt::I64 => i as i64 as i128,
        Dt::U8 => i as u8 as i128,
        Dt::Bool => (i != 0) as i128,
        _ => i,
    }
}

/// Float to int: truncate toward zero, saturate at the range, NaN to 0 (Rust's `as`).
fn float_to_int(x: f64, dt: Dt) -> i128 {
    match dt {
        Dt::I32 => x as i32 as i128,
        Dt::U32 => x as u32 as i128,
        Dt::I64 => x as i64 as i128,
        Dt::U8 => x as u8 as i128,
        Dt::Bool => (x != 0.0) as i128,
        _ => unreachable!("float_to_int to {dt:?}"),
    }
}

/// A float result `x` (exact math on the inputs' values) with error `e`, rounded to `dt`.
/// `exact_op`: the device computes this op correctly rounded from the same inputs (IEEE
/// add/sub/mul/div/sqrt in f32), so exact inputs give an exact result.
fn finish(x: f64, e: f64, dt: Dt, exact_op: bool) -> E {
    if x.is_nan() {
        return if e == 0.0 || e.is_nan() { E::f(f64::NAN) } else { E::unsure() };
    }
    let r = round_to(x, dt);
    if e == 0.0 && exact_op {
        return E::f(r);
    }
    if !e.is_finite() {
        return E::unsure();
    }
    // Could a correct result overflow where this one did not, or the other way round?
    let hi = x.abs() + e;
    let lo = x.abs() - e;
    let max = max_finite(dt);
    if (r.is_infinite() && lo <= max * (1.0 + eps(dt))) || (!r.is_infinite() && hi >= max) {
        return E::unsure();
    }
    if r.is_infinite() {
        return E::f(r);
    }
    let step = eps(dt) * (r.abs() + e) + tiny(dt);
    E { v: r, i: 0, e: e + (r - x).abs() + step, unsure: false }
}

/// 16-bit float ops compute in f32 and round back: the f32 result first.
fn via_f32(x: f64, dt: Dt) -> f64 {
    if dt == Dt::F32 {
        x
    } else {
        x as f32 as f64
    }
}

// ---------------------------------------------------------------- elementwise

fn unary(u: Un, a: E, dt: Dt) -> E {
    if a.unsure {
        return E::unsure();
    }
    if dt.is_int() {
        return E::int(wrap(
            match u {
                Un::Neg => -a.i,
                Un::Abs => a.i.abs(),
                Un::Square => a.i * a.i,
                Un::Relu => a.i.max(0),
                Un::Floor | Un::Trunc => a.i,
                _ => unreachable!("{u:?} on ints"),
            },
            dt,
        ));
    }
    if dt == Dt::Bool {
        return E::int((a.i == 0) as i128);
    }
    let (x, e) = (a.v, a.e);
    let f32x = x as f32;
    match u {
        Un::Neg => E { v: -x, ..a },
        Un::Abs => E { v: x.abs(), ..a },
        Un::Relu => E { v: if x <= 0.0 { 0.0 } else { x }, ..a },
        Un::Square => finish(via_f32((f32x * f32x) as f64, dt), 2.0 * x.abs() * e + e * e, dt, true),
        Un::Recip => {
            if e > 0.0 && x.abs() <= e {
                return E::unsure();
            }
            let r = via_f32((1.0 / f32x) as f64, dt);
            finish(r, if e > 0.0 { e / (x.abs() * (x.abs() - e)) } else { 0.0 }, dt, true)
        }
        Un::Sqrt => {
            if e > 0.0 && x.abs() <= e {
                return E::unsure();
            }
            let r = via_f32(f32x.sqrt() as f64, dt);
            let de = if e > 0.0 && x > 0.0 { e / (2.0 * (x - e).max(0.0).sqrt().max(1e-300)) } else { 0.0 };
            finish(r, de.min((x + e).sqrt()), dt, true)
        }
        Un::Floor | Un::Trunc => {
            let f = |y: f64| if u == Un::Floor { y.floor() } else { y.trunc() };
            if e > 0.0 && f(x - e) != f(x + e) {
                return E::unsure();
            }
            E::f(f(x))
        }
        Un::Exp if x.is_infinite() && e == 0.0 => E::f(x.exp()),
        Un::Log if x == f64::INFINITY && e == 0.0 => E::f(x),
        Un::Exp => {
            let v = x.exp();
            let rel = (e.exp() - 1.0) + (x.abs() + 4.0) * eps(Dt::F32);
            finish(v, v * rel, dt, false)
        }
        Un::Log => {
            if x == 0.0 && e == 0.0 {
                return E::f(f64::NEG_INFINITY);
            }
            if x < 0.0 && x + e < 0.0 || x.is_nan() {
                return E::f(f64::NAN);
            }
            if x - e <= 0.0 {
                return E::unsure();
            }
            let v = x.ln();
            finish(v, e / (x - e) + (v.abs() + 1.0) * 4.0 * eps(Dt::F32), dt, false)
        }
        Un::Sin => {
            if x.abs() > 1e4 || x.is_infinite() {
                return if x.is_infinite() && e == 0.0 { E::f(f64::NAN) } else { E::unsure() };
            }
            finish(x.sin(), e + 4.0 * eps(Dt::F32) * (1.0 + x.abs()), dt, false)
        }
        Un::Sigmoid => {
            let v = 1.0 / (1.0 + (-x).exp());
            finish(v, 0.25 * e + 8.0 * eps(Dt::F32), dt, false)
        }
        Un::Not => unreachable!("not on floats"),
    }
}

fn compare(b: Bin, x: E, y: E, dt: Dt) -> E {
    if x.unsure || y.unsure {
        return E::unsure();
    }
    if !dt.is_float() {
        return E::int(match b {
            Bin::Lt => x.i < y.i,
            Bin::Eq => x.i == y.i,
            _ => x.i != y.i,
        } as i128);
    }
    let err = x.e + y.e;
    if err > 0.0 && !(x.v.is_nan() || y.v.is_nan()) && (x.v - y.v).abs() <= err || err.is_nan() {
        return E::unsure();
    }
    E::int(match b {
        Bin::Lt => x.v < y.v,
        Bin::Eq => x.v == y.v,
        _ => x.v != y.v,
    } as i128)
}

fn binary(b: Bin, x: E, y: E, dt: Dt) -> E {
    if b.is_comparison() {
        return compare(b, x, y, dt);
    }
    if x.unsure || y.unsure {
        return E::unsure();
    }
    if !dt.is_float() {
        let (a, c) = (x.i, y.i);
        let r = match b {
            Bin::Add => a + c,
            Bin::Sub => a - c,
            Bin::Mul => a.wrapping_mul(c),
            Bin::Max => a.max(c),
            Bin::Min => a.min(c),
            Bin::And => a & c,
            Bin::Or => a | c,
            Bin::Xor => a ^ c,
            _ => unreachable!("{b:?} on ints"),
        };
        return E::int(wrap(r, dt));
    }
    let (a, c) = (x.v as f32, y.v as f32);
    let (ea, ec) = (x.e, y.e);
    match b {
        Bin::Add => finish(via_f32((a + c) as f64, dt), ea + ec, dt, true),
        Bin::Sub => finish(via_f32((a - c) as f64, dt), ea + ec, dt, true),
        Bin::Mul => {
            finish(via_f32((a * c) as f64, dt), (a as f64).abs() * ec + (c as f64).abs() * ea + ea * ec, dt, true)
        }
        Bin::Div => {
            if ec > 0.0 && (c as f64).abs() <= ec {
                return E::unsure();
            }
            let r = via_f32((a / c) as f64, dt);
            let e = if ea + ec > 0.0 {
                ((a as f64).abs() * ec + (c as f64).abs() * ea) / ((c as f64).abs() * ((c as f64).abs() - ec))
            } else {
                0.0
            };
            finish(r, e, dt, true)
        }
        // NaN in either operand gives NaN (PyTorch's maximum/minimum).
        Bin::Max | Bin::Min => {
            if x.v.is_nan() || y.v.is_nan() {
                return E::f(f64::NAN);
            }
            let v = if b == Bin::Max { x.v.max(y.v) } else { x.v.min(y.v) };
            E { v, i: 0, e: ea.max(ec), unsure: false }
        }
        _ => unreachable!("{b:?} on floats"),
    }
}

fn cast(a: E, from: Dt, to: Dt) -> E {
    if a.unsure {
        return E::unsure();
    }
    match (from.is_float(), to.is_float()) {
        (true, true) => {
            let r = round_to(a.v, to);
            if a.e == 0.0 {
                E::f(r)
            } else {
                finish(a.v, a.e, to, true)
            }
        }
        (true, false) => {
            if a.e > 0.0 && float_to_int(a.v - a.e, to) != float_to_int(a.v + a.e, to) {
                return E::unsure();
            }
            if a.e > 0.0 && to == Dt::Bool && a.v.abs() <= a.e {
                return E::unsure();
            }
            E::int(float_to_int(a.v, to))
        }
        // Ints to a float go through f32 (one rounding to f32, then to the 16-bit type).
        (false, true) => E::f(round_to(a.i as f32 as f64, to)),
        (false, false) => E::int(wrap(if to == Dt::Bool { (a.i != 0) as i128 } else { a.i }, to)),
    }
}

// ---------------------------------------------------------------- sums

/// The largest power of two dividing `x` (0 for 0): the granularity of a float value.
fn granule(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return 0.0;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 { (mant, -1074) } else { (mant | (1u64 << 52), exp - 1075) };
    2f64.powi(e + m.trailing_zeros() as i32)
}

/// The sum of `xs` as ferrograd computes it in `acc` (f32), whatever the order: exact when every
/// partial sum is representable (all values share a granule and the total magnitude fits the
/// mantissa), else within the classic bound `(n-1) eps sum|x|`.
fn float_sum(xs: &[E], acc: Dt) -> (f64, f64, bool) {
    if xs.iter().any(|x| x.unsure) {
        return (0.0, 0.0, true);
    }
    if xs.iter().any(|x| x.v.is_nan()) {
        return (f64::NAN, 0.0, false);
    }
    let pos = xs.iter().any(|x| x.v == f64::INFINITY);
    let neg = xs.iter().any(|x| x.v == f64::NEG_INFINITY);
    if pos || neg {
        // Finite parts that can overflow may make the other infinity in some order.
        let finite: f64 = xs.iter().filter(|x| x.v.is_finite()).map(|x| x.v.abs() + x.e).sum();
        let certain = xs.iter().all(|x| x.e == 0.0 || x.v.is_infinite()) && finite < max_finite(acc);
        let v = if pos && neg {
            f64::NAN
        } else if pos {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
        return (v, 0.0, !certain);
    }
    // A float sum starts from +0.0 (as in PyTorch): a sum of -0.0s is +0.0 (Rust's `sum` starts
    // from -0.0).
    let sum: f64 = xs.iter().fold(0.0, |a, x| a + x.v);
    let abs: f64 = xs.iter().map(|x| x.v.abs()).sum();
    let err: f64 = xs.iter().map(|x| x.e).sum();
    let g = xs.iter().map(|x| granule(x.v)).filter(|&g| g > 0.0).fold(f64::INFINITY, f64::min);
    let mantissa = 2f64.powi(24);
    if err == 0.0 && (abs == 0.0 || abs / g < mantissa) && abs <= max_finite(acc) {
        return (sum, 0.0, false);
    }
    let n = xs.len().max(1) as f64;
    let bound = err + (n - 1.0) * eps(acc) * abs + tiny(acc) * n;
    if abs + bound >= max_finite(acc) {
        return (0.0, 0.0, true);
    }
    (sum, bound, false)
}

fn sum_to(xs: &[E], dt: Dt) -> E {
    if !dt.is_float() {
        if xs.iter().any(|x| x.unsure) {
            return E::unsure();
        }
        return E::int(wrap(xs.iter().map(|x| x.i).fold(0i128, |a, b| wrap(a + b, dt)), dt));
    }
    let (s, e, unsure) = float_sum(xs, Dt::F32);
    if unsure {
        return E::unsure();
    }
    // Exact sums round once into the result dtype (the f32 accumulator holds them exactly).
    if e == 0.0 {
        return E::f(round_to(s, dt));
    }
    finish(s, e, dt, false)
}

fn max_of(xs: &[E], is_max: bool, dt: Dt) -> E {
    if xs.iter().any(|x| x.unsure) {
        return E::unsure();
    }
    if !dt.is_float() {
        let it = xs.iter().map(|x| x.i);
        return E::int(if is_max { it.max() } else { it.min() }.expect("a reduce over at least one element"));
    }
    if xs.iter().any(|x| x.v.is_nan()) {
        return E::f(f64::NAN);
    }
    let pick = xs
        .iter()
        .copied()
        .reduce(|a, b| if (is_max && b.v > a.v) || (!is_max && b.v < a.v) { b } else { a })
        .expect("a reduce over at least one element");
    let e = xs.iter().map(|x| x.e).fold(0.0, f64::max);
    E { e, ..pick }
}

// ---------------------------------------------------------------- evaluation

/// The input data of an input node: floats are multiples of 1/16 in [-4, 4] (sums of them are
/// exact in f32), with zeros, signed zeros, infinities, NaNs and extremes when `special`; ints
/// small (now and then large, to wrap); bools random.
pub fn input_data(node: &Node) -> Vec<E> {
    let Op::Input { seed, special } = node.op else { panic!("input_data of a non-input") };
    let mut rng = Rng::new(seed);
    let n: usize = node.shape.iter().product();
    let big = rng.chance(10);
    (0..n)
        .map(|_| match node.dt {
            d if d.is_float() => {
                let v = if special && rng.chance(15) {
                    rng.pick(&[
                        0.0,
                        -0.0,
                        f64::INFINITY,
                        f64::NEG_INFINITY,
                        f64::NAN,
                        1e30,
                        -3e38,
                        1e-30,
                        65504.0,
                        1e-6,
                    ])
                } else {
                    (rng.below(129) as f64 - 64.0) / 16.0
                };
                E::f(round_to(v, d))
            }
            Dt::Bool => E::int(rng.below(2) as i128),
            Dt::U8 => E::int(if big { rng.below(256) } else { rng.below(21) } as i128),
            Dt::U32 => E::int(if big { rng.next() as u32 as usize } else { rng.below(21) } as i128),
            d => {
                let v = if big { rng.next() as i64 as i128 >> 2 } else { rng.below(17) as i128 - 8 };
                E::int(wrap(v, d))
            }
        })
        .collect()
}

fn elementwise(shape: &[usize], dt: Dt, srcs: &[&Arr], f: impl Fn(&[E]) -> E) -> Arr {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|i| {
            let idx = unravel(i, shape);
            let xs: Vec<E> = srcs.iter().map(|a| a.at_broadcast(&idx, shape)).collect();
            f(&xs)
        })
        .collect();
    Arr { shape: shape.to_vec(), dt, data }
}

fn eval_node(node: &Node, srcs: &[&Arr]) -> Arr {
    let shape = node.shape.clone();
    let dt = node.dt;
    let n: usize = shape.iter().product();
    let src_dt = srcs.first().map(|a| a.dt).unwrap_or(dt);
    let gather = |f: &dyn Fn(&[usize]) -> E| -> Arr {
        let data = (0..n).map(|i| f(&unravel(i, &shape))).collect();
        Arr { shape: shape.clone(), dt, data }
    };
    match &node.op {
        Op::Input { .. } => Arr { shape, dt, data: input_data(node) },
        Op::Unary(u) => elementwise(&shape, dt, srcs, |x| unary(*u, x[0], dt)),
        Op::Binary(b) => elementwise(&shape, dt, srcs, |x| binary(*b, x[0], x[1], src_dt)),
        Op::Scalar(b, c) => {
            let k = if src_dt.is_float() { E::f(round_to(*c, src_dt)) } else { E::int(wrap(*c as i128, src_dt)) };
            elementwise(&shape, dt, srcs, |x| binary(*b, x[0], k, src_dt))
        }
        Op::Where => elementwise(&shape, dt, srcs, |x| {
            let (c, a, b) = (x[0], x[1], x[2]);
            if c.unsure {
                let same = !a.unsure
                    && !b.unsure
                    && a.e == 0.0
                    && b.e == 0.0
                    && (a.v == b.v || a.v.is_nan() && b.v.is_nan())
                    && a.i == b.i;
                return if same { a } else { E::unsure() };
            }
            if c.i != 0 {
                a
            } else {
                b
            }
        }),
        Op::Cast(to) => elementwise(&shape, dt, srcs, |x| cast(x[0], src_dt, *to)),
        Op::IntDiv { divisor, remainder } => elementwise(&shape, dt, srcs, |x| {
            if x[0].unsure {
                return E::unsure();
            }
            // The divisor is a constant of the tensor's dtype (so it wraps for unsigned types).
            let (a, d) = (x[0].i, wrap(*divisor as i128, src_dt));
            // Floor division: the quotient rounds toward -inf; the remainder has d's sign.
            let q = if a % d != 0 && ((a < 0) != (d < 0)) { a / d - 1 } else { a / d };
            E::int(wrap(if *remainder { a - d * q } else { q }, dt))
        }),
        Op::Reshape(_) | Op::Contiguous => Arr { shape, dt, data: srcs[0].data.clone() },
        Op::Permute(order) => gather(&|idx| {
            let mut src = vec![0; idx.len()];
            for (i, &o) in order.iter().enumerate() {
                src[o] = idx[i];
            }
            srcs[0].at(&src)
        }),
        Op::Pad(p) | Op::SymPad(p) => gather(&|idx| {
            let mut src = Vec::with_capacity(idx.len());
            for ((&i, &(b, _)), &d) in idx.iter().zip(p).zip(&srcs[0].shape) {
                if i < b || i >= b + d {
                    return if dt.is_float() { E::f(0.0) } else { E::int(0) };
                }
                src.push(i - b);
            }
            srcs[0].at(&src)
        }),
        Op::Shrink(r) | Op::SymShrink(r) => {
            gather(&|idx| srcs[0].at(&idx.iter().zip(r).map(|(i, (s, _))| i + s).collect::<Vec<_>>()))
        }
        Op::Flip(axes) => gather(&|idx| {
            let s = &srcs[0].shape;
            srcs[0].at(&idx
                .iter()
                .enumerate()
                .map(|(d, &i)| if axes.contains(&d) { s[d] - 1 - i } else { i })
                .collect::<Vec<_>>())
        }),
        Op::Expand(_) => gather(&|idx| srcs[0].at_broadcast(idx, &shape)),
        Op::Reduce(r, axes, keep) => {
            let s = &srcs[0].shape;
            // Output index (with reduced axes as 0) → the elements it reduces.
            let kept_shape: Vec<usize> =
                s.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
            let red_shape: Vec<usize> =
                s.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { d } else { 1 }).collect();
            let m: usize = red_shape.iter().product();
            let outs: usize = kept_shape.iter().product();
            let data = (0..outs)
                .map(|o| {
                    let base = unravel(o, &kept_shape);
                    let xs: Vec<E> = (0..m)
                        .map(|k| {
                            let off = unravel(k, &red_shape);
                            srcs[0].at(&base.iter().zip(&off).map(|(a, b)| a + b).collect::<Vec<_>>())
                        })
                        .collect();
                    match r {
                        Red::Sum => sum_to(
                            &xs.iter()
                                .map(|x| cast(*x, src_dt, if src_dt.is_float() { src_dt } else { dt }))
                                .collect::<Vec<_>>(),
                            dt,
                        ),
                        Red::Max => max_of(&xs, true, dt),
                        Red::Min => max_of(&xs, false, dt),
                    }
                })
                .collect();
            let _ = keep;
            Arr { shape, dt, data }
        }
        Op::Cumsum(axis) => gather(&|idx| {
            let xs: Vec<E> = (0..=idx[*axis])
                .map(|k| {
                    let mut j = idx.to_vec();
                    j[*axis] = k;
                    cast(srcs[0].at(&j), src_dt, if src_dt.is_float() { src_dt } else { dt })
                })
                .collect();
            sum_to(&xs, dt)
        }),
        Op::Matmul => {
            let (a, b) = (srcs[0], srcs[1]);
            let rb = b.shape.len();
            let k = b.shape[rb - 2];
            // b's element [t, j] for output index `idx` (batch dims of size 1 broadcast).
            let b_at = |idx: &[usize], t: usize, j: usize| {
                let mut bi: Vec<usize> = if rb == 2 {
                    vec![]
                } else {
                    (0..rb - 2).map(|i| if b.shape[i] == 1 { 0 } else { idx[i] }).collect()
                };
                bi.extend([t, j]);
                b.at(&bi)
            };
            gather(&|idx| {
                let (j, lead) = (idx[idx.len() - 1], &idx[..idx.len() - 1]);
                let products: Vec<E> = (0..k)
                    .map(|t| {
                        let mut ai = lead.to_vec();
                        ai.push(t);
                        binary(Bin::Mul, a.at(&ai), b_at(idx, t, j), dt)
                    })
                    .collect();
                // f32 products feed FMAs unrounded: exact products of f32 values are exact in
                // f64, and the sum's exactness test covers both paths.
                let products = if dt == Dt::F32 {
                    (0..k)
                        .map(|t| {
                            let mut ai = lead.to_vec();
                            ai.push(t);
                            exact_product(a.at(&ai), b_at(idx, t, j))
                        })
                        .collect()
                } else {
                    products
                };
                sum_to(&products, dt)
            })
        }
        Op::Conv2d { stride, padding } => {
            let (x, w) = (srcs[0], srcs[1]);
            let (cin, kh, kw) = (w.shape[1], w.shape[2], w.shape[3]);
            let (h, wd) = (x.shape[2] as isize, x.shape[3] as isize);
            gather(&|idx| {
                let (b, co, oy, ox) = (idx[0], idx[1], idx[2], idx[3]);
                let mut terms = Vec::new();
                for ci in 0..cin {
                    for dy in 0..kh {
                        for dx in 0..kw {
                            let iy = (oy * stride + dy) as isize - *padding as isize;
                            let ix = (ox * stride + dx) as isize - *padding as isize;
                            let xv = if iy < 0 || ix < 0 || iy >= h || ix >= wd {
                                E::f(0.0)
                            } else {
                                x.at(&[b, ci, iy as usize, ix as usize])
                            };
                            let wv = w.at(&[co, ci, dy, dx]);
                            terms.push(if dt == Dt::F32 {
                                exact_product(xv, wv)
                            } else {
                                binary(Bin::Mul, xv, wv, dt)
                            });
                        }
                    }
                }
                sum_to(&terms, dt)
            })
        }
        Op::Func(f) => elementwise(&shape, dt, srcs, |x| composite::unary(*f, x[0], dt)),
        Op::Func2(f) => elementwise(&shape, dt, srcs, |x| composite::binary(*f, x[0], x[1], dt)),
        Op::Sort { axis, descending, k, indices: false } => composite::sort(srcs[0], *axis, *descending, *k, &shape),
        Op::Sort { axis, descending, indices: true, .. } => composite::argsort(srcs[0], *axis, *descending),
        Op::Softmax { axis, log } => composite::softmax(srcs[0], *axis, *log),
        Op::Unfold { axis, step, .. } => composite::unfold(srcs[0], *axis, *step, &shape),
        Op::Diagonal(offset) => composite::diagonal(srcs[0], *offset, &shape),
        Op::Diag(offset) => composite::diag(srcs[0], *offset, &shape),
        Op::Norm(kind) => composite::norm(srcs[0], *kind),
        Op::Attention { causal } => composite::attention(srcs[0], srcs[1], srcs[2], *causal, &shape),
        Op::MaxPool { kernel, stride, indices } => composite::max_pool(srcs[0], *kernel, *stride, *indices, &shape),
        Op::Decomp(what) => decomp::decomp(srcs[0], *what, &shape),
    }
}

/// `a * b` unrounded (exact in f64 for f32 operands), with its error bound.
fn exact_product(a: E, b: E) -> E {
    if a.unsure || b.unsure {
        return E::unsure();
    }
    let v = a.v * b.v;
    // A product past f32's range is infinite after a multiply but finite inside an FMA: which
    // one a kernel does is its choice, so the sum is not determined.
    if v.is_finite() && v.abs() > f32::MAX as f64 {
        return E::unsure();
    }
    E { v, i: 0, e: a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e, unsure: false }
}

/// Every node's reference value.
pub fn evaluate(g: &Graph) -> Vec<Arr> {
    let mut vals: Vec<Arr> = Vec::with_capacity(g.nodes.len());
    for node in &g.nodes {
        let srcs: Vec<&Arr> = node.src.iter().map(|&i| &vals[i]).collect();
        let v = eval_node(node, &srcs);
        debug_assert_eq!(v.data.len(), node.shape.iter().product::<usize>());
        vals.push(v);
    }
    vals
}
