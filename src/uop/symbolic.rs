//! The symbolic simplifier: constant folding, algebraic identities, combining like terms,
//! div/mod folding and comparisons folded by range analysis, as rules for `graph_rewrite`.
//!
//! Every rule holds for all values of its variables under the IR's semantics: C integer
//! arithmetic that wraps at the dtype's width (IDIV truncates, MOD takes the dividend's sign),
//! IEEE floats rounded to their dtype. Rules that reason about values (div/mod splitting,
//! comparison rewriting) first prove with range analysis that the expression cannot wrap.
//!
//! Canonical form of integer arithmetic (what [`simplify`] produces, so that like terms meet):
//! - a sum is a left-leaning ADD chain of terms `base` or `base * c` (constant on the right),
//!   sorted by a deterministic structural order, each base once, then the constant last:
//!   `r0*64 + r1 + 3`;
//! - `a - b` is `a + b*-1`, `-a` is `a*-1`; a constant times a sum is distributed;
//! - a product of two non-constant factors has them in structural order, constants pulled out:
//!   `(a*b)*3`;
//! - a constant divisor or modulus is positive.
//!
//! The rules only rewrite kernel-level nodes (no shape): tensor-level graphs are left alone,
//! since a rule result such as a fresh constant would have no shape there.

use super::dtype::{round_float, wrap_int, ConstValue, DType, Scalar};
use super::node::{Arg, UOp};
use super::ops::Ops;
use super::pattern::{graph_rewrite, rule, PatternMatcher, RewriteMode, UPat};
use std::cmp::Ordering;
use std::sync::OnceLock;

/// Simplifies an expression (index arithmetic, validity masks, constant ALU).
pub fn simplify(u: &UOp) -> UOp {
    graph_rewrite(u, symbolic(), RewriteMode::BottomUp)
}

/// The simplifier's rule table (built once). Other passes can `extend` a copy of their own
/// rules with it via [`symbolic_rules`].
pub fn symbolic() -> &'static PatternMatcher<()> {
    static PM: OnceLock<PatternMatcher<()>> = OnceLock::new();
    PM.get_or_init(symbolic_rules)
}

// ---------------------------------------------------------------- node classes

/// A kernel-level node: rules here build kernel-level constants, which a tensor-level node
/// (with a shape) cannot take as sources.
fn kernel(u: &UOp) -> bool {
    u.try_shape().is_none()
}
fn kernel_scalar(u: &UOp) -> bool {
    kernel(u) && u.dtype().is_scalar()
}
/// Scalar integer arithmetic (ring identities hold for every width, u64 included).
fn kernel_int(u: &UOp) -> bool {
    kernel_scalar(u) && u.dtype().is_int()
}
/// Integer index math whose values range analysis knows: scalar ints except u64 (whose
/// values above 2^63 the i64 bounds cannot describe).
fn is_index(u: &UOp) -> bool {
    u.dtype().is_int() && u.dtype().is_scalar() && u.dtype().scalar != Scalar::U64
}
fn kernel_index(u: &UOp) -> bool {
    kernel(u) && is_index(u)
}
fn kernel_float(u: &UOp) -> bool {
    kernel_scalar(u) && u.dtype().is_float()
}

fn int(dt: DType, v: i64) -> UOp {
    UOp::int(dt, v)
}
fn add(a: UOp, b: UOp) -> UOp {
    UOp::alu(Ops::ADD, vec![a, b])
}
fn mul(a: UOp, b: UOp) -> UOp {
    UOp::alu(Ops::MUL, vec![a, b])
}
fn not(x: &UOp) -> UOp {
    x.ne(&UOp::bool(true))
}
/// `x` if it is a logical NOT (`CMPNE(y, true)` on bools), its operand.
fn negated(x: &UOp) -> Option<&UOp> {
    let s = x.src();
    (x.op() == Ops::CMPNE && s[0].dtype() == DType::BOOL && s[1].as_int() == Some(1)).then(|| &s[0])
}

// ---------------------------------------------------------------- the rule table

