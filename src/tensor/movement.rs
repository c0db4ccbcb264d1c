//! Movement ops. None of them copies: each becomes index arithmetic in the kernels that read
//! the result.

use super::shape_args::{resolve_axes, resolve_axis};
use super::{IntoAxes, IntoShape, Tensor};
use crate::uop::{Arg, ConstValue, DType, Dim, Ops, UOp};

impl Tensor {
    fn movement(&self, op: Ops, arg: Arg) -> Tensor {
        let u = self.uop();
        Tensor::from_uop(UOp::new(op, u.dtype(), vec![u], arg))
    }

    /// Same data in another shape with the same number of elements; one `-1` is inferred.
    pub fn reshape(&self, shape: impl IntoShape) -> Tensor {
        let dims = shape.into_dims();
        let old = self.shape();
        let numel: usize = old.iter().product();
        let infer = dims.iter().filter(|&&d| d == -1).count();
        assert!(
            infer <= 1 && dims.iter().all(|&d| d >= -1),
            "reshape: invalid shape {dims:?} for tensor of shape {old:?}"
        );
        let known: usize = dims.iter().filter(|&&d| d != -1).map(|&d| d as usize).product();
        let new: Vec<usize> = dims
            .iter()
            .map(|&d| {
                if d != -1 {
                    d as usize
                } else if known == 0 || !numel.is_multiple_of(known) {
                    panic!("reshape: cannot reshape {old:?} ({numel} elements) to {dims:?}")
                } else {
                    numel / known
                }
            })
            .collect();
        let n: usize = new.iter().product();
        assert_eq!(n, numel, "reshape: cannot reshape {old:?} ({numel} elements) to {new:?} ({n} elements)");
        if new == old {
            return self.clone();
        }
        self.movement(Ops::RESHAPE, Arg::Shape(new))
    }

    /// `reshape` to lengths that may be symbolic (the element counts must be equal
    /// expressions; a symbolic length keeps its own axis, with axes of length 1 around it).
    pub fn reshape_dims(&self, shape: &[Dim]) -> Tensor {
        match numbers(shape) {
            Some(s) if !self.is_symbolic() => self.reshape(s),
            _ => self.movement_to_dims(Ops::RESHAPE, shape),
        }
    }

    /// `expand` to lengths that may be symbolic (size-1 axes broadcast; no new leading axes).
    pub fn expand_to_dims(&self, shape: &[Dim]) -> Tensor {
        match numbers(shape) {
            Some(s) if !self.is_symbolic() => self.expand(s),
            _ => self.movement_to_dims(Ops::EXPAND, shape),
        }
    }

    /// RESHAPE or EXPAND of a symbolic tensor or to symbolic lengths.
    fn movement_to_dims(&self, op: Ops, shape: &[Dim]) -> Tensor {
        if self.sym_shape() == shape {
            return self.clone();
        }
        let arg = match numbers(shape) {
            Some(s) => Arg::Shape(s),
            None => Arg::DimShape(shape.to_vec()),
        };
        self.movement(op, arg)
    }

    /// Reorders the axes: output axis `i` is input axis `order[i]`.
    pub fn permute(&self, order: impl IntoAxes) -> Tensor {
        let shape = self.layout_shape();
        let raw = order.into_axes().unwrap_or_else(|| (0..shape.len() as isize).rev().collect());
        let order: Vec<usize> = raw.iter().map(|&a| resolve_axis("permute", a, &shape)).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert!(
            sorted == (0..shape.len()).collect::<Vec<_>>(),
            "permute: {raw:?} is not a permutation of the axes of shape {shape:?}"
        );
        if order.iter().enumerate().all(|(i, &o)| i == o) {
            return self.clone();
        }
        self.movement(Ops::PERMUTE, Arg::Axes(order))
    }

