//! `vmap`: a function of single elements mapped over a batch axis without a loop. The
//! function is traced once on placeholders of one element's shape; the graph it builds is
//! rewritten by the batching rules (`batching.rs`) to carry the batch axis through every
//! primitive, so the whole batch runs in the kernels of one call.

use super::batching::{batch_graph, broadcast_batch};
use super::trace::take_checks_on;
use super::TensorFn;
use crate::tensor::checks::{push_pending, IndexCheck};
use crate::tensor::trace::{placeholder, with_batch_level, Randomness};
use crate::tensor::{pending_assign_nodes, Tensor};
use crate::uop::node::toposort_many;
use crate::uop::{Arg, FxHashMap, FxHashSet, UOp};

/// How `vmap` maps a function (torch.func's `in_dims`, `out_dims`, `chunk_size`, `randomness`).
#[derive(Clone, Debug, Default)]
pub struct VmapOpts {
    /// Per argument, the axis to map over, or `None` for an argument every element shares
    /// (negative axes count from the end). Empty: axis 0 of every argument.
    pub in_axes: Vec<Option<isize>>,
    /// Per result, where its batch axis goes. Empty: axis 0 of every result.
    pub out_axes: Vec<isize>,
    /// Map at most this many elements at a time, realizing each chunk before the next, so the
    /// memory of the intermediates is that of one chunk. `None`: the whole batch at once.
    pub chunk_size: Option<usize>,
    /// What random ops inside the function draw.
    pub randomness: Randomness,
}

impl VmapOpts {
    pub fn in_axes(mut self, axes: &[Option<isize>]) -> Self {
        self.in_axes = axes.to_vec();
        self
    }
    pub fn out_axes(mut self, axes: &[isize]) -> Self {
        self.out_axes = axes.to_vec();
        self
    }
    pub fn chunk_size(mut self, n: usize) -> Self {
        assert!(n > 0, "vmap: chunk_size must be at least 1");
        self.chunk_size = Some(n);
        self
    }
    pub fn randomness(mut self, r: Randomness) -> Self {
        self.randomness = r;
        self
    }
}

/// `f` mapped over axis `in_axes[i]` of argument `i` (`None`: shared by every element), its
/// results stacked along `out_axes` (see [`VmapOpts`]; empty slices mean axis 0 everywhere).
pub fn vmap(f: impl TensorFn, in_axes: &[Option<isize>], out_axes: &[isize]) -> impl TensorFn {
    vmap_with(f, VmapOpts::default().in_axes(in_axes).out_axes(out_axes))
}

/// `vmap` with every option.
pub fn vmap_with(f: impl TensorFn, opts: VmapOpts) -> impl TensorFn {
    move |args: &[Tensor]| map_call(&f, &opts, args)
}

fn resolve(axis: isize, ndim: usize, what: &str) -> usize {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    assert!((0..ndim as isize).contains(&a), "vmap: {what} axis {axis} is out of range for {ndim} dimensions");
    a as usize
}

/// `x` with axis `from` moved to position `to`.
fn move_axis(x: &Tensor, from: usize, to: usize) -> Tensor {
    if from == to {
        return x.clone();
    }
    let mut order: Vec<usize> = (0..x.ndim()).filter(|&a| a != from).collect();
    order.insert(to, from);
    x.permute(order)
}

