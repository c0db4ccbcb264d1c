//! `backward`: gradients of a tensor with respect to every tensor that requires grad, added to
//! their `.grad()`.

use super::rules::compute_gradient;
use crate::tensor::{is_no_grad, tensors_requiring_grad, with_sources, Tensor};
use crate::uop::{FxHashMap, FxHashSet, UOp};

impl Tensor {
    /// Computes the gradient of this scalar with respect to every tensor that requires grad and
    /// that it depends on, adding it to their `.grad()`. The gradients are lazy tensors.
    pub fn backward(&self) {
        assert_eq!(self.numel(), 1, "backward: needs a scalar (one element), shape is {:?}", self.shape());
        self.backward_with(&self.ones_like());
    }

    /// Like `backward` with an explicit gradient for this tensor (same shape).
    pub fn backward_with(&self, grad: &Tensor) {
        assert!(
            self.dtype().is_float(),
            "backward: only float tensors have gradients, this one is {} (shape {:?})",
            self.dtype(),
            self.shape()
        );
        assert_eq!(
            grad.shape(),
            self.shape(),
            "backward: gradient shape {:?} != tensor shape {:?}",
            grad.shape(),
            self.shape()
        );
        assert!(!is_no_grad(), "backward: called inside a no_grad scope");
        let params = tensors_requiring_grad();
        let mut by_uop: FxHashMap<UOp, Vec<Tensor>> = FxHashMap::default();
        for p in params {
            by_uop.entry(p.uop()).or_default().push(p);
        }
        let targets: FxHashSet<UOp> = by_uop.keys().cloned().collect();
        let root = with_sources(&self.uop(), &targets);
        let grads = compute_gradient(&root, &grad.cast(self.dtype()), &targets);
        for (u, g) in grads {
            for t in &by_uop[&u] {
                let g = g.cast(t.dtype());
                let acc = match t.grad() {
                    Some(prev) => prev + g.clone(),
                    None => g.clone(),
                };
                t.set_grad(Some(acc));
            }
        }
        self.write().backward_done = true;
    }

    /// The gradients of this scalar with respect to `targets` (in order; zeros for a target it
    /// does not depend on), as tinygrad's `gradient`: nothing is added to any `.grad()`, and
    /// the targets need not require grad.
    pub fn gradient(&self, targets: &[&Tensor]) -> Vec<Tensor> {
        assert_eq!(self.numel(), 1, "gradient: needs a scalar (one element), shape is {:?}", self.shape());
        assert!(!is_no_grad(), "gradient: called inside a no_grad scope");
        let wanted: FxHashSet<UOp> = targets.iter().map(|t| t.uop()).collect();
        let root = with_sources(&self.uop(), &wanted);
        let grads = compute_gradient(&root, &self.ones_like(), &wanted);
        targets
            .iter()
            .map(|t| grads.get(&t.uop()).map(|g| g.cast(t.dtype())).unwrap_or_else(|| t.zeros_like()))
            .collect()
    }
}
