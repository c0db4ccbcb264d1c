//! The reference of the decomposition checks (`Op::Decomp`): what a correct `qr` or `svd` of
//! each matrix determines whatever its sign choices and however ill-conditioned the matrix —
//! the matrix again from the product of the factors, the identity from the Gram matrix of an
//! orthogonal factor, and the singular values (perturbed by at most the perturbation's norm,
//! so well-conditioned always), these from a plain f64 Jacobi iteration run to convergence.
//!
//! Bounds are backward-error bounds: a few dozen f32 ulps per step of the factorization
//! (ferrograd's `svd` runs a fixed 10 sweeps of `n - 1` rounds), relative to the matrix's
//! Frobenius norm, plus the input's own error bound. They catch kernels that compute something
//! else; the fixture suite checks the factors themselves against PyTorch.

use super::{eps, finish, Arr, E};
use crate::graph::{Decomp, Dt};

/// Sweeps of ferrograd's f32 `svd` (its `SWEEPS_F32`): the rotations each column meets.
const SWEEPS: f64 = 10.0;

/// f32 ulps of backward error per rotation or reflection a column meets.
const ULPS_PER_STEP: f64 = 4.0;

/// Larger entries are not compared: the checks' own f32 products (`u · diag(s) · vᵀ`) could
/// overflow. (The factorizations scale each matrix by a power of two first, so their squares
/// do not.)
const HUGE: f64 = 1e31;

/// The check `what` of every matrix in the last two axes of `a`.
pub fn decomp(a: &Arr, what: Decomp, shape: &[usize]) -> Arr {
    let nd = a.shape.len();
    let (m, n) = (a.shape[nd - 2], a.shape[nd - 1]);
    let data = a.data.chunks(m * n).flat_map(|mat| one(mat, m, n, what)).collect();
    Arr { shape: shape.to_vec(), dt: Dt::F32, data }
}

fn one(mat: &[E], m: usize, n: usize, what: Decomp) -> Vec<E> {
    let k = m.min(n);
    let count = match what {
        Decomp::QrProduct | Decomp::SvdProduct => m * n,
        Decomp::QrGram | Decomp::SvdGram => k * k,
        Decomp::SvdValues => k,
    };
    if mat.iter().any(|x| x.unsure || !x.v.is_finite() || x.v.abs() > HUGE) {
        return vec![E::unsure(); count];
    }
    let fro = mat.iter().map(|x| x.v * x.v).sum::<f64>().sqrt();
    let input_err = mat.iter().map(|x| x.e * x.e).sum::<f64>().sqrt();
    // Steps each column takes part in: k reflections (qr) or every round of every sweep (svd).
    let steps = match what {
        Decomp::QrProduct | Decomp::QrGram => k as f64,
        _ => SWEEPS * (m.max(n) + 1) as f64,
    } + (m + n) as f64;
    let rel = ULPS_PER_STEP * steps * eps(Dt::F32);
    // Squares of entries below ~1e-19 are subnormal in f32: absolute slack for them.
    let floor = 1e-18 * (m * n) as f64;
    match what {
        Decomp::QrProduct | Decomp::SvdProduct => {
            mat.iter().map(|x| finish(x.v, x.e + rel * (fro + input_err) + floor, Dt::F32, false)).collect()
        }
        Decomp::QrGram | Decomp::SvdGram => {
            (0..k * k).map(|i| finish(if i / k == i % k { 1.0 } else { 0.0 }, rel, Dt::F32, false)).collect()
        }
        Decomp::SvdValues => {
            let values: Vec<f64> = mat.iter().map(|x| x.v).collect();
            singular_values(&values, m, n)
                .into_iter()
                .map(|s| finish(s, input_err + rel * fro + floor, Dt::F32, false))
                .collect()
        }
    }
}

/// The `min(m, n)` singular values of the row-major `m × n` matrix `a`, descending: one-sided
/// Jacobi in f64, sweeping until every column pair is orthogonal to working precision (the
/// column norms are then the singular values, and `n - k` of them zero).
fn singular_values(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut cols: Vec<Vec<f64>> = (0..n).map(|j| (0..m).map(|i| a[i * n + j]).collect()).collect();
    let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>();
    for _ in 0..100 {
        let mut turned = false;
        for p in 0..n {
            for q in p + 1..n {
                let (alpha, beta, gamma) = (dot(&cols[p], &cols[p]), dot(&cols[q], &cols[q]), dot(&cols[p], &cols[q]));
                if gamma == 0.0 || gamma.abs() <= 1e-15 * (alpha * beta).sqrt() {
                    continue;
                }
                turned = true;
                // tan θ is the smaller root of t² + 2ζt - 1 = 0, which zeroes the pair's dot.
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                let (left, right) = cols.split_at_mut(q);
                for (x, y) in left[p].iter_mut().zip(right[0].iter_mut()) {
                    (*x, *y) = (c * *x - s * *y, s * *x + c * *y);
                }
            }
        }
        if !turned {
            break;
        }
    }
    let mut s: Vec<f64> = cols.iter().map(|c| dot(c, c).sqrt()).collect();
    s.sort_by(|x, y| y.total_cmp(x));
    s.truncate(m.min(n));
    s
}

#[cfg(test)]
mod tests {
    use super::singular_values;

    #[test]
    fn known_singular_values() {
        // diag(3, 1) rotated on both sides keeps its singular values; rank one [1 2; 2 4] has
        // 5 and 0; a 2×3 matrix [[3, 0, 4], [0, 5, 0]] has 5 and 5.
        let (c, s) = (0.6, 0.8);
        let a = [3.0 * c, -s, 3.0 * s, c];
        let got = singular_values(&a, 2, 2);
        assert!((got[0] - 3.0).abs() < 1e-12 && (got[1] - 1.0).abs() < 1e-12, "{got:?}");
        let got = singular_values(&[1.0, 2.0, 2.0, 4.0], 2, 2);
        assert!((got[0] - 5.0).abs() < 1e-12 && got[1].abs() < 1e-7, "{got:?}");
        let got = singular_values(&[3.0, 0.0, 4.0, 0.0, 5.0, 0.0], 2, 3);
        assert!((got[0] - 5.0).abs() < 1e-12 && (got[1] - 5.0).abs() < 1e-12, "{got:?}");
    }
}
