//! The symbolic simplifier and the rewrite engine through the public API: specific
//! simplifications, constant folding, and a randomized check that simplification never
//! changes a value and that range analysis bounds every value.

use ferrograd::uop::dtype::wrap_int;
use ferrograd::uop::pattern::{graph_rewrite, rule, PatternMatcher, RewriteMode, UPat};
use ferrograd::uop::symbolic::simplify;
use ferrograd::uop::{Arg, AxisType, ConstValue, DType, Ops, UOp};

fn rng_range(n: i64, id: u32) -> UOp {
    UOp::range(UOp::int(DType::I32, n), id, AxisType::Reduce)
}

fn var(name: &str, lo: i64, hi: i64) -> UOp {
    UOp::new(Ops::DEFINE_VAR, DType::I32, vec![], Arg::Var(name.into(), lo, hi))
}

fn i32c(v: i64) -> UOp {
    UOp::int(DType::I32, v)
}

// ---------------------------------------------------------------- specific simplifications

#[test]
fn reshape_index_math_folds() {
    let (r0, r1) = (rng_range(8, 0), rng_range(64, 1));
    let flat = &(&r0 * 64) + &r1;
    assert_eq!(simplify(&(&flat / 64)), r0);
    assert_eq!(simplify(&(&flat % 64)), r1);
    assert_eq!(simplify(&(&(&flat / 64) % 8)), r0, "r0 < 8 so % 8 drops");
    let r4 = rng_range(4, 2);
    assert_eq!(simplify(&(&(&(&r0 * 4) + &r4) % 4)), r4);
    assert_eq!(simplify(&(&(&(&r0 * 4) + &r4) / 4)), r0);
    // An inner split: ((r0*64 + r1) / 8) % 8 == r1 / 8.
    assert_eq!(simplify(&(&(&flat / 8) % 8)), simplify(&(&r1 / 8)));
    // Nested divisions combine.
    assert_eq!(simplify(&(&(&flat / 8) / 8)), r0);
}

#[test]
// `&x * 0` and `&x % 1` build IR nodes; clippy takes them for arithmetic.
#[allow(clippy::erasing_op, clippy::modulo_one)]
fn identities() {
    let x = var("x", -5, 7);
    assert_eq!(simplify(&(&x + 0)), x);
    assert_eq!(simplify(&(&x * 1)), x);
    assert_eq!(simplify(&(&x * 0)), i32c(0));
    assert_eq!(simplify(&(&x - 0)), x);
    assert_eq!(simplify(&(&x - &x)), i32c(0));
    assert_eq!(simplify(&(&x / 1)), x);
    assert_eq!(simplify(&(&x % 1)), i32c(0));
    assert_eq!(simplify(&UOp::maximum(&x, &x)), x);
    assert_eq!(simplify(&(-&(-&x))), x);
    assert_eq!(simplify(&x.lt(&x)), UOp::bool(false));
    assert_eq!(simplify(&x.ne(&x)), UOp::bool(false));
    assert_eq!(simplify(&x.eq_(&x)), UOp::bool(true));
    let c = x.lt(&i32c(3));
    assert_eq!(simplify(&UOp::bool(true).where_(&x, &i32c(9))), x);
    assert_eq!(simplify(&c.where_(&x, &x)), x);
    assert_eq!(simplify(&c.and(&UOp::bool(true))), c);
    assert_eq!(simplify(&c.and(&UOp::bool(false))), UOp::bool(false));
    assert_eq!(simplify(&UOp::alu(Ops::OR, vec![c.clone(), UOp::bool(false)])), c);
    assert_eq!(simplify(&c.and(&c)), c);
    let not_c = c.ne(&UOp::bool(true));
    assert_eq!(simplify(&not_c.ne(&UOp::bool(true))), c, "double NOT");
    assert_eq!(simplify(&UOp::new(Ops::CAST, DType::I32, vec![x.clone()], Arg::None)), x);
    // Float: x*1 and x-0.0 are exact; x*0 and x+0.0 are not folded (NaN, -0.0).
    let f = UOp::new(Ops::DEFINE_VAR, DType::F32, vec![], Arg::Var("f".into(), 0, 0));
    assert_eq!(simplify(&(&f * &UOp::float(DType::F32, 1.0))), f);
    assert_eq!(simplify(&UOp::alu(Ops::SUB, vec![f.clone(), UOp::float(DType::F32, 0.0)])), f);
    let f0 = &f * &UOp::float(DType::F32, 0.0);
    assert_eq!(simplify(&f0), f0);
    let fp0 = &f + &UOp::float(DType::F32, 0.0);
    assert_eq!(simplify(&fp0), fp0);
    assert_eq!(simplify(&(&f + &UOp::float(DType::F32, -0.0))), f);
}

