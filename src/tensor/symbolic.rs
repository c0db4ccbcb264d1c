//! Movement ops with symbolic offsets and lengths: a window at a position that is a bound
//! [`Variable`](crate::Variable), or of a variable length, as a KV cache is written and read.
//! The kernel takes the values as arguments (and loops to symbolic bounds), so it is compiled
//! once for every value in the variables' ranges.

use super::shape_args::resolve_axis;
use super::Tensor;
use crate::uop::{Arg, Dim, Ops, UOp};

impl Tensor {
    /// Keeps `start..end` of each axis; starts and ends may be symbolic (`(pos, pos + 1)`, one
    /// row at a variable position; `(0, pos + 1)`, a variable number of rows). Panics when a
    /// window can leave the axis for some value of its variables.
    pub fn shrink_dims(&self, ranges: &[(Dim, Dim)]) -> Tensor {
        if let Some(concrete) = all_const(ranges) {
            return self.shrink(&concrete);
        }
        let u = self.uop();
        Tensor::from_uop(UOp::new(Ops::SHRINK, u.dtype(), vec![u], Arg::DimPairs(ranges.to_vec())))
    }

    /// Pads each axis with `(before, after)` zeros; amounts may be symbolic (for example
    /// `(pos, max - 1 - pos)` around one row).
    pub fn pad_dims(&self, pads: &[(Dim, Dim)]) -> Tensor {
        if let Some(concrete) = all_const(pads) {
            return self.pad(&concrete);
        }
        let u = self.uop();
        Tensor::from_uop(UOp::new(Ops::PAD, u.dtype(), vec![u], Arg::DimPairs(pads.to_vec())))
    }

    /// `length` elements of `axis` starting at `start` (PyTorch's `narrow`); `start` may be a
    /// bound variable.
    pub fn narrow(&self, axis: isize, start: impl Into<Dim>, length: usize) -> Tensor {
        let shape = self.shape();
        let axis = resolve_axis("narrow", axis, &shape);
        let start = start.into();
        let ranges: Vec<(Dim, Dim)> = shape
            .iter()
            .enumerate()
            .map(|(i, &d)| if i == axis { (start.clone(), &start + length) } else { (Dim::Const(0), Dim::Const(d)) })
            .collect();
        self.shrink_dims(&ranges)
    }
}

impl Tensor {
    /// `[0, 1, ..., n-1]` as int32 for a length that may be symbolic (`pos + 1` keys): the
    /// iota of the largest length, shrunk to `n`.
    pub fn arange_dim(n: impl Into<Dim>) -> Tensor {
        let n = n.into();
        if let Some(c) = n.as_const() {
            return Tensor::arange(c);
        }
        Tensor::iota(n.max(), crate::DType::I32, &super::create::default_device()).shrink_dims(&[(Dim::Const(0), n)])
    }
}

fn all_const(pairs: &[(Dim, Dim)]) -> Option<Vec<(usize, usize)>> {
    pairs.iter().map(|(a, b)| Some((a.as_const()?, b.as_const()?))).collect()
}
