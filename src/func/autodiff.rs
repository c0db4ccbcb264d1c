//! Derivatives as function transforms: `grad`, `value_and_grad`, `vjp`, `jvp`, `jacrev`,
//! `jacfwd`, `hessian`. Each traces the function on placeholders, builds the derivative graph
//! with the backward rules of `gradient/` and binds it to the arguments, so the result is an
//! ordinary lazy graph: any transform (or `backward`) can take it further. Forward mode
//! transposes reverse mode: the VJP `u ↦ Jᵀu` is linear in `u`, and its own VJP applied to a
//! tangent `t` is `J t`.

use super::trace::{substitute, Traced};
use super::vmap::vmap;
use super::TensorFn;
use crate::gradient::compute_gradient;
use crate::tensor::trace::placeholder_like;
use crate::tensor::Tensor;
use crate::uop::{FxHashMap, FxHashSet, UOp};

/// `Σ_k Jₖᵀ cₖ`: the cotangent of each target given a cotangent per output (outputs that are
/// not floats have none). A target the outputs do not depend on gets zeros.
fn pull_back(outs: &[Tensor], cotangents: &[Tensor], targets: &[Tensor]) -> Vec<Tensor> {
    let wanted: FxHashSet<UOp> = targets.iter().map(|t| t.uop()).collect();
    let mut acc: Vec<Option<Tensor>> = vec![None; targets.len()];
    for (o, c) in outs.iter().zip(cotangents) {
        if !o.dtype().is_float() {
            continue;
        }
        assert_eq!(
            c.sym_shape(),
            o.sym_shape(),
            "vjp: a cotangent of shape {:?} for a result of shape {:?}",
            c.sym_shape(),
            o.sym_shape()
        );
        let grads = compute_gradient(&o.uop(), &c.cast(o.dtype()), &wanted);
        for (slot, t) in acc.iter_mut().zip(targets) {
            if let Some(g) = grads.get(&t.uop()) {
                let g = g.cast(t.dtype());
                *slot = Some(match slot.take() {
                    Some(prev) => prev + g,
                    None => g,
                });
            }
        }
    }
    acc.into_iter().zip(targets).map(|(g, t)| g.unwrap_or_else(|| t.zeros_like())).collect()
}

fn check_argnums(argnums: &[usize], n: usize, what: &str) -> Vec<usize> {
    let nums: Vec<usize> = if argnums.is_empty() { (0..n).collect() } else { argnums.to_vec() };
    for &a in &nums {
        assert!(a < n, "{what}: argnum {a} for a function called with {n} arguments");
    }
    nums
}

/// The gradient of `f`'s first result (a float scalar) with respect to the arguments in
/// `argnums` (empty: every argument), one result per argnum. Further results of `f` are
/// ignored (see [`value_and_grad`]).
pub fn grad(f: impl TensorFn, argnums: &[usize]) -> impl TensorFn {
    let nums = argnums.to_vec();
    let vg = value_and_grad(f, argnums);
    move |args: &[Tensor]| {
        let n = check_argnums(&nums, args.len(), "grad").len();
        let mut all = vg(args);
        all.split_off(all.len() - n)
    }
}

/// `f`'s results followed by the gradients of its first result (a float scalar) with respect
/// to the arguments in `argnums` (empty: every argument).
pub fn value_and_grad(f: impl TensorFn, argnums: &[usize]) -> impl TensorFn {
    let argnums = argnums.to_vec();
    move |args: &[Tensor]| {
        let nums = check_argnums(&argnums, args.len(), "grad");
        let traced = Traced::new(args);
        let outs = f(&traced.placeholders);
        let loss = outs.first().unwrap_or_else(|| panic!("grad: the function returned no result"));
        assert!(
            loss.numel() == 1 && loss.dtype().is_float(),
            "grad: the function's first result must be a float scalar, it is {} of shape {:?}",
            loss.dtype(),
            loss.sym_shape()
        );
        let targets: Vec<Tensor> = nums.iter().map(|&a| traced.placeholders[a].clone()).collect();
        let grads = pull_back(std::slice::from_ref(loss), &[loss.ones_like()], &targets);
        traced.bind(&outs.iter().cloned().chain(grads).collect::<Vec<_>>())
    }
}

/// `f`'s results at `primals`, and the function that takes one cotangent per result and gives
/// one per primal (`Σ_k Jₖᵀ cₖ`). Results that are not floats take a cotangent that is ignored.
pub fn vjp(f: impl TensorFn, primals: &[Tensor]) -> (Vec<Tensor>, impl TensorFn) {
    let traced = Traced::new(primals);
    let outs = f(&traced.placeholders);
    let results = traced.bind(&outs);
    let pull = move |cotangents: &[Tensor]| {
        assert_eq!(
            cotangents.len(),
            outs.len(),
            "vjp: {} cotangents for a function with {} results",
            cotangents.len(),
            outs.len()
        );
        let grads = pull_back(&outs, cotangents, &traced.placeholders);
        traced.bind(&grads)
    };
    (results, pull)
}

