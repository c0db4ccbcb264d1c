//! Range analysis: every integer (and bool) node knows the smallest and largest value it can
//! take, computed once when the node is built. The symbolic simplifier folds comparisons,
//! divisions and modulos with these bounds.
//!
//! The bounds are sound for the values the node really takes at run time, wrapping included:
//! every interval is computed exactly in `i128` from the sources' bounds, and a result that
//! does not fit the node's dtype (so the machine value may have wrapped) becomes the dtype's
//! whole range. Operations are C's: IDIV truncates toward zero, MOD takes the dividend's sign.
//!
//! u64 nodes only get bounds when their values are provably below 2^63 - 1 (bounds are `i64`);
//! otherwise they have none, like non-integer nodes.

use super::dtype::{ConstValue, DType, Scalar};
use super::node::{Arg, UOp};
use super::ops::Ops;

type Iv = (i128, i128);

/// Bounds `(min, max)` of a node's value, or `None` for non-integer nodes. O(1): it only looks
/// at the sources' bounds.
pub(crate) fn infer_bounds(op: Ops, dtype: DType, src: &[UOp], arg: &Arg) -> Option<(i64, i64)> {
    if !dtype.is_scalar() || !(dtype.is_int() || dtype.is_bool()) {
        return None;
    }
    let (dlo, dhi) = dtype.int_range();
    let u64_node = dtype.scalar == Scalar::U64;
    // For u64 the i64 bounds can only describe values up to i64::MAX; leave one value of room
    // so that a full i64 range coming from an unknown source never counts as "small".
    let cap = if u64_node { i64::MAX as i128 - 1 } else { dhi };
    match compute(op, dtype, src, arg) {
        Some((lo, hi)) if dlo <= lo && lo <= hi && hi <= cap => Some((lo as i64, hi as i64)),
        _ if u64_node => None,
        _ => Some((dlo as i64, dhi as i64)),
    }
}

/// A source's bounds. Sources without bounds (floats, large u64) give the whole i64 range,
/// which never decides a comparison and never fits a narrower dtype.
fn iv(u: &UOp) -> Iv {
    let (lo, hi) = u.bounds();
    (lo as i128, hi as i128)
}

fn is_intlike(u: &UOp) -> bool {
    let dt = u.dtype();
    dt.is_scalar() && (dt.is_int() || dt.is_bool())
}

/// The exact interval of `op` over the sources' intervals; `None` when unknown. The caller
/// replaces a result outside the dtype by the dtype's range.
fn compute(op: Ops, dtype: DType, src: &[UOp], arg: &Arg) -> Option<Iv> {
    use Ops::*;
    let s = |i: usize| iv(&src[i]);
    match op {
        CONST => match arg {
            Arg::Const(ConstValue::Int(v)) => Some((*v as i128, *v as i128)),
            Arg::Const(ConstValue::Bool(b)) => Some((*b as i128, *b as i128)),
            _ => None,
        },
        DEFINE_VAR => match arg {
            Arg::Var(_, lo, hi) => Some((*lo as i128, *hi as i128)),
            _ => None,
        },
        // A bound variable has its variable's range, never its value: what is simplified with
        // it holds for every value, so the kernel does not change when the value does.
        BIND => Some(s(0)),
        // An empty loop never runs, so its (vacuous) range is just {0}.
        RANGE | SPECIAL => Some((0, (src.first()?.vmax() as i128 - 1).max(0))),
        ADD => Some(add(s(0), s(1))),
        SUB => Some(add(s(0), neg(s(1)))),
        MUL => Some(mul(s(0), s(1))),
        MULACC => Some(add(mul(s(0), s(1)), s(2))),
        NEG => Some(neg(s(0))),
        IDIV => idiv(s(0), s(1)),
        MOD => imod(s(0), s(1)),
        MAX => {
            let (a, b) = (s(0), s(1));
            Some((a.0.max(b.0), a.1.max(b.1)))
        }
        AND | OR | XOR => bitwise(op, dtype, s(0), s(1)),
        SHL => {
            let (a, k) = (s(0), shift_amount(dtype, s(1))?);
            (k.0 == k.1).then(|| (a.0 << k.0, a.1 << k.0))
        }
        SHR => {
            let (a, k) = (s(0), shift_amount(dtype, s(1))?);
            Some(corners(a, k, |x, y| x >> y))
        }
        CMPLT | CMPNE | CMPEQ => Some(compare(op, src)),
        WHERE => {
            let (c, t, f) = (s(0), s(1), s(2));
            Some(match c {
                (1, _) => t,
                (_, 0) => f,
                _ => (t.0.min(f.0), t.1.max(f.1)),
            })
        }
        CAST => cast(dtype, &src[0]),
        TRUNC => Some(s(0)),
        _ => None,
    }
}

