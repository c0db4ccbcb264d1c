//! In-place updates: `assign` writes new values into a realized tensor's own buffer.

use super::{Operand, Tensor, TensorInner};
use std::sync::{Arc, Mutex, RwLock, Weak};

/// Tensors with an assign not yet realized. An assign is a mutation that has "happened": the
/// next realize of anything runs it too (so a BatchNorm's running statistics update with the
/// training step that computed them).
static PENDING: Mutex<Vec<Weak<RwLock<TensorInner>>>> = Mutex::new(Vec::new());

/// Takes the tensors whose assigns are still pending.
pub(crate) fn take_pending_assigns() -> Vec<Tensor> {
    let list = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner()));
    list.into_iter()
        .filter_map(|w| w.upgrade())
        .map(|inner| Tensor { inner })
        .filter(|t| t.uop().op() == Ops::ASSIGN && existing_buffer(&t.uop()).is_none())
        .collect()
}
use crate::schedule::existing_buffer;
use crate::uop::{Arg, Ops, UOp};

impl Tensor {
    /// Replaces the contents of this tensor with `value` (broadcast and cast to its shape and
    /// dtype). When this tensor is realized, the new values are written into its existing
    /// buffer at the next realize, so every handle and view of it sees them; kernels that read
    /// the old values in the same realize run first.
    pub fn assign(&self, value: impl Operand) -> Tensor {
        let v = value.into_tensor(self);
        assert_eq!(v.device(), self.device(), "assign: value on {} but target on {}", v.device(), self.device());
        let v = v.cast(self.dtype()).broadcast_to(&self.shape());
        let target = self.uop();
        let target_view = match target.op() {
            Ops::ASSIGN => target.src()[0].clone(),
            _ => target.clone(),
        };
        if existing_buffer(&target_view).is_none() {
            // Not backed by memory yet: the tensor simply stands for the new value.
            self.set_uop(v.uop());
            return self.clone();
        }
        let node = UOp::new(Ops::ASSIGN, self.dtype(), vec![target_view, v.uop()], Arg::None);
        self.set_uop(node);
        let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        if !pending.iter().any(|w| w.as_ptr() == Arc::as_ptr(&self.inner)) {
            pending.push(Arc::downgrade(&self.inner));
        }
        self.clone()
    }
}
