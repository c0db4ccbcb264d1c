//! Selections: sliding windows along one axis (`unfold`), diagonals with an offset (`diag`,
//! `diagonal_offset`), max pooling with the indices of the maxima and its inverse
//! (`max_pool2d_with_indices`, `max_unpool2d`), and the two ops whose output shape depends on
//! the data (`masked_select`, `nonzero`): they realize what the shape depends on (the mask)
//! before building their result, so they return `Result` (inside a TinyJit capture, an `Err`: a read).

use super::pool::spatial;
use super::shape_args::resolve_axis;
use super::{PoolOpts, Tensor};
use crate::error::Result;
use crate::uop::DType;

impl Tensor {
    /// Windows of `size` elements every `step` along `axis` (as `Tensor.unfold`): the axis
    /// becomes the window count `(n - size) / step + 1` and a new last axis holds each window.
    pub fn unfold(&self, axis: isize, size: usize, step: usize) -> Tensor {
        let shape = self.shape();
        let (ax, n) = if shape.is_empty() {
            (0, 1)
        } else {
            let a = resolve_axis("unfold", axis, &shape);
            (a, shape[a])
        };
        assert!(step >= 1, "unfold: step must be at least 1, got {step}");
        assert!(
            size >= 1 && size <= n,
            "unfold: size {size} does not fit the {n} elements of axis {axis} of shape {shape:?}"
        );
        if shape.is_empty() {
            return self.reshape([1]);
        }
        let last = shape.len() - 1;
        let w = self.transpose(ax as isize, -1).pool_windows(&[size], &[step], &[1]);
        w.transpose(ax as isize, last as isize)
    }

    /// For a 1-D tensor, the square matrix with it on diagonal `offset` (above the main one
    /// for `offset > 0`); for a 2-D tensor, its diagonal `offset` (as `torch.diag`).
    pub fn diag(&self, offset: isize) -> Tensor {
        match self.ndim() {
            1 => {
                let n = self.shape()[0];
                let k = offset.unsigned_abs();
                let i = Tensor::iota(n, DType::I32, &self.device());
                let eye = i.reshape([n, 1]).eq(i.reshape([1, n]));
                let m = eye.where_(self.unsqueeze(-1), 0.0).cast(self.dtype());
                if offset >= 0 {
                    m.pad(&[(0, k), (k, 0)])
                } else {
                    m.pad(&[(k, 0), (0, k)])
                }
            }
            2 => self.diagonal_offset(offset, 0, 1),
            _ => panic!("diag: input must be 1-D or 2-D, shape is {:?}", self.shape()),
        }
    }

    /// Diagonal `offset` of the matrices over axes `a` and `b` (any sizes), as a new last axis
    /// (as `torch.diagonal(x, offset, a, b)`); empty when the offset is past the matrix.
    pub fn diagonal_offset(&self, offset: isize, a: isize, b: isize) -> Tensor {
        let shape = self.shape();
        let (a, b) = (resolve_axis("diagonal", a, &shape), resolve_axis("diagonal", b, &shape));
        assert!(a != b, "diagonal: axes must differ, got {a} and {b} for shape {shape:?}");
        let rest: Vec<usize> = (0..shape.len()).filter(|&i| i != a && i != b).collect();
        let order: Vec<usize> = rest.iter().copied().chain([a, b]).collect();
        let x = self.permute(order);
        let (rows, cols) = (shape[a], shape[b]);
        let (r0, c0) = if offset >= 0 { (0, offset as usize) } else { (offset.unsigned_abs(), 0) };
        let len = rows.saturating_sub(r0).min(cols.saturating_sub(c0));
        let mut cut: Vec<(usize, usize)> = rest.iter().map(|&i| (0, shape[i])).collect();
        if len == 0 {
            cut.extend([(0, 0), (0, 0)]);
            return x.shrink(&cut).sum_axis(-1);
        }
        cut.extend([(r0, r0 + len), (c0, c0 + len)]);
        let square = x.shrink(&cut);
        let n = square.ndim();
        square.diagonal(n as isize - 2, n as isize - 1)
    }

    /// 2-D max pooling and, for each maximum, its index into the flattened `H * W` input
    /// plane (int64; the first maximum of a window, NaN counting as the largest, as PyTorch).
    pub fn max_pool2d_with_indices(&self, kernel: impl super::IntoSpatial, opts: &PoolOpts) -> (Tensor, Tensor) {
        let k = spatial("max_pool2d", "kernel", &kernel.into_spatial(), 2);
        assert!(matches!(self.ndim(), 3 | 4), "max_pool2d: input must be 3-D or 4-D, shape is {:?}", self.shape());
        let shape = self.shape();
        let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let g = self.pool_geometry("max_pool2d", k, opts);
        let values = self.windows(&g, &g.pads, true).flatten_range(-2, -1);
        let plane = Tensor::iota(h * w, DType::I64, &self.device()).reshape([h, w]);
        let index = plane.windows(&g, &g.pads, true).flatten_range(-2, -1);
        let taps = g.k[0] * g.k[1];
        let best = values.max_keepdim(-1);
        let wins = if self.dtype().is_float() {
            values.eq(&best).bitor(values.isnan().bitand(best.isnan()))
        } else {
            values.eq(&best)
        };
        let pos = Tensor::iota(taps, DType::I32, &self.device());
        let first = wins.where_(&pos, taps as i64).min_keepdim(-1);
        let picked = pos.eq(&first).where_(&index, 0).sum_axis(-1);
        (values.max_axis(-1), picked)
    }

