//! Indexing: Python/PyTorch-style `x[1:5:2, ::-1, None, ..., 3]` as `x.index(&idx![1..5;2,
//! ..;-1, None, ..., 3])`, integer-tensor (advanced) indexing, `gather`, `scatter`,
//! `scatter_reduce`, `masked_fill`, and writing into a slice (`index_put`, `set_index`).
//!
//! Slices are movement ops (shrink, flip, and pad-reshape-shrink for steps), so they never
//! copy. Tensor indices select by comparing with an arange (a one-hot mask) and summing, as in
//! tinygrad: an out-of-range tensor index selects nothing and reads 0 (PyTorch raises instead);
//! negative tensor indices count from the end, as in PyTorch.

use super::shape_args::resolve_axis;
use super::{Operand, Tensor};
use crate::uop::{ConstValue, DType};
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// One entry of an index expression.
#[derive(Clone, Debug)]
pub enum Idx {
    /// One position (negative counts from the end); the axis is removed.
    I(isize),
    /// A Python slice `start:stop:step` (defaults `None`); any nonzero step, negative too.
    R(Option<isize>, Option<isize>, Option<isize>),
    /// A new size-1 axis (`None` in Python).
    NewAxis,
    /// As many full slices as needed (`...`).
    Ellipsis,
    /// An integer tensor of positions along one axis (advanced indexing).
    T(Tensor),
}

impl Idx {
    /// The slice `start:stop:step`.
    pub fn slice(start: Option<isize>, stop: Option<isize>, step: isize) -> Idx {
        Idx::R(start, stop, Some(step))
    }
    /// The same slice with another step (`(..).into()` then `.step(-1)` is `::-1`).
    pub fn step(self, step: isize) -> Idx {
        match self {
            Idx::R(a, b, _) => Idx::R(a, b, Some(step)),
            other => panic!("index: a step needs a slice, got {other:?}"),
        }
    }
}

macro_rules! idx_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Idx {
            fn from(i: $t) -> Idx { Idx::I(i as isize) }
        }
        impl From<Range<$t>> for Idx {
            fn from(r: Range<$t>) -> Idx { Idx::R(Some(r.start as isize), Some(r.end as isize), None) }
        }
        impl From<RangeFrom<$t>> for Idx {
            fn from(r: RangeFrom<$t>) -> Idx { Idx::R(Some(r.start as isize), None, None) }
        }
        impl From<RangeTo<$t>> for Idx {
            fn from(r: RangeTo<$t>) -> Idx { Idx::R(None, Some(r.end as isize), None) }
        }
        impl From<RangeInclusive<$t>> for Idx {
            fn from(r: RangeInclusive<$t>) -> Idx {
                let end = *r.end() as isize;
                Idx::R(Some(*r.start() as isize), if end == -1 { None } else { Some(end + 1) }, None)
            }
        }
        impl From<RangeToInclusive<$t>> for Idx {
            fn from(r: RangeToInclusive<$t>) -> Idx {
                let end = r.end as isize;
                Idx::R(None, if end == -1 { None } else { Some(end + 1) }, None)
            }
        }
    )*};
}
idx_from_int!(i32, i64, isize, usize);

impl From<RangeFull> for Idx {
    fn from(_: RangeFull) -> Idx {
        Idx::R(None, None, None)
    }
}
impl From<Tensor> for Idx {
    fn from(t: Tensor) -> Idx {
        Idx::T(t)
    }
}
impl From<&Tensor> for Idx {
    fn from(t: &Tensor) -> Idx {
        Idx::T(t.clone())
    }
}

/// An index expression written like Python's: `idx![1..5;2, ..;-1, None, ..., 3, &t]` is
/// `[1:5:2, ::-1, None, ..., 3, t]` (`a..b;s` is a slice with step `s`). A slice whose start
/// is past its stop (`6:1:-2`) is `Idx::slice(Some(6), Some(1), -2)`: clippy rejects `6..1`.
#[macro_export]
macro_rules! idx {
    (@acc [$($done:expr),*]) => { [$($done),*] };
    (@acc [$($done:expr),*] None $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($done,)* $crate::tensor::Idx::NewAxis] $($($rest)*)?)
    };
    (@acc [$($done:expr),*] ... $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($done,)* $crate::tensor::Idx::Ellipsis] $($($rest)*)?)
    };
    (@acc [$($done:expr),*] $e:expr ; $s:expr $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($done,)* $crate::tensor::Idx::from($e).step($s)] $($($rest)*)?)
    };
    (@acc [$($done:expr),*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::idx!(@acc [$($done,)* $crate::tensor::Idx::from($e)] $($($rest)*)?)
    };
    ($($t:tt)*) => { $crate::idx!(@acc [] $($t)*) };
}

