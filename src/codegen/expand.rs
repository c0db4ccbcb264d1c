//! Expansion of UPCAST and UNROLL ranges: the loop disappears and its body is replicated once
//! per index value. An UPCAST output range gives one store (and one accumulator per reduce)
//! per value: a register tile. An UNROLL reduce range folds its values into the reduce's
//! update: `acc += v(0) + v(1) + ...`. Afterwards the C compiler sees straight-line code it can
//! keep in registers and vectorize.

use crate::uop::{Arg, AxisType, FxHashMap, Ops, UOp};

/// Folds the next unrolled value into the ones before it (products into an FMA chain).
fn combine(op: Ops, a: UOp, b: UOp) -> UOp {
    super::kernel_ops::accumulate(op, &a, &b, false)
}

/// Replaces range `r` by the constant `i` everywhere under `node`.
fn at(node: &UOp, r: &UOp, i: i64) -> UOp {
    let mut map = FxHashMap::default();
    map.insert(r.clone(), UOp::int(r.dtype(), i));
    node.substitute(&map)
}

/// Folds UNROLL ranges into the reduces that own them.
fn expand_unrolls(ast: &UOp) -> UOp {
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    for n in ast.toposort() {
        if n.op() != Ops::REDUCE {
            continue;
        }
        let unrolled: Vec<UOp> = n.src()[1..].iter().filter(|r| r.range_arg().1 == AxisType::Unroll).cloned().collect();
        if unrolled.is_empty() {
            continue;
        }
        let Arg::Op(op) = n.arg() else { unreachable!() };
        let mut values = vec![n.src()[0].clone()];
        for r in &unrolled {
            values = values.iter().flat_map(|v| (0..r.range_size()).map(move |i| at(v, r, i))).collect();
        }
        let mut it = values.into_iter();
        let first = it.next().expect("an unrolled range has at least one value");
        let folded = it.fold(first, |acc, v| combine(*op, acc, v));
        let rest: Vec<UOp> = n.src()[1..].iter().filter(|r| !unrolled.contains(r)).cloned().collect();
        map.insert(n.clone(), super::kernel_ops::reduce_over(&n, folded, &rest));
    }
    if map.is_empty() {
        ast.clone()
    } else {
        ast.substitute(&map)
    }
}

/// Replicates the stores that depend on an UPCAST range (other than `keep`) once per value of
/// the range.
fn expand_upcasts(ast: &UOp, keep: Option<&UOp>) -> UOp {
    let mut stores: Vec<UOp> = ast.src().to_vec();
    // In id order, so the upcast applied last varies fastest among the replicated stores.
    let mut upcasts: Vec<UOp> = ast
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Ops::RANGE && n.range_arg().1 == AxisType::Upcast && Some(n) != keep)
        .collect();
    upcasts.sort_by_key(|r| r.range_arg().0);
    for r in &upcasts {
        stores = stores
            .into_iter()
            .flat_map(|s| {
                if s.toposort().contains(r) {
                    (0..r.range_size()).map(|i| at(&s, r, i)).collect()
                } else {
                    vec![s]
                }
            })
            .collect();
    }
    ast.with_src(stores)
}

/// Expands all UNROLL and UPCAST ranges of a kernel AST, except the UPCAST `keep` (which the
/// vectorizer turns into vector lanes).
pub fn expand(ast: &UOp, keep: Option<&UOp>) -> UOp {
    expand_upcasts(&expand_unrolls(ast), keep)
}