/// Builds the simplifier's rules (see the module docs). Order matters: folding first.
pub fn symbolic_rules() -> PatternMatcher<()> {
    let x = || UPat::var("x");
    let n = |op: Ops| UPat::op(op).named("n");
    let foldable: Vec<Ops> = Ops::ALU.iter().copied().chain([Ops::CAST]).collect();
    PatternMatcher::new(vec![
        // Constants: every ALU op on constants, and any int/bool node range analysis pins.
        rule(UPat::ops(&foldable).named("n").check(kernel_scalar), |b| fold(&b["n"])),
        // Identities that hold for every dtype (x*1 is exact for floats too).
        rule((x() * UPat::cnst_int(1)).check(kernel), |b| Some(b["x"].clone())),
        rule(x().max(x()).check(kernel), |b| Some(b["x"].clone())),
        rule(UPat::var("c").where_(x(), x()).check(kernel), |b| Some(b["x"].clone())),
        rule(x().lt(x()).check(kernel_scalar), |_| Some(UOp::bool(false))),
        rule(-(-x()), |b| Some(b["x"].clone())),
        rule(n(Ops::CAST).check(kernel), |b| cast_rule(&b["n"])),
        rule(n(Ops::WHERE).check(kernel), |b| where_rule(&b["n"])),
        // Integer arithmetic into canonical form.
        rule(n(Ops::ADD).check(kernel_int), |b| int_add(&b["n"])),
        rule(n(Ops::MUL).check(kernel_int), |b| int_mul(&b["n"])),
        rule(n(Ops::SUB).check(kernel_int), |b| {
            let s = b["n"].src();
            Some(add(s[0].clone(), mul(s[1].clone(), s[1].c(-1))))
        }),
        rule(n(Ops::NEG).check(kernel_int), |b| Some(mul(b["n"].src()[0].clone(), b["n"].c(-1)))),
        rule(n(Ops::IDIV).check(kernel_index), |b| int_idiv(&b["n"])),
        rule(n(Ops::MOD).check(kernel_index), |b| int_mod(&b["n"])),
        rule(n(Ops::MAX).check(kernel_int), |b| int_max(&b["n"])),
        rule(UPat::ops(&[Ops::AND, Ops::OR, Ops::XOR]).named("n").check(kernel_scalar), |b| bitwise(&b["n"])),
        rule(UPat::ops(&[Ops::SHL, Ops::SHR]).named("n").check(kernel_int), |b| {
            let s = b["n"].src();
            (s[1].as_int() == Some(0)).then(|| s[0].clone())
        }),
        // Comparisons.
        rule(UPat::ops(&[Ops::CMPNE, Ops::CMPEQ]).named("n").check(kernel), |b| cmp_eq_ne(&b["n"])),
        rule(n(Ops::CMPLT).check(kernel), |b| cmp_lt(&b["n"])),
        // Floats: only what IEEE arithmetic makes exact.
        rule(UPat::ops(&[Ops::ADD, Ops::MUL]).named("n").check(kernel_float), |b| float_add_mul(&b["n"])),
        rule((x() - UPat::cnst_float(0.0)).named("n").check(kernel_float), |b| {
            // x - 0.0 == x for every x (-0.0 included), but not x - (-0.0).
            let zero = b["n"].src()[1].const_value().map(|c| c.as_f64().to_bits());
            (zero == Some(0f64.to_bits())).then(|| b["x"].clone())
        }),
        rule(UPat::alu(Ops::FDIV, vec![x(), UPat::cnst_int(1)]).check(kernel_float), |b| Some(b["x"].clone())),
    ])
}

// ---------------------------------------------------------------- constant folding

/// Folds an op on constants, or an int/bool node whose range is a single value.
fn fold(n: &UOp) -> Option<UOp> {
    if n.src().iter().all(|s| s.op() == Ops::CONST) {
        if let Some(v) = exec(n) {
            return Some(UOp::cnst(n.dtype(), v));
        }
    }
    let dt = n.dtype();
    let (lo, hi) = n.bounds();
    ((dt.is_int() || dt.is_bool()) && lo == hi).then(|| UOp::cnst(dt, ConstValue::Int(lo)))
}

/// The value of a scalar ALU op (or CAST) on constant sources, with C semantics; `None` where
/// C leaves it undefined (division by zero, INT_MIN / -1, over-wide shifts) or where the
/// backends may differ (float MULACC fused or not).
fn exec(n: &UOp) -> Option<ConstValue> {
    let (op, dt, src) = (n.op(), n.dtype(), n.src());
    let c = |i: usize| src[i].const_value().expect("exec on a non-constant");
    let sdt = src[0].dtype();
    match op {
        Ops::CAST => Some(c(0).cast_from(sdt, dt)),
        Ops::WHERE => Some(if c(0).as_bool() { c(1) } else { c(2) }),
        Ops::CMPLT | Ops::CMPNE | Ops::CMPEQ => {
            let ord = if sdt.is_float() {
                c(0).as_f64().partial_cmp(&c(1).as_f64())
            } else if sdt.scalar == Scalar::U64 {
                Some((c(0).as_i64() as u64).cmp(&(c(1).as_i64() as u64)))
            } else {
                Some(c(0).as_i64().cmp(&c(1).as_i64()))
            };
            // NaN is unordered: only CMPNE is true.
            Some(ConstValue::Bool(match op {
                Ops::CMPLT => ord == Some(Ordering::Less),
                Ops::CMPNE => ord != Some(Ordering::Equal),
                _ => ord == Some(Ordering::Equal),
            }))
        }
        _ if dt.is_float() => {
            let v: [f64; 3] = std::array::from_fn(|i| src.get(i).map_or(0.0, |s| s.const_value().unwrap().as_f64()));
            float_op(op, v).map(|f| ConstValue::Float(round_float(f, dt)))
        }
        _ if dt.is_int() || dt.is_bool() => {
            let v: [i64; 3] = std::array::from_fn(|i| src.get(i).map_or(0, |s| s.const_value().unwrap().as_i64()));
            int_op(op, dt, v).map(|i| ConstValue::Int(i).cast(dt))
        }
        _ => None,
    }
}

