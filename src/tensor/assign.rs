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
    /// Assigns made through views (`x.shrink(..).assign(..)`): held strongly, since the view
    /// handle is often a temporary while the tensor it writes into lives on.
    static PENDING_THROUGH_VIEWS: RefCell<Vec<UOp>> = const { RefCell::new(Vec::new()) };
}

/// A new ASSIGN node. Each gets a unique id: an assign is an event, and two assigns of equal
/// values at different times must not be merged by hash-consing (the second would look
/// "already done" while the first is still referenced).
pub(crate) fn assign_node(target: UOp, value: UOp) -> UOp {
    assign_node_with(vec![target, value])
}

/// `assign_node` with the sources given: target, value and, for a window assign, the window.
fn assign_node_with(src: Vec<UOp>) -> UOp {
    static NEXT: AtomicI64 = AtomicI64::new(0);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    UOp::new(Ops::ASSIGN, src[0].dtype(), src, Arg::Int(id))
}

/// A tensor spread over devices whose every part is memory (a realized spread tensor): an
/// assign writes each device's part in place (`schedule/multi.rs`).
fn is_spread_memory(u: &UOp) -> bool {
    u.op() == Ops::MULTI && u.src().iter().all(|s| existing_buffer(s).is_some())
}

/// A tensor handle on an assign node (not `from_uop`, which would detach it inside `no_grad`).
fn handle(uop: UOp) -> Tensor {
    Tensor { inner: Arc::new(RwLock::new(TensorInner { uop, requires_grad: false, grad: None, backward_done: false })) }
}

/// The graphs of the assigns still pending on this thread (left pending).
pub(crate) fn pending_assign_nodes() -> Vec<UOp> {
    let mut out: Vec<UOp> =
        PENDING.with(|p| p.borrow().iter().filter_map(|w| w.upgrade()).map(|inner| Tensor { inner }.uop()).collect());
    out.extend(PENDING_THROUGH_VIEWS.with(|p| p.borrow().clone()));
    out.retain(|u| u.op() == Ops::ASSIGN);
    out
}

/// Takes the tensors whose assigns are still pending on this thread.
pub(crate) fn take_pending_assigns() -> Vec<Tensor> {
    let list = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    let through_views = PENDING_THROUGH_VIEWS.with(|p| std::mem::take(&mut *p.borrow_mut()));
    list.into_iter()
        .filter_map(|w| w.upgrade())
        .map(|inner| Tensor { inner })
        .chain(through_views.into_iter().map(handle))
        .filter(|t| t.uop().op() == Ops::ASSIGN && existing_buffer(&t.uop()).is_none())
        .collect()
}
use crate::schedule::existing_buffer;
use crate::uop::dim::dim_pairs;
use crate::uop::{Arg, Dim, Ops, UOp};

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
        if existing_buffer(&target_view).is_some() || is_spread_memory(&target_view) {
            self.set_uop(assign_node(target_view, v.uop()));
        } else if let Some((base, chain)) = view_of_realized(&target) {
            // A view (slice, transpose, reshape) of a realized tensor: write through to it, now
            // (one kernel), so every later read of that tensor sees the new values — there is no
            // handle here to point it at the assign, as a plain assign does.
            let node = write_through(&base, &chain, &v);
            self.set_uop(replay_chain(&node, &chain));
            if Tensor::realize_all(&[&handle(node.clone())]).is_err() {
                // The device cannot run it now; the next realize on this thread tries again
                // (and reports the error).
                PENDING_THROUGH_VIEWS.with(|p| p.borrow_mut().push(node));
            }
            return self.clone();
        } else {
            // Not backed by memory yet: the tensor simply stands for the new value.
            self.set_uop(v.uop());
            return self.clone();
        }
        self.mark_pending();
        self.clone()
    }

    /// Writes `value` (broadcast and cast to the window's shape) into the elements of this
    /// realized tensor in `window` (a `(begin, end)` pair per axis, as `shrink_dims`; the ends
    /// and begins may be symbolic), leaving the others; lazy, as `assign`, and the kernel loops
    /// over the window only (a KV cache's new rows, not the whole cache).
    pub fn assign_window(&self, window: &[(Dim, Dim)], value: impl Operand) -> Tensor {
        let v = value.into_tensor(self);
        assert_eq!(v.device(), self.device(), "assign_window: value on {} but target on {}", v.device(), self.device());
        let current = self.uop();
        let target = if current.op() == Ops::ASSIGN { current.src()[0].clone() } else { current.clone() };
        assert!(
            existing_buffer(&target).is_some(),
            "assign_window: the target (shape {:?}) must be realized (a buffer, or an assign into one)",
            self.shape()
        );
        // The window of the tensor as it is now, so an earlier pending assign runs first.
        let region = handle(current).shrink_dims(window);
        let v = v.cast(self.dtype()).broadcast_to_dims(&region.sym_shape());
        self.set_uop(assign_node_with(vec![target, v.uop(), region.uop()]));
        self.mark_pending();
        self.clone()
    }

    /// Remembers this tensor's assign as pending on this thread (its next realize runs it).
    fn mark_pending(&self) {
        PENDING.with(|p| {
            let mut pending = p.borrow_mut();
            if !pending.iter().any(|w| w.as_ptr() == Arc::as_ptr(&self.inner)) {
                pending.push(Arc::downgrade(&self.inner));
            }
        });
    }
}

