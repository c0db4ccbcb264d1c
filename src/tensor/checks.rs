//! Checks that wait for the data. Index bounds: ops that select by integer tensors (`gather`,
//! tensor indexing, `scatter`, class-index losses, `Embedding`) cannot know their indices when
//! the graph is built, so each one registers a check — the smallest and largest index, computed
//! by a tiny kernel in the same realize as the result — and the realize that runs it panics
//! with the op, the allowed range and the indices found when one is out of range (PyTorch
//! raises an IndexError there; without the check the gather would read 0). Conditions on
//! values (`multinomial`'s weights, `binary_crossentropy`'s probabilities) are the same
//! mechanism: the number of elements that break the rule must be 0. A TinyJit replay checks
//! every call too.

use super::Tensor;
use crate::runtime::Buffer;
use crate::uop::DType;
use std::cell::RefCell;
use std::sync::Arc;

/// A registered check: `bounds` is `[min, max]` (int64) of the indices, which must lie in
/// `lo..hi`.
pub(crate) struct IndexCheck {
    pub(crate) bounds: Tensor,
    pub(crate) lo: i64,
    pub(crate) hi: i64,
    pub(crate) what: String,
    /// A condition on values (`bounds` is `[0, elements breaking it]`), not index bounds.
    pub(crate) condition: bool,
}

thread_local! {
    static PENDING: RefCell<Vec<IndexCheck>> = const { RefCell::new(Vec::new()) };
}

/// Registers that every element of `index` must lie in `lo..hi` (checked at the next realize on
/// this thread); `what` names the op and the axis for the message.
pub(crate) fn check_indices(index: &Tensor, lo: i64, hi: i64, what: String) {
    if index.numel() == 0 {
        return;
    }
    let t = index.detach().cast(DType::I64).flatten();
    let bounds = Tensor::stack(&[&t.min(), &t.max()], 0);
    PENDING.with(|p| p.borrow_mut().push(IndexCheck { bounds, lo, hi, what, condition: false }));
}

/// Registers that `bad` (bool: true where an element breaks the op's rule) is false everywhere
/// (checked at the next realize on this thread); `what` is the op and its rule.
pub(crate) fn check_condition(bad: &Tensor, what: String) {
    if bad.numel() == 0 {
        return;
    }
    let count = bad.detach().cast(DType::I64).flatten().sum();
    let bounds = Tensor::stack(&[&count.zeros_like(), &count], 0);
    PENDING.with(|p| p.borrow_mut().push(IndexCheck { bounds, lo: 0, hi: 1, what, condition: true }));
}

/// Registers a check again (a functional transform takes the checks its function registered
/// on placeholders and gives them back rewritten for the values it computes).
pub(crate) fn push_pending(check: IndexCheck) {
    PENDING.with(|p| p.borrow_mut().push(check));
}

/// Takes the checks registered on this thread.
pub(crate) fn take_pending() -> Vec<IndexCheck> {
    PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

/// Panics naming the op when the `[min, max]` in `buf` leaves `lo..hi` (for a `condition`:
/// when `max`, the number of elements breaking it, is not 0).
pub(crate) fn verify(buf: &Arc<Buffer>, lo: i64, hi: i64, what: &str, condition: bool) -> crate::Result<()> {
    let bytes = buf.to_bytes()?;
    let v: Vec<i64> = bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
    let (min, max) = (v[0], v[1]);
    if condition && max != 0 {
        panic!("{what} ({max} do not)");
    }
    if min < lo || max >= hi {
        panic!("{what}: index out of range: indices must be in [{lo}, {hi}), found values from {min} to {max}");
    }
    Ok(())
}
