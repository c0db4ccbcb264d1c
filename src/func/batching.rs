//! Batching rules: the graph a function built for one element, rewritten to compute a whole
//! batch at once. A node is *batched* when it depends on a batched leaf; a batched node carries
//! the batch as its new axis 0, and every primitive has a rule saying how its argument moves
//! over by one axis. Nodes that depend on no batched leaf are kept as they are, so weights and
//! constants the function closes over are computed once, not once per element.

use crate::tensor::trace::placeholder;
use crate::tensor::{custom_gradient, set_custom_gradient, CustomGradient, Tensor};
use crate::uop::dim::dim_pairs;
use crate::uop::node::toposort_many;
use crate::uop::{Arg, Dim, FxHashMap, FxHashSet, Ops, UOp};
use std::sync::Arc;

/// `Shape` when every length is a number, else `DimShape`.
fn shape_arg(dims: Vec<Dim>) -> Arg {
    match dims.iter().map(|d| d.as_const()).collect::<Option<Vec<usize>>>() {
        Some(s) => Arg::Shape(s),
        None => Arg::DimShape(dims),
    }
}

fn pairs_arg(pairs: Vec<(Dim, Dim)>) -> Arg {
    match pairs.iter().map(|(a, b)| Some((a.as_const()?, b.as_const()?))).collect::<Option<Vec<_>>>() {
        Some(p) => Arg::Pairs(p),
        None => Arg::DimPairs(pairs),
    }
}

fn with_batch(b: usize, dims: &[Dim]) -> Vec<Dim> {
    std::iter::once(Dim::Const(b)).chain(dims.iter().cloned()).collect()
}

/// An unbatched node broadcast along a new batch axis 0 of length `b` (a view: no copy).
pub(crate) fn broadcast_batch(u: &UOp, b: usize) -> UOp {
    let dims = u.sym_shape();
    let one = UOp::new(Ops::RESHAPE, u.dtype(), vec![u.clone()], shape_arg(with_batch(1, &dims)));
    UOp::new(Ops::EXPAND, u.dtype(), vec![one], shape_arg(with_batch(b, &dims)))
}

/// How a primitive is batched. The match has no catch-all arm: a new op in `Ops` does not
/// compile until it is given a rule here (or said to be no tensor-graph op), so no primitive
/// can miss one.
enum Rule {
    /// Sources aligned on the batch axis, the argument unchanged.
    Elementwise,
    /// The argument names shapes, axes or pairs, which move over by one.
    Movement,
    /// A leaf: never batched unless it is a placeholder the transform batches itself.
    Leaf,
    /// Writes into memory the function does not own.
    Assign,
    /// Not a tensor-graph op (kernel and program ops).
    NotInTensorGraphs,
}

fn rule(op: Ops) -> Rule {
    use Ops::*;
    match op {
        NEG | RECIP | SQRT | EXP2 | LOG2 | SIN | TRUNC | ADD | SUB | MUL | FDIV | IDIV | MOD | MAX | CMPLT | CMPNE
        | CMPEQ | AND | OR | XOR | SHL | SHR | WHERE | MULACC | CAST | BITCAST | CONTIGUOUS | COPY | DETACH => {
            Rule::Elementwise
        }
        RESHAPE | PERMUTE | EXPAND | PAD | SHRINK | FLIP | REDUCE_AXIS => Rule::Movement,
        // A tensor spread over devices is a leaf: its sources are each device's memory.
        BUFFER | CONST | IOTA | DEVICE | DEFINE_VAR | BIND | MULTI => Rule::Leaf,
        ASSIGN => Rule::Assign,
        SINK | REDUCE | DEFINE_GLOBAL | DEFINE_REG | DEFINE_LOCAL | RANGE | END | SPECIAL | INDEX | LOAD | STORE
        | BARRIER | VECTORIZE | GEP | IF | ENDIF => Rule::NotInTensorGraphs,
    }
}

/// Whether a tensor-graph op has a batching rule (every one does; the test suite checks the
/// list against the ops its graphs use).
pub fn has_batching_rule(op: Ops) -> bool {
    matches!(rule(op), Rule::Elementwise | Rule::Movement | Rule::Leaf)
}

