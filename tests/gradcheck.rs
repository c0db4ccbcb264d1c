//! Gradients checked against central finite differences in f64, for every differentiable
//! primitive op and a few composites. Each check computes `loss = (f(inputs) * w).sum()` with a
//! fixed random weight `w` (so the gradient is not just ones), the analytic gradient with
//! `backward()`, and the numeric one by re-running the forward pass (a fresh realize) with each
//! input element moved by ±eps. Each check also asserts that the primitive it is about occurs in
//! the forward graph, so a refactor cannot silently stop testing it.

use ferrograd::tensor::with_default_device;
use ferrograd::uop::Arg;
use ferrograd::{DType, Ops, Tensor, UOp};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

const EPS: f64 = 1e-6;
/// `|analytic - numeric| <= TOL * (1 + |numeric|)`: central differences in f64 with eps 1e-6
/// are good to about 1e-9 here.
const TOL: f64 = 1e-6;

type GradFn = fn(&[Tensor]) -> Tensor;

/// One check: the op it is about, its input shapes, the range inputs are drawn from and the
/// computation.
struct Check {
    name: &'static str,
    prim: Ops,
    shapes: &'static [&'static [usize]],
    range: (f64, f64),
    f: GradFn,
}

const ANY: (f64, f64) = (-2.0, 2.0);
const POS: (f64, f64) = (0.5, 2.0);

/// A raw node of `op` on `srcs` (for primitives the Tensor API never builds on its own).
fn raw(op: Ops, dtype: DType, srcs: &[&Tensor]) -> Tensor {
    Tensor::from_uop(UOp::new(op, dtype, srcs.iter().map(|t| t.uop()).collect(), Arg::None))
}

/// A fixed bool mask of `shape` (alternating), for WHERE.
fn mask(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<bool> = (0..n).map(|i| i % 3 != 1).collect();
    Tensor::from_vec(v, shape)
}

