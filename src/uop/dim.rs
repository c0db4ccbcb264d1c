//! Symbolic dimensions: an axis length or a movement offset that is a bounded integer
//! expression over [`Variable`]s instead of a number.
//!
//! A `Variable` is a `DEFINE_VAR` node with its bounds; `bind(v)` gives the value for one
//! realize as a `BIND(DEFINE_VAR, CONST)` node. A [`Dim`] is either a number or such an
//! expression (i32 index math, simplified on construction, so equal expressions are the same
//! interned node). The scheduler strips the BINDs into each kernel's variable values: the kernel
//! AST keeps only the DEFINE_VAR, so one compiled kernel serves every value in the range.

use super::dtype::{ConstValue, DType};
use super::node::{Arg, Dim, FxHashMap, UOp};
use super::ops::Ops;
use super::symbolic::simplify;
use std::fmt;
use std::sync::Arc;

/// The dtype of symbolic dimension expressions.
pub const DIM_DTYPE: DType = DType::I32;

/// A named integer in `min..=max`, bound to a value per call (`bind`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Variable(UOp);

impl Variable {
    /// A variable named `name` taking values in `min..=max` (`0 <= min <= max < 2^31`).
    pub fn new(name: &str, min: i64, max: i64) -> Variable {
        assert!(
            0 <= min && min <= max && max <= i32::MAX as i64,
            "Variable::new({name:?}, {min}, {max}): need 0 <= min <= max <= {}",
            i32::MAX
        );
        Variable(UOp::new(Ops::DEFINE_VAR, DIM_DTYPE, vec![], Arg::Var(name.into(), min, max)))
    }

    pub fn name(&self) -> Arc<str> {
        match self.0.arg() {
            Arg::Var(n, _, _) => n.clone(),
            _ => unreachable!("a Variable is a DEFINE_VAR"),
        }
    }
    pub fn min(&self) -> i64 {
        self.0.vmin()
    }
    pub fn max(&self) -> i64 {
        self.0.vmax()
    }

    /// This variable with `value` for one call: a [`Dim`] to use in shapes and offsets.
    pub fn bind(&self, value: i64) -> Dim {
        assert!(
            (self.min()..=self.max()).contains(&value),
            "Variable {:?}: bind({value}) is outside its range {}..={}",
            self.name(),
            self.min(),
            self.max()
        );
        Dim::Sym(UOp::new(Ops::BIND, DIM_DTYPE, vec![self.0.clone(), UOp::int(DIM_DTYPE, value)], Arg::None))
    }

    /// The variable itself, unbound (a kernel-level DEFINE_VAR).
    pub fn uop(&self) -> &UOp {
        &self.0
    }
}

impl fmt::Debug for Variable {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Variable({:?}, {}..={})", self.name(), self.min(), self.max())
    }
}

impl From<usize> for Dim {
    fn from(v: usize) -> Dim {
        Dim::Const(v)
    }
}
impl From<&Dim> for Dim {
    fn from(d: &Dim) -> Dim {
        d.clone()
    }
}

impl Dim {
    /// The dimension an integer expression stands for, simplified (a constant becomes `Const`).
    pub fn from_uop(u: &UOp) -> Dim {
        let u = simplify(&u.cast(DIM_DTYPE));
        match u.const_value() {
            Some(ConstValue::Int(v)) => {
                assert!(v >= 0, "a dimension cannot be negative: {v}");
                Dim::Const(v as usize)
            }
            _ => Dim::Sym(u),
        }
    }

    /// The expression (a constant for `Const`), BINDs included.
    pub fn uop(&self) -> UOp {
        match self {
            Dim::Const(v) => UOp::int(DIM_DTYPE, *v as i64),
            Dim::Sym(u) => u.clone(),
        }
    }

    pub fn as_const(&self) -> Option<usize> {
        match self {
            Dim::Const(v) => Some(*v),
            Dim::Sym(_) => None,
        }
    }

    /// The largest value over the variables' ranges (range analysis).
    pub fn max(&self) -> usize {
        match self {
            Dim::Const(v) => *v,
            Dim::Sym(u) => u.vmax().max(0) as usize,
        }
    }
    /// The smallest value over the variables' ranges.
    pub fn min(&self) -> usize {
        match self {
            Dim::Const(v) => *v,
            Dim::Sym(u) => u.vmin().max(0) as usize,
        }
    }

