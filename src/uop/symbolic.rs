//! The symbolic simplifier: constant folding, algebraic identities, combining like terms,
//! div/mod folding and comparisons folded by range analysis, as rules for `graph_rewrite`.

use super::uop::UOp;

/// Simplifies an expression (index arithmetic, validity masks, constant ALU).
pub fn simplify(u: &UOp) -> UOp {
    u.clone() // TODO(helper): graph_rewrite(u, symbolic(), BottomUp)
}
