//! Autograd state of tensors: `requires_grad`, `grad`, `detach`, the no-grad scope, the graphs
//! behind realized values, and custom gradients. `backward` itself is in `gradient/`.

use super::handle::{Tensor, TensorInner};
use crate::schedule::existing_buffer;
use crate::uop::node_table::NodeTable;
use crate::uop::{Arg, FxHashMap, FxHashSet, Ops, UOp};
use std::sync::{Arc, Mutex, RwLock, Weak};

/// Tensors that asked for gradients (weak: the registry never keeps one alive).
static GRAD_TENSORS: Mutex<Vec<Weak<RwLock<TensorInner>>>> = Mutex::new(Vec::new());

/// Realized tensors and the graphs they were computed from, so that `backward()` still reaches
/// the parameters behind a value that was read (printed, `to_vec`) before it. Keyed weakly by
/// the buffer view that replaced the graph; only kept while some tensor requires grad.
static SOURCES: NodeTable<UOp> = NodeTable::new();

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
    SOURCES.insert(view, graph.clone());
}

/// `root` with every remembered realized value replaced by the graph it came from (except
/// the targets themselves), so gradients flow through values that were realized early. Only
/// remembered values reachable from `root` are looked at (so the cost does not grow with the
/// values a program keeps, say every step's loss), and only those whose graphs lead to a
/// target, directly or through other remembered values, are replaced: substituting the others
/// would gain nothing and would rebuild the nodes above them, losing their custom backward
/// rules (convolutions).
pub(crate) fn with_sources(root: &UOp, targets: &FxHashSet<UOp>) -> UOp {
    // Whether each remembered value met so far leads to a target (memoized; a value is marked
    // false while its graph is being walked, so a cycle cannot recurse forever).
    let mut leads: FxHashMap<UOp, bool> = FxHashMap::default();
    fn leads_to_target(view: &UOp, graph: &UOp, targets: &FxHashSet<UOp>, leads: &mut FxHashMap<UOp, bool>) -> bool {
        if let Some(&known) = leads.get(view) {
            return known;
        }
        leads.insert(view.clone(), false);
        let found = graph
            .toposort()
            .iter()
            .any(|x| targets.contains(x) || SOURCES.get(x).is_some_and(|g| leads_to_target(x, &g, targets, leads)));
        leads.insert(view.clone(), found);
        found
    }
    let mut root = root.clone();
    // A remembered graph may itself contain realized values: repeat (bounded) until none.
    for _ in 0..64 {
        let mut sub: FxHashMap<UOp, UOp> = FxHashMap::default();
        for n in above_targets(&root, targets) {
            if let Some(g) = SOURCES.get(&n) {
                if leads_to_target(&n, &g, targets, &mut leads) {
                    sub.insert(n, g);
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

/// The nodes reachable from `root` without passing through a target (a target's own sources,
/// such as the shards of a spread parameter, are its value, not a graph to differentiate).
fn above_targets(root: &UOp, targets: &FxHashSet<UOp>) -> Vec<UOp> {
    let mut seen: FxHashSet<UOp> = FxHashSet::default();
    let mut stack = vec![root.clone()];
    let mut out = Vec::new();
    while let Some(n) = stack.pop() {
        if targets.contains(&n) || !seen.insert(n.clone()) {
            continue;
        }
        stack.extend(n.src().iter().cloned());
        out.push(n);
    }
    out
}

/// The live tensors that require grad.
pub(crate) fn tensors_requiring_grad() -> Vec<Tensor> {
    let reg = GRAD_TENSORS.lock().unwrap_or_else(|e| e.into_inner());
    reg.iter().filter_map(|w| w.upgrade()).map(|inner| Tensor { inner }).filter(|t| t.is_requires_grad()).collect()
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
}

/// A node's own backward, replacing the primitive rules below it: given the node's gradient
/// and the nodes that need one, gradients for some of its ancestors. A convolution uses one so
/// that its input gradient is a transposed convolution (one clean kernel) rather than the
/// gradient of its sliding-window view (scatter-adds with div/mod index math).
pub(crate) type CustomGradient = Arc<dyn Fn(&Tensor, &FxHashSet<UOp>) -> Vec<(UOp, Tensor)> + Send + Sync>;

static CUSTOM_GRADIENTS: NodeTable<CustomGradient> = NodeTable::new();

/// Gives `node` its own backward (kept while the node lives).
pub(crate) fn set_custom_gradient(node: &UOp, f: CustomGradient) {
    CUSTOM_GRADIENTS.insert(node, f);
}

pub(crate) fn custom_gradient(node: &UOp) -> Option<CustomGradient> {
    CUSTOM_GRADIENTS.get(node)
}

/// `value` (a formula of `inputs`, not detached from them: the backward reaches it through
/// them) whose backward is `backward(output gradient, inputs)`, one gradient per input, instead
/// of the rules of the formula's ops.
pub(crate) fn with_backward(
    value: Tensor,
    inputs: &[&Tensor],
    backward: impl Fn(&Tensor, &[Tensor]) -> Vec<Tensor> + Send + Sync + 'static,
) -> Tensor {
    // Weak references: the registry must not keep the graph alive (see `conv_backward`).
    let weak: Vec<_> = inputs.iter().map(|x| x.uop().downgrade()).collect();
    // A node of its own (`x + -0.0` is `x` for every x), so the custom backward never attaches
    // to a subexpression something else shares.
    let out = value.add(-0.0);
    set_custom_gradient(
        &out.uop(),
        Arc::new(move |grad: &Tensor, needed: &FxHashSet<UOp>| {
            let Some(nodes) = weak.iter().map(|w| w.upgrade()).collect::<Option<Vec<UOp>>>() else {
                return Vec::new();
            };
            let xs: Vec<Tensor> = nodes.iter().map(|n| Tensor::from_uop(n.clone())).collect();
            let grads = backward(grad, &xs);
            nodes
                .into_iter()
                .zip(grads)
                .filter(|(n, _)| needed.contains(n))
                .map(|(n, g)| (n.clone(), g.cast(n.dtype())))
                .collect()
        }),
    );
    out
}

/// An elementwise `value` of `inputs` (of the output's shape) differentiated by its known
/// derivative: input `k` gets the output gradient times `derivatives(inputs)[k]`, instead of
/// the gradient through the range reductions and guards of its formula.
pub(crate) fn with_derivatives(
    value: Tensor,
    inputs: &[&Tensor],
    derivatives: impl Fn(&[Tensor]) -> Vec<Tensor> + Send + Sync + 'static,
) -> Tensor {
    with_backward(value, inputs, move |grad, xs| {
        derivatives(xs).into_iter().map(|d| keep_zeros(grad, grad.mul(d))).collect()
    })
}

/// Where a gradient is known to be zero: `g = where(cond, x, 0)` (zero where `cond` is false)
/// or `where(cond, 0, x)` (zero where it is true), as the backward of a `where` makes it.
struct ZeroWhere {
    cond: Tensor,
    zero_if_true: bool,
}

fn is_zero_const(u: &UOp) -> bool {
    match u.op() {
        Ops::CONST => u.const_value().is_some_and(|c| c.as_f64() == 0.0),
        Ops::RESHAPE | Ops::EXPAND | Ops::CAST => is_zero_const(&u.src()[0]),
        _ => false,
    }
}

/// Every condition under which `g` is known zero: the `where`s nested along its non-zero branch
/// (a gradient that passed several untaken branches is zero under each of them).
fn zero_wheres(g: &Tensor) -> Vec<ZeroWhere> {
    let mut out: Vec<ZeroWhere> = Vec::new();
    let mut u = g.uop();
    while u.op() == Ops::WHERE {
        let src = u.src();
        let zero_if_true = if is_zero_const(&src[2]) {
            false
        } else if is_zero_const(&src[1]) {
            true
        } else {
            break;
        };
        if !out.iter().any(|z| z.cond.uop() == src[0] && z.zero_if_true == zero_if_true) {
            out.push(ZeroWhere { cond: Tensor::from_uop(src[0].clone()), zero_if_true });
        }
        u = src[if zero_if_true { 2 } else { 1 }].clone();
    }
    out
}

impl ZeroWhere {
    fn apply(&self, x: &Tensor) -> Tensor {
        if self.zero_if_true {
            self.cond.where_(0.0, x)
        } else {
            self.cond.where_(x, 0.0)
        }
    }
}

/// `derived`, an elementwise function of the gradient `g` (same shape), kept exactly zero
/// wherever `g` is known to be zero. A rule such as `g * f'(x)` would otherwise turn the zero
/// gradient of a `where` branch that was not taken into NaN where that branch's `f'(x)` is
/// infinite (`0 * inf`): `abs` at ±inf, `pow(-inf, 0.3)`. The branch was not taken, so it
/// contributes nothing, whatever its derivative.
pub(crate) fn keep_zeros(g: &Tensor, derived: Tensor) -> Tensor {
    if derived.uop() == g.uop() || derived.sym_shape() != g.sym_shape() {
        return derived;
    }
    // Innermost first, so that `derived` ends up nested as `g` is.
    zero_wheres(g).iter().rev().fold(derived, |d, z| z.apply(&d))
}

/// `a + b`, two gradients of one node; when both are zero under the same condition the sum is
/// too (`where(c, a' + b', 0)`), so that the next rule still keeps those zeros.
pub(crate) fn add_gradients(a: Tensor, b: Tensor) -> Tensor {
    if let (Some(za), Some(zb)) = (zero_wheres(&a).into_iter().next(), zero_wheres(&b).into_iter().next()) {
        if za.cond.uop() == zb.cond.uop() && za.zero_if_true == zb.zero_if_true && a.sym_shape() == b.sym_shape() {
            let pick = |t: &Tensor| Tensor::from_uop(t.uop().src()[if za.zero_if_true { 2 } else { 1 }].clone());
            return za.apply(&add_gradients(pick(&a), pick(&b)));
        }
    }
    a + b
}