#[test]
fn vectors_and_tensor_level_nodes_keep_their_types() {
    // x < x on vectors stays a vector (a scalar `false` would change the dtype).
    let v4 = UOp::new(Ops::DEFINE_VAR, DType::F32.vec(4), vec![], Arg::Var("v".into(), 0, 0));
    let lt = v4.lt(&v4);
    assert_eq!(simplify(&lt).dtype(), DType::BOOL.vec(4));
    let i4 = UOp::new(Ops::DEFINE_VAR, DType::I32.vec(4), vec![], Arg::Var("i".into(), 0, 0));
    assert_eq!(simplify(&i4.eq_(&i4)).dtype(), DType::BOOL.vec(4));
    // Tensor-level nodes (with a shape) are left alone: a kernel-level constant has no shape.
    let dev = UOp::new(Ops::DEVICE, DType::VOID, vec![], Arg::Str("CPU".into()));
    let c = UOp::new(Ops::CONST, DType::I32, vec![dev], Arg::Const(ConstValue::Int(3)));
    let sum = &c + &c;
    assert_eq!(simplify(&sum), sum);
}

#[test]
fn like_terms_combine() {
    let (x, y) = (var("x", -5, 7), var("y", 0, 3));
    assert_eq!(simplify(&(&(&x * 3) + &(&x * 5))), simplify(&(&x * 8)));
    assert_eq!(simplify(&(&(&x * 3) + &(&x * 5))).src()[1].as_int(), Some(8));
    assert_eq!(simplify(&(&x + &x)), simplify(&(&x * 2)));
    // A longer sum in another order with constants spread around.
    let a = &(&(&(&x + 1) + &y) + &(&x * 2)) + 4;
    let b = &(&(&y + 5) + &(&x * 3)) + 0;
    assert_eq!(simplify(&a), simplify(&b));
    // (x + 3) * 2 - 6 == x * 2
    assert_eq!(simplify(&(&(&(&x + 3) * 2) - 6)), simplify(&(&x * 2)));
    // x*y == y*x
    assert_eq!(simplify(&(&x * &y)), simplify(&(&y * &x)));
    assert_eq!(simplify(&(&(&(&x * &y) * 2) - &(&(&y * 2) * &x))), i32c(0));
}

#[test]
fn comparisons_fold_by_range() {
    let r = rng_range(10, 0);
    assert_eq!(simplify(&r.lt(&i32c(100))), UOp::bool(true));
    assert_eq!(simplify(&r.lt(&i32c(0))), UOp::bool(false));
    assert_eq!(simplify(&r.ne(&i32c(10))), UOp::bool(true));
    assert_eq!(simplify(&r.eq_(&i32c(-1))), UOp::bool(false));
    let r2 = rng_range(5, 1);
    assert_eq!(simplify(&r2.lt(&(&r + 5))), UOp::bool(true), "two ranges: 0..4 < 5..14");
    // (r - 2) < 30 is r < 32: true for r in 0..10.
    assert_eq!(simplify(&(&r - 2).lt(&i32c(30))), UOp::bool(true));
    // Validity mask of a pad: (r0 - 2 < 30) & !(r0 < 2) over r0 in 0..34 keeps both halves,
    // normalized.
    let r0 = rng_range(34, 2);
    let mask = (&r0 - 2).lt(&i32c(30)).and(&r0.lt(&i32c(2)).ne(&UOp::bool(true)));
    let s = simplify(&mask);
    assert_eq!(s.src()[0], r0.lt(&i32c(32)));
    // Moving constants and dividing by the common factor: 4*r + 2 < 11 <=> r < 3 (r < 2.25).
    let big = rng_range(100, 3);
    assert_eq!(simplify(&(&(&big * 4) + 2).lt(&i32c(11))), big.lt(&i32c(3)));
    // 2*r != 5 always.
    assert_eq!(simplify(&(&big * 2).ne(&i32c(5))), UOp::bool(true));
    // -r < 5 <=> -5 < r
    let v = var("v", -10, 10);
    assert_eq!(simplify(&(-&v).lt(&i32c(5))), i32c(-5).lt(&v));
}