    /// Broadcasts size-1 axes to `shape` (`-1` keeps an axis; new leading axes are added).
    pub fn expand(&self, shape: impl IntoShape) -> Tensor {
        let dims = shape.into_dims();
        let old = self.shape();
        assert!(dims.len() >= old.len(), "expand: cannot expand {old:?} to {dims:?} (fewer dims)");
        let lead = dims.len() - old.len();
        let new: Vec<usize> = dims
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if d == -1 {
                    if i < lead {
                        panic!("expand: -1 in a new leading axis of {dims:?}")
                    } else {
                        old[i - lead]
                    }
                } else {
                    d as usize
                }
            })
            .collect();
        let base = if lead > 0 {
            self.reshape(std::iter::repeat_n(1usize, lead).chain(old.iter().copied()).collect::<Vec<_>>())
        } else {
            self.clone()
        };
        let bshape = base.shape();
        for (a, b) in bshape.iter().zip(&new) {
            assert!(a == b || *a == 1, "expand: cannot expand {old:?} to {new:?}");
        }
        if bshape == new {
            return base;
        }
        base.movement(Ops::EXPAND, Arg::Shape(new))
    }

    /// Pads each axis with `(before, after)` zeros.
    pub fn pad(&self, pads: &[(usize, usize)]) -> Tensor {
        let shape = self.shape();
        assert_eq!(pads.len(), shape.len(), "pad: {} (before, after) pairs for shape {shape:?}", pads.len());
        if pads.iter().all(|&(a, b)| a == 0 && b == 0) {
            return self.clone();
        }
        self.movement(Ops::PAD, Arg::Pairs(pads.to_vec()))
    }

    /// Pads each axis with `(before, after)` elements of `value`; a negative amount removes
    /// elements instead (as PyTorch's constant `pad`). A nonzero fill is a `where` on a padded
    /// mask, so it fuses into the kernel that reads it.
    pub fn pad_constant(&self, pads: &[(isize, isize)], value: f64) -> Tensor {
        self.pad_fill(pads, ConstValue::Float(value).cast(self.dtype()))
    }

    /// Like `pad_constant` with the lowest value of the dtype (`-inf` for floats): the padding
    /// max pooling needs.
    pub(crate) fn pad_lowest(&self, pads: &[(isize, isize)]) -> Tensor {
        self.pad_fill(pads, Ops::MAX.reduce_identity(self.dtype()))
    }

    fn pad_fill(&self, pads: &[(isize, isize)], fill: ConstValue) -> Tensor {
        let shape = self.shape();
        assert_eq!(pads.len(), shape.len(), "pad: {} (before, after) pairs for shape {shape:?}", pads.len());
        let cut: Vec<(usize, usize)> = pads
            .iter()
            .zip(&shape)
            .map(|(&(b, a), &d)| {
                let (s, e) = ((-b).max(0), d as isize - (-a).max(0));
                assert!(s <= e, "pad: negative padding {pads:?} removes more than shape {shape:?} has");
                (s as usize, e as usize)
            })
            .collect();
        let grow: Vec<(usize, usize)> = pads.iter().map(|&(b, a)| (b.max(0) as usize, a.max(0) as usize)).collect();
        let x = self.shrink(&cut);
        let zero = ConstValue::Int(0).cast(self.dtype());
        if fill == zero || grow.iter().all(|&(b, a)| b == 0 && a == 0) {
            return x.pad(&grow);
        }
        let dev = x.device();
        let mask = Tensor::full_on(x.shape(), ConstValue::Bool(true), DType::BOOL, &dev).pad(&grow);
        mask.where_(x.pad(&grow), Tensor::full_on([0usize; 0], fill, self.dtype(), &dev))
    }

    /// Repeats the whole tensor `repeats[i]` times along axis `i` (PyTorch's `repeat`; extra
    /// leading entries add axes). No copy: a reshape, an expand and a reshape.
    pub fn repeat(&self, repeats: &[usize]) -> Tensor {
        let shape = self.shape();
        assert!(
            repeats.len() >= shape.len(),
            "repeat: {} repeats for shape {shape:?} (need at least one per axis)",
            repeats.len()
        );
        let base: Vec<usize> =
            std::iter::repeat_n(1, repeats.len() - shape.len()).chain(shape.iter().copied()).collect();
        let split: Vec<usize> = base.iter().flat_map(|&b| [1, b]).collect();
        let expanded: Vec<usize> = repeats.iter().zip(&base).flat_map(|(&r, &b)| [r, b]).collect();
        let fin: Vec<usize> = repeats.iter().zip(&base).map(|(&r, &b)| r * b).collect();
        self.reshape(split).expand(expanded).reshape(fin)
    }

    /// Keeps `start..end` of each axis.
    pub fn shrink(&self, ranges: &[(usize, usize)]) -> Tensor {
        let shape = self.shape();
        let ok = ranges.len() == shape.len() && ranges.iter().zip(&shape).all(|((s, e), d)| s <= e && e <= d);
        assert!(ok, "shrink: {ranges:?} is not inside shape {shape:?}");
        if ranges.iter().zip(&shape).all(|(&(s, e), &d)| s == 0 && e == d) {
            return self.clone();
        }
        self.movement(Ops::SHRINK, Arg::Pairs(ranges.to_vec()))
    }

    /// Reverses the given axes.
    pub fn flip(&self, axes: impl IntoAxes) -> Tensor {
        let shape = self.shape();
        let axes = resolve_axes("flip", axes.into_axes(), &shape);
        let axes: Vec<usize> = axes.into_iter().filter(|&a| shape[a] > 1).collect();
        if axes.is_empty() {
            return self.clone();
        }
        self.movement(Ops::FLIP, Arg::Axes(axes))
    }

    /// Swaps two axes.
    pub fn transpose(&self, a: isize, b: isize) -> Tensor {
        let shape = self.layout_shape();
        let (a, b) = (resolve_axis("transpose", a, &shape), resolve_axis("transpose", b, &shape));
        let mut order: Vec<usize> = (0..shape.len()).collect();
        order.swap(a, b);
        self.permute(order)
    }

    /// The transpose of the last two axes (`.T` of a matrix).
    pub fn t(&self) -> Tensor {
        assert!(self.ndim() >= 2, "t: needs at least 2 dims, shape is {:?}", self.sym_shape());
        self.transpose(-2, -1)
    }

    /// Removes size-1 axes: the given ones (others are left alone, as in PyTorch), or all of
    /// them for `()`.
    pub fn squeeze(&self, axes: impl IntoAxes) -> Tensor {
        if self.is_symbolic() {
            let shape = self.sym_shape();
            let axes = resolve_axes("squeeze", axes.into_axes(), &self.layout_shape());
            let keep: Vec<Dim> = (0..shape.len())
                .filter(|i| !(shape[*i] == Dim::Const(1) && axes.contains(i)))
                .map(|i| shape[i].clone())
                .collect();
            return self.reshape_dims(&keep);
        }
        let shape = self.shape();
        let axes = resolve_axes("squeeze", axes.into_axes(), &shape);
        let keep: Vec<usize> =
            shape.iter().enumerate().filter(|(i, &d)| !(d == 1 && axes.contains(i))).map(|(_, &d)| d).collect();
        self.reshape(keep)
    }

    /// Inserts a size-1 axis at `axis` (negative counts from the end of the new shape).
    pub fn unsqueeze(&self, axis: isize) -> Tensor {
        let n = self.ndim() as isize + 1;
        let a = if axis < 0 { axis + n } else { axis };
        assert!((0..n).contains(&a), "unsqueeze: axis {axis} out of range for shape {:?}", self.sym_shape());
        if self.is_symbolic() {
            let mut shape = self.sym_shape();
            shape.insert(a as usize, Dim::Const(1));
            return self.reshape_dims(&shape);
        }
        let mut shape = self.shape();
        shape.insert(a as usize, 1);
        self.reshape(shape)
    }

    /// Flattens to 1-D.
    pub fn flatten(&self) -> Tensor {
        self.reshape([self.numel()])
    }

    /// Merges axes `start..=end` into one.
    pub fn flatten_range(&self, start: isize, end: isize) -> Tensor {
        let shape = self.shape();
        if shape.is_empty() {
            return self.reshape([1]);
        }
        let (s, e) = (resolve_axis("flatten", start, &shape), resolve_axis("flatten", end, &shape));
        assert!(s <= e, "flatten: start axis {start} is after end axis {end} for shape {shape:?}");
        let mut new: Vec<usize> = shape[..s].to_vec();
        new.push(shape[s..=e].iter().product());
        new.extend_from_slice(&shape[e + 1..]);
        self.reshape(new)
    }

    /// A copy of this tensor on `device` (lazy: copied when realized). A spread tensor is
    /// gathered; several devices joined by `,` (`"CPU,CPU:1"`) get a whole copy each.
    pub fn to(&self, device: &str) -> Tensor {
        let name = super::create::checked_device_name(device);
        if self.device() == name {
            return self.clone();
        }
        if name.contains(',') {
            return self.shard(&name.split(',').collect::<Vec<_>>(), None);
        }
        self.movement(Ops::COPY, Arg::Str(name.into()))
    }

    /// Zero-pads each axis at its end up to `shape` (`None` keeps an axis), as tinygrad's
    /// `pad_to`; panics if an axis is already longer.
    pub fn pad_to(&self, shape: &[Option<usize>]) -> Tensor {
        let have = self.shape();
        assert_eq!(shape.len(), have.len(), "pad_to: {shape:?} for shape {have:?}");
        let pads: Vec<(usize, usize)> = have
            .iter()
            .zip(shape)
            .map(|(&h, want)| {
                let w = want.unwrap_or(h);
                assert!(w >= h, "pad_to: axis of {h} cannot be padded to {w} (shape {have:?})");
                (0, w - h)
            })
            .collect();
        self.pad(&pads)
    }
    /// Keeps the first `shape[i]` elements of each axis (`None` keeps an axis), as tinygrad's
    /// `shrink_to`.
    pub fn shrink_to(&self, shape: &[Option<usize>]) -> Tensor {
        let have = self.shape();
        assert_eq!(shape.len(), have.len(), "shrink_to: {shape:?} for shape {have:?}");
        let cut: Vec<(usize, usize)> = have.iter().zip(shape).map(|(&h, want)| (0, want.unwrap_or(h))).collect();
        self.shrink(&cut)
    }
    /// Applies `layers` in order, each to the previous one's output (tinygrad's `sequential`).
    pub fn sequential(&self, layers: &[&dyn Fn(&Tensor) -> Tensor]) -> Tensor {
        layers.iter().fold(self.clone(), |x, f| f(&x))
    }
    /// Bytes of the elements (`numel * itemsize`).
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype().itemsize()
    }
    /// Laid out contiguously when realized: a view becomes a buffer of its own; a tensor that
    /// already is a whole buffer stays that buffer (use `copy` for a second one).
    pub fn contiguous(&self) -> Tensor {
        self.movement(Ops::CONTIGUOUS, Arg::None)
    }
    /// A copy in a buffer of its own (PyTorch's `clone()`: Rust's `Clone` on `Tensor` is a
    /// second handle on the same data). The gradient passes through unchanged.
    pub fn copy(&self) -> Tensor {
        if crate::schedule::existing_buffer(&self.uop()).is_some() {
            self.movement(Ops::COPY, Arg::Str(self.device().into()))
        } else {
            // A computed value or a view gets a buffer of its own when it is realized.
            self.contiguous()
        }
    }
}

/// The lengths as numbers, when none is symbolic.
fn numbers(shape: &[Dim]) -> Option<Vec<usize>> {
    shape.iter().map(Dim::as_const).collect()
}
