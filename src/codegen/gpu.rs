//! The GPU launch model: on targets with work groups, the output loops of a kernel become
//! indices that the device enumerates in parallel; reduce loops stay loops in each work item.
//!
//! Without LOCAL or GROUP axes the output index is one linear global index (as large as the
//! device allows) with a work-group size chosen here. With them, each work group gets one
//! value of the GLOBAL axes (the group id) and the work items of the group enumerate the LOCAL
//! axes (more outputs) and the GROUP axis (one slice of a reduce each). A reduce split by GROUP
//! is finished in local memory: every item stores its partial result, a barrier, then each item
//! combines the partials of its output and the first item of the group stores it.
//!
//! Every range is recovered from its linear index by division and modulo, which the symbolic
//! simplifier folds where shapes allow.

use super::kernel_ops::{and_gate, reduce_over};
use super::opts::kernel_ranges;
use crate::renderer::Target;
use crate::uop::{Arg, AxisType, DType, FxHashMap, Ops, SpecialKind, UOp};

/// Launch geometry of a kernel: total work items and work-group size, per dimension.
pub struct Launch {
    pub global: [usize; 3],
    pub local: [usize; 3],
}

impl Launch {
    /// One work item (devices without work groups run the whole kernel per launch).
    pub fn single() -> Launch {
        Launch { global: [1, 1, 1], local: [1, 1, 1] }
    }
}

/// The product of the sizes of `ranges`.
fn size_of(ranges: &[UOp]) -> usize {
    ranges.iter().map(|r| r.range_size() as usize).product()
}

/// The linear index of `ranges` (the first one varies slowest), in terms of the ranges.
fn linear(ranges: &[UOp], dt: DType) -> UOp {
    ranges.iter().fold(UOp::int(dt, 0), |acc, r| &(&acc * r.range_size()) + r)
}

/// Maps each of `ranges` (the first one varying slowest) to its part of the linear index `idx`.
fn unflatten(idx: &UOp, ranges: &[UOp], map: &mut FxHashMap<UOp, UOp>) {
    let mut stride = size_of(ranges) as i64;
    for (i, r) in ranges.iter().enumerate() {
        let size = r.range_size();
        stride /= size;
        let mut v = if stride > 1 { idx / stride } else { idx.clone() };
        if i > 0 {
            v = &v % size;
        }
        map.insert(r.clone(), v.cast(r.dtype()));
    }
}

/// Integer type of the launch indices: 64-bit when there are 2^31 items or more.
fn index_dtype(ranges: &[UOp], total: usize) -> DType {
    if total > i32::MAX as usize || ranges.iter().any(|r| r.dtype() == DType::I64) {
        DType::I64
    } else {
        DType::I32
    }
}

/// Replaces the output, LOCAL and GROUP ranges of `ast` by GPU indices; returns the new AST and
/// its launch.
pub fn map_to_global(ast: &UOp, target: &Target) -> (UOp, Launch) {
    let ranges = kernel_ranges(ast);
    let of = |kinds: &[AxisType]| -> Vec<UOp> {
        ranges.iter().filter(|r| kinds.contains(&r.range_arg().1)).cloned().collect()
    };
    let outs = of(&[AxisType::Global, AxisType::Thread]);
    let locals = of(&[AxisType::Local]);
    let groups = of(&[AxisType::Group]);
    if locals.is_empty() && groups.is_empty() {
        return flat_launch(ast, &outs, target);
    }
    let local_size = size_of(&locals) * size_of(&groups);
    assert!(
        local_size <= target.local_max_total,
        "LOCAL/GROUP axes make work groups of {local_size} items; {} allows at most {}",
        target.device,
        target.local_max_total
    );
    let n_groups = size_of(&outs);
    let dt = index_dtype(&ranges, n_groups * local_size);

    let mut ast = ast.clone();
    if !groups.is_empty() {
        // Only the first item of each GROUP slice stores the finished value.
        let rdt = groups[0].dtype();
        ast = gate_stores(&ast, &linear(&groups, rdt).eq_(&UOp::int(rdt, 0)));
        ast = finish_group_reduces(&ast, &groups, &locals, rdt);
    }

    let gid = UOp::new(Ops::SPECIAL, dt, vec![UOp::int(dt, n_groups as i64)], Arg::Special(SpecialKind::Group, 0));
    let lid = UOp::new(Ops::SPECIAL, dt, vec![UOp::int(dt, local_size as i64)], Arg::Special(SpecialKind::Local, 0));
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    unflatten(&gid, &outs, &mut map);
    // Within a work group the GROUP slice varies fastest, so the items that share an output
    // are neighbours (and their loads of a contiguous reduce axis are coalesced).
    let mut in_group = locals.clone();
    in_group.extend(groups.iter().cloned());
    unflatten(&lid, &in_group, &mut map);
    (ast.substitute(&map), Launch { global: [n_groups * local_size, 1, 1], local: [local_size, 1, 1] })
}

