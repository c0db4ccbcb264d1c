//! Linear algebra built from movement ops, a multiply and a sum (one fused kernel).

use super::Tensor;

impl Tensor {
    /// Matrix product with NumPy semantics: batched and broadcast over leading axes; a 1-D
    /// operand is a vector (its axis is removed from the result).
    pub fn matmul(&self, w: &Tensor) -> Tensor {
        let (sa, sb) = (self.shape(), w.shape());
        assert!(!sa.is_empty() && !sb.is_empty(), "matmul: needs at least 1-D operands, shapes {sa:?} and {sb:?}");
        let a = if sa.len() == 1 { self.unsqueeze(0) } else { self.clone() };
        let b = if sb.len() == 1 { w.unsqueeze(-1) } else { w.clone() };
        let (ash, bsh) = (a.shape(), b.shape());
        let (n, k) = (ash[ash.len() - 2], ash[ash.len() - 1]);
        let (k2, m) = (bsh[bsh.len() - 2], bsh[bsh.len() - 1]);
        assert_eq!(k, k2, "matmul: shapes {sa:?} and {sb:?} do not match ({k} != {k2})");
        let mut a_shape = ash[..ash.len() - 2].to_vec();
        a_shape.extend([n, 1, k]);
        let mut b_shape = bsh[..bsh.len() - 2].to_vec();
        b_shape.extend([1, m, k]);
        let out = (a.reshape(a_shape) * b.t().reshape(b_shape)).sum_axis(-1);
        match (sa.len(), sb.len()) {
            (1, 1) => out.reshape([0usize; 0]),
            (1, _) => out.squeeze(-2),
            (_, 1) => out.squeeze(-1),
            _ => out,
        }
    }

    /// `self · w` for 1-D or 2-D operands (same as `matmul`).
    pub fn dot(&self, w: &Tensor) -> Tensor {
        self.matmul(w)
    }
}