#[test]
fn constant_folding() {
    let u8c = |v| UOp::int(DType::U8, v);
    assert_eq!(simplify(&(&u8c(200) + &u8c(100))).as_int(), Some(44));
    assert_eq!(simplify(&(&u8c(3) - &u8c(5))).as_int(), Some(254));
    let i8c = |v| UOp::int(DType::I8, v);
    assert_eq!(simplify(&(&i8c(100) + &i8c(100))).as_int(), Some(-56));
    assert_eq!(simplify(&(&i32c(-7) / &i32c(2))).as_int(), Some(-3), "truncating division");
    assert_eq!(simplify(&(&i32c(-7) % &i32c(2))).as_int(), Some(-1), "remainder has the dividend's sign");
    assert_eq!(simplify(&(&i32c(7) % &i32c(-2))).as_int(), Some(1));
    let div0 = &i32c(7) / &i32c(0);
    assert_eq!(simplify(&div0), div0, "division by zero is not folded");
    let imin = UOp::int(DType::I32, i32::MIN as i64);
    assert_eq!(simplify(&(&imin * &i32c(-1))).as_int(), Some(i32::MIN as i64), "wrapping");
    let m = UOp::int(DType::U64, -1); // u64::MAX
    assert_eq!(simplify(&(&m / &UOp::int(DType::U64, 2))).as_int(), Some((u64::MAX / 2) as i64));
    assert_eq!(simplify(&m.lt(&UOp::int(DType::U64, 2))), UOp::bool(false), "unsigned compare");
    let f = |v| UOp::float(DType::F32, v);
    assert_eq!(simplify(&(&f(0.1) + &f(0.2))).const_value(), Some(ConstValue::Float((0.1f32 + 0.2f32) as f64)));
    assert_eq!(
        simplify(&UOp::alu(Ops::FDIV, vec![f(1.0), f(0.0)])).const_value(),
        Some(ConstValue::Float(f64::INFINITY))
    );
    assert_eq!(simplify(&UOp::alu(Ops::SQRT, vec![f(2.0)])).const_value(), Some(ConstValue::Float(2f32.sqrt() as f64)));
    assert_eq!(simplify(&f(f64::NAN).lt(&f(1.0))), UOp::bool(false));
    assert_eq!(simplify(&f(f64::NAN).ne(&f(f64::NAN))), UOp::bool(true));
    assert_eq!(simplify(&UOp::alu(Ops::MAX, vec![f(1.0), f(f64::NAN)])).const_value(), Some(ConstValue::Float(1.0)));
    assert_eq!(simplify(&UOp::bool(true).and(&UOp::bool(false))), UOp::bool(false));
    assert_eq!(simplify(&UOp::alu(Ops::XOR, vec![UOp::bool(true), UOp::bool(true)])), UOp::bool(false));
    assert_eq!(simplify(&f(2.7).cast(DType::I32)).as_int(), Some(2));
    assert_eq!(simplify(&i32c(300).cast(DType::U8)).as_int(), Some(44));
    assert_eq!(simplify(&UOp::int(DType::U8, 255).cast(DType::F32)).const_value(), Some(ConstValue::Float(255.0)));
    assert_eq!(simplify(&UOp::bool(true).where_(&f(1.0), &f(2.0))).const_value(), Some(ConstValue::Float(1.0)));
    let sh = UOp::alu(Ops::SHL, vec![i32c(1), i32c(31)]);
    assert_eq!(simplify(&sh).as_int(), Some(i32::MIN as i64));
}

#[test]
fn reshape_roundtrip_and_splits() {
    let r = rng_range(512, 0);
    // (r/8)*8 + r%8 == r
    assert_eq!(simplify(&(&(&(&r / 8) * 8) + &(&r % 8))), r);
    // (r/64)*64 + ((r/8)%8)*8 + r%8 == r
    let x = &(&(&(&r / 64) * 64) + &(&(&(&r / 8) % 8) * 8)) + &(&r % 8);
    assert_eq!(simplify(&x), r);
    // (4*a + 2*b) / 2 == 2*a + b for nonnegative a, b
    let (a, b) = (rng_range(10, 1), rng_range(10, 2));
    let e = &(&(&a * 4) + &(&b * 2)) / 2;
    assert_eq!(simplify(&e), simplify(&(&(&a * 2) + &b)));
    // (4*a + 2*b) / 8 == (2*a + b) / 4
    let e = &(&(&a * 4) + &(&b * 2)) / 8;
    assert_eq!(simplify(&e), simplify(&(&(&(&a * 2) + &b) / 4)));
    // (x % 64) / 8 == (x / 8) % 8
    assert_eq!(simplify(&(&(&r % 64) / 8)), simplify(&(&(&r / 8) % 8)));
    // a mod within one period: (a + 10) % 10 == a
    assert_eq!(simplify(&(&(&a + 10) % 10)), a);
}