/// `f`'s results at `primals` and their tangents `J t` for the primals' tangents `tangents`
/// (forward mode; results that are not floats get zero tangents).
pub fn jvp(f: impl TensorFn, primals: &[Tensor], tangents: &[Tensor]) -> (Vec<Tensor>, Vec<Tensor>) {
    assert_eq!(primals.len(), tangents.len(), "jvp: {} primals but {} tangents", primals.len(), tangents.len());
    for (i, (p, t)) in primals.iter().zip(tangents).enumerate() {
        assert_eq!(
            p.sym_shape(),
            t.sym_shape(),
            "jvp: tangent {i} has shape {:?}, its primal {:?}",
            t.sym_shape(),
            p.sym_shape()
        );
    }
    let traced = Traced::new(primals);
    let outs = f(&traced.placeholders);
    // u ↦ Jᵀu on cotangent placeholders u, then the derivative of <Jᵀu, t> with respect to u.
    let us: Vec<Tensor> = outs.iter().map(placeholder_like).collect();
    let pulled = pull_back(&outs, &us, &traced.placeholders);
    let float_pairs: Vec<(Tensor, Tensor)> = pulled
        .iter()
        .zip(tangents)
        .filter(|(g, _)| g.dtype().is_float())
        .map(|(g, t)| (g.clone(), t.cast(g.dtype())))
        .collect();
    let (gs, ts): (Vec<Tensor>, Vec<Tensor>) = float_pairs.into_iter().unzip();
    let pushed = pull_back(&gs, &ts, &us);
    // `<Jᵀu, t>` is linear in u, so its derivative does not depend on u; a rule that still
    // names u (under a condition that is the same for every u) gets zeros for it.
    let zero_us: FxHashMap<UOp, UOp> = us.iter().map(|u| (u.uop(), u.zeros_like().uop())).collect();
    let pushed: Vec<Tensor> = pushed
        .iter()
        .zip(&outs)
        .map(|(p, o)| if o.dtype().is_float() { p.cast(o.dtype()) } else { o.zeros_like() })
        .map(|p| Tensor::from_uop(substitute(&[p.uop()], &zero_us).remove(0)))
        .collect();
    let mut bound = traced.bind(&outs.iter().cloned().chain(pushed).collect::<Vec<_>>());
    let tangents_out = bound.split_off(outs.len());
    (bound, tangents_out)
}

/// The identity of `n` elements shaped `[n, shape...]` in `like`'s dtype and device: one basis
/// vector per row.
fn basis(like: &Tensor) -> Tensor {
    let shape = like.shape();
    let n = like.numel();
    let mut full = vec![n];
    full.extend(&shape);
    let i = Tensor::arange(n).to(&like.device());
    i.unsqueeze(1).eq(i.unsqueeze(0)).cast(like.dtype()).reshape(full)
}

/// The Jacobian of each of `f`'s results with respect to argument `argnum`, by reverse mode
/// (one VJP per result element, batched with `vmap`): shape `result.shape + arg.shape`.
pub fn jacrev(f: impl TensorFn, argnum: usize) -> impl TensorFn {
    move |args: &[Tensor]| {
        check_argnums(&[argnum], args.len(), "jacrev");
        let (outs, pull) = vjp(&f, args);
        let in_shape = args[argnum].shape();
        (0..outs.len())
            .map(|k| {
                let out_shape = outs[k].shape();
                let others: Vec<Tensor> = outs.iter().map(|o| o.zeros_like()).collect();
                let row = |c: &[Tensor]| {
                    let mut cots = others.clone();
                    cots[k] = c[0].clone();
                    vec![pull(&cots)[argnum].clone()]
                };
                let rows = vmap(row, &[Some(0)], &[0])(&[basis(&outs[k])]).remove(0);
                rows.reshape(out_shape.iter().chain(&in_shape).copied().collect::<Vec<_>>())
            })
            .collect()
    }
}

/// The Jacobian of each of `f`'s results with respect to argument `argnum`, by forward mode
/// (one JVP per argument element, batched with `vmap`): shape `result.shape + arg.shape`.
pub fn jacfwd(f: impl TensorFn, argnum: usize) -> impl TensorFn {
    move |args: &[Tensor]| {
        check_argnums(&[argnum], args.len(), "jacfwd");
        let in_shape = args[argnum].shape();
        let column = |t: &[Tensor]| {
            let tangents: Vec<Tensor> =
                args.iter().enumerate().map(|(i, a)| if i == argnum { t[0].clone() } else { a.zeros_like() }).collect();
            jvp(&f, args, &tangents).1
        };
        let cols = vmap(column, &[Some(0)], &[])(&[basis(&args[argnum])]);
        cols.into_iter()
            .map(|c| {
                // [n_in, out...] → [out..., n_in] → [out..., in...]
                let out_shape: Vec<usize> = c.shape()[1..].to_vec();
                let mut order: Vec<usize> = (1..c.ndim()).collect();
                order.push(0);
                c.permute(order).reshape(out_shape.iter().chain(&in_shape).copied().collect::<Vec<_>>())
            })
            .collect()
    }
}

/// The Hessian of `f`'s first result (a scalar) with respect to argument `argnum`, as
/// `jacfwd(jacrev(f))`: shape `arg.shape + arg.shape`.
pub fn hessian(f: impl TensorFn, argnum: usize) -> impl TensorFn {
    let first = move |args: &[Tensor]| vec![f(args).remove(0)];
    jacfwd(jacrev(first, argnum), argnum)
}
