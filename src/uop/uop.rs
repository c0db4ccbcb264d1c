//! Building nodes: `UOp::new` (which infers each new node's shape, device and value bounds),
//! the kernel-level builders, rebuilding with other sources, and the operators on index math.
//! The node type and its accessors are in `node.rs`.

use super::dtype::{ConstValue, DType};
use super::node::Derived;
use super::node::{Arg, Dim, FxHashMap, UOp};
use super::ops::{AxisType, Ops};

impl UOp {
    /// Builds (or finds) the node `(op, dtype, src, arg)`. Shape, device and bounds are inferred
    /// when the node is new; an invalid combination panics naming the op and shapes.
    pub fn new(op: Ops, dtype: DType, src: Vec<UOp>, arg: Arg) -> UOp {
        UOp::intern(op, dtype, src, arg, |src, arg| {
            let (shape, sym_shape) = match super::shape::infer_sym_shape(op, dtype, src, arg) {
                Some(dims) if dims.iter().any(|d| d.as_const().is_none()) => {
                    (Some(dims.iter().map(Dim::max).collect()), Some(dims.into_boxed_slice()))
                }
                Some(dims) => (Some(dims.iter().map(Dim::max).collect()), None),
                None => (super::shape::infer_shape(op, dtype, src, arg).map(Vec::into_boxed_slice), None),
            };
            Derived {
                shape,
                sym_shape,
                device: super::shape::infer_device(op, src, arg),
                bounds: super::range::infer_bounds(op, dtype, src, arg),
            }
        })
    }

    /// Same op, dtype and arg with other sources.
    pub fn with_src(&self, src: Vec<UOp>) -> UOp {
        UOp::new(self.op(), self.dtype(), src, self.arg().clone())
    }
    pub fn with_arg(&self, arg: Arg) -> UOp {
        UOp::new(self.op(), self.dtype(), self.src().to_vec(), arg)
    }

    // ------------------------------------------------------------ kernel-level builders

    /// A kernel-level constant (no device source).
    pub fn cnst(dtype: DType, v: ConstValue) -> UOp {
        UOp::new(Ops::CONST, dtype, vec![], Arg::Const(v.cast(dtype)))
    }
    pub fn int(dtype: DType, v: i64) -> UOp {
        UOp::cnst(dtype, ConstValue::Int(v))
    }
    pub fn float(dtype: DType, v: f64) -> UOp {
        UOp::cnst(dtype, ConstValue::Float(v))
    }
    pub fn bool(v: bool) -> UOp {
        UOp::cnst(DType::BOOL, ConstValue::Bool(v))
    }
    /// A constant of this node's dtype.
    pub fn const_like(&self, v: ConstValue) -> UOp {
        UOp::cnst(self.dtype(), v)
    }
    pub fn range(size: UOp, id: u32, kind: AxisType) -> UOp {
        UOp::new(Ops::RANGE, size.dtype(), vec![size], Arg::Range(id, kind))
    }
    /// An elementwise op; the dtype is inferred (bool for comparisons, the value dtype for
    /// WHERE, the first source's otherwise).
    pub fn alu(op: Ops, src: Vec<UOp>) -> UOp {
        let dtype = if op.is_comparison() {
            DType::BOOL.vec(src[0].dtype().count)
        } else if op == Ops::WHERE {
            src[1].dtype()
        } else {
            src[0].dtype()
        };
        UOp::new(op, dtype, src, Arg::None)
    }
    pub fn cast(&self, dtype: DType) -> UOp {
        if self.dtype() == dtype {
            return self.clone();
        }
        UOp::new(Ops::CAST, dtype, vec![self.clone()], Arg::None)
    }
    pub fn where_(&self, t: &UOp, f: &UOp) -> UOp {
        UOp::alu(Ops::WHERE, vec![self.clone(), t.clone(), f.clone()])
    }
    pub fn lt(&self, o: &UOp) -> UOp {
        UOp::alu(Ops::CMPLT, vec![self.clone(), o.clone()])
    }
    pub fn ne(&self, o: &UOp) -> UOp {
        UOp::alu(Ops::CMPNE, vec![self.clone(), o.clone()])
    }
    pub fn eq_(&self, o: &UOp) -> UOp {
        UOp::alu(Ops::CMPEQ, vec![self.clone(), o.clone()])
    }
    /// `MAX(self, o)` (named so it cannot be confused with `Ord::max`).
    pub fn maximum(&self, o: &UOp) -> UOp {
        UOp::alu(Ops::MAX, vec![self.clone(), o.clone()])
    }
    pub fn and(&self, o: &UOp) -> UOp {
        UOp::alu(Ops::AND, vec![self.clone(), o.clone()])
    }
    pub fn idiv(&self, o: &UOp) -> UOp {
        UOp::alu(Ops::IDIV, vec![self.clone(), o.clone()])
    }
    pub fn modulo(&self, o: &UOp) -> UOp {
        UOp::alu(Ops::MOD, vec![self.clone(), o.clone()])
    }
    /// An integer constant of this node's dtype.
    pub fn c(&self, v: i64) -> UOp {
        UOp::int(self.dtype().base(), v)
    }