/// What basic indexing (ints, slices, new axes) does, recorded so it can be undone.
struct Basic {
    /// Shape of the input.
    shape: Vec<usize>,
    /// Kept range of every input axis.
    ranges: Vec<(usize, usize)>,
    flips: Vec<usize>,
    /// Step of every input axis (after the flip).
    steps: Vec<usize>,
    /// Shape of the view (ints removed, new axes inserted).
    view: Vec<usize>,
    /// Tensor indices: (axis in the view, index tensor).
    tensors: Vec<(usize, Tensor)>,
}

/// Python's `slice.indices`: (first, count) of `start:stop:step` on an axis of size `n`.
fn slice_span(start: Option<isize>, stop: Option<isize>, step: isize, n: usize) -> (isize, usize) {
    let n = n as isize;
    let norm = |v: isize, lo: isize, hi: isize| if v < 0 { (v + n).max(lo) } else { v.min(hi) };
    let (first, count) = if step > 0 {
        let s = start.map_or(0, |v| norm(v, 0, n));
        let e = stop.map_or(n, |v| norm(v, 0, n));
        (s, if e > s { (e - s + step - 1) / step } else { 0 })
    } else {
        let s = start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let e = stop.map_or(-1, |v| norm(v, -1, n - 1));
        (s, if s > e { (s - e - step - 1) / (-step) } else { 0 })
    };
    (first, count as usize)
}

impl Tensor {
    fn basic_plan(&self, idx: &[Idx]) -> Basic {
        let shape = self.shape();
        let consuming = idx.iter().filter(|i| !matches!(i, Idx::NewAxis | Idx::Ellipsis)).count();
        let ellipses = idx.iter().filter(|i| matches!(i, Idx::Ellipsis)).count();
        assert!(ellipses <= 1, "index: more than one ellipsis in {idx:?}");
        assert!(consuming <= shape.len(), "index: too many indices ({consuming}) for shape {shape:?}");
        let mut full: Vec<Idx> = Vec::with_capacity(idx.len() + shape.len());
        for i in idx {
            if let Idx::Ellipsis = i {
                full.extend(std::iter::repeat_n(Idx::R(None, None, None), shape.len() - consuming));
            } else {
                full.push(i.clone());
            }
        }
        if ellipses == 0 {
            full.extend(std::iter::repeat_n(Idx::R(None, None, None), shape.len() - consuming));
        }
        let mut plan = Basic {
            shape: shape.clone(),
            ranges: Vec::new(),
            flips: Vec::new(),
            steps: Vec::new(),
            view: Vec::new(),
            tensors: Vec::new(),
        };
        let mut axis = 0;
        for i in full {
            if let Idx::NewAxis = i {
                plan.view.push(1);
                continue;
            }
            let n = shape[axis];
            match i {
                Idx::I(v) => {
                    let p = if v < 0 { v + n as isize } else { v };
                    assert!(
                        p >= 0 && (p as usize) < n,
                        "index: index {v} is out of bounds for dimension {axis} with size {n} (shape {shape:?})"
                    );
                    plan.ranges.push((p as usize, p as usize + 1));
                    plan.steps.push(1);
                }
                Idx::R(start, stop, step) => {
                    let step = step.unwrap_or(1);
                    assert!(step != 0, "index: slice step cannot be zero (axis {axis} of shape {shape:?})");
                    let (first, count) = slice_span(start, stop, step, n);
                    let s = step.unsigned_abs();
                    let span = if count == 0 { 0 } else { (count - 1) * s + 1 };
                    if step > 0 {
                        let f = if count == 0 { 0 } else { first as usize };
                        plan.ranges.push((f, f + span));
                    } else {
                        let top = if count == 0 { 0 } else { first as usize + 1 };
                        plan.ranges.push((top - span, top));
                        plan.flips.push(axis);
                    }
                    plan.steps.push(s);
                    plan.view.push(count);
                }
                Idx::T(t) => {
                    assert!(
                        !t.dtype().is_float() && !t.dtype().is_bool(),
                        "index: tensor indices must be integers, got {} (use masked_fill/where for masks)",
                        t.dtype()
                    );
                    plan.ranges.push((0, n));
                    plan.steps.push(1);
                    plan.tensors.push((plan.view.len(), t));
                    plan.view.push(n);
                }
                Idx::NewAxis | Idx::Ellipsis => unreachable!("handled above"),
            }
            axis += 1;
        }
        plan
    }