/// Whether `n` is (or is an assign into) memory: the node a view chain stops at.
fn is_backed(n: &UOp) -> bool {
    existing_buffer(n).is_some() || (n.op() == Ops::ASSIGN && existing_buffer(&n.src()[0]).is_some())
}

/// For a chain of movement ops over a realized tensor: that tensor and the ops, outermost first.
fn view_of_realized(top: &UOp) -> Option<(UOp, Vec<UOp>)> {
    let mut chain = Vec::new();
    let mut n = top.clone();
    while !is_backed(&n) {
        // A view made inside `no_grad` is detached: DETACH changes no value, so look through it.
        if n.op() == Ops::DETACH {
            n = n.src()[0].clone();
            continue;
        }
        if !matches!(n.op(), Ops::RESHAPE | Ops::PERMUTE | Ops::SHRINK | Ops::FLIP | Ops::PAD | Ops::EXPAND) {
            return None;
        }
        chain.push(n.clone());
        n = n.src()[0].clone();
    }
    (!chain.is_empty()).then_some((n, chain))
}

/// Assigns `value` (shaped like the top of `chain`) into the elements of `base` that the view
/// reads: the value and a mask of the written elements are carried back through each movement
/// op, then `where(mask, value, base)` is assigned to the base's memory. Returns the assign.
fn write_through(base: &UOp, chain: &[UOp], value: &Tensor) -> UOp {
    let mut v = value.clone();
    let mut m = Tensor::full_on(value.shape(), crate::ConstValue::Bool(true), crate::DType::BOOL, &value.device());
    for n in chain {
        let below = n.src()[0].shape().to_vec();
        let (nv, nm) = match (n.op(), n.arg()) {
            (Ops::RESHAPE, _) => (v.reshape(below.clone()), m.reshape(below)),
            (Ops::PERMUTE, Arg::Axes(order)) => {
                let mut inv = vec![0isize; order.len()];
                for (i, &o) in order.iter().enumerate() {
                    inv[o] = i as isize;
                }
                (v.permute(inv.clone()), m.permute(inv))
            }
            (Ops::FLIP, Arg::Axes(axes)) => {
                let axes: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
                (v.flip(axes.clone()), m.flip(axes))
            }
            (Ops::SHRINK, arg) => {
                let pads: Vec<(Dim, Dim)> =
                    dim_pairs(arg).iter().zip(&below).map(|((a, b), &d)| (a.clone(), Dim::Const(d) - b)).collect();
                (v.pad_dims(&pads), m.pad_dims(&pads))
            }
            (Ops::PAD, arg) => {
                // Writes into the padding have nowhere to go.
                let keep: Vec<(Dim, Dim)> =
                    dim_pairs(arg).iter().zip(&below).map(|((b, _), &d)| (b.clone(), b + d)).collect();
                (v.shrink_dims(&keep), m.shrink_dims(&keep))
            }
            (op, _) => panic!(
                "assign: cannot write through a {op:?} view (shape {:?} of a tensor of shape {:?}): several \
                 elements of the view are one element of the tensor",
                n.shape(),
                below
            ),
        };
        v = nv;
        m = nm;
    }
    let target = if base.op() == Ops::ASSIGN { base.src()[0].clone() } else { base.clone() };
    let new = m.where_(&v, Tensor::from_uop(base.clone()));
    assign_node(target, new.uop())
}

/// The view `chain` (outermost first) rebuilt on top of `base`.
fn replay_chain(base: &UOp, chain: &[UOp]) -> UOp {
    chain.iter().rev().fold(base.clone(), |below, n| n.with_src(vec![below]))
}