const CHECKS: &[Check] = &[
    // ---------------------------------------------------------------- binary ALU
    Check { name: "add", prim: Ops::ADD, shapes: &[&[2, 3], &[2, 3]], range: ANY, f: |x| &x[0] + &x[1] },
    Check { name: "add_broadcast", prim: Ops::ADD, shapes: &[&[2, 3], &[3]], range: ANY, f: |x| &x[0] + &x[1] },
    Check { name: "sub", prim: Ops::SUB, shapes: &[&[2, 3], &[2, 3]], range: ANY, f: |x| &x[0] - &x[1] },
    Check { name: "mul", prim: Ops::MUL, shapes: &[&[2, 3], &[2, 3]], range: ANY, f: |x| &x[0] * &x[1] },
    Check { name: "mul_same_input", prim: Ops::MUL, shapes: &[&[5]], range: ANY, f: |x| &x[0] * &x[0] },
    Check { name: "fdiv", prim: Ops::FDIV, shapes: &[&[2, 3], &[2, 3]], range: POS, f: |x| &x[0] / &x[1] },
    Check { name: "max", prim: Ops::MAX, shapes: &[&[2, 3], &[2, 3]], range: ANY, f: |x| x[0].maximum(&x[1]) },
    Check {
        name: "mulacc",
        prim: Ops::MULACC,
        shapes: &[&[2, 3], &[2, 3], &[2, 3]],
        range: ANY,
        f: |x| raw(Ops::MULACC, DType::F64, &[&x[0], &x[1], &x[2]]),
    },
    // ---------------------------------------------------------------- unary ALU
    Check { name: "neg", prim: Ops::NEG, shapes: &[&[2, 3]], range: ANY, f: |x| -&x[0] },
    Check { name: "recip", prim: Ops::RECIP, shapes: &[&[2, 3]], range: POS, f: |x| x[0].reciprocal() },
    Check { name: "sqrt", prim: Ops::SQRT, shapes: &[&[2, 3]], range: POS, f: |x| x[0].sqrt() },
    Check { name: "exp2", prim: Ops::EXP2, shapes: &[&[2, 3]], range: ANY, f: |x| x[0].exp2() },
    Check { name: "log2", prim: Ops::LOG2, shapes: &[&[2, 3]], range: POS, f: |x| x[0].log2() },
    Check { name: "sin", prim: Ops::SIN, shapes: &[&[2, 3]], range: (-4.0, 4.0), f: |x| x[0].sin() },
    Check { name: "trunc", prim: Ops::TRUNC, shapes: &[&[6]], range: (0.1, 0.9), f: |x| (&x[0] * 4.0).trunc() + &x[0] },
    // ---------------------------------------------------------------- ternary and casts
    Check {
        name: "where_value_branches",
        prim: Ops::WHERE,
        shapes: &[&[2, 3], &[2, 3]],
        range: ANY,
        f: |x| mask(&[2, 3]).where_(&x[0], &x[1]),
    },
    Check {
        name: "where_same_tensor",
        prim: Ops::WHERE,
        shapes: &[&[6]],
        range: ANY,
        f: |x| mask(&[6]).where_(&x[0] * 3.0, &x[0] * &x[0]),
    },
    Check {
        name: "cast_f64_to_f64",
        prim: Ops::CAST,
        shapes: &[&[2, 3]],
        range: ANY,
        f: |x| raw(Ops::CAST, DType::F64, &[&raw(Ops::CAST, DType::F64, &[&x[0]])]) * &x[0],
    },
    // ---------------------------------------------------------------- reductions
    Check { name: "reduce_add", prim: Ops::REDUCE_AXIS, shapes: &[&[3, 4]], range: ANY, f: |x| x[0].sum_axis(1) },
    Check { name: "reduce_add_all", prim: Ops::REDUCE_AXIS, shapes: &[&[2, 3]], range: ANY, f: |x| x[0].sum() * &x[0] },
    Check { name: "reduce_max", prim: Ops::REDUCE_AXIS, shapes: &[&[3, 4]], range: ANY, f: |x| x[0].max_axis(0) },
    Check {
        name: "reduce_max_keepdim",
        prim: Ops::REDUCE_AXIS,
        shapes: &[&[2, 2, 3]],
        range: ANY,
        f: |x| x[0].max_keepdim([0, 2]) * &x[0],
    },
    Check { name: "reduce_mul", prim: Ops::REDUCE_AXIS, shapes: &[&[3, 4]], range: ANY, f: |x| x[0].prod_axis(1) },
    Check {
        name: "reduce_mul_two_axes",
        prim: Ops::REDUCE_AXIS,
        shapes: &[&[2, 3, 2]],
        range: POS,
        f: |x| x[0].prod_axis([0, 2]),
    },
    // ---------------------------------------------------------------- movement
    Check { name: "reshape", prim: Ops::RESHAPE, shapes: &[&[2, 6]], range: ANY, f: |x| x[0].reshape([3, 4]) },
    Check { name: "permute", prim: Ops::PERMUTE, shapes: &[&[2, 3, 2]], range: ANY, f: |x| x[0].permute([2, 0, 1]) },
    Check { name: "expand", prim: Ops::EXPAND, shapes: &[&[3, 1]], range: ANY, f: |x| x[0].expand([2, 3, 4]) },
    Check { name: "pad", prim: Ops::PAD, shapes: &[&[2, 3]], range: ANY, f: |x| x[0].pad(&[(1, 0), (2, 1)]) },
    Check { name: "shrink", prim: Ops::SHRINK, shapes: &[&[3, 4]], range: ANY, f: |x| x[0].shrink(&[(1, 3), (0, 2)]) },
    Check { name: "flip", prim: Ops::FLIP, shapes: &[&[3, 4]], range: ANY, f: |x| x[0].flip([0, 1]) },
    Check {
        name: "contiguous",
        prim: Ops::CONTIGUOUS,
        shapes: &[&[3, 4]],
        range: ANY,
        f: |x| x[0].t().contiguous() * x[0].t(),
    },
    Check {
        name: "movement_chain",
        prim: Ops::PAD,
        shapes: &[&[2, 3]],
        range: ANY,
        f: |x| x[0].flip(1).t().pad(&[(0, 1), (1, 1)]).shrink(&[(1, 4), (0, 3)]).reshape([9]),
    },
    // ---------------------------------------------------------------- composites
    Check { name: "exp", prim: Ops::EXP2, shapes: &[&[2, 3]], range: ANY, f: |x| x[0].exp() },
    Check { name: "log", prim: Ops::LOG2, shapes: &[&[2, 3]], range: POS, f: |x| x[0].log() },
    Check { name: "cos", prim: Ops::SIN, shapes: &[&[2, 3]], range: (-4.0, 4.0), f: |x| x[0].cos() },
    Check { name: "sigmoid", prim: Ops::RECIP, shapes: &[&[2, 3]], range: (-4.0, 4.0), f: |x| x[0].sigmoid() },
    Check { name: "tanh", prim: Ops::EXP2, shapes: &[&[2, 3]], range: (-3.0, 3.0), f: |x| x[0].tanh() },
    Check { name: "relu", prim: Ops::WHERE, shapes: &[&[2, 3]], range: ANY, f: |x| x[0].relu() },
    Check { name: "abs", prim: Ops::WHERE, shapes: &[&[2, 3]], range: ANY, f: |x| x[0].abs() },
    Check { name: "minimum", prim: Ops::WHERE, shapes: &[&[2, 3], &[2, 3]], range: ANY, f: |x| x[0].minimum(&x[1]) },
    Check { name: "pow", prim: Ops::EXP2, shapes: &[&[2, 3], &[2, 3]], range: POS, f: |x| x[0].pow(&x[1]) },
    Check {
        name: "pow_int_exponent_negative_base",
        prim: Ops::MUL,
        shapes: &[&[5]],
        range: (-2.0, -0.5),
        f: |x| x[0].pow(3.0),
    },
    Check { name: "mean", prim: Ops::REDUCE_AXIS, shapes: &[&[3, 4]], range: ANY, f: |x| x[0].mean_axis(0) },
    Check { name: "min", prim: Ops::REDUCE_AXIS, shapes: &[&[3, 4]], range: ANY, f: |x| x[0].min_axis(1) },
    Check {
        name: "softmax",
        prim: Ops::REDUCE_AXIS,
        shapes: &[&[2, 4]],
        range: ANY,
        f: |x| {
            let e = (&x[0] - x[0].max_keepdim(1)).exp();
            &e / e.sum_keepdim(1)
        },
    },
    Check {
        name: "matmul",
        prim: Ops::REDUCE_AXIS,
        shapes: &[&[2, 3], &[3, 2]],
        range: ANY,
        f: |x| x[0].matmul(&x[1]),
    },
    Check {
        name: "matmul_batched_broadcast",
        prim: Ops::REDUCE_AXIS,
        shapes: &[&[2, 1, 3], &[3, 2]],
        range: ANY,
        f: |x| x[0].matmul(&x[1]),
    },
];