/// The batched form of `n`, whose sources are given as (node, batched?).
fn batch_node(n: &UOp, src: Vec<(UOp, bool)>, b: usize) -> UOp {
    let arg = n.arg();
    match rule(n.op()) {
        Rule::Elementwise => {
            let src = src.into_iter().map(|(s, batched)| if batched { s } else { broadcast_batch(&s, b) }).collect();
            UOp::new(n.op(), n.dtype(), src, arg.clone())
        }
        Rule::Movement => {
            let x = src.into_iter().next().expect("a movement op has a source").0;
            let new_arg = match (n.op(), arg) {
                (Ops::RESHAPE | Ops::EXPAND, _) => shape_arg(with_batch(b, &n.sym_shape())),
                (Ops::PERMUTE, Arg::Axes(order)) => {
                    Arg::Axes(std::iter::once(0).chain(order.iter().map(|&a| a + 1)).collect())
                }
                (Ops::FLIP, Arg::Axes(axes)) => Arg::Axes(axes.iter().map(|&a| a + 1).collect()),
                (Ops::PAD, _) => {
                    pairs_arg(std::iter::once((Dim::Const(0), Dim::Const(0))).chain(dim_pairs(arg)).collect())
                }
                (Ops::SHRINK, _) => {
                    pairs_arg(std::iter::once((Dim::Const(0), Dim::Const(b))).chain(dim_pairs(arg)).collect())
                }
                (Ops::REDUCE_AXIS, Arg::Reduce(op, axes)) => Arg::Reduce(*op, axes.iter().map(|&a| a + 1).collect()),
                (op, arg) => unreachable!("{op:?} with argument {arg:?}"),
            };
            UOp::new(n.op(), n.dtype(), vec![x], new_arg)
        }
        Rule::Assign => panic!(
            "vmap: the mapped function assigns a batched value (shape {:?} per element) into a tensor that is not \
             batched; as in torch.func, write into a batched tensor or return the value instead",
            n.src().get(1).map(|v| v.sym_shape())
        ),
        Rule::Leaf | Rule::NotInTensorGraphs => {
            unreachable!("vmap: {:?} has batched sources, which no tensor graph builds", n.op())
        }
    }
}

/// The batched forms of `roots`: `seeds` maps each batched leaf (a placeholder the function
/// saw) to its batched value (batch axis 0, length `b`). `None` for a root that depends on no
/// batched leaf.
pub(crate) fn batch_graph(roots: &[UOp], seeds: &FxHashMap<UOp, UOp>, b: usize) -> Vec<Option<UOp>> {
    let mut batched: FxHashMap<UOp, UOp> = seeds.clone();
    for n in toposort_many(roots) {
        if batched.contains_key(&n) || !n.src().iter().any(|s| batched.contains_key(s)) {
            continue;
        }
        let src = n.src().iter().map(|s| batched.get(s).map_or((s.clone(), false), |v| (v.clone(), true))).collect();
        let new = batch_node(&n, src, b);
        batched.insert(n, new);
    }
    keep_custom_backward(&batched, seeds, b);
    roots.iter().map(|r| batched.get(r).cloned()).collect()
}

/// Gives each rebuilt node that had its own backward (a convolution's) a batched one: the old
/// rule, run on a placeholder for one element's gradient, builds per-element gradient graphs,
/// which are batched like the forward graph. A gradient for a node that is not batched (a
/// weight every element shares) is summed over the batch.
fn keep_custom_backward(batched: &FxHashMap<UOp, UOp>, seeds: &FxHashMap<UOp, UOp>, b: usize) {
    let rebuilt: Vec<(UOp, UOp, CustomGradient)> = batched
        .iter()
        .filter(|(old, _)| !seeds.contains_key(*old))
        .filter_map(|(old, new)| Some((old.clone(), new.clone(), custom_gradient(old)?)))
        .collect();
    if rebuilt.is_empty() {
        return;
    }
    let memo = Arc::new(batched.clone());
    let seeds = Arc::new(seeds.clone());
    for (old, new, rule) in rebuilt {
        let (memo, seeds) = (memo.clone(), seeds.clone());
        let batched_rule = move |g: &Tensor, needed: &FxHashSet<UOp>| -> Vec<(UOp, Tensor)> {
            let element_grad = placeholder(&old.sym_shape(), g.dtype(), &g.device());
            // The old nodes whose batched (or unchanged, when not batched) form is needed.
            let old_needed: FxHashSet<UOp> = memo
                .iter()
                .filter(|(_, v)| needed.contains(*v))
                .map(|(k, _)| k.clone())
                .chain(needed.iter().filter(|n| !memo.contains_key(*n)).cloned())
                .collect();
            let pairs = rule(&element_grad, &old_needed);
            let mut with_grad: FxHashMap<UOp, UOp> = (*seeds).clone();
            with_grad.insert(element_grad.uop(), g.uop());
            let roots: Vec<UOp> = pairs.iter().map(|(_, t)| t.uop()).collect();
            let grads = batch_graph(&roots, &with_grad, b);
            pairs
                .into_iter()
                .zip(grads)
                .map(|((node, per_element), batched_grad)| match (memo.get(&node), batched_grad) {
                    (Some(target), Some(bg)) => (target.clone(), Tensor::from_uop(bg)),
                    (Some(target), None) => (target.clone(), Tensor::from_uop(broadcast_batch(&per_element.uop(), b))),
                    (None, Some(bg)) => (node, Tensor::from_uop(bg).sum_axis(0)),
                    (None, None) => (node, per_element * b as f64),
                })
                .collect()
        };
        set_custom_gradient(&new, Arc::new(batched_rule));
    }
}
