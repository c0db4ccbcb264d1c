//! Autograd on tensors: `requires_grad`, `backward`, `grad`, `detach`, and the no-grad scope.

use super::{Tensor, TensorInner};
use crate::gradient::compute_gradient;
use crate::schedule::existing_buffer;
use crate::uop::{Arg, FxHashMap, FxHashSet, Ops, UOp, WeakUOp};
use std::cell::Cell;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

/// Tensors that asked for gradients (weak: the registry never keeps one alive).
static GRAD_TENSORS: Mutex<Vec<Weak<RwLock<TensorInner>>>> = Mutex::new(Vec::new());

/// Realized tensors and the graphs they were computed from, so that `backward()` still reaches
/// the parameters behind a value that was read (printed, `to_vec`) before it. Keyed weakly by
/// the buffer view that replaced the graph; only kept while some tensor requires grad.
type Sources = Mutex<FxHashMap<usize, (WeakUOp, UOp)>>;
static SOURCES: OnceLock<Sources> = OnceLock::new();

fn sources() -> &'static Sources {
    SOURCES.get_or_init(|| Mutex::new(FxHashMap::default()))
}

/// Records that `view` (a realized buffer) holds the value of `graph`.
pub(crate) fn remember_graph(view: &UOp, graph: &UOp) {
    // Assigns (optimizer updates) and detached values must not carry gradients back.
    if matches!(graph.op(), Ops::ASSIGN | Ops::DETACH) || existing_buffer(graph).is_some() {
        return;
    }
    let any_params = GRAD_TENSORS.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|w| w.strong_count() > 0);
    if !any_params {
        return;
    }
    let mut map = sources().lock().unwrap_or_else(|e| e.into_inner());
    map.retain(|_, (w, _)| w.is_alive());
    map.insert(view.id(), (view.downgrade(), graph.clone()));
}

/// `root` with every remembered realized value replaced by the graph it came from (except
/// the targets themselves), so gradients flow through values that were realized early.
fn with_sources(root: &UOp, targets: &FxHashSet<UOp>) -> UOp {
    let map = sources().lock().unwrap_or_else(|e| e.into_inner());
    if map.is_empty() {
        return root.clone();
    }
    // Remembered values whose graphs lead to a target, directly or through other remembered
    // values. Only those are replaced: substituting the others would gain nothing and would
    // rebuild the nodes above them, losing their custom backward rules (convolutions).
    let mut leads: FxHashSet<usize> = FxHashSet::default();
    loop {
        let before = leads.len();
        for (id, (_, g)) in map.iter() {
            if !leads.contains(id) && g.toposort().iter().any(|x| targets.contains(x) || leads.contains(&x.id())) {
                leads.insert(*id);
            }
        }
        if leads.len() == before {
            break;
        }
    }
    let mut root = root.clone();
    // A remembered graph may itself contain realized values: repeat (bounded) until none.
    for _ in 0..64 {
        let mut sub: FxHashMap<UOp, UOp> = FxHashMap::default();
        for n in root.toposort() {
            if targets.contains(&n) {
                continue;
            }
            if let Some((w, g)) = map.get(&n.id()) {
                if w.upgrade().as_ref() == Some(&n) && leads.contains(&n.id()) {
                    sub.insert(n, g.clone());
                }
            }
        }
        if sub.is_empty() {
            break;
        }
        root = root.substitute(&sub);
    }
    root
}

thread_local! {
    static NO_GRAD: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f` with gradient tracking off on this thread: tensors computed inside are detached
/// (an optimizer's update does not become part of the next backward graph).
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            NO_GRAD.with(|c| c.set(c.get() - 1));
        }
    }
    NO_GRAD.with(|c| c.set(c.get() + 1));
    let _restore = Restore;
    f()
}

/// Whether a no-grad scope is active on this thread.
pub fn is_no_grad() -> bool {
    NO_GRAD.with(|c| c.get() > 0)
}

impl Tensor {
    /// Marks this tensor as one whose gradient `backward()` computes (a parameter).
    pub fn requires_grad(self) -> Tensor {
        self.set_requires_grad(true);
        self
    }

    pub fn set_requires_grad(&self, on: bool) {
        self.write().requires_grad = on;
        if on {
            let mut reg = GRAD_TENSORS.lock().unwrap_or_else(|e| e.into_inner());
            reg.retain(|w| w.strong_count() > 0);
            if !reg.iter().any(|w| w.as_ptr() == Arc::as_ptr(&self.inner)) {
                reg.push(Arc::downgrade(&self.inner));
            }
        }
    }

    pub fn is_requires_grad(&self) -> bool {
        self.read().requires_grad
    }

    /// The accumulated gradient, if `backward()` reached this tensor.
    pub fn grad(&self) -> Option<Tensor> {
        self.read().grad.clone()
    }

    /// Sets or clears the gradient (optimizers clear it in `zero_grad`).
    pub fn set_grad(&self, g: Option<Tensor>) {
        self.write().grad = g;
    }

    /// The same values, cut off from autograd.
    pub fn detach(&self) -> Tensor {
        let u = self.uop();
        Tensor::from_uop(UOp::new(Ops::DETACH, u.dtype(), vec![u], Arg::None))
    }

    /// Computes the gradient of this scalar with respect to every tensor that requires grad and
    /// that it depends on, adding it to their `.grad()`. The gradients are lazy tensors.
    pub fn backward(&self) {
        assert_eq!(self.numel(), 1, "backward: needs a scalar (one element), shape is {:?}", self.shape());
        self.backward_with(&self.ones_like());
    }

    /// Like `backward` with an explicit gradient for this tensor (same shape).
    pub fn backward_with(&self, grad: &Tensor) {
        assert_eq!(
            grad.shape(),
            self.shape(),
            "backward: gradient shape {:?} != tensor shape {:?}",
            grad.shape(),
            self.shape()
        );
        assert!(!is_no_grad(), "backward: called inside a no_grad scope");
        let params: Vec<Tensor> = {
            let reg = GRAD_TENSORS.lock().unwrap_or_else(|e| e.into_inner());
            reg.iter()
                .filter_map(|w| w.upgrade())
                .map(|inner| Tensor { inner })
                .filter(|t| t.is_requires_grad())
                .collect()
        };
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
    }
}
