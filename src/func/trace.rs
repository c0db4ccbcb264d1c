//! A function traced on placeholders, and the graph it built bound back to real arguments.
//! Binding rebuilds the nodes above the placeholders; a rebuilt node that had its own backward
//! (a convolution's, a trig function's known derivative) keeps it, translated to the new
//! nodes, so a transformed graph differentiates as well as the original.

use crate::tensor::checks::{push_pending, take_pending, IndexCheck};
use crate::tensor::trace::placeholder_like;
use crate::tensor::{custom_gradient, set_custom_gradient, Tensor};
use crate::uop::{FxHashMap, FxHashSet, UOp};
use std::sync::Arc;

/// The placeholders a function was traced on, and the arguments they stand for.
pub(crate) struct Traced {
    pub(crate) placeholders: Vec<Tensor>,
    args: Vec<Tensor>,
}

impl Traced {
    /// Placeholders shaped like `args`.
    pub(crate) fn new(args: &[Tensor]) -> Traced {
        Traced { placeholders: args.iter().map(placeholder_like).collect(), args: args.to_vec() }
    }

    /// Binds `from` (any tensors, such as a model's parameters) to `to`.
    fn replacing(from: &[Tensor], to: &[Tensor]) -> Traced {
        Traced { placeholders: from.to_vec(), args: to.to_vec() }
    }

    fn map(&self) -> FxHashMap<UOp, UOp> {
        self.placeholders.iter().zip(&self.args).map(|(p, a)| (p.uop(), a.uop())).collect()
    }

    /// `results` (graphs over the placeholders) over the arguments instead; index checks and
    /// value conditions registered on the placeholders are moved over too.
    pub(crate) fn bind(&self, results: &[Tensor]) -> Vec<Tensor> {
        let map = self.map();
        let leaves: FxHashSet<UOp> = map.keys().cloned().collect();
        let checks = take_checks_on(&leaves);
        let roots: Vec<UOp> = results.iter().map(|t| t.uop()).chain(checks.iter().map(|c| c.bounds.uop())).collect();
        let mut bound = substitute(&roots, &map);
        let checks_bound = bound.split_off(results.len());
        for (c, b) in checks.iter().zip(checks_bound) {
            push_pending(IndexCheck { bounds: Tensor::from_uop(b), what: c.what.clone(), ..*c });
        }
        bound.into_iter().map(Tensor::from_uop).collect()
    }
}

/// Takes the pending index checks and value conditions that read `leaves` (registered by the
/// function being traced); the others stay pending.
pub(crate) fn take_checks_on(leaves: &FxHashSet<UOp>) -> Vec<IndexCheck> {
    let (ours, others): (Vec<IndexCheck>, Vec<IndexCheck>) =
        take_pending().into_iter().partition(|c| c.bounds.uop().toposort().iter().any(|n| leaves.contains(n)));
    others.into_iter().for_each(push_pending);
    ours
}

/// `roots` with the nodes of `map` replaced, everything above them rebuilt; rebuilt nodes keep
/// their custom backward.
pub(crate) fn substitute(roots: &[UOp], map: &FxHashMap<UOp, UOp>) -> Vec<UOp> {
    let memo = UOp::substitute_all(roots, map);
    let keep_backward: Vec<(UOp, UOp)> = memo
        .iter()
        .filter(|(old, new)| old != new && !map.contains_key(*old) && custom_gradient(old).is_some())
        .map(|(old, new)| (old.clone(), new.clone()))
        .collect();
    let out = roots.iter().map(|r| memo[r].clone()).collect();
    if !keep_backward.is_empty() {
        let memo = Arc::new(memo);
        let map = Arc::new(map.clone());
        for (old, new) in keep_backward {
            let rule = custom_gradient(&old).expect("checked above");
            let (memo, map) = (memo.clone(), map.clone());
            // The old rule names old ancestors and builds its gradients over old nodes: ask it
            // for the old nodes whose new forms are needed, and bind what it gives.
            set_custom_gradient(
                &new,
                Arc::new(move |g: &Tensor, needed: &FxHashSet<UOp>| {
                    let old_needed: FxHashSet<UOp> =
                        memo.iter().filter(|(_, v)| needed.contains(*v)).map(|(k, _)| k.clone()).collect();
                    rule(g, &old_needed)
                        .into_iter()
                        .filter_map(|(node, grad)| {
                            let node = memo.get(&node)?.clone();
                            let grad = substitute(&[grad.uop()], &map).remove(0);
                            Some((node, Tensor::from_uop(grad)))
                        })
                        .collect()
                }),
            );
        }
    }
    out
}

/// The results of `f` computed with each tensor of `params` replaced by the matching tensor of
/// `values` (torch.func's `functional_call`): `f` runs once as written — say a model's forward
/// over its own parameters — and the graph it built is rebound, so a model's parameters can
/// be the arguments of a transformed function (`grad` with respect to them, `vmap` over
/// ensembles of them).
pub fn functional_call(params: &[Tensor], values: &[Tensor], f: impl FnOnce() -> Vec<Tensor>) -> Vec<Tensor> {
    assert_eq!(params.len(), values.len(), "functional_call: {} parameters but {} values", params.len(), values.len());
    for (i, (p, v)) in params.iter().zip(values).enumerate() {
        assert_eq!(
            p.sym_shape(),
            v.sym_shape(),
            "functional_call: value {i} has shape {:?}, its parameter {:?}",
            v.sym_shape(),
            p.sym_shape()
        );
    }
    let values: Vec<Tensor> = params.iter().zip(values).map(|(p, v)| v.cast(p.dtype())).collect();
    let results = f();
    Traced::replacing(params, &values).bind(&results)
}