fn map_call(f: &dyn Fn(&[Tensor]) -> Vec<Tensor>, opts: &VmapOpts, args: &[Tensor]) -> Vec<Tensor> {
    let in_axes: Vec<Option<isize>> =
        if opts.in_axes.is_empty() { vec![Some(0); args.len()] } else { opts.in_axes.clone() };
    assert_eq!(
        in_axes.len(),
        args.len(),
        "vmap: {} in_axes for a function called with {} arguments",
        in_axes.len(),
        args.len()
    );
    // Each mapped argument with its batch axis first.
    let moved: Vec<Option<Tensor>> = args
        .iter()
        .zip(&in_axes)
        .enumerate()
        .map(|(i, (x, axis))| {
            axis.map(|a| {
                let a = resolve(a, x.ndim(), &format!("in_axes[{i}]"));
                assert!(
                    x.sym_shape()[a].as_const().is_some(),
                    "vmap: argument {i} is mapped over axis {a}, whose length {:?} is symbolic",
                    x.sym_shape()[a]
                );
                move_axis(x, a, 0)
            })
        })
        .collect();
    let sizes: Vec<(usize, usize)> =
        moved.iter().enumerate().filter_map(|(i, m)| Some((i, m.as_ref()?.shape()[0]))).collect();
    let Some(&(_, batch)) = sizes.first() else { panic!("vmap: in_axes map no argument (every one is None)") };
    if let Some(&(i, other)) = sizes.iter().find(|(_, b)| *b != batch) {
        panic!(
            "vmap: mapped arguments have different batch sizes: argument {} has {batch}, argument {i} has {other}",
            sizes[0].0
        );
    }
    // Trace `f` once on placeholders of one element.
    let traced_args: Vec<Tensor> = args
        .iter()
        .zip(&moved)
        .map(|(x, m)| match m {
            Some(m) => placeholder(&m.sym_shape()[1..], m.dtype(), &m.device()),
            None => x.clone(),
        })
        .collect();
    let (outs, drawn) = with_batch_level(batch, opts.randomness, || f(&traced_args));
    let placeholders: Vec<(UOp, Tensor)> =
        traced_args.iter().zip(&moved).filter_map(|(p, m)| Some((p.uop(), m.clone()?))).chain(drawn).collect();
    refuse_batched_assigns(&placeholders);
    let leaves: FxHashSet<UOp> = placeholders.iter().map(|(p, _)| p.clone()).collect();
    let checks = take_checks_on(&leaves);
    let out_axes: Vec<isize> = if opts.out_axes.is_empty() { vec![0; outs.len()] } else { opts.out_axes.clone() };
    assert_eq!(
        out_axes.len(),
        outs.len(),
        "vmap: {} out_axes for a function with {} results",
        out_axes.len(),
        outs.len()
    );
    let chunk = opts.chunk_size.unwrap_or(batch).min(batch).max(1);
    let mut chunks: Vec<Vec<Tensor>> = Vec::new();
    let mut start = 0;
    while start < batch || chunks.is_empty() {
        let end = (start + chunk).min(batch);
        let seeds: FxHashMap<UOp, UOp> = placeholders
            .iter()
            .map(|(p, full)| {
                let part = if end - start == batch { full.clone() } else { full.narrow(0, start, end - start) };
                (p.clone(), part.uop())
            })
            .collect();
        let roots: Vec<UOp> = outs.iter().chain(checks.iter().map(|c| &c.bounds)).map(|o| o.uop()).collect();
        let mut results: Vec<Tensor> = batch_graph(&roots, &seeds, end - start)
            .into_iter()
            .zip(&roots)
            .map(|(b, r)| Tensor::from_uop(b.unwrap_or_else(|| broadcast_batch(r, end - start))))
            .collect();
        for (check, bounds) in checks.iter().zip(results.split_off(outs.len())) {
            push_pending(IndexCheck {
                bounds: combine_bounds(&bounds, check.condition),
                what: check.what.clone(),
                ..*check
            });
        }
        if opts.chunk_size.is_some() && end - start < batch && !depends_on_placeholders(&results) {
            Tensor::realize_all(&results.iter().collect::<Vec<_>>()).expect("vmap: realizing a chunk");
        }
        chunks.push(results);
        start = end;
    }
    (0..outs.len())
        .map(|k| {
            let parts: Vec<&Tensor> = chunks.iter().map(|c| &c[k]).collect();
            let whole = if parts.len() == 1 { parts[0].clone() } else { Tensor::cat(&parts, 0) };
            let to = resolve(out_axes[k], whole.ndim(), &format!("out_axes[{k}]"));
            move_axis(&whole, 0, to)
        })
        .collect()
}

/// One check's `[min, max]` (or `[0, count]`) from its value for every element (`[batch, 2]`).
fn combine_bounds(per_element: &Tensor, condition: bool) -> Tensor {
    let (lo, hi) = (per_element.narrow(1, 0, 1), per_element.narrow(1, 1, 1));
    if condition {
        let count = hi.sum();
        Tensor::stack(&[&count.zeros_like(), &count], 0)
    } else {
        Tensor::stack(&[&lo.min(), &hi.max()], 0)
    }
}

/// An `assign` inside the mapped function that writes a batched value is an error: the target
/// has one element's shape, the value a whole batch.
fn refuse_batched_assigns(placeholders: &[(UOp, Tensor)]) {
    let pending = pending_assign_nodes();
    if pending.is_empty() {
        return;
    }
    let leaves: FxHashSet<UOp> = placeholders.iter().map(|(p, _)| p.clone()).collect();
    if toposort_many(&pending).iter().any(|n| leaves.contains(n)) {
        panic!(
            "vmap: the mapped function assigns a batched value into a tensor that is not batched (an in-place \
             write of one element's result); as in torch.func, return the value instead"
        );
    }
}

/// Whether the results still stand on placeholders of an enclosing transform (then a chunk
/// cannot be realized: it is part of a larger trace).
fn depends_on_placeholders(results: &[Tensor]) -> bool {
    let roots: Vec<UOp> = results.iter().map(|t| t.uop()).collect();
    toposort_many(&roots).iter().any(|n| match n.arg() {
        Arg::Buffer(h) => crate::runtime::buffer_of(h).is_placeholder(),
        _ => false,
    })
}
