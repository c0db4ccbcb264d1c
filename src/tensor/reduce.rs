//! Reductions over any axes, with or without keeping the reduced axes.

use super::shape_args::resolve_axes;
use super::{IntoAxes, Tensor};
use crate::uop::{Arg, DType, Dim, Ops, UOp};

impl Tensor {
    /// The primitive: reduce `axes` with `op` (ADD, MUL, MAX), keeping them as size 1.
    /// (A long reduce is split in two kernels by the scheduler, `schedule/split_reduce.rs`.)
    fn reduce_keep(&self, op: Ops, axes: &[usize]) -> Tensor {
        if axes.is_empty() {
            return self.clone();
        }
        let u = self.uop();
        Tensor::from_uop(UOp::new(Ops::REDUCE_AXIS, u.dtype(), vec![u], Arg::Reduce(op, axes.to_vec())))
    }

    pub(crate) fn reduce(&self, name: &str, op: Ops, axes: Option<Vec<isize>>, keepdim: bool) -> Tensor {
        let shape = self.layout_shape();
        let axes = resolve_axes(name, axes, &shape);
        // Sums accumulate 16-bit floats in f32 and small ints in i32 (as PyTorch and tinygrad).
        let acc_dt = match self.dtype() {
            d if d == DType::F16 || d == DType::BF16 => DType::F32,
            d if d.is_bool() || (d.is_int() && d.itemsize() < 4) => {
                if d.is_unsigned() {
                    DType::U32
                } else {
                    DType::I32
                }
            }
            d => d,
        };
        let out_dt = match self.dtype() {
            d if d.is_bool() || d.is_int() => acc_dt,
            d => d,
        };
        let src = if op == Ops::MAX { self.clone() } else { self.cast(acc_dt) };
        let r = src.reduce_keep(op, &axes);
        let r = if op == Ops::MAX { r } else { r.cast(out_dt) };
        if keepdim {
            return r;
        }
        let new: Vec<Dim> =
            self.sym_shape().into_iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, d)| d).collect();
        r.reshape_dims(&new)
    }

    /// Sum of all elements (a 0-d tensor).
    pub fn sum(&self) -> Tensor {
        self.reduce("sum", Ops::ADD, None, false)
    }
    pub fn sum_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.reduce("sum", Ops::ADD, axes.into_axes(), false)
    }
    pub fn sum_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.reduce("sum", Ops::ADD, axes.into_axes(), true)
    }
    pub fn prod(&self) -> Tensor {
        self.reduce("prod", Ops::MUL, None, false)
    }
    pub fn prod_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.reduce("prod", Ops::MUL, axes.into_axes(), false)
    }
    pub fn prod_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.reduce("prod", Ops::MUL, axes.into_axes(), true)
    }
    pub fn max(&self) -> Tensor {
        self.reduce("max", Ops::MAX, None, false)
    }
    pub fn max_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.reduce("max", Ops::MAX, axes.into_axes(), false)
    }
    pub fn max_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.reduce("max", Ops::MAX, axes.into_axes(), true)
    }
    fn min_impl(&self, axes: Option<Vec<isize>>, keepdim: bool) -> Tensor {
        // min(x) = -max(-x); for ints and bools an order-reversing bit flip instead (no
        // overflow at the type's minimum).
        if !self.dtype().is_float() {
            return self.flip_order().reduce("min", Ops::MAX, axes, keepdim).flip_order();
        }
        self.neg().reduce("min", Ops::MAX, axes, keepdim).neg()
    }
    pub fn min(&self) -> Tensor {
        self.min_impl(None, false)
    }
    pub fn min_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.min_impl(axes.into_axes(), false)
    }
    pub fn min_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.min_impl(axes.into_axes(), true)
    }
    fn mean_impl(&self, axes: Option<Vec<isize>>, keepdim: bool) -> Tensor {
        let shape = self.shape();
        let resolved = resolve_axes("mean", axes.clone(), &shape);
        let n: usize = resolved.iter().map(|&a| shape[a]).product();
        let x = if self.dtype().is_float() { self.clone() } else { self.cast(DType::F32) };
        x.reduce("mean", Ops::ADD, axes, keepdim).div(n as f64)
    }
    pub fn mean(&self) -> Tensor {
        self.mean_impl(None, false)
    }
    pub fn mean_axis(&self, axes: impl IntoAxes) -> Tensor {
        self.mean_impl(axes.into_axes(), false)
    }
    pub fn mean_keepdim(&self, axes: impl IntoAxes) -> Tensor {
        self.mean_impl(axes.into_axes(), true)
    }

    // ---------------------------------------------------------------- PyTorch-style arguments

    /// Sum over `axes` (`()` or `None`: all) keeping them as size 1 when `keepdim` (one call
    /// for axes and keepdim chosen at run time, as `x.sum(dim, keepdim)`).
    pub fn sum_with(&self, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        self.reduce("sum", Ops::ADD, axes.into_axes(), keepdim)
    }
    pub fn prod_with(&self, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        self.reduce("prod", Ops::MUL, axes.into_axes(), keepdim)
    }
    pub fn max_with(&self, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        self.reduce("max", Ops::MAX, axes.into_axes(), keepdim)
    }
    pub fn min_with(&self, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        self.min_impl(axes.into_axes(), keepdim)
    }
    pub fn mean_with(&self, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        self.mean_impl(axes.into_axes(), keepdim)
    }
    /// `sum_with` of this tensor cast to `dtype` first (as `x.sum(dim, keepdim, dtype=...)`:
    /// the result has `dtype`, 16-bit floats still accumulate in f32).
    pub fn sum_as(&self, dtype: DType, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        self.cast(dtype).sum_with(axes, keepdim).cast(dtype)
    }
    /// `prod_with` of this tensor cast to `dtype` (as `x.prod(dim, keepdim, dtype=...)`).
    pub fn prod_as(&self, dtype: DType, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        self.cast(dtype).prod_with(axes, keepdim).cast(dtype)
    }
    /// `mean_with` of this tensor cast to the float `dtype` (as `x.mean(dim, keepdim, dtype=...)`).
    pub fn mean_as(&self, dtype: DType, axes: impl IntoAxes, keepdim: bool) -> Tensor {
        assert!(dtype.is_float(), "mean: dtype must be a float type, got {dtype:?}");
        self.cast(dtype).mean_with(axes, keepdim)
    }
}
