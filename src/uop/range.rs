//! Range analysis: every integer (and bool) node knows the smallest and largest value it can
//! take, computed once when the node is built. The symbolic simplifier folds comparisons,
//! divisions and modulos with these bounds.

use super::dtype::DType;
use super::ops::Ops;
use super::uop::{Arg, UOp};

/// Bounds `(min, max)` of a node's value, or `None` for non-integer nodes.
pub(crate) fn infer_bounds(op: Ops, dtype: DType, src: &[UOp], arg: &Arg) -> Option<(i64, i64)> {
    // TODO(helper): full interval arithmetic. Placeholder: constants, ranges and dtype bounds.
    if !(dtype.is_int() || dtype.is_bool()) || dtype.count != 1 || dtype.ptr {
        return None;
    }
    let (lo, hi) = dtype.int_range();
    let full = (lo.max(i64::MIN as i128) as i64, hi.min(i64::MAX as i128) as i64);
    Some(match (op, arg) {
        (Ops::CONST, Arg::Const(c)) => (c.as_i64(), c.as_i64()),
        (Ops::RANGE, _) => (0, src[0].vmax() - 1),
        _ => full,
    })
}