#[test]
fn division_folds_only_when_signs_allow() {
    // (v*4 + 1) / 4 over v in -3..3 is NOT v: C truncation rounds -11/4 to -2, not -3 + 0.
    let v = var("v", -3, 3);
    let e = &(&(&v * 4) + 1) / 4;
    let s = simplify(&e);
    assert_ne!(s, v);
    for val in -3..=3 {
        let want = (val * 4 + 1) / 4;
        assert_eq!(eval_with(&s, &[(v.clone(), val)]), want, "v = {val}");
    }
}

// ---------------------------------------------------------------- the engine through the API

#[test]
fn custom_rules_run_to_a_fixed_point() {
    // A tiny rule set: x*2 -> x+x, x+x -> x<<1. Both directions of commutative matching.
    let pm: PatternMatcher<()> = PatternMatcher::new(vec![
        rule(UPat::var("x") * UPat::cnst_int(2), |b| Some(&b["x"] + &b["x"])),
        rule(UPat::var("x") + UPat::var("x"), |b| Some(UOp::alu(Ops::SHL, vec![b["x"].clone(), b["x"].c(1)]))),
    ]);
    let x = var("x", 0, 9);
    let e = UOp::alu(Ops::MUL, vec![i32c(2), x.clone()]);
    let want = UOp::alu(Ops::SHL, vec![x.clone(), i32c(1)]);
    assert_eq!(graph_rewrite(&e, &pm, RewriteMode::BottomUp), want);
    assert_eq!(graph_rewrite(&e, &pm, RewriteMode::TopDown), want);
}

// ---------------------------------------------------------------- randomized property test

/// xorshift64*: small, deterministic, good enough for test generation.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// Random expressions over a few variables of one integer dtype.
struct Gen<'a> {
    rng: &'a mut Rng,
    dt: DType,
    vars: Vec<UOp>,
}

impl Gen<'_> {
    fn konst(&mut self) -> UOp {
        let v = if self.rng.chance(1, 12) {
            // Large values exercise wrapping.
            *self.rng.pick(&[1 << 30, i32::MAX as i64, i32::MIN as i64 + 1, 100, -128, 255])
        } else {
            self.rng.below(21) as i64 - 10
        };
        UOp::int(self.dt, v)
    }

    fn divisor(&mut self) -> UOp {
        let mut d = self.rng.below(9) as i64 + 1;
        if self.dt.is_signed() && self.rng.chance(1, 4) {
            d = -d;
        }
        if self.rng.chance(1, 10) {
            d *= 16;
        }
        UOp::int(self.dt, d)
    }

    fn leaf(&mut self) -> UOp {
        if self.rng.chance(2, 3) {
            self.rng.pick(&self.vars).clone()
        } else {
            self.konst()
        }
    }

    fn int(&mut self, depth: u32) -> UOp {
        if depth == 0 || self.rng.chance(1, 5) {
            return self.leaf();
        }
        let d = depth - 1;
        match self.rng.below(15) {
            0 | 1 => self.int(d) + self.int(d),
            2 => self.int(d) - self.int(d),
            3 => self.int(d) * self.konst(),
            4 => self.int(d) * self.int(d),
            5 => self.int(d) / self.divisor(),
            6 => self.int(d) % self.divisor(),
            7 => UOp::maximum(&self.int(d), &self.int(d)),
            8 => self.bool(d).where_(&self.int(d), &self.int(d)),
            9 => self.bool(d).cast(self.dt),
            10 => -&self.int(d),
            // Shapes that reshapes produce: x*c + y, (x/c)*c + x%c, ((x/a)%b)*a + x%a.
            11 => {
                let (x, c) = (self.int(d), self.divisor());
                &(&(&x / &c) * &c) + &(&x % &c)
            }
            12 => {
                let (x, a, b) = (self.int(d), self.rng.below(4) as i64 + 1, self.rng.below(4) as i64 + 1);
                &(&(&(&x / a) % b) * a) + &(&x % a)
            }
            13 => &(&self.int(d) * &self.divisor()) + &self.int(d),
            _ => {
                // A cast through another dtype and back (value preserving only when in range).
                let x = self.int(d);
                let via = *self.rng.pick(&[DType::I8, DType::U8, DType::I16, DType::I32, DType::I64]);
                x.cast(via).cast(self.dt)
            }
        }
    }

    fn bool(&mut self, depth: u32) -> UOp {
        if depth == 0 || self.rng.chance(1, 8) {
            return UOp::bool(self.rng.chance(1, 2));
        }
        let d = depth - 1;
        match self.rng.below(8) {
            0 | 1 => self.int(d).lt(&self.int(d)),
            2 => self.int(d).lt(&self.konst()),
            3 => self.int(d).ne(&self.int(d)),
            4 => self.int(d).eq_(&self.konst()),
            5 => self.bool(d).and(&self.bool(d)),
            6 => UOp::alu(Ops::OR, vec![self.bool(d), self.bool(d)]),
            _ => self.bool(d).ne(&UOp::bool(true)),
        }
    }
}

