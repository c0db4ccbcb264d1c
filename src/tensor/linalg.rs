//! Linear algebra built from movement ops, a multiply and a sum (one fused kernel): matmul,
//! linear layers, einsum, diagonals.

use super::shape_args::resolve_axis;
use super::Tensor;
use crate::uop::Dim;

impl Tensor {
    /// Matrix product with NumPy semantics: batched and broadcast over leading axes; a 1-D
    /// operand is a vector (its axis is removed from the result).
    pub fn matmul(&self, w: &Tensor) -> Tensor {
        if self.is_symbolic() || w.is_symbolic() {
            return self.matmul_symbolic(w);
        }
        let (sa, sb) = (self.shape(), w.shape());
        assert!(!sa.is_empty() && !sb.is_empty(), "matmul: needs at least 1-D operands, shapes {sa:?} and {sb:?}");
        let a = if sa.len() == 1 { self.unsqueeze(0) } else { self.clone() };
        let b = if sb.len() == 1 { w.unsqueeze(-1) } else { w.clone() };
        let (ash, bsh) = (a.shape(), b.shape());
        let (n, k) = (ash[ash.len() - 2], ash[ash.len() - 1]);
        let (k2, m) = (bsh[bsh.len() - 2], bsh[bsh.len() - 1]);
        assert_eq!(k, k2, "matmul: shapes {sa:?} and {sb:?} cannot be multiplied ({k} != {k2})");
        let (ba, bb) = (&ash[..ash.len() - 2], &bsh[..bsh.len() - 2]);
        let batch_ok = ba.iter().rev().zip(bb.iter().rev()).all(|(&x, &y)| x == y || x == 1 || y == 1);
        assert!(batch_ok, "matmul: batch dims of shapes {sa:?} and {sb:?} cannot be broadcast");
        // (On a SIMD CPU the scheduler reads a large `b` from packed panels: `schedule/pack_panels.rs`.)
        let out = {
            let mut a_shape = ba.to_vec();
            a_shape.extend([n, 1, k]);
            let mut b_shape = bb.to_vec();
            b_shape.extend([1, m, k]);
            (a.reshape(a_shape) * b.t().reshape(b_shape)).sum_axis(-1)
        };
        match (sa.len(), sb.len()) {
            (1, 1) => out.reshape([0usize; 0]),
            (1, _) => out.squeeze(-2),
            (_, 1) => out.squeeze(-1),
            _ => out,
        }
    }

    /// `matmul` of operands of at least 2 axes, some lengths symbolic (attention over a variable
    /// number of keys): the same broadcast multiply and sum.
    fn matmul_symbolic(&self, w: &Tensor) -> Tensor {
        let (sa, sb) = (self.sym_shape(), w.sym_shape());
        assert!(sa.len() >= 2 && sb.len() >= 2, "matmul: symbolic operands need 2 axes, shapes {sa:?} and {sb:?}");
        let (n, k) = (sa[sa.len() - 2].clone(), sa[sa.len() - 1].clone());
        let (k2, m) = (sb[sb.len() - 2].clone(), sb[sb.len() - 1].clone());
        assert_eq!(k, k2, "matmul: shapes {sa:?} and {sb:?} cannot be multiplied ({k:?} != {k2:?})");
        let mut a_shape = sa[..sa.len() - 2].to_vec();
        a_shape.extend([n, Dim::Const(1), k.clone()]);
        let mut b_shape = sb[..sb.len() - 2].to_vec();
        b_shape.extend([Dim::Const(1), m, k]);
        (self.reshape_dims(&a_shape) * w.t().reshape_dims(&b_shape)).sum_axis(-1)
    }

    /// Inner product of two 1-D tensors (a 0-d result), as `torch.dot`.
    pub fn dot(&self, w: &Tensor) -> Tensor {
        let (sa, sb) = (self.shape(), w.shape());
        assert!(
            sa.len() == 1 && sb.len() == 1 && sa == sb,
            "dot: needs two 1-D tensors of one size, shapes {sa:?} and {sb:?}"
        );
        self.matmul(w)
    }

    /// A linear layer in PyTorch's layout: `self @ weight.T + bias`, weight `(out, in)` (or
    /// `(in,)`), bias `(out,)`.
    pub fn linear(&self, weight: &Tensor, bias: Option<&Tensor>) -> Tensor {
        let ws = weight.shape();
        assert!(matches!(ws.len(), 1 | 2), "linear: weight must be 1-D or 2-D, shape is {ws:?}");
        let wt = if ws.len() == 2 { weight.t() } else { weight.clone() };
        let out = self.matmul(&wt);
        match bias {
            Some(b) => out + b,
            None => out,
        }
    }

    /// The diagonal of the matrices over axes `a` and `b` (both of one size), as a new last
    /// axis (`torch.diagonal(x, 0, a, b)`): a flat view read every `n + 1` elements.
    pub fn diagonal(&self, a: isize, b: isize) -> Tensor {
        let shape = self.shape();
        let (a, b) = (resolve_axis("diagonal", a, &shape), resolve_axis("diagonal", b, &shape));
        assert!(a != b, "diagonal: axes must differ, got {a} and {b} for shape {shape:?}");
        let n = shape[a];
        assert_eq!(n, shape[b], "diagonal: axes {a} and {b} of shape {shape:?} differ in size");
        let rest: Vec<usize> = (0..shape.len()).filter(|&i| i != a && i != b).collect();
        let order: Vec<usize> = rest.iter().copied().chain([a, b]).collect();
        let lead: Vec<usize> = rest.iter().map(|&i| shape[i]).collect();
        let with = |tail: &[usize]| lead.iter().chain(tail).copied().collect::<Vec<usize>>();
        let flat = self.permute(order).reshape(with(&[n * n]));
        let pads: Vec<(usize, usize)> = lead.iter().map(|_| (0, 0)).chain([(0, n)]).collect();
        let rows = flat.pad(&pads).reshape(with(&[n, n + 1]));
        let cut: Vec<(usize, usize)> = lead.iter().map(|&d| (0, d)).chain([(0, n), (0, 1)]).collect();
        rows.shrink(&cut).reshape(with(&[n]))
    }