    /// The value with the bound values substituted; `None` when a variable is unbound.
    pub fn value(&self) -> Option<usize> {
        match self {
            Dim::Const(v) => Some(*v),
            Dim::Sym(u) => {
                let values: FxHashMap<UOp, UOp> = u
                    .toposort()
                    .into_iter()
                    .filter(|n| n.op() == Ops::BIND)
                    .map(|b| (b.clone(), b.src()[1].clone()))
                    .collect();
                match simplify(&u.substitute(&values)).const_value() {
                    Some(ConstValue::Int(v)) => Some(v.max(0) as usize),
                    _ => None,
                }
            }
        }
    }

    fn combine(a: &Dim, b: &Dim, op: Ops) -> Dim {
        match (a, b, op) {
            (Dim::Const(x), Dim::Const(y), Ops::ADD) => Dim::Const(x + y),
            (Dim::Const(x), Dim::Const(y), Ops::MUL) => Dim::Const(x * y),
            (Dim::Const(x), Dim::Const(y), Ops::SUB) => {
                Dim::Const(x.checked_sub(*y).unwrap_or_else(|| panic!("dimension {x} - {y} is negative")))
            }
            _ => {
                let d = Dim::from_uop(&UOp::alu(op, vec![a.uop(), b.uop()]));
                assert!(d.uop().vmin() >= 0, "dimension {a:?} {op:?} {b:?} can be negative");
                d
            }
        }
    }
}

/// The pairs of a SHRINK or PAD node as dimensions, symbolic or not.
pub(crate) fn dim_pairs(arg: &Arg) -> Vec<(Dim, Dim)> {
    match arg {
        Arg::Pairs(p) => p.iter().map(|&(a, b)| (Dim::Const(a), Dim::Const(b))).collect(),
        Arg::DimPairs(p) => p.clone(),
        a => panic!("expected SHRINK/PAD pairs, got {a:?}"),
    }
}

/// `d` with each variable that `values` names bound to that value instead (a TinyJit replay's
/// output shapes).
pub(crate) fn rebind(d: &Dim, values: &[(Arc<str>, i64)]) -> Dim {
    let Dim::Sym(u) = d else { return d.clone() };
    let map: FxHashMap<UOp, UOp> = u
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Ops::BIND)
        .filter_map(|b| {
            let name = var_name(&b.src()[0]);
            let &(_, v) = values.iter().find(|(n, _)| *n == name)?;
            let new = UOp::new(Ops::BIND, DIM_DTYPE, vec![b.src()[0].clone(), UOp::int(DIM_DTYPE, v)], Arg::None);
            Some((b, new))
        })
        .collect();
    Dim::from_uop(&u.substitute(&map))
}

/// The name of a DEFINE_VAR node.
pub(crate) fn var_name(u: &UOp) -> Arc<str> {
    match u.arg() {
        Arg::Var(n, _, _) => n.clone(),
        a => panic!("{:?} with arg {a:?} is not a variable", u.op()),
    }
}

/// The value of a BIND node.
fn bound_value(b: &UOp) -> i64 {
    match b.src()[1].const_value() {
        Some(ConstValue::Int(v)) => v,
        _ => panic!("BIND without a constant value"),
    }
}

/// The variable and value of a `Variable::bind` result; `None` for any other dimension.
pub(crate) fn binding(d: &Dim) -> Option<(Variable, i64)> {
    match d {
        Dim::Sym(u) if u.op() == Ops::BIND => Some((Variable(u.src()[0].clone()), bound_value(u))),
        _ => None,
    }
}

/// Adds the binding of the BIND node `b` to `vals` (kept sorted by name).
pub(crate) fn add_binding(vals: &mut Vec<(Arc<str>, i64)>, b: &UOp) {
    let (name, v) = (var_name(&b.src()[0]), bound_value(b));
    match vals.binary_search_by(|(k, _)| k.cmp(&name)) {
        Ok(i) if vals[i].1 != v => {
            panic!("variable {name:?} is bound to two values in one realize: {} and {v}", vals[i].1)
        }
        Ok(_) => {}
        Err(i) => vals.insert(i, (name, v)),
    }
}

