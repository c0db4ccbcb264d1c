//! Reductions built on sum and max: variance and standard deviation, any/all, argmax/argmin,
//! logsumexp, softmax, and cumulative ops along an axis.
//!
//! Cumulative ops compare an `n x n` window of the input with a triangular mask built from
//! `iota` and reduce it: one fused kernel, no loop over the axis (O(n^2) work per row, which
//! is what tinygrad's window trick costs too).

use super::shape_args::{resolve_axes, resolve_axis};
use super::{IntoAxes, Tensor};
use crate::uop::{DType, Ops};

/// `t` without the (size-1) axes `axes`.
fn drop_axes(t: &Tensor, axes: &[usize]) -> Tensor {
    let keep: Vec<usize> = t.shape().iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect();
    t.reshape(keep)
}

impl Tensor {
    // ---------------------------------------------------------------- variance

    /// Variance over `axes` with `correction` (1: Bessel's, the default of `var`, 0: population).
    /// `n - correction <= 0` divides by 0 (inf or NaN), as PyTorch.
    pub fn var_with(&self, axes: impl IntoAxes, keepdim: bool, correction: f64) -> Tensor {
        self.var_mean_with(axes, keepdim, correction).0
    }
    /// Variance (correction 1) of all elements.
    pub fn var(&self) -> Tensor {
        self.var_with((), false, 1.0)
    }
    pub fn var_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.var_with(axes, false, 1.0)
    }
    pub fn var_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.var_with(axes, true, 1.0)
    }
    /// Variance and mean together (PyTorch's `var_mean`).
    pub fn var_mean_with(&self, axes: impl IntoAxes, keepdim: bool, correction: f64) -> (Tensor, Tensor) {
        let shape = self.shape();
        let axes: Vec<usize> = resolve_axes("var", axes.into_axes(), &shape);
        let n: usize = axes.iter().map(|&a| shape[a]).product();
        let x = self.float();
        let dt = x.dtype();
        let x = if dt == DType::F16 || dt == DType::BF16 { x.cast(DType::F32) } else { x };
        let mean = x.mean_keepdim(axes.clone());
        let dev = x.sub(&mean);
        let signed: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
        let ss = dev.mul(&dev).reduce("var", Ops::ADD, Some(signed), keepdim);
        let var = ss.div((n as f64 - correction).max(0.0)).cast(dt);
        let mean = if keepdim { mean } else { drop_axes(&mean, &axes) };
        (var, mean.cast(dt))
    }

    /// Standard deviation: `sqrt(var)`, whose gradient is 0 where the variance is 0 (as
    /// PyTorch's, instead of `0 * inf`).
    pub fn std_with(&self, axes: impl IntoAxes, keepdim: bool, correction: f64) -> Tensor {
        self.std_mean_with(axes, keepdim, correction).0
    }
    pub fn std(&self) -> Tensor {
        self.std_with((), false, 1.0)
    }
    pub fn std_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.std_with(axes, false, 1.0)
    }
    pub fn std_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.std_with(axes, true, 1.0)
    }
    /// Standard deviation and mean together (PyTorch's `std_mean`).
    pub fn std_mean_with(&self, axes: impl IntoAxes, keepdim: bool, correction: f64) -> (Tensor, Tensor) {
        let (var, mean) = self.var_mean_with(axes, keepdim, correction);
        let zero = var.eq(0.0);
        let std = zero.where_(0.0, zero.where_(1.0, &var).sqrt());
        (std, mean)
    }

    // ---------------------------------------------------------------- any / all

    fn any_impl(&self, axes: Option<Vec<isize>>, keepdim: bool) -> Tensor {
        self.cast(DType::BOOL).reduce("any", Ops::MAX, axes, keepdim)
    }
    /// Whether any element is nonzero (a bool 0-d tensor; `false` when empty).
    pub fn any(&self) -> Tensor {
        self.any_impl(None, false)
    }
    pub fn any_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.any_impl(axes.into_axes(), false)
    }
    pub fn any_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.any_impl(axes.into_axes(), true)
    }
    /// Whether every element is nonzero (`true` when empty).
    pub fn all(&self) -> Tensor {
        self.cast(DType::BOOL).logical_not().any().logical_not()
    }
    pub fn all_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.cast(DType::BOOL).logical_not().any_axis(axes).logical_not()
    }
    pub fn all_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.cast(DType::BOOL).logical_not().any_keepdim(axes).logical_not()
    }

    // ---------------------------------------------------------------- argmax / argmin

    /// Index (int64) of the first maximum along `axis` (NaN counts as the maximum, as in
    /// PyTorch); `None` flattens first.
    fn arg_extreme(&self, axis: Option<isize>, keepdim: bool, name: &str) -> Tensor {
        let (x, ax) = match axis {
            None => (self.flatten(), 0),
            Some(a) => (self.clone(), resolve_axis(name, a, &self.shape())),
        };
        let n = x.shape()[ax];
        assert!(n > 0, "{name}: cannot take the {name} of an empty axis {ax} (shape {:?})", self.shape());
        let mut rshape = vec![1usize; x.ndim()];
        rshape[ax] = n;
        // Keys `n - i` (later elements smaller), so the largest key is the first index.
        let rev = Tensor::iota(n, DType::I32, &x.device()).neg().add(n as i32).reshape(rshape);
        let n32 = n as i32;
        let key = if x.dtype().is_float() {
            let nan = x.isnan();
            let m = nan.where_(f64::NEG_INFINITY, &x).max_keepdim(ax);
            nan.where_(rev.add(n32), x.eq(&m).where_(&rev, 0))
        } else {
            x.eq(x.max_keepdim(ax)).where_(&rev, 0)
        };
        let best = key.max_keepdim(ax);
        let idx = best.gt(n32).where_(best.neg().add(2 * n32), best.neg().add(n32)).cast(DType::I64);
        match axis {
            Some(_) if keepdim => idx,
            _ => drop_axes(&idx, &[ax]),
        }
    }
    /// Index of the first maximum of the flattened tensor (0-d int64).
    pub fn argmax(&self) -> Tensor {
        self.arg_extreme(None, false, "argmax")
    }
    pub fn argmax_axis(&self, axis: isize) -> Tensor {
        self.arg_extreme(Some(axis), false, "argmax")
    }
    pub fn argmax_keepdim(&self, axis: isize) -> Tensor {
        self.arg_extreme(Some(axis), true, "argmax")
    }
    /// `argmax` of an order-reversed copy (`-x`, or `!x` for ints: no overflow).
    fn reversed_order(&self) -> Tensor {
        if self.dtype().is_float() {
            self.neg()
        } else {
            self.flip_order()
        }
    }
    /// Index of the first minimum of the flattened tensor (0-d int64).
    pub fn argmin(&self) -> Tensor {
        self.reversed_order().arg_extreme(None, false, "argmin")
    }
    pub fn argmin_axis(&self, axis: isize) -> Tensor {
        self.reversed_order().arg_extreme(Some(axis), false, "argmin")
    }
    pub fn argmin_keepdim(&self, axis: isize) -> Tensor {
        self.reversed_order().arg_extreme(Some(axis), true, "argmin")
    }

    // ---------------------------------------------------------------- logsumexp / softmax

    fn logsumexp_impl(&self, axes: Option<Vec<isize>>, keepdim: bool) -> Tensor {
        let shape = self.shape();
        let resolved = resolve_axes("logsumexp", axes, &shape);
        self.float().via_f32(|x| {
            // The max is only a shift for stability: no gradient flows through it (the exact
            // gradient through it is zero anyway). Infinite maxima shift by 0 instead.
            let m = x.max_keepdim(resolved.clone()).detach();
            let m = m.isinf().where_(0.0, &m);
            let r = x.sub(&m).exp().sum_keepdim(resolved.clone()).log().add(&m);
            if keepdim {
                r
            } else {
                drop_axes(&r, &resolved)
            }
        })
    }
    /// `log(sum(exp(x)))` over `axes`, shifted by the maximum so that it cannot overflow.
    pub fn logsumexp(&self, axes: impl IntoAxes) -> Tensor {
        self.logsumexp_impl(axes.into_axes(), false)
    }
    pub fn logsumexp_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.logsumexp_impl(axes.into_axes(), true)
    }
    /// `exp(x) / sum(exp(x))` along `axis`, shifted by the maximum (three kernels at most:
    /// max, sum, divide).
    pub fn softmax(&self, axis: isize) -> Tensor {
        if self.ndim() == 0 {
            resolve_axis("softmax", axis, &[1]);
            return self.reshape([1]).softmax(0).reshape([0usize; 0]);
        }
        let ax = resolve_axis("softmax", axis, &self.layout_shape());
        self.float().via_f32(|x| {
            let e = x.sub(x.max_keepdim(ax).detach()).exp();
            e.div(e.sum_keepdim(ax))
        })
    }
    /// `x - logsumexp(x)` along `axis`.
    pub fn log_softmax(&self, axis: isize) -> Tensor {
        if self.ndim() == 0 {
            resolve_axis("log_softmax", axis, &[1]);
            return self.reshape([1]).log_softmax(0).reshape([0usize; 0]);
        }
        let ax = resolve_axis("log_softmax", axis, &self.layout_shape());
        self.float().via_f32(|x| {
            let s = x.sub(x.max_keepdim(ax).detach());
            s.sub(s.exp().sum_keepdim(ax).log())
        })
    }

    /// `softmax(-x)` along `axis` (as `F.softmin`).
    pub fn softmin(&self, axis: isize) -> Tensor {
        self.float().neg().softmax(axis)
    }
    /// `x / max(||x||_p, eps)` along `axis` (as `F.normalize`; PyTorch's defaults are `p = 2`,
    /// `axis = 1`, `eps = 1e-12`).
    pub fn normalize(&self, p: f64, axis: isize, eps: f64) -> Tensor {
        let ax = resolve_axis("normalize", axis, &self.shape());
        self.float().via_f32(|x| {
            // A zero norm has gradient 0 (as PyTorch's): the root is taken of 1 there.
            let root = |s: Tensor, f: &dyn Fn(&Tensor) -> Tensor| {
                let nonzero = s.gt(0.0);
                nonzero.where_(f(&nonzero.where_(&s, 1.0)), 0.0)
            };
            let norm = if p == 2.0 {
                root(x.square().sum_keepdim(ax), &|s| s.sqrt())
            } else if p == 1.0 {
                x.abs().sum_keepdim(ax)
            } else if p.is_infinite() {
                x.abs().max_keepdim(ax)
            } else {
                root(x.abs().pow(p).sum_keepdim(ax), &|s| s.pow(1.0 / p))
            };
            x.div(norm.maximum(eps))
        })
    }

    // ---------------------------------------------------------------- cumulative ops

    /// `log(cumsum(exp(x)))` along `axis` without overflow or underflow: each output is the
    /// logsumexp of its prefix (a masked window, shifted by the prefix's own maximum).
    pub fn logcumsumexp(&self, axis: isize) -> Tensor {
        let [r] = self.float().along_last(axis, "logcumsumexp", |x| {
            [x.via_f32(|x| {
                let (w, tri) = x.cum_window();
                tri.where_(&w, f64::NEG_INFINITY).logsumexp(-1)
            })]
        });
        r
    }

    /// Runs `f` on this tensor with `axis` moved last (0-d tensors as 1-element vectors), and
    /// moves the axis of every result back.
    pub(super) fn along_last<const K: usize>(
        &self,
        axis: isize,
        name: &str,
        f: impl FnOnce(&Tensor) -> [Tensor; K],
    ) -> [Tensor; K] {
        if self.ndim() == 0 {
            resolve_axis(name, axis, &[1]);
            return f(&self.reshape([1])).map(|t| t.reshape([0usize; 0]));
        }
        let ax = resolve_axis(name, axis, &self.shape()) as isize;
        f(&self.transpose(ax, -1)).map(|t| t.transpose(ax, -1))
    }

    /// The `(…, n, n)` window `w[…, c, j] = x[…, j]` of a tensor whose last axis has size `n`,
    /// and the mask `j <= c` (shape `(n, n)`).
    fn cum_window(&self) -> (Tensor, Tensor) {
        let n = *self.shape().last().expect("cum_window of a 0-d tensor");
        let i = Tensor::iota(n, DType::I32, &self.device());
        let tri = i.reshape([1, n]).le(i.reshape([n, 1]));
        (self.unsqueeze(-2), tri)
    }

    /// Cumulative sum along `axis` (ints and bools sum as int64, as in PyTorch).
    /// 16-bit floats accumulate in f32 (each output is its prefix sum rounded once, as
    /// PyTorch's accumulation in `float`), whatever blocks a long axis is split into.
    /// Cumulative sum of this tensor cast to `dtype` (as `x.cumsum(dim, dtype=...)`).
    pub fn cumsum_as(&self, axis: isize, dtype: DType) -> Tensor {
        self.cast(dtype).cumsum(axis).cast(dtype)
    }
    pub fn cumsum(&self, axis: isize) -> Tensor {
        let along = |x: &Tensor| {
            let [r] = x.along_last(axis, "cumsum", |x| [x.cumsum_last()]);
            r
        };
        if !self.dtype().is_float() {
            return along(&self.cast(DType::I64));
        }
        self.via_f32(along)
    }
    /// Cumulative sum along the last axis: one masked-window kernel, or for long axes blocks of
    /// `B` summed that way plus an exclusive cumsum of the block totals (O(n B + (n/B)^2) work
    /// instead of O(n^2)).
    fn cumsum_last(&self) -> Tensor {
        const BLOCK: usize = 256;
        let shape = self.shape();
        let n = *shape.last().expect("cumsum_last of a 0-d tensor");
        if n <= 2 * BLOCK {
            let (w, tri) = self.cum_window();
            return tri.where_(&w, 0).sum_axis(-1);
        }
        let m = n.div_ceil(BLOCK);
        let lead = &shape[..shape.len() - 1];
        let mut pads = vec![(0, 0); shape.len()];
        pads[shape.len() - 1] = (0, m * BLOCK - n);
        let blocks = self.pad(&pads).reshape([lead, &[m, BLOCK]].concat());
        let inner = blocks.cumsum_last();
        let keep_lead: Vec<(usize, usize)> = lead.iter().map(|&d| (0, d)).collect();
        let totals = inner.shrink(&[keep_lead.clone(), vec![(0, m), (BLOCK - 1, BLOCK)]].concat());
        // Exclusive prefix of the totals: the running sum of the totals shifted one block down
        // (not the running sum minus the block's own total, which would make a block's
        // infinity or NaN reach the elements before it).
        let mut shift = vec![(0, 0); lead.len()];
        shift.extend([(1, 0), (0, 0)]);
        let shifted = totals.pad(&shift).shrink(&[keep_lead, vec![(0, m), (0, 1)]].concat());
        let before = shifted.transpose(-1, -2).cumsum_last().transpose(-1, -2);
        let r = inner.add(before).reshape([lead, &[m * BLOCK]].concat());
        r.shrink(&[lead.iter().map(|&d| (0, d)).collect(), vec![(0, n)]].concat())
    }
    /// Cumulative product along `axis`; exact with zeros and negative values (a product over a
    /// masked window, not `exp(cumsum(log))`).
    pub fn cumprod(&self, axis: isize) -> Tensor {
        let x = if self.dtype().is_float() { self.clone() } else { self.cast(DType::I64) };
        let [r] = x.along_last(axis, "cumprod", |x| {
            let (w, tri) = x.cum_window();
            [tri.where_(&w, 1).prod_axis(-1)]
        });
        r
    }
    /// Running maximum along `axis` and the index (int64) where it was reached (the latest
    /// index among ties, and NaN propagates, as PyTorch's `cummax`). The gradient goes to that
    /// index.
    pub fn cummax(&self, axis: isize) -> (Tensor, Tensor) {
        let [v, i] = self.along_last(axis, "cummax", |x| x.cum_extreme(x));
        (v, i)
    }
    /// Running minimum along `axis` and its index (int64).
    pub fn cummin(&self, axis: isize) -> (Tensor, Tensor) {
        let [v, i] = self.along_last(axis, "cummin", |x| x.cum_extreme(&x.reversed_order()));
        (v, i)
    }
    /// Running max of `key` (an order-preserving or -reversing copy of `self`) along the last
    /// axis; values gathered from `self` at the indices.
    fn cum_extreme(&self, key: &Tensor) -> [Tensor; 2] {
        let n = *self.shape().last().expect("cum_extreme of a 0-d tensor") as i32;
        let (w, tri) = key.detach().cum_window();
        let j1 = Tensor::iota(n as usize, DType::I32, &self.device()).add(1);
        let best = if w.dtype().is_float() {
            let nan = w.isnan();
            let m = tri.bitand(nan.logical_not()).where_(&w, f64::NEG_INFINITY).max_keepdim(-1);
            // Index keys j + 1, and j + 1 + n for NaNs (a NaN beats every number).
            let k = nan.where_(j1.add(n), w.eq(&m).where_(&j1, 0));
            tri.where_(k, 0).max_keepdim(-1)
        } else {
            let lowest = w.konst(w.dtype().int_range().0 as f64);
            let m = tri.where_(&w, &lowest).max_keepdim(-1);
            tri.bitand(w.eq(&m)).where_(&j1, 0).max_keepdim(-1)
        };
        let idx = best.gt(n).where_(best.sub(n + 1), best.sub(1));
        let (values_w, _) = self.cum_window();
        let values = j1.sub(1).eq(&idx).where_(&values_w, 0).sum_axis(-1).cast(self.dtype());
        [values, drop_axes(&idx, &[self.ndim()]).cast(DType::I64)]
    }
}
