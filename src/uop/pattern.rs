//! The rewrite engine: patterns (`UPat`) over nodes, rule tables (`PatternMatcher`) indexed
//! by op, and `graph_rewrite`, which runs a table over a graph to a fixed point with
//! memoization, bottom-up or top-down.
//!
//! ```ignore
//! let pm = PatternMatcher::new(vec![
//!     rule(UPat::var("x") + UPat::cnst_int(0), |b| Some(b["x"].clone())),
//!     rule(UPat::op(Ops::MUL).src_any_order(vec![UPat::var("x"), UPat::cvar("c")]), |b| ...),
//! ]);
//! let out = graph_rewrite(&root, &pm, RewriteMode::BottomUp);
//! // with a mutable context:
//! let pm2: PatternMatcher<MyCtx> = PatternMatcher::new(vec![rule_ctx(pat, |ctx, b| ...)]);
//! let out = graph_rewrite_ctx(&root, &pm2, &mut ctx, RewriteMode::TopDown);
//! ```
//!
//! Matching is backtracking: when a pattern can match in several ways (sources in any order),
//! every way is tried, and a rule whose function returns `None` for one way still gets the
//! next. A rule that returns the node it was given counts as "no change".

use super::dtype::{ConstValue, DType};
use super::node::{Arg, FxHashMap, FxHashSet, UOp};
use super::ops::Ops;

/// Named captures of a successful match. A name used twice in a pattern binds the same node.
/// Captures borrow the matched graph, so matching allocates nothing per node.
pub struct Bindings<'a> {
    items: Vec<(&'static str, &'a UOp)>,
}

impl<'a> Bindings<'a> {
    pub fn get(&self, name: &str) -> Option<&'a UOp> {
        self.items.iter().find(|(n, _)| *n == name).map(|(_, u)| *u)
    }
    /// All captures, in the order they were bound.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &'a UOp)> + '_ {
        self.items.iter().copied()
    }
}

impl std::ops::Index<&str> for Bindings<'_> {
    type Output = UOp;
    fn index(&self, name: &str) -> &UOp {
        self.get(name).unwrap_or_else(|| panic!("pattern has no capture named {name:?}"))
    }
}

/// How the sources of a node must match.
#[derive(Clone)]
pub enum SrcPat {
    /// Any sources.
    Any,
    /// Exactly these, in order.
    Exact(Vec<UPat>),
    /// These in any order (commutative matching; every permutation is tried).
    AnyOrder(Vec<UPat>),
    /// Any number of sources (zero included), each matching this pattern.
    Each(Box<UPat>),
}

/// A pattern over nodes. Every filter that is set must hold.
#[derive(Clone)]
pub struct UPat {
    pub ops: Option<Vec<Ops>>,
    /// Exact dtypes (vector count and pointer flag included).
    pub dtypes: Option<Vec<DType>>,
    pub arg: Option<Arg>,
    pub src: SrcPat,
    pub name: Option<&'static str>,
    /// A CONST whose value numerically equals this one, whatever its variant
    /// (`Int(1)`, `Float(1.0)` and `Bool(true)` all equal 1).
    pub value: Option<ConstValue>,
    /// Any further condition on the node, checked before its sources.
    pub check: Option<fn(&UOp) -> bool>,
}

/// Numeric equality of constants across variants. NaN equals nothing.
fn same_number(a: ConstValue, b: ConstValue) -> bool {
    match (a, b) {
        (ConstValue::Float(_), _) | (_, ConstValue::Float(_)) => a.as_f64() == b.as_f64(),
        _ => a.as_i64() == b.as_i64(),
    }
}

/// What a successful match continues with: the rest of the enclosing pattern, and finally the
/// rule function. Returning `false` makes the matcher backtrack to its next alternative.
type Cont<'k, 'a> = &'k mut dyn FnMut(&mut Bindings<'a>) -> bool;

