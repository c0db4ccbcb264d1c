//! In-place updates: `assign` writes new values into a realized tensor's own buffer.

use super::{Operand, Tensor};
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
        self.clone()
    }
}