    /// Replaces nodes by the map, rebuilding everything above them.
    pub fn substitute(&self, map: &FxHashMap<UOp, UOp>) -> UOp {
        UOp::substitute_all(std::slice::from_ref(self), map)[self].clone()
    }

    /// [`UOp::substitute`] for several roots at once: every node of their graphs mapped to its
    /// replacement (itself where nothing below it changed).
    pub fn substitute_all(roots: &[UOp], map: &FxHashMap<UOp, UOp>) -> FxHashMap<UOp, UOp> {
        let mut memo: FxHashMap<UOp, UOp> = map.clone();
        for n in super::node::toposort_many(roots) {
            if memo.contains_key(&n) {
                continue;
            }
            let src: Vec<UOp> = n.src().iter().map(|s| memo[s].clone()).collect();
            let new = if src.iter().zip(n.src()).all(|(a, b)| a == b) { n.clone() } else { n.with_src(src) };
            memo.insert(n, new);
        }
        memo
    }
}

// ---------------------------------------------------------------- operators on index math

macro_rules! uop_binop {
    ($trait:ident, $method:ident, $op:expr) => {
        impl std::ops::$trait<&UOp> for &UOp {
            type Output = UOp;
            fn $method(self, rhs: &UOp) -> UOp {
                UOp::alu($op, vec![self.clone(), rhs.clone()])
            }
        }
        impl std::ops::$trait<UOp> for UOp {
            type Output = UOp;
            fn $method(self, rhs: UOp) -> UOp {
                UOp::alu($op, vec![self, rhs])
            }
        }
        impl std::ops::$trait<i64> for &UOp {
            type Output = UOp;
            fn $method(self, rhs: i64) -> UOp {
                UOp::alu($op, vec![self.clone(), self.c(rhs)])
            }
        }
        impl std::ops::$trait<i64> for UOp {
            type Output = UOp;
            fn $method(self, rhs: i64) -> UOp {
                let c = self.c(rhs);
                UOp::alu($op, vec![self, c])
            }
        }
    };
}
uop_binop!(Add, add, Ops::ADD);
uop_binop!(Sub, sub, Ops::SUB);
uop_binop!(Mul, mul, Ops::MUL);
uop_binop!(Div, div, Ops::IDIV);
uop_binop!(Rem, rem, Ops::MOD);

impl std::ops::Neg for &UOp {
    type Output = UOp;
    fn neg(self) -> UOp {
        UOp::alu(Ops::NEG, vec![self.clone()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_node_is_same_allocation() {
        let a = UOp::int(DType::I32, 3);
        let b = UOp::int(DType::I32, 3);
        assert_eq!(a.id(), b.id());
        let x = &a + &b;
        let y = &a + &b;
        assert_eq!(x.id(), y.id());
        assert_ne!(UOp::int(DType::I64, 3).id(), a.id());
    }

    #[test]
    fn interning_from_many_threads_agrees() {
        // Each thread returns its root, so no chain is freed before all are compared.
        let roots: Vec<UOp> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let mut x = UOp::int(DType::I64, 7_777_001);
                        for i in 0..200 {
                            x = &x * 3 + i;
                        }
                        x
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(roots.windows(2).all(|w| w[0].id() == w[1].id()));
    }
}