impl UPat {
    /// Matches any node.
    pub fn any() -> UPat {
        UPat { ops: None, dtypes: None, arg: None, src: SrcPat::Any, name: None, value: None, check: None }
    }
    /// Any node, captured as `name`.
    pub fn var(name: &'static str) -> UPat {
        UPat::any().named(name)
    }
    pub fn op(op: Ops) -> UPat {
        UPat { ops: Some(vec![op]), ..UPat::any() }
    }
    pub fn ops(ops: &[Ops]) -> UPat {
        UPat { ops: Some(ops.to_vec()), ..UPat::any() }
    }
    /// A CONST node captured as `name`.
    pub fn cvar(name: &'static str) -> UPat {
        UPat::op(Ops::CONST).named(name)
    }
    /// A CONST with exactly this value (same variant; any dtype).
    pub fn cnst(v: ConstValue) -> UPat {
        UPat { arg: Some(Arg::Const(v)), ..UPat::op(Ops::CONST) }
    }
    /// A CONST numerically equal to `v`, whatever its variant (see [`UPat::value`]).
    pub fn cnst_val(v: ConstValue) -> UPat {
        UPat { value: Some(v), ..UPat::op(Ops::CONST) }
    }
    /// A CONST equal to the integer `v` (also matches `v as f64` floats and bools 0/1).
    /// Unsigned constants hold their wrapped value: `-1` does not match a u32 all-ones.
    pub fn cnst_int(v: i64) -> UPat {
        UPat::cnst_val(ConstValue::Int(v))
    }
    /// A CONST numerically equal to `v` (0.0 also matches -0.0 and integer 0).
    pub fn cnst_float(v: f64) -> UPat {
        UPat::cnst_val(ConstValue::Float(v))
    }
    /// An elementwise op over these sources; commutative ops match their sources in any order.
    pub fn alu(op: Ops, src: Vec<UPat>) -> UPat {
        let p = UPat::op(op);
        if op.is_commutative() {
            p.src_any_order(src)
        } else {
            p.src(src)
        }
    }
    pub fn named(mut self, name: &'static str) -> UPat {
        self.name = Some(name);
        self
    }
    pub fn src(mut self, src: Vec<UPat>) -> UPat {
        self.src = SrcPat::Exact(src);
        self
    }
    pub fn src_any_order(mut self, src: Vec<UPat>) -> UPat {
        assert!(src.len() <= 8, "src_any_order: {} sources would try too many permutations", src.len());
        self.src = SrcPat::AnyOrder(src);
        self
    }
    /// Any number of sources, each matching `p`.
    pub fn src_each(mut self, p: UPat) -> UPat {
        self.src = SrcPat::Each(Box::new(p));
        self
    }
    pub fn dtype(mut self, dt: DType) -> UPat {
        self.dtypes = Some(vec![dt]);
        self
    }
    pub fn dtypes(mut self, dts: &[DType]) -> UPat {
        self.dtypes = Some(dts.to_vec());
        self
    }
    pub fn arg(mut self, arg: Arg) -> UPat {
        self.arg = Some(arg);
        self
    }
    /// Adds a condition on the node (replacing an earlier one).
    pub fn check(mut self, f: fn(&UOp) -> bool) -> UPat {
        self.check = Some(f);
        self
    }

    // ------------------------------------------------------------ builders mirroring UOp

    pub fn lt(self, o: UPat) -> UPat {
        UPat::alu(Ops::CMPLT, vec![self, o])
    }
    pub fn ne(self, o: UPat) -> UPat {
        UPat::alu(Ops::CMPNE, vec![self, o])
    }
    pub fn eq_(self, o: UPat) -> UPat {
        UPat::alu(Ops::CMPEQ, vec![self, o])
    }
    pub fn max(self, o: UPat) -> UPat {
        UPat::alu(Ops::MAX, vec![self, o])
    }
    pub fn where_(self, t: UPat, f: UPat) -> UPat {
        UPat::alu(Ops::WHERE, vec![self, t, f])
    }
    /// A CAST of this pattern (to any dtype unless filtered with [`UPat::dtype`]).
    pub fn cast(self) -> UPat {
        UPat::op(Ops::CAST).src(vec![self])
    }

    // ------------------------------------------------------------ matching

