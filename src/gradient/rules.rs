//! The backward rule of each primitive op, and the reverse sweep over a graph that applies
//! them (or a node's custom gradient).

use crate::schedule::multi;
use crate::tensor::{add_gradients, custom_gradient, keep_zeros, Tensor};
use crate::uop::dim::dim_pairs;
use crate::uop::node::toposort_many;
use crate::uop::{Arg, Dim, FxHashMap, FxHashSet, Ops, UOp};

/// The sharded axis of a spread node, as `shard` takes it.
fn shard_axis(n: &UOp) -> Option<isize> {
    multi::shard_axis(n).map(|a| a as isize)
}

/// Gradients of the sources of `node` given the gradient `g` of `node` (same shape). `None`
/// for sources that get no gradient (conditions, integer indices, detached values).
fn backward_rule(node: &UOp, g: &Tensor) -> Vec<Option<Tensor>> {
    let t = |u: &UOp| Tensor::from_uop(u.clone());
    let src = node.src();
    let out = || t(node);
    let x = || t(&src[0]);
    match node.op() {
        Ops::ADD => vec![Some(g.clone()), Some(g.clone())],
        Ops::SUB => vec![Some(g.clone()), Some(g.neg())],
        Ops::MUL => vec![Some(g * t(&src[1])), Some(g * t(&src[0]))],
        Ops::FDIV => {
            let b = t(&src[1]);
            vec![Some(g / &b), Some(-(g * t(&src[0])) / (&b * &b))]
        }
        Ops::NEG => vec![Some(g.neg())],
        Ops::RECIP => vec![Some(-(g * out() * out()))],
        Ops::SQRT => vec![Some(g / (out() * 2.0))],
        Ops::EXP2 => vec![Some(g * out() * std::f64::consts::LN_2)],
        Ops::LOG2 => vec![Some(g / (x() * std::f64::consts::LN_2))],
        Ops::SIN => vec![Some(g * x().cos())],
        Ops::TRUNC => vec![Some(g.zeros_like())],
        Ops::MAX => {
            // Ties share the gradient equally, as PyTorch's maximum does; a NaN (no order)
            // passes the whole gradient to both sides, as there.
            let (a, b) = (t(&src[0]), t(&src[1]));
            let shared = a.eq(&b).where_(g * 0.5, g);
            vec![Some(a.lt(&b).where_(0.0, &shared)), Some(a.gt(&b).where_(0.0, &shared))]
        }
        Ops::WHERE => {
            let c = t(&src[0]);
            vec![None, Some(c.where_(g, 0.0)), Some(c.where_(0.0, g))]
        }
        Ops::MULACC => vec![Some(g * t(&src[1])), Some(g * t(&src[0])), Some(g.clone())],
        Ops::CAST => vec![src[0].dtype().is_float().then(|| g.cast(src[0].dtype()))],
        Ops::RESHAPE => vec![Some(g.reshape_dims(&src[0].sym_shape()))],
        Ops::PERMUTE => {
            let Arg::Axes(order) = node.arg() else { unreachable!() };
            let mut inv = vec![0usize; order.len()];
            for (i, &o) in order.iter().enumerate() {
                inv[o] = i;
            }
            vec![Some(g.permute(inv))]
        }
        Ops::EXPAND => {
            let (ss, ns) = (src[0].sym_shape(), node.sym_shape());
            let axes: Vec<usize> = (0..ss.len()).filter(|&i| ss[i] != ns[i]).collect();
            vec![Some(g.sum_keepdim(axes))]
        }
        Ops::PAD => {
            let p = dim_pairs(node.arg());
            let r: Vec<(Dim, Dim)> = p.iter().zip(src[0].sym_shape()).map(|((b, _), s)| (b.clone(), b + s)).collect();
            vec![Some(g.shrink_dims(&r))]
        }
        Ops::SHRINK => {
            let p = dim_pairs(node.arg());
            let pads: Vec<(Dim, Dim)> =
                p.iter().zip(src[0].sym_shape()).map(|((s, e), d)| (s.clone(), d - e)).collect();
            vec![Some(g.pad_dims(&pads))]
        }
        Ops::FLIP => {
            let Arg::Axes(axes) = node.arg() else { unreachable!() };
            vec![Some(g.flip(axes.clone()))]
        }
        Ops::REDUCE_AXIS => {
            let Arg::Reduce(op, axes) = node.arg() else { unreachable!() };
            let shape = src[0].sym_shape();
            let ge = g.expand_to_dims(&shape);
            match op {
                Ops::ADD => vec![Some(ge)],
                Ops::MAX => {
                    // Split equally among the elements that reach the maximum.
                    let mask = x().eq(out().expand_to_dims(&shape)).cast(g.dtype());
                    let count = mask.sum_keepdim(axes.clone()).expand_to_dims(&shape);
                    vec![Some(ge * mask / count)]
                }
                Ops::MUL => vec![Some(ge * prod_of_others(&x(), axes))],
                _ => unreachable!("reduce op {op:?}"),
            }
        }
        Ops::CONTIGUOUS => vec![Some(g.clone())],
        // A gather's gradient is spread again like the tensor it gathered.
        Ops::COPY if multi::is_spread(&src[0]) => vec![Some(g.shard(&multi::devices_of(&src[0]), shard_axis(&src[0])))],
        Ops::COPY => vec![Some(g.to(src[0].device().unwrap_or("CPU")))],
        // Each device's tensor gets its part of the gradient; of replicated copies, the first
        // carries it all (they are one value).
        Ops::MULTI => {
            let devices = multi::devices_of(node);
            match multi::shard_axis(node) {
                Some(a) => src
                    .iter()
                    .zip(&devices)
                    .map(|(s, d)| {
                        let start = devices.iter().position(|x| x == d).expect("its device") * s.shape()[a];
                        let cut: Vec<(usize, usize)> = (0..g.ndim())
                            .map(|k| if k == a { (start, start + s.shape()[a]) } else { (0, g.shape()[k]) })
                            .collect();
                        Some(g.to(d).shrink(&cut))
                    })
                    .collect(),
                None => (0..src.len()).map(|i| (i == 0).then(|| g.to(&devices[0]))).collect(),
            }
        }
        // Comparisons, bitwise and integer ops have no gradient; DETACH stops it.
        _ => vec![None; src.len()],
    }
}