/// xorshift64*: deterministic inputs, independent of the library's generator.
struct Rng(u64);
impl Rng {
    fn new(name: &str) -> Rng {
        Rng(name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3)) | 1)
    }
    fn uniform(&mut self, (lo, hi): (f64, f64)) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let u = (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
}

fn contains_op(root: &UOp, op: Ops) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![root.clone()];
    while let Some(u) = stack.pop() {
        if u.op() == op {
            return true;
        }
        if seen.insert(u.clone()) {
            stack.extend(u.src().iter().cloned());
        }
    }
    false
}

fn read(t: &Tensor) -> Result<Vec<f64>, String> {
    t.to_vec::<f64>().map_err(|e| format!("reading failed: {e}"))
}

/// `(f(inputs) * w).sum()` as a number (a fresh forward pass, no gradients).
fn loss_value(c: &Check, data: &[Vec<f64>], w: &[f64], dev: &str) -> Result<f64, String> {
    let xs: Vec<Tensor> = data.iter().zip(c.shapes).map(|(d, s)| Tensor::from_slice_on(d, *s, dev)).collect();
    let out = (c.f)(&xs);
    let wt = Tensor::from_slice_on(w, out.shape(), dev);
    Ok(read(&(out * wt).sum())?[0])
}

fn run_check(c: &Check, dev: &str) -> Result<(), String> {
    with_default_device(dev, || {
        let mut rng = Rng::new(c.name);
        let data: Vec<Vec<f64>> =
            c.shapes.iter().map(|s| (0..s.iter().product()).map(|_| rng.uniform(c.range)).collect()).collect();
        let xs: Vec<Tensor> =
            data.iter().zip(c.shapes).map(|(d, s)| Tensor::from_slice_on(d, *s, dev).requires_grad()).collect();
        let out = (c.f)(&xs);
        if out.dtype() != DType::F64 {
            return Err(format!("output dtype is {}, not float64", out.dtype()));
        }
        if !contains_op(&out.uop(), c.prim) {
            return Err(format!("the forward graph has no {:?} node", c.prim));
        }
        let w: Vec<f64> = (0..out.numel()).map(|_| rng.uniform((-1.0, 1.0))).collect();
        (&out * Tensor::from_slice_on(&w, out.shape(), dev)).sum().backward();
        let mut errs = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            let analytic = match x.grad() {
                Some(g) => read(&g)?,
                None => vec![0.0; data[i].len()],
            };
            for j in 0..data[i].len() {
                let mut moved = data.clone();
                moved[i][j] = data[i][j] + EPS;
                let plus = loss_value(c, &moved, &w, dev)?;
                moved[i][j] = data[i][j] - EPS;
                let minus = loss_value(c, &moved, &w, dev)?;
                let numeric = (plus - minus) / (2.0 * EPS);
                let diff = (analytic[j] - numeric).abs();
                if diff.is_nan() || diff > TOL * (1.0 + numeric.abs()) {
                    errs.push(format!("input {i}[{j}] = {}: analytic {} numeric {numeric}", data[i][j], analytic[j]));
                }
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.into_iter().take(4).collect::<Vec<_>>().join("; "))
        }
    })
}