    /// Matches `node`, returning the captures of the first way it matches.
    pub fn matches<'a>(&self, node: &'a UOp) -> Option<Bindings<'a>> {
        let mut b = Bindings { items: Vec::new() };
        self.match_k(node, &mut b, &mut |_| true).then_some(b)
    }

    /// The filters that look at the node alone.
    #[inline]
    fn matches_node(&self, node: &UOp) -> bool {
        if let Some(ops) = &self.ops {
            if !ops.contains(&node.op()) {
                return false;
            }
        }
        if let Some(dts) = &self.dtypes {
            if !dts.contains(&node.dtype()) {
                return false;
            }
        }
        if let Some(arg) = &self.arg {
            if arg != node.arg() {
                return false;
            }
        }
        if let Some(v) = self.value {
            match node.const_value() {
                Some(c) if same_number(c, v) => {}
                _ => return false,
            }
        }
        self.check.is_none_or(|f| f(node))
    }

    /// Matches `node` and, for each way it matches, calls `k` with the captures so far; stops at
    /// the first way for which `k` returns true. On failure the captures are left as they were.
    fn match_k<'a>(&self, node: &'a UOp, b: &mut Bindings<'a>, k: Cont<'_, 'a>) -> bool {
        if !self.matches_node(node) {
            return false;
        }
        let mark = b.items.len();
        if let Some(name) = self.name {
            match b.get(name) {
                Some(prev) if prev != node => return false,
                Some(_) => {}
                None => b.items.push((name, node)),
            }
        }
        let srcs = node.src();
        let ok = match &self.src {
            SrcPat::Any => k(b),
            SrcPat::Exact(ps) => ps.len() == srcs.len() && match_in_order(ps, srcs, b, k),
            SrcPat::AnyOrder(ps) => ps.len() == srcs.len() && match_any_order(ps, srcs, 0, b, k),
            SrcPat::Each(p) => match_each(p, srcs, b, k),
        };
        if !ok {
            b.items.truncate(mark);
        }
        ok
    }
}

fn match_in_order<'a>(ps: &[UPat], srcs: &'a [UOp], b: &mut Bindings<'a>, k: Cont<'_, 'a>) -> bool {
    match ps.split_first() {
        None => k(b),
        Some((p, rest)) => p.match_k(&srcs[0], b, &mut |b| match_in_order(rest, &srcs[1..], b, k)),
    }
}

/// Matches `ps[0]` against each source not yet taken (bit set in `used`), then the rest.
fn match_any_order<'a>(ps: &[UPat], srcs: &'a [UOp], used: u32, b: &mut Bindings<'a>, k: Cont<'_, 'a>) -> bool {
    let Some((p, rest)) = ps.split_first() else { return k(b) };
    (0..srcs.len()).any(|j| {
        used & (1 << j) == 0 && p.match_k(&srcs[j], b, &mut |b| match_any_order(rest, srcs, used | (1 << j), b, k))
    })
}

fn match_each<'a>(p: &UPat, srcs: &'a [UOp], b: &mut Bindings<'a>, k: Cont<'_, 'a>) -> bool {
    match srcs.split_first() {
        None => k(b),
        Some((s, rest)) => p.match_k(s, b, &mut |b| match_each(p, rest, b, k)),
    }
}

macro_rules! upat_binop {
    ($trait:ident, $method:ident, $op:expr) => {
        impl std::ops::$trait<UPat> for UPat {
            type Output = UPat;
            /// The op over both patterns; sources in any order if the op is commutative.
            fn $method(self, rhs: UPat) -> UPat {
                UPat::alu($op, vec![self, rhs])
            }
        }
    };
}
upat_binop!(Add, add, Ops::ADD);
upat_binop!(Sub, sub, Ops::SUB);
upat_binop!(Mul, mul, Ops::MUL);
upat_binop!(Div, div, Ops::IDIV);
upat_binop!(Rem, rem, Ops::MOD);
upat_binop!(BitAnd, bitand, Ops::AND);
upat_binop!(BitOr, bitor, Ops::OR);
upat_binop!(BitXor, bitxor, Ops::XOR);
upat_binop!(Shl, shl, Ops::SHL);
upat_binop!(Shr, shr, Ops::SHR);

impl std::ops::Neg for UPat {
    type Output = UPat;
    fn neg(self) -> UPat {
        UPat::op(Ops::NEG).src(vec![self])
    }
}