fn add(a: Iv, b: Iv) -> Iv {
    (a.0 + b.0, a.1 + b.1)
}

fn neg(a: Iv) -> Iv {
    (-a.1, -a.0)
}

/// Min and max of `f` over the four corners: right for functions monotone in each argument.
fn corners(a: Iv, b: Iv, f: impl Fn(i128, i128) -> i128) -> Iv {
    let v = [f(a.0, b.0), f(a.0, b.1), f(a.1, b.0), f(a.1, b.1)];
    (v.into_iter().min().unwrap(), v.into_iter().max().unwrap())
}

fn mul(a: Iv, b: Iv) -> Iv {
    corners(a, b, |x, y| x * y)
}

/// Truncating division. For a divisor of fixed sign the quotient is monotone in each operand,
/// so the corners bound it. A divisor range containing 0 gives no bounds.
fn idiv(a: Iv, b: Iv) -> Option<Iv> {
    if b.0 <= 0 && 0 <= b.1 {
        return None;
    }
    Some(corners(a, b, |x, y| x / y))
}

/// C remainder: sign of the dividend, magnitude below the divisor's.
fn imod(a: Iv, b: Iv) -> Option<Iv> {
    if b.0 <= 0 && 0 <= b.1 {
        return None;
    }
    if b.0 == b.1 {
        // One divisor: if the whole dividend range has one quotient, the remainder is exact.
        let c = b.0;
        if (a.0 >= 0 || a.1 <= 0) && a.0 / c == a.1 / c {
            return Some((a.0 % c, a.1 % c));
        }
    }
    let m = b.0.abs().max(b.1.abs()) - 1;
    Some(if a.0 >= 0 {
        (0, a.1.min(m))
    } else if a.1 <= 0 {
        (a.0.max(-m), 0)
    } else {
        (a.0.max(-m), a.1.min(m))
    })
}

/// The smallest `2^k - 1` at least `x` (x >= 0): a bound for OR/XOR of values up to x.
fn all_ones_above(x: i128) -> i128 {
    ((x as u128 + 1).next_power_of_two() - 1) as i128
}

fn bitwise(op: Ops, dtype: DType, a: Iv, b: Iv) -> Option<Iv> {
    if dtype.is_bool() {
        return Some(match op {
            Ops::AND => (a.0.min(b.0), a.1.min(b.1)),
            Ops::OR => (a.0.max(b.0), a.1.max(b.1)),
            _ if a.0 == a.1 && b.0 == b.1 => (a.0 ^ b.0, a.0 ^ b.0),
            _ => (0, 1),
        });
    }
    let (an, bn) = (a.0 >= 0, b.0 >= 0);
    match op {
        // Masking with a nonnegative value gives a nonnegative value no larger than it.
        Ops::AND if an && bn => Some((0, a.1.min(b.1))),
        Ops::AND if an => Some((0, a.1)),
        Ops::AND if bn => Some((0, b.1)),
        Ops::OR if an && bn => Some((a.0.max(b.0), all_ones_above(a.1.max(b.1)))),
        Ops::XOR if an && bn => Some((0, all_ones_above(a.1.max(b.1)))),
        _ => None,
    }
}

/// A shift amount range that is defined (0 <= k < bits), else `None`.
fn shift_amount(dtype: DType, k: Iv) -> Option<Iv> {
    (k.0 >= 0 && k.1 < dtype.bits() as i128).then_some(k)
}

/// Comparisons are decided when the operand ranges do not overlap (or are one equal value).
fn compare(op: Ops, src: &[UOp]) -> Iv {
    const UNDECIDED: Iv = (0, 1);
    if !is_intlike(&src[0]) || !is_intlike(&src[1]) {
        return UNDECIDED;
    }
    let (a, b) = (iv(&src[0]), iv(&src[1]));
    let disjoint = a.1 < b.0 || b.1 < a.0;
    let same_single = a.0 == a.1 && b.0 == b.1 && a.0 == b.0;
    let truth = match op {
        Ops::CMPLT if a.1 < b.0 => Some(true),
        Ops::CMPLT if a.0 >= b.1 => Some(false),
        Ops::CMPNE | Ops::CMPEQ if disjoint => Some(op == Ops::CMPNE),
        Ops::CMPNE | Ops::CMPEQ if same_single => Some(op == Ops::CMPEQ),
        _ => None,
    };
    match truth {
        Some(t) => (t as i128, t as i128),
        None => UNDECIDED,
    }
}

