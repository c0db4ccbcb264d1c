//! Sorting: `sort`, `argsort`, `topk`, by ranking. Each element's rank along the axis is the
//! number of elements that go before it (smaller ones, or equal ones at a smaller index: a
//! stable sort); the index at position `r` is the one whose rank is `r`; the values are a
//! `gather` of those indices, so the gradient of the values scatters back through the
//! permutation. Ranking is O(n²) comparisons per row, in two fused reduce kernels, with no
//! data-dependent control flow (what a GPU wants; tinygrad uses a bitonic network).
//!
//! NaN sorts after every number ascending and first descending, as in PyTorch.

use super::Tensor;
use crate::uop::DType;

impl Tensor {
    /// The sorted values along `axis` and their indices (int64) into the input; stable (equal
    /// elements keep their order, as `torch.sort(stable=True)`).
    pub fn sort(&self, axis: isize, descending: bool) -> (Tensor, Tensor) {
        let n = self.axis_len(axis, "sort");
        self.top(n, axis, descending)
    }
    /// The indices (int64) that sort the tensor along `axis` (stable).
    pub fn argsort(&self, axis: isize, descending: bool) -> Tensor {
        self.sort(axis, descending).1
    }
    /// The `k` largest (or, with `largest = false`, smallest) elements along `axis`, in order,
    /// and their indices (int64); ties keep the lower index first. Panics when `k` exceeds the
    /// axis. (The result is always sorted; `torch.topk`'s `sorted=False` allows any order.)
    pub fn topk(&self, k: usize, axis: isize, largest: bool) -> (Tensor, Tensor) {
        let n = self.axis_len(axis, "topk");
        assert!(k <= n, "topk: k = {k} is more than the {n} elements along axis {axis} of shape {:?}", self.shape());
        self.top(k, axis, largest)
    }

    fn axis_len(&self, axis: isize, name: &str) -> usize {
        if self.ndim() == 0 {
            super::shape_args::resolve_axis(name, axis, &[1]);
            return 1;
        }
        self.shape()[super::shape_args::resolve_axis(name, axis, &self.shape())]
    }

    /// The first `k` positions of the sorted order along `axis`: values and indices.
    fn top(&self, k: usize, axis: isize, descending: bool) -> (Tensor, Tensor) {
        let x = if self.dtype().is_bool() { self.cast(DType::I32) } else { self.clone() };
        let [values, indices] = x.along_last(axis, "sort", |x| {
            let n = *x.shape().last().expect("along_last gives at least one axis");
            let dev = x.device();
            let (xi, xj) = (x.detach().unsqueeze(-1), x.detach().unsqueeze(-2));
            let pos = Tensor::iota(n, DType::I32, &dev);
            let before = pos.reshape([1, n]).lt(pos.reshape([n, 1]));
            let (goes_first, same) = order(&xi, &xj, descending);
            // rank[i] = #{j : x_j goes before x_i}.
            let rank = goes_first.bitor(same.bitand(&before)).cast(DType::I32).sum_axis(-1);
            let slot = Tensor::iota(k, DType::I32, &dev).reshape([k, 1]);
            let hit = rank.unsqueeze(-2).eq(&slot);
            let index = hit.where_(Tensor::iota(n, DType::I64, &dev), 0).sum_axis(-1);
            [x.gather(-1, &index), index]
        });
        let values = if self.dtype().is_bool() { values.cast(DType::BOOL) } else { values };
        (values, indices)
    }
}

/// For `xj` (broadcast along rows) against `xi`: whether `x_j` goes strictly before `x_i` in
/// the order, and whether they are equal (NaN equals NaN).
fn order(xi: &Tensor, xj: &Tensor, descending: bool) -> (Tensor, Tensor) {
    let (first, same) = (if descending { xj.gt(xi) } else { xj.lt(xi) }, xj.eq(xi));
    if !xi.dtype().is_float() {
        return (first, same);
    }
    let (ni, nj) = (xi.isnan(), xj.isnan());
    // NaN is the largest: after everything ascending, before everything descending.
    let nan_first = if descending { nj.bitand(ni.logical_not()) } else { ni.bitand(nj.logical_not()) };
    (first.bitor(nan_first), same.bitor(ni.bitand(nj)))
}