// ---------------------------------------------------------------- rule tables

type RuleFn<C> = Box<dyn Fn(&mut C, &Bindings<'_>) -> Option<UOp> + Send + Sync>;

/// One rule: its pattern, its function, and where in the source it was written (its name in
/// VIZ's log: `src/uop/symbolic.rs:120`).
pub struct Rule<C> {
    pat: UPat,
    f: RuleFn<C>,
    at: &'static std::panic::Location<'static>,
}

/// A table of rules `pattern -> Option<UOp>`, indexed by op. Rules are tried in table order;
/// the first that matches and returns a different node wins.
pub struct PatternMatcher<C = ()> {
    rules: Vec<Rule<C>>,
    /// For each op some rule names: the indices of the rules that can match it (including the
    /// op-wildcard rules), in table order.
    by_op: FxHashMap<Ops, Vec<u32>>,
    /// The rules whose pattern matches any op, for ops no rule names.
    wildcard: Vec<u32>,
}

/// A rule without context.
#[track_caller]
pub fn rule<C>(pat: UPat, f: impl Fn(&Bindings) -> Option<UOp> + Send + Sync + 'static) -> Rule<C> {
    Rule { pat, f: Box::new(move |_c: &mut C, b: &Bindings| f(b)), at: std::panic::Location::caller() }
}

/// A rule that also sees a mutable context.
#[track_caller]
pub fn rule_ctx<C>(pat: UPat, f: impl Fn(&mut C, &Bindings) -> Option<UOp> + Send + Sync + 'static) -> Rule<C> {
    Rule { pat, f: Box::new(f), at: std::panic::Location::caller() }
}

impl<C> PatternMatcher<C> {
    pub fn new(rules: Vec<Rule<C>>) -> Self {
        let mut pm = PatternMatcher { rules, by_op: FxHashMap::default(), wildcard: Vec::new() };
        pm.index();
        pm
    }

    fn index(&mut self) {
        self.by_op.clear();
        self.wildcard.clear();
        for (i, rule) in self.rules.iter().enumerate() {
            let i = i as u32;
            match &rule.pat.ops {
                None => {
                    self.wildcard.push(i);
                    // Wildcard rules apply to ops that other rules name too, in table order.
                    self.by_op.values_mut().for_each(|l| l.push(i));
                }
                Some(ops) => {
                    for op in ops {
                        let list = self.by_op.entry(*op).or_insert_with(|| self.wildcard.clone());
                        if list.last() != Some(&i) {
                            list.push(i);
                        }
                    }
                }
            }
        }
    }

    /// Appends the rules of another table.
    pub fn extend(mut self, other: PatternMatcher<C>) -> Self {
        self.rules.extend(other.rules);
        self.index();
        self
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The result of the first rule that matches `node` and returns a node other than `node`.
    pub fn rewrite(&self, node: &UOp, ctx: &mut C) -> Option<UOp> {
        let list = self.by_op.get(&node.op()).unwrap_or(&self.wildcard);
        let mut b = Bindings { items: Vec::new() };
        let mut out = None;
        for &i in list {
            let Rule { pat, f, at } = &self.rules[i as usize];
            b.items.clear();
            let hit = pat.match_k(node, &mut b, &mut |b| match f(ctx, b) {
                Some(n) if n != *node => {
                    out = Some(n);
                    true
                }
                _ => false,
            });
            if hit {
                if crate::compiler_log::enabled() {
                    let (before, after) = (node, out.as_ref().expect("a rule that fired returned a node"));
                    crate::compiler_log::rule_fired(at.file(), at.line(), || {
                        use crate::uop::print::format_node;
                        format!("{} -> {}", format_node(before), format_node(after))
                    });
                }
                return out;
            }
        }
        None
    }
}

// ---------------------------------------------------------------- graph_rewrite

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RewriteMode {
    /// Sources first, then the node.
    BottomUp,
    /// The node first (until no rule applies), then its sources.
    TopDown,
}

/// Runs `pm` over the graph under `root` to a fixed point.
pub fn graph_rewrite(root: &UOp, pm: &PatternMatcher<()>, mode: RewriteMode) -> UOp {
    graph_rewrite_ctx(root, pm, &mut (), mode)
}

/// How many rewrites in a row one node may take before we call it a rule loop.
const MAX_CHAIN: u32 = 100_000;

/// Work items of the explicit stack (graphs can be far deeper than the call stack).
enum Frame {
    /// Rewrite this node; the number is how many rewrites in a row led here.
    Visit(UOp, u32),
    /// The node's sources are done: rebuild it on them and (bottom-up) apply the rules.
    Finish(UOp, u32),
    /// The first node rewrites to whatever the second (now done) rewrote to.
    Link(UOp, UOp),
}

struct Rewriter<'p, C> {
    pm: &'p PatternMatcher<C>,
    mode: RewriteMode,
    /// Original node -> its final rewrite. Final nodes map to themselves.
    done: FxHashMap<UOp, UOp>,
    /// Nodes whose sources are being rewritten: meeting one again means the rules built a cycle.
    open: FxHashSet<UOp>,
    stack: Vec<Frame>,
    applied: u64,
}

impl<C> Rewriter<'_, C> {
    fn finalize(&mut self, n: UOp, f: UOp) {
        if f != n {
            self.done.insert(f.clone(), f.clone());
        }
        self.done.insert(n, f);
    }

    /// `n` rewrote to `new` (one rule application): `n` ends where `new` ends.
    fn follow(&mut self, n: UOp, new: UOp, chain: u32) {
        self.applied += 1;
        if chain >= MAX_CHAIN || self.applied > 1_000_000 + 16 * self.done.len() as u64 {
            panic!(
                "graph_rewrite: a {:?} ({:?}) node was rewritten {} times in a row without reaching a \
                 fixed point (last result: a {:?} node); some rules undo each other or grow the graph forever",
                n.op(),
                n.dtype(),
                chain + 1,
                new.op()
            );
        }
        if let Some(f) = self.done.get(&new) {
            let f = f.clone();
            self.done.insert(n, f);
            return;
        }
        self.stack.push(Frame::Link(n, new.clone()));
        self.stack.push(Frame::Visit(new, chain + 1));
    }

    /// Opens `n`: its sources get rewritten before `Finish(n)`.
    fn open_node(&mut self, n: UOp, chain: u32) {
        if !self.open.insert(n.clone()) {
            panic!(
                "graph_rewrite: a rule produced a graph that contains a {:?} ({:?}) node that is still being \
                 rewritten (the node is its own source after rewriting); the rules loop",
                n.op(),
                n.dtype()
            );
        }
        self.stack.push(Frame::Finish(n.clone(), chain));
        for s in n.src().iter().rev() {
            if !self.done.contains_key(s) {
                self.stack.push(Frame::Visit(s.clone(), 0));
            }
        }
    }

    /// `n` on its rewritten sources (`n` itself when none changed).
    fn rebuilt(&self, n: &UOp) -> UOp {
        let new = |s: &UOp| &self.done[s];
        if n.src().iter().all(|s| new(s) == s) {
            n.clone()
        } else {
            n.with_src(n.src().iter().map(|s| new(s).clone()).collect())
        }
    }

    fn run(&mut self, root: &UOp, ctx: &mut C) -> UOp {
        self.stack.push(Frame::Visit(root.clone(), 0));
        while let Some(frame) = self.stack.pop() {
            match frame {
                Frame::Visit(n, chain) => {
                    if self.done.contains_key(&n) {
                        continue;
                    }
                    if self.mode == RewriteMode::TopDown {
                        if let Some(new) = self.pm.rewrite(&n, ctx) {
                            self.follow(n, new, chain);
                            continue;
                        }
                    }
                    self.open_node(n, chain);
                }
                Frame::Finish(n, chain) => {
                    self.open.remove(&n);
                    let r = self.rebuilt(&n);
                    if r != n {
                        if let Some(f) = self.done.get(&r) {
                            let f = f.clone();
                            self.done.insert(n, f);
                            continue;
                        }
                    }
                    match self.mode {
                        RewriteMode::BottomUp => match self.pm.rewrite(&r, ctx) {
                            None => self.finalize(n, r),
                            Some(new) => {
                                if r != n {
                                    // The rebuilt node ends where `n` ends (memoized for later).
                                    self.stack.push(Frame::Link(r, new.clone()));
                                }
                                self.follow(n, new, chain);
                            }
                        },
                        // Top-down, a node whose sources changed gets the rules again, as a new
                        // node whose sources are all final.
                        RewriteMode::TopDown if r != n => self.follow(n, r, chain),
                        RewriteMode::TopDown => self.finalize(n, r),
                    }
                }
                Frame::Link(n, new) => {
                    let f = self.done[&new].clone();
                    self.done.insert(n, f);
                }
            }
        }
        self.done[root].clone()
    }
}