    /// The view `plan` describes (before tensor indices).
    fn apply_basic(&self, plan: &Basic) -> Tensor {
        let x = self.shrink(&plan.ranges).flip(plan.flips.clone());
        let lens: Vec<usize> = plan.ranges.iter().map(|&(a, b)| b - a).collect();
        let x = if plan.steps.iter().any(|&s| s > 1) {
            // Step s: pad to a multiple of s, split into (n/s, s), keep column 0.
            let m: Vec<usize> = lens.iter().zip(&plan.steps).map(|(&l, &s)| l.div_ceil(s)).collect();
            let pads: Vec<(usize, usize)> = (0..lens.len()).map(|i| (0, m[i] * plan.steps[i] - lens[i])).collect();
            let split: Vec<usize> = (0..lens.len()).flat_map(|i| [m[i], plan.steps[i]]).collect();
            let cut: Vec<(usize, usize)> = m.iter().flat_map(|&m| [(0, m), (0, 1)]).collect();
            x.pad(&pads).reshape(split).shrink(&cut).reshape(m)
        } else {
            x
        };
        x.reshape(plan.view.clone())
    }

    /// Puts `v` (of the view's shape) back where `plan` took the view from: the full shape,
    /// zero (false) elsewhere.
    fn unapply_basic(v: &Tensor, plan: &Basic) -> Tensor {
        let lens: Vec<usize> = plan.ranges.iter().map(|&(a, b)| b - a).collect();
        let m: Vec<usize> = lens.iter().zip(&plan.steps).map(|(&l, &s)| l.div_ceil(s)).collect();
        let x = v.reshape(m.clone());
        let x = if plan.steps.iter().any(|&s| s > 1) {
            let split: Vec<usize> = m.iter().flat_map(|&m| [m, 1]).collect();
            let gaps: Vec<(usize, usize)> = plan.steps.iter().flat_map(|&s| [(0, 0), (0, s - 1)]).collect();
            let merged: Vec<usize> = m.iter().zip(&plan.steps).map(|(&m, &s)| m * s).collect();
            let cut: Vec<(usize, usize)> = lens.iter().map(|&l| (0, l)).collect();
            x.reshape(split).pad(&gaps).reshape(merged).shrink(&cut)
        } else {
            x
        };
        let pads: Vec<(usize, usize)> = plan.ranges.iter().zip(&plan.shape).map(|(&(a, b), &n)| (a, n - b)).collect();
        x.flip(plan.flips.clone()).pad(&pads)
    }

    /// `self[idx]` with PyTorch semantics: ints remove an axis, slices (any step) keep it,
    /// `None` adds one, `...` fills; integer tensors index their axes together (broadcast),
    /// their result axes going where the first one was when they are adjacent, else first.
    pub fn index(&self, idx: &[Idx]) -> Tensor {
        let plan = self.basic_plan(idx);
        let view = self.apply_basic(&plan);
        if plan.tensors.is_empty() {
            return view;
        }
        let adv = Advanced::new(&view.shape(), &plan.tensors, &view.device());
        let moved = view.permute(adv.moved_order());
        let expanded = moved.reshape(adv.with_ones()).expand(adv.wide());
        let axes: Vec<isize> = (1..=adv.k() as isize).map(|i| -i).collect();
        let picked = adv.mask.where_(&expanded, expanded.zero_scalar()).sum_axis(axes).cast(self.dtype());
        picked.permute(adv.result_order())
    }

