//! Matrix decompositions written with tensor ops, so they run lazily on every device, batch
//! over leading axes and differentiate through their own steps: `qr` (Householder) and `svd`
//! (one-sided Jacobi, all disjoint column pairs of a round at once).
//!
//! Both are loops of steps that differ only in which row or column pair they touch. That
//! choice is data — a small index buffer read by the kernel — not a constant in it, so every
//! step runs the same few compiled kernels (a 64-column `svd` compiles as much as a 4-column
//! one). Each step's result is materialized, which keeps kernels from growing with the step
//! count. Both first divide each matrix by a power of two near its largest entry (exact), so
//! tiny and huge matrices factor as well as unit-sized ones.

use super::Tensor;
use crate::uop::DType;

/// One-sided Jacobi sweeps over all column pairs. Convergence is quadratic once the columns
/// are nearly orthogonal; these counts take random and ill-conditioned matrices of up to a
/// few hundred columns to working precision.
const SWEEPS_F32: usize = 10;
const SWEEPS_F64: usize = 14;

impl Tensor {
    /// The QR decomposition of a matrix (or a batch, over leading axes): `(q, r)` with `q`
    /// `[.., m, k]` having orthonormal columns, `r` `[.., k, n]` upper triangular, `k =
    /// min(m, n)`, as `torch.linalg.qr(mode="reduced")`. Householder reflections with LAPACK's
    /// sign convention (a reflection makes its diagonal entry `-sign(x0)·‖x‖`; a column already
    /// zero below the diagonal is left as it is), so the factors equal LAPACK's. The gradient is
    /// that of these steps: PyTorch's analytic one, except at inputs with a column already zero
    /// below the diagonal (there the sub-diagonal entries get no gradient, since no reflection
    /// is made).
    pub fn qr(&self) -> (Tensor, Tensor) {
        let (m, n) = self.matrix_dims("qr");
        let (dt, dev) = (self.dtype(), self.device());
        let rows = Tensor::iota(m, DType::I32, &dev).reshape([m, 1]);
        let cols = Tensor::iota(n, DType::I32, &dev).reshape([1, n]);
        let scale = matrix_scale(self);
        let mut r = self.div(&scale);
        let mut q = rows.eq(Tensor::iota(m, DType::I32, &dev).reshape([1, m])).cast(dt);
        for i in 0..m.min(n) {
            let at = step_index(&[i], &dev).reshape([1, 1]);
            let (diag, strictly_below) = (rows.eq(&at), rows.gt(&at));
            // x: column i of r from row i down, as a column vector [.., m, 1].
            let col = r.mul(cols.eq(&at).cast(dt)).sum_keepdim(-1);
            let x = rows.ge(&at).where_(&col, 0.0);
            let x0 = diag.where_(&x, 0.0).sum_keepdim(-2);
            let below = strictly_below.where_(&x, 0.0).square().sum_keepdim(-2);
            let norm = x.square().sum_keepdim(-2).sqrt();
            let beta = x0.ge(0.0).where_(norm.neg(), &norm);
            let v = x.sub(diag.cast(dt).mul(&beta));
            // H = I - tau v vᵀ with tau = 2 / vᵀv; the identity where nothing is below the
            // diagonal (the division is kept off zero so its gradient stays finite).
            let vv = v.square().sum_keepdim(-2);
            let reflect = below.gt(0.0);
            let tau = reflect.where_(reflect.where_(&vv, 1.0).reciprocal().mul(2.0), 0.0);
            let vt = v.transpose(-1, -2);
            r = r.sub(v.mul(&tau).matmul(&vt.matmul(&r))).contiguous();
            q = q.sub(q.matmul(&v).matmul(&vt.mul(&tau))).contiguous();
        }
        let k = m.min(n);
        let r = rows.gt(&cols).where_(0.0, r.mul(&scale));
        (q.shrink_last_two((0, m), (0, k)), r.shrink_last_two((0, k), (0, n)))
    }