/// Like [`graph_rewrite`] with a mutable context passed to every rule.
///
/// Each distinct node is rewritten once (memoized), so shared subgraphs cost nothing extra.
/// `BottomUp`: the sources are rewritten first, the node is rebuilt on them and the rules are
/// applied; a rule's result is itself rewritten fully (sources too) until no rule applies.
/// `TopDown`: the rules are applied to the node until none applies, then its sources are
/// rewritten, and if they changed the rebuilt node is rewritten again. The walk uses an
/// explicit stack, so graph depth is not limited by the call stack. A rule loop panics,
/// naming the op that keeps rewriting.
pub fn graph_rewrite_ctx<C>(root: &UOp, pm: &PatternMatcher<C>, ctx: &mut C, mode: RewriteMode) -> UOp {
    let mut rw =
        Rewriter { pm, mode, done: FxHashMap::default(), open: FxHashSet::default(), stack: Vec::new(), applied: 0 };
    rw.run(root, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn var(name: &str) -> UOp {
        UOp::new(Ops::DEFINE_VAR, DType::I32, vec![], Arg::Var(name.into(), 0, 10))
    }

    #[test]
    fn named_captures_must_agree() {
        let (a, b) = (var("a"), var("b"));
        let p = UPat::var("x") + UPat::var("x");
        let aa = &a + &a;
        let m = p.matches(&aa).expect("a+a matches x+x");
        assert_eq!(m["x"], a);
        assert!(p.matches(&(&a + &b)).is_none());
    }

    #[test]
    fn commutative_matching_tries_both_orders() {
        let a = var("a");
        let p = UPat::var("x") + UPat::cvar("c");
        for n in [&a + 3, UOp::alu(Ops::ADD, vec![a.c(3), a.clone()])] {
            let m = p.matches(&n).expect("either order");
            assert_eq!((m["x"].clone(), m["c"].as_int()), (a.clone(), Some(3)));
        }
        // SUB is not commutative: the constant must be on the right.
        let s = UPat::var("x") - UPat::cvar("c");
        assert!(s.matches(&(&a - 3)).is_some());
        assert!(s.matches(&UOp::alu(Ops::SUB, vec![a.c(3), a.clone()])).is_none());
    }

    #[test]
    fn backtracking_reaches_the_consistent_assignment() {
        // (x*y) + x: the inner MUL must bind x to the node the outer ADD also has.
        let (a, b) = (var("a"), var("b"));
        let p = (UPat::var("x") * UPat::var("y")) + UPat::var("x");
        let n = &(&a * &b) + &b;
        let m = p.matches(&n).expect("x=b, y=a");
        assert_eq!((m["x"].clone(), m["y"].clone()), (b.clone(), a.clone()));
        // And a rule returning None for one assignment still gets the other.
        let pm: PatternMatcher<()> = PatternMatcher::new(vec![rule(UPat::var("x") + UPat::var("y"), |b| {
            (b["x"].op() == Ops::CONST).then(|| b["y"].clone())
        })]);
        assert_eq!(pm.rewrite(&(&a + 0), &mut ()), Some(a.clone()));
    }

    #[test]
    fn op_sets_dtypes_values_and_checks() {
        let a = var("a");
        let p = UPat::ops(&[Ops::ADD, Ops::MUL]).named("x");
        assert!(p.matches(&(&a + 1)).is_some() && p.matches(&(&a * 2)).is_some());
        assert!(p.matches(&(&a - 1)).is_none());
        let f = UOp::float(DType::F32, 1.0);
        assert!(UPat::var("x").dtype(DType::F32).matches(&f).is_some());
        assert!(UPat::var("x").dtype(DType::I32).matches(&f).is_none());
        assert!(UPat::var("x").dtypes(&[DType::I64, DType::F32]).matches(&f).is_some());
        assert!(UPat::cnst_int(1).matches(&f).is_some(), "numeric match across variants");
        assert!(UPat::cnst(ConstValue::Int(1)).matches(&f).is_none(), "exact variant");
        assert!(UPat::cnst_float(0.0).matches(&UOp::float(DType::F32, -0.0)).is_some());
        assert!(UPat::cnst_float(f64::NAN).matches(&UOp::float(DType::F32, f64::NAN)).is_none());
        assert!(UPat::var("x").check(|u| u.dtype().is_float()).matches(&f).is_some());
        assert!(UPat::var("x").check(|u| u.dtype().is_int()).matches(&f).is_none());
        let each = UPat::op(Ops::ADD).src_each(UPat::op(Ops::DEFINE_VAR));
        assert!(each.matches(&(&a + &a)).is_some() && each.matches(&(&a + 1)).is_none());
    }

    #[test]
    fn rules_are_indexed_by_op_and_keep_table_order() {
        let pm: PatternMatcher<()> = PatternMatcher::new(vec![
            rule(UPat::op(Ops::MUL).named("x"), |_| Some(UOp::int(DType::I32, 1))),
            rule(UPat::any(), |_| Some(UOp::int(DType::I32, 2))),
            rule(UPat::op(Ops::ADD).named("x"), |_| Some(UOp::int(DType::I32, 3))),
        ]);
        let a = var("a");
        assert_eq!(pm.rewrite(&(&a * 5), &mut ()).and_then(|u| u.as_int()), Some(1));
        assert_eq!(pm.rewrite(&(&a + 5), &mut ()).and_then(|u| u.as_int()), Some(2), "wildcard is earlier");
        assert_eq!(pm.rewrite(&(&a - 5), &mut ()).and_then(|u| u.as_int()), Some(2));
        // A rule that returns its input is no change.
        let same: PatternMatcher<()> = PatternMatcher::new(vec![rule(UPat::var("x"), |b| Some(b["x"].clone()))]);
        assert_eq!(same.rewrite(&a, &mut ()), None);
    }

    /// x + 0 -> x, counting rule calls.
    fn add_zero(calls: Arc<AtomicUsize>) -> PatternMatcher<()> {
        PatternMatcher::new(vec![rule(UPat::op(Ops::ADD).named("n"), move |b| {
            calls.fetch_add(1, Ordering::Relaxed);
            let n = &b["n"];
            (n.src()[1].as_int() == Some(0)).then(|| n.src()[0].clone())
        })])
    }

    #[test]
    fn memoization_rewrites_each_shared_node_once() {
        // A DAG with 2^20 paths but 21 distinct ADD nodes.
        let mut x = var("a") + 1;
        for _ in 0..20 {
            x = &x + &x;
        }
        let calls = Arc::new(AtomicUsize::new(0));
        let pm = add_zero(calls.clone());
        let out = graph_rewrite(&x, &pm, RewriteMode::BottomUp);
        assert_eq!(out, x);
        assert_eq!(calls.load(Ordering::Relaxed), 21);
    }

    #[test]
    fn results_are_rewritten_to_a_fixed_point() {
        // ((a+0)+0)+0: each rewrite exposes the next; also a rule result that needs rewriting.
        let a = var("a");
        let x = &(&(&a + 0) + 0) + 0;
        let calls = Arc::new(AtomicUsize::new(0));
        assert_eq!(graph_rewrite(&x, &add_zero(calls.clone()), RewriteMode::BottomUp), a);
        assert_eq!(graph_rewrite(&x, &add_zero(calls), RewriteMode::TopDown), a);
        // MUL(x, 2) -> x + x (a new node that itself holds a rewritable source).
        let pm: PatternMatcher<()> = PatternMatcher::new(vec![
            rule(UPat::var("x") * UPat::cnst_int(2), |b| Some(&b["x"] + &b["x"])),
            rule(UPat::var("x") + UPat::cnst_int(0), |b| Some(b["x"].clone())),
        ]);
        let y = (&a + 0) * 2;
        assert_eq!(graph_rewrite(&y, &pm, RewriteMode::BottomUp), &a + &a);
        assert_eq!(graph_rewrite(&y, &pm, RewriteMode::TopDown), &a + &a);
    }

    #[test]
    fn bottom_up_and_top_down_differ() {
        // Rule: ADD(x, y) where y is a MUL -> a marker. Bottom-up sees the inner MUL rewritten
        // away first (MUL(x, 1) -> x), so the ADD rule no longer matches; top-down fires first.
        let a = var("a");
        let marker = UOp::int(DType::I32, 777);
        let m2 = marker.clone();
        let pm: PatternMatcher<()> = PatternMatcher::new(vec![
            rule(UPat::var("x") * UPat::cnst_int(1), |b| Some(b["x"].clone())),
            rule(UPat::op(Ops::ADD).src(vec![UPat::any(), UPat::op(Ops::MUL)]), move |_| Some(m2.clone())),
        ]);
        let x = &a + &(&a * 1);
        assert_eq!(graph_rewrite(&x, &pm, RewriteMode::BottomUp), &a + &a);
        assert_eq!(graph_rewrite(&x, &pm, RewriteMode::TopDown), marker);
    }

    #[test]
    fn context_is_passed_to_rules() {
        let pm: PatternMatcher<Vec<i64>> =
            PatternMatcher::new(vec![rule_ctx(UPat::cvar("c"), |seen: &mut Vec<i64>, b| {
                seen.push(b["c"].as_int().unwrap());
                None
            })]);
        let a = var("a");
        let mut seen = Vec::new();
        graph_rewrite_ctx(&(&(&a + 1) * 2), &pm, &mut seen, RewriteMode::BottomUp);
        seen.sort();
        assert_eq!(seen, vec![1, 2]);
    }

    #[test]
    #[should_panic(expected = "rewritten")]
    fn rule_loops_panic_with_the_op() {
        // a+b -> b+a forever.
        let pm: PatternMatcher<()> = PatternMatcher::new(vec![rule(UPat::op(Ops::ADD).named("x"), |b| {
            let s = b["x"].src();
            Some(&s[1] + &s[0])
        })]);
        graph_rewrite(&(var("a") + var("b")), &pm, RewriteMode::BottomUp);
    }

    #[test]
    #[should_panic(expected = "still being rewritten")]
    fn a_rule_wrapping_its_own_input_panics() {
        let pm: PatternMatcher<()> =
            PatternMatcher::new(vec![rule(UPat::op(Ops::MUL).named("x"), |b| Some(&b["x"] + 0))]);
        graph_rewrite(&(var("a") * 2), &pm, RewriteMode::BottomUp);
    }

    /// Builds and rewrites a chain of 200k nested ADDs. Runs on a thread with a big stack only
    /// because *dropping* such a chain is recursive (each node's Arc drops its sources); the
    /// rewrite itself uses an explicit stack.
    #[test]
    fn deep_chains_do_not_overflow_the_stack() {
        let run = || {
            let r = UOp::range(UOp::int(DType::I32, 4), 0, AxisType::Reduce);
            let mut x = r.clone();
            for i in 0..200_000 {
                x = &x + (i % 2);
            }
            let calls = Arc::new(AtomicUsize::new(0));
            for mode in [RewriteMode::BottomUp, RewriteMode::TopDown] {
                assert_eq!(graph_rewrite(&x, &add_zero(calls.clone()), mode).src().len(), 2);
            }
            // Removing every "+0" rebuilds the whole chain with half the nodes.
            let out = graph_rewrite(&x, &add_zero(calls), RewriteMode::BottomUp);
            let mut depth = 0;
            let mut n = out.clone();
            while n.op() == Ops::ADD {
                n = n.src()[0].clone();
                depth += 1;
            }
            assert_eq!((depth, n), (100_000, r));
        };
        std::thread::Builder::new().stack_size(1 << 30).spawn(run).unwrap().join().unwrap();
    }
}