fn run_all(dev: &str) {
    let mut failures = Vec::new();
    for c in CHECKS {
        let r = catch_unwind(AssertUnwindSafe(|| run_check(c, dev))).unwrap_or_else(|p| {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            Err(format!("panicked: {}", msg.unwrap_or_default()))
        });
        if let Err(e) = r {
            failures.push(format!("{} ({:?}) on {dev}: {e}", c.name, c.prim));
        }
    }
    println!("gradcheck on {dev}: {} passed, {} failed", CHECKS.len() - failures.len(), failures.len());
    assert!(failures.is_empty(), "gradient checks failed:\n  {}", failures.join("\n  "));
}

#[test]
fn gradcheck_cpu() {
    run_all("CPU");
}

#[test]
fn gradcheck_interp() {
    run_all("INTERP");
}

/// Every differentiable primitive has at least one check.
#[test]
fn every_differentiable_primitive_is_checked() {
    use Ops::*;
    let prims = [
        ADD,
        SUB,
        MUL,
        FDIV,
        NEG,
        RECIP,
        SQRT,
        EXP2,
        LOG2,
        SIN,
        TRUNC,
        MAX,
        WHERE,
        MULACC,
        CAST,
        REDUCE_AXIS,
        RESHAPE,
        PERMUTE,
        EXPAND,
        PAD,
        SHRINK,
        FLIP,
        CONTIGUOUS,
    ];
    for p in prims {
        assert!(CHECKS.iter().any(|c| c.prim == p), "no gradient check for {p:?}");
    }
}

#[test]
fn gradient_returns_gradients_without_touching_grad() {
    let x = Tensor::from_vec(vec![1.0f32, -2.0, 3.0], [3]);
    let y = Tensor::from_vec(vec![0.5f32, 4.0, -1.0], [3]);
    let z = Tensor::from_vec(vec![7.0f32], [1]);
    let f = (x.square() * &y).sum();
    let g = f.gradient(&[&x, &y, &z]);
    assert_eq!(g[0].to_vec::<f32>().unwrap(), vec![1.0, -16.0, -6.0], "d/dx = 2xy");
    assert_eq!(g[1].to_vec::<f32>().unwrap(), vec![1.0, 4.0, 9.0], "d/dy = x^2");
    assert_eq!(g[2].to_vec::<f32>().unwrap(), vec![0.0], "f does not depend on z");
    assert!(x.grad().is_none() && y.grad().is_none(), "gradient must not write .grad");
}

/// A branch a `where` did not take contributes nothing to the gradient, whatever its own
/// derivative there: `where(x > 0, x, x * x)` at +inf is 1, not `0 * inf` = NaN, and so is a
/// chain of such branches (`exp` of `log` of the untaken branch) and a branch under two wheres.
/// (PyTorch itself gives NaN here: its `where` backward multiplies the zero through.)
#[test]
fn untaken_where_branches_give_no_nan_gradients() {
    let inf = f32::INFINITY;
    type Case = (&'static str, [f32; 4], fn(&Tensor) -> Tensor, [f32; 4]);
    let cases: [Case; 3] = [
        ("where(x > 0, x, x * x)", [inf, 2.0, -3.0, -inf], |x| x.gt(0.0).where_(x, x * x), [1.0, 1.0, -6.0, -inf]),
        (
            "where(x > 0, 2x, exp(log(-x) * 3))",
            [inf, 2.0, -3.0, -0.5],
            |x| x.gt(0.0).where_(x * 2.0, (x.neg().log() * 3.0).exp()),
            [2.0, 2.0, -27.0, -0.75],
        ),
        (
            "where(x > 0, 1, where(x < -1, -x, sqrt(x)))",
            [inf, 2.0, -3.0, -inf],
            |x| x.gt(0.0).where_(1.0, x.lt(-1.0).where_(x.neg(), x.sqrt())),
            [0.0, 0.0, -1.0, -1.0],
        ),
    ];
    for (name, vals, f, want) in cases {
        let x = Tensor::from_vec(vals.to_vec(), [4]).requires_grad();
        f(&x).sum().backward();
        let got = x.grad().unwrap().to_vec::<f32>().unwrap();
        let close = got.iter().zip(&want).all(|(g, w)| g == w || (g - w).abs() <= 1e-4 * w.abs());
        assert!(close, "{name}: gradient at {vals:?} is {got:?}, want {want:?}");
    }
}