/// An int-to-int cast keeps the value when it fits (else the caller widens to the dtype's
/// range); a cast to bool is decided when the source excludes 0 or is exactly 0.
fn cast(dtype: DType, x: &UOp) -> Option<Iv> {
    if !is_intlike(x) {
        return None;
    }
    let a = iv(x);
    if dtype.is_bool() {
        return Some(if a.0 > 0 || a.1 < 0 {
            (1, 1)
        } else if a == (0, 0) {
            (0, 0)
        } else {
            (0, 1)
        });
    }
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;

    fn var(name: &str, lo: i64, hi: i64) -> UOp {
        UOp::new(Ops::DEFINE_VAR, DType::I32, vec![], Arg::Var(name.into(), lo, hi))
    }

    #[test]
    fn arithmetic_bounds() {
        let r = UOp::range(UOp::int(DType::I32, 10), 0, AxisType::Reduce);
        let v = var("v", -5, 7);
        assert_eq!(r.bounds(), (0, 9));
        assert_eq!((&r + &v).bounds(), (-5, 16));
        assert_eq!((&r - &v).bounds(), (-7, 14));
        assert_eq!((&r * &v).bounds(), (-45, 63));
        assert_eq!((-&v).bounds(), (-7, 5));
        assert_eq!((&v / 2).bounds(), (-2, 3));
        assert_eq!((&v / -2).bounds(), (-3, 2));
        assert_eq!((&v % 3).bounds(), (-2, 2));
        assert_eq!((&r % 4).bounds(), (0, 3));
        assert_eq!(((&r + 20) % 8).bounds(), (0, 7));
        assert_eq!((var("w", 17, 22) % 8).bounds(), (1, 6));
        assert_eq!((var("w", -22, -17) % 8).bounds(), (-6, -1));
        assert_eq!(UOp::maximum(&r, &v).bounds(), (0, 9));
        assert_eq!(r.lt(&UOp::int(DType::I32, 10)).bounds(), (1, 1));
        assert_eq!(r.lt(&UOp::int(DType::I32, 0)).bounds(), (0, 0));
        assert_eq!(r.lt(&UOp::int(DType::I32, 5)).bounds(), (0, 1));
        assert_eq!(r.ne(&UOp::int(DType::I32, 10)).bounds(), (1, 1));
        assert_eq!(r.eq_(&UOp::int(DType::I32, -1)).bounds(), (0, 0));
    }

    #[test]
    fn overflow_gives_the_whole_dtype_range() {
        let big = var("b", 0, i32::MAX as i64);
        let full = (i32::MIN as i64, i32::MAX as i64);
        assert_eq!((&big + 1).bounds(), full);
        assert_eq!((&big * 2).bounds(), full);
        let m = var("m", i32::MIN as i64, 0);
        assert_eq!((-&m).bounds(), full);
        assert_eq!((&m / -1).bounds(), full);
        let u = UOp::int(DType::U8, 200);
        assert_eq!((&u + 100).bounds(), (0, 255));
        assert_eq!(big.cast(DType::I8).bounds(), (-128, 127));
        assert_eq!(UOp::int(DType::I32, 5).cast(DType::I8).bounds(), (5, 5));
    }

    #[test]
    fn where_cast_bitwise_and_shift_bounds() {
        let r = UOp::range(UOp::int(DType::I32, 10), 0, AxisType::Reduce);
        let c = r.lt(&UOp::int(DType::I32, 5));
        let w = c.where_(&UOp::int(DType::I32, 3), &UOp::int(DType::I32, -4));
        assert_eq!(w.bounds(), (-4, 3));
        let w2 = UOp::bool(true).where_(&r, &UOp::int(DType::I32, -4));
        assert_eq!(w2.bounds(), (0, 9));
        assert_eq!(r.cast(DType::BOOL).bounds(), (0, 1));
        assert_eq!((&r + 1).cast(DType::BOOL).bounds(), (1, 1));
        assert_eq!(r.and(&UOp::int(DType::I32, 6)).bounds(), (0, 6));
        assert_eq!(UOp::alu(Ops::SHL, vec![r.clone(), UOp::int(DType::I32, 2)]).bounds(), (0, 36));
        assert_eq!(UOp::alu(Ops::SHR, vec![r.clone(), UOp::int(DType::I32, 1)]).bounds(), (0, 4));
        assert_eq!(UOp::alu(Ops::OR, vec![r.clone(), UOp::int(DType::I32, 1)]).bounds(), (1, 15));
        assert_eq!(UOp::float(DType::F32, 1.0).bounds(), (i64::MIN, i64::MAX));
    }

    #[test]
    fn u64_bounds_only_when_small() {
        let c = UOp::int(DType::U64, 5);
        assert_eq!(c.bounds(), (5, 5));
        let huge = UOp::cnst(DType::U64, ConstValue::Int(-1));
        assert_eq!(huge.bounds(), (i64::MIN, i64::MAX), "no bounds: value above i64::MAX");
        assert_eq!((&huge + &c).bounds(), (i64::MIN, i64::MAX));
        assert_eq!((&c * &c).bounds(), (25, 25));
    }
}
