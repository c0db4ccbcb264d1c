//! Two kinds of broadcast reduce that stay fused in their consumer's kernel, where the general
//! rule (a broadcast reduce is materialized: recomputed per broadcast element it would
//! multiply the work) does not hold. Together they make attention three kernels (the scores;
//! the weights `exp(s - max)`; their product with the values and their sum, normalized):
//!
//! - a **row reduce** broadcast back along the trailing axes it reduced into elementwise work
//!   over its input (softmax's `s - max(s)`), on a device whose kernels are loops (a CPU): the
//!   linearizer puts the reduce's loop in the loop of the row it depends on, before the loop
//!   over the row, so it runs once per row, reading a row the kernel reads again from cache.
//! - a reduce broadcast beside a **sibling reduce** that reads the same input in as many steps
//!   (softmax's sum beside the product of its weights with the values): codegen's
//!   `shared_loops` runs both in one loop, so the weights are read once for both.

use super::realized::existing_buffer;
use crate::uop::{Arg, FxHashMap, FxHashSet, Ops, UOp};

/// A row reduce stays fused up to this many steps per output (a row of floats that fits in
/// a core's L1 cache beside the kernel's other reads).
const ROW_REDUCE_STEPS: usize = 4096;

fn steps(r: &UOp) -> usize {
    r.src()[0].numel() / r.numel().max(1)
}

/// Whether `n` is a row reduce that stays in its elementwise consumer's kernel (module comment):
/// it reduces its input's trailing axes, is broadcast back to the input's shape, and everything
/// above it up to the kernel's stores is elementwise at that shape.
pub(super) fn hoisted_row_reduce(n: &UOp, users: &FxHashMap<UOp, Vec<UOp>>, mat: &FxHashSet<UOp>) -> bool {
    let Arg::Reduce(_, axes) = n.arg() else { return false };
    let input = n.src()[0].shape();
    let rank = input.len();
    let trailing = !axes.is_empty() && axes.iter().enumerate().all(|(k, &a)| a == rank - axes.len() + k);
    if n.op() != Ops::REDUCE_AXIS || !trailing || steps(n) > ROW_REDUCE_STEPS || steps(n) < 2 || !loop_device(n) {
        return false;
    }
    // Up through RESHAPEs (keepdim) to the EXPAND back to the input's shape.
    let mut cur = n.clone();
    let expand = loop {
        match users.get(&cur).map(Vec::as_slice) {
            Some([u]) if u.op() == Ops::RESHAPE && !mat.contains(u) => cur = u.clone(),
            Some([u]) if u.op() == Ops::EXPAND && u.shape() == input && !mat.contains(u) => break u.clone(),
            _ => return false,
        }
    };
    // Everything above: elementwise at the input's shape, up to materialized nodes.
    let mut stack = vec![expand];
    let mut seen: FxHashSet<UOp> = FxHashSet::default();
    while let Some(x) = stack.pop() {
        if !seen.insert(x.clone()) {
            continue;
        }
        for u in users.get(&x).into_iter().flatten() {
            if !(u.op().is_alu() || u.op() == Ops::CAST) || u.shape() != input {
                return false;
            }
            if !mat.contains(u) {
                stack.push(u.clone());
            }
        }
    }
    true
}

/// Whether `n`'s device runs a kernel as loops (no work groups): there the reduce is hoisted;
/// on a GPU every work item would run it again.
fn loop_device(n: &UOp) -> bool {
    launches_work_groups(n) == Some(false)
}

/// Whether `n`'s device launches kernels as work groups (a GPU); `None` where it has none or
/// cannot be opened.
pub(super) fn launches_work_groups(n: &UOp) -> Option<bool> {
    n.device().and_then(|d| crate::runtime::get_device(d).ok()).map(|d| d.renderer().target().has_local)
}

/// Whether `n`, a broadcast reduce, stays beside a sibling reduce (module comment): the
/// elementwise op that takes it (through unary ops and movement ops that only reshape,
/// broadcast or permute) also takes, through elementwise and movement ops, another reduce over
/// `n`'s input in as many steps.
pub(super) fn beside_sibling_reduce(n: &UOp, users: &FxHashMap<UOp, Vec<UOp>>) -> bool {
    if n.op() != Ops::REDUCE_AXIS {
        return false;
    }
    let mut cur = n.clone();
    let alu = loop {
        match users.get(&cur).map(Vec::as_slice) {
            Some([u]) if matches!(u.op(), Ops::RESHAPE | Ops::EXPAND | Ops::PERMUTE | Ops::CAST) => cur = u.clone(),
            // A unary op on the way (a division is a product with a reciprocal).
            Some([u]) if u.op().is_alu() && u.src().len() == 1 => cur = u.clone(),
            Some([u]) if u.op().is_alu() => break u.clone(),
            _ => return false,
        }
    };
    let mut stack: Vec<UOp> = alu.src().iter().filter(|s| **s != cur).cloned().collect();
    let mut seen: FxHashSet<UOp> = FxHashSet::default();
    while let Some(x) = stack.pop() {
        if !seen.insert(x.clone()) || existing_buffer(&x).is_some() {
            continue;
        }
        if x.op() == Ops::REDUCE_AXIS {
            if shares_loop(n, &x) {
                return true;
            }
            continue;
        }
        if x.op().is_alu() || x.op().is_movement() || x.op() == Ops::CAST {
            stack.extend(x.src().iter().cloned());
        }
    }
    false
}

/// Whether reduces `a` and `b` (in one kernel) can share a loop: as many steps, and `b` reads
/// `a`'s input through elementwise and movement ops.
pub(super) fn shares_loop(a: &UOp, b: &UOp) -> bool {
    if a == b || a.op() != Ops::REDUCE_AXIS || b.op() != Ops::REDUCE_AXIS || steps(a) != steps(b) {
        return false;
    }
    let input = &a.src()[0];
    // A realized input is read as a view of its buffer: any view of the same buffer counts
    // (codegen shares the loop only where the loads coincide).
    let input_buffer = existing_buffer(input);
    let same_buffer = |x: &UOp| match (&input_buffer, existing_buffer(x)) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, &b),
        _ => false,
    };
    let mut stack = vec![b.src()[0].clone()];
    let mut seen: FxHashSet<UOp> = FxHashSet::default();
    while let Some(x) = stack.pop() {
        if &x == input || same_buffer(&x) {
            return true;
        }
        if !seen.insert(x.clone()) || x.op() == Ops::REDUCE_AXIS || existing_buffer(&x).is_some() {
            continue;
        }
        if x.op().is_alu() || x.op().is_movement() || x.op() == Ops::CAST {
            stack.extend(x.src().iter().cloned());
        }
    }
    false
}
