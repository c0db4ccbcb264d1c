//! Optimizations act on a kernel's loop ranges: an `Opt` splits one range into two and gives
//! the inner part a new axis type (UPCAST, UNROLL, THREAD, LOCAL, GROUP); PADTO extends a range
//! to a multiple of an amount, with gated extra iterations.
//!
//! LOCAL and GROUP/GROUPTOP need a device with work groups (see `gpu.rs`): LOCAL puts part of
//! an output axis in the work group, GROUP splits a reduce axis across it (GROUP takes the
//! inner part, so neighbouring items read neighbouring elements; GROUPTOP the outer part, so
//! each item reads one contiguous chunk).

use crate::uop::{AxisType, FxHashMap, Ops, UOp};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptKind {
    Upcast,
    Unroll,
    Thread,
    Local,
    Group,
    GroupTop,
    /// Split a range into an outer and inner loop of the same kind (loop tiling).
    Split,
    /// Pad a range up to a multiple of `amount` (so it splits evenly): the extra iterations
    /// load nothing and store nothing, and add the reduce's identity.
    PadTo,
}

/// One optimization: split range number `axis` (in id order) by `amount`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Opt {
    pub kind: OptKind,
    pub axis: usize,
    pub amount: i64,
}

/// All ranges of a kernel, sorted by id.
pub fn kernel_ranges(ast: &UOp) -> Vec<UOp> {
    let mut rs: Vec<UOp> = ast.toposort().into_iter().filter(|n| n.op() == Ops::RANGE).collect();
    rs.sort_by_key(|r| r.range_arg().0);
    rs
}