/// A graph flattened into evaluation order, so each point costs one pass over a Vec.
struct Program {
    nodes: Vec<UOp>,
    /// Per node: op, dtype, source positions, and the variable slot or constant.
    steps: Vec<(Ops, DType, [usize; 3], i64)>,
}

impl Program {
    fn new(root: &UOp, vars: &[UOp]) -> Program {
        let nodes = root.toposort();
        let pos = |u: &UOp| nodes.iter().position(|n| n == u).unwrap();
        let steps = nodes
            .iter()
            .map(|n| {
                let mut s = [0usize; 3];
                for (i, src) in n.src().iter().enumerate().take(3) {
                    s[i] = pos(src);
                }
                let extra = match n.op() {
                    Ops::CONST => n.as_int().expect("integer constant"),
                    Ops::RANGE | Ops::DEFINE_VAR => vars.iter().position(|v| v == n).expect("a known variable") as i64,
                    _ => 0,
                };
                (n.op(), n.dtype(), s, extra)
            })
            .collect();
        Program { nodes, steps }
    }

    /// Evaluates every node with C semantics, wrapping at each dtype's width.
    fn eval(&self, env: &[i64], out: &mut Vec<i64>) {
        out.clear();
        for &(op, dt, s, extra) in &self.steps {
            let a = |i: usize| out[s[i]];
            let v = match op {
                Ops::CONST => extra,
                Ops::RANGE | Ops::DEFINE_VAR => env[extra as usize],
                Ops::ADD => a(0).wrapping_add(a(1)),
                Ops::SUB => a(0).wrapping_sub(a(1)),
                Ops::MUL => a(0).wrapping_mul(a(1)),
                Ops::NEG => a(0).wrapping_neg(),
                Ops::IDIV => {
                    assert_ne!(a(1), 0, "division by zero");
                    a(0).wrapping_div(a(1))
                }
                Ops::MOD => {
                    assert_ne!(a(1), 0, "modulo by zero");
                    a(0).wrapping_rem(a(1))
                }
                Ops::MAX => a(0).max(a(1)),
                Ops::CMPLT => (a(0) < a(1)) as i64,
                Ops::CMPNE => (a(0) != a(1)) as i64,
                Ops::CMPEQ => (a(0) == a(1)) as i64,
                Ops::AND => a(0) & a(1),
                Ops::OR => a(0) | a(1),
                Ops::XOR => a(0) ^ a(1),
                Ops::WHERE => {
                    if a(0) != 0 {
                        a(1)
                    } else {
                        a(2)
                    }
                }
                Ops::CAST => a(0),
                other => panic!("evaluator: unexpected op {other:?}"),
            };
            out.push(wrap_int(v, dt));
        }
    }
}

fn eval_with(root: &UOp, env: &[(UOp, i64)]) -> i64 {
    let vars: Vec<UOp> = env.iter().map(|(v, _)| v.clone()).collect();
    let vals: Vec<i64> = env.iter().map(|(_, x)| *x).collect();
    let p = Program::new(root, &vars);
    let mut out = Vec::new();
    p.eval(&vals, &mut out);
    *out.last().unwrap()
}