    /// The inverse of `max_pool2d_with_indices`: an input-shaped plane of zeros with each
    /// pooled value put back at its index (as `F.max_unpool2d`). `opts` gives the pooling's
    /// stride and padding, each per axis or one for both (dilation and ceil mode do not apply);
    /// `output_size` `(H, W)` defaults to `(in - 1) * stride - 2 * padding + kernel` per axis.
    pub fn max_unpool2d(
        &self,
        indices: &Tensor,
        kernel: impl super::IntoSpatial,
        opts: &PoolOpts,
        output_size: Option<(usize, usize)>,
    ) -> Tensor {
        let k = spatial("max_unpool2d", "kernel", &kernel.into_spatial(), 2);
        let stride =
            if opts.stride.is_empty() { k.clone() } else { spatial("max_unpool2d", "stride", &opts.stride, 2) };
        let pad = opts.padding.resolve("max_unpool2d", 2);
        assert!(
            opts.dilation.iter().all(|&d| d == 1) && !opts.ceil_mode,
            "max_unpool2d: takes a stride and padding only (dilation {:?}, ceil_mode {})",
            opts.dilation,
            opts.ceil_mode
        );
        let shape = self.shape();
        assert!(matches!(shape.len(), 3 | 4), "max_unpool2d: input must be 3-D or 4-D, shape is {shape:?}");
        assert_eq!(shape, indices.shape(), "max_unpool2d: indices must have the input's shape");
        let (ih, iw) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let default_size = |axis: usize, n: usize| {
            let full = (n.max(1) - 1) * stride[axis] + k[axis];
            let (b, a) = pad[axis];
            assert!(
                full > b + a,
                "max_unpool2d: padding {:?} leaves no output on axis {axis} (input {shape:?})",
                pad[axis]
            );
            full - b - a
        };
        let (oh, ow) = output_size.unwrap_or_else(|| (default_size(0, ih), default_size(1, iw)));
        let lead = &shape[..shape.len() - 2];
        let flat: Vec<usize> = lead.iter().copied().chain([ih * iw]).collect();
        let out_flat: Vec<usize> = lead.iter().copied().chain([oh * ow]).collect();
        let out_shape: Vec<usize> = lead.iter().copied().chain([oh, ow]).collect();
        let zeros =
            Tensor::full_on(out_flat, crate::uop::ConstValue::Int(0).cast(self.dtype()), self.dtype(), &self.device());
        let index = indices.reshape(flat.clone());
        let value = zeros.scatter(-1, &index, &self.reshape(flat)).reshape(out_shape);
        // Each pooled value (also one that won several overlapping windows) gets the gradient of
        // the place it went to, as PyTorch's.
        let shape_in = shape.clone();
        super::grad::with_backward(value, &[self], move |grad, _| {
            let g = grad.reshape(grad.shape()[..grad.ndim() - 2].iter().copied().chain([oh * ow]).collect::<Vec<_>>());
            vec![g.gather(-1, &index).reshape(shape_in.clone())]
        })
    }

    /// The elements where `mask` (broadcast to this shape) is true, in order, as a 1-D tensor.
    /// Realizes the mask (the result's length depends on it); the gradient reaches the
    /// selected elements.
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        let shape = super::elementwise::broadcast_shape("masked_select", &self.shape(), &mask.shape());
        let picked: Vec<i64> = mask
            .broadcast_to(&shape)
            .ne(0)
            .cast(DType::I32)
            .to_vec::<i32>()?
            .iter()
            .enumerate()
            .filter(|(_, &m)| m != 0)
            .map(|(i, _)| i as i64)
            .collect();
        let n = picked.len();
        let index = Tensor::from_slice_on(&picked, [n], &self.device());
        Ok(self.broadcast_to(&shape).flatten().gather(0, &index))
    }

    /// The indices of the nonzero elements, one row of `ndim` int64 coordinates each, in
    /// row-major order (as `torch.nonzero`). Realizes the tensor.
    pub fn nonzero(&self) -> Result<Tensor> {
        let shape = self.shape();
        let flags = self.ne(0).cast(DType::I32).to_vec::<i32>()?;
        let mut coords: Vec<i64> = Vec::new();
        let mut count = 0;
        for (flat, _) in flags.iter().enumerate().filter(|(_, &f)| f != 0) {
            let mut rest = flat;
            let mut row = vec![0i64; shape.len()];
            for (d, &size) in shape.iter().enumerate().rev() {
                row[d] = (rest % size) as i64;
                rest /= size;
            }
            coords.extend(row);
            count += 1;
        }
        Ok(Tensor::from_slice_on(&coords, [count, shape.len()], &self.device()))
    }
}
