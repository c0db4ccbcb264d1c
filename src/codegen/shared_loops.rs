//! Sibling reduces share one loop. Two REDUCEs of a kernel over ranges of the same bounds,
//! neither inside the other, that read a common value in their loops (attention's weights,
//! read by the product with the values and by the softmax's sum) become REDUCEs over the same
//! ranges: a renaming of the loop variable, so each value is unchanged. The linearizer then
//! runs them in one loop nest with one accumulator each, and the common value is loaded once
//! per iteration instead of once per loop.
//!
//! The shared loop sits where the REDUCE with more output dependencies needs it, so the other
//! one is accumulated again for each of its extra output indices: only its own ALU ops repeat
//! (what both read is shared), which costs less than a second pass over memory.

use crate::uop::{FxHashMap, FxHashSet, Ops, UOp};

/// Renames the ranges of every REDUCE that can share a loop with another (module comment).
pub fn share_reduce_loops(ast: &UOp) -> UOp {
    let mut ast = ast.clone();
    // Each step renames one loop nest's ranges, in every REDUCE over them (its variables appear
    // nowhere else), so the number of loop nests falls; a kernel has a handful of REDUCEs.
    while let Some((from, onto)) = mergeable_pair(&ast) {
        let map: FxHashMap<UOp, UOp> = from.src()[1..].iter().cloned().zip(onto.src()[1..].iter().cloned()).collect();
        ast = ast.substitute(&map);
    }
    ast
}

/// Two REDUCEs `(from, onto)` whose ranges can be one loop nest: `from`'s ranges are renamed
/// to `onto`'s.
fn mergeable_pair(ast: &UOp) -> Option<(UOp, UOp)> {
    let reduces: Vec<UOp> = ast.toposort().into_iter().filter(|n| n.op() == Ops::REDUCE).collect();
    let inside: Vec<FxHashSet<UOp>> = reduces.iter().map(|r| r.src()[0].toposort().into_iter().collect()).collect();
    for (i, a) in reduces.iter().enumerate() {
        for (j, b) in reduces.iter().enumerate() {
            if i == j || !same_bounds(a, b) || a.src()[1..] == b.src()[1..] {
                continue;
            }
            // Neither inside the other, and neither's value uses the other's loop variables.
            let (ia, ib) = (&inside[i], &inside[j]);
            let uses_other = b.src()[1..].iter().any(|r| ia.contains(r)) || a.src()[1..].iter().any(|r| ib.contains(r));
            if ia.contains(b) || ib.contains(a) || uses_other {
                continue;
            }
            // Both inside the same other REDUCEs (so the shared loop has one place).
            if inside.iter().any(|x| x.contains(a) != x.contains(b)) {
                continue;
            }
            // Worth it only when both loops read a common value that moves with the loop.
            let map: FxHashMap<UOp, UOp> = a.src()[1..].iter().cloned().zip(b.src()[1..].iter().cloned()).collect();
            let renamed: FxHashSet<UOp> = a.src()[0].substitute(&map).toposort().into_iter().collect();
            let moves = |n: &UOp| b.src()[1..].iter().any(|r| n.toposort().contains(r));
            if ib.iter().any(|n| n.op() == Ops::LOAD && renamed.contains(n) && moves(n)) {
                return Some((a.clone(), b.clone()));
            }
        }
    }
    None
}

/// Same reduce op kind aside, the same number of plain ranges with equal bounds, in order.
fn same_bounds(a: &UOp, b: &UOp) -> bool {
    let (ra, rb) = (&a.src()[1..], &b.src()[1..]);
    ra.len() == rb.len()
        && ra.iter().chain(rb).all(|r| r.op() == Ops::RANGE)
        && ra.iter().zip(rb).all(|(x, y)| x.src()[0] == y.src()[0] && x.range_arg().1 == y.range_arg().1)
}
