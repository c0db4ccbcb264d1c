//! The GPU launch model: on targets with work groups, the output loops of a kernel become one
//! global index (a SPECIAL node) that the device enumerates in parallel; reduce loops stay
//! loops in each work item. The output index is linear (one dimension, as large as the device
//! allows), and each output range is recovered from it by division and modulo, which the
//! symbolic simplifier folds where shapes allow.

use crate::renderer::Target;
use crate::uop::{Arg, AxisType, FxHashMap, Ops, SpecialKind, UOp};

/// Launch geometry of a kernel: total work items and work-group size, per dimension.
pub struct Launch {
    pub global: [usize; 3],
    pub local: [usize; 3],
}

/// The largest power of two that divides `n` and is at most `max`.
fn work_group(n: usize, max: usize) -> usize {
    let mut l = 1;
    while l * 2 <= max && n.is_multiple_of(l * 2) {
        l *= 2;
    }
    l
}

/// Replaces the output ranges of `ast` by a global index; returns the new AST and its launch.
pub fn map_to_global(ast: &UOp, target: &Target) -> (UOp, Launch) {
    let mut outs: Vec<UOp> = ast
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Ops::RANGE && matches!(n.range_arg().1, AxisType::Global | AxisType::Thread))
        .collect();
    outs.sort_by_key(|r| r.range_arg().0);
    let total: usize = outs.iter().map(|r| r.range_size() as usize).product();
    if outs.is_empty() {
        return (ast.clone(), Launch { global: [1, 1, 1], local: [1, 1, 1] });
    }
    let dt = outs[0].dtype();
    // Work groups of a good size: the largest power of two (up to the device's limit, at most
    // 256) dividing the work, or, when that is small, a 64/128-wide group with the global size
    // rounded up and the extra items masked off.
    let max_local = target.local_max[0].min(target.local_max_total).clamp(1, 256);
    let exact = work_group(total, max_local);
    let local = if exact >= 32 || total < 64 { exact } else { max_local.min(128) };
    let padded = total.div_ceil(local) * local;
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
    let mut stride = total as i64;
    for (i, r) in outs.iter().enumerate() {
        let size = r.range_size();
        stride /= size;
        let mut v = if stride > 1 { &gid / stride } else { gid.clone() };
        if i > 0 {
            v = &v % size;
        }
        map.insert(r.clone(), v);
    }
    let mut out = ast.substitute(&map);
    if let Some(valid) = valid {
        // Gate every store by the item being in range.
        let mut gates: FxHashMap<UOp, UOp> = FxHashMap::default();
        for st in out.toposort().into_iter().filter(|n| n.op() == Ops::STORE && n.src()[0].op() == Ops::INDEX) {
            let idx = &st.src()[0];
            let gate = match idx.src().get(2) {
                Some(g) => g.and(&valid),
                None => valid.clone(),
            };
            gates.insert(idx.clone(), idx.with_src(vec![idx.src()[0].clone(), idx.src()[1].clone(), gate]));
        }
        out = out.substitute(&gates);
    }
    (out, Launch { global: [padded, 1, 1], local: [local, 1, 1] })
}