/// `u` with every BIND replaced by its variable, the bindings added to `vals`: what goes into a
/// kernel, which must not depend on the values.
pub(crate) fn strip_binds(u: &UOp, vals: &mut Vec<(Arc<str>, i64)>) -> UOp {
    let binds: Vec<UOp> = u.toposort().into_iter().filter(|n| n.op() == Ops::BIND).collect();
    if binds.is_empty() {
        return u.clone();
    }
    for b in &binds {
        add_binding(vals, b);
    }
    let map: FxHashMap<UOp, UOp> = binds.into_iter().map(|b| (b.clone(), b.src()[0].clone())).collect();
    u.substitute(&map)
}

impl fmt::Debug for Dim {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Dim::Const(v) => write!(f, "{v}"),
            Dim::Sym(u) => write!(f, "{}", render_expr(u)),
        }
    }
}

/// A short infix rendering of a dimension expression (`pos+1`), for messages.
fn render_expr(u: &UOp) -> String {
    let bin = |sym: &str| format!("({}{sym}{})", render_expr(&u.src()[0]), render_expr(&u.src()[1]));
    match u.op() {
        Ops::DEFINE_VAR => var_name(u).to_string(),
        Ops::BIND => format!("{}={}", var_name(&u.src()[0]), render_expr(&u.src()[1])),
        Ops::CONST => match u.const_value() {
            Some(ConstValue::Int(v)) => v.to_string(),
            v => format!("{v:?}"),
        },
        Ops::ADD => bin("+"),
        Ops::SUB => bin("-"),
        Ops::MUL => bin("*"),
        Ops::IDIV => bin("/"),
        Ops::MOD => bin("%"),
        Ops::MAX => format!("max{}", bin(",")),
        Ops::CAST => render_expr(&u.src()[0]),
        op => format!("{op:?}"),
    }
}

macro_rules! dim_binop {
    ($trait:ident, $method:ident, $op:expr) => {
        impl<T: Into<Dim>> std::ops::$trait<T> for Dim {
            type Output = Dim;
            fn $method(self, rhs: T) -> Dim {
                Dim::combine(&self, &rhs.into(), $op)
            }
        }
        impl<T: Into<Dim>> std::ops::$trait<T> for &Dim {
            type Output = Dim;
            fn $method(self, rhs: T) -> Dim {
                Dim::combine(self, &rhs.into(), $op)
            }
        }
    };
}
dim_binop!(Add, add, Ops::ADD);
dim_binop!(Sub, sub, Ops::SUB);
dim_binop!(Mul, mul, Ops::MUL);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_cancel_and_bounds_follow_the_range() {
        let v = Variable::new("pos", 0, 10);
        let p = v.bind(3);
        let end = &p + 4usize;
        assert_eq!(end.clone() - p.clone(), Dim::Const(4), "({end:?}) - ({p:?}) should fold to 4");
        assert_eq!((end.min(), end.max()), (4, 14));
        assert_eq!(end.value(), Some(7));
        // The bound value never enters the bounds: another value gives the same ranges.
        assert_eq!((v.bind(9) + 4usize).max(), 14);
    }

    #[test]
    fn stripping_binds_collects_values() {
        let v = Variable::new("n", 1, 8);
        let mut vals = Vec::new();
        let k = strip_binds(&(v.bind(5) * 2usize).uop(), &mut vals);
        assert_eq!(vals, vec![(Arc::from("n"), 5)]);
        assert!(k.toposort().iter().all(|n| n.op() != Ops::BIND));
        assert_eq!(k, strip_binds(&(v.bind(6) * 2usize).uop(), &mut Vec::new()), "the kernel side is value-free");
    }

    #[test]
    #[should_panic(expected = "bound to two values")]
    fn two_values_of_one_variable_panic() {
        let v = Variable::new("n", 1, 8);
        let mut vals = Vec::new();
        strip_binds(&v.bind(2).uop(), &mut vals);
        strip_binds(&v.bind(3).uop(), &mut vals);
    }
}