    /// Einstein summation over `operands` (`"ij,jk->ik"`, `"bij,bjk->bik"`, `"i,i->"`,
    /// `"ii->i"`, `"...ij->...ji"`, implicit output `"ij,jk"`). Operands are aligned on one
    /// axis per letter (repeated letters in one operand take the diagonal), multiplied, and
    /// summed over the letters not in the output: one kernel.
    pub fn einsum(formula: &str, operands: &[&Tensor]) -> Tensor {
        let f: String = formula.chars().filter(|c| !c.is_whitespace()).collect();
        let (lhs, rhs) = match f.split_once("->") {
            Some((l, r)) => (l.to_string(), Some(r.to_string())),
            None => (f.clone(), None),
        };
        let mut inputs: Vec<String> = lhs.split(',').map(str::to_string).collect();
        assert_eq!(
            inputs.len(),
            operands.len(),
            "einsum: {formula:?} names {} operands, {} given",
            inputs.len(),
            operands.len()
        );
        // "..." stands for the same unnamed letters in every operand (right-aligned).
        let spare: Vec<char> = ('A'..='Z').chain('a'..='z').filter(|c| !f.contains(*c)).collect();
        let mut ell = 0;
        for (s, x) in inputs.iter_mut().zip(operands) {
            if let Some(pos) = s.find("...") {
                let named = s.len() - 3;
                assert!(x.ndim() >= named, "einsum: {s:?} has more letters than operand shape {:?}", x.shape());
                let cnt = x.ndim() - named;
                ell = ell.max(cnt);
                let fill: String = spare[spare.len() - cnt..].iter().collect();
                s.replace_range(pos..pos + 3, &fill);
            }
        }
        let ell_str: String = spare[spare.len() - ell..].iter().collect();
        let output: String = match rhs {
            Some(r) => r.replace("...", &ell_str),
            None => {
                let all: String = inputs.concat();
                let mut once: Vec<char> =
                    all.chars().filter(|c| all.matches(*c).count() == 1 && !ell_str.contains(*c)).collect();
                once.sort_unstable();
                ell_str.chars().chain(once).collect()
            }
        };
        // Size of each letter (size-1 axes broadcast).
        let mut letters: Vec<(char, usize)> = Vec::new();
        for (s, x) in inputs.iter().zip(operands) {
            let shape = x.shape();
            assert_eq!(s.chars().count(), shape.len(), "einsum: {s:?} does not fit operand of shape {shape:?}");
            for (c, &d) in s.chars().zip(&shape) {
                assert!(c.is_ascii_alphabetic(), "einsum: invalid subscript {c:?} in {formula:?}");
                match letters.iter_mut().find(|(l, _)| *l == c) {
                    Some((_, size)) if *size == d || d == 1 => {}
                    Some((_, size)) if *size == 1 => *size = d,
                    Some((_, size)) => panic!("einsum: letter {c:?} has sizes {size} and {d} in {formula:?}"),
                    None => letters.push((c, d)),
                }
            }
        }
        for c in output.chars() {
            assert!(
                letters.iter().any(|(l, _)| *l == c),
                "einsum: output letter {c:?} is not in any input of {formula:?}"
            );
            assert_eq!(output.matches(c).count(), 1, "einsum: output letter {c:?} repeats in {formula:?}");
        }
        letters.sort_unstable();
        let full: Vec<usize> = letters.iter().map(|&(_, d)| d).collect();
        let mut prod: Option<Tensor> = None;
        for (s, x) in inputs.iter().zip(operands) {
            let (mut x, mut s): (Tensor, Vec<char>) = ((*x).clone(), s.chars().collect());
            // A repeated letter within one operand: keep its diagonal.
            while let Some((i, j)) = repeated(&s) {
                x = x.diagonal(i as isize, j as isize);
                let c = s[i];
                s.remove(j);
                s.remove(i);
                s.push(c);
            }
            let mut order: Vec<usize> = (0..s.len()).collect();
            order.sort_by_key(|&i| s[i]);
            let xs = x.shape();
            let aligned: Vec<usize> =
                letters.iter().map(|(l, _)| s.iter().position(|c| c == l).map_or(1, |p| xs[p])).collect();
            let x = x.permute(order).reshape(aligned).expand(full.clone());
            prod = Some(match prod {
                None => x,
                Some(p) => p * x,
            });
        }
        let prod = prod.expect("einsum: needs at least one operand");
        let summed: Vec<isize> =
            (0..letters.len()).filter(|&i| !output.contains(letters[i].0)).map(|i| i as isize).collect();
        let kept: Vec<char> = letters.iter().map(|&(l, _)| l).filter(|l| output.contains(*l)).collect();
        let r = if summed.is_empty() { prod } else { prod.sum_axis(summed) };
        let order: Vec<usize> = output.chars().map(|c| kept.iter().position(|&l| l == c).unwrap_or(0)).collect();
        r.permute(order)
    }
}

/// The first pair of positions holding the same letter.
fn repeated(s: &[char]) -> Option<(usize, usize)> {
    (0..s.len()).find_map(|i| (i + 1..s.len()).find(|&j| s[j] == s[i]).map(|j| (i, j)))
}