/// For each element, the product of the other elements along `axes` (zero-safe: no division).
fn prod_of_others(x: &Tensor, axes: &[usize]) -> Tensor {
    let shape = x.shape();
    let n = shape.len();
    let kept: Vec<usize> = (0..n).filter(|a| !axes.contains(a)).collect();
    let order: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let moved = x.permute(order.clone());
    let lead: Vec<usize> = kept.iter().map(|&a| shape[a]).collect();
    let r: usize = axes.iter().map(|&a| shape[a]).product();
    let flat = moved.reshape(lead.iter().copied().chain([r]).collect::<Vec<_>>());
    let mut big: Vec<usize> = lead.clone();
    big.extend([r, r]);
    let eye = Tensor::eye(r).cast(crate::DType::BOOL);
    let others = eye.where_(1.0, flat.unsqueeze(-2).expand(big)).prod_axis(-1);
    let mut inv = vec![0usize; n];
    for (i, &o) in order.iter().enumerate() {
        inv[o] = i;
    }
    let moved_shape: Vec<usize> = order.iter().map(|&a| shape[a]).collect();
    others.cast(x.dtype()).reshape(moved_shape).permute(inv)
}

/// Gradients of `root` with respect to each node in `targets`, given `root`'s gradient.
pub fn compute_gradient(root: &UOp, root_grad: &Tensor, targets: &FxHashSet<UOp>) -> FxHashMap<UOp, Tensor> {
    let topo = toposort_many(std::slice::from_ref(root));
    // Only nodes on a path to a target need a gradient.
    let mut needed: FxHashSet<UOp> = FxHashSet::default();
    for n in &topo {
        if n.op() == Ops::DETACH {
            continue;
        }
        if targets.contains(n) || n.src().iter().any(|s| needed.contains(s)) {
            needed.insert(n.clone());
        }
    }
    let mut grads: FxHashMap<UOp, Tensor> = FxHashMap::default();
    grads.insert(root.clone(), root_grad.clone());
    let mut out = FxHashMap::default();
    for n in topo.iter().rev() {
        let Some(g) = grads.remove(n) else { continue };
        if targets.contains(n) {
            out.insert(n.clone(), g.clone());
        }
        if !n.src().iter().any(|s| needed.contains(s)) {
            continue;
        }
        let pairs: Vec<(UOp, Tensor)> = match custom_gradient(n) {
            Some(f) => f(&g, &needed),
            // An elementwise rule keeps the zeros of a gradient that a `where` masked.
            None if n.op().is_alu() => {
                let rule = backward_rule(n, &g).into_iter().map(|sg| sg.map(|sg| keep_zeros(&g, sg)));
                n.src().iter().cloned().zip(rule).filter_map(|(s, sg)| Some((s, sg?))).collect()
            }
            None => n.src().iter().cloned().zip(backward_rule(n, &g)).filter_map(|(s, sg)| Some((s, sg?))).collect(),
        };
        for (s, sg) in pairs {
            if !needed.contains(&s) {
                continue;
            }
            let acc = match grads.remove(&s) {
                Some(prev) => add_gradients(prev, sg),
                None => sg,
            };
            grads.insert(s, acc);
        }
    }
    out
}