fn float_op(op: Ops, [a, b, _]: [f64; 3]) -> Option<f64> {
    Some(match op {
        Ops::ADD => a + b,
        Ops::SUB => a - b,
        Ops::MUL => a * b,
        Ops::FDIV => a / b,
        // `a < b ? b : a`, as the renderers and the interpreter define MAX.
        Ops::MAX => {
            if a < b {
                b
            } else {
                a
            }
        }
        Ops::NEG => -a,
        Ops::RECIP => 1.0 / a,
        Ops::SQRT => a.sqrt(),
        Ops::EXP2 => a.exp2(),
        Ops::LOG2 => a.log2(),
        Ops::SIN => a.sin(),
        Ops::TRUNC => a.trunc(),
        _ => return None,
    })
}

/// Integer op on raw values (sign-extended for signed dtypes, the bit pattern for u64); the
/// caller wraps the result to the dtype.
fn int_op(op: Ops, dt: DType, [a, b, c]: [i64; 3]) -> Option<i64> {
    let u64_dt = dt.scalar == Scalar::U64;
    let bits = dt.bits() as i64;
    Some(match op {
        Ops::ADD => a.wrapping_add(b),
        Ops::SUB => a.wrapping_sub(b),
        Ops::MUL => a.wrapping_mul(b),
        Ops::MULACC => a.wrapping_mul(b).wrapping_add(c),
        Ops::NEG => a.wrapping_neg(),
        Ops::IDIV | Ops::MOD => {
            if b == 0 || (b == -1 && a as i128 == dt.int_range().0) {
                return None;
            }
            match (op, u64_dt) {
                (Ops::IDIV, true) => ((a as u64) / (b as u64)) as i64,
                (_, true) => ((a as u64) % (b as u64)) as i64,
                (Ops::IDIV, false) => a / b,
                _ => a % b,
            }
        }
        Ops::MAX if u64_dt => (a as u64).max(b as u64) as i64,
        Ops::MAX => a.max(b),
        Ops::AND => a & b,
        Ops::OR => a | b,
        Ops::XOR => a ^ b,
        Ops::SHL | Ops::SHR if !(0..bits).contains(&b) => return None,
        Ops::SHL => a.wrapping_shl(b as u32),
        Ops::SHR if u64_dt => ((a as u64) >> b) as i64,
        Ops::SHR => a >> b,
        Ops::TRUNC => a,
        _ => return None,
    })
}

// ---------------------------------------------------------------- deterministic term order

/// A total order on nodes by structure (op, dtype, arg, then sources, depth first). Terms are
/// sorted with it, so the same expression comes out identical in every run (kernel sources
/// and their cache keys must not depend on addresses). Interning makes structurally equal
/// nodes pointer-equal, so `Equal` means the same node. Iterative: terms may be deep.
fn node_cmp(a: &UOp, b: &UOp) -> Ordering {
    let mut todo: Vec<(&UOp, &UOp)> = Vec::new();
    let (mut x, mut y) = (a, b);
    loop {
        if x != y {
            let o = x
                .op()
                .cmp(&y.op())
                .then(x.dtype().cmp(&y.dtype()))
                .then(x.src().len().cmp(&y.src().len()))
                .then_with(|| arg_cmp(x.arg(), y.arg()));
            if o != Ordering::Equal {
                return o;
            }
            todo.extend(x.src().iter().zip(y.src()).rev());
        }
        match todo.pop() {
            Some((p, q)) => (x, y) = (p, q),
            None => return Ordering::Equal,
        }
    }
}

fn arg_cmp(a: &Arg, b: &Arg) -> Ordering {
    use Arg::*;
    fn rank(a: &Arg) -> u8 {
        match a {
            None => 0,
            Const(_) => 1,
            Int(_) => 2,
            Str(_) => 3,
            Shape(_) => 4,
            Axes(_) => 5,
            Pairs(_) => 6,
            Reduce(..) => 7,
            Op(_) => 8,
            Range(..) => 9,
            Buffer(_) => 10,
            Var(..) => 11,
            Special(..) => 12,
            DimPairs(_) => 13,
            DimShape(_) => 14,
        }
    }
    fn const_key(c: &ConstValue) -> (u8, i64, u64) {
        match c {
            ConstValue::Bool(b) => (0, *b as i64, 0),
            ConstValue::Int(i) => (1, *i, 0),
            ConstValue::Float(f) => (2, 0, f.to_bits()),
        }
    }
    match (a, b) {
        (Const(x), Const(y)) => const_key(x).cmp(&const_key(y)),
        (Int(x), Int(y)) => x.cmp(y),
        (Str(x), Str(y)) => x.cmp(y),
        (Shape(x), Shape(y)) | (Axes(x), Axes(y)) => x.cmp(y),
        (Pairs(x), Pairs(y)) => x.cmp(y),
        (Reduce(o, x), Reduce(p, y)) => (o, x).cmp(&(p, y)),
        (Op(x), Op(y)) => x.cmp(y),
        (Range(i, t), Range(j, u)) => (i, t).cmp(&(j, u)),
        // Buffers only occur in tensor graphs; their order does not reach kernel code.
        (Buffer(x), Buffer(y)) => {
            (std::sync::Arc::as_ptr(&x.0) as *const u8).cmp(&(std::sync::Arc::as_ptr(&y.0) as *const u8))
        }
        (Var(n, l, h), Var(m, l2, h2)) => (n, l, h).cmp(&(m, l2, h2)),
        (Special(k, d), Special(k2, d2)) => (*k as u8, d).cmp(&(*k2 as u8, d2)),
        _ => rank(a).cmp(&rank(b)),
    }
}

