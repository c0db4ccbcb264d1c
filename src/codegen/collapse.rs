//! Reduce collapse: `sum over r of (r == e ? v(r) : 0)` is `v(e)` when `e` does not depend on
//! `r` (and 0 when `e` is out of range). Gathers and one-hot indexing are written that way in
//! the front end (compare with an arange, then sum); this rule turns them back into a direct,
//! gated load, so `X[idx]` costs one read per output instead of a pass over all of `X`.

use super::kernel_ops::{gate_indexes, reduce_over};
use crate::uop::pattern::{graph_rewrite, rule, PatternMatcher, RewriteMode, UPat};
use crate::uop::{Arg, ConstValue, FxHashMap, Ops, UOp};
use std::sync::OnceLock;

fn depends_on(n: &UOp, r: &UOp) -> bool {
    n.toposort().contains(r)
}

fn is_zero(n: &UOp) -> bool {
    n.const_value().is_some_and(|c| c.as_f64() == 0.0)
}

/// `(condition, value)` of a masked value: `WHERE(c, v, 0)` or `CAST(c) * v`, possibly under a
/// CAST (sums of small integers accumulate in a wider type).
fn split_mask(v: &UOp) -> Option<(UOp, UOp)> {
    match v.op() {
        Ops::CAST => split_mask(&v.src()[0]).map(|(c, x)| (c, x.cast(v.dtype()))),
        Ops::WHERE if is_zero(&v.src()[2]) => Some((v.src()[0].clone(), v.src()[1].clone())),
        Ops::MUL => {
            let (a, b) = (&v.src()[0], &v.src()[1]);
            let as_cond = |x: &UOp| (x.op() == Ops::CAST && x.src()[0].dtype().is_bool()).then(|| x.src()[0].clone());
            as_cond(a).map(|c| (c, b.clone())).or_else(|| as_cond(b).map(|c| (c, a.clone())))
        }
        _ => None,
    }
}

/// Adds `valid` to the gate of every INDEX under `n` whose address depends on `e`.
fn gate_loads(n: &UOp, e: &UOp, valid: &UOp) -> UOp {
    gate_indexes(n, |index| depends_on(&index.src()[1], e), valid)
}

fn collapse(red: &UOp) -> Option<UOp> {
    if red.arg() != &Arg::Op(Ops::ADD) {
        return None;
    }
    let (cond, val) = split_mask(&red.src()[0])?;
    if cond.op() != Ops::CMPEQ {
        return None;
    }
    let ranges = &red.src()[1..];
    for r in ranges {
        let is_r = |x: &UOp| x == r || (x.op() == Ops::CAST && &x.src()[0] == r);
        let (a, b) = (&cond.src()[0], &cond.src()[1]);
        let e = if is_r(a) && !depends_on(b, r) {
            b
        } else if is_r(b) && !depends_on(a, r) {
            a
        } else {
            continue;
        };
        if !e.dtype().is_int() {
            continue;
        }
        // In range, compared in e's own dtype: 0 <= e < size.
        let size = UOp::cnst(e.dtype(), ConstValue::Int(r.range_size()));
        let valid = e.lt(&size).and(&e.lt(&e.const_like(ConstValue::Int(0))).ne(&UOp::bool(true)));
        let ei = e.cast(r.dtype());
        let mut map = FxHashMap::default();
        map.insert(r.clone(), ei.clone());
        let picked = gate_loads(&val.substitute(&map), &ei, &valid);
        let out = valid.where_(&picked, &picked.const_like(ConstValue::Int(0)));
        let rest: Vec<UOp> = ranges.iter().filter(|x| *x != r).cloned().collect();
        return Some(reduce_over(red, out, &rest));
    }
    None
}

fn rules() -> &'static PatternMatcher<()> {
    static PM: OnceLock<PatternMatcher<()>> = OnceLock::new();
    PM.get_or_init(|| PatternMatcher::new(vec![rule(UPat::op(Ops::REDUCE).named("r"), |b| collapse(&b["r"]))]))
}

/// Collapses masked sums over a range into direct loads.
pub fn collapse_reduces(ast: &UOp) -> UOp {
    graph_rewrite(ast, rules(), RewriteMode::BottomUp)
}