/// Splits `range` (size n) in two. Normally it becomes `rest * amount + new` where `new` has
/// size `amount` and type `kind` (the inner part); with `top` it becomes
/// `new * (n / amount) + rest` (the new part is the outer one, as a THREAD axis wants: each
/// thread gets one contiguous chunk). `rest` keeps the range's id and type. `amount` must
/// divide n.
pub fn shift_to(ast: &UOp, range: &UOp, amount: i64, kind: AxisType, top: bool) -> UOp {
    let n = range.range_size();
    assert!(amount > 0 && n % amount == 0, "shift_to: {amount} does not divide range of {n}");
    let (id, t) = range.range_arg();
    let next_id = kernel_ranges(ast).iter().map(|r| r.range_arg().0).max().unwrap_or(0) + 1;
    let dt = range.dtype();
    let rest = UOp::range(UOp::int(dt, n / amount), id, t);
    let new = UOp::range(UOp::int(dt, amount), next_id, kind);
    let replacement = if top { &(&new * (n / amount)) + &rest } else { &(&rest * amount) + &new };
    let (outer, inner) = if top { (new, rest) } else { (rest, new) };
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    map.insert(range.clone(), replacement);
    // REDUCE sources list their ranges: both parts replace the old one there.
    let sub = ast.substitute(&map);
    let mut fix: FxHashMap<UOp, UOp> = FxHashMap::default();
    for n in sub.toposort() {
        if n.op() == Ops::REDUCE && n.src()[1..].iter().any(|s| s.op() != Ops::RANGE) {
            let mut src = vec![n.src()[0].clone()];
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
        sub
    } else {
        sub.substitute(&fix)
    }
}

/// Pads `range` (size n) to the next multiple of `amount`: the range runs to that size, every
/// load and store whose address depends on it is gated by `range < n` (no access outside the
/// buffers, no stores for the extra outputs) and every REDUCE over it adds its identity there.
pub fn pad_to(ast: &UOp, range: &UOp, amount: i64) -> UOp {
    let n = range.range_size();
    let padded = (n + amount - 1) / amount * amount;
    if padded == n {
        return ast.clone();
    }
    let (id, t) = range.range_arg();
    let dt = range.dtype();
    let wide = UOp::range(UOp::int(dt, padded), id, t);
    let valid = wide.lt(&UOp::int(dt, n));
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    map.insert(range.clone(), wide.clone());
    let sub = ast.substitute(&map);
    let mut fix: FxHashMap<UOp, UOp> = FxHashMap::default();
    for node in sub.toposort() {
        if node.op() == Ops::INDEX && node.src()[1].toposort().contains(&wide) {
            fix.insert(node.clone(), node.and_gate(&valid));
        }
    }
    // Then the REDUCEs over the range, found again above the gated loads.
    let gated = sub.substitute(&fix);
    let mut reduces: FxHashMap<UOp, UOp> = FxHashMap::default();
    for node in gated.toposort() {
        if node.op() == Ops::REDUCE && node.src()[1..].contains(&wide) {
            let crate::uop::Arg::Op(op) = node.arg() else { unreachable!("REDUCE without op") };
            let identity = UOp::cnst(node.dtype(), op.reduce_identity(node.dtype()));
            let mut src = node.src().to_vec();
            src[0] = valid.where_(&src[0], &identity);
            reduces.insert(node.clone(), node.with_src(src));
        }
    }
    if reduces.is_empty() {
        gated
    } else {
        gated.substitute(&reduces)
    }
}

/// Applies opts in order.
pub fn apply_opts(ast: &UOp, opts: &[Opt]) -> UOp {
    let mut ast = ast.clone();
    for o in opts {
        let rs = kernel_ranges(&ast);
        let r = rs.get(o.axis).unwrap_or_else(|| panic!("opt {o:?}: kernel has {} ranges", rs.len())).clone();
        // A THREAD axis is one index per core: it cannot be split again, and there is one.
        assert!(r.range_arg().1 != AxisType::Thread, "opt {o:?}: a THREAD axis cannot be split");
        let has_thread = rs.iter().any(|x| x.range_arg().1 == AxisType::Thread);
        assert!(!(o.kind == OptKind::Thread && has_thread), "opt {o:?}: the kernel already has a THREAD axis");
        assert!(
            !(matches!(o.kind, OptKind::Thread | OptKind::Upcast | OptKind::Local) && r.range_arg().1.is_reduce()),
            "opt {o:?}: {:?} applies to output axes, not to a reduce axis",
            o.kind
        );
        if matches!(o.kind, OptKind::Group | OptKind::GroupTop) {
            assert!(
                r.range_arg().1 == AxisType::Reduce,
                "opt {o:?}: GROUP splits a reduce loop, not a {:?} axis",
                r.range_arg().1
            );
            assert!(
                !rs.iter().any(|x| x.range_arg().1 == AxisType::Group),
                "opt {o:?}: the kernel already has a GROUP axis"
            );
        }
        if o.kind == OptKind::PadTo {
            assert!(
                matches!(r.range_arg().1, AxisType::Global | AxisType::Reduce),
                "opt {o:?}: PADTO pads an output or reduce loop, not a {:?} axis",
                r.range_arg().1
            );
            assert!(o.amount > 0, "opt {o:?}: PADTO needs a positive multiple");
            ast = pad_to(&ast, &r, o.amount);
            continue;
        }
        if o.kind == OptKind::Local {
            assert!(
                r.range_arg().1 == AxisType::Global,
                "opt {o:?}: LOCAL splits an output axis, not a {:?} axis",
                r.range_arg().1
            );
        }
        let top = matches!(o.kind, OptKind::Thread | OptKind::GroupTop);
        let kind = match o.kind {
            OptKind::Upcast => AxisType::Upcast,
            OptKind::Unroll => AxisType::Unroll,
            OptKind::Thread => AxisType::Thread,
            OptKind::Local => AxisType::Local,
            OptKind::Group | OptKind::GroupTop => AxisType::Group,
            OptKind::Split => r.range_arg().1,
            OptKind::PadTo => unreachable!("handled above"),
        };
        ast = shift_to(&ast, &r, o.amount, kind, top);
    }
    ast
}