    /// A copy of `self` with `value` (broadcast to `self.index(idx)`'s shape) written at
    /// `idx` — `x[idx] = value` without touching `x`. Gradients flow to both. With repeated
    /// tensor indices the written values add up.
    pub fn index_put(&self, idx: &[Idx], value: impl Operand) -> Tensor {
        let plan = self.basic_plan(idx);
        let v = value.into_tensor(self).cast(self.dtype());
        let dev = self.device();
        let (vb, mb) = if plan.tensors.is_empty() {
            let v = v.broadcast_to(&plan.view);
            (v, Tensor::full_on(plan.view.clone(), ConstValue::Bool(true), DType::BOOL, &dev))
        } else {
            let adv = Advanced::new(&plan.view, &plan.tensors, &dev);
            let v = v.broadcast_to(&adv.result_shape()).permute(inverse(&adv.result_order()));
            let wide = v.reshape(adv.with_ones_after()).expand(adv.wide());
            let b_axes: Vec<isize> = (0..adv.nb).map(|i| (adv.rest.len() + i) as isize).collect();
            let vals = adv.mask.where_(&wide, wide.zero_scalar()).sum_axis(b_axes.clone()).cast(self.dtype());
            let hit = adv.mask.cast(DType::I32).max_axis(b_axes).cast(DType::BOOL);
            let back = inverse(&adv.moved_order());
            (vals.permute(back.clone()), hit.expand(adv.moved_shape()).permute(back))
        };
        let mask = Tensor::unapply_basic(&mb, &plan);
        mask.where_(Tensor::unapply_basic(&vb, &plan), self)
    }

    /// `x[idx] = value` in place: the new values are assigned into this tensor's buffer, so
    /// every handle sees them (see `assign`).
    pub fn set_index(&self, idx: &[Idx], value: impl Operand) {
        let new = self.index_put(idx, value);
        self.assign(&new);
    }

    /// `value` where `mask` is true, `self` elsewhere (mask broadcasts; dtype is `self`'s).
    pub fn masked_fill(&self, mask: &Tensor, value: impl Operand) -> Tensor {
        let v = value.into_tensor(self).cast(self.dtype());
        mask.cast(DType::BOOL).where_(&v, self)
    }

    /// `out[i][j] = self[index[i][j]][j]` (for `dim` 0, and likewise for other axes), as
    /// `torch.gather`. `index` has this tensor's rank and is at most its size off `dim`.
    pub fn gather(&self, dim: isize, index: &Tensor) -> Tensor {
        let (xs, is) = (self.shape(), index.shape());
        let axis = resolve_axis("gather", dim, &xs);
        assert!(index.dtype().is_int(), "gather: the index must be an integer tensor, got {}", index.dtype());
        assert_eq!(xs.len(), is.len(), "gather: index of shape {is:?} needs the rank of input {xs:?}");
        let fits = (0..xs.len()).all(|d| d == axis || is[d] <= xs[d]);
        assert!(fits, "gather: index of shape {is:?} is larger than input {xs:?} off dim {dim}");
        let cut: Vec<(usize, usize)> = (0..xs.len()).map(|d| (0, if d == axis { xs[d] } else { is[d] })).collect();
        let x = self.shrink(&cut).unsqueeze(-1).transpose(-1, axis as isize);
        let n = xs[axis] as i64;
        super::checks::check_indices(index, 0, n, format!("gather: dim {axis} of input {xs:?}"));
        let hot = one_hot(index, xs[axis]);
        hot.where_(&x, x.zero_scalar()).sum_axis(-1).cast(self.dtype())
    }

    /// Source values and the one-hot mask of a scatter, both `(self.shape..., k)` where `k`
    /// runs over `index`'s positions along `dim`.
    fn pre_scatter(&self, op: &str, dim: isize, index: &Tensor, src: &Tensor) -> (Tensor, Tensor, usize) {
        let (xs, is, ss) = (self.shape(), index.shape(), src.shape());
        let axis = resolve_axis(op, dim, &xs);
        assert!(
            xs.len() == is.len() && is.len() == ss.len(),
            "{op}: input {xs:?}, index {is:?} and src {ss:?} need one rank"
        );
        let fits = (0..xs.len()).all(|d| (d == axis || is[d] <= xs[d]) && is[d] <= ss[d]);
        assert!(fits, "{op}: index {is:?} must fit src {ss:?}, and input {xs:?} off dim {dim}");
        let src = src.cast(self.dtype()).shrink(&is.iter().map(|&d| (0, d)).collect::<Vec<_>>());
        let mut wide = is.clone();
        wide.push(xs[axis]);
        let src = src.unsqueeze(-1).expand(wide).transpose(-1, axis as isize);
        super::checks::check_indices(index, 0, xs[axis] as i64, format!("{op}: dim {axis} of input {xs:?}"));
        let hot = one_hot(index, xs[axis]).transpose(-1, axis as isize);
        let pads: Vec<(usize, usize)> =
            (0..=xs.len()).map(|d| if d < xs.len() && d != axis { (0, xs[d] - is[d]) } else { (0, 0) }).collect();
        (src.pad(&pads), hot.pad(&pads), axis)
    }