/// Every combination of the variables' values.
fn all_points(vars: &[UOp]) -> Vec<Vec<i64>> {
    let mut pts = vec![vec![]];
    for v in vars {
        let (lo, hi) = v.bounds();
        pts = pts.into_iter().flat_map(|p| (lo..=hi).map(move |x| [p.clone(), vec![x]].concat())).collect();
    }
    pts
}

fn check_bounds(p: &Program, vals: &[i64], what: &str, pt: &[i64]) {
    for (n, v) in p.nodes.iter().zip(vals) {
        let (lo, hi) = n.bounds();
        assert!(lo <= *v && *v <= hi, "{what}: value {v} outside bounds ({lo}, {hi}) at point {pt:?} of node\n{n:?}");
    }
}

/// Generates expressions over `vars` (of dtype `dt`), simplifies each, and checks value
/// equality and range bounds at every point. A failure prints the run seed and the
/// expression's index; `SYMBOLIC_SEED=<run seed>` (hex or decimal) reproduces it, and
/// `SYMBOLIC_COUNT=<n>` changes how many expressions a run checks (for longer searches).
fn property_run(seed: u64, count: usize, dt: DType, vars: Vec<UOp>) {
    let env_u64 = |k: &str| {
        std::env::var(k).ok().map(|v| match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).expect("hex seed"),
            None => v.parse().expect("number"),
        })
    };
    let seed = env_u64("SYMBOLIC_SEED").unwrap_or(seed);
    let count = env_u64("SYMBOLIC_COUNT").map_or(count, |c| c as usize);
    let mut rng = Rng(seed);
    let pts = all_points(&vars);
    let (mut out_a, mut out_b) = (Vec::new(), Vec::new());
    for i in 0..count {
        let expr_seed = rng.next();
        let mut local = Rng(expr_seed | 1);
        let mut g = Gen { rng: &mut local, dt, vars: vars.clone() };
        let depth = 1 + (i % 5) as u32;
        let e = if i % 4 == 3 { g.bool(depth).cast(dt) } else { g.int(depth) };
        let s = simplify(&e);
        assert_eq!(simplify(&s), s, "run seed {seed:#x}, expression #{i}: simplify is not idempotent on\n{e:?}");
        let (pa, pb) = (Program::new(&e, &vars), Program::new(&s, &vars));
        let what_a = format!("run seed {seed:#x}, expression #{i}: original");
        let what_b = format!("run seed {seed:#x}, expression #{i}: simplified");
        for pt in &pts {
            pa.eval(pt, &mut out_a);
            pb.eval(pt, &mut out_b);
            let (va, vb) = (*out_a.last().unwrap(), *out_b.last().unwrap());
            if va != vb {
                panic!(
                    "run seed {seed:#x}, expression #{i}: at point {pt:?} the original gives {va}, \
                     the simplified {vb}\noriginal:\n{e:?}\nsimplified:\n{s:?}"
                );
            }
            check_bounds(&pa, &out_a, &what_a, pt);
            check_bounds(&pb, &out_b, &what_b, pt);
        }
    }
}

#[test]
fn random_expressions_keep_their_values_i32() {
    let vars = vec![rng_range(7, 0), rng_range(12, 1), var("v", -5, 7)];
    property_run(0x5eed_0001, 3000, DType::I32, vars);
}

#[test]
fn random_expressions_keep_their_values_small_ranges() {
    // Sizes 1 and 2 make many expressions constant or nearly so.
    let vars = vec![rng_range(1, 0), rng_range(2, 1), var("w", -2, 1)];
    property_run(0x5eed_0002, 1500, DType::I32, vars);
}

#[test]
fn random_expressions_keep_their_values_narrow_dtypes() {
    // i8 and u8 wrap quickly, so the wrapping guards get exercised.
    let v8 = |name: &str, dt: DType, lo, hi| UOp::new(Ops::DEFINE_VAR, dt, vec![], Arg::Var(name.into(), lo, hi));
    let r8 = |dt: DType, n, id| UOp::range(UOp::int(dt, n), id, AxisType::Reduce);
    property_run(0x5eed_0003, 1000, DType::I8, vec![r8(DType::I8, 9, 0), v8("a", DType::I8, -6, 5)]);
    property_run(0x5eed_0004, 1000, DType::U8, vec![r8(DType::U8, 9, 0), v8("b", DType::U8, 0, 20)]);
    property_run(0x5eed_0005, 1000, DType::I64, vec![r8(DType::I64, 6, 0), v8("c", DType::I64, -4, 4)]);
}