    /// The singular value decomposition `(u, s, v)` with `self = u · diag(s) · vᵀ`: `u`
    /// `[.., m, k]`, `s` `[.., k]` descending, `v` `[.., n, k]`, `k = min(m, n)`, as
    /// `torch.svd(some=True)` (so `v`, not `vᵀ`). Each singular pair is unique only up to a
    /// common sign; where singular values are zero their `u` columns are zero (not completed to
    /// an orthonormal basis). One-sided Jacobi with a fixed number of sweeps (10 for 32-bit and
    /// smaller floats, 14 for f64), so the graph, and a TinyJit capture of it, does not depend
    /// on the data.
    pub fn svd(&self) -> (Tensor, Tensor, Tensor) {
        let (m, n) = self.matrix_dims("svd");
        if m < n {
            let (u, s, v) = self.transpose(-1, -2).svd();
            return (v, s, u);
        }
        let (dt, dev) = (self.dtype(), self.device());
        let scale = matrix_scale(self);
        let a = self.div(&scale);
        // An even number of columns (a zero column added), so every round pairs them all.
        let n2 = n + n % 2;
        let mut w = if n2 > n { a.pad_last(n2 - n) } else { a };
        let idx = Tensor::iota(n2, DType::I32, &dev);
        let mut v = idx.reshape([n2, 1]).eq(idx.reshape([1, n2])).cast(dt);
        let h = n2 / 2;
        let sweeps = if dt == DType::F64 { SWEEPS_F64 } else { SWEEPS_F32 };
        for _ in 0..sweeps {
            for round in round_robin(n2) {
                // p: column round[b] moves to b; the pairs are (b, b + h).
                let perm = step_index(&round, &dev).reshape([1, n2]);
                let p = idx.reshape([n2, 1]).eq(&perm).cast(dt);
                let (wp, vp) = (w.matmul(&p), v.matmul(&p));
                let half = |t: &Tensor, lo: usize| t.shrink_last_two((0, t.shape()[t.ndim() - 2]), (lo, lo + h));
                let (ap, aq) = (half(&wp, 0), half(&wp, h));
                let alpha = ap.square().sum_keepdim(-2);
                let beta = aq.square().sum_keepdim(-2);
                let gamma = ap.mul(&aq).sum_keepdim(-2);
                // The rotation that makes the pair orthogonal: tan θ = 2γ·sign(d) / (|d| +
                // √(d² + 4γ²)) with d = β - α, written without dividing by γ. Every pair turns,
                // even when γ is already ~0: the angle's derivative is what keeps the
                // gradient of the converged factors right. (√ and ÷ are kept off zero, where
                // their gradients are not finite.)
                let d = beta.sub(&alpha);
                let z = d.square().add(gamma.square().mul(4.0));
                let live = z.gt(0.0);
                let root = live.where_(live.where_(&z, 1.0).sqrt(), 0.0);
                let den = d.abs().add(&root);
                let sign = d.ge(0.0).where_(1.0, -1.0);
                let t = gamma.mul(2.0).mul(&sign).div(live.where_(&den, 1.0));
                let c = t.square().add(1.0).sqrt().reciprocal();
                let s = c.mul(&t);
                let turn = |xp: &Tensor, xq: &Tensor| {
                    let np = xp.mul(&c).sub(xq.mul(&s));
                    let nq = xp.mul(&s).add(xq.mul(&c));
                    Tensor::cat(&[&np, &nq], -1).matmul(&p.t()).contiguous()
                };
                w = turn(&ap, &aq);
                v = turn(&half(&vp, 0), &half(&vp, h));
            }
        }
        // Singular values are the column norms; sort them descending and keep k = n.
        let norms = w.square().sum_axis(-2);
        let order = norms.argsort(-1, true).shrink_last((0, n));
        let s_unit = norms.gather(-1, &order).sqrt();
        let pick = |t: &Tensor| {
            let mut shape = t.shape();
            *shape.last_mut().expect("a matrix") = n;
            let index = order.unsqueeze(-2).expand(shape);
            t.gather(-1, &index)
        };
        let s_safe = s_unit.gt(0.0).where_(&s_unit, 1.0).unsqueeze(-2);
        let u = s_unit.gt(0.0).unsqueeze(-2).where_(pick(&w).div(&s_safe), 0.0);
        let v = pick(&v).shrink_last_two((0, n), (0, n));
        (u, s_unit.mul(scale.squeeze(-1)), v)
    }