    /// `self` with `src[i][j]` written at `[index[i][j]][j]` (for `dim` 0), as
    /// `torch.scatter`; for a repeated index the last write wins.
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Tensor {
        let (src, hot, _) = self.pre_scatter("scatter", dim, index, src);
        let k = *src.shape().last().expect("scatter: has the index axis");
        let last = src.ndim() - 1;
        let pick = |t: &Tensor, j: usize| {
            let s = t.shape();
            t.shrink(
                &s.iter().enumerate().map(|(d, &n)| if d == last { (j, j + 1) } else { (0, n) }).collect::<Vec<_>>(),
            )
            .squeeze(-1)
        };
        let mut out = self.clone();
        for j in 0..k {
            out = pick(&hot, j).where_(pick(&src, j), &out);
        }
        out
    }

    /// Reduces `src` into `self` at `index` along `dim`, as `torch.scatter_reduce`: `reduce`
    /// is `"sum"`, `"prod"`, `"mean"`, `"amax"` or `"amin"`; `include_self` counts this
    /// tensor's values in the reduction (PyTorch's default is true).
    pub fn scatter_reduce(&self, dim: isize, index: &Tensor, src: &Tensor, reduce: &str, include_self: bool) -> Tensor {
        let (src, hot, _) = self.pre_scatter("scatter_reduce", dim, index, src);
        let dt = self.dtype();
        let touched = hot.cast(DType::I32).max_axis(-1).cast(DType::BOOL);
        // `self` where it takes part, else the identity `id` of the reduction.
        let base = |id: ConstValue| -> Tensor {
            let fill = Tensor::full_on([0usize; 0], id, dt, &self.device());
            if include_self {
                self.clone()
            } else {
                touched.where_(&fill, self)
            }
        };
        let filled = |id: ConstValue| hot.where_(&src, Tensor::full_on([0usize; 0], id, dt, &self.device()));
        let zero = ConstValue::Int(0).cast(dt);
        let one = ConstValue::Int(1).cast(dt);
        match reduce {
            "sum" => filled(zero).sum_axis(-1).cast(dt) + base(zero),
            "prod" => filled(one).prod_axis(-1).cast(dt) * base(one),
            "amax" => {
                let lo = crate::uop::Ops::MAX.reduce_identity(dt);
                filled(lo).max_axis(-1).maximum(base(lo))
            }
            "amin" => {
                let hi = match lo_hi(dt) {
                    Some(h) => h,
                    None => panic!("scatter_reduce: amin of {dt}"),
                };
                let m = filled(hi).min_axis(-1);
                m.minimum(base(hi))
            }
            "mean" => {
                let total = filled(zero).sum_axis(-1).cast(dt) + base(zero);
                let count = hot.cast(DType::I32).sum_axis(-1);
                let count = if include_self { count + 1 } else { touched.where_(&count, 1) };
                let count = count.cast(if dt.is_float() { dt } else { DType::F32 });
                if dt.is_float() {
                    total / count
                } else {
                    (total.cast(DType::F32) / count).trunc().cast(dt)
                }
            }
            other => panic!("scatter_reduce: reduce must be sum, prod, mean, amax or amin, got {other:?}"),
        }
    }

    /// `scatter_reduce(dim, index, src, "sum", true)`, as `torch.scatter_add`.
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Tensor {
        self.scatter_reduce(dim, index, src, "sum", true)
    }
}

/// The highest value of a dtype (the identity of a min).
fn lo_hi(dt: DType) -> Option<ConstValue> {
    if dt.is_float() {
        Some(ConstValue::Float(f64::INFINITY))
    } else if dt.is_bool() {
        Some(ConstValue::Bool(true))
    } else {
        i64::try_from(dt.int_range().1).ok().map(ConstValue::Int)
    }
}

/// `index[..., None] == arange(n)`: shape `(index.shape..., n)`, bool. Negative or too large
/// positions match nothing.
fn one_hot(index: &Tensor, n: usize) -> Tensor {
    let ar = Tensor::iota(n, index.dtype(), &index.device());
    index.unsqueeze(-1).eq(&ar)
}

fn inverse(order: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; order.len()];
    for (i, &o) in order.iter().enumerate() {
        inv[o] = i;
    }
    inv
}

