//! Symbolic loops made optimizable: a loop to a symbolic bound `E` (attention over `pos + 1`
//! keys) becomes `rest * LANES + lane`, where `lane` is an ordinary range of `LANES` iterations
//! that opts can vectorize, unroll or thread, and `rest` runs to `ceil(E / LANES)`. The last
//! block's iterations past `E` are gated as PADTO gates its padding: loads and stores whose
//! address depends on the loop are gated by `index < E`, and a REDUCE over it adds its identity
//! there.

use super::kernel_ops::{gate_indexes, split_reduce_ranges};
use crate::uop::{FxHashMap, Ops, UOp};

/// Iterations of the `lane` part: one AVX-512 vector of f32 (two of AVX2's); GPUs map it to
/// work items like any output range.
pub const LANES: i64 = 16;

/// Splits every symbolic RANGE of `ast` (see the module comment).
pub fn split_symbolic_ranges(ast: &UOp) -> UOp {
    let symbolic: Vec<UOp> =
        ast.toposort().into_iter().filter(|n| n.op() == Ops::RANGE && n.is_symbolic_range()).collect();
    symbolic.iter().fold(ast.clone(), |ast, range| split(&ast, range))
}

fn split(ast: &UOp, range: &UOp) -> UOp {
    let end = range.src()[0].clone();
    let (id, kind) = range.range_arg();
    let dt = range.dtype();
    let next_id =
        ast.toposort().iter().filter(|r| r.op() == Ops::RANGE).map(|r| r.range_arg().0).max().unwrap_or(0) + 1;
    // `rest` keeps a symbolic bound: a plain loop.
    let blocks = (&end + (LANES - 1)).idiv(&UOp::int(dt, LANES));
    let rest = UOp::range(blocks, id, kind);
    let lane = UOp::range(UOp::int(dt, LANES), next_id, kind);
    let index = &(&rest * LANES) + &lane;
    let valid = index.lt(&end);
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    map.insert(range.clone(), index);
    // REDUCEs over the loop reduce over both parts, the iterations past the bound adding the
    // identity.
    let sub = split_reduce_ranges(&ast.substitute(&map), &rest, &lane, |red, value| {
        let crate::uop::Arg::Op(op) = red.arg() else { unreachable!("REDUCE without op") };
        valid.where_(value, &UOp::cnst(red.dtype(), op.reduce_identity(red.dtype())))
    });
    gate_indexes(&sub, |index| index.src()[1].toposort().contains(&lane), &valid)
}
