//! Device-dependent rewrites of the tensor graph, applied when it is scheduled (never while it
//! is built, so the front end decides nothing about layout). Each rule looks at one node (its
//! sources already rewritten) and returns its replacement or `None`:
//! - `strip_detach`: DETACH only matters to autograd; inside `no_grad` every tensor is one, and
//!   left in place they would hide the patterns the other rules look for;
//! - `split_reduce`: a long reduce runs as two kernels;
//! - `pack_panels`: the right operand of a large matmul on a SIMD CPU is copied into panels;
//! - `copy_padded_inputs`: a padded operand a reduce reads many times is copied padded first.

use super::pack_panels::pack_panels;
use super::padded_inputs::copy_padded_inputs;
use super::realized::existing_buffer;
use super::split_reduce::split_reduce;
use crate::uop::node::toposort_many;
use crate::uop::{FxHashMap, Ops, UOp};

/// A named rule.
pub type GraphRule = (&'static str, fn(&UOp) -> Option<UOp>);

pub const GRAPH_RULES: &[GraphRule] = &[
    ("strip_detach", strip_detach),
    ("split_reduce", |n| numeric_shapes(n).then(|| split_reduce(n)).flatten()),
    ("pack_panels", |n| numeric_shapes(n).then(|| pack_panels(n)).flatten()),
    ("copy_padded_inputs", |n| numeric_shapes(n).then(|| copy_padded_inputs(n)).flatten()),
];

/// Whether a node and its sources have shapes of numbers: the layout rules reshape axes,
/// which a symbolic length does not allow (it keeps its own axis).
fn numeric_shapes(n: &UOp) -> bool {
    let symbolic = |u: &UOp| u.try_shape().is_some() && u.has_symbolic_shape();
    !symbolic(n) && !n.src().iter().any(symbolic)
}

/// `x` for `DETACH(x)` (the value is the same; gradients are not the schedule's business).
fn strip_detach(n: &UOp) -> Option<UOp> {
    (n.op() == Ops::DETACH).then(|| n.src()[0].clone())
}

/// `outs` rewritten by the rules, and for each rebuilt node the node it replaces (a rebuilt
/// ASSIGN is remembered as done under the node the tensors hold).
pub(crate) fn apply_graph_rules(outs: &[UOp]) -> (Vec<UOp>, FxHashMap<UOp, UOp>) {
    let topo = toposort_many(outs);
    // Rules look at shapes and devices, which rewriting keeps: if none applies to the graph as
    // it is, none applies at all.
    if !topo.iter().any(|n| GRAPH_RULES.iter().any(|(_, rule)| rule(n).is_some())) {
        return (outs.to_vec(), FxHashMap::default());
    }
    let mut new: FxHashMap<UOp, UOp> = FxHashMap::default();
    let mut origin: FxHashMap<UOp, UOp> = FxHashMap::default();
    for n in &topo {
        // Memory already (a buffer, or an assign that ran): its graph is not rebuilt, or the
        // rebuilt assign would run again.
        if existing_buffer(n).is_some() {
            new.insert(n.clone(), n.clone());
            continue;
        }
        let src: Vec<UOp> = n.src().iter().map(|s| new[s].clone()).collect();
        let mut rebuilt = if src.iter().zip(n.src()).all(|(a, b)| a == b) { n.clone() } else { n.with_src(src) };
        for (_, rule) in GRAPH_RULES {
            if let Some(r) = rule(&rebuilt) {
                rebuilt = r;
                break;
            }
        }
        if &rebuilt != n {
            origin.insert(rebuilt.clone(), n.clone());
        }
        new.insert(n.clone(), rebuilt);
    }
    (outs.iter().map(|o| new[o].clone()).collect(), origin)
}