/// The geometry of advanced indexing of a view: `rest` axes stay, the indexed axes are
/// replaced by the broadcast index shape `b`.
struct Advanced {
    view: Vec<usize>,
    /// Indexed axes of the view, in order.
    axes: Vec<usize>,
    rest: Vec<usize>,
    b: Vec<usize>,
    nb: usize,
    /// `(1.., b..., sizes of the indexed axes...)`, bool.
    mask: Tensor,
}

impl Advanced {
    fn new(view: &[usize], tensors: &[(usize, Tensor)], dev: &str) -> Advanced {
        let shapes: Vec<Vec<usize>> = tensors.iter().map(|(_, t)| t.shape()).collect();
        let b = shapes.iter().fold(Vec::new(), |acc, s| super::elementwise::broadcast_shape("index", &acc, s));
        let nb = b.len();
        let axes: Vec<usize> = tensors.iter().map(|(a, _)| *a).collect();
        let rest: Vec<usize> = (0..view.len()).filter(|a| !axes.contains(a)).collect();
        let k = axes.len();
        let mut mask: Option<Tensor> = None;
        for (j, (a, t)) in tensors.iter().enumerate() {
            let n = view[*a];
            let t = t.to(dev);
            // Negative indices count from the end, as in PyTorch.
            super::checks::check_indices(&t, -(n as i64), n as i64, format!("index: axis {a} of shape {view:?}"));
            let t = t.lt(0).where_(&(&t + n as i64), &t).cast(DType::I64).broadcast_to(&b);
            let mut shape: Vec<usize> = b.clone();
            shape.extend(std::iter::repeat_n(1, k));
            shape[nb + j] = n;
            let mut ar_shape = vec![1; nb + k];
            ar_shape[nb + j] = n;
            let ar = Tensor::iota(n, DType::I64, dev).reshape(ar_shape);
            let mut t_shape = b.clone();
            t_shape.extend(std::iter::repeat_n(1, k));
            let hot = t.reshape(t_shape).eq(&ar);
            mask = Some(match mask {
                None => hot,
                Some(m) => m.bitand(&hot),
            });
        }
        let mut full: Vec<usize> = b.clone();
        full.extend(axes.iter().map(|&a| view[a]));
        let mask = mask.expect("index: at least one tensor index").broadcast_to(&full);
        let lead: Vec<usize> = std::iter::repeat_n(1, rest.len()).chain(full).collect();
        Advanced { view: view.to_vec(), axes, rest, b, nb, mask: mask.reshape(lead) }
    }
    fn k(&self) -> usize {
        self.axes.len()
    }
    /// View order with the indexed axes last.
    fn moved_order(&self) -> Vec<usize> {
        self.rest.iter().chain(&self.axes).copied().collect()
    }
    fn moved_shape(&self) -> Vec<usize> {
        self.moved_order().iter().map(|&a| self.view[a]).collect()
    }
    /// `(rest..., 1 for b..., indexed...)`.
    fn with_ones(&self) -> Vec<usize> {
        let r = self.rest.iter().map(|&a| self.view[a]);
        r.chain(std::iter::repeat_n(1, self.nb)).chain(self.axes.iter().map(|&a| self.view[a])).collect()
    }
    /// `(rest..., b..., 1 for indexed...)`.
    fn with_ones_after(&self) -> Vec<usize> {
        let r = self.rest.iter().map(|&a| self.view[a]);
        r.chain(self.b.iter().copied()).chain(std::iter::repeat_n(1, self.k())).collect()
    }
    /// `(rest..., b..., indexed...)`.
    fn wide(&self) -> Vec<usize> {
        let r = self.rest.iter().map(|&a| self.view[a]);
        r.chain(self.b.iter().copied()).chain(self.axes.iter().map(|&a| self.view[a])).collect()
    }
    /// From `(rest..., b...)` to the result's axis order.
    fn result_order(&self) -> Vec<usize> {
        let nr = self.rest.len();
        let adjacent = self.axes.windows(2).all(|w| w[1] == w[0] + 1);
        let bs: Vec<usize> = (nr..nr + self.nb).collect();
        if adjacent {
            let before = self.rest.iter().filter(|&&a| a < self.axes[0]).count();
            (0..before).chain(bs).chain(before..nr).collect()
        } else {
            bs.into_iter().chain(0..nr).collect()
        }
    }
    fn result_shape(&self) -> Vec<usize> {
        let r: Vec<usize> = self.rest.iter().map(|&a| self.view[a]).chain(self.b.iter().copied()).collect();
        self.result_order().iter().map(|&i| r[i]).collect()
    }
}
