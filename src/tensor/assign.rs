//! In-place updates: `assign` writes new values into a realized tensor's own buffer.

use super::{Operand, Tensor, TensorInner};
use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock, Weak};

thread_local! {
    /// Tensors this thread assigned and has not realized yet. An assign is a mutation that has
    /// "happened": the thread's next realize of anything runs it too (so a BatchNorm's running
    /// statistics update with the training step that computed them). Per thread, so one
    /// thread's realize never runs another's half-built update.
    static PENDING: RefCell<Vec<Weak<RwLock<TensorInner>>>> = const { RefCell::new(Vec::new()) };
}

/// A new ASSIGN node. Each gets a unique id: an assign is an event, and two assigns of equal
/// values at different times must not be merged by hash-consing (the second would look
/// "already done" while the first is still referenced).
pub(crate) fn assign_node(target: UOp, value: UOp) -> UOp {
    static NEXT: AtomicI64 = AtomicI64::new(0);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    UOp::new(Ops::ASSIGN, target.dtype(), vec![target, value], Arg::Int(id))
}

/// Takes the tensors whose assigns are still pending on this thread.
pub(crate) fn take_pending_assigns() -> Vec<Tensor> {
    let list = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
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
        let node = assign_node(target_view, v.uop());
        self.set_uop(node);
        PENDING.with(|p| {
            let mut pending = p.borrow_mut();
            if !pending.iter().any(|w| w.as_ptr() == Arc::as_ptr(&self.inner)) {
                pending.push(Arc::downgrade(&self.inner));
            }
        });
        self.clone()
    }
}