/// Splits every REDUCE over the GROUP axis in two: each work item reduces its slice (the other
/// reduce ranges) and stores the partial result in local memory; after a barrier, a loop over
/// the slices combines them.
fn finish_group_reduces(ast: &UOp, groups: &[UOp], locals: &[UOp], dt: DType) -> UOp {
    let group_size = size_of(groups) as i64;
    let slot = &(&linear(locals, dt) * group_size) + &linear(groups, dt);
    let first_slot = &linear(locals, dt) * group_size;
    let local_len = UOp::int(dt, size_of(locals) as i64 * group_size);
    let mut ast = ast.clone();
    let first_id = kernel_ranges(&ast).iter().map(|r| r.range_arg().0).max().unwrap_or(0) + 1;
    for k in 0usize.. {
        let Some(red) = ast
            .toposort()
            .into_iter()
            .find(|n| n.op() == Ops::REDUCE && n.src()[1..].iter().any(|r| groups.contains(r)))
        else {
            break;
        };
        let others: Vec<UOp> = red.src()[1..].iter().filter(|r| !groups.contains(r)).cloned().collect();
        let partial = reduce_over(&red, red.src()[0].clone(), &others);
        let buf = UOp::new(Ops::DEFINE_LOCAL, red.dtype().ptr(), vec![local_len.clone()], Arg::Int(k as i64));
        let slot_idx = UOp::new(Ops::INDEX, red.dtype().ptr(), vec![buf.clone(), slot.clone()], Arg::None);
        // Inside a loop (an enclosing reduce), the previous iteration's readers must be done
        // before the slots are overwritten: a barrier before the store.
        let nested = open_ranges(&partial).iter().any(|r| !groups.contains(r) && !locals.contains(r));
        let mut store_src = vec![slot_idx, partial.clone()];
        if nested {
            store_src.push(UOp::new(Ops::BARRIER, DType::VOID, vec![partial.clone()], Arg::None));
        }
        let store = UOp::new(Ops::STORE, DType::VOID, store_src, Arg::None);
        let barrier = UOp::new(Ops::BARRIER, DType::VOID, vec![store], Arg::None);
        let slice = UOp::range(UOp::int(dt, group_size), first_id + k as u32, AxisType::Reduce);
        let read_idx = UOp::new(Ops::INDEX, red.dtype().ptr(), vec![buf, &first_slot + &slice], Arg::None);
        let read = UOp::new(Ops::LOAD, red.dtype(), vec![read_idx, barrier], Arg::None);
        let finished = red.with_src(vec![read, slice]);
        let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
        map.insert(red, finished);
        ast = ast.substitute(&map);
    }
    ast
}

/// The ranges `node` depends on that no REDUCE inside it closes: the loops it sits in.
fn open_ranges(node: &UOp) -> Vec<UOp> {
    let mut open: FxHashMap<UOp, Vec<UOp>> = FxHashMap::default();
    for n in node.toposort() {
        let mut rs: Vec<UOp> = Vec::new();
        for s in n.src() {
            for r in &open[s] {
                if !rs.contains(r) {
                    rs.push(r.clone());
                }
            }
        }
        match n.op() {
            Ops::RANGE => rs.push(n.clone()),
            Ops::REDUCE => rs.retain(|r| !n.src()[1..].contains(r)),
            _ => {}
        }
        open.insert(n, rs);
    }
    open.remove(node).unwrap_or_default()
}

/// Launch without LOCAL/GROUP axes: one linear global index over the outputs, in work groups
/// of a good size: the largest power of two (up to the device's limit, at most 256) dividing
/// the work, or, when that is small, a 64/128-wide group with the global size rounded up and
/// the extra items masked off.
fn flat_launch(ast: &UOp, outs: &[UOp], target: &Target) -> (UOp, Launch) {
    if outs.is_empty() {
        return (ast.clone(), Launch { global: [1, 1, 1], local: [1, 1, 1] });
    }
    let total = size_of(outs);
    let max_local = target.local_max[0].min(target.local_max_total).clamp(1, 256);
    let exact = super::kernel_ops::pow2_divisor(total as i64, max_local as i64) as usize;
    let local = if exact >= 32 || total < 64 { exact } else { max_local.min(128) };
    let padded = total.div_ceil(local) * local;
    let dt = index_dtype(outs, padded);
    let gid = UOp::new(Ops::SPECIAL, dt, vec![UOp::int(dt, padded as i64)], Arg::Special(SpecialKind::Global, 0));
    // Items past the end compute with the last valid index (so every load stays in bounds) and
    // do not store.
    let (gid, valid) = if padded == total {
        (gid, None)
    } else {
        let last = UOp::int(dt, total as i64 - 1);
        let clamped = -&UOp::maximum(&-&gid, &-&last);
        (clamped, Some(gid.lt(&UOp::int(dt, total as i64))))
    };
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    unflatten(&gid, outs, &mut map);
    let mut out = ast.substitute(&map);
    if let Some(valid) = valid {
        out = gate_stores(&out, &valid);
    }
    (out, Launch { global: [padded, 1, 1], local: [local, 1, 1] })
}

/// Adds `cond` to the gate of every store through an INDEX.
fn gate_stores(ast: &UOp, cond: &UOp) -> UOp {
    let mut gates: FxHashMap<UOp, UOp> = FxHashMap::default();
    for st in ast.toposort().into_iter().filter(|n| n.op() == Ops::STORE && n.src()[0].op() == Ops::INDEX) {
        gates.insert(st.src()[0].clone(), and_gate(&st.src()[0], cond));
    }
    ast.substitute(&gates)
}