// ---------------------------------------------------------------- sums of terms

/// At most this many terms are gathered from one sum (beyond, it is left as it is: longer
/// sums are not index math, and gathering is linear in the sum's length).
const MAX_TERMS: usize = 64;

type Iv = (i128, i128);

/// Integer arithmetic viewed as `Σ coef·base + konst`. Coefficients and the constant hold the
/// dtype's raw values (wrapped to its width); for dtypes other than u64 that is the
/// mathematical value.
#[derive(Clone)]
struct Sum {
    dt: DType,
    terms: Vec<(UOp, i64)>,
    konst: i64,
}

/// `b * c` (constant on the right) as `(b, c)`, anything else as `(x, 1)`.
fn split_term(x: &UOp) -> (UOp, i64) {
    if x.op() == Ops::MUL {
        if let Some(c) = x.src()[1].as_int() {
            return (x.src()[0].clone(), c);
        }
    }
    (x.clone(), 1)
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Sum {
    /// The terms of `x`, flattening ADD chains. `None` for more than [`MAX_TERMS`] terms.
    fn of(x: &UOp) -> Option<Sum> {
        let dt = x.dtype();
        let mut s = Sum { dt, terms: Vec::new(), konst: 0 };
        let mut stack = vec![x];
        while let Some(n) = stack.pop() {
            if n.op() == Ops::ADD && n.dtype() == dt {
                stack.push(&n.src()[1]);
                stack.push(&n.src()[0]);
            } else if let Some(c) = n.as_int() {
                s.konst = s.wrap(s.konst.wrapping_add(c));
            } else {
                s.terms.push(split_term(n));
                if s.terms.len() > MAX_TERMS {
                    return None;
                }
            }
        }
        Some(s)
    }

    fn wrap(&self, v: i64) -> i64 {
        wrap_int(v, self.dt)
    }

    fn with(&self, terms: Vec<(UOp, i64)>, konst: i64) -> Sum {
        Sum { dt: self.dt, terms, konst }
    }

    /// Sorts the terms, merges equal bases and drops zero coefficients; then recombines the
    /// pieces a reshape splits an index into (`(y/c)*c + y%c = y`, see [`Sum::join_divmod`]).
    fn normalize(&mut self) {
        loop {
            self.terms.sort_by(|a, b| node_cmp(&a.0, &b.0));
            let mut merged: Vec<(UOp, i64)> = Vec::with_capacity(self.terms.len());
            for (b, c) in self.terms.drain(..) {
                match merged.last_mut() {
                    Some((lb, lc)) if *lb == b => *lc = wrap_int(lc.wrapping_add(c), self.dt),
                    _ => merged.push((b, c)),
                }
            }
            merged.retain(|(_, c)| *c != 0);
            self.terms = merged;
            if !self.join_divmod() {
                return;
            }
        }
    }

    /// Replaces one pair of terms by its combination (see [`Sum::find_join`]); returns whether
    /// it did.
    fn join_divmod(&mut self) -> bool {
        let Some((i, j, new)) = self.find_join() else { return false };
        let m = self.terms[i].1;
        self.terms.remove(i.max(j));
        self.terms.remove(i.min(j));
        self.terms.push((new, m));
        true
    }

    /// A pair of terms `(i, j)` that combines into one term `(new, coef of i)`:
    /// `(y/a)·am + (y%a)·m = y·m` (C's `y == (y/a)*a + y%a` for every y) and
    /// `((y/a)%b)·am + (y%a)·m = (y%(ab))·m` (a, b > 0; also for every y).
    fn find_join(&self) -> Option<(usize, usize, UOp)> {
        for (i, (md, m)) in self.terms.iter().enumerate() {
            let Some(a) = (md.op() == Ops::MOD).then(|| md.src()[1].as_int()).flatten() else { continue };
            let y = &md.src()[0];
            let want = self.wrap(a.wrapping_mul(*m));
            let divides_y = |u: &UOp| u.op() == Ops::IDIV && u.src()[0] == *y && u.src()[1].as_int() == Some(a);
            for (j, (other, k)) in self.terms.iter().enumerate() {
                if j == i || *k != want {
                    continue;
                }
                if divides_y(other) {
                    return Some((i, j, y.clone()));
                }
                if other.op() == Ops::MOD && a > 0 && divides_y(&other.src()[0]) {
                    let b = other.src()[1].as_int().unwrap_or(0);
                    let ab = a as i128 * b as i128;
                    if b > 0 && ab <= self.dt.int_range().1 {
                        return Some((i, j, y.modulo(&y.c(ab as i64))));
                    }
                }
            }
        }
        None
    }

    /// Whether `n` is exactly what [`Sum::normalize`] then [`Sum::build`] would give for these
    /// terms: the common case, checked without building (or interning) anything.
    fn is_canonical(&self, n: &UOp) -> bool {
        let normal = self.terms.iter().all(|(_, c)| *c != 0)
            && self.terms.windows(2).all(|w| node_cmp(&w[0].0, &w[1].0) == Ordering::Less)
            && self.find_join().is_none();
        if !normal || self.terms.is_empty() {
            return false;
        }
        let mut cur = n;
        if self.konst != 0 {
            if cur.op() != Ops::ADD || cur.src()[1].as_int() != Some(self.konst) {
                return false;
            }
            cur = &cur.src()[0];
        }
        for (i, (b, c)) in self.terms.iter().enumerate().rev() {
            let t = if i == 0 {
                cur
            } else if cur.op() == Ops::ADD {
                let t = &cur.src()[1];
                cur = &cur.src()[0];
                t
            } else {
                return false;
            };
            let built = if *c == 1 { t == b } else { split_term(t) == (b.clone(), *c) && t.op() == Ops::MUL };
            if !built {
                return false;
            }
        }
        true
    }

    /// The canonical node: a left-leaning ADD chain of the terms, then the constant.
    fn build(&self) -> UOp {
        let mut acc: Option<UOp> = None;
        for (b, c) in &self.terms {
            let t = if *c == 1 { b.clone() } else { mul(b.clone(), int(self.dt, *c)) };
            acc = Some(match acc {
                None => t,
                Some(a) => add(a, t),
            });
        }
        match acc {
            None => int(self.dt, self.konst),
            Some(a) if self.konst != 0 => add(a, int(self.dt, self.konst)),
            Some(a) => a,
        }
    }

    /// The exact (unwrapped) interval of the sum's value, if it fits the dtype. When it does,
    /// the machine value of any node computing this sum is its mathematical value: the
    /// machine value is congruent to it modulo 2^bits and lies in the dtype's range.
    fn exact(&self) -> Option<Iv> {
        let (dlo, dhi) = self.dt.int_range();
        let (mut lo, mut hi) = (self.konst as i128, self.konst as i128);
        for (b, c) in &self.terms {
            if !is_index(b) {
                return None;
            }
            let (p, q) = (b.vmin() as i128 * *c as i128, b.vmax() as i128 * *c as i128);
            lo = lo.saturating_add(p.min(q));
            hi = hi.saturating_add(p.max(q));
        }
        (dlo <= lo && hi <= dhi).then_some((lo, hi))
    }

    /// GCD of the coefficients' magnitudes (0 for no terms).
    fn coef_gcd(&self) -> i128 {
        self.terms.iter().fold(0, |g, (_, c)| gcd(g, *c as i128))
    }

    /// The terms with every coefficient divided by `g` (which divides them all).
    fn terms_div(&self, g: i64) -> Vec<(UOp, i64)> {
        self.terms.iter().map(|(b, c)| (b.clone(), c / g)).collect()
    }
}

fn fits(dt: DType, v: i128) -> bool {
    let (lo, hi) = dt.int_range();
    lo <= v && v <= hi
}

// ---------------------------------------------------------------- integer rules

/// ADD into canonical form: flatten, combine like terms, sort, constant last.
fn int_add(n: &UOp) -> Option<UOp> {
    let mut s = Sum::of(n)?;
    if s.is_canonical(n) {
        return None;
    }
    s.normalize();
    Some(s.build())
}

/// `Some((x, c))` if `u` is `x * c` with a constant `c`.
fn const_factor(u: &UOp) -> Option<(&UOp, i64)> {
    (u.op() == Ops::MUL).then(|| Some((&u.src()[0], u.src()[1].as_int()?))).flatten()
}

/// MUL into canonical form.
fn int_mul(n: &UOp) -> Option<UOp> {
    let (a, b) = (&n.src()[0], &n.src()[1]);
    match (a.as_int(), b.as_int()) {
        (Some(_), None) => Some(mul(b.clone(), a.clone())),
        (None, Some(0)) => Some(int(n.dtype(), 0)),
        (None, Some(1)) => Some(a.clone()),
        (None, Some(c)) => {
            if let Some((x, c0)) = const_factor(a) {
                return Some(mul(x.clone(), int(n.dtype(), c0.wrapping_mul(c))));
            }
            if a.op() != Ops::ADD {
                return None;
            }
            // Distribute the constant over the sum: (x + 3)*2 = x*2 + 6.
            let s = Sum::of(a)?;
            let terms = s.terms.iter().map(|(t, k)| (t.clone(), s.wrap(k.wrapping_mul(c)))).collect();
            let mut scaled = s.with(terms, s.wrap(s.konst.wrapping_mul(c)));
            scaled.normalize();
            Some(scaled.build())
        }
        (None, None) => {
            // Constants out of products, factors in structural order: (x*c)*y = (x*y)*c.
            if let Some((x, c)) = const_factor(a) {
                return Some(mul(mul(x.clone(), b.clone()), int(n.dtype(), c)));
            }
            if let Some((y, c)) = const_factor(b) {
                return Some(mul(mul(a.clone(), y.clone()), int(n.dtype(), c)));
            }
            (node_cmp(b, a) == Ordering::Less).then(|| mul(b.clone(), a.clone()))
        }
        (Some(_), Some(_)) => None,
    }
}

/// MAX on integers: constant right, and decided by ranges when they do not overlap.
fn int_max(n: &UOp) -> Option<UOp> {
    let (a, b) = (&n.src()[0], &n.src()[1]);
    if a.op() == Ops::CONST && b.op() != Ops::CONST {
        return Some(b.maximum(a));
    }
    if !is_index(n) {
        return None;
    }
    if a.vmin() >= b.vmax() {
        Some(a.clone())
    } else if b.vmin() >= a.vmax() {
        Some(b.clone())
    } else {
        None
    }
}

/// The largest value of the dtype's range, and its smallest.
fn dt_min(dt: DType) -> i128 {
    dt.int_range().0
}

/// Integer division.
fn int_idiv(n: &UOp) -> Option<UOp> {
    let (x, d) = (&n.src()[0], &n.src()[1]);
    let dt = n.dtype();
    let Some(c) = d.as_int() else {
        // x / x = 1 when x is never 0.
        return (x == d && (x.vmin() > 0 || x.vmax() < 0)).then(|| int(dt, 1));
    };
    match c {
        0 => return None,
        1 => return Some(x.clone()),
        // Truncation is odd: x / c == -(x / -c).
        _ if c < 0 => return (c as i128 != dt_min(dt)).then(|| mul(x.idiv(&int(dt, -c)), int(dt, -1))),
        _ => {}
    }
    let inner_c = x.src().get(1).and_then(|s| s.as_int()).filter(|&a| a > 0);
    if let Some(a) = inner_c {
        // (y / a) / c == y / (a*c) for every y (a, c > 0).
        if x.op() == Ops::IDIV && fits(dt, a as i128 * c as i128) {
            return Some(x.src()[0].idiv(&int(dt, a * c)));
        }
        // (y % m) / c == (y / c) % (m / c) for every y when c divides m.
        if x.op() == Ops::MOD && a % c == 0 {
            return Some(x.src()[0].idiv(&int(dt, c)).modulo(&int(dt, a / c)));
        }
    }
    let s = Sum::of(x)?;
    let ix = s.exact()?;
    if let Some((q, r)) = split_multiples(&s, c, ix) {
        return Some(add(q.build(), r.build().idiv(&int(dt, c))));
    }
    let (g, xs) = common_factor(&s, c, ix)?;
    let cg = int(dt, c / g);
    Some(if c == g { xs.build() } else { xs.build().idiv(&cg) })
}

/// Integer remainder.
fn int_mod(n: &UOp) -> Option<UOp> {
    let (x, d) = (&n.src()[0], &n.src()[1]);
    let dt = n.dtype();
    let Some(c) = d.as_int() else {
        if x == d && (x.vmin() > 0 || x.vmax() < 0) {
            return Some(int(dt, 0));
        }
        // |x| below every |d|: x % d == x.
        let below = x.vmin() >= 0 && x.vmax() < d.vmin() || x.vmax() <= 0 && d.vmin() > 0 && -x.vmin() < d.vmin();
        return below.then(|| x.clone());
    };
    match c {
        0 => return None,
        1 | -1 => return Some(int(dt, 0)),
        // The sign of C's remainder follows the dividend only: x % c == x % -c.
        _ if c < 0 => return (c as i128 != dt_min(dt)).then(|| x.modulo(&int(dt, -c))),
        _ => {}
    }
    // (y % m) % c == y % c for every y when c divides m.
    if x.op() == Ops::MOD && x.src()[1].as_int().is_some_and(|m| m > 0 && m % c == 0) {
        return Some(x.src()[0].modulo(&int(dt, c)));
    }
    // One quotient over x's whole range: x % c == x - q*c.
    let (lo, hi) = x.bounds();
    if lo / c == hi / c {
        let q = lo / c;
        return Some(if q == 0 { x.clone() } else { add(x.clone(), int(dt, -q * c)) });
    }
    let s = Sum::of(x)?;
    let ix = s.exact()?;
    if let Some((_, r)) = split_multiples(&s, c, ix) {
        return Some(r.build().modulo(&int(dt, c)));
    }
    // Coefficients and constant at least c reduced mod c: x and x' differ by a multiple of c,
    // so x % c == x' % c when both are >= 0 (C's remainder is then the true one).
    if ix.0 >= 0 && (s.konst >= c || s.terms.iter().any(|(_, k)| *k >= c)) {
        let terms: Vec<(UOp, i64)> = s
            .terms
            .iter()
            .filter(|(_, k)| *k <= 0 || k % c != 0)
            .map(|(b, k)| (b.clone(), if *k > 0 { k % c } else { *k }))
            .collect();
        let r = s.with(terms, if s.konst > 0 { s.konst % c } else { s.konst });
        if r.exact().is_some_and(|ir| ir.0 >= 0) {
            return Some(r.build().modulo(&int(dt, c)));
        }
    }
    // x = g*X + k with 0 <= x: x % (g*c') == g*((X + k/g) % c') + k%g.
    let (g, xs) = common_factor(&s, c, ix)?;
    let kr = s.konst.rem_euclid(g);
    let inner = if c == g { int(dt, 0) } else { mul(xs.build().modulo(&int(dt, c / g)), int(dt, g)) };
    Some(add(inner, int(dt, kr)))
}

/// Splits `x = c·q + r` (the terms whose coefficient `c` divides go to `q`, and a multiple of
/// `c` from the constant), when C's truncating division agrees: `x / c == q + r / c` and
/// `x % c == r % c` hold when x and r have the same sign (both >= 0 or both <= 0). Returns
/// `None` when nothing would move or the signs cannot be proven. `ix` is x's exact interval.
fn split_multiples(s: &Sum, c: i64, ix: Iv) -> Option<(Sum, Sum)> {
    let (mut qt, mut rt) = (Vec::new(), Vec::new());
    for (b, k) in &s.terms {
        if k % c == 0 {
            qt.push((b.clone(), k / c));
        } else {
            rt.push((b.clone(), *k));
        }
    }
    // Either take the constant's floor multiple (remainder in [0, c)) or its truncated one.
    let splits = [(s.konst.div_euclid(c), s.konst.rem_euclid(c)), (s.konst / c, s.konst % c)];
    for (i, (kq, kr)) in splits.into_iter().enumerate() {
        if (qt.is_empty() && kq == 0) || (i == 1 && kq == splits[0].0) {
            continue;
        }
        let (q, r) = (s.with(qt.clone(), kq), s.with(rt.clone(), kr));
        let (Some(_), Some(ir)) = (q.exact(), r.exact()) else { continue };
        if (ix.0 >= 0 && ir.0 >= 0) || (ix.1 <= 0 && ir.1 <= 0) {
            return Some((q, r));
        }
    }
    None
}

/// For `x >= 0` whose coefficients share a factor `g > 1` with `c`: `(g, X + k div g)` where
/// `x = g·X + k`. Then `x / c == (X + k div g) / (c/g)` (floor division nests).
fn common_factor(s: &Sum, c: i64, ix: Iv) -> Option<(i64, Sum)> {
    if ix.0 < 0 || s.terms.is_empty() {
        return None;
    }
    let g = gcd(s.coef_gcd(), c as i128) as i64;
    if g <= 1 {
        return None;
    }
    let xs = s.with(s.terms_div(g), s.konst.div_euclid(g));
    xs.exact()?;
    Some((g, xs))
}

// ---------------------------------------------------------------- comparisons

/// `a < b`: a linear side against a constant is normalized (constant moved over, common
/// factor divided out, positive coefficients); decided ones fold by range analysis.
fn cmp_lt(n: &UOp) -> Option<UOp> {
    let (a, b) = (&n.src()[0], &n.src()[1]);
    if !is_index(a) {
        return None;
    }
    match (a.as_int(), b.as_int()) {
        (None, Some(c)) => lt_const(a, c as i128, false),
        (Some(c), None) => lt_const(b, c as i128, true),
        _ => None,
    }
}

/// `s < c` (or `c < s` when `flipped`) rewritten over `s = ±g·X + k` with X's coefficients
/// positive-leaning and coprime. Valid when s cannot wrap (its exact interval fits).
fn lt_const(side: &UOp, c: i128, flipped: bool) -> Option<UOp> {
    let s = Sum::of(side)?;
    s.exact()?;
    let g = s.coef_gcd();
    let neg = s.terms.iter().all(|(_, k)| *k < 0);
    if g == 1 && s.konst == 0 && !neg {
        return None;
    }
    let sign = if neg { -1 } else { 1 };
    let xs = s.with(s.terms_div((g * sign) as i64), 0);
    xs.exact()?;
    let d = c - s.konst as i128;
    let dt = s.dt;
    let floor = |p: i128, q: i128| p.div_euclid(q);
    let ceil = |p: i128, q: i128| -(-p).div_euclid(q);
    // s < c  <=>  ±g·X < d. Positive: X < ceil(d/g). Negative: X > -d/g, i.e. floor(-d/g) < X.
    // c < s  <=>  d < ±g·X. Positive: floor(d/g) < X. Negative: X < ceil(-d/g).
    let (bound, x_on_left) = match (flipped, neg) {
        (false, false) => (ceil(d, g), true),
        (false, true) => (floor(-d, g), false),
        (true, false) => (floor(d, g), false),
        (true, true) => (ceil(-d, g), true),
    };
    if !fits(dt, bound) {
        return None;
    }
    let (x, k) = (xs.build(), int(dt, bound as i64));
    Some(if x_on_left { x.lt(&k) } else { k.lt(&x) })
}

/// CMPNE / CMPEQ: constant right, `x op x`, NOT NOT, bool comparisons with constants, and a
/// linear side against a constant normalized like [`lt_const`].
fn cmp_eq_ne(n: &UOp) -> Option<UOp> {
    let (op, a, b) = (n.op(), &n.src()[0], &n.src()[1]);
    if a.op() == Ops::CONST && b.op() != Ops::CONST {
        return Some(UOp::alu(op, vec![b.clone(), a.clone()]));
    }
    let ne = op == Ops::CMPNE;
    if a == b && n.dtype() == DType::BOOL && (a.dtype().is_int() || a.dtype().is_bool()) {
        return Some(UOp::bool(!ne));
    }
    if a.dtype() == DType::BOOL {
        // x != true is NOT x; x == true is x; x != false is x; x == false is NOT x.
        let c = b.as_int()?;
        let keep = (c == 1) != ne;
        if keep {
            return Some(a.clone());
        }
        return Some(negated(a).cloned().unwrap_or_else(|| not(a))).filter(|r| r != n);
    }
    if !is_index(a) {
        return None;
    }
    let c = b.as_int()?;
    let s = Sum::of(a)?;
    s.exact()?;
    let g = s.coef_gcd();
    let neg = s.terms.iter().all(|(_, k)| *k < 0);
    if g == 1 && s.konst == 0 && !neg {
        return None;
    }
    let d = c as i128 - s.konst as i128;
    if d % g != 0 {
        // g·X never equals d.
        return Some(UOp::bool(ne));
    }
    let sign = if neg { -1 } else { 1 };
    let target = d / g * sign;
    let xs = s.with(s.terms_div((g * sign) as i64), 0);
    xs.exact()?;
    fits(s.dt, target).then(|| UOp::alu(op, vec![xs.build(), int(s.dt, target as i64)]))
}

// ---------------------------------------------------------------- other ops

fn cast_rule(n: &UOp) -> Option<UOp> {
    let x = &n.src()[0];
    if x.dtype() == n.dtype() {
        return Some(x.clone());
    }
    // CAST(CAST(y, B), C) == CAST(y, C) when the inner cast keeps every value of y.
    if x.op() == Ops::CAST && (x.dtype().is_int() || x.dtype().is_bool()) {
        let y = &x.src()[0];
        let lossless = (is_index(y) || y.dtype() == DType::BOOL) && {
            let (lo, hi) = x.dtype().int_range();
            lo <= y.vmin() as i128 && y.vmax() as i128 <= hi
        };
        if lossless {
            return Some(y.cast(n.dtype()));
        }
    }
    None
}

fn where_rule(n: &UOp) -> Option<UOp> {
    let (c, t, f) = (&n.src()[0], &n.src()[1], &n.src()[2]);
    if let Some(v) = c.as_int() {
        return Some(if v != 0 { t.clone() } else { f.clone() });
    }
    if let Some(y) = negated(c) {
        return Some(y.where_(f, t));
    }
    if n.dtype() == DType::BOOL && c.dtype() == DType::BOOL {
        match (t.as_int(), f.as_int()) {
            (Some(1), Some(0)) => return Some(c.clone()),
            (Some(0), Some(1)) => return Some(not(c)),
            _ => {}
        }
    }
    None
}

/// AND / OR / XOR on ints and bools.
fn bitwise(n: &UOp) -> Option<UOp> {
    let (op, a, b) = (n.op(), &n.src()[0], &n.src()[1]);
    let dt = n.dtype();
    if !(dt.is_int() || dt.is_bool()) {
        return None;
    }
    if a == b {
        return Some(if op == Ops::XOR { int(dt, 0) } else { a.clone() });
    }
    if a.op() == Ops::CONST && b.op() != Ops::CONST {
        return Some(UOp::alu(op, vec![b.clone(), a.clone()]));
    }
    let c = b.as_int()?;
    let ones = if dt.is_bool() { 1 } else { wrap_int(-1, dt) };
    match op {
        Ops::AND if c == 0 => Some(int(dt, 0)),
        Ops::AND if c == ones => Some(a.clone()),
        // A low-bit mask that keeps every value a can take.
        Ops::AND if c > 0 && (c as u64 + 1).is_power_of_two() && is_index(a) && a.vmin() >= 0 && a.vmax() <= c => {
            Some(a.clone())
        }
        Ops::OR if c == 0 => Some(a.clone()),
        Ops::OR if c == ones => Some(b.clone()),
        Ops::XOR if c == 0 => Some(a.clone()),
        Ops::XOR if dt.is_bool() => Some(not(a)),
        _ => None,
    }
}

/// Float ADD/MUL: constant right (IEEE + and * are commutative), and `x + -0.0 == x` (while
/// `x + 0.0` is not: it turns -0.0 into +0.0; nor `x * 0.0`: NaN and infinities).
fn float_add_mul(n: &UOp) -> Option<UOp> {
    let (a, b) = (&n.src()[0], &n.src()[1]);
    if a.op() == Ops::CONST && b.op() != Ops::CONST {
        return Some(UOp::alu(n.op(), vec![b.clone(), a.clone()]));
    }
    let minus_zero = b.const_value().is_some_and(|c| c.as_f64().to_bits() == (-0f64).to_bits());
    (n.op() == Ops::ADD && minus_zero).then(|| a.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;

    fn r(n: i64, id: u32) -> UOp {
        UOp::range(UOp::int(DType::I32, n), id, AxisType::Reduce)
    }

    #[test]
    fn term_order_is_structural() {
        let (a, b) = (r(4, 0), r(4, 1));
        assert_eq!(node_cmp(&a, &b), Ordering::Less);
        assert_eq!(node_cmp(&(&a + 1), &(&a + 2)), Ordering::Less);
        assert_eq!(node_cmp(&(&a + 1), &(&a + 1)), Ordering::Equal);
        // Same sum either way round.
        assert_eq!(simplify(&(&b + &a)), simplify(&(&a + &b)));
    }

    #[test]
    fn reshape_roundtrips_join() {
        let x = r(512, 0);
        let two = &(&(&x / 8) * 8) + &(&x % 8);
        assert_eq!(simplify(&two), x);
        let three = (&x / 64) * 64 + (&(&x / 8) % 8) * 8 + &x % 8;
        assert_eq!(simplify(&three), x);
    }
}
