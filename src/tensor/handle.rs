//! The `Tensor` handle: a lazy tensor is a shared, lockable pointer to the graph node it stands
//! for (and its autograd state). Every op lives in the sibling files.

use super::no_grad::is_no_grad;
use crate::uop::{DType, Dim, Ops, UOp};
use std::sync::{Arc, RwLock};

pub(crate) struct TensorInner {
    pub(crate) uop: UOp,
    pub(crate) requires_grad: bool,
    pub(crate) grad: Option<Tensor>,
    /// `backward()` ran from this tensor: its graph has given its gradients and is not kept
    /// behind its value once realized (as PyTorch frees a graph after backward), so a loop
    /// that keeps every step's loss does not keep every step's graph.
    pub(crate) backward_done: bool,
}

/// A lazy tensor: a cheap, clonable handle (clones share the same data and gradient).
#[derive(Clone)]
pub struct Tensor {
    pub(super) inner: Arc<RwLock<TensorInner>>,
}

impl Tensor {
    /// A tensor standing for the graph node `uop`.
    pub fn from_uop(uop: UOp) -> Tensor {
        assert!(uop.try_shape().is_some(), "Tensor::from_uop: {:?} is not a tensor-level node", uop.op());
        // Inside a no-grad scope every new tensor is detached from the graph it came from.
        let uop = if is_no_grad() && uop.op() != Ops::DETACH {
            UOp::new(Ops::DETACH, uop.dtype(), vec![uop], crate::uop::Arg::None)
        } else {
            uop
        };
        Tensor {
            inner: Arc::new(RwLock::new(TensorInner { uop, requires_grad: false, grad: None, backward_done: false })),
        }
    }
    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, TensorInner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }
    pub(crate) fn write(&self) -> std::sync::RwLockWriteGuard<'_, TensorInner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
    /// How many clones of this handle exist (1: this is the only one).
    pub fn handle_count(&self) -> usize {
        Arc::strong_count(&self.inner)
    }
    /// The graph node this tensor currently stands for.
    pub fn uop(&self) -> UOp {
        self.read().uop.clone()
    }
    pub(crate) fn set_uop(&self, u: UOp) {
        self.write().uop = u;
    }
    /// Points this handle at `value` (any shape, dtype or device), as tinygrad's `replace` and
    /// PyTorch's `.data = value`: every clone of this handle sees it, and what the tensor is to
    /// autograd (a parameter) stays; its gradient is cleared.
    pub fn replace(&self, value: &Tensor) -> &Tensor {
        let mut inner = self.write();
        inner.uop = value.uop();
        inner.grad = None;
        drop(inner);
        self
    }
    /// The shape; panics for a tensor with a symbolic length (see [`Tensor::sym_shape`]).
    pub fn shape(&self) -> Vec<usize> {
        let u = self.uop();
        if u.has_symbolic_shape() {
            panic!("this tensor has the symbolic shape {:?}: use sym_shape()", u.sym_shape());
        }
        u.shape().to_vec()
    }
    /// The shape, each length a number or a symbolic expression over bound variables.
    pub fn sym_shape(&self) -> Vec<Dim> {
        self.read().uop.sym_shape()
    }
    /// Whether some length of the shape is symbolic.
    pub fn is_symbolic(&self) -> bool {
        self.read().uop.has_symbolic_shape()
    }
    /// The shape for rank and axis checks: a symbolic length counts at its largest value.
    pub(crate) fn layout_shape(&self) -> Vec<usize> {
        self.read().uop.shape().to_vec()
    }
    pub fn ndim(&self) -> usize {
        self.read().uop.shape().len()
    }
    pub fn numel(&self) -> usize {
        self.read().uop.numel()
    }
    pub fn dtype(&self) -> DType {
        self.read().uop.dtype()
    }
    /// Name of the device the tensor lives on.
    pub fn device(&self) -> String {
        self.read().uop.device().unwrap_or("?").to_string()
    }
    /// Whether two handles share the same tensor.
    pub fn same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