    /// The last two axes `(m, n)` of a float matrix; panics naming `op` otherwise.
    fn matrix_dims(&self, op: &str) -> (usize, usize) {
        let shape = self.shape();
        assert!(
            shape.len() >= 2 && self.dtype().is_float(),
            "{op}: needs a float matrix or a batch of them, got shape {shape:?} of {:?}",
            self.dtype()
        );
        (shape[shape.len() - 2], shape[shape.len() - 1])
    }

    fn shrink_last_two(&self, a: (usize, usize), b: (usize, usize)) -> Tensor {
        let shape = self.shape();
        let nd = shape.len();
        let mut ranges: Vec<(usize, usize)> = shape.iter().map(|&d| (0, d)).collect();
        ranges[nd - 2] = a;
        ranges[nd - 1] = b;
        self.shrink(&ranges)
    }

    fn shrink_last(&self, r: (usize, usize)) -> Tensor {
        let mut ranges: Vec<(usize, usize)> = self.shape().iter().map(|&d| (0, d)).collect();
        *ranges.last_mut().expect("at least one axis") = r;
        self.shrink(&ranges)
    }

    fn pad_last(&self, extra: usize) -> Tensor {
        let mut pads = vec![(0, 0); self.ndim()];
        *pads.last_mut().expect("at least one axis") = (0, extra);
        self.pad(&pads)
    }
}

/// A power of two near each matrix's largest magnitude (shape `[.., 1, 1]`), outside the
/// gradient: dividing by it is exact, and brings the entries near 1, so their squares neither
/// underflow nor overflow (LAPACK scales the same way). 1 for a matrix of zeros or with entries
/// that are not finite.
fn matrix_scale(x: &Tensor) -> Tensor {
    let big = x.detach().abs().max_keepdim([-2isize, -1]);
    let usable = big.gt(0.0).bitand(big.isfinite());
    usable.where_(&big, 1.0).log2().floor().exp2()
}

/// Step indices as a small int32 buffer on `device`: kernels read them, so every step of a loop
/// is the same kernel.
fn step_index(values: &[usize], device: &str) -> Tensor {
    let v: Vec<i32> = values.iter().map(|&i| i32::try_from(i).expect("a matrix axis fits in i32")).collect();
    Tensor::from_slice_on(&v, [v.len()], device)
}

/// The rounds of a round-robin tournament of `n` (even) players, each a permutation whose
/// first half meets its second half position by position: every pair meets once in `n - 1`
/// rounds (the circle method: player 0 stays, the others rotate).
fn round_robin(n: usize) -> Vec<Vec<usize>> {
    let h = n / 2;
    let mut ring: Vec<usize> = (1..n).collect();
    let mut rounds = Vec::with_capacity(n.saturating_sub(1));
    for _ in 0..n.saturating_sub(1) {
        let seats: Vec<usize> = std::iter::once(0).chain(ring.iter().copied()).collect();
        // Seat j plays seat n-1-j.
        let first: Vec<usize> = (0..h).map(|j| seats[j]).collect();
        let second: Vec<usize> = (0..h).map(|j| seats[n - 1 - j]).collect();
        rounds.push(first.into_iter().chain(second).collect());
        ring.rotate_right(1);
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::round_robin;

    #[test]
    fn every_pair_meets_once() {
        for n in [2usize, 4, 6, 10] {
            let mut seen = std::collections::HashSet::new();
            for r in round_robin(n) {
                let mut sorted = r.clone();
                sorted.sort();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "round {r:?} is a permutation");
                for j in 0..n / 2 {
                    let pair = (r[j].min(r[j + n / 2]), r[j].max(r[j + n / 2]));
                    assert!(seen.insert(pair), "{pair:?} meets twice for n = {n}");
                }
            }
            assert_eq!(seen.len(), n * (n - 1) / 2, "all pairs for n = {n}");
        }
    }
}
