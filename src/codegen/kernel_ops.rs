//! Small kernel-level rewrites the codegen passes share: the step of a reduce, gating an
//! access, rebuilding a REDUCE over other ranges, and the unit-stride test.

use crate::uop::{FxHashMap, Ops, UOp};

/// One step of a reduce: `op(acc, x)`. A float MAX propagates NaN from either side, as
/// PyTorch's max reductions do (`MAX` alone is `acc < x ? x : acc`, which drops a NaN `x`).
pub fn reduce_step(op: Ops, acc: &UOp, x: &UOp) -> UOp {
    let step = UOp::alu(op, vec![acc.clone(), x.clone()]);
    if op == Ops::MAX && x.dtype().is_float() {
        x.ne(x).where_(x, &step)
    } else {
        step
    }
}

/// One accumulate step of a reduce, `reduce_step` except for float sums of products: `acc +
/// a*b` becomes one fused MULACC. With `reroot`, an unrolled dot product `MULACC(a1, b1,
/// a0*b0)` is re-rooted on the accumulator (`MULACC(a1, b1, MULACC(a0, b0, acc))`): a chain
/// of FMAs, the fewest instructions, but a loop-carried dependency through every one of them,
/// which only pays when many independent accumulators (a register tile) hide its latency.
pub fn accumulate(op: Ops, acc: &UOp, x: &UOp, reroot: bool) -> UOp {
    if op == Ops::ADD && x.dtype().is_float() {
        match x.op() {
            Ops::MUL => {
                return UOp::alu(Ops::MULACC, vec![x.src()[0].clone(), x.src()[1].clone(), acc.clone()]);
            }
            Ops::MULACC if reroot => {
                let below = accumulate(op, acc, &x.src()[2], true);
                return UOp::alu(Ops::MULACC, vec![x.src()[0].clone(), x.src()[1].clone(), below]);
            }
            _ => {}
        }
    }
    reduce_step(op, acc, x)
}

/// The INDEX `index` with `cond` added to its gate (loads give 0 and stores do nothing where
/// it is false).
pub fn and_gate(index: &UOp, cond: &UOp) -> UOp {
    debug_assert_eq!(index.op(), Ops::INDEX, "and_gate on {:?}", index.op());
    let gate = match index.src().get(2) {
        Some(g) => g.and(cond),
        None => cond.clone(),
    };
    index.with_src(vec![index.src()[0].clone(), index.src()[1].clone(), gate])
}

/// `root` with `cond` added to the gate of every INDEX for which `needs(index)` holds (asked
/// of the node as it is in `root`). Rebuilt from the leaves up, so an INDEX inside another's
/// address or gate (the index load of a gather) is gated too: replacing the outer INDEX by a
/// gated copy of itself would keep the inner one as it was, an ungated load that the outer
/// gate does not protect.
pub fn gate_indexes(root: &UOp, needs: impl Fn(&UOp) -> bool, cond: &UOp) -> UOp {
    let mut new: FxHashMap<UOp, UOp> = FxHashMap::default();
    for node in root.toposort() {
        let src: Vec<UOp> = node.src().iter().map(|s| new.get(s).cloned().unwrap_or_else(|| s.clone())).collect();
        let mut n = if src.iter().zip(node.src()).any(|(a, b)| a != b) { node.with_src(src) } else { node.clone() };
        if node.op() == Ops::INDEX && needs(&node) {
            n = and_gate(&n, cond);
        }
        if n != node {
            new.insert(node, n);
        }
    }
    new.get(root).cloned().unwrap_or_else(|| root.clone())
}

/// After a range was replaced by an expression of `outer` and `inner` (a split): every REDUCE
/// that listed it (now a non-RANGE source) lists both parts instead, with its value passed
/// through `value(reduce, value)` (a split that pads gates the extra iterations there).
pub fn split_reduce_ranges(ast: &UOp, outer: &UOp, inner: &UOp, value: impl Fn(&UOp, &UOp) -> UOp) -> UOp {
    let mut fix: FxHashMap<UOp, UOp> = FxHashMap::default();
    for n in ast.toposort() {
        if n.op() == Ops::REDUCE && n.src()[1..].iter().any(|s| s.op() != Ops::RANGE) {
            let mut src = vec![value(&n, &n.src()[0])];
            for s in &n.src()[1..] {
                if s.op() == Ops::RANGE {
                    src.push(s.clone());
                } else {
                    src.push(outer.clone());
                    src.push(inner.clone());
                }
            }
            fix.insert(n.clone(), n.with_src(src));
        }
    }
    if fix.is_empty() {
        ast.clone()
    } else {
        ast.substitute(&fix)
    }
}

/// The REDUCE `red`'s op over `value` and `ranges`; with no ranges left, `value` itself.
pub fn reduce_over(red: &UOp, value: UOp, ranges: &[UOp]) -> UOp {
    debug_assert_eq!(red.op(), Ops::REDUCE, "reduce_over on {:?}", red.op());
    if ranges.is_empty() {
        return value;
    }
    let mut src = vec![value];
    src.extend(ranges.iter().cloned());
    red.with_src(src)
}

/// Whether the address `index` moves by exactly one element when range `r` moves by one.
pub fn unit_stride(index: &UOp, r: &UOp) -> bool {
    let mut next: FxHashMap<UOp, UOp> = FxHashMap::default();
    next.insert(r.clone(), r + 1);
    crate::uop::symbolic::simplify(&(&index.substitute(&next) - index)).as_int() == Some(1)
}

/// Whether `index` is the same address at every value of range `r` (a per-head scale read
/// at `(i * 16 + lane) / 64` inside a 16-lane axis): each value substituted and simplified.
pub fn same_at_every_step(index: &UOp, r: &UOp) -> bool {
    let at = |k: i64| {
        let mut m: FxHashMap<UOp, UOp> = FxHashMap::default();
        m.insert(r.clone(), UOp::int(r.dtype(), k));
        crate::uop::symbolic::simplify(&index.substitute(&m))
    };
    let first = at(0);
    (1..r.range_size()).all(|k| at(k) == first)
}

/// The largest power of two that divides `n` and is at most `max` (at least 1): how many vector
/// lanes or work-group items an axis of `n` can be split into.
pub fn pow2_divisor(n: i64, max: i64) -> i64 {
    let mut d = 1;
    while d * 2 <= max && n % (d * 2) == 0 {
        d *= 2;
    }
    d
}
